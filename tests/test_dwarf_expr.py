"""DWARF expression evaluator, opcode by opcode."""
import pytest

from swk_plugin.dwarf.expr import OP_NAMES, ExprError, ExprResult, evaluate
from swk_plugin.errors import MemoryReadError, SwkError

M64 = (1 << 64) - 1


def uleb(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def sleb(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if (v == 0 and not b & 0x40) or (v == -1 and b & 0x40):
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


def le(v, n):
    return (v & ((1 << (8 * n)) - 1)).to_bytes(n, "little")


# Operation builders, named as in the spec.
def lit(n): return bytes([0x30 + n])
def reg(n): return bytes([0x50 + n])
def breg(n, off): return bytes([0x70 + n]) + sleb(off)
def addr(a, size=8): return b"\x03" + le(a, size)
def constu(v): return b"\x10" + uleb(v)
def consts(v): return b"\x11" + sleb(v)
def pick(i): return b"\x15" + bytes([i])
def plus_uconst(v): return b"\x23" + uleb(v)
def bra(off): return b"\x28" + le(off, 2)
def skip(off): return b"\x2f" + le(off, 2)
def regx(r): return b"\x90" + uleb(r)
def fbreg(off): return b"\x91" + sleb(off)
def bregx(r, off): return b"\x92" + uleb(r) + sleb(off)
def piece(n): return b"\x93" + uleb(n)
def deref_size(n): return b"\x94" + bytes([n])
def bit_piece(size, off): return b"\x9d" + uleb(size) + uleb(off)
def implicit_value(data): return b"\x9e" + uleb(len(data)) + data
def entry_value(e): return b"\xa3" + uleb(len(e)) + e


DEREF, DUP, DROP, OVER, SWAP, ROT = b"\x06", b"\x12", b"\x13", b"\x14", b"\x16", b"\x17"
ABS, AND, DIV, MINUS, MOD, MUL, NEG, NOT, OR, PLUS = (bytes([o]) for o in (
    0x19, 0x1A, 0x1B, 0x1C, 0x1D, 0x1E, 0x1F, 0x20, 0x21, 0x22))
SHL, SHR, SHRA, XOR = b"\x24", b"\x25", b"\x26", b"\x27"
EQ, GE, GT, LE, LT, NE = (bytes([o]) for o in range(0x29, 0x2F))
NOP, STACK_VALUE, CALL_FRAME_CFA = b"\x96", b"\x9f", b"\x9c"

REGS = {0: 0x10, 1: 0x20, 6: 0x7000, 7: 0x6000, 16: 0x401000, 40: 0x4040, 31: 0x3131}
MEMORY = {0x6000: 0x1122334455667788, 0x6008: 0xFFFFFFFFFFFFFFFF, 0x7000: 0x7100}


def read_reg(r):
    return REGS[r]


def read_mem(address, size):
    base = address & ~7
    if base not in MEMORY or address + size > base + 8:
        raise MemoryReadError(address, size)
    return MEMORY[base].to_bytes(8, "little")[address - base:address - base + size]


def ev(*ops, **kw):
    kw.setdefault("read_reg", read_reg)
    kw.setdefault("read_mem", read_mem)
    return evaluate(b"".join(ops), **kw)


def top(*ops, **kw):
    res = ev(*ops, **kw)
    assert res.kind == "memory", res
    return res.value


def stack(*ops, depth, **kw):
    """The top ``depth`` entries after ``ops``, top first (found by dropping one at a time)."""
    return [top(*ops, DROP * k, **kw) for k in range(depth)]


def signed(v):
    return v - (1 << 64) if v >> 63 else v


# --- literals and constants -------------------------------------------------------------------------

@pytest.mark.parametrize("n", range(32))
def test_lit(n):
    assert top(lit(n)) == n


@pytest.mark.parametrize("op, operand, value", [
    (0x08, le(0xFF, 1), 0xFF), (0x09, le(-1, 1), M64), (0x09, le(0x7F, 1), 0x7F),
    (0x0A, le(0xFFFE, 2), 0xFFFE), (0x0B, le(-2, 2), M64 - 1),
    (0x0C, le(0xFFFFFFFF, 4), 0xFFFFFFFF), (0x0D, le(-3, 4), M64 - 2),
    (0x0E, le(0x1122334455667788, 8), 0x1122334455667788), (0x0F, le(-4, 8), M64 - 3),
])
def test_fixed_size_constants(op, operand, value):
    assert top(bytes([op]) + operand) == value


def test_constu_consts():
    assert top(constu(624485)) == 624485
    assert top(constu(1 << 63)) == 1 << 63
    assert top(consts(-123456)) == (-123456) & M64
    assert top(consts(5)) == 5


def test_addr():
    assert top(addr(0x401234)) == 0x401234
    assert top(addr(0x8048000, 4), ptr_size=4) == 0x8048000


def test_fixed_constants_wrap_to_the_address_size():
    assert top(b"\x0d" + le(-1, 4), ptr_size=4) == 0xFFFFFFFF
    assert top(b"\x0e" + le(0x1122334455667788, 8), ptr_size=4) == 0x55667788


# --- stack manipulation -------------------------------------------------------------------------------

def test_dup():
    assert stack(lit(1), lit(2), DUP, depth=3) == [2, 2, 1]


def test_drop():
    assert top(lit(1), lit(2), DROP) == 1


def test_over():
    assert stack(lit(1), lit(2), OVER, depth=3) == [1, 2, 1]


@pytest.mark.parametrize("i, value", [(0, 3), (1, 2), (2, 1)])
def test_pick(i, value):
    assert stack(lit(1), lit(2), lit(3), pick(i), depth=2) == [value, 3]


def test_pick_beyond_the_stack():
    with pytest.raises(ExprError, match="pick 3"):
        ev(lit(1), lit(2), lit(3), pick(3))


def test_swap():
    assert stack(lit(1), lit(2), SWAP, depth=2) == [1, 2]


def test_rot():
    # The top entry moves to third place; the second and third move up.
    assert stack(lit(9), lit(1), lit(2), lit(3), ROT, depth=4) == [2, 1, 3, 9]


# --- arithmetic and logic -----------------------------------------------------------------------------

@pytest.mark.parametrize("ops, value", [
    ((consts(-5), ABS), 5),
    ((lit(5), ABS), 5),
    ((constu(0b1100), constu(0b1010), AND), 0b1000),
    ((lit(7), lit(2), DIV), 3),
    ((consts(-7), lit(2), DIV), (-3) & M64),            # signed, truncating toward zero
    ((lit(7), consts(-2), DIV), (-3) & M64),
    ((consts(-8), consts(-2), DIV), 4),
    ((lit(3), lit(5), MINUS), (-2) & M64),
    ((lit(10), lit(3), MINUS), 7),
    ((lit(7), lit(3), MOD), 1),
    ((consts(-1), lit(10), MOD), M64 % 10),              # unsigned, as GDB does
    ((lit(6), lit(7), MUL), 42),
    ((constu(1 << 63), lit(2), MUL), 0),                 # wraps
    ((lit(5), NEG), (-5) & M64),
    ((consts(-5), NEG), 5),
    ((lit(0), NOT), M64),
    ((constu(0b1100), constu(0b1010), OR), 0b1110),
    ((lit(2), lit(3), PLUS), 5),
    ((consts(-1), lit(2), PLUS), 1),
    ((lit(2), plus_uconst(1000), ), 1002),
    ((consts(-1), plus_uconst(1), ), 0),
    ((lit(1), lit(4), SHL), 16),
    ((lit(1), constu(63), SHL), 1 << 63),
    ((lit(1), constu(64), SHL), 0),
    ((constu(0x80), lit(4), SHR), 8),
    ((consts(-16), lit(2), SHR), ((-16) & M64) >> 2),
    ((consts(-16), lit(2), SHRA), (-4) & M64),
    ((consts(-16), constu(100), SHRA), M64),
    ((constu(16), lit(2), SHRA), 4),
    ((constu(0b1100), constu(0b1010), XOR), 0b0110),
])
def test_arithmetic(ops, value):
    assert top(*ops) == value


def test_arithmetic_wraps_at_32_bits():
    assert top(constu(0xFFFFFFFF), lit(1), PLUS, ptr_size=4) == 0
    assert top(lit(0), lit(1), MINUS, ptr_size=4) == 0xFFFFFFFF
    assert top(consts(-8), lit(1), SHRA, ptr_size=4) == 0xFFFFFFFC
    assert top(constu(0xFFFFFFF9), lit(2), DIV, ptr_size=4) == 0xFFFFFFFD   # -7 / 2 = -3


@pytest.mark.parametrize("op", [DIV, MOD])
def test_division_by_zero(op):
    with pytest.raises(ExprError, match="division by zero"):
        ev(lit(1), lit(0), op)


@pytest.mark.parametrize("op, results", [
    # (a, b) pairs: (1, 2), (2, 2), (2, 1), (-1, 1) -- comparisons are signed.
    (EQ, [0, 1, 0, 0]), (GE, [0, 1, 1, 0]), (GT, [0, 0, 1, 0]),
    (LE, [1, 1, 0, 1]), (LT, [1, 0, 0, 1]), (NE, [1, 0, 1, 1]),
])
def test_comparisons(op, results):
    pairs = [(lit(1), lit(2)), (lit(2), lit(2)), (lit(2), lit(1)), (consts(-1), lit(1))]
    assert [top(a, b, op) for a, b in pairs] == results


# --- control flow ---------------------------------------------------------------------------------------

def test_skip_forward():
    assert top(lit(1), skip(1), lit(2)) == 1


def test_skip_zero_and_backward():
    assert top(lit(1), skip(0), lit(2)) == 2
    # lit1; skip +3 (over the next skip); lit2; skip to end; <- land here: skip back to "lit2"
    assert top(lit(1), skip(4), lit(2), skip(3), skip(-7)) == 2


def test_bra_taken_and_not_taken():
    assert top(lit(5), lit(1), bra(1), lit(7)) == 5
    assert top(lit(5), lit(0), bra(1), lit(7)) == 7


def test_backward_branch_loop_sums_one_to_ten():
    # acc n: acc += n; n -= 1; loop while n != 0
    loop = (SWAP, OVER, PLUS, SWAP, lit(1), MINUS, DUP)     # 7 one-byte ops
    body = b"".join(loop)
    code = lit(0) + lit(10) + body + bra(-(len(body) + 3)) + DROP
    assert top(code) == 55


def test_jump_outside_the_expression():
    with pytest.raises(ExprError, match="outside"):
        ev(skip(5))
    with pytest.raises(ExprError, match="outside"):
        ev(lit(1), bra(-10))


def test_infinite_loop_is_bounded():
    with pytest.raises(ExprError, match="steps"):
        ev(skip(-3))
    with pytest.raises(ExprError, match="steps"):
        ev(skip(-3), max_steps=50)


# --- registers and frame values ---------------------------------------------------------------------------

@pytest.mark.parametrize("n", range(32))
def test_reg(n):
    res = ev(reg(n))
    assert res.kind == "register" and res.value == n


@pytest.mark.parametrize("n", range(32))
def test_breg(n):
    regs = {n: 0x1000 + n}
    assert top(breg(n, -16), read_reg=regs.__getitem__) == 0x1000 + n - 16
    assert top(breg(n, 300), read_reg=regs.__getitem__) == 0x1000 + n + 300


def test_regx_and_bregx():
    res = ev(regx(40))
    assert (res.kind, res.value) == ("register", 40)
    assert top(bregx(40, 8)) == 0x4048
    assert top(bregx(7, -0x7000)) == (0x6000 - 0x7000) & M64


def test_register_unavailable():
    with pytest.raises(ExprError, match="register 9 is unavailable"):
        ev(breg(9, 0))
    with pytest.raises(ExprError, match="register 99 is unavailable"):
        ev(bregx(99, 0))
    with pytest.raises(ExprError, match="register 1 is unavailable"):
        ev(breg(1, 0), read_reg=lambda r: None)
    with pytest.raises(ExprError, match="registers are not available"):
        ev(breg(1, 0), read_reg=None)


def test_fbreg():
    assert top(fbreg(-24), frame_base=0x7000) == 0x7000 - 24
    assert top(fbreg(16), frame_base=lambda: 0x7000) == 0x7010
    with pytest.raises(ExprError, match="frame base"):
        ev(fbreg(8))


def test_call_frame_cfa():
    assert top(CALL_FRAME_CFA, cfa=0x6010) == 0x6010
    assert top(CALL_FRAME_CFA, plus_uconst(8), cfa=lambda: 0x6010) == 0x6018
    with pytest.raises(ExprError, match="CFA"):
        ev(CALL_FRAME_CFA)


def test_initial_stack():
    assert top(plus_uconst(8), initial_stack=(0x6000,)) == 0x6008
    assert top(initial_stack=(0x6000,)) == 0x6000
    assert top(MINUS, initial_stack=(10, 3)) == 7
    assert top(initial_stack=(-1,)) == M64


# --- memory ---------------------------------------------------------------------------------------------

def test_deref():
    assert top(breg(7, 0), DEREF) == 0x1122334455667788
    assert top(constu(0x7000), DEREF) == 0x7100


def test_deref_32bit():
    assert top(constu(0x6000), DEREF, ptr_size=4) == 0x55667788


@pytest.mark.parametrize("size, value", [(1, 0x88), (2, 0x7788), (4, 0x55667788),
                                         (8, 0x1122334455667788)])
def test_deref_size_zero_extends(size, value):
    assert top(constu(0x6000), deref_size(size)) == value
    assert top(constu(0x6008), deref_size(size)) == (1 << (8 * size)) - 1


@pytest.mark.parametrize("size", [0, 9])
def test_deref_size_bad(size):
    with pytest.raises(ExprError, match="deref_size"):
        ev(constu(0x6000), deref_size(size))


def test_deref_size_larger_than_address():
    with pytest.raises(ExprError, match="deref_size"):
        ev(constu(0x6000), deref_size(8), ptr_size=4)


def test_memory_errors():
    err = MemoryReadError(0x1234, 8)

    def raising(a, s):
        raise err
    with pytest.raises(MemoryReadError) as info:
        ev(constu(0x1234), DEREF, read_mem=raising)
    assert info.value is err                              # propagated unchanged
    with pytest.raises(MemoryReadError, match="0x1234"):
        ev(constu(0x1234), DEREF, read_mem=lambda a, s: {}[a])
    with pytest.raises(MemoryReadError, match="short read"):
        ev(constu(0x1234), DEREF, read_mem=lambda a, s: b"\0")
    with pytest.raises(ExprError, match="memory is not available"):
        ev(constu(0x1234), DEREF, read_mem=None)


# --- locations ------------------------------------------------------------------------------------------

def test_memory_location_is_the_top_of_stack():
    res = ev(breg(7, 8))
    assert res == ExprResult("memory", 0x6008)


def test_empty_expression():
    assert ev().kind == "empty"


def test_stack_value():
    res = ev(breg(7, 8), STACK_VALUE)
    assert (res.kind, res.value) == ("value", 0x6008)


def test_implicit_value():
    res = ev(implicit_value(b"\x01\x02\x03"))
    assert (res.kind, res.value) == ("implicit", b"\x01\x02\x03")


@pytest.mark.parametrize("loc", [reg(0), regx(3), lit(1) + STACK_VALUE, implicit_value(b"ab")])
def test_only_piece_may_follow_a_non_memory_location(loc):
    with pytest.raises(ExprError, match="only DW_OP_piece"):
        ev(loc, lit(1))
    assert ev(loc, piece(2)).kind == "pieces"


def test_pieces():
    res = ev(reg(0), piece(8), breg(7, 0), piece(4), piece(2), lit(5), STACK_VALUE, piece(2),
             implicit_value(b"xy"), piece(2))
    assert res.kind == "pieces"
    kinds = [(p.kind, p.value, size) for p, size in res.pieces]
    assert kinds == [("register", 0, 8), ("memory", 0x6000, 4), ("empty", None, 2),
                     ("value", 5, 2), ("implicit", b"xy", 2)]
    assert [p.bit_size for p, _ in res.pieces] == [64, 32, 16, 16, 16]


def test_bit_pieces():
    res = ev(reg(1), bit_piece(3, 0), breg(7, 0), bit_piece(13, 5))
    (p1, s1), (p2, s2) = res.pieces
    assert (p1.kind, p1.value, p1.bit_size, p1.bit_offset, s1) == ("register", 1, 3, 0, 1)
    assert (p2.kind, p2.value, p2.bit_size, p2.bit_offset, s2) == ("memory", 0x6000, 13, 5, 2)


def test_location_after_the_last_piece_needs_a_piece():
    with pytest.raises(ExprError, match="piece"):
        ev(reg(0), piece(8), reg(1))


def test_nop():
    assert top(lit(3), NOP, NOP) == 3
    assert ev(NOP).kind == "empty"


# --- operations that need outside information ---------------------------------------------------------------

@pytest.mark.parametrize("op, operands, match", [
    (0x18, b"", "xderef"), (0x95, b"\x04", "xderef_size"), (0xA7, b"\x04\x00", "xderef_type"),
    (0x97, b"", "push_object_address"), (0x98, le(0, 2), "call2"), (0x99, le(0, 4), "call4"),
    (0x9A, le(0, 4), "call_ref"), (0x9B, b"", "form_tls_address"),
    (0xE0, b"", "GNU_push_tls_address"), (0xA0, le(0, 4) + b"\x00", "implicit_pointer"),
    (0xF2, le(0, 4) + b"\x00", "GNU_implicit_pointer"), (0xFA, le(0, 4), "GNU_parameter_ref"),
    (0xFD, le(0, 4), "GNU_variable_value"),
])
def test_unsupported_operations(op, operands, match):
    with pytest.raises(ExprError, match=match):
        ev(lit(1), lit(2), bytes([op]) + operands)


@pytest.mark.parametrize("op", [0xA0, 0xF2])
def test_implicit_pointer_with_the_units_reference_size(op):
    """Given the unit's DIE-reference size, DW_OP_implicit_pointer is the location
    "synthetic" (DIE offset, byte offset), alone or as a piece beside others."""
    ref = bytes([op]) + le(0x1234, 4) + b"\x7f"                 # DIE 0x1234, offset -1
    assert evaluate(ref, ref_size=4) == ExprResult("synthetic", (0x1234, -1))
    res = evaluate(ref + b"\x93\x04" + b"\x91\x10" + b"\x93\x08", frame_base=0x1000, ref_size=4)
    assert res.kind == "pieces"
    assert [(p.kind, p.value, n) for p, n in res.pieces] == [("synthetic", (0x1234, -1), 4), ("memory", 0x1010, 8)]
    ref8 = bytes([op]) + le(0x1234, 8) + b"\x00"               # 64-bit DWARF
    assert evaluate(ref8, ref_size=8) == ExprResult("synthetic", (0x1234, 0))
    with pytest.raises(ExprError, match="truncated"):
        evaluate(bytes([op]) + b"\x34\x12", ref_size=4)


@pytest.mark.parametrize("op", [0xA3, 0xF3])
def test_entry_value(op):
    e = b"\x54"                                          # DW_OP_reg4: rsi at entry
    code = bytes([op]) + uleb(len(e)) + e + plus_uconst(1) + STACK_VALUE
    with pytest.raises(ExprError, match="entry value unavailable"):
        ev(code)
    seen = []

    def hook(block):
        seen.append(block)
        return 41
    res = ev(code, entry_value=hook)
    assert (res.kind, res.value) == ("value", 42) and seen == [e]
    with pytest.raises(ExprError, match="entry value unavailable"):
        ev(code, entry_value=lambda b: None)
    with pytest.raises(ExprError, match="entry value unavailable"):
        ev(code, entry_value=lambda b: {}[b])


@pytest.mark.parametrize("op", [0xA1, 0xA2, 0xFB, 0xFC])
def test_addrx_constx(op):
    code = bytes([op]) + uleb(3)
    with pytest.raises(ExprError, match=r"\.debug_addr"):
        ev(code)
    assert top(code, addr_base_lookup=lambda i: 0x1000 + i) == 0x1003
    with pytest.raises(ExprError, match="no .debug_addr entry 3"):
        ev(code, addr_base_lookup=lambda i: [][i])


# --- typed stack (DWARF 5 and GNU) --------------------------------------------------------------------------

def base_types(die):
    return {0x30: (1, True), 0x40: (4, False), 0x50: (4, True)}[die]


@pytest.mark.parametrize("op", [0xA4, 0xF4])
def test_const_type(op):
    code = bytes([op]) + uleb(0x30) + b"\x01\xff"
    assert top(code) == 0xFF                                 # no type info: unsigned
    assert top(code, base_type=base_types) == M64            # signed char -1
    assert top(bytes([op]) + uleb(0x40) + b"\x04" + le(0x12345678, 4)) == 0x12345678
    with pytest.raises(ExprError, match="does not fit"):
        ev(bytes([op]) + uleb(0x40) + b"\x10" + b"\xff" * 16)
    with pytest.raises(ExprError, match="unknown base type"):
        ev(code, base_type=lambda d: {}[d])


@pytest.mark.parametrize("op", [0xA5, 0xF5])
def test_regval_type(op):
    assert top(bytes([op]) + uleb(1) + uleb(0x40)) == 0x20
    regs = {1: 0xFFFFFFFF80000000}
    assert top(bytes([op]) + uleb(1) + uleb(0x50), read_reg=regs.__getitem__,
               base_type=base_types) == (-0x80000000) & M64
    assert top(bytes([op]) + uleb(1) + uleb(0x40), read_reg=regs.__getitem__,
               base_type=base_types) == 0x80000000


@pytest.mark.parametrize("op", [0xA6, 0xF6])
def test_deref_type(op):
    assert top(constu(0x6008), bytes([op]) + b"\x04" + uleb(0x40)) == 0xFFFFFFFF
    assert top(constu(0x6008), bytes([op]) + b"\x04" + uleb(0x50), base_type=base_types) == M64
    with pytest.raises(ExprError, match="size"):
        ev(constu(0x6008), bytes([op]) + b"\x10" + uleb(0x40))


@pytest.mark.parametrize("op", [0xA8, 0xF7])
def test_convert(op):
    assert top(constu(0x1FF), bytes([op]) + uleb(0x30)) == 0x1FF          # no type info: unchanged
    assert top(constu(0x1FF), bytes([op]) + uleb(0x30), base_type=base_types) == M64
    assert top(consts(-1), bytes([op]) + uleb(0x40), base_type=base_types) == 0xFFFFFFFF
    assert top(consts(-1), bytes([op]) + uleb(0), base_type=base_types) == M64   # generic type


@pytest.mark.parametrize("op", [0xA9, 0xF9])
def test_reinterpret(op):
    assert top(constu(0x1234), bytes([op]) + uleb(0x40), base_type=base_types) == 0x1234
    with pytest.raises(ExprError, match="underflow"):
        ev(bytes([op]) + uleb(0x40))


def test_gnu_uninit_and_encoded_addr():
    assert top(lit(4), b"\xf0") == 4
    assert top(b"\xf1\x00" + le(0x401000, 8)) == 0x401000          # absptr
    assert top(b"\xf1\x03" + le(0x401000, 4)) == 0x401000          # udata4
    with pytest.raises(ExprError, match="encoded_addr"):
        ev(b"\xf1\x1b" + le(0x10, 4))                               # pcrel: no address known


# --- malformed expressions ------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", [DUP, DROP, OVER, SWAP, ROT, ABS, AND, DIV, MINUS, MOD, MUL, NEG, NOT,
                                OR, PLUS, SHL, SHR, SHRA, XOR, EQ, GE, GT, LE, LT, NE, DEREF,
                                plus_uconst(1), bra(0), deref_size(4), STACK_VALUE])
def test_stack_underflow(op):
    pre = lit(1) if op in (OVER, SWAP, AND, DIV, MINUS, MOD, MUL, OR, PLUS, SHL, SHR, SHRA, XOR,
                           EQ, GE, GT, LE, LT, NE) else b""
    if op == ROT:
        pre = lit(1) + lit(2)
    with pytest.raises(ExprError, match="stack underflow") as info:
        ev(pre, op)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("code", [
    b"\x03\x00\x10", b"\x08", b"\x0a\x01", b"\x0c\x01\x02", b"\x0e\x01", b"\x10\x80", b"\x11\xff",
    b"\x15", b"\x23", b"\x28\x00", b"\x2f\x01", b"\x70", b"\x90\x80\x80", b"\x91", b"\x92\x01",
    b"\x93", b"\x94", b"\x9d\x08", b"\x9e\x05ab", b"\xa3\x04\x50", b"\xa4\x30\x04\x01",
    b"\xa1", b"\xf1",
])
def test_truncated_operands(code):
    with pytest.raises(ExprError, match="truncated"):
        ev(lit(1), lit(1), code)


@pytest.mark.parametrize("op", [0x00, 0x01, 0x02, 0x04, 0x05, 0x07, 0xAA, 0xDF, 0xFF])
def test_unknown_opcodes(op):
    with pytest.raises(ExprError, match=f"unknown DWARF expression opcode 0x{op:02x}"):
        ev(lit(1), bytes([op]))


def test_every_named_opcode_is_handled():
    """No named opcode falls through to 'unknown' (operands may be missing: other errors are fine)."""
    for op in OP_NAMES:
        try:
            ev(lit(1), lit(1), lit(1), bytes([op]) + b"\x01" * 9, cfa=0, frame_base=0,
               read_reg=lambda r: 0, read_mem=lambda a, s: b"\0" * s)
        except ExprError as exc:
            assert f"opcode 0x{op:02x} at offset 3" not in str(exc), OP_NAMES[op]


def test_expr_error_is_a_swk_error():
    assert issubclass(ExprError, SwkError)


def test_memoryview_input():
    assert evaluate(memoryview(breg(7, 8) + DEREF), read_reg=read_reg, read_mem=read_mem).value == M64
