"""Function entries in A64 code that has neither symbols nor CFI, and return addresses.

``split_gap`` (where the functions in a gap between known functions start),
``search_entries`` (aligned addresses before a pc in JIT code that look like an
entry) and ``after_call`` (does a call end at an address) for
swk_plugin.analysis.bounds, decoded from raw words: A64 is fixed-width, so
every 4-aligned word is an instruction boundary.

``scan_cfa`` is the stack scanner's question: a return address was found in a
stack slot, where is the callee's CFA?  On AArch64 the slot is normally the x30
half of a frame record {x29, x30} at the bottom of the callee's frame (AAPCS64;
GCC's layout), so the caller's stack pointer — the callee's CFA — is not just
above the slot: with the caller's own record at the bottom of its frame, it is
where the saved x29 next to the slot points.
"""
from bisect import bisect_right

from . import a64

MAX_SEARCH_CANDIDATES = 8
ENTRY_ALIGN = 4
CALL_LOOKBACK = 4
#: A frame larger than this between a record and its caller's is not believed.
MAX_FRAME = 1 << 20


def _words(code):
    return [a64.word(code, i) for i in range(0, len(code) // 4 * 4, 4)]


def split_gap(code, lo):
    """Function starts in the CFI-less code ``code`` found at ``lo``, sorted: the first
    non-padding word, every direct call target, and the code after a ret/b/br and its
    padding unless a branch between other code crosses that point."""
    words = _words(code)
    hi = lo + 4 * len(words)
    strong, weak, edges = set(), set(), []
    first = True
    after_stop = False
    for i, insn in enumerate(words):
        a = lo + 4 * i
        if a64.is_padding(insn):
            continue
        if first:
            strong.add(a)
            first = False
        elif after_stop:
            weak.add(a)
        after_stop = False
        flow, tgt = a64.branch(insn, a)
        if flow == a64.CALL:
            if tgt is not None and lo <= tgt < hi:
                strong.add(tgt)
        elif flow in (a64.JUMP, a64.COND):
            if tgt is not None and lo <= tgt < hi:
                edges.append((a, tgt))
            after_stop = flow == a64.JUMP
        elif flow in (a64.STOP, a64.IJUMP):
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
    """paciasp/pacibsp/bti c, ``stp x29, x30, [sp, #-N]!``, ``sub sp, sp, #N``, ``str x30, [sp, #-N]!``."""
    if insn in a64.PAC_SIGN or insn in a64.BTI:
        return True
    kind, a, b, c = a64.effect(insn)
    if kind == a64.STORE and not isinstance(c, tuple) and c < 0 and a64.LR in a:
        return True
    return kind == a64.ADJ_SP and a < 0


def _ends_code(insn):
    flow, _t = a64.branch(insn, 0)
    return a64.is_padding(insn) or flow in (a64.STOP, a64.JUMP, a64.IJUMP)


def search_entries(code, lo, pc, exact=True, region_start=None):
    """Likely entries at or before pc in ``code`` (the bytes at lo..), nearest first."""
    out = []
    t = (pc - lo) & -4
    for i in range(t, -1, -4):
        insn = a64.word(code, i)
        if not looks_like_entry(insn):
            continue
        if (i == 0 and lo == region_start) or (i > 0 and _ends_code(a64.word(code, i - 4))):
            out.append(lo + i)
            if len(out) >= MAX_SEARCH_CANDIDATES:
                break
    if region_start == lo and (not out or out[-1] != lo) and len(out) < MAX_SEARCH_CANDIDATES:
        out.append(lo)
    return out


def after_call(code):
    """Whether ``code`` (the CALL_LOOKBACK bytes before an address) ends with a call."""
    if len(code) < 4:
        return False
    return a64.branch(a64.word(code, len(code) - 4), 0)[0] == a64.CALL


def scan_cfa(slot, read_pointer, ptr_size=8):
    """The callee's CFA when its return address was found at ``slot`` and nothing else
    (CFI, analysis) says where: the x29 saved beside it when that points a little above
    (the caller's frame record at the bottom of the caller's frame: its sp), else the
    slot + one pointer."""
    try:
        fp = read_pointer(slot - ptr_size)
    except Exception:  # unreadable: the plain guess
        return slot + ptr_size
    if fp % 16 == 0 and slot + ptr_size <= fp <= slot + MAX_FRAME:
        return fp
    return slot + ptr_size
