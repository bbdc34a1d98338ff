"""Location descriptions (DWARF 5 section 2.6): where an object is when it is not at
the address left on the stack (a register, a computed value, literal bytes, a pointer
with no address) and objects in pieces.  Handlers registered in exprmachine's table;
GDB 13's rules (dwarf_expr_require_composition, add_piece).
"""
from .encoding import read_uint, sleb128, uleb128
from .exprerrors import ContextUnavailable, MalformedExpression
from .exprmachine import handles, op_name
from .exprvalues import ExprResult, to_bytes

__all__ = ["take_location"]

_PIECE, _BIT_PIECE, _UNINIT = 0x93, 0x9D, 0xF0


# --- locations --------------------------------------------------------------------------------------

def _alone(code, pos, name):
    """GDB's dwarf_expr_require_composition: only a piece (or DW_OP_GNU_uninit) may follow."""
    if pos < len(code) and code[pos] not in (_PIECE, _BIT_PIECE, _UNINIT):
        raise MalformedExpression(f"DWARF-2 expression error: `{name}' operations must be used either alone "
                                  "or in conjunction with DW_OP_piece or DW_OP_bit_piece.")


@handles(*range(0x50, 0x70))
def _reg(m, op, code, pos):
    _alone(code, pos, "DW_OP_reg")
    m.loc = ExprResult("register", op - 0x50)
    return pos


@handles(0x90)
def _regx(m, op, code, pos):
    r, pos = uleb128(code, pos)
    _alone(code, pos, "DW_OP_regx")
    m.loc = ExprResult("register", r)
    return pos


@handles(0x9E)
def _implicit_value(m, op, code, pos):
    size, pos = uleb128(code, pos)
    if pos + size > len(code):
        raise MalformedExpression("DW_OP_implicit_value: too few bytes available.")
    m.loc = ExprResult("implicit", bytes(code[pos:pos + size]))
    pos += size
    _alone(code, pos, "DW_OP_implicit_value")
    return pos


@handles(0x9F)
def _stack_value(m, op, code, pos):
    _alone(code, pos, "DW_OP_stack_value")
    v = m.stack.pop()
    m.loc = ExprResult("value", v) if type(v) is int else \
        ExprResult("implicit", to_bytes(v, m.ptr_size, m.order))
    return pos


@handles(0xA0, 0xF2)
def _implicit_pointer(m, op, code, pos):
    """A pointer with no address: (DIE offset, byte offset), which only the variable
    reader resolves; it needs the unit's DIE-reference size."""
    if m.ref_size is None:
        raise ContextUnavailable(f"{op_name(op)}: no unit to read its DIE reference in")
    die, pos = read_uint(code, pos, m.ref_size, m.order)
    off, pos = sleb128(code, pos)
    _alone(code, pos, "DW_OP_implicit_pointer")
    m.loc = ExprResult("synthetic", (die, off))
    return pos


@handles(0xF0)
def _uninit(m, op, code, pos):
    if pos != len(code):
        raise MalformedExpression("DWARF-2 expression error: DW_OP_GNU_uninit must always be the very last op.")
    return pos


def take_location(m):
    """The location a piece describes: the pending one, else the top of the stack (a typed
    value: its bytes), else nothing (an optimized-out piece)."""
    loc = m.loc
    if loc is not None:
        m.loc = None
        return loc
    if m.stack:
        v = m.stack.pop()
        if type(v) is int:
            return ExprResult("memory", v)
        return ExprResult("implicit", to_bytes(v, m.ptr_size, m.order))
    return ExprResult("empty")


@handles(_PIECE)
def _piece(m, op, code, pos):
    size, pos = uleb128(code, pos)
    part = take_location(m)
    part.bit_size = size * 8
    if m.pieces is None:
        m.pieces = []
    m.pieces.append((part, size))
    return pos


@handles(_BIT_PIECE)
def _bit_piece(m, op, code, pos):
    size, pos = uleb128(code, pos)
    offset, pos = uleb128(code, pos)
    part = take_location(m)
    part.bit_size = size
    part.bit_offset = offset
    if m.pieces is None:
        m.pieces = []
    m.pieces.append((part, (size + 7) // 8))
    return pos
