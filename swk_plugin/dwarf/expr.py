"""DWARF expression evaluator (DWARF 2-5 plus the GNU extensions GCC emits).

Used for CFI rules (DW_CFA_*expression) and for location descriptions.  The
stack holds unsigned integers of the target's address size; signed operations
reinterpret them as two's complement.  Typed-stack operations (DWARF 5) are
handled for integral base types only, since we do not read .debug_info here.
"""
from ..errors import MemoryReadError, SwkError
from .encoding import DecodeError, decode_pointer, read_sint, read_uint, sleb128, uleb128

__all__ = ["ExprError", "ExprResult", "evaluate", "OP_NAMES"]


class ExprError(SwkError):
    """Malformed or unsupported DWARF expression; message is one clear line."""


class ExprResult:
    """What an expression describes.

    kind: 'memory' (value = address), 'value' (DW_OP_stack_value: value = int),
    'register' (DW_OP_regN/regx: value = DWARF register number), 'implicit'
    (DW_OP_implicit_value: value = bytes), 'pieces' (pieces = [(ExprResult, size_bytes)]),
    'empty' (no location: the object is optimized out, or an empty piece).
    Pieces also carry bit_size/bit_offset (DW_OP_bit_piece; size_bytes rounds up).
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

# Operations that only make sense with information this evaluator does not have.
_UNSUPPORTED = {
    0x18: "DW_OP_xderef: address spaces are not supported",
    0x95: "DW_OP_xderef_size: address spaces are not supported",
    0xA7: "DW_OP_xderef_type: address spaces are not supported",
    0x97: "DW_OP_push_object_address: no object address in this context",
    0x98: "DW_OP_call2: calling DWARF procedures is not supported",
    0x99: "DW_OP_call4: calling DWARF procedures is not supported",
    0x9A: "DW_OP_call_ref: calling DWARF procedures is not supported",
    0x9B: "DW_OP_form_tls_address: thread-local storage is not supported",
    0xE0: "DW_OP_GNU_push_tls_address: thread-local storage is not supported",
    0xA0: "DW_OP_implicit_pointer: implicit pointers are not supported",
    0xF2: "DW_OP_GNU_implicit_pointer: implicit pointers are not supported",
    0xFA: "DW_OP_GNU_parameter_ref: not supported",
    0xFD: "DW_OP_GNU_variable_value: not supported",
}

_PIECE_OPS = (0x93, 0x9D)


def _op_name(op):
    return "DW_OP_" + OP_NAMES.get(op, f"0x{op:02x}")


def evaluate(expr, *, read_reg=None, read_mem=None, ptr_size=8, initial_stack=(), frame_base=None,
             cfa=None, max_steps=10000, entry_value=None, addr_base_lookup=None, base_type=None,
             tls_address=None, ref_size=None, byteorder="little"):
    """Run ``expr`` and return an ExprResult.

    read_reg(regno) -> int and read_mem(addr, size) -> bytes supply the frame's
    state; frame_base and cfa may be ints or zero-argument callables (evaluated
    only if the expression asks).  Optional hooks: entry_value(expr_bytes) -> int,
    addr_base_lookup(index) -> int (DW_OP_addrx/constx, .debug_addr), and
    base_type(die_offset) -> (byte_size, is_signed) for the typed operations, and
    tls_address(offset) -> the address of a thread-local variable at that offset in the
    expression's module's TLS block (DW_OP_form_tls_address, DW_OP_GNU_push_tls_address).
    ``ref_size``: the size of a DIE reference in the expression's unit; with it,
    DW_OP_implicit_pointer is the location "synthetic" ((DIE offset in the unit, byte
    offset)): a pointer with no address, which only the variable reader can resolve
    (without it the operation is refused).  ``byteorder``: the target's, which is also
    its files' (operands and the words memory is read as).
    Memory failures raise MemoryReadError; everything else raises ExprError.
    """
    bits = ptr_size * 8
    mask = (1 << bits) - 1
    sign = 1 << (bits - 1)
    stack = [v & mask for v in initial_stack]
    push = stack.append
    pop = stack.pop
    code = expr
    n = len(code)
    pos = 0
    steps = 0
    pieces = []
    loc = None          # a pending non-memory location (register, stack value, implicit)
    op = None

    def reg(r):
        if read_reg is None:
            raise ExprError(f"{_op_name(op)}: registers are not available")
        try:
            v = read_reg(r)
        except SwkError as exc:
            raise ExprError(f"register {r} is unavailable ({exc})") from None
        except Exception:
            raise ExprError(f"register {r} is unavailable") from None
        if v is None:
            raise ExprError(f"register {r} is unavailable")
        return v & mask

    def load(addr, size):
        if read_mem is None:
            raise ExprError(f"{_op_name(op)}: memory is not available")
        try:
            data = read_mem(addr, size)
        except SwkError:
            raise
        except Exception as exc:
            raise MemoryReadError(addr, size, str(exc) or type(exc).__name__) from None
        if data is None or len(data) < size:
            raise MemoryReadError(addr, size, "short read")
        return int.from_bytes(data[:size], byteorder)

    def signed(v):
        return v - (1 << bits) if v & sign else v

    def typed(die, value, size=None):
        # Without type information, values stay unsigned; with it, truncate and sign-extend.
        if base_type is None or die == 0:
            return value & mask
        try:
            tsize, is_signed = base_type(die)
        except Exception:
            raise ExprError(f"{_op_name(op)}: unknown base type at DIE 0x{die:x}") from None
        tbits = tsize * 8
        value &= (1 << tbits) - 1
        if is_signed and value >> (tbits - 1):
            value -= 1 << tbits
        return value & mask

    def take_location():
        nonlocal loc
        if loc is not None:
            r, loc = loc, None
            return r
        if stack:
            return ExprResult("memory", pop())
        return ExprResult("empty")

    try:
        while pos < n:
            steps += 1
            if steps > max_steps:
                raise ExprError(f"expression exceeds {max_steps} steps (a loop?)")
            op = code[pos]
            pos += 1
            if loc is not None and op not in _PIECE_OPS:
                raise ExprError(f"{_op_name(op)} after a register/implicit location "
                                "(only DW_OP_piece may follow)")
            if 0x30 <= op <= 0x4F:                       # lit0..lit31
                push(op - 0x30)
            elif 0x70 <= op <= 0x8F:                     # breg0..breg31
                off, pos = sleb128(code, pos)
                push((reg(op - 0x70) + off) & mask)
            elif 0x50 <= op <= 0x6F:                     # reg0..reg31
                loc = ExprResult("register", op - 0x50)
            elif op == 0x06:                             # deref
                push(load(pop(), ptr_size))
            elif op == 0x23:                             # plus_uconst
                v, pos = uleb128(code, pos)
                push((pop() + v) & mask)
            elif op == 0x22:                             # plus
                b = pop()
                push((pop() + b) & mask)
            elif op == 0x1C:                             # minus
                b = pop()
                push((pop() - b) & mask)
            elif op == 0x03:                             # addr
                v, pos = read_uint(code, pos, ptr_size, byteorder)
                push(v)
            elif 0x08 <= op <= 0x0F:                     # const1u..const8s
                size = 1 << ((op - 0x08) >> 1)
                if op & 1:
                    v, pos = read_sint(code, pos, size, byteorder)
                else:
                    v, pos = read_uint(code, pos, size, byteorder)
                push(v & mask)
            elif op == 0x10:                             # constu
                v, pos = uleb128(code, pos)
                push(v & mask)
            elif op == 0x11:                             # consts
                v, pos = sleb128(code, pos)
                push(v & mask)
            elif op == 0x12:                             # dup
                push(stack[-1])
            elif op == 0x13:                             # drop
                pop()
            elif op == 0x14:                             # over
                push(stack[-2])
            elif op == 0x15:                             # pick
                idx, pos = read_uint(code, pos, 1, byteorder)
                if idx >= len(stack):
                    raise ExprError(f"DW_OP_pick {idx}: stack has only {len(stack)} entries")
                push(stack[-1 - idx])
            elif op == 0x16:                             # swap
                stack[-1], stack[-2] = stack[-2], stack[-1]
            elif op == 0x17:                             # rot: top moves to third place
                if len(stack) < 3:
                    raise IndexError
                stack[-3], stack[-2], stack[-1] = stack[-1], stack[-3], stack[-2]
            elif op == 0x19:                             # abs
                push(abs(signed(pop())) & mask)
            elif op == 0x1A:                             # and
                b = pop()
                push(pop() & b)
            elif op == 0x1B:                             # div (signed, truncating)
                b = signed(pop())
                a = signed(pop())
                if b == 0:
                    raise ExprError("DW_OP_div: division by zero")
                q = abs(a) // abs(b)
                push((-q if (a < 0) != (b < 0) else q) & mask)
            elif op == 0x1D:                             # mod (unsigned, as GDB)
                b = pop()
                a = pop()
                if b == 0:
                    raise ExprError("DW_OP_mod: division by zero")
                push(a % b)
            elif op == 0x1E:                             # mul
                b = pop()
                push((pop() * b) & mask)
            elif op == 0x1F:                             # neg
                push(-pop() & mask)
            elif op == 0x20:                             # not
                push(~pop() & mask)
            elif op == 0x21:                             # or
                b = pop()
                push(pop() | b)
            elif op == 0x24:                             # shl
                b = pop()
                a = pop()
                push((a << b) & mask if b < bits else 0)
            elif op == 0x25:                             # shr
                b = pop()
                a = pop()
                push(a >> b if b < bits else 0)
            elif op == 0x26:                             # shra
                b = pop()
                a = signed(pop())
                push((a >> min(b, bits - 1)) & mask)
            elif op == 0x27:                             # xor
                b = pop()
                push(pop() ^ b)
            elif 0x29 <= op <= 0x2E:                     # eq ge gt le lt ne (signed)
                b = signed(pop())
                a = signed(pop())
                if op == 0x29:
                    r = a == b
                elif op == 0x2A:
                    r = a >= b
                elif op == 0x2B:
                    r = a > b
                elif op == 0x2C:
                    r = a <= b
                elif op == 0x2D:
                    r = a < b
                else:
                    r = a != b
                push(1 if r else 0)
            elif op == 0x2F or op == 0x28:               # skip, bra
                off, pos = read_sint(code, pos, 2, byteorder)
                if op == 0x2F or pop() != 0:
                    target = pos + off
                    if not 0 <= target <= n:
                        raise ExprError(f"{_op_name(op)} jumps outside the expression "
                                        f"(to offset {target}, length {n})")
                    pos = target
            elif op == 0x90:                             # regx
                r, pos = uleb128(code, pos)
                loc = ExprResult("register", r)
            elif op == 0x92:                             # bregx
                r, pos = uleb128(code, pos)
                off, pos = sleb128(code, pos)
                push((reg(r) + off) & mask)
            elif op == 0x91:                             # fbreg
                off, pos = sleb128(code, pos)
                if frame_base is None:
                    raise ExprError("DW_OP_fbreg: the frame base is unknown")
                fb = frame_base() if callable(frame_base) else frame_base
                push((fb + off) & mask)
            elif op == 0x9C:                             # call_frame_cfa
                if cfa is None:
                    raise ExprError("DW_OP_call_frame_cfa: the CFA is unknown")
                push((cfa() if callable(cfa) else cfa) & mask)
            elif op == 0x94:                             # deref_size
                size, pos = read_uint(code, pos, 1, byteorder)
                if not 1 <= size <= ptr_size:
                    raise ExprError(f"DW_OP_deref_size: bad size {size}")
                push(load(pop(), size))
            elif op == 0x96 or op == 0xF0:               # nop, GNU_uninit
                pass
            elif op == 0x93:                             # piece
                size, pos = uleb128(code, pos)
                part = take_location()
                part.bit_size = size * 8
                pieces.append((part, size))
            elif op == 0x9D:                             # bit_piece
                size, pos = uleb128(code, pos)
                offset, pos = uleb128(code, pos)
                part = take_location()
                part.bit_size = size
                part.bit_offset = offset
                pieces.append((part, (size + 7) // 8))
            elif op == 0x9F:                             # stack_value
                loc = ExprResult("value", pop())
            elif op == 0x9E:                             # implicit_value
                size, pos = uleb128(code, pos)
                if pos + size > n:
                    raise DecodeError("block")
                loc = ExprResult("implicit", bytes(code[pos:pos + size]))
                pos += size
            elif op == 0xA3 or op == 0xF3:               # entry_value
                size, pos = uleb128(code, pos)
                if pos + size > n:
                    raise DecodeError("block")
                block = bytes(code[pos:pos + size])
                pos += size
                if entry_value is None:
                    raise ExprError(f"{_op_name(op)}: entry value unavailable")
                try:
                    v = entry_value(block)
                except SwkError:
                    raise
                except Exception as exc:
                    raise ExprError(f"{_op_name(op)}: entry value unavailable ({exc})") from None
                if v is None:
                    raise ExprError(f"{_op_name(op)}: entry value unavailable")
                push(v & mask)
            elif op in (0xA1, 0xA2, 0xFB, 0xFC):         # addrx, constx (+GNU)
                idx, pos = uleb128(code, pos)
                if addr_base_lookup is None:
                    raise ExprError(f"{_op_name(op)}: needs .debug_addr (index {idx})")
                try:
                    v = addr_base_lookup(idx)
                except Exception as exc:
                    raise ExprError(f"{_op_name(op)}: no .debug_addr entry {idx} ({exc})") from None
                push(v & mask)
            elif op == 0xA4 or op == 0xF4:               # const_type
                die, pos = uleb128(code, pos)
                size, pos = read_uint(code, pos, 1, byteorder)
                v, pos = read_uint(code, pos, size, byteorder)
                if size > ptr_size and v > mask:
                    raise ExprError(f"{_op_name(op)}: {size}-byte constant does not fit "
                                    "the address-sized stack")
                push(typed(die, v))
            elif op == 0xA5 or op == 0xF5:               # regval_type
                r, pos = uleb128(code, pos)
                die, pos = uleb128(code, pos)
                push(typed(die, reg(r)))
            elif op == 0xA6 or op == 0xF6:               # deref_type
                size, pos = read_uint(code, pos, 1, byteorder)
                die, pos = uleb128(code, pos)
                if not 1 <= size <= ptr_size:
                    raise ExprError(f"{_op_name(op)}: unsupported size {size}")
                push(typed(die, load(pop(), size)))
            elif op == 0xA8 or op == 0xF7:               # convert
                die, pos = uleb128(code, pos)
                push(typed(die, pop()))
            elif op == 0xA9 or op == 0xF9:               # reinterpret: same bits
                die, pos = uleb128(code, pos)
                if not stack:
                    raise IndexError
            elif op == 0xF1:                             # GNU_encoded_addr
                enc, pos = read_uint(code, pos, 1, byteorder)
                try:
                    v, pos = decode_pointer(code, pos, enc, ptr_size, byteorder)
                except DecodeError as exc:
                    raise ExprError(f"DW_OP_GNU_encoded_addr: {exc}") from None
                push((v or 0) & mask)
            elif (op == 0xA0 or op == 0xF2) and ref_size is not None:   # implicit_pointer
                if pos + ref_size > n:
                    raise DecodeError("reference")
                die = int.from_bytes(code[pos:pos + ref_size], byteorder)
                pos += ref_size
                off, pos = sleb128(code, pos)
                loc = ExprResult("synthetic", (die, off))
            elif op in (0x9B, 0xE0) and tls_address is not None:   # form_tls_address
                push(tls_address(pop()) & mask)
            elif op in _UNSUPPORTED:
                raise ExprError(_UNSUPPORTED[op])
            else:
                raise ExprError(f"unknown DWARF expression opcode 0x{op:02x} at offset {pos - 1}")
    except IndexError:
        raise ExprError("dwarf expression stack underflow") from None     # GDB's words
    except DecodeError:
        raise ExprError(f"{_op_name(op)}: truncated operand at offset {pos}") from None

    if pieces:
        if loc is not None:
            raise ExprError("location after the last DW_OP_piece has no piece size")
        return ExprResult("pieces", None, pieces)
    if loc is not None:
        return loc
    if stack:
        return ExprResult("memory", stack[-1])
    return ExprResult("empty")
