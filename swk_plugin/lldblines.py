"""swk-bt's lines in LLDB's own format (its ``frame-format``), for the LLDB front end.

A frame LLDB's own unwinder found too (the same level, pc, sp and kind) is LLDB's own line
(``native_line``: the back-end asks LLDB to format its frame); a frame only swk found is the
same format filled in by swk (lldbformat.render with the resolver below): the pc, module,
function and arguments (their values as LLDB prints them: locals.lldbvalue), the source line and
its column (the row LLDB's reading of the line program gives: dwarf/linerows.py; an inlined
call's own DW_AT_call_column for the level it was called from), ``[inlined]``,
``[artificial]`` for a tail call, ``+ offset`` where there is no line information.
"""
import os

from .display import shown_frames, variables
from .elf.demangle import strip_params
from .format import frame_info, pc_width, register_lines, select_levels
from .frame import FrameKind
from .jit.symbols import named_only_by_swk
from .lldbformat import render
from .options import REGS
from .locals.lldbvalue import format_lldb_value
from .stream import DEFAULT_COLLAPSE, Collapser, Levels

#: the thread's selected frame is marked as LLDB's bt marks it
SELECTED, OTHER = "  * ", "    "


def lldb_walk_lines(walk, opts, nodes, native_line=None, selected=0):
    """The frame lines of one walk: ``nodes`` the parsed frame-format; ``native_line(level,
    shown, pc)``: LLDB's own line for that frame (at the pc LLDB gives it, lldb_pc), or None
    where swk's frame is not LLDB's."""
    shown = shown_frames(walk)
    levels = select_levels(len(shown), opts.limit)
    width = pc_width(walk)
    out = []
    for i in levels:
        out.extend(lldb_level_lines(walk, shown, i, i, opts, nodes, width, native_line, selected))
    if (levels and levels[-1] < len(shown) - 1) or walk.limited:
        pass                                 # LLDB's bt N says nothing of the frames not asked for
    else:
        out.extend(_stopped(walk, opts))
    return out


def _stopped(walk, opts):
    if walk.complete:
        return []
    why = walk.stop_reason if opts.verbose or not walk.gdb_stop_reason else walk.gdb_stop_reason
    return [f"    Backtrace stopped: {why}"]


def lldb_level_lines(walk, shown, i, level, opts, nodes, width, native_line=None, selected=0):
    """The lines of level ``i`` of ``shown`` (numbered ``level``): its frame line, and with
    -full its locals."""
    sf = shown[i]
    pc = lldb_pc(shown, i)
    # LLDB's own line, except for JIT code only swk names (its perf map: LLDB reads none)
    line = native_line(level, sf, pc) if native_line is not None and not named_only_by_swk(sf.frame) else None
    if line is None:
        inner = shown[i - 1] if i and shown[i - 1].frame is sf.frame and shown[i - 1].kind == "inline" else None
        line = render(nodes, _resolver(walk, sf, level, width, pc, inner))
    line = line.rstrip("\n")
    if opts.verbose:
        info = frame_info(sf.frame, level, sf)
        how = info["stepper"] or ("call sites" if info["trust"] == "tailcall" else "registers")
        past = "".join(f"; past {why}" for why in info["overruled"])
        line += f"  [{info['trust']}: {how}{past}] sp=0x{info['sp']:x} fp=0x{info['fp']:x}"
    out = [(SELECTED if level == selected else OTHER) + line]
    if opts.verbose == REGS and sf.kind not in ("inline", FrameKind.TAILCALL):
        out.extend(register_lines(walk, sf.frame))
    if opts.full and sf.scope is not None:
        found = variables(sf, walk)
        for v in (found[1] if found else ()):
            out.append(f"        {v['name']} = {v['value']}")
    return out


def lldb_stream_lines(head, rest, opts, nodes, top_inlines, emit, collapse=DEFAULT_COLLAPSE, selected=0):
    """A deep walk in LLDB's frame-format, printed as it is found (stream.py), every line
    swk's own (LLDB is not asked to unwind so deep a stack: 262,000 frames take it seconds
    and memory of its own); a run of more than ``collapse`` frames alike is one line, as
    swk-bt's GDB lines collapse it."""
    levels = Levels(head, rest, opts, True, top_inlines)
    width = []

    def text(lines, k, label):
        if not width:
            width.append(pc_width(lines.walk))
        return lldb_level_lines(lines.walk, lines.shown, k, label, opts, nodes, width[0], None, selected)

    def about(sf, skipped):
        where = f" at {os.path.basename(sf.file)}:{sf.line}" if sf.file else ""
        return f"{OTHER}[\u2026 {skipped} more frames of {sf.name or '??'}{where} \u2026]"
    out = Collapser(collapse, emit, text, about)
    for lines, k, label in levels:
        out.level(lines, k, label)
    last = levels.last
    out.end([] if levels.more or last.walk.limited else _stopped(last.walk, opts))


def lldb_pc(shown, i):
    """The pc LLDB gives level ``i``: the frame's own, except for a frame holding an inlined call
    at its pc, which LLDB places at the start of that inlined call's range (where the call is)."""
    sf = shown[i]
    frame = sf.frame
    inner = shown[i - 1] if i else None
    lib = frame.library
    if inner is None or inner.frame is not frame or inner.kind != "inline" or inner.scope is None or lib is None:
        return frame.ra
    addr = frame.lookup_pc - lib.base
    for lo, hi in getattr(inner.scope, "ranges", None) or ():
        if lo <= addr < hi:
            return lo + lib.base
    return frame.ra


def _code_at(walker, addr):
    """What LLDB prints for a pointer to code: "module`function at file:line:column" (its line
    entry at that address: dwarf/linerows.py), "module`function" without one, or None."""
    lib = walker.process_state.library_state.get_library_at_addr(addr)
    hit = walker.symbol_lookup.lookup_at_addr(addr) if lib is not None else None
    if hit is None or not hit[0]:
        return None
    name = f"{os.path.basename(lib.name)}`{strip_params(hit[0])}"
    place = walker.symbol_lookup.code_line(lib, addr) if hasattr(walker.symbol_lookup, "code_line") else None
    if place is None:
        return name
    file, line, column = place
    return f"{name} at {os.path.basename(file)}:{line}" + (f":{column}" if column else "")


def _resolver(walk, sf, level, width, pc, inner=None):
    """``inner``: the inlined call's level inside this one (the same frame), whose call site
    is this level's line and column."""
    frame = sf.frame
    lib = frame.library

    ptr_size = frame.walker.process_state.arch.ptr_size if frame.walker is not None else 8

    def lldb_text(vv, read_memory):
        return format_lldb_value(vv, read_memory, ptr_size, code_at)

    def code_at(addr):
        return _code_at(frame.walker, addr) if frame.walker is not None else None

    def args_text():
        found = variables(sf, walk, args_only=True, value_text=lldb_text) if sf.scope is not None else None
        if not found or not found[0]:
            return None                      # LLDB: the name alone, no "()"
        return ", ".join(f"{a['name']}={a['value']}" for a in found[0])

    def resolve(name):
        if name.startswith("ansi."):
            return ""                        # no colours: LLDB's own are off where its output is read
        if name == "frame.index":
            return str(level)
        if name == "frame.pc":
            return f"0x{pc:0{width}x}"
        if name == "module.file.basename":
            return os.path.basename(lib.name) if lib is not None and lib.name else None
        if name in ("function.name-with-args", "function.name", "function.name-without-args"):
            if sf.name is None:
                return None
            if name != "function.name-with-args" or sf.scope is None:
                return sf.name
            args = args_text()
            return sf.name if args is None else f"{sf.name}({args})"
        if name == "frame.no-debug":
            return "" if not sf.file else None      # no line information (LLDB's HasDebugInformation)
        if name == "function.pc-offset":
            off = frame.symbol_offset         # from the pc looked up: a caller's pc - 1, as LLDB's
            if off is None or sf.kind == "inline":
                return None
            return f" + {off}" if off else None
        if name == "line.file.basename":
            return os.path.basename(sf.file) if sf.file else None
        if name == "line.number":
            return str(sf.line) if sf.file else None
        if name == "line.column":
            if not sf.file:
                return None
            if inner is not None:
                col = getattr(inner.scope, "call_column", None)
            else:
                lookup = frame.walker.symbol_lookup if frame.walker is not None else None
                col = lookup.source_column(frame, sf.line) if hasattr(lookup, "source_column") else None
            return str(col) if col else None
        if name == "function.is-inlined":
            return "" if sf.kind == "inline" else None
        if name == "frame.is-artificial":
            return "" if sf.kind == FrameKind.TAILCALL else None
        if name == "frame.kind":
            return ""
        return None                          # function.is-optimized, ...: not known here

    return resolve


__all__ = ["lldb_walk_lines", "lldb_level_lines", "lldb_stream_lines", "SELECTED", "OTHER"]
