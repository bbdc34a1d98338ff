"""The one DWARF expression evaluator (DWARF 2-5 and the GNU extensions GDB 13 evaluates),
for CFI rules (DW_CFA_*expression), variables' locations and call sites' values alike.

Its parts, named after the format's own terms: exprvalues (the stack's values: generic
ints, base-typed TypedValues, and ExprResult, the location an expression describes),
exprmachine (the machine's state, its opcode table and loop), exprops (the operations
on the stack, DWARF 5 section 2.5: one small handler each), exprlocs (location
descriptions, section 2.6: registers, implicit values, pieces), exprerrors (a class
per reason an evaluation fails).  Here: ``evaluate``, which runs one expression.
"""
from .exprerrors import (ContextUnavailable, DivisionByZero, EntryValueUnavailable, ExprError,  # noqa: F401
                         LoopDetected, MalformedExpression, RegisterUnavailable, StackUnderflow, StepLimit,
                         TypeMismatch, Unavailable, UnhandledOpcode)
from . import exprlocs, exprops  # noqa: F401  (they fill the opcode table)
from .exprmachine import MAX_NESTING, OP_NAMES, Machine, run
from .exprvalues import BaseType, ExprResult, to_bytes

__all__ = ["evaluate", "ExprResult", "ExprError", "OP_NAMES", "BaseType", "MAX_NESTING", "StackUnderflow",
           "UnhandledOpcode", "MalformedExpression", "TypeMismatch", "DivisionByZero", "LoopDetected",
           "StepLimit", "Unavailable", "RegisterUnavailable", "EntryValueUnavailable", "ContextUnavailable"]


#: evaluate()'s keywords for what only some expressions need: {keyword: Machine attribute}.
CONTEXT = {"frame_base": "frame_base", "cfa": "cfa", "max_steps": "max_steps", "entry_value": "entry_value",
           "addr_base_lookup": "addr_lookup", "const_lookup": "const_lookup", "base_type": "base_type", "tls_address": "tls_address",
           "ref_size": "ref_size", "read_reg_bytes": "read_reg_bytes", "object_address": "object_address",
           "variable_value": "variable_value", "parameter_ref": "parameter_ref", "procedure": "procedure"}


def evaluate(expr, *, read_reg=None, read_mem=None, ptr_size=8, initial_stack=(), byteorder="little", **context):
    """Run ``expr`` and return the ExprResult it describes.

    The frame's state comes through hooks, each None where the caller has none (an
    operation needing a missing one raises ContextUnavailable): read_reg(regno) -> int
    (None: unavailable) and read_mem(addr, size) -> bytes; ``initial_stack`` (CFI's
    CFA for a register's rule); ``byteorder``: the target's, which is also its files'
    (operands, and the words memory is read as).  What only some expressions need
    comes as further keywords (``context``, CONTEXT's names; the CFI path passes none):

    frame_base, cfa: ints or zero-argument callables (called only if asked for);
    read_reg_bytes(regno) -> a register's bytes (DW_OP_regval_type of a vector or x87
    register); entry_value(block) -> int or a register's bytes (DW_OP_entry_value);
    parameter_ref(unit offset) -> int (DW_OP_GNU_parameter_ref); addr_base_lookup(index)
    -> int (DW_OP_addrx/constx); const_lookup(index) -> int (DW_OP_constx, DW_OP_GNU_const_index:
    the entry unrelocated, a thread-local variable's offset; addr_base_lookup's where not given); base_type(unit offset) -> BaseType or (size, kind)
    (typed operations; without it they act on generic values, as CFI needs);
    tls_address(offset) -> the address at that offset in the module's TLS block in the
    frame's thread; ref_size: the unit's DIE-reference size (DW_OP_implicit_pointer,
    DW_OP_GNU_variable_value); variable_value(.debug_info offset) -> int;
    procedure(unit offset) -> a DIE's location expression (DW_OP_call2/4);
    object_address (DW_OP_push_object_address); max_steps: jumps back allowed.

    Failures raise an ExprError subclass (exprerrors); unreadable memory raises
    MemoryReadError; an ExprError or other SwkError a hook raises passes unchanged.
    """
    m = Machine([v & ((1 << (8 * ptr_size)) - 1) for v in initial_stack] if initial_stack else [],
                ptr_size, byteorder)
    if read_reg is not None:
        m.read_reg = read_reg
    if read_mem is not None:
        m.read_mem = read_mem
    if context:
        for key, v in context.items():
            attr = CONTEXT.get(key)
            if attr is None:
                raise TypeError(f"evaluate() got an unexpected keyword argument {key!r}")
            if v is not None:
                setattr(m, attr, v)
    run(m, expr)
    return result(m)


def result(m):
    """The location machine ``m`` describes once its expression has run."""
    if m.pieces:
        if m.loc is not None:
            raise MalformedExpression("location after the last DW_OP_piece has no piece size")
        return ExprResult("pieces", None, m.pieces)
    if m.loc is not None:
        return m.loc
    if m.stack:
        v = m.stack[-1]
        if type(v) is int:
            return ExprResult("memory", v)
        return ExprResult("implicit", to_bytes(v, ptr_size=m.ptr_size, order=m.order))
    return ExprResult("empty")
