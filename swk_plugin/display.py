"""What a backtrace shows: physical frames, and the inlined calls DWARF places
inside them, as GDB shows them (each inline call its own level, innermost
first, all at the physical frame's pc), with their arguments and locals.

Kept apart from the walk: the Walker finds physical frames (the spec's
Frames); this layer only reads debug information about them.
"""
from .frame import FrameKind

INLINE = "inline"


class ShownFrame:
    """One line of a backtrace: a physical frame, or one inlined call in it."""
    __slots__ = ("frame", "index", "scope", "kind", "name", "file", "line")

    def __init__(self, frame, index, scope, kind, name, file, line):
        self.frame, self.index, self.scope, self.kind = frame, index, scope, kind
        self.name, self.file, self.line = name, file, line


def _engine():
    try:
        from . import locals as engine
        return engine
    except ImportError:
        return None


def frame_scopes(frame):
    """The DWARF scopes at a physical frame's pc, innermost first (inline calls,
    then the function), or [] without DWARF."""
    engine = _engine()
    lib = frame.library
    if engine is None or lib is None or lib.module is None or frame.kind == FrameKind.SIGNAL:
        return []
    try:
        return engine.scopes_at(lib.module, frame.lookup_pc - lib.base)
    except Exception:
        return []


def shown_frames(walk, visible=None):
    """ShownFrames for the first ``visible`` physical frames of a walk (kept with the walk)."""
    visible = len(walk) if visible is None else visible
    cache = walk.__dict__.setdefault("_shown", {})
    if visible in cache:
        return cache[visible]
    lookup = walk[0].walker.symbol_lookup if walk and walk[0].walker is not None else None
    out = []
    for i in range(visible):
        frame = walk[i]
        src = None
        if lookup is not None and hasattr(lookup, "source_line") and frame.kind != FrameKind.SIGNAL:
            src = lookup.source_line(frame)
        file, line = src if src else (None, None)
        scopes = frame_scopes(frame)
        for scope in scopes[:-1]:          # inlined calls, innermost first
            out.append(ShownFrame(frame, i, scope, INLINE, scope.name, file, line))
            file, line = scope.call_file or file, scope.call_line or line
        out.append(ShownFrame(frame, i, scopes[-1] if scopes else None, frame.kind, frame.name, file, line))
    cache.clear()
    cache[visible] = out
    return out


def variables(shown, walk):
    """(args, locals) of a shown frame as [{"name", "type", "value"}], values as GDB prints them;
    None when there is no DWARF for it."""
    engine = _engine()
    if engine is None or shown.scope is None:
        return None
    frame = shown.frame
    lib = frame.library
    ps = frame.walker.process_state
    addr = frame.lookup_pc - lib.base
    try:
        args, locals_ = engine.frame_variables(shown.scope, addr)
    except Exception:
        return None

    def render(var):
        try:
            vv = engine.read_variable(var, addr=addr, regs=frame.regs, cfa=frame.cfa,
                                      read_mem=ps.read_memory, bias=lib.base, ptr_size=ps.arch.ptr_size)
            value = engine.format_value(vv, ps.read_memory)
        except Exception as exc:
            value = f"<error: {exc}>"
        try:
            tname = engine.type_name(var.type)
        except Exception:
            tname = None
        return {"name": var.name, "type": tname, "value": value}
    return [render(v) for v in args], [render(v) for v in locals_]
