"""The values on a DWARF expression's stack (DWARF 5 section 2.5.1, "the generic type").

A value of the generic type (an address-sized integer: what every DWARF 2-4 operation,
every CFI expression and most locations compute) is a plain Python int, kept unsigned
in [0, 2**bits): that is the fast path, CFI pays nothing for typed values.  A value of
a base type (DW_OP_const_type, regval_type, deref_type, convert: what GCC writes to
compute a double at -O2) is a TypedValue: a Python int in its type's range (negative
for a signed type) or a float.

Arithmetic follows GDB 13 (dwarf2/expr.c over valarith.c), since swk's values are
compared with GDB's: the generic type is GDB's "<signed DWARF address type>" (division,
comparisons and DW_OP_shra signed; DW_OP_mod and DW_OP_shr unsigned), two operands
must have the same base type, a shift by the type's width or more gives 0, a
modulus by zero is the dividend, an integer division by zero is an error.
"""
import math
import struct
from collections import namedtuple

from .exprerrors import DivisionByZero, TypeMismatch

__all__ = ["ExprResult", "BaseType", "TypedValue", "binary", "compare", "unary", "convert", "reinterpret",
           "from_bytes", "to_bytes", "as_integer"]


class BaseType(namedtuple("BaseType", "size kind")):
    """A DW_TAG_base_type as the stack machine sees it: ``size`` in bytes and ``kind``,
    "signed", "unsigned" or "float".  Two types are the same when both agree (GDB's
    base_types_equal_p: code, signedness, length)."""
    __slots__ = ()

    @property
    def is_float(self):
        return self.kind == "float"


class TypedValue:
    """A stack value of a base type: ``value`` an int in the type's range or a float."""
    __slots__ = ("value", "type")

    def __init__(self, value, btype):
        self.value = value
        self.type = btype

    def __repr__(self):
        return f"TypedValue({self.value!r}, {self.type.size}, {self.type.kind})"

    def __eq__(self, other):
        return isinstance(other, TypedValue) and (self.value, self.type) == (other.value, other.type)


class ExprResult:
    """What an expression describes (DWARF 5 section 2.6, location descriptions).

    kind: 'memory' (value = address), 'value' (DW_OP_stack_value: value = int),
    'register' (DW_OP_regN/regx: value = DWARF register number), 'implicit'
    (DW_OP_implicit_value, or a typed value left on the stack: value = bytes),
    'synthetic' (DW_OP_implicit_pointer: value = (DIE offset, byte offset)),
    'pieces' (pieces = [(ExprResult, size_bytes)]), 'empty' (no location: the
    object is optimized out, or an empty piece).  Pieces also carry
    bit_size/bit_offset (DW_OP_bit_piece; size_bytes rounds up).
    """
    __slots__ = ("kind", "value", "pieces", "bit_size", "bit_offset")

    def __init__(self, kind, value=None, pieces=None):
        self.kind = kind
        self.value = value
        self.pieces = pieces if pieces is not None else []
        self.bit_size = None
        self.bit_offset = 0

    def __repr__(self):
        if self.kind == "pieces":
            return f"ExprResult(pieces={self.pieces!r})"
        v = f"0x{self.value:x}" if isinstance(self.value, int) and self.kind != "register" else repr(self.value)
        return f"ExprResult({self.kind}, {v})"

    def __eq__(self, other):
        if not isinstance(other, ExprResult):
            return NotImplemented
        return (self.kind, self.value, self.pieces, self.bit_size, self.bit_offset) == \
            (other.kind, other.value, other.pieces, other.bit_size, other.bit_offset)


INTEGRAL = "integral type expected in DWARF expression"          # GDB's words
INCOMPATIBLE = "Incompatible types on DWARF stack"
FLOAT_ONLY = "Integer-only operation on floating point number."


def wrap(v, size, signed):
    """``v`` reduced to a ``size``-byte integer, two's complement when ``signed``."""
    bits = 8 * size
    v &= (1 << bits) - 1
    if signed and v >> (bits - 1):
        v -= 1 << bits
    return v


def typed(v, btype):
    """A TypedValue of ``btype`` holding ``v`` (an int or a float) as the type stores it."""
    if btype.kind == "float":
        v = float(v)
        if btype.size == 4:
            try:
                v = struct.unpack("<f", struct.pack("<f", v))[0]
            except OverflowError:
                v = math.copysign(math.inf, v)
        return TypedValue(v, btype)
    if isinstance(v, float):
        v = _trunc(v)
    return TypedValue(wrap(v, btype.size, btype.kind == "signed"), btype)


def _trunc(f):
    """A float converted to an integer as C does (toward zero); inf and nan as 0."""
    return 0 if math.isinf(f) or math.isnan(f) else int(f)


# --- bytes -----------------------------------------------------------------------------------

#: {byte order: {size: struct format}} of IEEE single and double.
_FLOAT_FMT = {"little": {4: "<f", 8: "<d"}, "big": {4: ">f", 8: ">d"}}


def from_bytes(data, btype, order):
    """The value of ``btype`` whose bytes (in the target's ``order``) are ``data``;
    a float of 10, 12 or 16 bytes is x87's extended format (little-endian, its own)."""
    size = btype.size
    if btype.kind != "float":
        return TypedValue(int.from_bytes(data[:size], order, signed=btype.kind == "signed"), btype)
    fmt = _FLOAT_FMT[order].get(size)
    if fmt is not None:
        return TypedValue(struct.unpack(fmt, bytes(data[:size]))[0], btype)
    if size in (10, 12, 16):
        raw = int.from_bytes(data[:10], "little")
        mant = raw & ((1 << 64) - 1)
        exp = (raw >> 64) & 0x7FFF
        sign = -1.0 if raw >> 79 else 1.0
        if exp == 0x7FFF:
            return TypedValue(sign * math.inf if not (mant << 1) & ((1 << 64) - 1) else math.nan, btype)
        return TypedValue(sign * mant * 2.0 ** ((exp or 1) - 16383 - 63), btype)
    raise TypeMismatch(f"typed DWARF value of float size {size}")


def to_bytes(v, ptr_size, order):
    """A stack value's bytes in the target's ``order`` (a generic one's address-sized)."""
    if type(v) is int:
        return (v & ((1 << (8 * ptr_size)) - 1)).to_bytes(ptr_size, order)
    size = v.type.size
    if v.type.kind != "float":
        return (v.value & ((1 << (8 * size)) - 1)).to_bytes(size, order)
    fmt = _FLOAT_FMT[order].get(size)
    if fmt is not None:
        return struct.pack(fmt, v.value)
    if size in (10, 12, 16):
        return _x87_bytes(v.value) + bytes(size - 10)
    raise TypeMismatch(f"typed DWARF value of float size {size}")


def _x87_bytes(f):
    """``f`` in x87's 80-bit extended format (a double's value: exact)."""
    if f == 0:
        raw = (1 << 79) if math.copysign(1.0, f) < 0 else 0
    elif math.isinf(f):
        raw = ((1 if f < 0 else 0) << 79) | (0x7FFF << 64) | (1 << 63)
    elif math.isnan(f):
        raw = (0x7FFF << 64) | (3 << 62)
    else:
        m, e = math.frexp(abs(f))                   # f = m * 2**e, 0.5 <= m < 1
        raw = ((1 if f < 0 else 0) << 79) | ((e - 1 + 16383) << 64) | int(m * (1 << 64))
    return raw.to_bytes(10, "little")


# --- operations --------------------------------------------------------------------------------

def _operands(a, b, bits):
    """(a, b, type) of two stack values GDB would combine: the same base type (a generic
    value is a signed address-sized integer, so it matches that one base type only)."""
    ta = a.type if type(a) is not int else None
    tb = b.type if type(b) is not int else None
    if ta != tb:
        generic = BaseType(bits // 8, "signed")
        if (ta or generic) != (tb or generic):
            raise TypeMismatch(INCOMPATIBLE)
    av = a.value if ta is not None else _signed(a, bits)
    bv = b.value if tb is not None else _signed(b, bits)
    return av, bv, ta


def _signed(v, bits):
    return v - (1 << bits) if v >> (bits - 1) else v


def as_integer(v, bits):
    """GDB's value_as_long: an integer (a generic value signed, a float truncated)."""
    if type(v) is int:
        return _signed(v, bits)
    return _trunc(v.value) if v.type.kind == "float" else v.value


def _require_integral(*types):
    for t in types:
        if t is not None and t.kind == "float":
            raise TypeMismatch(INTEGRAL)


def _result(v, t, mask):
    """An operation's result of type ``t`` (None: generic)."""
    return v & mask if t is None else typed(v, t)


def binary(name, a, b, bits):
    """The result of DW_OP_``name`` (plus, minus, mul, div, mod, and, or, xor, shl, shr,
    shra) on stack values ``a`` (deeper) and ``b`` (top), one of them typed."""
    mask = (1 << bits) - 1
    av, bv, t = _operands(a, b, bits)
    is_float = t is not None and t.kind == "float"
    if name == "plus":
        return _result(av + bv, t, mask)
    if name == "minus":
        return _result(av - bv, t, mask)
    if name == "mul":
        return _result(av * bv, t, mask)
    if name == "div":
        if is_float:
            return typed(_float_div(av, bv), t)
        if bv == 0:
            raise DivisionByZero()
        q = abs(av) // abs(bv)
        return _result(-q if (av < 0) != (bv < 0) else q, t, mask)
    if is_float:
        raise TypeMismatch(FLOAT_ONLY if name == "mod" else INTEGRAL)
    if name == "mod":
        if t is None:                       # "old-style untyped values": unsigned
            av, bv = av & mask, bv & mask
        return _result(av if bv == 0 else av % bv, t, mask)
    if name == "and":
        return _result(av & bv, t, mask)
    if name == "or":
        return _result(av | bv, t, mask)
    if name == "xor":
        return _result(av ^ bv, t, mask)
    width = 8 * t.size if t is not None else bits
    if bv < 0 or bv >= width:               # GDB 13 warns and gives 0
        return _result(0, t, mask)
    if name == "shl":
        return _result(av << bv, t, mask)
    if name == "shr":
        return _result((av & ((1 << width) - 1)) >> bv, t, mask)
    if name == "shra":
        return _result(_signed(av & ((1 << width) - 1), width) >> bv, t, mask)
    raise AssertionError(name)


def _float_div(a, b):
    if b == 0:
        if a == 0 or a != a:
            return math.nan
        return -math.inf if (math.copysign(1.0, a) < 0) != (math.copysign(1.0, b) < 0) else math.inf
    return a / b


def compare(name, a, b, bits):
    """DW_OP_eq/ne/lt/gt/le/ge on ``a`` (deeper) and ``b`` (top): 1 or 0, generic."""
    av, bv, _t = _operands(a, b, bits)
    if name == "eq":
        return int(av == bv)
    if name == "ne":
        return int(av != bv)
    if name == "lt":
        return int(av < bv)
    if name == "gt":
        return int(av > bv)
    if name == "le":
        return int(av <= bv)
    return int(av >= bv)


def unary(name, v, bits):
    """DW_OP_abs/neg/not of a typed value (generic ones never come here)."""
    t = v.type
    if name == "abs":
        return typed(-v.value, t) if v.value < 0 else v
    if name == "neg":
        return typed(-v.value, t)
    _require_integral(t)
    return typed(~v.value, t)


def convert(v, btype, bits):
    """DW_OP_convert: ``v`` as a value of ``btype`` (None: the generic type), by value."""
    x = v.value if type(v) is not int else _signed(v, bits)
    if btype is None:
        return (_trunc(x) if isinstance(x, float) else x) & ((1 << bits) - 1)
    return typed(x, btype)


def reinterpret(v, btype, ptr_size, order):
    """DW_OP_reinterpret: the same bytes read as ``btype`` (None: the generic type); GDB
    refuses a type of another size."""
    src = v.type if type(v) is not int else None
    if btype == src:
        return v
    size = btype.size if btype is not None else ptr_size
    if size != (src.size if src is not None else ptr_size):
        raise TypeMismatch("DW_OP_reinterpret has wrong size")
    data = to_bytes(v, ptr_size, order)
    if btype is None:
        return int.from_bytes(data, order)
    return from_bytes(data, btype, order)


def low_end(data, size, order):
    """The low-order ``size`` bytes of ``data`` (a register's): its first bytes on a
    little-endian target, its last on a big-endian one."""
    if size >= len(data):
        return bytes(data)
    return bytes(data[:size]) if order == "little" else bytes(data[len(data) - size:])
