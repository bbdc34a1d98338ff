"""The DWARF expression machine: its state, its opcode table, and the loop that runs it.

Each handler takes the Machine, its opcode, the expression and the position after the
opcode, and returns the position after its operands.  The table covers every operation
GDB 13's dwarf2/expr.c evaluates, with its semantics; the ones it does not
(DW_OP_xderef*, DW_OP_call_ref) are its "Unhandled" error.
"""
from ..errors import read_exact
from .encoding import DecodeError
from .exprerrors import (ContextUnavailable, MalformedExpression, RegisterUnavailable, StackUnderflow,
                         TypeMismatch, UnhandledOpcode)
from .exprvalues import INTEGRAL, BaseType

__all__ = ["Machine", "run", "HANDLERS", "handles", "OP_NAMES", "op_name", "MAX_NESTING"]

#: GDB's m_max_recursion_depth: expressions nested deeper than this (DW_OP_call2/4, and
#: the locals' chains of entry values) are "Loop detected".
MAX_NESTING = 0x100

OP_NAMES = {
    0x03: "addr", 0x06: "deref", 0x08: "const1u", 0x09: "const1s", 0x0A: "const2u",
    0x0B: "const2s", 0x0C: "const4u", 0x0D: "const4s", 0x0E: "const8u", 0x0F: "const8s",
    0x10: "constu", 0x11: "consts", 0x12: "dup", 0x13: "drop", 0x14: "over", 0x15: "pick",
    0x16: "swap", 0x17: "rot", 0x18: "xderef", 0x19: "abs", 0x1A: "and", 0x1B: "div",
    0x1C: "minus", 0x1D: "mod", 0x1E: "mul", 0x1F: "neg", 0x20: "not", 0x21: "or",
    0x22: "plus", 0x23: "plus_uconst", 0x24: "shl", 0x25: "shr", 0x26: "shra", 0x27: "xor",
    0x28: "bra", 0x29: "eq", 0x2A: "ge", 0x2B: "gt", 0x2C: "le", 0x2D: "lt", 0x2E: "ne",
    0x2F: "skip", 0x90: "regx", 0x91: "fbreg", 0x92: "bregx", 0x93: "piece",
    0x94: "deref_size", 0x95: "xderef_size", 0x96: "nop", 0x97: "push_object_address",
    0x98: "call2", 0x99: "call4", 0x9A: "call_ref", 0x9B: "form_tls_address",
    0x9C: "call_frame_cfa", 0x9D: "bit_piece", 0x9E: "implicit_value", 0x9F: "stack_value",
    0xA0: "implicit_pointer", 0xA1: "addrx", 0xA2: "constx", 0xA3: "entry_value",
    0xA4: "const_type", 0xA5: "regval_type", 0xA6: "deref_type", 0xA7: "xderef_type",
    0xA8: "convert", 0xA9: "reinterpret",
    0xE0: "GNU_push_tls_address", 0xF0: "GNU_uninit", 0xF1: "GNU_encoded_addr",
    0xF2: "GNU_implicit_pointer", 0xF3: "GNU_entry_value", 0xF4: "GNU_const_type",
    0xF5: "GNU_regval_type", 0xF6: "GNU_deref_type", 0xF7: "GNU_convert",
    0xF9: "GNU_reinterpret", 0xFA: "GNU_parameter_ref", 0xFB: "GNU_addr_index",
    0xFC: "GNU_const_index", 0xFD: "GNU_variable_value",
}
for _i in range(32):
    OP_NAMES[0x30 + _i] = f"lit{_i}"
    OP_NAMES[0x50 + _i] = f"reg{_i}"
    OP_NAMES[0x70 + _i] = f"breg{_i}"
del _i

_PIECE, _BIT_PIECE = 0x93, 0x9D


def op_name(op):
    return "DW_OP_" + OP_NAMES.get(op, f"0x{op:02x}") if op is not None else "DW_OP"


class Machine:
    """One evaluation's state: the stack, the location being built, the frame's hooks.
    A hook the caller has none for stays None (the class's), and an operation that needs
    it fails with ContextUnavailable; a hook that returns None has no value (a register
    not recovered: RegisterUnavailable); what a hook raises is its caller's and passes
    unchanged (the locals' own "optimized out" goes back to them as it was raised)."""
    read_reg = read_reg_bytes = read_mem = frame_base = cfa = entry_value = addr_lookup = const_lookup = None
    base_type = tls_address = ref_size = object_address = variable_value = parameter_ref = None
    procedure = None
    max_steps = 10000
    loc = None              # a pending location that is not memory (register, value...)
    pieces = None
    steps = 0               # backward jumps so far
    depth = 0               # DW_OP_call2/4 nesting

    def __init__(self, stack, ptr_size, order):
        self.stack = stack
        self.ptr_size = ptr_size
        self.mask = (1 << (8 * ptr_size)) - 1
        self.order = order

    @property
    def bits(self):
        return 8 * self.ptr_size

    def reg(self, r, op):
        """Register ``r``'s value as a generic (address-sized) value."""
        hook = self.read_reg
        if hook is None:
            raise ContextUnavailable(f"{_gdb_name(op)} evaluation requires a frame.")
        v = hook(r)
        if v is None:
            raise RegisterUnavailable(r)
        return v & self.mask

    def reg_bytes(self, r, op):
        """Register ``r``'s contents (all of them: a vector register's, an x87 one's)."""
        hook = self.read_reg_bytes
        if hook is None:
            return self.reg(r, op).to_bytes(self.ptr_size, self.order)
        b = hook(r)
        if b is None:
            raise RegisterUnavailable(r)
        return bytes(b)

    def load(self, addr, size, op):
        """``size`` bytes of target memory at ``addr``; MemoryReadError if unreadable."""
        if self.read_mem is None:
            raise ContextUnavailable(f"{op_name(op)}: memory is not available")
        return read_exact(self.read_mem, addr, size)

    def base(self, die, op):
        """The base type at unit offset ``die`` (0: the generic type, None); None too
        when the caller gives no types (CFI: typed operations act on generic values)."""
        if die == 0 or self.base_type is None:
            return None
        t = self.base_type(die)
        if t is None:
            raise MalformedExpression(f"{op_name(op)}: no base type at DIE 0x{die:x}")
        return t if isinstance(t, BaseType) else BaseType(*t)

    def address(self, v):
        """A stack value used as an address (GDB's fetch_address: integral types only)."""
        if type(v) is int:
            return v
        if v.type.kind == "float":
            raise TypeMismatch(INTEGRAL)
        return v.value & self.mask

    def call(self, hook, what, op, *args):
        """A value a hook computes; ContextUnavailable without one or if it has none."""
        if hook is None:
            raise ContextUnavailable(f"{op_name(op)}: {what} is unknown")
        v = hook(*args)
        if v is None:
            raise ContextUnavailable(f"{op_name(op)}: {what} is unknown")
        return v


def _gdb_name(op):
    """The name GDB's messages give a register operation (DW_OP_breg for all 32)."""
    return "DW_OP_breg" if 0x70 <= op <= 0x8F else op_name(op)


def run(m, code):
    """Run ``code`` on machine ``m`` (its stack and location carry over: DW_OP_call*).
    A handler reads its operands with encoding's readers (DecodeError when truncated),
    so an IndexError it raises itself is the stack's; one raised deeper (in a caller's
    hook) is the caller's and passes unchanged."""
    handlers = HANDLERS
    n = len(code)
    pos = 0
    op = None
    try:
        while pos < n:
            op = code[pos]
            pos = handlers[op](m, op, code, pos + 1)
    except IndexError as exc:
        if _raised_below_handler(exc):
            raise
        raise _underflow(m, op) from None
    except DecodeError as exc:
        if _raised_below_handler(exc, 1):
            raise
        raise MalformedExpression(f"{op_name(op)}: truncated operand at offset {pos}") from None


def _raised_below_handler(exc, allowed=0):
    """Whether ``exc`` was raised more than ``allowed`` calls below the handler run()
    called (encoding's readers are one call below it)."""
    tb = exc.__traceback__.tb_next          # the handler's frame
    for _ in range(allowed + 1):
        if tb is None:
            return False
        tb = tb.tb_next
    return tb is not None


def _underflow(m, op):
    """GDB's message for an operation that found too few stack entries."""
    depth = len(m.stack)
    if op in (0x13, _PIECE, _BIT_PIECE):
        return StackUnderflow.popping()
    if op == 0x16:
        return StackUnderflow.needing("DW_OP_swap", 2, depth)
    if op == 0x17:
        return StackUnderflow.needing("DW_OP_rot", 3, depth)
    return StackUnderflow.fetching(1 if op == 0x14 else 0, depth)


def _unhandled(m, op, code, pos):
    raise UnhandledOpcode(op)


#: The opcode table: HANDLERS[op](machine, op, code, position after op) -> position after
#: its operands.  exprops (DWARF 5 section 2.5, operations on the stack) and exprlocs
#: (section 2.6, location descriptions) fill it; what neither handles is GDB's "Unhandled".
HANDLERS = [_unhandled] * 256


def handles(*ops):
    """Register the decorated function as the handler of ``ops``."""
    def register(fn):
        for op in ops:
            HANDLERS[op] = fn
        return fn
    return register
