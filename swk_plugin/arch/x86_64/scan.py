"""Function entries in x86-64 code that has neither symbols nor CFI.

Two questions the function-bounds finder (swk_plugin.analysis.bounds) asks
of raw code: where do the functions in a gap between known functions start
(``split_gap``), and which aligned addresses before a pc in JIT code look
like an entry that reaches it (``search_entries``).  ``after_call`` says
whether the bytes before an address end a call instruction.
"""

from .. import entries
from ..entries import MAX_SEARCH_CANDIDATES  # noqa: F401 (re-exported)
from . import analysis as _analysis

#: Function entries are aligned to this in JIT code and gaps.
ENTRY_ALIGN = 16

_PROLOGUE_STARTS = (
    b"\x55", b"\x53", b"\x41\x54", b"\x41\x55", b"\x41\x56", b"\x41\x57",   # push rbp/rbx/r12-r15
    b"\x48\x83\xec", b"\x48\x81\xec",                                     # sub $imm,%rsp
    b"\x48\x89\xe5",                                                      # mov %rsp,%rbp
)
_ENDBR64 = b"\xf3\x0f\x1e\xfa"
#: The longest call instruction (prefixes, REX, SIB, disp32): bytes after_call needs.
CALL_LOOKBACK = 10


class Scanner:
    """The entry scanner for one x86 instruction set: its analysis ``Isa`` (decoder and
    instruction classes), the bytes a function's entry may start with, its endbr, and how
    many bytes the longest call instruction takes (arch/i386/scan.py makes i386's)."""

    def __init__(self, isa, prologue_starts, endbr, call_lookback, frame_setups=()):
        self.isa, self.prologue_starts, self.endbr = isa, prologue_starts, endbr
        self.call_lookback = call_lookback
        #: The full frame-pointer set-up (``push %rbp; mov %rsp,%rbp``): an entry at any byte,
        #: where code built without -falign-functions (or by old compilers) puts functions.
        self.frame_setups = frame_setups


    def split_gap(self, code, lo):
        """Function starts in the CFI-less code ``code`` found at ``lo``, sorted.

        The first non-padding instruction starts one; so does every direct call
        target.  The instruction after a ret/jmp/ud2 (and its padding) starts
        one unless a branch between other code crosses that point: compilers
        align jump targets after a ret too, but only their own code jumps there.
        """
        md = self.isa.decoder()
        insns = []
        pos = 0
        n = len(code)
        while pos < n:
            got = False
            for a, size, mn, ops in md.disasm_lite(code[pos:], lo + pos):
                insns.append((a, size, mn, ops))
                pos = a + size - lo
                got = True
            if pos < n:
                insns.append((lo + pos, 1, "(bad)", ""))
                pos += 1
            elif not got:
                break
        return entries.split_points(self._flows(insns), lo, lo + n, at_boundaries=True)

    def _flows(self, insns):
        """The engine's (address, size, flow, target, padding) of decoded instructions."""
        classify, is_padding = self.isa.classify_memo, self.isa.is_padding
        for a, size, mn, ops in insns:
            _e, _x, _y, flow, tgt = classify(mn, ops)
            yield a, size, flow, tgt, is_padding(mn, ops) or mn == "(bad)"


    def _looks_like_entry(self, code, i):
        if code.startswith(self.endbr, i):
            i += len(self.endbr)
        return any(code.startswith(p, i) for p in self.prologue_starts)


    def _ends_code(self, code, i):
        """Whether an instruction ending exactly at offset i is padding or ends a path."""
        md = self.isa.decoder()
        for k in range(1, min(15, i) + 1):
            for _a, size, mn, ops in md.disasm_lite(code[i - k:i], 0, 1):
                if size == k:
                    m = mn.rpartition(" ")[2]
                    if self.isa.is_padding(mn, ops) or m in _analysis.STOPS or m == "jmp":
                        return True
        return False


    def _reaches(self, code, i, target, exact):
        """Whether linear decoding from offset i lands on offset target (exact) or on
        an instruction holding it."""
        md = self.isa.decoder()
        pos = i
        while pos <= target:
            got = False
            for _a, size, _mn, _ops in md.disasm_lite(code[pos:target + 16], pos):
                if pos == target or (not exact and pos + size > target):
                    return True
                pos += size
                got = True
                if pos > target:
                    break
            if not got:
                return False
        return False


    def _candidates(self, code, lo, t):
        """Offsets at or before t that may start a function, nearest first: every aligned one,
        and every one (aligned or not) holding a whole frame-pointer set-up."""
        aligned = range(t - (lo + t) % ENTRY_ALIGN, -1, -ENTRY_ALIGN)
        if not self.frame_setups:
            return aligned
        unaligned = set()
        for pattern in self.frame_setups:
            end = t + len(pattern)
            while True:
                i = code.rfind(pattern, 0, end)
                if i < 0:
                    break
                unaligned.add(i - len(self.endbr) if code.startswith(self.endbr, i - len(self.endbr)) else i)
                end = i + len(pattern) - 1
        return sorted(set(aligned) | {i for i in unaligned if 0 <= i <= t}, reverse=True)

    def search_entries(self, code, lo, pc, exact=True, region_start=None):
        """Likely entries at or before pc in ``code`` (the bytes at lo..), nearest first."""
        t = pc - lo
        out = []
        for i in self._candidates(code, lo, t):
            if not self._looks_like_entry(code, i):
                continue
            if (i == 0 and lo == region_start) or (i > 0 and self._ends_code(code, i)):
                if self._reaches(code, i, t, exact):
                    out.append(lo + i)
                    if len(out) >= MAX_SEARCH_CANDIDATES:
                        break
        if region_start == lo and (not out or out[-1] != lo) and len(out) < MAX_SEARCH_CANDIDATES \
                and self._reaches(code, 0, t, exact):
            out.append(lo)                      # the mapping's first byte starts code
        return out


    def after_call(self, code):
        """Whether ``code`` (the CALL_LOOKBACK bytes before an address) ends with a call."""
        n = len(code)
        if n < self.call_lookback:
            return False
        md = self.isa.decoder()
        for k in range(2, n + 1):
            for _a, size, mn, _ops in md.disasm_lite(code[n - k:], 0, 1):
                if size == k and mn.rpartition(" ")[2] == "call":
                    return True
        return False


X86_64 = Scanner(_analysis.X86_64, _PROLOGUE_STARTS, _ENDBR64, CALL_LOOKBACK, (b"\x55\x48\x89\xe5",))
split_gap = X86_64.split_gap
search_entries = X86_64.search_entries
after_call = X86_64.after_call
