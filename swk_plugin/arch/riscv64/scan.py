"""Function entries in RISC-V code that has neither symbols nor CFI, and return addresses.

``split_gap``, ``search_entries`` and ``after_call`` for swk_plugin.analysis.bounds.  Code
mixes 2- and 4-byte instructions: a gap is decoded linearly from its start (its first
instruction is a boundary); backwards from a pc every halfword may start one, so an entry
candidate is a halfword that decodes as a frame allocation (``addi sp,sp,-N``, 2 or 4
bytes) right after something that ends code (``ret``, ``j``, padding) read either way.

The stack scanner's CFA needs nothing of this architecture's own: GCC and clang save ra
at the top of a frame (CFA - 8), so a return address found at a slot has the callee's
CFA just above it, the interface's default.
"""
from bisect import bisect_right

from . import calls, rv

MAX_SEARCH_CANDIDATES = 8
ENTRY_ALIGN = 2
CALL_LOOKBACK = 4


def split_gap(code, lo):
    """Function starts in the CFI-less code ``code`` found at ``lo``, sorted: the first
    non-padding instruction, every direct call target, and the code after a ret/j/jr and its
    padding unless a branch between other code crosses that point."""
    strong, weak, edges = set(), set(), []
    first, after_stop = True, False
    hi = lo
    for a, ins in rv.insns(code, lo):
        hi = a + ins.size
        raw = int.from_bytes(code[a - lo:a - lo + ins.size], "little")
        if rv.is_padding(ins, raw):
            continue
        if first:
            strong.add(a)
            first = False
        elif after_stop:
            weak.add(a)
        after_stop = False
        flow, tgt = rv.flow(ins, a)
        if flow == rv.CALL:
            if tgt is not None and lo <= tgt < lo + len(code):
                strong.add(tgt)
        elif flow in (rv.JUMP, rv.COND):
            if tgt is not None and lo <= tgt < lo + len(code):
                edges.append((a, tgt))
            after_stop = flow == rv.JUMP
        elif flow in (rv.STOP, rv.IJUMP):
            after_stop = True
    points = sorted(p for p in strong | weak if p < hi)
    inner = set()
    for s, t in edges:
        if t in strong:
            continue
        a, b = (s, t) if s < t else (t, s)
        i = bisect_right(points, a)
        while i < len(points) and points[i] <= b:
            if points[i] in weak:
                inner.add(points[i])
            i += 1
    return [p for p in points if p not in inner]


def looks_like_entry(ins):
    """``addi sp,sp,-N`` (c.addi16sp, c.addi, addi): a frame allocated."""
    return ins is not None and ins.op == rv.ADDI and ins.rd == rv.SP and ins.rs1 == rv.SP and ins.imm < 0


def _ends_code(code, i):
    """Whether an instruction ending at ``code[i]`` (2 or 4 bytes) ends a run of code."""
    for size in (2, 4):
        if i >= size and rv.length(code, i - size) == size:
            ins = rv.decode(code, i - size)
            raw = int.from_bytes(code[i - size:i], "little")
            if rv.is_padding(ins, raw) or rv.flow(ins, 0)[0] in (rv.STOP, rv.JUMP, rv.IJUMP):
                return True
    return False


def search_entries(code, lo, pc, exact=True, region_start=None):
    """Likely entries at or before pc in ``code`` (the bytes at lo..), nearest first."""
    out = []
    t = (pc - lo) & -2
    for i in range(t, -1, -2):
        if not looks_like_entry(rv.decode(code, i)):
            continue
        if (i == 0 and lo == region_start) or (i > 0 and _ends_code(code, i)):
            out.append(lo + i)
            if len(out) >= MAX_SEARCH_CANDIDATES:
                break
    if region_start == lo and (not out or out[-1] != lo) and len(out) < MAX_SEARCH_CANDIDATES:
        out.append(lo)
    return out


def after_call(code):
    """Whether ``code`` (the CALL_LOOKBACK bytes before an address) ends with a call."""
    return bool(calls.calls_ending_at(code, len(code)))
