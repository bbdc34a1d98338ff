"""Entry values from the caller's call site: GDB's DW_OP_entry_value resolution.

A callee's parameter whose location says "the value register R had on entry"
is found from the caller's DW_TAG_call_site at its return address: the
DW_TAG_call_site_parameter for R, its DW_AT_call_value computed in the
caller's frame, when the call site is known to call this very function and
it cannot reach itself by tail calls (GDB's checks).
"""
from ..arch import from_elf_machine
from ..dwarf.encoding import sleb128, uleb128
from ..dwarf.expr import ExprError, LoopDetected
from ..elf.strtab import may_name
from ..elf.symbols import module_symbols
from ..errors import SwkError
from . import dies
from .dwarfconst import (AT_abstract_origin, AT_call_data_value, AT_call_origin, AT_call_return_pc,
                         AT_call_tail_call, AT_call_target, AT_call_value, AT_declaration,
                         AT_GNU_call_site_data_value, AT_GNU_call_site_target, AT_GNU_call_site_value,
                         AT_GNU_tail_call, AT_high_pc, AT_linkage_name, AT_location, AT_low_pc, AT_name,
                         AT_ranges, AT_specification, TAG_catch_block, TAG_inlined_subroutine,
                         TAG_lexical_block, TAG_try_block,
                         TAG_call_site, TAG_call_site_parameter, TAG_GNU_call_site, TAG_GNU_call_site_parameter)
from .locations import (ENTRY_LOOP, ENTRY_NESTING, FrameCtx, MemError, OptimizedOut, RegisterLost, VarValue, _low_end,
                        find_location_expr, is_loclist)
from .scopes import Scope, engine_for
from .types import strip_typedefs

#: The scopes a call site may sit in below its function.
_SCOPE_TAGS = (TAG_inlined_subroutine, TAG_lexical_block, TAG_try_block, TAG_catch_block)


def call_sites(fn):
    """{return pc: call-site DieNode} of a function (unbiased), built once."""
    if fn._call_sites is None:
        eng = fn.engine
        out = {}
        root = eng.tree(fn.cu, fn.die)
        stack = [root] if root is not None else []
        d = eng.d
        while stack:
            n = stack.pop()
            for c in n.children:
                if c.tag in (TAG_call_site, TAG_GNU_call_site):
                    a = c.attrs.get(AT_call_return_pc) or c.attrs.get(AT_low_pc)
                    if a is not None:
                        pc = d.address(c.cu, a[1])
                        if pc is not None:
                            out[pc] = c
                elif c.children:
                    stack.append(c)
        fn._call_sites = out
    return fn._call_sites


def call_site_at(fn, pc):
    """The call-site DIE of ``fn`` whose return pc is unbiased ``pc``, or None.  A compiler
    puts a call site in the innermost scope of its call instruction (pc - 1), so the scopes
    holding that are searched first, reading only their DIEs; every call site of the
    function only when they have none."""
    if fn._call_sites is not None:
        return fn._call_sites.get(pc)
    memo = fn.engine.module.cache.memo("call-site-at")
    key = (fn.die, pc)
    hit = memo.get(key, memo)
    if hit is memo:
        hit = _site_on_path(fn, pc)
        if hit is None:
            hit = call_sites(fn).get(pc)
        memo.put(key, hit)
    return hit


def _site_on_path(fn, pc):
    eng = fn.engine
    d = eng.d
    node = eng.tree(fn.cu, fn.die)
    if node is None:
        return None
    want = pc - 1
    todo = [node]
    while todo:
        n = todo.pop()
        for c in n.children:
            tag = c.tag
            if tag in (TAG_call_site, TAG_GNU_call_site):
                a = c.attrs.get(AT_call_return_pc) or c.attrs.get(AT_low_pc)
                if a is not None and d.address(c.cu, a[1]) == pc:
                    return c
            elif tag in _SCOPE_TAGS:
                a = c.attrs
                if AT_ranges in a or (AT_low_pc in a and AT_high_pc in a):
                    if not any(lo <= want < hi for lo, hi in d.die_ranges(c.cu, a)):
                        continue
                todo.append(c)
    return None


def call_target(eng, site):
    """What a call site calls: ("addr", unbiased entry in this module), ("addrs", the low
    address of each of its ranges: a function split in parts, hot and cold, as GDB's
    dwarf2_ranges_read_low_addrs), ("name", linkage name of an external function), ("expr",
    DW_AT_call_target expression) or None.
    A fact of the DWARF: kept per call-site DIE in the module's cache."""
    memo = eng.module.cache.memo("call-targets")
    key = (site.cu.offset, site.offset)
    hit = memo.get(key, memo)
    if hit is memo:
        hit = memo.put(key, _call_target(eng, site))
    return hit


def _call_target(eng, site):
    a = site.attrs.get(AT_call_origin) or site.attrs.get(AT_abstract_origin)
    if a is None or dies.ref(a[1]) is None:
        t = site.attrs.get(AT_call_target) or site.attrs.get(AT_GNU_call_site_target)
        if t is not None and isinstance(t[1], (bytes, bytearray)):
            return ("expr", bytes(t[1]))
        return None
    node = dies.node_at(eng.d, site.cu, a[1])
    if node is None:
        return None
    for _ in range(4):
        if AT_ranges in node.attrs and not node.attrs.get(AT_declaration):
            lows = tuple(lo for lo, _hi in eng.d.die_ranges(node.cu, node.attrs) if lo)
            return ("addrs", lows) if lows else None
        lp = node.attrs.get(AT_low_pc)
        if lp is not None:
            v = eng.d.address(node.cu, lp[1])
            return ("addr", v) if v is not None else None
        if node.attrs.get(AT_declaration):
            nm = dies.chain_string(eng.d, node, AT_linkage_name) or dies.chain_string(eng.d, node, AT_name)
            if not nm:
                return None
            if may_name(eng.module, nm):            # (no string table holds it: not here)
                st = module_symbols(eng.module)
                for h in (st.by_name(nm) if st is not None else []):
                    if h._mst in ("text", "file_text"):
                        return ("addr", h.value)     # defined in this module after all
            return ("name", nm)
        ao = node.attrs.get(AT_abstract_origin) or node.attrs.get(AT_specification)
        if ao is None or dies.ref(ao[1]) is None:
            return None
        node = dies.node_at(eng.d, node.cu, ao[1])
        if node is None:
            return None
    return None


def is_tail_call(site):
    """Whether a call-site DIE is a tail call (a jump, not a call)."""
    return bool(site.attrs.get(AT_call_tail_call) or site.attrs.get(AT_GNU_tail_call))


def _target_matches(tgt, ctx, caller_module, caller_bias, callee_module, callee_entry, callee_bias):
    """GDB's "DW_OP_entry_value resolving expects callee ..." check."""
    if tgt is None:
        return False
    kind, v = tgt
    callee_abs = callee_entry + callee_bias
    if kind == "addr":
        return v + caller_bias == callee_abs
    if kind == "addrs":
        return any(a + caller_bias == callee_abs for a in v)
    if kind == "name":
        if not may_name(callee_module, v):      # (its string tables lack the name)
            return False
        st = module_symbols(callee_module)
        if st is None:
            return False
        return any(h.value == callee_entry for h in st.by_name(v) if h._mst in ("text", "file_text"))
    try:
        r = ctx.evaluate(v, ctx.fn.cu)
    except Exception:
        return False
    if r.kind == "register":
        got = ctx.frame.regs.get(r.value)
    elif r.kind in ("memory", "value"):
        got = r.value
    else:
        got = None
    return got == callee_abs


def _can_tail_call_itself(eng, entry):
    """func_verify_no_selftailcall: whether ``entry``'s function can reach itself by tail calls
    (kept per function in the module's cache)."""
    memo = eng.module.cache.memo("self-tail-calls")
    hit = memo.get(entry)
    if hit is None:
        hit = memo.put(entry, _reaches_itself(eng, entry))
    return hit


def _reaches_itself(eng, entry):
    seen = set()
    todo = [entry]
    while todo:
        a = todo.pop()
        fn = eng.function_head_at(a)      # its call sites: no scope tree needed
        if fn is None:
            continue
        for site in call_sites(fn).values():
            if not is_tail_call(site):
                continue
            tgt = call_target(eng, site)
            if tgt is None or tgt[0] not in ("addr", "addrs"):
                continue
            for a in ((tgt[1],) if tgt[0] == "addr" else tgt[1]):
                if a == entry:
                    return True
                if a not in seen:
                    seen.add(a)
                    todo.append(a)
    return False


class _CallSiteScope:
    """What FrameCtx needs of a variable, for evaluating a call site's values: the scope."""
    __slots__ = ("scope",)

    def __init__(self, scope):
        self.scope = scope


class EntryRegs(dict):
    """{DWARF regno: entry value}; ``from_fbreg`` lists the registers whose DW_AT_call_value
    used DW_OP_fbreg (GDB 13 evaluates those against the callee's frame base, so its
    value differs from ours there); ``data`` holds, per register, what the call site's
    DW_AT_call_data_value says the object a reference parameter refers to held on entry."""

    def __init__(self):
        super().__init__()
        self.from_fbreg = set()
        self.data = {}
        #: per register, why its call-site value cannot be computed where GDB says so (a
        #: register the caller lost: "value has been optimized out"; a chain of entry values
        #: deeper than GDB follows, ENTRY_LOOP): x@entry=<error ...>
        self.errors = {}
        #: per register, how many call sites' values GDB evaluates, nested, to find it (1:
        #: its own call site's says it outright; ENTRY_NESTING: more than GDB follows, an
        #: error); missing: 1
        self.depth = {}


class OpenEntryRegs(EntryRegs):
    """The entry values of the last frame of a part of a deep walk (stream.py) whose callers
    are further on: any chain of them that reaches here is longer than GDB follows."""

    class _Every(dict):
        """``value`` for every register."""

        def __init__(self, value):
            super().__init__()
            self.value = value

        def get(self, key, default=None):
            return self.value

        def __contains__(self, key):
            return True

        def __getitem__(self, key):
            return self.value

        def __bool__(self):
            return True

    def __init__(self):
        super().__init__()
        self.errors = self._Every(ENTRY_LOOP)
        self.depth = self._Every(ENTRY_NESTING)


def call_site_entry_regs(caller_module, caller, *, callee_entry=None, callee_module=None, callee_bias=None):
    """{DWARF regno: value} a callee's parameters had on entry, from the caller's
    DW_TAG_call_site: one per DW_TAG_call_site_parameter whose DW_AT_location is a register
    and whose DW_AT_call_value can be computed in the caller's frame.  ``caller`` is that
    frame at the call (a frames.FrameVariables in ``caller_module``: its ``addr`` is the
    call's return address - 1, unbiased, as a caller frame's lookup pc is; its recovered
    registers and CFA, and its own entry values for values passed through, are what the
    values are computed from).  The result is the callee's FrameVariables.entry_regs --
    what GDB does for DW_OP_entry_value.  With ``callee_entry`` (unbiased in
    ``callee_module``, loaded at ``callee_bias``; default: the caller's) the call site must
    be known to call that function and it must not reach itself by tail calls, as GDB
    checks; otherwise nothing is returned."""
    out = EntryRegs()
    eng = engine_for(caller_module)
    if eng is None:
        return out
    caller_ra, bias, regs = caller.addr + 1, caller.bias, caller.regs
    cmod = callee_module if callee_module is not None else caller_module
    cbias = callee_bias if callee_bias is not None else (bias if cmod is caller_module else 0)
    plan = _site_plan(eng, caller_module, caller_ra, bias, callee_entry, cmod, cbias)
    if plan is None:
        return out
    scope, dyn_target, params, datas = plan
    ctx = None
    if dyn_target is not None:      # an indirect call: its target is computed in the caller's frame
        ctx = FrameCtx(_CallSiteScope(scope), caller)
        if not _target_matches(dyn_target, ctx, caller_module, bias, cmod, callee_entry, cbias):
            return out
    caller_entry_regs = caller.entry_regs
    from_fbreg = getattr(caller_entry_regs, "from_fbreg", None) or set()
    mask = (1 << (8 * caller.ptr_size)) - 1
    for r, code, cu, fast, has_fbreg in params:
        if fast is not None and fast[0] == "entry":
            fast = None                             # the evaluator, as its callers read it
        if fast is not None:
            if fast[0] == "const":
                out[r] = fast[1]
            else:                                   # DW_OP_bregN off: as dwarf.expr computes it
                v = regs.get(fast[1])
                if v is None or not isinstance(v, int):
                    fast = None                     # the general path says why (or reads bytes)
                else:
                    out[r] = ((v & mask) + fast[2]) & mask
            if fast is not None:
                if has_fbreg:
                    out.from_fbreg.add(r)
                continue
        if ctx is None:
            ctx = FrameCtx(_CallSiteScope(scope), caller)
        ctx.used_entry = set()
        try:
            res = ctx.evaluate(code, cu)
        except RegisterLost as exc:
            out.errors[r] = str(exc)
            continue
        except LoopDetected as exc:         # the caller's chain is already as deep as GDB goes
            out.errors[r] = str(exc)
            out.depth[r] = ENTRY_NESTING
            continue
        except ExprError:
            continue
        except (OptimizedOut, MemError, SwkError):
            continue
        if ctx.used_entry:
            depths = getattr(caller_entry_regs, "depth", {})
            out.depth[r] = 1 + max(depths.get(u, 1) for u in ctx.used_entry)
        if res.kind in ("memory", "value"):
            out[r] = res.value
        elif res.kind == "implicit":          # a typed value (DW_OP_const_type, regval_type)
            out[r] = bytes(res.value)
        elif res.kind == "register":
            v = regs.get(res.value)
            if v is not None:
                out[r] = v
        if r in out and (has_fbreg or ctx.used_entry & from_fbreg):
            out.from_fbreg.add(r)
    for r, code, cu in datas:                 # what a reference parameter's object held
        if ctx is None:
            ctx = FrameCtx(_CallSiteScope(scope), caller)
        try:
            res = ctx.evaluate(code, cu)
        except (OptimizedOut, MemError, ExprError, SwkError):
            continue
        if res.kind in ("memory", "value"):
            out.data[r] = res.value
        elif res.kind == "implicit":
            out.data[r] = bytes(res.value)
        elif res.kind == "register" and isinstance(regs.get(res.value), int):
            out.data[r] = regs[res.value]
    return out


def site_fast_values(caller_module, caller_ra, bias, callee_entry=None, callee_module=None, callee_bias=None):
    """What call_site_entry_regs computes at this call site, as (register, caller's register
    or None, offset or constant, whether it names DW_OP_fbreg, whether the caller's register
    is its value on entry) per parameter when every value is a constant (an address too), a
    caller's register plus an offset, or a caller's parameter passed on (its entry value plus
    an offset) and the call is direct (what compilers emit most); () when the site gives no
    entry values; None when only the general evaluator can say.  Arguments as
    call_site_entry_regs's."""
    eng = engine_for(caller_module)
    if eng is None:
        return ()
    cmod = callee_module if callee_module is not None else caller_module
    cbias = callee_bias if callee_bias is not None else (bias if cmod is caller_module else 0)
    plan = _site_plan(eng, caller_module, caller_ra, bias, callee_entry, cmod, cbias)
    if plan is None:
        return ()
    _scope, dyn_target, params, datas = plan
    if dyn_target is not None or datas or any(fast is None for _r, _c, _cu, fast, _fb in params):
        return None
    return tuple((r, None, fast[1], fb, False) if fast[0] == "const" else
                 (r, fast[1], fast[2], fb, fast[0] == "entry")
                 for r, _code, _cu, fast, fb in params)


def _site_plan(eng, caller_module, caller_ra, bias, callee_entry, cmod, cbias):
    """What DWARF alone says of the call site at ``caller_ra`` for a call into ``callee_entry``
    (None: it gives no entry values there), kept in the caller module's cache: a deep
    recursion asks the same question of every frame.  (scope of the call, the target
    expression when the call is indirect, [(register, DW_AT_call_value, unit, fast form,
    whether it names DW_OP_fbreg)]); the fast form is ("const", v) or ("breg", N, offset)
    for the values compilers emit most, None for the general evaluator."""
    memo = caller_module.cache.memo("call-site-plans")
    key = (caller_ra, bias, callee_entry, cmod, cbias)
    hit = memo.get(key, memo)
    if hit is not memo:
        return hit
    plan = None
    fn = eng.function_at(caller_ra - 1)
    site = call_site_at(fn, caller_ra) if fn is not None else None
    if site is not None:
        scopes = eng.scopes_at(caller_ra - 1)
        scope = scopes[-1] if scopes else Scope("function", fn.name, fn, fn.block)
        dyn_target = None
        ok = True
        if callee_entry is not None:
            tgt = call_target(eng, site)
            if tgt is not None and tgt[0] == "expr":
                dyn_target = tgt
            else:
                ok = _target_matches(tgt, None, caller_module, bias, cmod, callee_entry, cbias)
            ceng = engine_for(cmod)
            if ok and ceng is not None and _can_tail_call_itself(ceng, callee_entry):
                ok = False
        if ok:
            params = []
            datas = []
            sp = _sp_dwarf(caller_module)
            for p in site.children:
                if p.tag not in (TAG_call_site_parameter, TAG_GNU_call_site_parameter):
                    continue
                loc = p.attrs.get(AT_location)
                val = p.attrs.get(AT_call_value) or p.attrs.get(AT_GNU_call_site_value)
                if loc is None or val is None or not isinstance(loc[1], (bytes, bytearray)):
                    continue
                lb = loc[1]
                if len(lb) == 1 and 0x50 <= lb[0] <= 0x6f:
                    r = lb[0] - 0x50
                elif lb[:1] == b"\x90":
                    r, _p = uleb128(lb, 1)
                elif sp is not None and lb[:1] == bytes((0x70 + sp,)):    # on the stack at the call
                    off, end = sleb128(bytes(lb), 1)
                    if end != len(lb):
                        continue
                    r = ("fb", off)
                else:
                    continue
                code = bytes(val[1])
                params.append((r, code, p.cu, _fast_value(code, p.cu.addr_size or 8, eng.d.byteorder, bias),
                               0x91 in code))
                dval = p.attrs.get(AT_call_data_value) or p.attrs.get(AT_GNU_call_site_data_value)
                if dval is not None and isinstance(dval[1], (bytes, bytearray)):
                    datas.append((r, bytes(dval[1]), p.cu))
            plan = (scope, dyn_target, params, tuple(datas))
    return memo.put(key, plan)


def _sp_dwarf(module):
    """The DWARF number of the stack pointer of the module's architecture (< 32), or None."""
    try:
        sp = from_elf_machine(module.machine).sp
    except Exception:       # an architecture swk does not know: no stack parameters
        return None
    return sp if isinstance(sp, int) and 0 <= sp < 32 else None


def _fast_value(code, addr_size, byteorder, bias):
    """("const", v) for DW_OP_litN / DW_OP_constNu and DW_OP_addr (moved by ``bias``, as the
    evaluator's expressions are), ("breg", N, off) for DW_OP_bregN off, ("entry", N, off) for
    DW_OP_entry_value(DW_OP_regN) [DW_OP_plus_uconst off] (a parameter passed on; the GNU op
    too), else None."""
    if len(code) == 1 and 0x30 <= code[0] <= 0x4f:
        return ("const", code[0] - 0x30)
    if len(code) == 1 + addr_size and code[0] == 0x03:
        v = int.from_bytes(code[1:], byteorder)
        return ("const", (v + bias) & ((1 << (8 * addr_size)) - 1))
    if len(code) >= 3 and code[0] in (0xa3, 0xf3) and code[1] == 1 and 0x50 <= code[2] <= 0x6f:
        if len(code) == 3:
            return ("entry", code[2] - 0x50, 0)
        if code[3] == 0x23:
            try:
                off, end = uleb128(code, 4)
            except Exception:
                return None
            if end == len(code):
                return ("entry", code[2] - 0x50, off)
        return None
    if code and 0x70 <= code[0] <= 0x8f:
        try:
            off, end = sleb128(code, 1)
        except Exception:
            return None
        if end == len(code):
            return ("breg", code[0] - 0x70, off)
    if len(code) == 2 and code[0] == 0x08:      # DW_OP_const1u
        return ("const", code[1])
    return None


def parameter_entry_value(var, entry_regs, reg_size=None, ptr_size=8, byteorder="little"):
    """A parameter's value on entry to its function (GDB's ``name@entry``), or None.

    As GDB's read_variable_at_entry: the parameter's location at the function's entry
    must be a single register (DW_OP_reg*, DW_OP_regx), and the caller's call site must
    have given that register a value (``entry_regs``, see call_site_entry_regs).
    Parameters passed on the stack (DW_OP_fbreg) have no entry value here.  Its bytes are
    in the target's ``byteorder``, a register's from its low-order end."""
    if not var.is_param or var.type is None:
        return None
    reg = entry_register(var)
    if reg is None or (not entry_regs and not getattr(entry_regs, "errors", None)):
        return None
    v = entry_regs.get(reg)
    if v is None:
        err = getattr(entry_regs, "errors", {}).get(reg)
        if err is None:
            return None
        vv = VarValue(var.type, byteorder=byteorder)   # GDB: x@entry=<error reading variable: ...>
        vv.var, vv.error, vv.entry_referent = var, err, None
        return vv
    t = strip_typedefs(var.type)
    if t.kind in ("ref", "rref"):
        # GDB reads a reference's entry value through DW_AT_call_data_value: without one
        # there is none; with one the referred object's entry contents go with it
        data = getattr(entry_regs, "data", {}).get(reg)
        if data is None or t.target is None:
            return None
        tsize = strip_typedefs(t.target).size or 0
        if isinstance(data, (bytes, bytearray)):
            referent = bytes(data[:tsize])
        else:
            referent = (data & ((1 << (8 * tsize)) - 1)).to_bytes(tsize, byteorder)
        if len(referent) < tsize:
            return None
    else:
        referent = None
    size = t.size or ptr_size
    if isinstance(v, (bytes, bytearray)):
        data = _low_end(v, size, byteorder)
    else:
        width = size if not isinstance(reg, int) else reg_size(reg) if reg_size is not None else ptr_size
        data = (v & ((1 << (8 * size)) - 1)).to_bytes(size, byteorder) if size <= width else b""
    if len(data) < size:
        return None
    vv = VarValue(var.type, data, byteorder=byteorder)
    vv.var = var
    vv.entry_referent = referent
    return vv


def entry_register(var):
    """Where a parameter is at its function's entry, as the call site's parameters are keyed:
    a register, ("fb", offset) on the stack at its frame base (DW_OP_fbreg, GDB's
    CALL_SITE_PARAMETER_FB_OFFSET), or None (anything else): a fact of the DWARF, kept in
    the module's cache."""
    fn = var.scope.function
    memo = fn.module.cache.memo("entry-registers")
    key = (var.node.offset, fn.entry_pc)
    if key in memo:
        return memo[key]
    reg = None
    d = fn.engine.d
    found = dies.chain_attr(d, var.node, AT_location)
    if found is not None:
        node, (form, value) = found
        expr = value
        if is_loclist(form, value):
            try:
                expr = find_location_expr(d, node.cu, form, value, fn.entry_pc, func_entry=fn.entry_pc)
            except Exception:   # a malformed location list: no entry value
                expr = None
        reg = single_register(expr)
        if reg is None:
            reg = _fbreg_offset(expr)
    return memo.put(key, reg)


def _fbreg_offset(expr):
    """("fb", offset) for a location that is exactly DW_OP_fbreg offset, else None."""
    if not expr or bytes(expr[:1]) != b"\x91":
        return None
    try:
        off, end = sleb128(bytes(expr), 1)
    except Exception:
        return None
    return ("fb", off) if end == len(expr) else None


def single_register(expr):
    """The register of a location that is exactly one DW_OP_reg*/DW_OP_regx, else None."""
    if not expr:
        return None
    expr = bytes(expr)
    if len(expr) == 1 and 0x50 <= expr[0] <= 0x6f:
        return expr[0] - 0x50
    if expr[0] == 0x90:
        try:
            r, end = uleb128(expr, 1)
        except Exception:
            return None
        return r if end == len(expr) else None
    return None
