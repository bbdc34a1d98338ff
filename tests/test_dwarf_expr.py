"""The one DWARF expression evaluator (dwarf/expr and its parts), opcode by opcode against
the DWARF 5 standard's semantics and GDB 13's (dwarf2/expr.c, valarith.c: its messages are
the ones users see); its opcode table against GDB 13's source and binutils' dwarf2.def; and
real GCC -O2 programs' expressions (typed operations, entry values) printed as GDB prints
them.
"""
import math
import re
import subprocess
import tarfile

import pytest

import locals_cases as LC
import swk_suite as S
import swk_testlib as T
from swk_plugin.dwarf.expr import (OP_NAMES, BaseType, ContextUnavailable, DivisionByZero, EntryValueUnavailable,
                                   ExprError, ExprResult, LoopDetected, MalformedExpression, RegisterUnavailable,
                                   StackUnderflow, StepLimit, TypeMismatch, UnhandledOpcode, evaluate)
from swk_plugin.dwarf.exprmachine import HANDLERS
from swk_plugin.dwarf.exprvalues import TypedValue, from_bytes, to_bytes
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
    return REGS.get(r)


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
    with pytest.raises(StackUnderflow, match=r"^Asked for position 3 of stack, stack only has 3 elements on it\.$"):
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
    ((lit(7), lit(0), MOD), 7),                          # GDB: x mod 0 is x
    ((consts(-7), lit(0), MOD), (-7) & M64),
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
    ((consts(-16), constu(100), SHRA), 0),              # GDB 13: a shift by >= the width is 0
    ((consts(-16), constu(64), SHR), 0),
    ((lit(1), consts(-1), SHL), 0),                     # a negative count (generic: signed) too
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


def test_division_by_zero():
    """GDB's words (valarith.c); DW_OP_mod by zero is the dividend there (above)."""
    with pytest.raises(DivisionByZero, match="^Division by zero$"):
        ev(lit(1), lit(0), DIV)


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
    with pytest.raises(StepLimit, match="10000 steps back"):
        ev(skip(-3))
    with pytest.raises(StepLimit, match="50 steps back"):
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
    """A register the hook has no value for (None) is RegisterUnavailable, by number."""
    for code, regno in ((breg(9, 0), 9), (bregx(99, 0), 99), (b"\xa5" + uleb(98) + uleb(0x40), 98)):
        with pytest.raises(RegisterUnavailable, match=f"register {regno} is unavailable") as info:
            ev(code)
        assert info.value.regno == regno
    with pytest.raises(ContextUnavailable, match="^DW_OP_breg evaluation requires a frame.$"):
        ev(breg(1, 0), read_reg=None)
    with pytest.raises(ContextUnavailable, match="^DW_OP_bregx evaluation requires a frame.$"):
        ev(bregx(1, 0), read_reg=None)


class HookError(Exception):
    """A caller's own exception (the locals' OptimizedOut is one)."""


@pytest.mark.parametrize("code, hook", [
    (breg(1, 0), "read_reg"), (bregx(1, 0), "read_reg"), (fbreg(0), "frame_base"), (CALL_FRAME_CFA, "cfa"),
    (entry_value(reg(5)), "entry_value"), (b"\xa1\x00", "addr_base_lookup"),
    (lit(0) + b"\xe0", "tls_address"), (b"\xfa" + le(0x30, 4), "parameter_ref"),
    (b"\x98" + le(0x30, 2), "procedure"), (b"\xfd" + le(0x30, 4), "variable_value"),
])
@pytest.mark.parametrize("exc", [HookError, IndexError, KeyError])
def test_a_hooks_exception_passes_unchanged(code, hook, exc):
    """What a hook raises is its caller's (an IndexError of its own is no stack underflow)."""
    def raising(*_a):
        raise exc("mine")
    kw = {hook: raising, "ref_size": 4}
    with pytest.raises(exc, match="mine"):
        ev(code, **kw)


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


@pytest.mark.parametrize("loc, name", [(reg(0), "DW_OP_reg"), (regx(3), "DW_OP_regx"),
                                       (lit(1) + STACK_VALUE, "DW_OP_stack_value"),
                                       (implicit_value(b"ab"), "DW_OP_implicit_value")])
def test_only_piece_may_follow_a_non_memory_location(loc, name):
    """GDB's dwarf_expr_require_composition, in its words."""
    with pytest.raises(MalformedExpression, match=re.escape(
            f"DWARF-2 expression error: `{name}' operations must be used either alone or in conjunction "
            "with DW_OP_piece or DW_OP_bit_piece.")):
        ev(loc, lit(1))
    assert ev(loc, piece(2)).kind == "pieces"
    assert ev(loc, bit_piece(3, 0)).kind == "pieces"


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

@pytest.mark.parametrize("op, operands", [(0x18, b""), (0x95, b"\x04"), (0xA7, b"\x04\x00"), (0x9A, le(0, 4))])
def test_operations_gdb_does_not_evaluate(op, operands):
    """DW_OP_xderef, xderef_size, xderef_type and call_ref: GDB 13's error, in its words."""
    with pytest.raises(UnhandledOpcode, match=f"^Unhandled dwarf expression opcode 0x{op:x}$"):
        ev(lit(1), lit(2), bytes([op]) + operands)


@pytest.mark.parametrize("op, operands, cls, match", [
    (0x97, b"", ContextUnavailable, "^Location address is not set.$"),
    (0x98, le(0, 2), ContextUnavailable, "call2"), (0x99, le(0, 4), ContextUnavailable, "call4"),
    (0x9B, b"", ContextUnavailable, "form_tls_address"), (0xE0, b"", ContextUnavailable, "GNU_push_tls_address"),
    (0xA0, le(0, 4) + b"\x00", ContextUnavailable, "implicit_pointer"),
    (0xF2, le(0, 4) + b"\x00", ContextUnavailable, "GNU_implicit_pointer"),
    (0xFA, le(0, 4), EntryValueUnavailable, "GNU_parameter_ref"),
    (0xFD, le(0, 4), ContextUnavailable, "GNU_variable_value"),
])
def test_operations_that_need_the_callers_context(op, operands, cls, match):
    with pytest.raises(cls, match=match):
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
    with pytest.raises(EntryValueUnavailable, match="entry value unavailable"):
        ev(code)
    seen = []

    def hook(block):
        seen.append(block)
        return 41
    res = ev(code, entry_value=hook)
    assert (res.kind, res.value) == ("value", 42) and seen == [e]
    with pytest.raises(EntryValueUnavailable, match="entry value unavailable"):
        ev(code, entry_value=lambda b: None)
    # a register's bytes: its low-order end, in the target's byte order
    assert ev(code, entry_value=lambda b: le(0x1122, 16)).value == 0x1123
    assert ev(code, entry_value=lambda b: (0x1122).to_bytes(16, "big"), byteorder="big").value == 0x1123


@pytest.mark.parametrize("block, ok", [
    (reg(3), True), (regx(17), True), (breg(5, 0) + DEREF, True), (breg(5, 0) + deref_size(4), True),
    (bregx(40, 0) + DEREF, True), (b"\xa5" + uleb(17) + uleb(0x40), True),
    (breg(5, 8) + DEREF, False), (breg(5, 0), False), (lit(1), False), (reg(3) + reg(4), False),
    (fbreg(0), False),
])
def test_entry_value_forms(block, ok):
    """GDB evaluates DW_OP_entry_value of one register, or of DW_OP_breg*(0) then a
    deref (dwarf_block_to_dwarf_reg / _deref); anything else is its error."""
    code = entry_value(block)
    if ok:
        assert top(code, entry_value=lambda b: 5) == 5
    else:
        with pytest.raises(MalformedExpression, match=re.escape(
                "DWARF-2 expression error: DW_OP_entry_value is supported only for single DW_OP_reg* "
                "or for DW_OP_breg*(0)+DW_OP_deref*")):
            ev(code, entry_value=lambda b: 5)


@pytest.mark.parametrize("op", [0xA1, 0xA2, 0xFB, 0xFC])
def test_addrx_constx(op):
    code = bytes([op]) + uleb(3)
    with pytest.raises(ContextUnavailable, match=r"\.debug_addr entry 3"):
        ev(code)
    assert top(code, addr_base_lookup=lambda i: 0x1000 + i) == 0x1003
    with pytest.raises(ContextUnavailable, match=r"\.debug_addr entry 3"):
        ev(code, addr_base_lookup=lambda i: None)


@pytest.mark.parametrize("op,relocated", [(0xA1, True), (0xFB, True), (0xA2, False), (0xFC, False)])
def test_constx_is_not_relocated(op, relocated):
    """Split DWARF's thread-local variables: DW_OP_GNU_const_index / DW_OP_constx push a
    .debug_addr entry that is an offset, not an address, which GDB does not relocate (its
    expr.c adds the text offset for DW_OP_addrx only): const_lookup, where given, reads it."""
    code = bytes([op]) + uleb(3)
    got = top(code, addr_base_lookup=lambda i: 0x5000 + 0x1000 + i, const_lookup=lambda i: 0x1000 + i)
    assert got == (0x6003 if relocated else 0x1003)


# --- typed stack (DWARF 5 section 2.5.1, and the GNU forms) --------------------------------------------------

INT1, UINT4, INT4, INT8, UINT8 = (BaseType(1, "signed"), BaseType(4, "unsigned"), BaseType(4, "signed"),
                                  BaseType(8, "signed"), BaseType(8, "unsigned"))
FLOAT, DOUBLE, LDOUBLE = BaseType(4, "float"), BaseType(8, "float"), BaseType(16, "float")
#: a unit's base types by DIE offset, as the locals' hook gives them
TYPES = {0x30: INT1, 0x40: UINT4, 0x50: INT4, 0x60: INT8, 0x68: UINT8, 0x70: FLOAT, 0x78: DOUBLE, 0x80: LDOUBLE}
DIE = {t: off for off, t in TYPES.items()}


def const_type(t, v):
    data = struct_bytes(v, t)
    return b"\xa4" + uleb(DIE[t]) + bytes([len(data)]) + data


def struct_bytes(v, t):
    return to_bytes(TypedValue(v, t), 8, "little")


def convert(t): return b"\xa8" + uleb(DIE[t] if t is not None else 0)
def reinterpret(t): return b"\xa9" + uleb(DIE[t] if t is not None else 0)
def regval_type(r, t): return b"\xa5" + uleb(r) + uleb(DIE[t])
def deref_type(size, t): return b"\xa6" + bytes([size]) + uleb(DIE[t])


def typed(*ops, **kw):
    """The typed value an expression leaves (its DW_OP_stack_value's bytes, read back)."""
    kw.setdefault("base_type", TYPES.get)
    res = ev(*ops, STACK_VALUE, **kw)
    assert res.kind == "implicit", res
    t = _last_type(b"".join(ops))
    return from_bytes(res.value, t, "little").value


def _last_type(code):
    """The type of the last typed operation of ``code`` (what the test built last)."""
    last = None
    for t, off in DIE.items():
        for form in b"\xa4\xa8\xa9\xa5\xa6\xf4\xf7\xf9\xf5\xf6":
            for m in re.finditer(re.escape(bytes([form])), code):
                rest = code[m.end():]
                if form in (0xA5, 0xF5, 0xA6, 0xF6):         # a register number, a size first
                    rest = rest[1:]
                if rest.startswith(uleb(off)) and (last is None or m.start() > last[0]):
                    last = (m.start(), t)
    return last[1]


@pytest.mark.parametrize("op", [0xA4, 0xF4])
def test_const_type(op):
    code = bytes([op]) + uleb(0x30) + b"\x01\xff"
    assert top(code) == 0xFF                                 # no types given (CFI): a generic value
    assert typed(code) == -1                                 # signed char -1
    assert top(code, convert(None), base_type=TYPES.get) == M64   # ... converted to generic: sign-extended
    assert typed(const_type(DOUBLE, 2.5)) == 2.5
    assert typed(const_type(FLOAT, 0.1)) == struct_float(0.1)
    with pytest.raises(TypeMismatch, match="^DW_OP_const_type has different sizes for type and data$"):
        ev(bytes([op]) + uleb(0x50) + b"\x02\xff\xff", base_type=TYPES.get)
    with pytest.raises(TypeMismatch, match="does not fit"):
        ev(bytes([op]) + uleb(0x40) + b"\x10" + b"\xff" * 16)


def struct_float(f):
    return from_bytes(to_bytes(TypedValue(f, FLOAT), 8, "little"), FLOAT, "little").value


@pytest.mark.parametrize("op", [0xA5, 0xF5])
def test_regval_type(op):
    regs = {1: 0xFFFFFFFF80000000, 17: 0x4004000000000000}.get
    assert top(bytes([op]) + uleb(1) + uleb(0x40), read_reg=regs) == 0xFFFFFFFF80000000   # untyped: generic
    assert typed(regval_type(1, INT4), read_reg=regs) == -0x80000000      # the low-order 4 bytes
    assert typed(regval_type(1, UINT4), read_reg=regs) == 0x80000000
    assert typed(regval_type(17, DOUBLE), read_reg=regs) == 2.5
    # a vector register's bytes (read_reg_bytes): a float in its low-order end
    xmm = struct_bytes(1.5, FLOAT) + bytes(12)
    assert typed(regval_type(17, FLOAT), read_reg_bytes={17: xmm}.get) == 1.5
    big = bytes(12) + to_bytes(TypedValue(1.5, FLOAT), 8, "big")
    res = ev(regval_type(17, FLOAT), STACK_VALUE, read_reg_bytes={17: big}.get, base_type=TYPES.get, byteorder="big")
    assert from_bytes(res.value, FLOAT, "big").value == 1.5


@pytest.mark.parametrize("op", [0xA6, 0xF6])
def test_deref_type(op):
    assert top(constu(0x6008), bytes([op]) + b"\x04" + uleb(0x40)) == 0xFFFFFFFF      # untyped
    assert typed(constu(0x6008), deref_type(4, INT4)) == -1
    assert typed(constu(0x6008), deref_type(4, UINT4)) == 0xFFFFFFFF
    # fewer bytes than the type: zero-extended (GDB), then read as the type
    assert typed(constu(0x6008), deref_type(1, INT8)) == 0xFF
    assert typed(constu(0x6000), deref_type(8, DOUBLE)) == struct_unpack_double(0x1122334455667788)
    with pytest.raises(ExprError, match="size"):
        ev(constu(0x6008), bytes([op]) + b"\x10" + uleb(0x40))


def struct_unpack_double(bits):
    return from_bytes(bits.to_bytes(8, "little"), DOUBLE, "little").value


@pytest.mark.parametrize("op", [0xA8, 0xF7])
def test_convert(op):
    assert top(constu(0x1FF), bytes([op]) + uleb(0x30)) == 0x1FF          # untyped: unchanged
    assert typed(constu(0x1FF), convert(INT1)) == -1                      # by value, wrapped
    assert typed(consts(-1), convert(UINT4)) == 0xFFFFFFFF
    assert top(consts(-1), convert(UINT4), convert(None), base_type=TYPES.get) == 0xFFFFFFFF
    assert top(consts(-1), convert(INT4), convert(None), base_type=TYPES.get) == M64
    assert typed(consts(-7), convert(DOUBLE)) == -7.0                     # the generic type is signed
    assert typed(const_type(DOUBLE, -2.75), convert(INT4)) == -2          # toward zero, as C
    assert typed(const_type(DOUBLE, 0.1), convert(FLOAT)) == struct_float(0.1)


@pytest.mark.parametrize("op", [0xA9, 0xF9])
def test_reinterpret(op):
    assert typed(constu(0x3FF0000000000000), reinterpret(DOUBLE)) == 1.0    # the same bits
    assert typed(const_type(FLOAT, 1.0), reinterpret(UINT4)) == 0x3F800000
    assert top(const_type(DOUBLE, 1.0), reinterpret(None), base_type=TYPES.get) == 0x3FF0000000000000
    with pytest.raises(TypeMismatch, match="^DW_OP_reinterpret has wrong size$"):
        ev(constu(1), reinterpret(UINT4), base_type=TYPES.get)
    with pytest.raises(StackUnderflow):
        ev(bytes([op]) + uleb(0x40))


@pytest.mark.parametrize("ops, value", [
    # DWARF 5 2.5.1.4: arithmetic in the operands' type, wrapping at its size
    ((const_type(INT4, 0x7FFFFFFF), const_type(INT4, 1), PLUS), -0x80000000),
    ((const_type(UINT4, 0), const_type(UINT4, 1), MINUS), 0xFFFFFFFF),
    ((const_type(UINT4, 0x10000), const_type(UINT4, 0x10000), MUL), 0),
    ((const_type(INT4, -7), const_type(INT4, 2), DIV), -3),                # signed, toward zero
    ((const_type(UINT4, 0xFFFFFFF9), const_type(UINT4, 2), DIV), 0x7FFFFFFC),  # unsigned
    ((const_type(INT4, -7), const_type(INT4, 3), MOD), 2),                 # GDB's BINOP_MOD: floored
    ((const_type(UINT4, 7), const_type(UINT4, 0), MOD), 7),
    ((const_type(INT4, -16), const_type(INT4, 2), SHR), 0x3FFFFFFC),       # logical, in 32 bits
    ((const_type(UINT4, 0x80000000), const_type(UINT4, 4), SHRA), -0x8000000 & 0xFFFFFFFF),  # arithmetic
    ((const_type(INT4, 1), const_type(INT4, 31), SHL), -0x80000000),
    ((const_type(INT4, 1), const_type(INT4, 32), SHL), 0),                 # >= the type's width: 0
    ((const_type(INT4, 5), NEG), -5),
    ((const_type(INT4, -0x80000000), NEG), -0x80000000),
    ((const_type(INT4, -5), ABS), 5),
    ((const_type(UINT4, 0), NOT), 0xFFFFFFFF),
    ((const_type(INT4, 0xF0), const_type(INT4, 0x3C), AND), 0x30),
    ((const_type(INT4, 0xF0), const_type(INT4, 0x3C), OR), 0xFC),
    ((const_type(INT4, 0xF0), const_type(INT4, 0x3C), XOR), 0xCC),
    ((const_type(DOUBLE, 1.5), const_type(DOUBLE, 2.25), PLUS), 3.75),
    ((const_type(DOUBLE, 1.0), const_type(DOUBLE, 3.0), DIV), 1.0 / 3.0),
    ((const_type(FLOAT, 1.0), const_type(FLOAT, 3.0), DIV), struct_float(1.0 / 3.0)),   # single precision
    ((const_type(DOUBLE, 1.0), const_type(DOUBLE, 0.0), DIV), math.inf),   # IEEE: no error
    ((const_type(DOUBLE, -2.5), ABS), 2.5),
    ((const_type(DOUBLE, 2.5), NEG), -2.5),
])
def test_typed_arithmetic(ops, value):
    assert typed(*ops) == value


def test_typed_float_division_by_zero_of_zero_is_nan():
    assert math.isnan(typed(const_type(DOUBLE, 0.0), const_type(DOUBLE, 0.0), DIV))


@pytest.mark.parametrize("ops, value", [
    # comparisons by the operands' type: signed, unsigned or floating; the result is generic
    ((const_type(INT4, -1), const_type(INT4, 1), LT), 1),
    ((const_type(UINT4, 0xFFFFFFFF), const_type(UINT4, 1), LT), 0),
    ((const_type(UINT4, 0xFFFFFFFF), const_type(UINT4, 1), GT), 1),
    ((const_type(DOUBLE, -0.5), const_type(DOUBLE, 0.25), LE), 1),
    ((const_type(DOUBLE, 0.25), const_type(DOUBLE, 0.25), EQ), 1),
    ((const_type(DOUBLE, 0.25), const_type(DOUBLE, 0.5), GE), 0),
    ((const_type(INT8, 3), const_type(INT8, 3), NE), 0),
    ((consts(-1), const_type(INT8, 1), LT), 1),              # generic is the signed address-sized type
])
def test_typed_comparisons(ops, value):
    assert top(*ops, base_type=TYPES.get) == value


@pytest.mark.parametrize("ops, message", [
    ((const_type(INT4, 1), const_type(UINT4, 1), PLUS), "Incompatible types on DWARF stack"),
    ((const_type(INT4, 1), lit(1), PLUS), "Incompatible types on DWARF stack"),
    ((const_type(UINT8, 1), lit(1), LT), "Incompatible types on DWARF stack"),
    ((const_type(DOUBLE, 1.0), const_type(DOUBLE, 1.0), AND), "integral type expected in DWARF expression"),
    ((const_type(DOUBLE, 1.0), const_type(DOUBLE, 1.0), SHL), "integral type expected in DWARF expression"),
    ((const_type(DOUBLE, 1.0), NOT), "integral type expected in DWARF expression"),
    ((const_type(DOUBLE, 1.0), plus_uconst(1)), "integral type expected in DWARF expression"),
    ((const_type(DOUBLE, 1.0), DEREF), "integral type expected in DWARF expression"),
    ((const_type(DOUBLE, 1.0), const_type(DOUBLE, 1.0), MOD), "Integer-only operation on floating point number."),
])
def test_typed_mismatches(ops, message):
    """GDB's errors, in its words (dwarf2/expr.c, target-float.c)."""
    with pytest.raises(TypeMismatch, match=f"^{re.escape(message)}$"):
        ev(*ops, base_type=TYPES.get)


def test_typed_integer_division_by_zero():
    with pytest.raises(DivisionByZero, match="^Division by zero$"):
        ev(const_type(INT4, 1), const_type(INT4, 0), DIV, base_type=TYPES.get)


def test_plus_uconst_of_a_typed_integer_is_generic():
    """GDB: value_as_long(top) + constant, pushed as the address type."""
    assert top(const_type(INT4, -1), plus_uconst(2), base_type=TYPES.get) == 1


def test_typed_entry_value_of_a_vector_register():
    """DW_OP_entry_value(DW_OP_regval_type xmm0 <double>): the call site's register bytes
    read as the type (GCC -O2's floating parameters)."""
    code = entry_value(regval_type(17, DOUBLE)) + const_type(DOUBLE, 2.0) + MUL
    assert typed(code, entry_value=lambda b: struct_bytes(1.25, DOUBLE) + bytes(8)) == 2.5


def test_x87_extended_values():
    """A 16-byte long double of x87's format (little-endian, its own) round-trips."""
    for f in (1.0, -2.5, 1e300, 0.0, math.inf):
        assert typed(const_type(LDOUBLE, f)) == f
    assert to_bytes(TypedValue(1.0, LDOUBLE), 8, "little")[:10] == bytes.fromhex("0000000000000080ff3f")


def test_typed_value_left_on_the_stack_is_its_bytes():
    res = ev(const_type(INT4, -2), base_type=TYPES.get)
    assert (res.kind, res.value) == ("implicit", le(-2, 4))
    res = ev(const_type(INT4, -2), piece(4), lit(1), STACK_VALUE, piece(8), base_type=TYPES.get)
    assert [(p.kind, p.value) for p, _n in res.pieces] == [("implicit", le(-2, 4)), ("value", 1)]


# --- the context an expression may need -----------------------------------------------------------------

def test_push_object_address():
    assert top(b"\x97", plus_uconst(8), object_address=0x5000) == 0x5008


def test_tls_address():
    seen = []

    def tls(off):
        seen.append(off)
        return 0x7000 + off
    for op in (0x9B, 0xE0):
        assert top(constu(0x10), bytes([op]), tls_address=tls) == 0x7010
    assert seen == [0x10, 0x10]


@pytest.mark.parametrize("op, size", [(0x98, 2), (0x99, 4)])
def test_call_runs_a_procedure_on_the_same_stack(op, size):
    """DWARF 5 2.5.1.5: the DIE's location expression runs on this stack; none: no effect."""
    procs = {0x30: plus_uconst(5) + DUP, 0x40: b""}
    assert stack(lit(2), bytes([op]) + le(0x30, size), depth=2, procedure=procs.get) == [7, 7]
    assert top(lit(2), bytes([op]) + le(0x40, size), procedure=procs.get) == 2
    recursive = {0x30: bytes([op]) + le(0x30, size)}
    with pytest.raises(LoopDetected, match=r"^DWARF-2 expression error: Loop detected \(257\)\.$"):
        ev(bytes([op]) + le(0x30, size), procedure=recursive.get)


def test_variable_value_and_parameter_ref():
    assert top(b"\xfd" + le(0x1234, 4), plus_uconst(1), ref_size=4, variable_value={0x1234: 41}.get) == 42
    assert top(b"\xfd" + le(0x1234, 8), ref_size=8, variable_value={0x1234: 41}.get) == 41
    assert top(b"\xfa" + le(0x99, 4), parameter_ref={0x99: 6}.get) == 6
    with pytest.raises(EntryValueUnavailable):
        ev(b"\xfa" + le(0x98, 4), parameter_ref={0x99: 6}.get)


def test_unknown_keyword_is_refused():
    with pytest.raises(TypeError, match="fram_base"):
        evaluate(lit(1), fram_base=5)


def test_gnu_uninit_and_encoded_addr():
    assert top(lit(4), b"\xf0") == 4
    assert ev(reg(3), b"\xf0") == ExprResult("register", 3)
    with pytest.raises(MalformedExpression, match="DW_OP_GNU_uninit must always be the very last op"):
        ev(lit(4), b"\xf0", lit(1))
    assert top(b"\xf1\x00" + le(0x401000, 8)) == 0x401000          # absptr
    assert top(b"\xf1\x03" + le(0x401000, 4)) == 0x401000          # udata4
    with pytest.raises(MalformedExpression, match="encoded_addr"):
        ev(b"\xf1\x1b" + le(0x10, 4))                               # pcrel: no address known


# --- malformed expressions ------------------------------------------------------------------------------------

#: GDB's words for each operation found with too few stack entries (dwarf2/expr.c fetch, pop, swap, rot).
_AT0 = "Asked for position 0 of stack, stack only has 0 elements on it."


@pytest.mark.parametrize("pre, op, message", [
    (b"", DUP, _AT0), (b"", DROP, "dwarf expression stack underflow"),
    (lit(1), OVER, "Asked for position 1 of stack, stack only has 1 elements on it."),
    (lit(1), SWAP, "Not enough elements for DW_OP_swap.  Need 2, have 1."),
    (lit(1) + lit(2), ROT, "Not enough elements for DW_OP_rot.  Need 3, have 2."),
    *[(lit(1), op, _AT0) for op in (AND, DIV, MINUS, MOD, MUL, OR, PLUS, SHL, SHR, SHRA, XOR,
                                    EQ, GE, GT, LE, LT, NE)],
    *[(b"", op, _AT0) for op in (ABS, NEG, NOT, DEREF, plus_uconst(1), bra(0), deref_size(4), STACK_VALUE,
                                 b"\x9b", convert(INT4))],
])
def test_stack_underflow(pre, op, message):
    with pytest.raises(StackUnderflow) as info:
        ev(pre, op)
    assert str(info.value) == message


@pytest.mark.parametrize("code", [
    b"\x03\x00\x10", b"\x08", b"\x0a\x01", b"\x0c\x01\x02", b"\x0e\x01", b"\x10\x80", b"\x11\xff",
    b"\x15", b"\x23", b"\x28\x00", b"\x2f\x01", b"\x70", b"\x90\x80\x80", b"\x91", b"\x92\x01",
    b"\x93", b"\x94", b"\x9d\x08", b"\x9e\x05ab", b"\xa3\x04\x50", b"\xa4\x30\x04\x01",
    b"\xa1", b"\xf1", b"\xa5\x01", b"\xa6\x04", b"\xa8", b"\xa9", b"\x98\x01", b"\x99\x01\x02",
])
def test_truncated_operands(code):
    with pytest.raises(MalformedExpression):
        ev(lit(1), lit(1), code, frame_base=0)


@pytest.mark.parametrize("op", [0x00, 0x01, 0x02, 0x04, 0x05, 0x07, 0xAA, 0xDF, 0xE1, 0xF8, 0xFE, 0xFF])
def test_unknown_opcodes(op):
    with pytest.raises(UnhandledOpcode, match=f"^Unhandled dwarf expression opcode 0x{op:x}$"):
        ev(lit(1), bytes([op]))


def test_expr_error_is_a_swk_error():
    for cls in (StackUnderflow, UnhandledOpcode, MalformedExpression, TypeMismatch, DivisionByZero,
                LoopDetected, StepLimit, RegisterUnavailable, EntryValueUnavailable, ContextUnavailable):
        assert issubclass(cls, ExprError)
    assert issubclass(ExprError, SwkError)


def test_memoryview_input():
    assert evaluate(memoryview(breg(7, 8) + DEREF), read_reg=read_reg, read_mem=read_mem).value == M64


# --- the opcode table against GDB 13's and binutils' own sources --------------------------------------------

def _gdb_source(member):
    """A file of GDB 13.1's source (Debian's orig tarball, fetched by scripts/setup.sh),
    unpacked once under the build dir."""
    root = T.BUILD / "gdb-src"
    path = root / member
    if not path.exists():
        tarball = root / "gdb_13.1.orig.tar.xz"
        if not tarball.exists():
            pytest.skip(f"no GDB 13.1 source ({tarball}: scripts/setup.sh fetches it)")
        with tarfile.open(tarball) as tf:
            # GDB's Python (Debian's 3.11.2) predates extract's filter: one named regular file
            info = tf.getmember(member)
            assert info.isfile(), member
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(tf.extractfile(info).read())
    return path.read_text(errors="replace")


@pytest.fixture(scope="module")
def dwarf2_def():
    """{opcode: name} of every DW_OP in binutils' include/dwarf2.def (DW_OP and DW_OP_DUP)."""
    text = _gdb_source("gdb-13.1/include/dwarf2.def")
    ops = {}
    for dup, name, value in re.findall(r"^DW_(?:FIRST_)?OP(_DUP)?\s*\((DW_OP_\w+),\s*(0x[0-9a-fA-F]+)\)",
                                       text, re.M):
        if not dup or int(value, 16) not in ops:      # a code's own name before its aliases (lo_user)
            ops[int(value, 16)] = name
    assert len(ops) > 150
    return ops


@pytest.fixture(scope="module")
def gdb_evaluates(dwarf2_def):
    """The opcodes GDB 13's execute_stack_op has a case for."""
    text = _gdb_source("gdb-13.1/gdb/dwarf2/expr.c")
    body = text[text.index("dwarf_expr_context::execute_stack_op"):]
    body = body[:body.index("\n}\n")]
    names = set(re.findall(r"case (DW_OP_\w+):", body))
    by_name = {n: v for v, n in dwarf2_def.items()}
    assert len(names) > 150
    return {by_name[n] for n in names}


def test_op_names_are_dwarf2_defs(dwarf2_def):
    """OP_NAMES says what dwarf2.def says (both the standard's and the GNU codes)."""
    wrong = {f"0x{op:02x}": (f"DW_OP_{name}", dwarf2_def.get(op)) for op, name in OP_NAMES.items()
             if dwarf2_def.get(op) != f"DW_OP_{name}"}
    assert not wrong
    missing = {f"0x{op:02x}": n for op, n in dwarf2_def.items() if op not in OP_NAMES
               and (op < 0xE0 or re.match(r"DW_OP_GNU_", n))}
    assert not missing, missing


def test_every_operation_gdb_evaluates_is_handled(gdb_evaluates):
    """Each opcode GDB 13 evaluates has a handler; the ones it leaves unhandled are its
    error here too, except two swk reads: DW_OP_constx (DWARF 5's, GDB 13 has only its GNU
    form) and DW_OP_GNU_encoded_addr."""
    unhandled = HANDLERS[0x00]
    assert sorted(f"0x{op:02x}" for op in gdb_evaluates if HANDLERS[op] is unhandled) == []
    extra = sorted(OP_NAMES[op] for op in range(256) if HANDLERS[op] is not unhandled and op not in gdb_evaluates)
    assert extra == ["GNU_encoded_addr", "constx"]


def test_every_handled_opcode_runs(gdb_evaluates):
    """No opcode GDB evaluates fails as unhandled, whatever its operands."""
    for op in gdb_evaluates:
        try:
            ev(lit(1), lit(1), lit(1), bytes([op]) + b"\x01" * 9, cfa=0, frame_base=0, ref_size=4,
               read_reg=lambda r: 0, read_mem=lambda a, s: b"\0" * s)
        except UnhandledOpcode as exc:
            if exc.op == op:                    # (the filler bytes after its operands may be)
                pytest.fail(OP_NAMES[op])
        except ExprError:
            pass


# --- real programs: GCC -O2's expressions, printed as GDB prints them ------------------------------------------

#: What tests/corpus/expr_ops.c's DWARF must use for this test to mean something (objdump's names).
EXPECTED_OPS = {"DW_OP_const_type", "DW_OP_regval_type", "DW_OP_convert", "DW_OP_entry_value", "DW_OP_div",
                "DW_OP_mul", "DW_OP_shr", "DW_OP_shra", "DW_OP_neg", "DW_OP_stack_value"}


@pytest.fixture(scope="module")
def expr_prog():
    return T.build(["expr_ops.c"], "expr_ops-O2", ["-O2", "-g"])


def test_the_program_uses_the_operations(expr_prog):
    S.need_tool("objdump", "binutils")
    out = subprocess.run(["objdump", "--dwarf=info,loc", str(expr_prog)], capture_output=True, text=True,
                         timeout=120).stdout
    used = set(re.findall(r"DW_OP_\w+", out))
    used |= {n.replace("DW_OP_GNU_", "DW_OP_") for n in used}
    assert EXPECTED_OPS <= used, EXPECTED_OPS - used


@pytest.mark.corpus
@pytest.mark.parametrize("stop", range(3))
def test_values_of_real_expressions_are_gdbs(expr_prog, stop):
    """At each stop in stop(), swk-bt -full prints, below each frame header, the very lines
    of GDB's bt full: values computed by typed arithmetic, conversions and entry values."""
    S.need_tool(T.GDB, "gdb")
    gdb_text, swk_text, _out = LC.bt_full_texts(expr_prog, ["break stop", "run", *["continue"] * stop])
    g, s = LC.split_bt_full(gdb_text), LC.split_bt_full(swk_text)
    assert len(g) >= 2, gdb_text
    assert [lines for _h, lines in s] == [lines for _h, lines in g], f"gdb:\n{gdb_text}\nswk:\n{swk_text}"
    if stop < 2:                                        # in mix(): a float computed
        assert any(re.search(r"= -?\d+\.\d+", ln) for _h, lines in g for ln in lines), gdb_text
