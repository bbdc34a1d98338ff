"""Text (like GDB's bt) and JSON renderings of walks, shared by every front end."""
import json
import os

from .frame import FrameKind


def frame_info(frame, level):
    """Everything shown about a frame, as the JSON record of swk-bt -json."""
    lib = frame.library
    lookup = frame.walker.symbol_lookup if frame.walker is not None else None
    src = None
    if lookup is not None and hasattr(lookup, "source_line") and frame.kind != FrameKind.SIGNAL:
        src = lookup.source_line(frame)
    name = frame.name
    mapping = None
    if lib is None and frame.walker is not None:
        region = frame.walker.process_state.region_at(frame.lookup_pc)
        mapping = region.describe() if region is not None else None
    return {
        "level": level,
        "pc": frame.ra,
        "sp": frame.sp,
        "fp": frame.fp,
        "function": name,
        "offset": frame.symbol_offset if name is not None else None,
        "library": lib.path if lib is not None else None,
        "mapping": mapping,
        "file": src[0] if src else None,
        "line": src[1] if src else None,
        "stepper": frame.stepper.name if frame.stepper is not None else None,
        "trust": frame.trust,
        "kind": frame.kind,
    }


def _pc_shown(frame, info):
    """GDB omits the pc of a frame that is at its real pc (the top frame, or one a signal
    interrupted) when that pc is exactly the start of a source line."""
    if not (frame.is_top or frame.non_call) or not info["file"] or frame.walker is None:
        return True
    lookup = frame.walker.symbol_lookup
    return not (hasattr(lookup, "at_line_start") and lookup.at_line_start(frame))


def select_levels(n_frames, limit):
    """Levels to show for GDB's ``bt N`` (innermost N) / ``bt -N`` (outermost N)."""
    if limit is None:
        return range(n_frames)
    if limit >= 0:
        return range(min(limit, n_frames))
    return range(max(0, n_frames + limit), n_frames)


def walk_json(walk, thread_num, tid, levels=None):
    levels = range(len(walk)) if levels is None else levels
    cache = walk.__dict__.setdefault("_text", {})
    key = ("json", thread_num, tid, levels.start, levels.stop)
    if key not in cache:
        cache.clear()
        cache[key] = _walk_json(walk, thread_num, tid, levels)
    return cache[key]


def _walk_json(walk, thread_num, tid, levels):
    return json.dumps({
        "thread": thread_num,
        "tid": tid,
        "frames": [frame_info(walk[i], i) for i in levels],
        "stop_reason": walk.stop_reason,
    })


def frame_text(info, aout_path=None, verbose=False, width=16, show_pc=True):
    """One line as GDB's bt prints it."""
    head = f"#{info['level']}".ljust(3) + " "
    if info["kind"] == FrameKind.SIGNAL:
        line = f"{head}<signal handler called>"
    else:
        name = info["function"] or "??"
        line = f"{head}0x{info['pc']:0{width}x} in {name} ()" if show_pc else f"{head}{name} ()"
        if info["file"]:
            line += f" at {info['file']}:{info['line']}"
        elif info["library"] and info["library"] != aout_path:
            line += f" from {info['library']}"
        elif info["mapping"]:
            line += f" from {info['mapping']}"
    if verbose:
        line += (f"  [{info['trust']}: {info['stepper'] or 'registers'}] "
                 f"sp=0x{info['sp']:x} fp=0x{info['fp']:x}")
    return line


def visible_frames(walk, past_main=True):
    """How many frames GDB would show: with ``past_main`` off, none below main."""
    if not past_main:
        for i, frame in enumerate(walk):
            if frame.name == "main":
                return i + 1
    return len(walk)


def walk_text(walk, levels=None, verbose=False, aout_path=None, visible=None):
    """Lines of text for one walk, GDB style.  A walk that did not reach the
    bottom ends with "Backtrace stopped: <reason>"; -v states every reason.
    Kept with the walk: the same walk printed again costs nothing."""
    visible = len(walk) if visible is None else visible
    levels = range(visible) if levels is None else levels
    cache = walk.__dict__.setdefault("_text", {})
    key = ("text", levels.start, levels.stop, verbose, aout_path, visible)
    if key not in cache:
        cache.clear()
        cache[key] = _walk_text(walk, levels, verbose, aout_path, visible)
    return cache[key]


def _walk_text(walk, levels, verbose, aout_path, visible):
    lines = []
    for i in levels:
        info = frame_info(walk[i], i)
        lines.append(frame_text(info, aout_path, verbose, show_pc=_pc_shown(walk[i], info)))
    if len(levels) and (levels[-1] < visible - 1 or walk.limited):
        lines.append("(More stack frames follow...)")
    elif not walk.complete:
        lines.append(f"Backtrace stopped: {walk.stop_reason}")
    elif verbose:
        lines.append(f"Walk ended: {walk.stop_reason}")
    return lines


def same_name(a, b):
    """Whether two function names denote the same function (parameter lists aside)."""
    from .elf.demangle import strip_params
    if a is None or b is None:
        return a == b
    return strip_params(a) == strip_params(b)


def short_lib(path):
    return os.path.basename(path) if path else ""
