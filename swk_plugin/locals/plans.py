"""Plans worked out once per variable (or scope and address) from DWARF alone, so a
backtrace line prints common values without the general path; kept in the module's
cache."""
from ..dwarf.encoding import sleb128
from . import dies
from .dwarfconst import AT_const_value, AT_location
from .format import _textual
from .entry import entry_register, single_register
from .locations import cfa_frame_base, find_location_expr, is_loclist
from .scopes import frame_variables
from .types import strip_typedefs, type_name


def int_on_cfa_plan(var):
    """(offset from the CFA, size, signed) when ``var`` is a plain integer (no char, bool or
    enum) living at DW_OP_fbreg N on a DW_OP_call_frame_cfa frame base, with no constant
    value; else None.  Such a variable's text is just str(int) of the bytes at CFA+N, so a
    backtrace line can print it without building a VarValue (remembered per DIE)."""
    fn = var.scope.function
    memo = fn.engine.module.cache.memo("int-plans")
    key = var.node
    plan = memo.get(key, memo)
    if plan is not memo:
        return plan
    plan = None
    try:
        d = fn.engine.d
        t = strip_typedefs(var.type) if var.type is not None else None
        if (var.loc_class == "computed" and t is not None and t.kind == "int" and t.size in (1, 2, 4, 8)
                and not _textual(var.type)    # chars (and char-like ints) print with their character
                and cfa_frame_base(fn) and dies.chain_attr(d, var.node, AT_const_value) is None):
            locr = dies.chain_attr(d, var.node, AT_location)
            if locr is not None:
                _lnode, (form, value) = locr
                if not is_loclist(form, value) and value and value[0] == 0x91:
                    off, end = sleb128(value, 1)
                    if end == len(value):
                        plan = (off, t.size, not t.unsigned)
    except Exception:
        plan = None
    return memo.put(key, plan)


def int_in_register_plan(var, addr):
    """(DWARF register, size, signed) when ``var`` is a plain integer (as int_on_cfa_plan)
    whose location at unbiased ``addr`` is that one register (DW_OP_regN, DW_OP_regx), as
    at -O2 for most scalars; else None.  Its text is str(int) of the register's low bytes."""
    try:
        fn = var.scope.function
        d = fn.engine.d
        t = strip_typedefs(var.type) if var.type is not None else None
        if not (var.loc_class == "computed" and t is not None and t.kind == "int" and t.size in (1, 2, 4, 8)
                and not _textual(var.type) and dies.chain_attr(d, var.node, AT_const_value) is None):
            return None
        locr = dies.chain_attr(d, var.node, AT_location)
        if locr is None:
            return None
        lnode, (form, value) = locr
        expr = find_location_expr(d, lnode.cu, form, value, addr, fn.entry_pc) if is_loclist(form, value) \
            else value
        reg = single_register(expr)
        return (reg, t.size, not t.unsigned) if reg is not None else None
    except Exception:
        return None


def var_plans(module, scope, addr):
    """([(Variable, plan or None, type name)], same for locals) of a scope at an unbiased
    address, worked out once: they depend only on the module's DWARF.  A plan is ("cfa",
    offset, size, signed, entry) (int_on_cfa_plan) or ("reg", register, size, signed, entry)
    (int_in_register_plan); ``entry`` is where a parameter's entry value is keyed
    (entry_register), None for locals."""
    memo = module.cache.memo("var-plans")
    key = (scope, addr)
    hit = memo.get(key)
    if hit is None:
        args, locals_ = frame_variables(scope, addr)

        def plan(var):
            # a parameter also says where its entry value is keyed: a register, or ("fb", N)
            # for one passed on the stack (its call site's DW_OP_breg<sp> N)
            entry = entry_register(var) if var.is_param else None
            p = int_on_cfa_plan(var)
            if p is not None:
                p = ("cfa", *p, entry)
            else:
                p = int_in_register_plan(var, addr)
                if p is not None:
                    p = ("reg", *p, entry)
            return var, p, (type_name(var.type) if p is not None else None)
        hit = memo.put(key, ([plan(v) for v in args], [plan(v) for v in locals_]))
    return hit
