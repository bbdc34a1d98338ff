"""Where functions start in code with neither symbols nor CFI: one engine for every
instruction set whose scanner is a decoder (arch/<name>/scan.py).

Two questions, asked by swk_plugin.analysis.bounds:

* ``split_points``: a gap between known functions, decoded linearly from its start — its
  first non-padding instruction starts a function, so does every direct call's target in
  the gap, and so may the code after an instruction that ends a run (a return, a jump, a
  trap) and its padding, unless a branch between other code crosses that point (then it is
  the same function's, after a jump over a block).
* ``search_back``: a pc in code whose start is unknown (JIT code, a gap too big to decode) —
  the candidate entries at or before it, nearest first: instructions that look like a
  function's first (the decoder says which) right after one that ends a run, and the
  region's first byte.

A decoder hands ``split_points`` its instructions as (address, size, flow, target, padding),
flow being one of arch/dataflow.py's (FALL, JUMP, COND, CALL, STOP, IJUMP), as its stack-height
analysis does; x86's scanner (arch/x86_64/scan.py) keeps its own, which also checks that
linear decoding from a candidate reaches the pc.
"""
from bisect import bisect_right

from .dataflow import CALL, COND, IJUMP, JUMP, STOP

#: Candidates search_back gives at most.
MAX_SEARCH_CANDIDATES = 8


def split_points(insns, lo, hi, at_boundaries=False):
    """Function starts, sorted, in the code [lo, hi) given as ``insns`` (an iterable of
    (address, size, flow, target, padding), linearly from lo).  ``at_boundaries``: a call's
    target counts only where linear decoding has an instruction (variable-length code, where
    a target between two decoded instructions says the decoding went astray there)."""
    strong, weak, edges = set(), set(), []
    boundaries = set()
    first, after_stop = True, False
    end = lo
    for a, size, flow, tgt, padding in insns:
        end = a + size
        boundaries.add(a)
        if padding:
            continue
        if first:
            strong.add(a)
            first = False
        elif after_stop:
            weak.add(a)
        after_stop = False
        if flow == CALL:
            if tgt is not None and lo <= tgt < hi:
                strong.add(tgt)
        elif flow == JUMP or flow == COND:
            if tgt is not None and lo <= tgt < hi:
                edges.append((a, tgt))
            after_stop = flow == JUMP
        elif flow == STOP or flow == IJUMP:
            after_stop = True
    if at_boundaries:
        strong &= boundaries
    points = sorted(p for p in strong | weak if p < end)
    inner = set()
    for s, t in edges:
        if t in strong:
            continue                        # a tail call into a known entry
        a, b = (s, t) if s < t else (t, s)
        i = bisect_right(points, a)
        while i < len(points) and points[i] <= b:
            if points[i] in weak:
                inner.add(points[i])
            i += 1
    return [p for p in points if p not in inner]


def search_back(lo, t, step, looks_like_entry, ends_code, region_start, limit=MAX_SEARCH_CANDIDATES):
    """Entries at or before offset ``t`` of the code at ``lo``, nearest first: offsets (every
    ``step`` bytes) where ``looks_like_entry(i)`` and either the code ending at i ends a run
    (``ends_code(i)``) or i is the region's first byte; the region's first byte last in any
    case (``region_start``: where the mapping holding the code starts, or None)."""
    out = []
    for i in range(t - t % step, -1, -step):
        if not looks_like_entry(i):
            continue
        if (i == 0 and lo == region_start) or (i > 0 and ends_code(i)):
            out.append(lo + i)
            if len(out) >= limit:
                break
    if region_start == lo and (not out or out[-1] != lo) and len(out) < limit:
        out.append(lo)
    return out
