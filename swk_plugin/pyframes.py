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
import os

from .display import INLINE, shown_frames, variables
from .format import (frame_info, level_lines, pc_width, register_provenance, select_levels, text_context,
                     text_style, trailer_lines, visible_frames)
from .frame import FrameKind
from .interp.cpython import is_eval_function, python_stack
from .interp.gil import TEXT as GIL_TEXT, gil_state
from .interp.merge import NATIVE, interleave
from .interp.pyvalues import frame_locals
from .lldbformat import render as render_format
from .lldblines import OTHER, SELECTED, lldb_level_lines
from .merge import frame_label
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


def thread_gil_state(walk):
    """What ``walk``'s thread is doing about the GIL (interp.gil: HOLDS, WAITING, ...), or None
    (no Python thread state, or a GIL swk cannot read); kept with the walk."""
    if "gil" not in walk.derived:
        shown, _items, stack = merged(walk)
        ps = walk[0].walker.process_state if walk and walk[0].walker is not None else None
        walk.derived["gil"] = gil_state(ps, stack, [sf.name for sf in shown]) if ps is not None else None
    return walk.derived["gil"]


def thread_tag(walk):
    """What a -py thread header adds: `` [Python: holds the GIL]``, or nothing."""
    state = thread_gil_state(walk)
    return f" [Python: {GIL_TEXT[state]}]" if state is not None else ""


def python_line(frame, label, placed=True, verbose=False):
    """``#7  [Python] handle (server.py:42)``."""
    line = f"#{label}".ljust(3) + " " + python_label(frame, placed)
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
                         "debug_offsets": rt.debug_offsets, "error": stack.error, "gil": thread_gil_state(walk),
                         "runtime": rt.address, "scanned": rt.scanned,
                         "layout": list(rt.layout_sources)}
    return json.dumps(out)


def python_label(frame, placed=True):
    """What names a Python frame where a debugger shows it as a function: ``[Python] NAME
    (FILE:LINE)`` (LLDB's own bt through swk's frame provider, swk-bt -py in LLDB's format)."""
    mark = "[Python]" if placed else "[Python, not placed]"
    where = f"{frame.filename or '??'}:{frame.line if frame.line is not None else '?'}"
    return f"{mark} {frame.name or '??'} ({where})"


def lldb_py_lines(walk, opts, nodes, native_line=None, selected=0):
    """swk-bt -py's lines in LLDB's frame-format (``nodes``): native frames as lldblines
    renders them (LLDB's own line where its unwinder found the frame), each Python frame as
    LLDB's own bt shows the frame swk's provider gives it (pc 0, no module, its name the
    label: ``frame #9: 0x0000000000000000 [Python] handle (/srv/server.py:42)``)."""
    shown, items, stack = merged(walk)
    if opts.py == PY_ONLY:
        items = [item for item in items if item.kind != NATIVE]
    levels = select_levels(len(items), opts.limit)
    width = pc_width(walk)
    out = []
    for label in levels:
        item = items[label]
        if item.kind == NATIVE:
            out.extend(lldb_level_lines(walk, shown, item.index, label, opts, nodes, width, native_line, selected))
            continue
        name = python_label(item.frame, item.placed)
        fields = {"frame.index": str(label), "frame.pc": f"0x{0:0{width}x}", "function.name-with-args": name,
                  "function.name": name, "function.name-without-args": name, "frame.kind": ""}
        line = render_format(nodes, lambda var: "" if var.startswith("ansi.") else fields.get(var)).rstrip("\n")
        out.append((SELECTED if label == selected else OTHER) + line)
        if opts.full:
            found = frame_locals(walk[0].walker.process_state, stack.runtime, item.frame)
            out.extend(f"        {v.name} = {v.value}" for v in found)
    if not (levels and levels[-1] < len(items) - 1) and not walk.complete and opts.py != PY_ONLY:
        why = walk.stop_reason if opts.verbose or not walk.gdb_stop_reason else walk.gdb_stop_reason
        out.append(f"    Backtrace stopped: {why}")
    if stack is not None and stack.error:
        out.append(f"    Python frames stopped: {stack.error}")
    return out


# --- -unique, -merge, -compare ---------------------------------------------------------------

def python_key(walk, past_main=True):
    """What -unique tells threads apart by beyond their native frames: each Python frame (its
    function, file, line, whether placed) and the native level it follows."""
    _shown, items, _stack = merged(walk, visible_frames(walk, past_main))
    return tuple(item.index if item.kind == NATIVE else (item.frame.name, item.frame.filename, item.frame.line,
                                                         item.placed) for item in items)


def python_labels(walk, opts, past_main=True, by="function"):
    """merge.stack_labels' names with the Python frames merged in, innermost first (-py only:
    them alone): a Python frame is ``[Python] NAME (FILE's base name)`` (by line: ``[Python]
    NAME`` at its file and line), as swk profile --py names it."""
    shown, items, _stack = merged(walk, visible_frames(walk, past_main))
    out = []
    for item in items:
        if item.kind == NATIVE:
            if opts.py == PY_ONLY:
                continue
            out.append(frame_label(shown[item.index], by))
            continue
        f = item.frame
        if by == "line" and f.filename and f.line:
            out.append((f"[Python] {f.name or '??'}", f.filename, f.line))
        else:
            out.append((f"[Python] {f.name or '??'} ({os.path.basename(f.filename or '??')})", None, None))
    return out


def python_compare_lines(walk, rows, visible):
    """frontend.compare_lines' ``rows`` (a heading, a row per physical frame, a summary) with
    each evaluator frame's Python frames after its row, in swk's column alone: the debugger's
    unwinder has no Python frames to hold them against, so they count as no difference."""
    shown, items, _stack = merged(walk, visible)
    position = {id(f): k for k, f in enumerate(walk)}
    after, at = {}, -1
    for item in items:
        if item.kind == NATIVE:
            at = position.get(id(shown[item.index].frame), at)
        else:
            after.setdefault(at, []).append(item)

    def py_rows(k):
        return [f"  {python_label(item.frame, item.placed):<60} | (swk's alone)" for item in after.get(k, ())]
    out = rows[:1] + py_rows(-1)
    for k, row in enumerate(rows[1:-1]):
        out.append(row)
        out.extend(py_rows(k))
    return out + rows[-1:]
