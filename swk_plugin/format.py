"""Text (like GDB's bt) and JSON renderings of walks, shared by every front end."""
import os
from collections import namedtuple

from .display import ShownFrame, line_args_text, shown_frames, variables
from .elf.demangle import strip_params
from .frame import ADDRESS, FrameKind
from .jit.symbols import JIT_KIND, JitSymbol
from .locals.format import DEFAULT_FORMAT
from .locals.frames import has_symtab
from .options import REGS, SOURCE_INFO
from .sourcelines import SourceLister
from .symlookup import is_main_frame
from .unwind.provenance import register_origins, rule_summary


def frame_info(frame, level, shown=None):
    """Everything shown about a frame (or one inlined call in it: ``shown``), as the
    JSON record of swk-bt -json."""
    lib = frame.library
    if shown is None:
        lookup = frame.walker.symbol_lookup if frame.walker is not None else None
        src = lookup.source_line(frame) if (lookup is not None and hasattr(lookup, "source_line")
                                            and frame.kind != FrameKind.SIGNAL) else None
        shown = ShownFrame(frame, level, None, frame.kind, frame.name, *(src or (None, None)))
    name = shown.name
    mapping = None
    if lib is None and frame.walker is not None:
        region = frame.walker.process_state.region_at(frame.lookup_pc)
        mapping = region.describe() if region is not None else None
    info = {
        "level": level,
        "pc": frame.ra,
        "sp": frame.sp,
        "fp": frame.fp,
        "function": name,
        "offset": frame.symbol_offset if name is not None and shown.kind != "inline" else None,
        "library": lib.name if lib is not None else None,
        "mapping": mapping,
        "file": shown.file,
        "line": shown.line,
        "stepper": frame.stepper.name if frame.stepper is not None else None,
        "trust": frame.trust,
        "overruled": list(frame.overruled),
        "kind": shown.kind,
    }
    obj = frame.object if shown.kind == FrameKind.NORMAL else None
    if isinstance(obj, JitSymbol):      # named by a JIT's own account (swk_plugin/jit)
        info["kind"], info["name_source"] = JIT_KIND, obj.source
    return info


def _pc_shown(shown, info, first_of_frame):
    """Whether GDB prints the pc: not for the outer levels of a frame with inlined
    calls (they share the innermost's pc), nor for a frame at its real pc (the top
    frame, or one a signal interrupted) exactly at the start of a source line."""
    frame = shown.frame
    if not first_of_frame:
        return False
    if not (frame.is_top or frame.non_call) or not info["file"] or frame.walker is None:
        return True
    lookup = frame.walker.symbol_lookup
    return not (hasattr(lookup, "at_line_start") and lookup.at_line_start(frame))


def _args_text(values, entry_values="default", frame_arguments="scalars"):
    """GDB's argument list in a frame line (its print_frame_args and read_frame_arg): which
    values by `print frame-arguments` (none: ``x=...``; presence: ``(...)``), entry values
    by `print entry-values` — by default x=x@entry=V when they are equal, else x=V, x@entry=E."""
    if not values:
        return "()"
    if frame_arguments == "presence":
        return "(...)"
    if frame_arguments == "none":
        return "(" + ", ".join(f"{v['name']}=..." for v in values) + ")"
    parts = []
    for v in values:
        parts.extend(_arg_parts(v, entry_values))
    return "(" + ", ".join(parts) + ")"


_OPTIMIZED_OUT = "<optimized out>"


def _arg_parts(v, mode):
    """One argument as GDB prints it under ``print entry-values MODE``: "entry" is the value at
    entry when known, "entry_same" whether it equals the value."""
    name, val = v["name"], v["value"]
    entry = v.get("entry")
    gone = v.get("lost", val == _OPTIMIZED_OUT)
    unknown = v.get("unknown", _OPTIMIZED_OUT)     # "..." for an aggregate in a summary
    if mode == "no":
        return [f"{name}={val}"]
    if mode == "only":
        return [f"{name}@entry={unknown if entry is None else entry}"]
    if mode == "preferred":
        if entry is not None or gone:
            return [f"{name}@entry={unknown if entry is None else entry}"]
        return [f"{name}={val}"]
    if mode == "if-needed":
        return [f"{name}@entry={entry}"] if gone and entry is not None else [f"{name}={val}"]
    if mode == "both":
        return [f"{name}={val}", f"{name}@entry={unknown if entry is None else entry}"]
    if entry is None:                              # default, compact
        return [f"{name}={val}"]
    if v.get("entry_same"):
        return [f"{name}={name}@entry={val}"]
    if mode == "compact" and gone:
        return [f"{name}@entry={entry}"]
    return [f"{name}={val}", f"{name}@entry={entry}"]


def select_levels(n_frames, limit):
    """Levels to show for GDB's ``bt N`` (innermost N) / ``bt -N`` (outermost N)."""
    if limit is None:
        return range(n_frames)
    if limit >= 0:
        return range(min(limit, n_frames))
    return range(max(0, n_frames + limit), n_frames)


def walk_json(walk, thread_num, tid, levels=None, visible=None, full=False, verbose=False):
    """One JSON line for a walk: the shown frames (inline calls included) in ``levels``; with
    ``verbose``, each physical frame's register provenance (register_provenance)."""
    shown = shown_frames(walk, visible)
    levels = range(len(shown)) if levels is None else levels
    cache = walk.derived.setdefault("text", {})
    key = ("json", thread_num, tid, levels.start, levels.stop, visible, full, verbose)
    if key not in cache:
        cache.clear()
        cache[key] = _walk_json(walk, shown, thread_num, tid, levels, full, verbose)
    return cache[key]


def register_provenance(walk, index):
    """How the step from physical frame ``index`` to its caller found the caller's registers:
    {"saved": {name: address} (what this frame saved on its stack, GDB's `info frame` "Saved
    registers"), "lost": [names] (what the caller's step marks undefined: <not saved> there),
    "rule": the rule applied ({"by", "cfa", "cfa_value", "row", "pc"}: unwind.provenance.rule_summary;
    "pc" the frame's lookup pc in its object, unbiased as "row" is), "origins":
    {name: Origin.as_json()} for every general register}, or None for the outermost."""
    if index + 1 >= len(walk):
        return None
    caller = walk[index + 1]
    arch = caller.walker.process_state.arch if caller.walker is not None else None
    if arch is None:
        return None
    saved = {}
    for regno, loc in sorted(caller.reg_locations.items()):
        if loc.location is ADDRESS and arch.reg_name(regno):
            saved[arch.reg_name(regno)] = loc.val
    ra = caller.ra_location
    if ra.location is ADDRESS and arch.reg_name(arch.ra) and arch.reg_name(arch.ra) not in saved:
        saved[arch.reg_name(arch.ra)] = ra.val
    out = {"saved": saved, "lost": sorted(arch.reg_name(r) for r in caller.lost if arch.reg_name(r))}
    rule = rule_summary(caller, arch)
    if rule is not None:
        if walk[index].cfa is not None:
            rule["cfa_value"] = walk[index].cfa           # GDB's "frame at" of this frame
        lib = walk[index].library
        if "row" in rule and lib is not None:
            rule["pc"] = walk[index].lookup_pc - lib.base    # where the row was looked up, as the row
        out["rule"] = rule
    out["origins"] = {arch.reg_name(r): o.as_json() for r, o in register_origins(caller, arch).items()}
    return out


def register_lines(walk, frame):
    """Lines (indented as GDB indents `bt full`'s locals) that say how the step from ``frame``
    (a physical frame of ``walk``) found each of its caller's registers: the rule and its CFA,
    then the registers grouped by how (unwind.provenance); none for the outermost frame."""
    pos = walk.derived.get("positions")
    if pos is None or id(frame) not in pos:
        pos = walk.derived["positions"] = {id(f): k for k, f in enumerate(walk)}
    prov = register_provenance(walk, pos[id(frame)])
    if prov is None:
        return []
    rule = prov.get("rule")
    if rule is None:
        head = "caller's registers: from no rule"
    else:
        row = f" row 0x{rule['row']:x} of {os.path.basename(frame.library.path)}," \
            if "row" in rule and frame.library is not None else ""
        value = f" = 0x{rule['cfa_value']:x}" if "cfa_value" in rule else ""
        head = f"caller's registers by {rule['by']}:{row} CFA={rule['cfa']}{value}"
    groups = {}
    for name, o in prov["origins"].items():
        if o["how"] == "saved":
            text = f"{name} at 0x{o['at']:x} ({o['rule']})" if "at" in o else f"{name} ({o['rule']})"
        elif o["how"] == "register":
            text = f"{name} in {o['at']}"
        elif "rule" in o and o["how"] == "computed":
            text = f"{name} ({o['rule']})"
        else:
            text = name
        how = o["how"]
        groups.setdefault(_REG_GROUPS.get((how, o.get("by") == "abi"), how), []).append(text)
    lines = [f"    {head}"]
    for how in _REG_ORDER:
        if groups.get(how):
            lines.append(f"      {how}: {', '.join(groups[how])}")
    return lines


#: register_lines' groups: how a register was found, and whether only the ABI says so.
_REG_GROUPS = {("register", False): "in registers", ("same", True): "same (abi)", ("same", False): "same (rule)",
               ("unknown", False): "unknown (the inner frame's, as GDB takes them)"}
_REG_ORDER = ("saved", "in registers", "computed", "same (rule)", "same (abi)", "undefined",
              "unknown (the inner frame's, as GDB takes them)")


def _walk_json(walk, shown, thread_num, tid, levels, full, verbose=False):
    import json   # only for JSON output: not at every start
    frames = []
    pos = {id(f): k for k, f in enumerate(walk)} if verbose else None
    for i in levels:
        info = frame_info(shown[i].frame, i, shown[i])
        if full:
            found = variables(shown[i], walk)
            info["args"], info["locals"] = found if found is not None else ([], [])
        if verbose and shown[i].kind not in ("inline", FrameKind.TAILCALL):
            prov = register_provenance(walk, pos[id(shown[i].frame)])
            if prov is not None:
                info["registers"] = prov
        frames.append(info)
    return json.dumps({"thread": thread_num, "tid": tid, "frames": frames, "stop_reason": walk.stop_reason})


def frame_text(info, aout_path=None, verbose=False, width=16, show_pc=True, args="()", where=True):
    """One line as GDB's bt prints it (``where``: with " at FILE:LINE" or " from LIB", which
    `print frame-info short-location` leaves out)."""
    head = f"#{info['level']}".ljust(3) + " "
    if info["kind"] == FrameKind.SIGNAL:
        line = f"{head}<signal handler called>"
    else:
        name = info["function"] or "??"
        line = f"{head}0x{info['pc']:0{width}x} in {name} {args}" if show_pc else f"{head}{name} {args}"
        if not where:
            pass
        elif info["file"]:
            line += f" at {info['file']}:{info['line']}"
        elif info["library"] and info["library"] != aout_path and (verbose or not _unnamed_object(info["library"])):
            line += f" from {info['library']}"
        elif verbose and info["mapping"]:
            line += f" from {info['mapping']}"    # JIT code: GDB names no object there
    if verbose:
        how = info["stepper"] or ("call sites" if info["trust"] == "tailcall" else "registers")
        past = "".join(f"; past {why}" for why in info.get("overruled") or ())
        line += (f"  [{info['trust']}: {how}{past}] "
                 f"sp=0x{info['sp']:x} fp=0x{info['fp']:x}")
    return line


def _unnamed_object(name):
    """Objects GDB's ``from LIB`` never names: the vDSO (not in GDB's list of shared
    libraries) and pseudo-files such as ``[vdso]``."""
    return name.startswith("[") and name.endswith("]")


def visible_frames(walk, past_main=True):
    """How many physical frames GDB would show: with ``past_main`` off, none below main."""
    if not past_main:
        for i, frame in enumerate(walk):
            if is_main_frame(frame):
                return i + 1
    return len(walk)


def shown_count(walk, visible=None):
    """How many backtrace lines (inline calls included) the first ``visible`` frames make."""
    return len(shown_frames(walk, visible))


class TextStyle(namedtuple("TextStyle", "entry_values frame_arguments frame_info values sources filename_display",
                           defaults=(None, "relative"))):
    """GDB's settings that change bt's lines: `print entry-values`, `print frame-arguments`,
    `print frame-info`, the value settings (a locals.format.ValueFormat, whose `print
    address` also drops the frame lines' pcs) and `filename-display`; ``sources``: the
    session's SourceLister where frame-info prints source lines or file names are absolute."""
    __slots__ = ()


#: GDB's defaults.
DEFAULT_STYLE = TextStyle("default", "scalars", "auto", DEFAULT_FORMAT)

def text_style(opts):
    """The TextStyle of a BtOptions; where frame-info prints source lines, the SourceLister
    the options carry (a back-end's, kept for its session), else a new one kept on them for
    the command's other threads."""
    sources = None
    if opts.frame_info in SOURCE_INFO or opts.filename_display == "absolute":
        if opts.sources is None:
            opts.sources = SourceLister()
        sources = opts.sources
    return TextStyle(opts.entry_values, opts.frame_arguments, opts.frame_info, opts.values or DEFAULT_FORMAT,
                     sources, opts.filename_display)


def walk_text(walk, levels=None, verbose=False, aout_path=None, visible=None, full=False, style=None,
              cut=None):
    """Lines of text for one walk, GDB style, inline calls included.  A walk that
    did not reach the bottom ends with "Backtrace stopped: <reason>"; -v states
    every reason; ``full`` adds each frame's locals as `bt full` does; ``style`` is a
    TextStyle (GDB's defaults when None); ``cut``: the number of levels GDB's `backtrace
    limit` lets bt print (it ends there silently), or None.  Kept with the walk: the same walk printed again
    costs nothing."""
    shown = shown_frames(walk, visible)
    if cut is not None and 0 < cut <= len(shown):     # the last level bt reaches has no caller
        shown = shown_frames(walk, visible, outermost=shown[cut - 1].index)
    levels = range(len(shown)) if levels is None else levels
    style = style or DEFAULT_STYLE
    cache = walk.derived.setdefault("text", {})
    key = ("text", levels.start, levels.stop, verbose, aout_path, visible, full, style, cut)
    if key not in cache:
        cache.clear()
        cache[key] = _walk_text(walk, shown, levels, verbose, aout_path, full, style, cut)
    return cache[key]


def pc_width(walk):
    """Hex digits of a pc, as GDB prints them: two per byte of the target's pointers."""
    try:
        return 2 * walk[0].walker.process_state.arch.ptr_size
    except (IndexError, AttributeError):
        return 16


_HAS_FILE = {"file": True}   # what _pc_shown asks of a frame record, for a line with a source file


class TextContext(namedtuple("TextContext", "width usual summary fmt where verbose aout_path full style")):
    """What every line of one walk's text is made with (walk_text's arguments, worked out once)."""
    __slots__ = ()


def text_context(walk, verbose=False, aout_path=None, full=False, style=None):
    style = style or DEFAULT_STYLE
    return TextContext(pc_width(walk), style == DEFAULT_STYLE, style.frame_arguments != "all",
                       None if style.values == DEFAULT_FORMAT else style.values,
                       style.frame_info != "short-location", verbose, aout_path, full, style)


def _walk_text(walk, shown, levels, verbose, aout_path, full, style, cut):
    ctx = text_context(walk, verbose, aout_path, full, style)
    lines = []
    for i in levels:
        lines.extend(level_lines(walk, shown, i, i, ctx))
    more = levels[-1] < (len(shown) if cut is None else cut) - 1 if len(levels) else False
    lines.extend(trailer_lines(walk, more, cut is not None, verbose, limited=walk.limited and bool(len(levels))))
    return lines


def trailer_lines(walk, more, cut, verbose, limited=False):
    """The line that ends a backtrace: more levels follow (``more``: some were left out;
    ``limited``: the walk stopped at the frames asked for), none when ``cut`` (GDB's `backtrace
    limit`, past main: it ends silently), else why the walk stopped where it did not reach
    the bottom."""
    if more or (limited and not cut):
        return ["(More stack frames follow...)"]
    if cut:
        return []
    if not walk.complete:
        why = walk.stop_reason if verbose or not walk.gdb_stop_reason else walk.gdb_stop_reason
        return [f"Backtrace stopped: {why}"]
    if verbose:
        return [f"Walk ended: {walk.stop_reason}"]
    return []


def level_lines(walk, shown, i, label, ctx):
    """The lines of level ``i`` of ``shown`` (its frame line numbered ``label``; with ``full``,
    its locals after it)."""
    sf = shown[i]
    lines = []
    first = i == 0 or shown[i - 1].frame is not sf.frame
    found = None
    full, style = ctx.full, ctx.style
    args = None if full or sf.scope is None or not ctx.usual else line_args_text(sf, walk)
    if args is None:
        if sf.scope is not None:
            found = variables(sf, walk, summary_args=ctx.summary, args_only=not full, fmt=ctx.fmt)
        args = _args_text(found[0], style.entry_values, style.frame_arguments) if found is not None else "()"
    if full and found is not None:
        found = variables(sf, walk, fmt=ctx.fmt)
    if style.frame_info in SOURCE_INFO and sf.kind != FrameKind.SIGNAL and sf.file:
        lines.extend(_source_lines(walk, sf, label, args, first, ctx))
    elif ctx.usual and not ctx.verbose and sf.kind != FrameKind.SIGNAL and sf.file:
        # the common line, as frame_text makes it from frame_info, without the record
        head = f"#{label}".ljust(3) + " "
        name = sf.name or "??"
        if _pc_shown(sf, _HAS_FILE, first):
            lines.append(f"{head}0x{sf.frame.ra:0{ctx.width}x} in {name} {args} at {sf.file}:{sf.line}")
        else:
            lines.append(f"{head}{name} {args} at {sf.file}:{sf.line}")
    else:
        info = _displayed(frame_info(sf.frame, label, sf), sf, style)
        show_pc = style.values.address and (style.frame_info == "location-and-address"
                                            or _pc_shown(sf, info, first))
        lines.append(frame_text(info, ctx.aout_path, ctx.verbose, width=ctx.width, show_pc=show_pc, args=args,
                                where=ctx.where))
    if ctx.verbose == REGS and sf.kind not in ("inline", FrameKind.TAILCALL):
        lines.extend(register_lines(walk, sf.frame))
    if full:
        if found is None or not found[1]:
            lines.append("No locals." if found is not None or has_symtab(sf.frame)
                         else "No symbol table info available.")
        else:
            lines.extend(f"        {v['name']} = {v['value']}" for v in found[1])
    return lines


def _source_lines(walk, sf, label, args, first, ctx):
    """A frame with a source line under `print frame-info source-line` / `source-and-location`
    (GDB's print_frame_info): the location line (the latter only), then the line's text — in
    source-line mode after the pc and a tab where the pc is not at the line's start."""
    style = ctx.style
    out = []
    info = _displayed(frame_info(sf.frame, label, sf), sf, style)
    show_pc = style.values.address and _pc_shown(sf, info, first)
    if style.frame_info == "source-and-location":
        out.append(frame_text(info, ctx.aout_path, ctx.verbose, width=ctx.width, show_pc=show_pc, args=args))
    frame = sf.frame
    module, cu, comp_dir = _source_unit(frame)
    text = style.sources.line((id(module), cu, sf.file), sf.file, comp_dir, sf.line, info["file"])
    if style.frame_info == "source-line" and show_pc:
        text = f"0x{frame.ra:0{ctx.width}x}\t{text}"
    out.append(text)
    return out


def _source_unit(frame):
    """(module, CU offset, compilation directory) of a frame's line, Nones where unknown."""
    lookup = frame.walker.symbol_lookup if frame.walker is not None else None
    unit = lookup.source_unit(frame) if hasattr(lookup, "source_unit") else None
    return unit if unit is not None else (None, None, None)


def _displayed(info, sf, style):
    """A frame record with its file as GDB's `filename-display` shows it (GDB's
    symtab_to_filename_for_display): as the line table names it, its base name, or its full
    name (sourcelines.SourceLister.fullname)."""
    how = style.filename_display
    if how == "relative" or not info["file"]:
        return info
    if how == "basename":
        shown = os.path.basename(info["file"])
    else:
        shown = style.sources.fullname(info["file"], _source_unit(sf.frame)[2])
    return {**info, "file": shown}


def prime_sources(sources, walk, primer):
    """Where the innermost frame of ``walk`` (the first printed) is in the file ``primer``
    names ((file, compilation directory): GDB's current source file), note it as the last one
    GDB visited; GDB then says nothing more of a file it could not open."""
    shown = shown_frames(walk, 1)
    if not shown or shown[0].file != primer[0]:
        return
    sf = shown[0]
    module, cu, comp_dir = _source_unit(sf.frame)
    if primer[1] is None or comp_dir is None or primer[1] == comp_dir:
        sources.visit((id(module), cu, sf.file), sf.file, comp_dir)


def same_name(a, b):
    """Whether two function names denote the same function (parameter lists aside)."""
    if a is None or b is None:
        return a == b
    return strip_params(a) == strip_params(b)


def short_lib(path):
    return os.path.basename(path) if path else ""


def render(walk, opts, thread_num, tid, aout_path=None, past_main=True):
    """The lines swk-bt prints for one walk, for every front end (GDB, LLDB, the CLI):
    ``opts`` is an options.BtOptions (json, verbose, full, limit, GDB's print settings and
    `backtrace limit`)."""
    visible = visible_frames(walk, past_main)
    total = shown_count(walk, visible)
    # past main GDB does not unwind at all: a walk that failed below main ends silently there
    cut = total if visible and not past_main and is_main_frame(walk[visible - 1]) else None
    bl = opts.backtrace_limit
    if bl and total > bl:                 # GDB unwinds no frame past the limit: lines end there
        while visible > 1 and shown_count(walk, visible - 1) >= bl:
            visible -= 1
        total = cut = min(bl, shown_count(walk, visible))
    levels = select_levels(total, opts.limit)
    if opts.json:
        return [walk_json(walk, thread_num, tid, levels, visible, opts.full, opts.verbose)]
    style = text_style(opts)
    if style.sources is not None and style.sources.primer is not None:
        primer, style.sources.primer = style.sources.primer, None
        prime_sources(style.sources, walk, primer)
    return walk_text(walk, levels, opts.verbose, aout_path, visible, opts.full, style, cut)
