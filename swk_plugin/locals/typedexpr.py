"""A DWARF expression evaluator with typed stack entries (DWARF 5 DW_OP_const_type,
regval_type, deref_type, convert, reinterpret and their GNU forms), for the location
expressions GCC writes at -O2 that compute floating-point values ("x = 1.0 / y").

dwarf/expr.py keeps an untyped, address-sized stack (what CFI needs); this one is
only used for expressions that contain a typed operation.  A stack entry is
(value, type) where type is None for DWARF's generic type, or (size, kind) with kind
"signed" / "unsigned" / "float".  A typed DW_OP_stack_value result comes back as an
'implicit' ExprResult holding the value's bytes.
"""
import math
import struct

from ..dwarf.encoding import DecodeError, read_sint, read_uint, sleb128, uleb128
from ..dwarf.expr import ExprError, ExprResult

from .dwarfconst import TYPED_OPS
from .locations import _low_end

#: {byte order: {size: struct format}} of IEEE single and double.
_FLOAT_FMT = {"little": {4: "<f", 8: "<d"}, "big": {4: ">f", 8: ">d"}}


def _to_bytes(v, t, ptr_size, order):
    """A stack entry's bytes in the target's byte ``order``."""
    if t is None:
        return (v & ((1 << (8 * ptr_size)) - 1)).to_bytes(ptr_size, order)
    size, kind = t
    if kind == "float":
        if size in _FLOAT_FMT[order]:
            return struct.pack(_FLOAT_FMT[order][size], v)
        if size in (10, 12, 16):
            return _x87_bytes(v, size)
        raise ExprError(f"typed DWARF value of float size {size}")
    return (int(v) & ((1 << (8 * size)) - 1)).to_bytes(size, order)


def _extend(b, size, order):
    """``b`` zero-extended to ``size`` bytes as an integer of the target's ``order`` (GDB's
    DW_OP_deref_type when the read is narrower than the type)."""
    if len(b) >= size:
        return b
    pad = bytes(size - len(b))
    return b + pad if order == "little" else pad + b


def _x87_bytes(v, size):
    import math
    if v == 0:
        raw = (1 << 79) if math.copysign(1.0, v) < 0 else 0
    elif math.isinf(v):
        raw = ((1 if v < 0 else 0) << 79) | (0x7FFF << 64) | (1 << 63)
    elif math.isnan(v):
        raw = (0x7FFF << 64) | (3 << 62)
    else:
        m, e = math.frexp(abs(v))               # v = m * 2**e, 0.5 <= m < 1
        mant = int(m * (1 << 64))
        exp = e - 1 + 16383
        raw = ((1 if v < 0 else 0) << 79) | (exp << 64) | mant
    return raw.to_bytes(10, "little") + bytes(size - 10)      # x87's own (little-endian) layout


def _from_bytes(b, t, order):
    size, kind = t
    if kind == "float":
        if size in _FLOAT_FMT[order]:
            return struct.unpack(_FLOAT_FMT[order][size], b[:size])[0]
        if size in (10, 12, 16):
            raw = int.from_bytes(b[:10], "little")              # x87's own layout
            mant = raw & ((1 << 64) - 1)
            exp = (raw >> 64) & 0x7FFF
            sign = -1.0 if raw >> 79 else 1.0
            if exp == 0x7FFF:
                return sign * float("inf") if not (mant << 1) & ((1 << 64) - 1) else float("nan")
            return sign * mant * 2.0 ** ((exp or 1) - 16383 - 63)
        raise ExprError(f"typed DWARF value of float size {size}")
    return int.from_bytes(b[:size], order, signed=kind == "signed")


def evaluate_typed(code, *, read_reg_bytes, read_mem, ptr_size=8, frame_base=None, cfa=None,
                   entry_value=None, addr_lookup=None, base_type=None, max_steps=10000, byteorder="little"):
    """Evaluate ``code``; base_type(die_off) -> (size, kind); read_reg_bytes(r) -> bytes;
    memory, registers' bytes and operands in the target's ``byteorder``."""
    order = byteorder
    bits = ptr_size * 8
    mask = (1 << bits) - 1
    stack = []
    pieces = []
    loc = None
    pos = 0
    n = len(code)
    steps = 0
    op = None

    def gen(v):
        return (v & mask, None)

    def norm(v, t):
        if t is None:
            return v & mask
        size, kind = t
        if kind == "float":
            if size == 4:
                return struct.unpack("<f", struct.pack("<f", v))[0]
            return float(v)
        v = int(v) & ((1 << (8 * size)) - 1)
        if kind == "signed" and v >> (8 * size - 1):
            v -= 1 << (8 * size)
        return v

    def signed_generic(v):
        return v - (1 << bits) if v & (1 << (bits - 1)) else v

    def typ(die):
        if die == 0:
            return None
        try:
            return base_type(die)
        except Exception:
            raise ExprError(f"unknown base type at DIE 0x{die:x}") from None

    def reg_int(r):
        b = read_reg_bytes(r)
        return int.from_bytes(_low_end(b, ptr_size, order), order)

    def load(addr, size):
        data = read_mem(addr, size)
        if data is None or len(data) < size:
            raise ExprError(f"Cannot access memory at address 0x{addr:x}")
        return bytes(data[:size])

    def take_location():
        nonlocal loc
        if loc is not None:
            r, loc = loc, None
            return r
        if stack:
            v, t = stack.pop()
            if t is not None:
                return ExprResult("implicit", _to_bytes(v, t, ptr_size, order))
            return ExprResult("memory", v)
        return ExprResult("empty")

    def binop(fn, allow_float=True):
        (b, tb) = stack.pop()
        (a, ta) = stack.pop()
        t = ta if ta is not None else tb
        if t is not None and t[1] == "float" and not allow_float:
            raise ExprError(f"{op:#x} on a floating-point DWARF value")
        stack.append((norm(fn(a, b, t), t), t))

    try:
        while pos < n:
            steps += 1
            if steps > max_steps:
                raise ExprError("expression too long")
            op = code[pos]
            pos += 1
            if loc is not None and op not in (0x93, 0x9d):
                raise ExprError("operation after a register/implicit location")
            if 0x30 <= op <= 0x4f:
                stack.append(gen(op - 0x30))
            elif 0x50 <= op <= 0x6f:
                loc = ExprResult("register", op - 0x50)
            elif 0x70 <= op <= 0x8f:
                off, pos = sleb128(code, pos)
                stack.append(gen(reg_int(op - 0x70) + off))
            elif op == 0x90:
                r, pos = uleb128(code, pos)
                loc = ExprResult("register", r)
            elif op == 0x92:
                r, pos = uleb128(code, pos)
                off, pos = sleb128(code, pos)
                stack.append(gen(reg_int(r) + off))
            elif op == 0x91:
                off, pos = sleb128(code, pos)
                fb = frame_base() if callable(frame_base) else frame_base
                if fb is None:
                    raise ExprError("DW_OP_fbreg: frame base unknown")
                stack.append(gen(fb + off))
            elif op == 0x9c:
                c = cfa() if callable(cfa) else cfa
                if c is None:
                    raise ExprError("CFA unknown")
                stack.append(gen(c))
            elif op == 0x03:
                v, pos = read_uint(code, pos, ptr_size, order)
                stack.append(gen(v))
            elif op in (0xa1, 0xa2, 0xfb, 0xfc):
                i, pos = uleb128(code, pos)
                stack.append(gen(addr_lookup(i)))
            elif 0x08 <= op <= 0x0f:
                size = 1 << ((op - 0x08) >> 1)
                if op & 1:
                    v, pos = read_sint(code, pos, size, order)
                else:
                    v, pos = read_uint(code, pos, size, order)
                stack.append(gen(v))
            elif op == 0x10:
                v, pos = uleb128(code, pos)
                stack.append(gen(v))
            elif op == 0x11:
                v, pos = sleb128(code, pos)
                stack.append(gen(v))
            elif op == 0x12:
                stack.append(stack[-1])
            elif op == 0x13:
                stack.pop()
            elif op == 0x14:
                stack.append(stack[-2])
            elif op == 0x15:
                i = code[pos]
                pos += 1
                stack.append(stack[-1 - i])
            elif op == 0x16:
                stack[-1], stack[-2] = stack[-2], stack[-1]
            elif op == 0x17:
                stack[-3], stack[-2], stack[-1] = stack[-1], stack[-3], stack[-2]
            elif op == 0x06:
                v, t = stack.pop()
                stack.append(gen(int.from_bytes(load(v, ptr_size), order)))
            elif op == 0x94:
                size = code[pos]
                pos += 1
                v, t = stack.pop()
                stack.append(gen(int.from_bytes(load(v, size), order)))
            elif op == 0x23:
                k, pos = uleb128(code, pos)
                v, t = stack.pop()
                stack.append((norm(v + k, t), t))
            elif op == 0x22:
                binop(lambda a, b, t: a + b)
            elif op == 0x1c:
                binop(lambda a, b, t: a - b)
            elif op == 0x1e:
                binop(lambda a, b, t: a * b)
            elif op == 0x1b:
                def _div(a, b, t):
                    if t is not None and t[1] == "float":
                        if b == 0:
                            if a == 0 or a != a:
                                return float("nan")
                            neg = (math.copysign(1.0, a) < 0) != (math.copysign(1.0, b) < 0)
                            return float("-inf") if neg else float("inf")
                        return a / b
                    if t is None:
                        a, b = signed_generic(a), signed_generic(b)
                    if b == 0:
                        raise ExprError("Division by zero")
                    q = abs(a) // abs(b)
                    return -q if (a < 0) != (b < 0) else q
                binop(_div)
            elif op == 0x1d:
                def _mod(a, b, t):
                    if b == 0:
                        raise ExprError("Division by zero")
                    return a % b
                binop(_mod, allow_float=False)
            elif op == 0x1a:
                binop(lambda a, b, t: a & b, allow_float=False)
            elif op == 0x21:
                binop(lambda a, b, t: a | b, allow_float=False)
            elif op == 0x27:
                binop(lambda a, b, t: a ^ b, allow_float=False)
            elif op == 0x24:
                binop(lambda a, b, t: a << b if b < 128 else 0, allow_float=False)
            elif op == 0x25:
                binop(lambda a, b, t: (a & ((1 << (8 * (t[0] if t else ptr_size))) - 1)) >> b,
                      allow_float=False)
            elif op == 0x26:
                binop(lambda a, b, t: (signed_generic(a) if t is None else a) >> b, allow_float=False)
            elif op == 0x1f:
                v, t = stack.pop()
                stack.append((norm(-v, t), t))
            elif op == 0x19:
                v, t = stack.pop()
                stack.append((norm(abs(signed_generic(v) if t is None else v), t), t))
            elif op == 0x20:
                v, t = stack.pop()
                stack.append((norm(~int(v), t), t))
            elif 0x29 <= op <= 0x2e:
                (b, tb) = stack.pop()
                (a, ta) = stack.pop()
                if ta is None and tb is None:
                    a, b = signed_generic(a), signed_generic(b)
                r = {0x29: a == b, 0x2a: a >= b, 0x2b: a > b, 0x2c: a <= b, 0x2d: a < b, 0x2e: a != b}[op]
                stack.append(gen(1 if r else 0))
            elif op in (0x2f, 0x28):
                off, pos = read_sint(code, pos, 2, order)
                if op == 0x2f or stack.pop()[0] != 0:
                    pos += off
                    if not 0 <= pos <= n:
                        raise ExprError("branch outside the expression")
            elif op == 0x96:
                pass
            elif op == 0x93:
                size, pos = uleb128(code, pos)
                part = take_location()
                part.bit_size = size * 8
                pieces.append((part, size))
            elif op == 0x9d:
                size, pos = uleb128(code, pos)
                offset, pos = uleb128(code, pos)
                part = take_location()
                part.bit_size = size
                part.bit_offset = offset
                pieces.append((part, (size + 7) // 8))
            elif op == 0x9f:
                v, t = stack.pop()
                loc = ExprResult("value", v) if t is None else ExprResult("implicit", _to_bytes(v, t, ptr_size, order))
            elif op == 0x9e:
                size, pos = uleb128(code, pos)
                loc = ExprResult("implicit", bytes(code[pos:pos + size]))
                pos += size
            elif op in (0xa3, 0xf3):
                size, pos = uleb128(code, pos)
                block = bytes(code[pos:pos + size])
                pos += size
                if entry_value is None:
                    raise ExprError("entry value unavailable")
                raw = entry_value(block)
                if block[:1] in (b"\xa5", b"\xf5"):    # a typed register (a float in xmm0)
                    _r, bpos = uleb128(block, 1)
                    die, _bpos = uleb128(block, bpos)
                    t = typ(die)
                    b = bytes(raw) if isinstance(raw, (bytes, bytearray)) else (raw & mask).to_bytes(ptr_size, order)
                    stack.append((_from_bytes(_low_end(b, t[0], order), t, order), t) if t is not None
                                 else gen(int.from_bytes(_low_end(b, ptr_size, order), order)))
                else:
                    if isinstance(raw, (bytes, bytearray)):
                        raw = int.from_bytes(_low_end(raw, ptr_size, order), order)
                    stack.append(gen(raw))
            elif op in (0xa4, 0xf4):                     # const_type
                die, pos = uleb128(code, pos)
                size = code[pos]
                pos += 1
                b = bytes(code[pos:pos + size])
                pos += size
                t = typ(die)
                stack.append((_from_bytes(b, t, order), t) if t is not None else gen(int.from_bytes(b, order)))
            elif op in (0xa5, 0xf5):                     # regval_type
                r, pos = uleb128(code, pos)
                die, pos = uleb128(code, pos)
                t = typ(die)
                b = read_reg_bytes(r)
                stack.append((_from_bytes(_low_end(b, t[0], order), t, order), t) if t is not None
                             else gen(int.from_bytes(_low_end(b, ptr_size, order), order)))
            elif op in (0xa6, 0xf6):                     # deref_type
                size = code[pos]
                pos += 1
                die, pos = uleb128(code, pos)
                t = typ(die)
                a, _t = stack.pop()
                b = load(a, size)
                stack.append((_from_bytes(_extend(b, t[0], order), t, order), t)
                             if t is not None else gen(int.from_bytes(b, order)))
            elif op in (0xa8, 0xf7):                     # convert
                die, pos = uleb128(code, pos)
                t = typ(die)
                v, ft = stack.pop()
                if t is None:
                    stack.append(gen(int(v)))
                elif t[1] == "float":
                    stack.append((norm(float(v), t), t))
                else:
                    stack.append((norm(int(v), t), t))
            elif op in (0xa9, 0xf9):                     # reinterpret
                die, pos = uleb128(code, pos)
                t = typ(die)
                v, ft = stack.pop()
                b = _to_bytes(v, ft, ptr_size, order)
                if t is None:
                    stack.append(gen(int.from_bytes(_low_end(b, ptr_size, order), order)))
                else:
                    stack.append((_from_bytes(_extend(b, t[0], order), t, order), t))
            else:
                raise ExprError(f"DWARF operation 0x{op:02x} in a typed expression")
    except IndexError:
        raise ExprError("dwarf expression stack underflow") from None     # GDB's words
    except (DecodeError, struct.error):
        raise ExprError("truncated DWARF expression") from None
    if pieces:
        return ExprResult("pieces", None, pieces)
    if loc is not None:
        return loc
    if stack:
        v, t = stack[-1]
        if t is not None:
            return ExprResult("implicit", _to_bytes(v, t, ptr_size, order))
        return ExprResult("memory", v)
    return ExprResult("empty")
