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

from ...arch import UnsupportedArchitecture
from ...errors import MemoryReadError
from ...frame import Frame
from ...jit.modules import cfi_only_swk_reads
from ...jit.symbols import JitSymbol
from ...stepper import Gcf
from ...unwind.cfi import cfi_rule_at
from ...unwind.modules import function_at, module_at
from .procstate import TARGET, architecture, selected_thread, value_bytes

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
        self.types = None       # GDB types of the pc, the sp and the other general registers
        self.descriptors = None # register name -> gdb.RegisterDescriptor (faster than names)
        self.arch = None        # the Architecture of the inferior the descriptors are for
        #: gdb.Architecture (one per name and byte order) -> (descriptors, Architecture, types), or
        #: False: swk has none
        self.by_arch = {}
        self.reported = set()   # problems already shown once
        self.unwound = 0        # frames swk unwound (for tests and `show swk unwinder`)
        #: (gdb.Architecture, descriptors of the pc, the sp and the frame pointer, address
        #: mask) of the last frame swk looked at: most frames are left to GDB by one register
        #: read and one lookup (the pc's decision), before anything else
        self.fast = (None, None, None, None, 0)
        self.cfa_offsets = {}   # pc of a CHECK decision -> the CFA's offset from the frame pointer
        #: (thread, level) -> CFA of a CHECK frame left to GDB, until the target changes: the
        #: next frame's sp without a register read (a caller's sp is its callee's CFA)
        self.cfas = {}
        session.listeners.append(self.forget)

    def forget(self):
        """Libraries or memory changed: decisions may be stale."""
        self.decisions.clear()
        self.cfa_offsets.clear()
        self.cfas.clear()

    # --- GDB's entry point -------------------------------------------------------------
    def __call__(self, pending_frame):
        if TARGET.in_unwinder:
            return None
        gdb_arch, pc_desc, sp_desc, fp_desc, mask = self.fast
        pc = None
        if gdb_arch is pending_frame.architecture():
            try:
                pc = int(pending_frame.read_register(pc_desc))
                kind = self.decisions.get(pc)
                if kind is DECLINE:
                    return None     # the common case: a pc GDB's own unwinders are right at
                if kind is CHECK and self._plausible_fp(pending_frame, pc, sp_desc, fp_desc, mask):
                    return None
            except (gdb.error, ValueError):
                return None
        TARGET.in_unwinder = True
        try:
            return self._unwind(pending_frame, pc)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # an unwinder must never break GDB (nor end it: SystemExit)
            self._report(exc)
            return None
        finally:
            TARGET.in_unwinder = False

    def _for_architecture(self, pf):
        """(register descriptors, swk's Architecture) for the pending frame's architecture,
        or None when swk has none for it (the unwinder then steps aside, silently).  Kept
        per GDB architecture: one session may debug a 64-bit and a 32-bit program."""
        gdb_arch = pf.architecture()
        known = self.by_arch.get(gdb_arch)
        if known is None:
            try:
                arch = architecture(gdb_arch)
            except UnsupportedArchitecture:
                arch = None
            known = self.by_arch[gdb_arch] = (
                ({r.name: r for r in gdb_arch.registers("general")}, arch, {}) if arch is not None else False)
        return known or None

    def _unwind(self, pf, pc=None):
        """``pc``: the frame's pc, when the fast path read it for this architecture."""
        known = self._for_architecture(pf)
        if known is None:
            return None
        desc, arch, self.types = known
        self.descriptors, self.arch = desc, arch
        if pc is None:
            pc_desc = desc[arch.reg_name(arch.pc)]
            self.fast = (pf.architecture(), pc_desc, desc[arch.reg_name(arch.sp)],
                         desc[arch.reg_name(arch.fp)], arch.address_mask)
            pc = int(pf.read_register(pc_desc))
        kind = self.decisions.get(pc)
        if kind is None:
            libs = self.session.walker_for(gdb.selected_inferior()).process_state.library_state
            if not libs.ready_for_unwinder():
                self.session.unready = True     # GDB asks again after the stop (Session.on_stop)
                return None
            kind = self.decisions[pc] = self._classify(pc)
        if kind == DECLINE:
            return None
        if kind == CHECK and self._plausible_fp(pf, pc, *self.fast[2:]):
            return None
        sp = int(pf.read_register(desc[arch.reg_name(arch.sp)]))
        walker = self.session.walker_for(gdb.selected_inferior())
        if walker.process_state.arch != arch:
            return None     # the frame's architecture is not the inferior's: not swk's to unwind
        regs = {arch.pc: pc, arch.sp: sp}
        # the frame pointer, the callee-saved registers and a return-address register (AArch64's
        # x30: a leaf's caller is there): one GDB could not recover for this frame (<not saved>)
        # is unknown here, which only costs the rules that need it
        for regno in (arch.fp, *arch.callee_saved, arch.ra):
            if regno not in regs:
                try:
                    regs[regno] = int(pf.read_register(desc[arch.reg_name(regno)]))
                except (gdb.error, ValueError):
                    pass
        frame = Frame(pc, sp, regs.get(arch.fp, 0), walker=walker, regs=regs)
        frame.more_regs = lambda regno: self._more_register(pf, regno)
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

    def _more_register(self, pf, regno):
        """A register beyond the general ones a rule asks for, as GDB has it in the pending
        frame (never through gdb.newest_frame(): not inside an unwinder)."""
        arch = self.arch
        if regno not in arch.fp_registers:
            return None
        try:
            return arch.fp_register_word(regno, value_bytes(pf.read_register(arch.fp_register_name(regno))))
        except (gdb.error, ValueError):
            return None

    # --- deciding fast ----------------------------------------------------------------------
    def _classify(self, pc):
        walker = self.session.walker_for(gdb.selected_inferior())
        ps = walker.process_state
        try:
            code = ps.read_memory(pc, 16)
        except MemoryReadError:
            return DECLINE
        layout = ps.arch.signal_frame
        lib, mod = module_at(ps, pc)
        if layout is not None and layout.is_trampoline_code(code):
            knows = layout.gdb_knows(code) if layout.gdb_knows is not None else \
                self._gdb_knows_trampoline(walker, layout, pc, lib, mod)
            return DECLINE if knows else SWK
        if mod is None or cfi_only_swk_reads(ps, pc, lib):
            return SWK  # JIT code: GDB has nothing to go on (no CFI it reads)
        rules = [cfi_rule_at(mod, a - lib.base) for a in (pc, pc - 1)]
        if rules[0] is None and rules[1] is None:
            return SWK
        rule = rules[1] or rules[0]
        if rule.ra_signed and not ps.debugger_strips_signed_ra():
            return SWK  # a signed return address GDB cannot strip (no mask from the target)
        if rule.cfa is not None and rule.cfa.reg == ps.arch.fp and not rule.signal_frame:
            self.cfa_offsets[pc] = rule.cfa.offset
            return CHECK
        return DECLINE

    def _plausible_fp(self, pf, pc, sp_desc, fp_desc, mask):
        """Whether the frame pointer a CHECK frame's CFI computes its CFA from is a frame
        in this stack (its CFI is then right: GDB's to unwind).  The frame's sp is its
        callee's CFA when swk saw the callee (a frame-pointer chain reads one register
        per frame); a verdict stands for this thread's level until the target changes."""
        key = (selected_thread(), pf.level())
        if key in self.cfas:
            return True
        sp = self.cfas.get((key[0], key[1] - 1))
        if sp is None:
            sp = int(pf.read_register(sp_desc))
        fp = int(pf.read_register(fp_desc))
        if not sp <= fp < sp + MAX_FRAME:
            return False
        # (not the top frame's: stopped in an epilogue, its CFA may not be fp-based)
        self.cfas[key] = (fp + self.cfa_offsets.get(pc, 0)) & mask if key[1] else None
        return True

    @staticmethod
    def _gdb_knows_trampoline(walker, layout, pc, lib, mod):
        """Whether GDB's own sigtramp unwinders take this trampoline: one with signal-frame
        CFI, and (GDB's x86 Linux sniffers) one with no name, a name with "sigaction" in it,
        or the name of the C library's trampolines.  Any other (a program's own SA_RESTORER
        code under another name) GDB unwinds as a function, into junk: swk takes it — as a
        normal frame, since a Python unwinder cannot make GDB mark a frame as a signal's."""
        if mod is not None:
            rule = cfi_rule_at(mod, pc - lib.base)
            if rule is not None and rule.signal_frame:
                return True
        hit = walker.symbol_lookup.lookup_at_addr(pc) if walker.symbol_lookup is not None else None
        name = hit[0].split("@", 1)[0] if hit and hit[0] else None
        return name is None or "sigaction" in name or name in layout.TRAMPOLINE_NAMES

    @staticmethod
    def _after_call(walker, pc):
        """Whether pc follows a call (a return address) rather than an interrupted pc.  In JIT
        code its runtime names, a return address need not follow a call (HotSpot's interpreter
        returns to its bytecodes' return entries, after a jump): it is taken as one there."""
        calls = walker.process_state.arch.calls
        try:
            code = walker.process_state.read_memory(pc - calls.MAX_CALL_LEN, calls.MAX_CALL_LEN)
        except MemoryReadError:
            return True
        if calls.calls_ending_at(code, pc):
            return True
        hit = walker.symbol_lookup.lookup_at_addr(pc - 1) if walker.symbol_lookup is not None else None
        return hit is not None and isinstance(hit[1], JitSymbol)

    def _value(self, value, regno, pf):
        """``value`` as a gdb.Value of the register's own type (GDB wants exactly that)."""
        types = self.types
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
        UNWINDER.cfas.clear()     # GDB's frames are made again, perhaps otherwise
        gdb.invalidate_cached_frames()
