"""SigHandlerStepper: through a signal trampoline (spec: SigHandlerStepper).

A signal handler returns into a trampoline (glibc's __restore_rt: ``mov
$15,%rax; syscall``) whose frame holds the kernel's rt_sigframe, and in it
every register of the code the signal interrupted.  Restoring them all,
exactly, lets the walk go on even where the interrupted function has no CFI
and no frame pointer.

The trampoline is recognised at the frame's pc itself, not pc-1: the
handler's return address is the trampoline's first instruction.  Any one of
three signs is enough, so a stripped libc, a trampoline without CFI, and one
copied into anonymous memory all work: its code; an S-augmented CIE
covering it; its symbol name.  The layout comes from ``arch.signal_frame``
(arch/x86_64_signal.py for x86-64 Linux); an architecture without one is
never claimed.

``frame.cfa`` of the trampoline frame is the end of the rt_sigframe
(ucontext + siginfo above its sp): the frame owns the whole kernel frame,
and the interrupted code's stack (the red zone, its own frame) lies above.
"""
from ..errors import MemoryReadError
from ..frame import Frame, FrameKind, Location
from ..stepper import FrameStepper, Gcf, PRIORITY_SIGHANDLER
from .context import module_at
from .debug import find_row


class SigHandlerStepper(FrameStepper):
    name = "SigHandlerStepper"
    priority = PRIORITY_SIGHANDLER
    trust = "signal"

    def __init__(self, walker=None):
        super().__init__(walker)
        #: (pc, exact) -> how it was recognised ("code", "cfi", "symbol") or None.
        #: Pcs in a module keep their answer until a library comes or goes; pcs in
        #: anonymous memory (which may be rewritten) only for one stop.
        self._in_modules = {}
        self._anonymous = {}
        self._anonymous_gen = None

    def new_library_notification(self, library, change):
        self._in_modules.clear()
        self._anonymous.clear()

    # --- recognition --------------------------------------------------------------------------
    def recognise(self, frame):
        """How ``frame``'s pc was recognised as a signal trampoline, or None."""
        ps = self.process_state
        layout = getattr(ps.arch, "signal_frame", None)
        if layout is None:
            return None
        pc = frame.ra
        exact = bool(frame.is_top or frame.non_call)
        lib, mod = module_at(self.walker, pc)
        if lib is not None:
            cache = self._in_modules
        else:
            if self._anonymous_gen != ps.generation:
                self._anonymous.clear()
                self._anonymous_gen = ps.generation
            cache = self._anonymous
        key = (pc, exact)
        if key not in cache:
            cache[key] = self._recognise(layout, pc, exact, lib, mod)
        return cache[key]

    def _recognise(self, layout, pc, exact, lib, mod):
        ps = self.process_state

        def code_at(addr, n):
            try:
                return ps.read_memory(addr, n)
            except MemoryReadError:
                return None

        if layout.trampoline_start(code_at, pc, exact) is not None:
            return "code"
        if mod is not None:
            # glibc's FDE starts one byte before __restore_rt so that pc-1 lookups
            # find it too; the pc itself is always inside the FDE.
            row = find_row(mod, pc - lib.base)
            if row is not None and row.signal_frame:
                return "cfi"
        lookup = self.walker.symbol_lookup
        try:
            hit = lookup.lookup_at_addr(pc) if lookup is not None else None
        except Exception:  # a user's SymbolLookup failing only loses this sign
            hit = None
        if hit and hit[0] and hit[0].split("@", 1)[0] in layout.TRAMPOLINE_NAMES:
            return "symbol"
        return None

    # --- stepping -----------------------------------------------------------------------------
    def get_caller_frame(self, frame):
        how = self.recognise(frame)
        if how is None:
            return Gcf.NOT_ME, "not a signal trampoline"
        ps = self.process_state
        arch = ps.arch
        layout = arch.signal_frame
        if frame.kind != FrameKind.SIGNAL:
            frame.kind = FrameKind.SIGNAL
            frame.set_ra(frame.ra)       # its name is now looked up at pc, not pc-1
        sc = layout.sigcontext_address(frame.sp)
        try:
            data = ps.read_memory(sc, layout.SC_GREGS_SIZE)
        except MemoryReadError as exc:
            return Gcf.NOT_ME, f"signal trampoline (by {how}) but its sigcontext is unreadable ({exc})"
        frame.cfa = layout.frame_end(frame.sp)
        regs, locations = {}, {}
        slot = layout.SLOT
        for regno, off in layout.SC_OFFSETS.items():
            regs[regno] = int.from_bytes(data[off:off + slot], "little")
            locations[regno] = Location.address(sc + off)
        caller = Frame(regs[arch.pc], regs[arch.sp], regs[arch.fp], walker=self.walker, regs=regs)
        caller.reg_locations = locations
        caller.ra_location = locations[arch.pc]
        caller.sp_location = locations[arch.sp]
        caller.fp_location = locations[arch.fp]
        caller.non_call = True           # interrupted at its pc: look it up there, not at pc-1
        return Gcf.SUCCESS, caller
