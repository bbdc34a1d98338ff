"""SigHandlerStepper: through a signal trampoline (spec: SigHandlerStepper).

A signal handler returns into a trampoline (glibc's __restore_rt on x86-64, the
vDSO's __kernel_rt_sigreturn or qemu's own page on AArch64)
whose frame holds the kernel's signal frame, and in it every register of the
code the signal interrupted.  Restoring them all, exactly, lets the walk go on
even where the interrupted function has no CFI and no frame pointer.

The trampoline is recognised at the frame's pc itself, not pc-1: the
handler's return address is the trampoline's first instruction.  Any one of
three signs is enough, so a stripped libc, a trampoline without CFI, and one
copied into anonymous memory all work: its code; an S-augmented CIE
covering it; its symbol name.  The layout and the rule come from
``arch.signal_frame`` (arch/x86_64/signal.py, arch/i386/signal.py: i386 has two
kinds of frame, told apart by the trampoline's code or name; arch/aarch64/signal.py,
whose frame's size is read from the frame itself); an architecture without one is
never claimed.

The trampoline frame's CFA is the end of the kernel's frame (ucontext +
siginfo above its sp): the frame owns the whole kernel frame, and the
interrupted code's stack (the red zone, its own frame) lies above.
"""
from ..errors import MemoryReadError
from ..frame import FrameKind
from ..stepper import FrameStepper, Gcf, Note, PRIORITY_SIGHANDLER
from ..unwind.apply import caller_by_rule
from ..unwind.cfi import cfi_rule_at
from ..unwind.modules import module_at


class SigHandlerStepper(FrameStepper):
    name = "SigHandlerStepper"
    priority = PRIORITY_SIGHANDLER
    trust = "signal"

    # --- recognition --------------------------------------------------------------------------
    def recognise(self, frame):
        """How ``frame``'s pc was recognised as a signal trampoline ("code", "cfi",
        "symbol"), or None.  Kept per (pc, exact): for pcs in a module until a library
        comes or goes, for pcs in anonymous memory (which may be rewritten) one stop."""
        return self.recognise_at(frame.ra, bool(frame.is_top or frame.non_call))

    def declines_at(self, pc, exact):
        return None if self.recognise_at(pc, exact) else "not a signal trampoline"

    def recognise_at(self, pc, exact):
        """recognise() for a frame at ``pc`` (``exact``: looked up at pc, not pc-1)."""
        ps = self.process_state
        layout = ps.arch.signal_frame
        if layout is None:
            return None
        exact = bool(exact)
        lib, mod = module_at(ps, pc)
        cache = ps.library_cache if lib is not None else ps.cache
        memo = cache.memo("sigtramp")
        key = (pc, exact)
        if key not in memo:
            memo.put(key, self._recognise(layout, pc, exact, lib, mod))
        return memo[key]

    def _recognise(self, layout, pc, exact, lib, mod):
        if layout.trampoline_start(self._code_at, pc, exact) is not None:
            return "code"
        if mod is not None:
            # glibc's FDE starts one byte before __restore_rt so that pc-1 lookups
            # find it too; the pc itself is always inside the FDE.
            rule = cfi_rule_at(mod, pc - lib.base)
            if rule is not None and rule.signal_frame:
                return "cfi"
        name = self._symbol_name(pc)
        if name and name.split("@", 1)[0] in layout.TRAMPOLINE_NAMES:
            return "symbol"
        return None

    def _code_at(self, addr, n):
        try:
            return self.process_state.read_memory(addr, n)
        except MemoryReadError:
            return None

    def _symbol_name(self, pc):
        lookup = self.walker.symbol_lookup if self.walker is not None else None
        elf_name = getattr(lookup, "symbol_name_at", None)
        try:
            if elf_name is not None:    # swk's own lookup: the symbol tables, not DWARF's names
                return elf_name(pc)
            hit = lookup.lookup_at_addr(pc) if lookup is not None else None
        except Exception:  # a user's SymbolLookup failing only loses this sign
            hit = None
        return hit[0] if hit and hit[0] else None

    # --- stepping -----------------------------------------------------------------------------
    def get_caller_frame(self, frame):
        how = self.recognise(frame)
        if how is None:
            return Gcf.NOT_ME, "not a signal trampoline"
        ps = self.process_state
        layout = ps.arch.signal_frame
        if layout.frame_kind is None:
            # one kind of frame, whose size the layout may read from the frame itself
            # (AArch64's __reserved records)
            try:
                ps.read_memory(layout.sigcontext_address(frame.sp), layout.SC_GREGS_SIZE)
                rule = layout.rule_at(ps.read_memory, frame.sp) if layout.rule_at is not None else layout.rule()
                caller, _cfa = caller_by_rule(frame, rule, ps)
            except MemoryReadError as exc:
                return Gcf.NOT_ME, Note(f"signal trampoline (by {how}) but its sigcontext is unreadable ({exc})",
                                        FrameKind.SIGNAL)
            return Gcf.SUCCESS, caller
        exact = bool(frame.is_top or frame.non_call)
        kind = layout.frame_kind(lambda a, n: self._code_at(a, n), frame.ra, exact,
                                 lambda: self._symbol_name(frame.ra))
        if kind is None:
            # recognised by its CFI alone, in code whose frame the architecture cannot tell
            # (i386: a sigframe or an rt_sigframe): the CFI's own rule is the one to follow
            lib, mod = module_at(ps, frame.ra)
            rule = cfi_rule_at(mod, frame.ra - lib.base) if mod is not None else None
            if rule is None or not rule.signal_frame:
                return Gcf.NOT_ME, Note(f"signal trampoline (by {how}) of an unknown kind", FrameKind.SIGNAL)
            sc = None
        else:
            rule, sc = kind.rule, kind.sigcontext_address(frame.sp)
        try:
            if sc is not None:
                ps.read_memory(sc, layout.SC_GREGS_SIZE)
            caller, _cfa = caller_by_rule(frame, rule, ps)
        except MemoryReadError as exc:
            return Gcf.NOT_ME, Note(f"signal trampoline (by {how}) but its sigcontext is unreadable ({exc})",
                                    FrameKind.SIGNAL)
        return Gcf.SUCCESS, caller
