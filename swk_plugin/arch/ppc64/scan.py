"""Function entries in Power-64 code that has neither symbols nor CFI, and return addresses.

``split_gap``, ``search_entries`` and ``after_call`` for swk_plugin.analysis.bounds,
decoded from raw words (every 4-aligned word is an instruction).  An entry looks like
ELFv2's global entry (``addis r2,r12,…``) or a prologue's ``mflr r0`` / ``stdu r1``.

``scan_cfa``: a return address found on the stack lies in an lr save slot, 16 bytes
above the caller's r1, which is the callee's CFA (and holds the back chain).

``order``: the byte order of the code's words (ppc.py).  ELFv1's code has no global entry:
its entries are the prologues'.
"""
from bisect import bisect_right

from . import ppc
from .ppc import LITTLE

MAX_SEARCH_CANDIDATES = 8
ENTRY_ALIGN = 4
CALL_LOOKBACK = 4
LR_SAVE = 16


def split_gap(code, lo, order=LITTLE):
    """Function starts in the CFI-less code ``code`` found at ``lo``, sorted: the first
    non-padding word, every direct call target, and the code after a blr/b and its padding
    unless a branch between other code crosses that point."""
    words = ppc.words(code, order)
    hi = lo + 4 * len(words)
    strong, weak, edges = set(), set(), []
    first, after_stop = True, False
    for i, insn in enumerate(words):
        a = lo + 4 * i
        if ppc.is_padding(insn):
            continue
        if first:
            strong.add(a)
            first = False
        elif after_stop:
            weak.add(a)
        after_stop = False
        flow, tgt = ppc.branch(insn, a)
        if flow == ppc.CALL:
            if tgt is not None and lo <= tgt < hi:
                strong.add(tgt)
        elif flow in (ppc.JUMP, ppc.COND):
            if tgt is not None and lo <= tgt < hi:
                edges.append((a, tgt))
            after_stop = flow == ppc.JUMP
        elif flow == ppc.STOP:
            after_stop = True
    points = sorted(strong | weak)
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


def looks_like_entry(insn):
    return insn & 0xffff0000 == 0x3c4c0000 or insn == ppc.MFLR_R0 or ppc.stdu_r1(insn) is not None


def _ends_code(insn):
    flow, _t = ppc.branch(insn, 0)
    return ppc.is_padding(insn) or flow in (ppc.STOP, ppc.JUMP)


def search_entries(code, lo, pc, exact=True, region_start=None, order=LITTLE):
    """Likely entries at or before pc in ``code`` (the bytes at lo..), nearest first."""
    out = []
    t = (pc - lo) & -4
    for i in range(t, -1, -4):
        insn = ppc.word(code, i, order)
        if not looks_like_entry(insn):
            continue
        if (i == 0 and lo == region_start) or (i > 0 and _ends_code(ppc.word(code, i - 4, order))):
            out.append(lo + i)
            if len(out) >= MAX_SEARCH_CANDIDATES:
                break
    if region_start == lo and (not out or out[-1] != lo) and len(out) < MAX_SEARCH_CANDIDATES:
        out.append(lo)
    return out


def after_call(code, order=LITTLE):
    """Whether ``code`` (the CALL_LOOKBACK bytes before an address) ends with a call."""
    if len(code) < 4:
        return False
    return ppc.branch(ppc.word(code, len(code) - 4, order), 0)[0] == ppc.CALL


def scan_cfa(slot, read_pointer, ptr_size=8):
    """The callee's CFA when its return address was found at ``slot``: the caller's r1,
    16 below the slot (the lr save slot of the caller's frame)."""
    return slot - LR_SAVE
