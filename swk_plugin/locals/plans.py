"""Plans worked out once per variable (or scope and address) from DWARF alone, so a
backtrace line prints common values without the general path; kept in the module's
cache."""
from ..dwarf.encoding import sleb128, uleb128
from . import dies
from .dwarfconst import AT_const_value, AT_location
from .format import _textual
from .entry import entry_register, single_register
from .locations import _const_bytes, cfa_frame_base, find_location_expr, is_loclist
from .scopes import frame_variables
from .types import strip_typedefs, type_name

#: plain_kind's words for pointers: a data pointer (its hex and <symbol>), one to an
#: aggregate (the same, unless a debugger's printers take such pointers), a function pointer
#: (its hex and <function>, whatever `print symbol` says).
PTR, PTR_AGGREGATE, FUNC_PTR = "ptr", "ptr-aggregate", "func-ptr"
POINTERS = (PTR, PTR_AGGREGATE, FUNC_PTR)
#: plain_kind's word for a bool (true, false, or its number).
BOOL = "bool"


def plain_kind(t):
    """How a value of type ``t`` prints from its bytes alone, or None: True / False for a
    signed / unsigned integer (no char or enum: str(int)), BOOL for a one-byte bool, PTR /
    PTR_AGGREGATE / FUNC_PTR for a pointer to anything but characters."""
    s = strip_typedefs(t) if t is not None else None
    if s is None:
        return None
    if s.kind == "int" and s.size in (1, 2, 4, 8) and not _textual(t):
        return not s.unsigned
    if s.kind == "bool" and s.size == 1:
        return BOOL
    if s.kind == "ptr" and s.size in (4, 8):
        target = strip_typedefs(s.target) if s.target is not None else None
        if target is None:
            return PTR                                  # void *
        if target.kind == "func":
            return FUNC_PTR
        if _textual(s.target):
            return None                                 # prints the string too
        return PTR_AGGREGATE if target.kind in ("struct", "union", "array") else PTR
    return None


def int_on_cfa_plan(var):
    """(offset from the CFA, size, kind) when ``var`` is a plain integer or pointer (kind:
    plain_kind's) living at DW_OP_fbreg N on a DW_OP_call_frame_cfa frame base, with no
    constant value; else None.  Such a variable's text is made from the bytes at CFA+N alone,
    so a backtrace line can print it without building a VarValue (remembered per DIE)."""
    fn = var.scope.function
    memo = fn.engine.module.cache.memo("int-plans")
    key = var.node
    plan = memo.get(key, memo)
    if plan is not memo:
        return plan
    plan = None
    try:
        d = fn.engine.d
        kind = plain_kind(var.type)
        if (var.loc_class == "computed" and kind is not None
                and cfa_frame_base(fn) and dies.chain_attr(d, var.node, AT_const_value) is None):
            locr = dies.chain_attr(d, var.node, AT_location)
            if locr is not None:
                _lnode, (form, value) = locr
                if not is_loclist(form, value) and value and value[0] == 0x91:
                    off, end = sleb128(value, 1)
                    if end == len(value):
                        plan = (off, strip_typedefs(var.type).size, kind)
    except Exception:
        plan = None
    return memo.put(key, plan)


def located_plan(var, addr):
    """A plain integer's or pointer's (as int_on_cfa_plan) plan from its location at unbiased
    ``addr``, or None: ("reg", register, size, kind) where it is that one register
    (DW_OP_regN, DW_OP_regx: at -O2 most scalars), ("cfa", offset, size, kind) where it is
    DW_OP_fbreg N on a DW_OP_call_frame_cfa frame base (a location list's entry too), ("entry",
    register, size, kind) where it is that register's value on entry to the function
    (DW_OP_entry_value(DW_OP_regN) DW_OP_stack_value: a parameter a call clobbered, printed
    ``x=x@entry=V`` from the caller's call site), ("const", value, size, kind) for a constant
    (DW_AT_const_value, DW_OP_litN DW_OP_stack_value)."""
    try:
        fn = var.scope.function
        d = fn.engine.d
        kind = plain_kind(var.type)
        if kind is None:
            return None
        size = strip_typedefs(var.type).size
        cvr = dies.chain_attr(d, var.node, AT_const_value)
        if cvr is not None:                                           # a constant: its bytes
            data = _const_bytes(d, cvr[0].cu, cvr[1], size, d.byteorder)
            return ("const", int.from_bytes(data[:size], d.byteorder), size, kind) \
                if data is not None and len(data) >= size else None
        if var.loc_class != "computed":
            return None
        locr = dies.chain_attr(d, var.node, AT_location)
        if locr is None:
            return None
        lnode, (form, value) = locr
        expr = find_location_expr(d, lnode.cu, form, value, addr, fn.entry_pc) if is_loclist(form, value) \
            else value
        if not expr:
            return None
        expr = bytes(expr)
        reg = single_register(expr)
        if reg is not None:
            return ("reg", reg, size, kind)
        if expr[0] == 0x91 and cfa_frame_base(fn):                    # DW_OP_fbreg N
            off, end = sleb128(expr, 1)
            return ("cfa", off, size, kind) if end == len(expr) else None
        if len(expr) == 2 and 0x30 <= expr[0] <= 0x4f and expr[1] == 0x9f:   # DW_OP_litN DW_OP_stack_value
            return ("const", expr[0] - 0x30, size, kind)
        if expr[0] == 0xa3 and expr[-1] == 0x9f:                      # DW_OP_entry_value ... DW_OP_stack_value
            n, start = uleb128(expr, 1)
            if start + n == len(expr) - 1:
                reg = single_register(expr[start:start + n])
                return ("entry", reg, size, kind) if reg is not None else None
        return None
    except Exception:
        return None


def var_plans(module, scope, addr, args_only=False):
    """([(Variable, plan or None, type name)], same for locals) of a scope at an unbiased
    address, worked out once: they depend only on the module's DWARF.  A plan is ("cfa",
    offset, size, kind, entry) (int_on_cfa_plan), or located_plan's ("reg" | "cfa" |
    "entry", ..., size, kind) with ``entry``, kind as plain_kind says; ``entry`` is where a
    parameter's entry value is keyed (entry_register), None for locals (an "entry" plan is
    made only where that is the register its location names, or nothing: an inlined call's
    parameter, whose entry value is its frame's).  ``args_only``: the locals' plans (their
    types and location lists: a frame line shows none of them) are left unmade, () given."""
    memo = module.cache.memo("var-plans")
    key = (scope, addr)
    hit = memo.get(key)
    if hit is None:
        args, locals_ = frame_variables(scope, addr)
        hit = memo.put(key, [[_plan(v, addr) for v in args], locals_, None])
    if args_only:
        return hit[0], ()
    if hit[2] is None:
        hit[2] = [_plan(v, addr) for v in hit[1]]
    return hit[0], hit[2]


def _plan(var, addr):
    # a parameter also says where its entry value is keyed: a register, or ("fb", N)
    # for one passed on the stack (its call site's DW_OP_breg<sp> N)
    entry = entry_register(var) if var.is_param else None
    p = int_on_cfa_plan(var)
    if p is not None:
        p = ("cfa", *p, entry)
    else:
        p = located_plan(var, addr)
        if p is not None:
            # the value on entry of a parameter keyed elsewhere: the general path
            p = None if p[0] == "entry" and entry not in (None, p[1]) else (*p, entry)
    return var, p, (type_name(var.type) if p is not None else None)
