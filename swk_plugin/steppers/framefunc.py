"""FrameFuncStepper: the frame-pointer chain (spec: FrameFuncStepper).

Used only for functions that keep a standard frame, recognised by their
prologue (``arch.prologue``: on x86-64 ``[endbr64] push %rbp; mov %rsp,%rbp``, on AArch64
a frame record ``stp x29, x30, [sp, #-N]!; mov x29, sp`` and its variants),
so it never follows a frame pointer that an optimised function uses as a
general register.  The prologue also tells where the callee-saved registers
pushed right after it live, so callers get their true values, and where a
top frame stopped inside the prologue or at its return still keeps its
return address.  The rule for each (pc, exact) is kept until the libraries
change.

Where the code at a pc cannot be read at all (a core without its program or
libraries), no prologue can be checked: then the architecture's frame record
(``arch.prologue.frame_record``) is followed if the frame pointer points at one
in this stack — what GDB's i386 unwinder and eu-stack do there.  So it is in JIT
code a call returns to that its runtime describes without CFI (executable memory no
library holds, a function a perf map or jitdump names): the runtimes that publish
their code keep frame records there (V8 always; HotSpot's interpreter always, its
compiled code with -XX:+PreserveFramePointer).  Code nobody describes (a stub copied
to a page) may keep none — rbp would be its caller's, skipping a frame — and is left
to the analysis and the scanner.
"""
from ..errors import MemoryReadError, RuleError
from ..rule import UnwindRule
from ..stepper import FrameStepper, Gcf, PRIORITY_FRAMEFUNC
from ..unwind.apply import caller_by_rule
from ..unwind.cfi import cfi_covers
from ..unwind.modules import function_at, is_executable

MAX_FRAME = 1 << 28  # a frame larger than 256 MiB is not a frame


def same_region(ps, a, b):
    """Whether a and b lie in one mapping (true when the back-end knows no mappings)."""
    r = ps.region_at(a)
    return r is None or r.start <= b < r.end


class FrameFuncStepper(FrameStepper):
    name = "FrameFuncStepper"
    priority = PRIORITY_FRAMEFUNC
    trust = "frame-pointer"

    def __init__(self, walker=None):
        super().__init__(walker)
        self._memo = (None, None)     # (library cache, its memo by address): found once
        self._leaf = None             # the rule of a frame whose return address is still in its register

    def prologue_for(self, addr):
        """The arch's Prologue of the function holding addr, or None (library lifetime)."""
        cache = self.process_state.library_cache
        held, by_addr = self._memo
        if held is not cache:
            by_addr = cache.memo("framefunc-by-addr")
            self._memo = (cache, by_addr)
        pro = by_addr.get(addr, by_addr)
        if pro is by_addr:
            pro = by_addr.put(addr, self._prologue_for(addr))
        return pro

    def _prologue_for(self, addr):
        ps = self.process_state
        kit = ps.arch.prologue
        if kit is None:
            return None
        bounds = function_at(ps, addr)
        if bounds is None:
            return None
        start = bounds[0]
        by_start = ps.library_cache.memo("framefunc-by-start")
        if start in by_start:
            return by_start[start]
        try:
            code = ps.read_memory(start, kit.READ_SIZE)
        except MemoryReadError:
            code = b""
        return by_start.put(start, kit.parse_prologue(code, start) if code else None)

    def rule_for(self, frame):
        """The UnwindRule for ``frame`` from its function's prologue (or, where its code cannot
        be read or is JIT code, the architecture's frame record), or None."""
        exact = frame.is_top or frame.non_call
        pro = self.prologue_for(frame.ra if exact else frame.ra - 1)
        if pro is None:
            return self._unread_code_rule(frame.ra if exact else frame.ra - 1, exact) or \
                self._jit_rule(frame.ra - 1, exact)
        if not exact:
            return pro.body
        return pro.rule_at(frame.ra, True, self._at_return(frame.ra))

    def _unread_code_rule(self, pc, exact):
        """Where no byte of code at ``pc`` can be read, the frame record's rule — or, in a frame
        stopped there whose calls leave the return address in a register, that register (the
        function may not have saved it yet: eu-stack's first guess too); else None."""
        arch = self.process_state.arch
        kit = arch.prologue
        if kit is None or kit.frame_record is None:
            return None
        try:
            self.process_state.read_memory(pc, 1)
        except MemoryReadError:
            if exact and not arch.return_address_pushed:
                if self._leaf is None:
                    self._leaf = UnwindRule.at_cfa(arch.sp, 0, arch.ra, None)
                return self._leaf
            return kit.frame_record
        return None

    def _jit_rule(self, pc, exact):
        """The frame record's rule for a frame a call returns to (not ``exact``) in JIT code:
        executable memory that no library holds and no JIT described with CFI."""
        ps = self.process_state
        kit = ps.arch.prologue
        if exact or kit is None or kit.frame_record is None or not self._in_jit_code(pc):
            return None
        return kit.frame_record

    def _in_jit_code(self, pc):
        """Whether ``pc`` is JIT code its runtime describes without CFI: executable memory no
        library holds, in a function a JIT source (or a user's SymbolLookup) names."""
        ps = self.process_state
        libs = ps.library_state
        return (libs is not None and libs.get_library_at_addr(pc) is None and not cfi_covers(ps, pc)
                and is_executable(ps, pc) and function_at(ps, pc) is not None)

    def declines_at(self, pc, exact):
        at = pc if exact else pc - 1
        if self.process_state.arch.prologue is None or (
                self.prologue_for(at) is None and self._unread_code_rule(at, exact) is None
                and self._jit_rule(at, exact) is None):
            return "no standard frame-pointer prologue"
        return None

    def defers_at(self, pc, exact):
        """Where the module's CFI covers the pc it decides the caller and all its registers
        (a prologue scan misses callee-saved registers pushed between other instructions,
        and the outermost frame's undefined return address): the chain is the fallback."""
        return cfi_covers(self.process_state, pc if exact else pc - 1)

    def get_caller_frame(self, frame):
        ps = self.process_state
        arch = ps.arch
        rule = self.rule_for(frame)
        if rule is None:
            return Gcf.NOT_ME, "no standard frame-pointer prologue"
        if rule.cfa.reg == arch.fp:
            sp, fp = frame.sp, frame.fp
            if fp % arch.ptr_size or fp < sp or fp - sp > MAX_FRAME or not same_region(ps, sp, fp):
                return Gcf.NOT_ME, f"frame pointer 0x{fp:x} is not a frame in this stack"
        try:
            caller, _cfa = caller_by_rule(frame, rule, ps)
        except (MemoryReadError, RuleError) as exc:
            return Gcf.NOT_ME, str(exc)
        if caller is None:
            return Gcf.NOT_ME, "the prologue's rule has no return address"
        if caller.ra != 0 and not is_executable(ps, caller.ra):
            return Gcf.NOT_ME, f"return address 0x{caller.ra:x} is not in executable memory"
        if caller.ra != 0 and (rule is self._leaf or rule is arch.prologue.frame_record) and \
                not self._in_jit_code(frame.ra - 1):
            # no code checked this frame: its caller must at least be a mapped file's code
            region = ps.region_at(caller.ra)
            if region is not None and not (region.name.startswith("/") or region.name == "[vdso]"):
                return Gcf.NOT_ME, f"return address 0x{caller.ra:x} is not in a program or library"
        return Gcf.SUCCESS, caller

    def _at_return(self, pc):
        """The prologue kit's ``is_return`` of the code at pc: whether (and, where the
        architecture can say, how) a frame stopped there is on its way out.  It reads
        ``EPILOGUE_READ`` bytes where the kit says (AArch64 looks ahead to the ``ret``)."""
        ps = self.process_state
        kit = ps.arch.prologue
        n = kit.EPILOGUE_READ
        try:
            code = ps.read_memory(pc, n)
        except MemoryReadError:
            if n == 1:
                return False
            try:   # near the end of a mapping: what is readable
                code = ps.read_memory(pc, 4)
            except MemoryReadError:
                return False
        if kit.epilogue_at is not None:       # an epilogue may end in a tail call out of the function
            return kit.epilogue_at(code, pc, function_at(ps, pc))
        return kit.is_return(code)
