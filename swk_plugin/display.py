"""What a backtrace shows: physical frames, and the inlined calls DWARF places
inside them, as GDB shows them (each inline call its own level, innermost
first, all at the physical frame's pc), with their arguments and locals.

Kept apart from the walk: the Walker finds physical frames (the spec's
Frames); this layer only reads debug information about them.
"""
from .frame import FrameKind
from .locals import format_value, make_symbolizer, read_variable, type_name, var_plans
from .locals.entry import parameter_entry_value
from .locals.locations import ENTRY_NESTING
from .locals.plans import BOOL, FUNC_PTR, POINTERS, PTR_AGGREGATE
from .unwind.apply import frame_cfa
from .locals.frames import FrameVariables, call_levels, entry_regs, frame_scopes, level_of

INLINE = "inline"


class ShownFrame:
    """One line of a backtrace: a physical frame, a tail-call frame, or one inlined call in either."""
    __slots__ = ("frame", "index", "scope", "kind", "name", "file", "line", "outermost")

    def __init__(self, frame, index, scope, kind, name, file, line, outermost=None):
        self.frame, self.index, self.scope, self.kind = frame, index, scope, kind
        self.name, self.file, self.line = name, file, line
        #: The outermost level shown when the walk is cut (past main): its frame has no
        #: caller to give entry values, as in GDB, where it has no caller frame at all.
        self.outermost = outermost


def shown_frames(walk, visible=None, outermost=None, below=False):
    """ShownFrames for the first ``visible`` physical frames of a walk and the tail-call
    frames between them (kept with the walk).  ``index`` is the frame's level in
    locals.frames.call_levels.  ``outermost``: the call level a backtrace ends at when it
    ends before the last of those frames (GDB's `backtrace limit` stopping at a tail-call
    frame), which then has no caller to give entry values.  ``below``: the frames past
    ``visible`` are shown later (a segment of a deep walk, stream.py), so the last level
    shown still has its caller."""
    visible = len(walk) if visible is None else visible
    cache = walk.derived.setdefault("shown", {})
    top_inlines = getattr(walk, "top_inlines", None)
    ckey = (visible, outermost, top_inlines, below)
    if ckey in cache:
        return cache[ckey]
    lookup = walk[0].walker.symbol_lookup if walk and walk[0].walker is not None else None
    levels = call_levels(walk, visible)
    last = level_of(walk, visible - 1) if 0 < visible < len(walk) else (len(levels) - 1 if visible else -1)
    if outermost is None:
        outermost = last if visible < len(walk) and not below else None
    else:
        last = min(last, outermost)
    out = []
    # (source line, scopes) per (pc, kind): what DWARF says of a pc holds until the libraries
    # change, and deep stacks repeat a few pcs thousands of times
    shapes = walk[0].walker.process_state.library_cache.memo("frame-shapes") if walk else None
    for i in range(last + 1):
        frame = levels[i]
        key = (lookup, frame.lookup_pc, frame.kind)
        shape = shapes.get(key)
        if shape is None:
            src = None
            if lookup is not None and hasattr(lookup, "source_line") and frame.kind != FrameKind.SIGNAL:
                src = lookup.source_line(frame)
            shape = shapes.put(key, (src, frame_scopes(frame)))
        src, scopes = shape
        file, line = src if src else (None, None)
        if frame.kind == FrameKind.TAILCALL:
            # GDB makes no inline frames for a tail-call frame: it is named after the
            # innermost function at its pc, inlined or not
            scope = scopes[0] if scopes else None
            out.append(ShownFrame(frame, i, scope, frame.kind, scope.name if scope is not None else frame.name,
                                  file, line, outermost))
            continue
        # inlined calls, innermost first; at the top, those the debugger hides (GDB at a
        # breakpoint on an inlined call's first instruction) are left out
        hide = max(0, len(scopes) - 1 - top_inlines) if i == 0 and top_inlines is not None else 0
        for k, scope in enumerate(scopes[:-1]):
            if k >= hide:
                out.append(ShownFrame(frame, i, scope, INLINE, scope.name, file, line, outermost))
            file, line = scope.call_file or file, scope.call_line or line
        out.append(ShownFrame(frame, i, scopes[-1] if scopes else None, frame.kind, frame.name, file, line,
                              outermost))
    cache.clear()
    cache[ckey] = out
    return out


def variables(shown, walk, summary_args=False, args_only=False, fmt=None, value_text=None):
    """(args, locals) of a shown frame as [{"name", "type", "value"}], values as GDB prints
    them (``summary_args``: aggregates as "..." as in bt's frame lines; ``args_only``: the
    locals list is left empty, for a frame line); None without DWARF.  An argument whose
    value on entry is known (from its caller's call site) also has "entry" (its text) and
    "entry_same" (whether it equals the value), from which a frame line prints GDB's
    ``x=x@entry=V`` or ``x=V, x@entry=E``.  ``fmt``: a locals.format.ValueFormat (GDB's
    print settings) other than GDB's defaults, or None.  ``value_text(vv, read_memory)``: each
    value's text another way (LLDB's, for its frame lines), entry values left out."""
    if shown.scope is None:
        return None
    frame = shown.frame
    lib = frame.library
    ps = frame.walker.process_state
    addr = frame.lookup_pc - lib.base
    try:
        args, locals_ = var_plans(lib.module, shown.scope, addr, args_only=args_only)
    except Exception:
        return None
    libraries, symbolize = vars_context(walk, ps)
    # the frame's registers, CFA and entry values, each made when a value first needs it
    frame_vars = FrameVariables.of_level(walk, shown.index, libraries=libraries, outermost=shown.outermost)
    entry = frame_vars.entry_regs
    reg_size = ps.arch.reg_size

    mask = (1 << (8 * ps.arch.ptr_size)) - 1
    printer = getattr(frame.walker, "value_printer", None)
    pointers = getattr(printer, "pointers", False)     # its printers take pointers too (GDB's)
    scope_depth = 0
    if printer is not None:
        scopes = frame_scopes(frame)
        scope_depth = scopes.index(shown.scope) if shown.scope in scopes else 0

    def debuggers(var, vv, summary):
        """The debugger's own text for a value its printers take (GDB's pretty-printers,
        LLDB's data formatters), or None: swk's text stands."""
        if printer is None or vv is None or not _whole(vv) or not (
                _aggregate(vv.type) or (pointers and _pointer_to_aggregate(vv.type))):
            return None
        try:
            return printer(PrintRequest(shown, var, vv, scope_depth, summary))
        except Exception:   # the debugger's printer failing leaves swk's own text
            return None

    def render(planned, summary, arg=False):
        """``arg``: for a frame line, where GDB's print_frame_arg words a failure
        "<error reading variable: MSG>" (bt full's locals: "<error reading variable NAME (MSG)>")."""
        var, plan, tname = planned
        if value_text is not None:
            vv = None
            try:
                vv = read_variable(var, frame_vars)
            except Exception:
                pass
            return {"name": var.name, "type": None, "value": value_text(vv, ps.read_memory)}
        if plan is not None and fmt is None and not (pointers and plan[3] == PTR_AGGREGATE):
            fast = _fast_int(plan, var, tname, frame_vars, mask, ps, symbolize)
            if fast is not None:
                return fast
        tname = None
        vv = None
        try:
            vv = read_variable(var, frame_vars)
            value = format_value(vv, ps.read_memory, symbolize=symbolize, summary=summary, fmt=fmt)
            tname = type_name(vv.type)
        except Exception as exc:
            value = f"<error reading variable: {exc}>" if arg else f"<error reading variable {var.name} ({exc})>"
        if arg and vv is not None and vv.error:
            value = f"<error reading variable: {vv.error}>"
        value = debuggers(var, vv, summary) or value
        out = {"name": var.name, "type": tname, "value": value}
        if vv is not None and not vv.error:
            if (vv.optimized_out or vv.data is None) and not vv.synthetic:
                out["lost"] = True            # wholly optimized out, whatever the text says
            if summary and not vv.type.is_scalar:
                out["unknown"] = "..."        # how an unknown value of this type prints here
        if var.is_param:
            try:
                ev = parameter_entry_value(var, entry, reg_size, ps.arch.ptr_size, ps.arch.byteorder)
                if ev is not None and ev.error:
                    # GDB's read_frame_arg: an entry value that raised an error prints it,
                    # unless the value itself failed with the same words
                    if vv is None or vv.error != ev.error:
                        out["entry"], out["entry_same"] = f"<error reading variable: {ev.error}>", False
                elif ev is not None:
                    referent = ev.entry_referent
                    if referent is None:
                        out["entry"] = debuggers(var, ev, summary) or format_value(
                            ev, ps.read_memory, symbolize=symbolize, summary=summary, fmt=fmt)
                    else:       # a reference: the object it refers to as it was on entry
                        out["entry"] = format_value(ev, _reading_entry(ps.read_memory, ev, referent),
                                                    symbolize=symbolize, summary=summary, fmt=fmt)
                    out["entry_same"] = bool(vv is not None and vv.data is not None and not vv.optimized_out
                                             and not vv.unavailable and vv.opt_mask is None
                                             and vv.data == ev.data and _same_referent(ps, ev, referent))
            except Exception:   # no entry value: the value alone is shown
                pass
        return out
    return ([render(v, summary_args, True) for v in args],
            [] if args_only else [render(v, False) for v in locals_])


def _reading_entry(read_memory, ev, referent):
    """read_memory, except that the object a reference's entry value refers to reads as it
    was on entry (DW_AT_call_data_value), as GDB prints ``x@entry=@0x...: 1``."""
    where = int.from_bytes(ev.data, ev.byteorder)

    def read(addr, size):
        if where <= addr and addr + size <= where + len(referent):
            return referent[addr - where:addr - where + size]
        return read_memory(addr, size)
    return read


def _same_referent(ps, ev, referent):
    """GDB's val_equal for a reference: the referred object now holds its entry contents."""
    if referent is None:
        return True
    try:
        now = ps.read_memory(int.from_bytes(ev.data, ev.byteorder), len(referent))
    except Exception:
        return False
    return bytes(now) == referent


def line_args_text(shown, walk):
    """A frame line's argument list, "(n=n@entry=5, p=0x4010 <buf>)", as _args_text makes it
    from variables(shown, walk, summary_args=True, args_only=True), when every argument is a
    plain integer or pointer with a plan (a register or CFA+N: a release build's usual frame
    line); None otherwise, and variables() then says it.  The plans are compiled once per
    (scope, pc) into what the line needs and nothing else: a deep stack's text, or a thousand
    threads', is this, thousands of times."""
    scope = shown.scope
    if scope is None:
        return None
    frame = shown.frame
    lib = frame.library
    if lib is None or lib.module is None:
        return None
    ps = frame.walker.process_state
    memo = lib.module.cache.memo("line-plans")
    key = (scope, frame.lookup_pc - lib.base, ps.arch.name)
    plan = memo.get(key, memo)
    if plan is memo:
        plan = memo.put(key, _line_plan(lib.module, scope, key[1], ps.arch))
    if plan is None:
        return None
    regs = frame.regs
    entry = None
    symbolize = None
    parts = []
    for where, name, loc, size, vkind, entry_reg in plan:
        if vkind in POINTERS:
            if vkind == PTR_AGGREGATE and getattr(getattr(frame.walker, "value_printer", None), "pointers", False):
                return None                   # the debugger's printers may take it
            if symbolize is None:
                symbolize = vars_context(walk, ps)[1]
        if where == "entry":                  # the register's value on entry: x=x@entry=V
            if entry is None:
                entry = entry_regs(walk, shown.index, shown.outermost)
            v = entry.get(loc) if entry else None
            if v is None and loc not in getattr(entry, "errors", {}):
                parts.append(f"{name}=<optimized out>")      # no call site says: nor does GDB
                continue
            if v is None or type(v) is not int or getattr(entry, "depth", {}).get(loc, 1) >= ENTRY_NESTING:
                return None                   # the general path says what went wrong
            v = _low(v, size, vkind)
            if vkind == FUNC_PTR and symbolize.descriptor(v):
                return None                   # a function descriptor: the value printer's
            text = plain_text(v, vkind, symbolize)
            parts.append(f"{name}={text}" if entry_reg is None else f"{name}={name}@entry={text}")
            continue
        if where == "cfa":
            cfa = frame_cfa(frame, ps)
            if cfa is None:
                return None
            try:
                data = ps.read_memory((cfa + loc) & ps.arch.address_mask, size)
            except Exception:
                return None                   # the general path says what went wrong
            v = int.from_bytes(data, ps.arch.byteorder)
        elif where == "const":
            v = loc
        else:
            v = regs.get(loc)
            if v is None or type(v) is not int:
                return None
        v = _low(v, size, vkind)
        if vkind == FUNC_PTR and symbolize.descriptor(v):
            return None                       # a function descriptor: the value printer's
        text = plain_text(v, vkind, symbolize)
        if entry_reg is not None:
            if entry is None:
                entry = entry_regs(walk, shown.index, shown.outermost)
            e = entry.get(entry_reg) if entry else None
            if e is None and entry_reg in getattr(entry, "errors", {}):
                return None                   # the general path prints the error
            if e is not None:
                if type(e) is not int:
                    return None
                e = _low(e, size, vkind)
                if vkind == FUNC_PTR and symbolize.descriptor(e):
                    return None
                parts.append(f"{name}={name}@entry={text}" if e == v else
                             f"{name}={text}, {name}@entry={plain_text(e, vkind, symbolize)}")
                continue
        parts.append(f"{name}={text}")
    return "(" + ", ".join(parts) + ")"


def _low(v, size, vkind):
    """``v``'s low ``size`` bytes as a value of plain kind ``vkind`` reads them (a signed
    integer's negative)."""
    bits = 8 * size
    v &= (1 << bits) - 1
    return v - (1 << bits) if vkind is True and v >> (bits - 1) else v


def plain_text(v, vkind, symbolize=None):
    """A plain value (plans.plain_kind) as GDB prints it under its defaults: an integer in
    decimal, a bool true / false, a pointer its hex and <symbol> where one holds it (`print
    symbol` is on; a function pointer always names its function)."""
    if vkind is True or vkind is False:
        return str(v)
    if vkind == BOOL:
        return "true" if v == 1 else "false" if v == 0 else str(v)
    try:
        sym = symbolize(v) if symbolize is not None else None
    except Exception:
        sym = None
    return f"0x{v:x} <{sym}>" if sym else f"0x{v:x}"


def vars_context(walk, ps):
    """(the libraries as (module, bias), GDB's <symbol> printer over them): made once per
    library list (a thousand threads' walks share it), kept with each walk."""
    ctx = walk.derived.get("vars-ctx")
    if ctx is None:
        memo = ps.library_cache.memo("vars-ctx")
        ctx = memo.get(ps.library_state)
        if ctx is None:
            libraries = [(lib.module, lib.base) for lib in ps.library_state.get_libraries()
                         if lib.module is not None]
            ctx = memo.put(ps.library_state, (libraries, make_symbolizer(libraries)))
        walk.derived["vars-ctx"] = ctx
    return ctx


def _line_plan(module, scope, addr, arch):
    """line_args_text's plan at a scope and unbiased address: per argument (where, name,
    location, size, plain kind, entry register or None), where and location as
    plans.var_plans says; None where an argument needs the general path."""
    try:
        args = var_plans(module, scope, addr, args_only=True)[0]
    except Exception:
        return None
    out = []
    for var, plan, _tname in args:
        if plan is None:
            return None
        where, loc, size, vkind, entry_reg = plan
        if where in ("reg", "entry") and size > arch.reg_size(loc):
            return None
        if isinstance(entry_reg, int) and size > arch.reg_size(entry_reg):
            return None
        out.append((where, var.name, loc, size, vkind, entry_reg))
    return tuple(out)


def _fast_int(plan, var, tname, frame_vars, mask, ps, symbolize=None):
    """A plain integer's, bool's or pointer's line entry from its plan (plans.var_plans), as
    the general path would print it, or None where that path must say more (a register the
    walk did not recover, unreadable memory, an entry value in bytes).  ``frame_vars``: the
    frame's FrameVariables."""
    where, loc, size, vkind, entry_reg = plan
    entry, reg_size = frame_vars.entry_regs, frame_vars.reg_size
    if where == "cfa":
        cfa = frame_vars.cfa
        if cfa is None:
            return None
        try:
            data = ps.read_memory((cfa + loc) & mask, size)
        except Exception:
            return None                       # the general path says what went wrong
        v = int.from_bytes(data, ps.arch.byteorder)
    elif where == "const":
        v = loc
    else:                                     # a register, or its value on entry (x=x@entry=V)
        v = (entry.get(loc) if entry else None) if where == "entry" else frame_vars.regs.get(loc)
        if v is None and where == "entry" and loc not in getattr(entry, "errors", {}):
            # no call site says what it was: nor does GDB
            return {"name": var.name, "type": tname, "value": "<optimized out>", "lost": True}
        if v is None or not isinstance(v, int) or size > reg_size(loc) or (
                where == "entry" and getattr(entry, "depth", {}).get(loc, 1) >= ENTRY_NESTING):
            return None                       # the general path says what went wrong
    v = _low(v, size, vkind)
    if vkind == FUNC_PTR and symbolize is not None and symbolize.descriptor(v):
        return None                           # a function descriptor: the value printer's
    out = {"name": var.name, "type": tname, "value": plain_text(v, vkind, symbolize)}
    if entry_reg is not None and (entry or getattr(entry, "errors", None)):
        e = entry.get(entry_reg)
        if e is None and entry_reg in getattr(entry, "errors", {}):
            return None                       # the general path prints the error
        if e is not None:
            if not isinstance(e, int) or (isinstance(entry_reg, int) and size > reg_size(entry_reg)):
                return None
            e = _low(e, size, vkind)
            if vkind == FUNC_PTR and symbolize is not None and symbolize.descriptor(e):
                return None
            out["entry"] = plain_text(e, vkind, symbolize)
            out["entry_same"] = e == v
    return out


class PrintRequest:
    """What a debugger's value printer (``Walker.value_printer``) is asked to print: a
    variable of a shown frame whose value swk has read (``value``: a VarValue with its
    bytes and, when in memory, its address).  ``scope_depth``: how many inlined calls
    lie inside the variable's scope at the frame's pc (0: the innermost scope);
    ``summary``: for a frame line (GDB's ``print frame-arguments scalars``)."""
    __slots__ = ("shown", "var", "value", "scope_depth", "summary")

    def __init__(self, shown, var, value, scope_depth, summary=False):
        self.shown, self.var, self.value, self.scope_depth = shown, var, value, scope_depth
        self.summary = summary

    @property
    def pc(self):
        """The address whose blocks hold the variable (the frame's lookup pc)."""
        return self.shown.frame.lookup_pc


def _whole(vv):
    """A value read completely: a debugger may print it."""
    return (vv.data is not None and not vv.optimized_out and not vv.unavailable and not vv.error
            and vv.opt_mask is None and not vv.synthetic)


def _pointer_to_aggregate(t):
    """A pointer (through typedefs and qualifiers) to a struct, class or union: what GDB's
    pretty-printers are also written for (python-gdb.py's PyObject *)."""
    for _ in range(64):
        if t is None:
            return False
        if t.kind == "ptr":
            return _aggregate(t.target)
        if t.kind in ("typedef", "const", "volatile"):
            t = t.target
            continue
        return False
    return False


def _aggregate(t):
    """A struct, class or union, or a reference to one (through typedefs): the values a
    debugger's pretty-printers and data formatters are written for."""
    for _ in range(64):
        if t is None:
            return False
        if t.kind in ("struct", "class", "union"):
            return True
        if t.kind in ("typedef", "ref", "rref", "const", "volatile"):
            t = t.target
            continue
        return False
    return False
