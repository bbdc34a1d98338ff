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


_ENGINE = []


def _engine():
    """swk_plugin.locals, imported once (None if it cannot be)."""
    if not _ENGINE:
        try:
            from . import locals as engine
        except ImportError:
            engine = None
        _ENGINE.append(engine)
    return _ENGINE[0]


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


class _LazyEntryRegs:
    """The entry values of a frame's parameters, worked out only if a location asks
    (DW_OP_entry_value): most frames never do."""
    __slots__ = ("walk", "index", "regs")

    def __init__(self, walk, index):
        self.walk, self.index, self.regs = walk, index, None

    def _get(self):
        if self.regs is None:
            self.regs = _entry_regs(self.walk, self.index)
        return self.regs

    def get(self, regno, default=None):
        return self._get().get(regno, default)

    def __getitem__(self, regno):
        return self._get()[regno]

    def __contains__(self, regno):
        return regno in self._get()

    def __bool__(self):
        return bool(self._get())


def _entry_regs(walk, index):
    """{regno: value} the frame's parameters had on entry, from its caller's call site
    (DW_TAG_call_site), computed once per walk from the outermost frame inward as GDB
    does for DW_OP_entry_value; {} where the chain of calls is broken (a signal)."""
    engine = _engine()
    memo = walk.__dict__.setdefault("_entry", {})
    if index in memo:
        return memo[index]
    todo = []
    j = index
    while j not in memo and j + 1 < len(walk):
        todo.append(j)
        j += 1
    if j not in memo:
        memo[j] = {}
    ps = walk[0].walker.process_state
    for i in reversed(todo):
        callee, caller = walk[i], walk[i + 1]
        regs = {}
        clib, lib = caller.library, callee.library
        if (engine is not None and clib is not None and clib.module is not None and lib is not None
                and lib.module is not None and not callee.non_call and callee.kind != FrameKind.SIGNAL
                and not caller.non_call):
            try:
                fn = engine.function_at(lib.module, callee.lookup_pc - lib.base)
                regs = engine.call_site_entry_regs(
                    clib.module, caller.ra - clib.base, regs=caller.regs, cfa=caller.cfa,
                    read_mem=ps.read_memory, bias=clib.base,
                    callee_entry=(fn.entry_pc if fn is not None else None), callee_module=lib.module,
                    callee_bias=lib.base, caller_entry_regs=memo.get(i + 1), ptr_size=ps.arch.ptr_size)
            except Exception:
                regs = {}
        memo[i] = regs
    return memo[index]


_VAR_PLANS = {}


def _var_plans(engine, scope, addr):
    """([(Variable, int-at-CFA plan or None, type name)], same for locals) of a scope at an
    unbiased address, worked out once: they depend only on the module's DWARF."""
    key = (scope, addr)
    hit = _VAR_PLANS.get(key)
    if hit is None:
        args, locals_ = engine.frame_variables(scope, addr)

        def plan(var):
            p = engine.int_on_cfa_plan(var)
            return var, p, (engine.type_name(var.type) if p is not None else None)
        hit = ([plan(v) for v in args], [plan(v) for v in locals_])
        if len(_VAR_PLANS) >= 65536:
            _VAR_PLANS.clear()
        _VAR_PLANS[key] = hit
    return hit


def variables(shown, walk, summary_args=False, args_only=False):
    """(args, locals) of a shown frame as [{"name", "type", "value"}], values as GDB prints
    them (``summary_args``: aggregates as "..." as in bt's frame lines; ``args_only``: the
    locals list is left empty, for a frame line); None without DWARF."""
    engine = _engine()
    if engine is None or shown.scope is None:
        return None
    frame = shown.frame
    lib = frame.library
    ps = frame.walker.process_state
    addr = frame.lookup_pc - lib.base
    try:
        args, locals_ = _var_plans(engine, shown.scope, addr)
    except Exception:
        return None
    ctx = walk.__dict__.get("_vars_ctx")
    if ctx is None:   # once per walk: the libraries as (module, bias) and GDB's <symbol> printer
        libraries = [(lib.module, lib.base) for lib in ps.library_state.get_libraries()
                     if lib.module is not None]
        ctx = walk.__dict__["_vars_ctx"] = (libraries, engine.make_symbolizer(libraries))
    libraries, symbolize = ctx
    entry = _LazyEntryRegs(walk, shown.index)

    cfa = frame.cfa
    mask = (1 << (8 * ps.arch.ptr_size)) - 1

    def render(planned, summary):
        var, plan, tname = planned
        if plan is not None and cfa is not None:   # a plain integer at CFA+N: read and print it
            off, size, signed = plan
            try:
                data = ps.read_memory((cfa + off) & mask, size)
                return {"name": var.name, "type": tname,
                        "value": str(int.from_bytes(data, "little", signed=signed))}
            except Exception:
                pass                       # the general path says what went wrong
        tname = None
        try:
            vv = engine.read_variable(var, addr=addr, regs=frame.regs, cfa=frame.cfa,
                                      read_mem=ps.read_memory, bias=lib.base, ptr_size=ps.arch.ptr_size,
                                      entry_regs=entry, libraries=libraries)
            value = engine.format_value(vv, ps.read_memory, symbolize=symbolize, summary=summary)
            tname = engine.type_name(vv.type)
        except Exception as exc:
            value = f"<error reading variable {var.name} ({exc})>"
        return {"name": var.name, "type": tname, "value": value}
    return ([render(v, summary_args) for v in args],
            [] if args_only else [render(v, False) for v in locals_])
