"""Python frames placed among native frames: each evaluator call's frames after its native frame.

A thread's native walk shows the evaluator (_PyEval_EvalFrameDefault) once per call into
it; the interpreter's records (cpython.PyStack) give the Python frames of each call, the
innermost call first.  Both lists are in the same order, so the k-th evaluator frame from
one end runs the k-th group from that end.  They are matched from the outermost end when
the native walk reached the bottom of the stack (an evaluator just entered, its first frame
not yet linked, is then the innermost extra native frame), else from the innermost end (a
walk cut short misses outer frames).  When the counts disagree nothing is dropped: the
groups left over are shown where they must lie — before every native frame (inner ones) or
after them all (outer ones) — marked as not placed.
"""
import collections

#: One line of a merged stack: a native level (``index``), or a Python frame (``frame``)
#: with ``placed`` False where no evaluator frame could be matched to its call.
Item = collections.namedtuple("Item", "kind index frame placed")
NATIVE, PYTHON = "native", "python"


def interleave(is_eval, groups, complete):
    """[Item] of a thread: ``is_eval[i]`` whether native level i is an evaluator frame;
    ``groups``: the Python frames of each evaluator call, innermost first (hidden frames
    count for their call, not shown); ``complete``: the native walk reached the bottom."""
    evals = [i for i, e in enumerate(is_eval) if e]
    n, m = len(evals), len(groups)
    pairs = min(n, m)
    if complete:        # outermost matched: evals[n-1-k] runs groups[m-1-k]
        after = {evals[n - 1 - k]: m - 1 - k for k in range(pairs)}
        inner, outer = range(0, m - pairs), range(m, m)
    else:               # innermost matched: evals[k] runs groups[k]
        after = {evals[k]: k for k in range(pairs)}
        inner, outer = range(0, 0), range(pairs, m)
    out = []

    def add(group, placed):
        out.extend(Item(PYTHON, None, f, placed) for f in groups[group] if not f.hidden)
    for g in inner:
        add(g, False)
    for i in range(len(is_eval)):
        out.append(Item(NATIVE, i, None, True))
        if i in after:
            add(after[i], True)
    for g in outer:
        add(g, False)
    return out
