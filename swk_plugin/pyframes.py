"""swk-bt -py, swk bt --py: Python frames among the native ones, in text and JSON (issue 28).

A walk's shown levels (display.shown_frames) and the thread's Python frames (interp.cpython)
are merged by interp.merge: each _PyEval_EvalFrameDefault level is followed by the Python
frames its call was running.  Every line is numbered in that one sequence, as GDB numbers
frames, so a Python frame is ``#7  [Python] handle (server.py:42)`` between native ones;
a frame that could not be placed says so (``[Python, not placed]``), and is never left out.
Native lines are format.level_lines', unchanged.  ``-py only``: the Python frames alone,
numbered among themselves (a traceback's order, innermost first).
"""
import json

from .display import INLINE, shown_frames, variables
from .format import (frame_info, level_lines, register_provenance, select_levels, text_context, text_style,
                     trailer_lines, visible_frames)
from .frame import FrameKind
from .interp.cpython import is_eval_function, python_stack
from .interp.merge import NATIVE, interleave
from .interp.pyvalues import frame_locals
from .options import PY_ONLY
from .symlookup import is_main_frame

#: JSON's frame kind for a Python frame.
PYTHON_KIND = "python"


def merged(walk, visible=None):
    """(shown levels, [merge.Item], PyStack or None) of ``walk``'s first ``visible`` physical frames."""
    shown = shown_frames(walk, visible)
    cache = walk.derived.setdefault("python", {})
    if visible in cache:
        return cache[visible]
    ps = walk[0].walker.process_state if walk and walk[0].walker is not None else None
    stack = python_stack(ps, walk.thread) if ps is not None else None
    is_eval = [sf.kind not in (INLINE, FrameKind.TAILCALL) and is_eval_function(sf.frame.name) for sf in shown]
    items = interleave(is_eval, stack.groups if stack is not None else [], walk.complete)
    cache[visible] = (shown, items, stack)
    return cache[visible]


def python_line(frame, label, placed=True, verbose=False):
    """``#7  [Python] handle (server.py:42)``."""
    head = f"#{label}".ljust(3) + " "
    mark = "[Python]" if placed else "[Python, not placed]"
    where = f"{frame.filename or '??'}:{frame.line if frame.line is not None else '?'}"
    line = f"{head}{mark} {frame.name or '??'} ({where})"
    if verbose:
        line += f"  [python: frame 0x{frame.address:x}, code 0x{frame.code:x}]"
    return line


def python_json(frame, label, placed=True):
    """A Python frame's JSON record: the native records' keys, those without a meaning here null."""
    return {"level": label, "pc": None, "sp": None, "fp": None, "function": frame.name, "offset": None,
            "library": None, "mapping": None, "file": frame.filename, "line": frame.line, "stepper": None,
            "trust": PYTHON_KIND, "overruled": [], "kind": PYTHON_KIND, "placed": placed,
            "frame": frame.address, "code": frame.code}


def render_py(walk, opts, thread_num, tid, aout_path=None, past_main=True):
    """format.render's lines for one walk, with its thread's Python frames merged in."""
    visible = visible_frames(walk, past_main)
    shown, items, stack = merged(walk, visible)
    cut = len(shown) if visible and not past_main and is_main_frame(walk[visible - 1]) else None
    only = opts.py == PY_ONLY
    if only:            # the Python frames alone, numbered among themselves as a traceback is
        items = [item for item in items if item.kind != NATIVE]
    levels = select_levels(len(items), opts.limit)        # N: lines, Python ones included
    chosen = [(k, items[k]) for k in levels]
    if opts.json:
        return [_json(walk, shown, chosen, stack, thread_num, tid, opts)]
    ctx = text_context(walk, opts.verbose, aout_path, opts.full, text_style(opts))
    lines = []
    for label, item in chosen:
        if item.kind == NATIVE:
            lines.extend(level_lines(walk, shown, item.index, label, ctx))
        else:
            lines.append(python_line(item.frame, label, item.placed, opts.verbose))
            if opts.full:               # as GDB's bt full prints a frame's locals
                found = frame_locals(walk[0].walker.process_state, stack.runtime, item.frame)
                lines.extend([f"        {v.name} = {v.value}" for v in found] or ["No locals."])
    more = bool(len(levels)) and levels[-1] < len(items) - 1
    if more or not only:
        lines.extend(trailer_lines(walk, more, cut is not None, opts.verbose))
    if stack is not None and stack.error:
        lines.append(f"Python frames stopped: {stack.error}")
    return lines


def _json(walk, shown, chosen, stack, thread_num, tid, opts):
    frames = []
    pos = {id(f): k for k, f in enumerate(walk)} if opts.verbose else None
    for label, item in chosen:
        if item.kind != NATIVE:
            info = python_json(item.frame, label, item.placed)
            if opts.full:
                ps = walk[0].walker.process_state
                info["locals"] = [v.as_json() for v in frame_locals(ps, stack.runtime, item.frame)]
            frames.append(info)
            continue
        sf = shown[item.index]
        info = frame_info(sf.frame, label, sf)
        if opts.full:
            found = variables(sf, walk)
            info["args"], info["locals"] = found if found is not None else ([], [])
        if opts.verbose and sf.kind not in (INLINE, FrameKind.TAILCALL):
            prov = register_provenance(walk, pos[id(sf.frame)])
            if prov is not None:
                info["registers"] = prov
        frames.append(info)
    out = {"thread": thread_num, "tid": tid, "frames": frames, "stop_reason": walk.stop_reason}
    if stack is not None:
        rt = stack.runtime
        out["python"] = {"version": rt.version_text, "thread_state": stack.tstate.address if stack.tstate else None,
                         "debug_offsets": rt.debug_offsets, "error": stack.error}
    return json.dumps(out)
