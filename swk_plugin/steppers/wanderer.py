"""StepperWanderer: find the caller by scanning the stack for a return address (spec: StepperWanderer).

The last resort, for code with neither CFI nor a frame-pointer prologue
(-fomit-frame-pointer without unwind tables, JIT code, stripped asm).  From
the frame's sp upward, each aligned word is a candidate return address when it
points into executable memory right after a call instruction
(arch.calls); inside a function whose bounds the symbols give, the call
must also be a real instruction boundary, checked by sweeping that function
with capstone once (cached).

Which candidate wins — "the current function" is the one holding the frame's
lookup_pc, known from symbols:

1. the first whose call goes to the current function (directly, through a PLT
   stub, or through a GOT word as with -fno-plt): that is almost surely the
   call that made this frame;
2. else the first indirect call (through a register or memory): it may have
   called the current function;
3. else the first direct call to some other function — the current function
   was reached by a tail call, or the word is a stale return address left by
   an earlier call.  It is tried last.

With no bounds for the current function (code outside every module) the
first candidate wins.  The scan covers 64 words, or 512 for the top frame and
a frame a signal interrupted (their sp may sit below a large frame), stays
inside the stack's mapping when the back-end knows mappings, and stops at
unreadable memory.  Frames of known bottom-of-stack functions are left to the
BottomOfStackStepper, so no junk frames appear below _start or start_thread.

Where the return address has a register of its own (AArch64's x30), a top frame or
one a signal interrupted may still hold it there: it is tried first, and taken when
it follows a call to the current function.

The caller's sp is the callee's CFA: where the callee's CFI or analysis puts the
return address relative to it, else the architecture's guess (the slot + one
pointer where calls push the return address; on AArch64 the slot is the x30 half
of a frame record, and the x29 beside it is the caller's).  What the scan found is
stated as an UnwindRule and applied like any other; a signed return address
(pointer authentication) is stripped before it is checked.
Where the callee saved registers comes from its CFI rule (rare here: the
DebugStepper would have used it) or else from code analysis
(swk_plugin.analysis), as offsets from that CFA.  Without either,
callee-saved registers carry over unchanged — except that a return address
right above where the frame pointer points (slot == fp + one pointer) means a
standard frame, so [fp] is the caller's frame pointer.

Every instruction-set fact (call encodings, PLT stubs, trampolines) comes from
the architecture (``arch.calls``, ``arch.signal_frame``).
"""
import bisect

from ..analysis import frame_rule_at
from ..errors import MemoryReadError, RuleError
from ..frame import FrameKind
from ..procstate import PAGE
from ..rule import UnwindRule
from ..stepper import FrameStepper, Gcf, PRIORITY_WANDERER
from ..unwind.apply import caller_by_rule
from ..unwind.cfi import cfi_rule_at
from ..unwind.modules import function_at, is_executable, module_at
from .bottom import BOTTOM_FUNCTIONS

SCAN_WORDS = 64
SCAN_WORDS_TOP = 512
#: Functions larger than this are not swept; the byte decoder alone decides there.
MAX_SWEEP = 1 << 16

MATCH, INDIRECT, OTHER = 1, 2, 3
_TRUST = {MATCH: "scan", INDIRECT: "scan", OTHER: "scan"}

_MAX = 1 << 64


class StepperWanderer(FrameStepper):
    name = "StepperWanderer"
    priority = PRIORITY_WANDERER
    trust = "scan"

    # --- the step ----------------------------------------------------------------------------------
    def get_caller_frame(self, frame):
        if self.walker is None:      # added to a StepperGroup made before its Walker
            self.walker = frame.walker
        if frame.ra == 0:
            return Gcf.NOT_ME, "no code address to scan from"
        if frame.kind == FrameKind.SIGNAL:
            return Gcf.NOT_ME, "a signal frame's caller is in its saved context, not on the stack"
        name = frame.name
        if name is not None and name.split("(", 1)[0].split("@", 1)[0] in BOTTOM_FUNCTIONS:
            return Gcf.NOT_ME, f"{name} is a bottom-of-stack function"
        found = self.register_candidate(frame)
        if found is not None:
            rule = self.rule_for_register(frame, found)
            try:
                caller, _cfa = caller_by_rule(frame, rule, self.process_state)
            except (MemoryReadError, RuleError):
                caller = None
            if caller is not None:
                caller.trust = _TRUST[MATCH]
                return Gcf.SUCCESS, caller
        found, why = self.scan(frame)
        if found is None:
            return Gcf.NOT_ME, why
        slot, ra, tier = found
        try:
            caller, _cfa = caller_by_rule(frame, self.rule_for_slot(frame, slot, ra), self.process_state)
        except (MemoryReadError, RuleError) as exc:
            return Gcf.NOT_ME, f"return address found at 0x{slot:x}, but {exc}"
        caller.trust = _TRUST[tier]
        return Gcf.SUCCESS, caller

    # --- a return address still in its register -------------------------------------------------
    def register_candidate(self, frame):
        """The return address in the return-address register, where that is a register of its
        own (AArch64's x30) and the frame stopped where it may still hold it (the top frame, or
        one a signal interrupted): taken when it follows a call to the current function.  A
        value after any other call is most likely the return address of a call this function
        made itself.  None otherwise."""
        ps = self.process_state
        arch = ps.arch
        if arch.ra == arch.pc or not (frame.is_top or frame.non_call):
            return None
        word = frame.regs.get(arch.ra)
        if not word:
            return None
        if word > arch.max_user_address and arch.pac_mask_registers:
            word = ps.strip_return_address(word)
        func = function_at(ps, frame.lookup_pc)
        if func is None or self._hits(word - 1, func):
            return None
        return word if self.classify(word, func) == MATCH else None

    def rule_for_register(self, frame, ra):
        """The rule of a return address found in its register: the caller's sp is the frame's
        CFA, from the function's analysis when it has one, else the frame's own sp (a leaf
        that has not moved it); callee-saved registers carry over."""
        ps = self.process_state
        arch = ps.arch
        saved, cfa_off = {}, 0
        try:
            height = frame_rule_at(ps, frame.lookup_pc, True)
        except Exception:        # no analysis: the leaf guess
            height = None
        if height is not None and height.sp_offset is not None and arch.ra not in height.saved:
            saved, cfa_off = dict(height.saved), height.sp_offset
        signed = frame.regs.get(arch.ra) != ra
        return UnwindRule.at_cfa(arch.sp, cfa_off, arch.ra, None, saved, ra_signed=signed)

    def scan(self, frame):
        """((slot, return address, tier), '') for the chosen candidate, or (None, why not)."""
        ps = self.process_state
        arch = ps.arch
        ptr, order = arch.ptr_size, arch.byteorder
        start = (frame.sp + ptr - 1) & -ptr
        words = SCAN_WORDS_TOP if (frame.is_top or frame.non_call) else SCAN_WORDS
        limit = start + words * ptr
        regions = ps.memory_regions()     # read once per scan: a back-end may not cache them
        code = None
        if regions:
            stack = next((r for r in regions if r.start <= frame.sp < r.end), None)
            if stack is None:
                return None, f"stack pointer 0x{frame.sp:x} is in no mapping"
            limit = min(limit, stack.end)
            code = sorted((r.start, r.end) for r in regions if r.executable)
        func = function_at(ps, frame.lookup_pc)
        lo_code, hi_code = 0x1000, arch.max_user_address
        strip = ps.strip_return_address if arch.pac_mask_registers else None
        best = {}
        addr = start
        stop = f"no return address in {words} words above sp 0x{frame.sp:x}"
        while addr < limit:
            n = min(limit, (addr & -PAGE) + PAGE) - addr
            data = self._read_words(addr, n)
            if len(data) < n:
                stop = f"no return address between sp 0x{frame.sp:x} and unreadable 0x{addr + len(data):x}"
                limit = addr + len(data)
                n = len(data)
            for off in range(0, n - ptr + 1, ptr):
                word = int.from_bytes(data[off:off + ptr], order)
                if word > hi_code and strip is not None:
                    word = strip(word)          # a signed return address (pointer authentication)
                if not lo_code <= word <= hi_code:
                    continue
                tier = self.classify(word, func, code)
                if tier is None:
                    continue
                slot = addr + off
                if tier == MATCH or func is None:
                    return (slot, word, tier), ""
                best.setdefault(tier, (slot, word, tier))
            addr += n
        for tier in (INDIRECT, OTHER):
            if tier in best:
                return best[tier], ""
        return None, stop

    def _read_words(self, addr, n):
        """n bytes at addr, or the readable words before the first unreadable one.

        A whole page at once is the fast path; a page readable only in part (a
        core file's truncated segment) is read word by word.
        """
        ps = self.process_state
        try:
            return ps.read_memory(addr, n)
        except MemoryReadError:
            pass
        ptr = ps.arch.ptr_size
        out = bytearray()
        for a in range(addr, addr + n - ptr + 1, ptr):
            try:
                out += ps.read_memory(a, ptr)
            except MemoryReadError:
                break
        return bytes(out)

    # --- candidates ---------------------------------------------------------------------------------
    def classify(self, ra, func, code=None):
        """MATCH, INDIRECT or OTHER if ``ra`` follows a call (see the module doc), else None.

        ``func`` is the current function's (start, end) — end may be None — or None;
        ``code`` the sorted executable mappings when known (else modules decide).
        """
        if code is not None:
            i = bisect.bisect_right(code, (ra, _MAX)) - 1
            if i < 0 or not ra < code[i][1]:
                return None
        elif not is_executable(self.process_state, ra):
            return None
        if self._is_trampoline(ra):
            return MATCH   # a signal handler returns into the sigreturn trampoline, after no call
        calls = self.process_state.arch.calls.calls_ending_at(self._code_before(ra), ra)
        if not calls:
            return None
        call_at = self._call_start(ra)
        if call_at is not None:
            if call_at is False:
                return None                      # a sweep shows no call ends at ra
            calls = [c for c in calls if c.addr == call_at] or calls
        tier = OTHER
        for call in calls:
            target = call.target
            if target is None and call.slot is not None:
                target = self._read_pointer(call.slot)
            if target is None:
                tier = min(tier, INDIRECT)
                continue
            if func is not None and (self._hits(target, func) or self._hits(self._plt_target(target), func)):
                return MATCH
        return tier

    def _is_trampoline(self, addr):
        layout = self.process_state.arch.signal_frame
        if layout is None:
            return False
        try:
            code = self.process_state.read_memory(addr, 16)
        except MemoryReadError:
            return False
        return layout.is_trampoline_code(code)

    @staticmethod
    def _hits(target, func):
        if target is None:
            return False
        start, end = func
        return target == start or (end is not None and start <= target < end)

    def _code_before(self, ra):
        """Up to MAX_CALL_LEN bytes ending at ra, fewer where the page before is unreadable."""
        ps = self.process_state
        n = ps.arch.calls.MAX_CALL_LEN
        try:
            return ps.read_memory(ra - n, n)
        except MemoryReadError:
            n = ra & (PAGE - 1)
            try:
                return ps.read_memory(ra - n, n) if n else b""
            except MemoryReadError:
                return b""

    def _call_start(self, ra):
        """Where the call ending at ra starts per a sweep of its function, False if none
        ends there, None when unknown (no symbols, function too big, sweep stopped short)."""
        ps = self.process_state
        func = function_at(ps, ra - 1)
        if func is None or func[1] is None or func[1] - func[0] > MAX_SWEEP:
            return None
        start, end = func
        memo = ps.library_cache.memo("return-sites")
        sites = memo.get(start, 0)
        if sites == 0:
            try:
                code = ps.read_memory(start, end - start)
                sites = ps.arch.calls.return_sites(code, start)
            except MemoryReadError:
                sites = None
            memo.put(start, sites)
        if sites is None:
            return None
        calls, decoded_end = sites
        if ra in calls:
            return calls[ra]
        return False if ra <= decoded_end else None

    def _read_pointer(self, addr):
        try:
            return self.process_state.read_pointer(addr)
        except MemoryReadError:
            return None

    def _plt_target(self, addr):
        """Where a PLT stub at addr jumps (arch.calls.plt_slot), else None.

        The callee is running, so lazy binding has already filled the GOT word.
        """
        calls = self.process_state.arch.calls
        try:
            code = self.process_state.read_memory(addr, calls.PLT_STUB_SIZE)
        except MemoryReadError:
            return None
        slot = calls.plt_slot(code, addr, lambda: self._got_base(addr))
        return self._read_pointer(slot) if slot is not None else None

    def _got_base(self, addr):
        """The run-time address of the .got.plt of the module holding addr (PIC PLT stubs
        jump relative to it), or None."""
        lib, mod = module_at(self.process_state, addr)
        if mod is None:
            return None
        try:
            sec = mod.section(".got.plt") or mod.section(".got")
        except Exception:   # an unreadable section table only costs this preference
            return None
        return lib.base + sec.addr if sec is not None else None

    # --- the caller -----------------------------------------------------------------------------------
    def rule_for_slot(self, frame, slot, ra=None):
        """The UnwindRule of a return address found at ``slot`` (``ra``: the address it
        holds, stripped of a pointer-authentication code): the callee's CFA where its CFI
        or analysis puts the return address at that slot, else the architecture's guess
        (``arch.scan_cfa``: one pointer above the slot where calls push it), with where the
        callee saved registers (see the module doc) if readable."""
        ps = self.process_state
        arch = ps.arch
        ptr = arch.ptr_size
        saved = self._saved_offsets(frame)
        ra_off = saved.pop(arch.ra, None) if saved is not None else None
        if ra_off is not None and ra_off < 0:
            cfa = slot - ra_off
        else:
            cfa = arch.scan_cfa(slot, ps.read_pointer)
        if saved is None and frame.fp and slot == frame.fp + ptr:
            # The return address sits right above where the frame pointer points: a
            # standard frame (a frame record), so [fp] is the caller's saved frame pointer.
            saved = {arch.fp: frame.fp - cfa}
        elif saved is None and arch.scan_saved_fp is not None:
            # A frame record at the slot (AArch64's {x29, x30}, RISC-V's {s0, ra}, s390x's save
            # area): the frame pointer saved beside the return address is the caller's.
            saved = {arch.fp: slot + arch.scan_saved_fp - cfa}
        readable = {}
        for reg, off in (saved or {}).items():
            if reg not in (arch.sp, arch.pc, arch.ra) and ps.is_readable(cfa + off, ptr):
                readable[reg] = off
        signed = False
        if ra is not None:
            try:
                signed = ps.read_pointer(slot) != ra
            except MemoryReadError:
                signed = False
        return UnwindRule.at_cfa(arch.sp, cfa - frame.sp, arch.ra, slot - cfa, readable, ra_signed=signed)

    def _saved_offsets(self, frame):
        """{regno: offset from the CFA} where the callee saved registers (the return address
        among them when it is saved), from its CFI or from code analysis; None when neither
        knows."""
        ps = self.process_state
        pc = frame.lookup_pc
        lib, mod = module_at(ps, pc)
        if mod is not None:
            try:
                rule = cfi_rule_at(mod, pc - lib.base)
            except Exception:    # unreadable CFI disables this source only
                rule = None
            if rule is not None:
                return dict(rule.saved_offsets())
        try:
            height = frame_rule_at(ps, pc, frame.is_top or frame.non_call)
        except Exception:        # the analysis failing leaves the fallback
            height = None
        if height is not None:
            return dict(height.saved)
        return None
