"""swk as GDB's frame unwinder, so that bt, up, frame, finish and info locals
use swk's steppers where GDB alone is wrong.

GDB asks Python unwinders before its DWARF unwinder, for every frame, often
twice.  The common case must cost next to nothing: one register read (the pc)
and a dictionary lookup decide.  A pc that CFI covers is left to GDB (it is
right there), and so is a sigreturn trampoline (GDB's sigtramp unwinder reads
the saved context and labels the frame <signal handler called>).  Only code
without CFI — CFI frames whose CFA would come from an implausible frame pointer,
as after a smashed frame pointer, and CFI frames whose return address is signed
(pointer authentication) when GDB has no mask to strip it with — is walked by
swk: its steppers (frame
pointer, analysis, scan) find the caller, and every register they recover is
handed to GDB, so outer frames' locals read right.

Nothing here asks GDB for frames or runs GDB commands: GDB 13 crashes when an
unwinder does.  What the unwinder needs of the target (libraries, auxv, the
core file's name) is gathered outside, by events and commands.
"""
import gdb
import gdb.unwinder

from ...errors import MemoryReadError
from ...frame import Frame
from ...stepper import Gcf
from ...unwind.cfi import cfi_rule_at
from ...unwind.modules import function_at, module_at
from .procstate import TARGET, selected_thread

DECLINE, SWK, CHECK = "gdb", "swk", "check"
MAX_FRAME = 1 << 28


class FrameId:
    """GDB's frame id: the CFA and the function's start, as gdb.Values."""

    def __init__(self, sp, pc):
        self.sp = sp
        self.pc = pc


class SwkUnwinder(gdb.unwinder.Unwinder):
    def __init__(self, session):
        super().__init__("swk")
        self.session = session
        self.decisions = {}     # pc -> DECLINE / SWK / CHECK, until libraries change
        self.declined = set()   # (thread, level, pc) of CHECK frames left to GDB, until the target changes
        self.types = None       # GDB types of the pc, the sp and the other general registers
        self.descriptors = None # register name -> gdb.RegisterDescriptor (faster than names)
        self.arch = None        # the Architecture of the inferior the descriptors are for
        self.reported = set()   # problems already shown once
        self.unwound = 0        # frames swk unwound (for tests and `show swk unwinder`)
        session.listeners.append(self.forget)

    def forget(self):
        """Libraries or memory changed: decisions may be stale."""
        self.decisions.clear()
        self.declined.clear()

    # --- GDB's entry point -------------------------------------------------------------
    def __call__(self, pending_frame):
        if TARGET.in_unwinder:
            return None
        TARGET.in_unwinder = True
        try:
            return self._unwind(pending_frame)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # an unwinder must never break GDB (nor end it: SystemExit)
            self._report(exc)
            return None
        finally:
            TARGET.in_unwinder = False

    def _unwind(self, pf):
        desc = self.descriptors
        if desc is None:
            desc = self.descriptors = {r.name: r for r in pf.architecture().registers("general")}
            self.arch = self.session.walker_for(gdb.selected_inferior()).process_state.arch
        arch = self.arch
        pc = int(pf.read_register(desc[arch.reg_name(arch.pc)]))
        kind = self.decisions.get(pc)
        if kind is None:
            libs = self.session.walker_for(gdb.selected_inferior()).process_state.library_state
            if not libs.ready_for_unwinder():
                self.session.unready = True     # GDB asks again after the stop (Session.on_stop)
                return None
            kind = self.decisions[pc] = self._classify(pc)
        if kind == DECLINE:
            return None
        if kind == CHECK:
            # GDB asks about most frames twice: a verdict for this thread's frame at this
            # level and pc stands until the target changes (forget() clears it).
            th = selected_thread()
            key = (th.global_num if th is not None else None, pf.level(), pc)
            if key in self.declined:
                return None
        sp = int(pf.read_register(desc[arch.reg_name(arch.sp)]))
        fp = int(pf.read_register(desc[arch.reg_name(arch.fp)]))
        if kind == CHECK and sp <= fp < sp + MAX_FRAME:
            self.declined.add(key)
            return None  # the CFA GDB will compute from the frame pointer is plausible: its CFI is right
        walker = self.session.walker_for(gdb.selected_inferior())
        regs = {arch.pc: pc, arch.sp: sp, arch.fp: fp}
        for regno in arch.callee_saved:
            if regno not in regs:
                regs[regno] = int(pf.read_register(desc[arch.reg_name(regno)]))
        if arch.ra != arch.pc:
            # a return-address register (AArch64's x30): a leaf's caller is there; GDB may not
            # know it in an outer frame (not saved), which only costs that source
            try:
                regs[arch.ra] = int(pf.read_register(desc[arch.reg_name(arch.ra)]))
            except (gdb.error, ValueError):
                pass
        frame = Frame(pc, sp, fp, walker=walker, regs=regs)
        level = pf.level()
        frame.is_top = level == 0
        frame.non_call = not frame.is_top and not self._after_call(walker, pc)
        n_errors = len(walker.stepper_errors)
        res = walker.step(frame)
        if len(walker.stepper_errors) > n_errors:   # swk-bt shows its own; these would pile up for ever
            if self.session.debug:
                for name, exc in walker.stepper_errors[n_errors:]:
                    gdb.write(f"swk unwinder: {name} raised {exc.__class__.__name__}: {exc}\n", gdb.STDERR)
            del walker.stepper_errors[n_errors:]
        if res.status is not Gcf.SUCCESS:
            return None
        caller = res.caller
        cfa = frame.cfa if frame.cfa is not None else caller.sp
        func = function_at(walker.process_state, frame.lookup_pc)
        info = pf.create_unwind_info(FrameId(self._value(cfa, arch.sp, pf),
                                             self._value(func[0] if func else pc, arch.pc, pf)))
        mask = (1 << (8 * arch.ptr_size)) - 1
        for regno, value in caller.regs.items():
            if regno in arch.callee_saved or regno in (arch.sp, arch.pc, arch.ra):
                info.add_saved_register(arch.reg_name(regno), self._value(value & mask, regno, pf))
        self.unwound += 1
        return info

    # --- deciding fast ----------------------------------------------------------------------
    def _classify(self, pc):
        walker = self.session.walker_for(gdb.selected_inferior())
        ps = walker.process_state
        try:
            code = ps.read_memory(pc, 16)
        except MemoryReadError:
            return DECLINE
        layout = ps.arch.signal_frame
        if layout is not None and layout.is_trampoline_code(code):
            return DECLINE
        lib, mod = module_at(ps, pc)
        if mod is None:
            return SWK  # JIT code: GDB has nothing to go on
        rules = [cfi_rule_at(mod, a - lib.base) for a in (pc, pc - 1)]
        if rules[0] is None and rules[1] is None:
            return SWK
        rule = rules[1] or rules[0]
        if rule.ra_signed and not ps.debugger_strips_signed_ra():
            return SWK  # a signed return address GDB cannot strip (no mask from the target)
        if rule.cfa is not None and rule.cfa.reg == ps.arch.fp and not rule.signal_frame:
            return CHECK
        return DECLINE

    @staticmethod
    def _after_call(walker, pc):
        """Whether pc follows a call (a return address) rather than an interrupted pc."""
        calls = walker.process_state.arch.calls
        try:
            code = walker.process_state.read_memory(pc - calls.MAX_CALL_LEN, calls.MAX_CALL_LEN)
        except MemoryReadError:
            return True
        return bool(calls.calls_ending_at(code, pc))

    def _value(self, value, regno, pf):
        """``value`` as a gdb.Value of the register's own type (GDB wants exactly that)."""
        types = self.types
        if types is None:
            types = self.types = {}
        t = types.get(regno)
        if t is None:
            t = types[regno] = pf.read_register(self.arch.reg_name(regno)).type
        return gdb.Value(value).cast(t)

    def _report(self, exc):
        key = (exc.__class__.__name__, str(exc))
        if key in self.reported and not self.session.debug:
            return
        if len(self.reported) < 256:   # bounded: past that, a new problem is shown each time
            self.reported.add(key)
        gdb.write(f"swk unwinder: declined a frame after an internal error: {exc.__class__.__name__}: "
                  f"{exc} (shown once; set swk debug on for details)\n", gdb.STDERR)
        if self.session.debug:
            import traceback
            traceback.print_exc()


UNWINDER = None


def install(session):
    global UNWINDER
    UNWINDER = SwkUnwinder(session)
    gdb.unwinder.register_unwinder(None, UNWINDER, replace=True)
    return UNWINDER


def set_enabled(on):
    if UNWINDER is not None:
        UNWINDER.enabled = bool(on)
        gdb.invalidate_cached_frames()
