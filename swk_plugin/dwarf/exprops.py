"""The operations of DWARF expressions on the stack (DWARF 5 section 2.5): one small
handler each, registered in exprmachine's table.

Generic values (plain ints) take the fast path in every handler; typed ones go
through exprvalues.  Semantics are GDB 13's (dwarf2/expr.c).
"""
from .encoding import DecodeError, decode_pointer, read_sint, read_uint, sleb128, uleb128
from .exprerrors import (ContextUnavailable, EntryValueUnavailable, LoopDetected, MalformedExpression,
                         RegisterUnavailable, StackUnderflow, StepLimit, TypeMismatch)
from .exprmachine import MAX_NESTING, handles, op_name, run
from .exprvalues import (INTEGRAL, as_integer, binary, compare, convert, from_bytes, low_end, reinterpret,
                         unary)


# --- literals and constants ----------------------------------------------------------------------

@handles(*range(0x30, 0x50))
def _lit(m, op, code, pos):
    m.stack.append(op - 0x30)
    return pos


@handles(0x03)
def _addr(m, op, code, pos):
    v, pos = read_uint(code, pos, m.ptr_size, m.order)
    m.stack.append(v)
    return pos


@handles(0x08, 0x0A, 0x0C, 0x0E)
def _const_unsigned(m, op, code, pos):
    v, pos = read_uint(code, pos, 1 << ((op - 0x08) >> 1), m.order)
    m.stack.append(v & m.mask)
    return pos


@handles(0x09, 0x0B, 0x0D, 0x0F)
def _const_signed(m, op, code, pos):
    v, pos = read_sint(code, pos, 1 << ((op - 0x08) >> 1), m.order)
    m.stack.append(v & m.mask)
    return pos


@handles(0x10)
def _constu(m, op, code, pos):
    v, pos = uleb128(code, pos)
    m.stack.append(v & m.mask)
    return pos


@handles(0x11)
def _consts(m, op, code, pos):
    v, pos = sleb128(code, pos)
    m.stack.append(v & m.mask)
    return pos


@handles(0xA1, 0xA2, 0xFB, 0xFC)
def _addrx(m, op, code, pos):
    """DW_OP_addrx / DW_OP_constx and their GNU forms: a .debug_addr entry.  A constant's
    (a thread-local variable's offset, split DWARF's) is not an address, and GDB does not
    relocate it: const_lookup's, where the caller gives one."""
    i, pos = uleb128(code, pos)
    look = m.const_lookup if op in (0xA2, 0xFC) and m.const_lookup is not None else m.addr_lookup
    m.stack.append(m.call(look, f".debug_addr entry {i}", op, i) & m.mask)
    return pos


@handles(0xF1)
def _encoded_addr(m, op, code, pos):
    """A GNU extension GDB 13 leaves unhandled; swk reads its absolute encodings."""
    enc, pos = read_uint(code, pos, 1, m.order)
    try:
        v, pos = decode_pointer(code, pos, enc, m.ptr_size, m.order)
    except DecodeError as exc:
        raise MalformedExpression(f"DW_OP_GNU_encoded_addr: {exc}") from None
    m.stack.append((v or 0) & m.mask)
    return pos


# --- registers and frame values ----------------------------------------------------------------

@handles(*range(0x70, 0x90))
def _breg(m, op, code, pos):
    """The hottest operation of CFI (DW_OP_breg7 8: the CFA above a return address):
    a one-byte offset and a register the frame has, read without calls."""
    b = code[pos] if pos < len(code) else 0x80
    if b < 0x40:
        pos += 1
    elif b < 0x80:
        b -= 0x80
        pos += 1
    else:
        b, pos = sleb128(code, pos)
    hook = m.read_reg
    if hook is None:
        return m.reg(op - 0x70, op)         # ContextUnavailable
    v = hook(op - 0x70)
    if v is None:
        raise RegisterUnavailable(op - 0x70)
    m.stack.append((v + b) & m.mask)
    return pos


@handles(0x92)
def _bregx(m, op, code, pos):
    r, pos = uleb128(code, pos)
    off, pos = sleb128(code, pos)
    m.stack.append((m.reg(r, op) + off) & m.mask)
    return pos


@handles(0x91)
def _fbreg(m, op, code, pos):
    off, pos = sleb128(code, pos)
    fb = m.frame_base
    if fb is None:
        raise ContextUnavailable("DW_OP_fbreg: the frame base is unknown")
    if callable(fb):
        fb = m.call(fb, "the frame base", op)
    m.stack.append((fb + off) & m.mask)
    return pos


@handles(0x9C)
def _call_frame_cfa(m, op, code, pos):
    cfa = m.cfa
    if cfa is None:
        raise ContextUnavailable("DW_OP_call_frame_cfa: the CFA is unknown")
    if callable(cfa):
        cfa = m.call(cfa, "the CFA", op)
    m.stack.append(cfa & m.mask)
    return pos


@handles(0x97)
def _push_object_address(m, op, code, pos):
    if m.object_address is None:
        raise ContextUnavailable("Location address is not set.")
    m.stack.append(m.object_address & m.mask)
    return pos


@handles(0x9B, 0xE0)
def _tls(m, op, code, pos):
    """The address of a thread-local variable at an offset (the top) in the module's block."""
    off = as_integer(m.stack.pop(), m.bits) & m.mask
    m.stack.append(m.call(m.tls_address, "the thread-local storage block", op, off) & m.mask)
    return pos


@handles(0xFD)
def _variable_value(m, op, code, pos):
    """The value of the variable at a .debug_info offset (GDB's sect_variable_value), generic."""
    if m.ref_size is None:
        raise ContextUnavailable(f"{op_name(op)}: no unit to read its DIE reference in")
    off, pos = read_uint(code, pos, m.ref_size, m.order)
    m.stack.append(m.call(m.variable_value, f"the variable at DIE 0x{off:x}", op, off) & m.mask)
    return pos


# --- stack manipulation -----------------------------------------------------------------------

@handles(0x12)
def _dup(m, op, code, pos):
    m.stack.append(m.stack[-1])
    return pos


@handles(0x13)
def _drop(m, op, code, pos):
    m.stack.pop()
    return pos


@handles(0x14)
def _over(m, op, code, pos):
    m.stack.append(m.stack[-2])
    return pos


@handles(0x15)
def _pick(m, op, code, pos):
    i, pos = read_uint(code, pos, 1, m.order)
    s = m.stack
    if i >= len(s):
        raise StackUnderflow.fetching(i, len(s))
    s.append(s[-1 - i])
    return pos


@handles(0x16)
def _swap(m, op, code, pos):
    s = m.stack
    s[-1], s[-2] = s[-2], s[-1]
    return pos


@handles(0x17)
def _rot(m, op, code, pos):
    s = m.stack
    if len(s) < 3:
        raise IndexError
    s[-3], s[-2], s[-1] = s[-1], s[-3], s[-2]
    return pos


# --- memory ---------------------------------------------------------------------------------------

@handles(0x06)
def _deref(m, op, code, pos):
    a = m.stack.pop()
    if type(a) is not int:
        a = m.address(a)
    m.stack.append(int.from_bytes(m.load(a, m.ptr_size, op), m.order))
    return pos


@handles(0x94)
def _deref_size(m, op, code, pos):
    size, pos = read_uint(code, pos, 1, m.order)
    if not 1 <= size <= m.ptr_size:
        raise MalformedExpression(f"DW_OP_deref_size: bad size {size}")
    a = m.address(m.stack.pop())
    m.stack.append(int.from_bytes(m.load(a, size, op), m.order))
    return pos


@handles(0xA6, 0xF6)
def _deref_type(m, op, code, pos):
    """``size`` bytes read and zero-extended to the type's size (GDB)."""
    size, pos = read_uint(code, pos, 1, m.order)
    die, pos = uleb128(code, pos)
    t = m.base(die, op)
    a = m.address(m.stack.pop())
    if t is None:
        if not 1 <= size <= m.ptr_size:
            raise MalformedExpression(f"{op_name(op)}: unsupported size {size}")
        m.stack.append(int.from_bytes(m.load(a, size, op), m.order))
        return pos
    v = int.from_bytes(m.load(a, size, op), m.order)
    m.stack.append(from_bytes((v & ((1 << (8 * t.size)) - 1)).to_bytes(t.size, m.order), t, m.order))
    return pos


# --- arithmetic and logic ----------------------------------------------------------------------------

@handles(0x22)
def _plus(m, op, code, pos):
    s = m.stack
    b = s.pop()
    a = s.pop()
    s.append((a + b) & m.mask if type(a) is int and type(b) is int else binary("plus", a, b, m.bits))
    return pos


@handles(0x1C)
def _minus(m, op, code, pos):
    s = m.stack
    b = s.pop()
    a = s.pop()
    s.append((a - b) & m.mask if type(a) is int and type(b) is int else binary("minus", a, b, m.bits))
    return pos


@handles(0x1A)
def _and(m, op, code, pos):
    s = m.stack
    b = s.pop()
    a = s.pop()
    s.append(a & b if type(a) is int and type(b) is int else binary("and", a, b, m.bits))
    return pos


@handles(0x1E)
def _mul(m, op, code, pos):
    s = m.stack
    b = s.pop()
    a = s.pop()
    s.append((a * b) & m.mask if type(a) is int and type(b) is int else binary("mul", a, b, m.bits))
    return pos


@handles(0x21)
def _or(m, op, code, pos):
    s = m.stack
    b = s.pop()
    a = s.pop()
    s.append(a | b if type(a) is int and type(b) is int else binary("or", a, b, m.bits))
    return pos


@handles(0x27)
def _xor(m, op, code, pos):
    s = m.stack
    b = s.pop()
    a = s.pop()
    s.append(a ^ b if type(a) is int and type(b) is int else binary("xor", a, b, m.bits))
    return pos


@handles(0x24)
def _shl(m, op, code, pos):
    s = m.stack
    b = s.pop()
    a = s.pop()
    if type(a) is int and type(b) is int and b < m.ptr_size * 8:
        s.append((a << b) & m.mask)
    else:
        s.append(binary("shl", a, b, m.bits))
    return pos


_BINARY = {0x1B: "div", 0x1D: "mod", 0x25: "shr", 0x26: "shra"}


@handles(*_BINARY)
def _binary(m, op, code, pos):
    s = m.stack
    b = s.pop()
    a = s.pop()
    s.append(binary(_BINARY[op], a, b, m.bits))
    return pos


_COMPARE = {0x29: "eq", 0x2A: "ge", 0x2B: "gt", 0x2C: "le", 0x2D: "lt", 0x2E: "ne"}


@handles(*_COMPARE)
def _compare(m, op, code, pos):
    """Signed for generic values (GDB's address type is signed: flipping the sign bit
    orders them as unsigned), by type otherwise."""
    s = m.stack
    b = s.pop()
    a = s.pop()
    if type(a) is int and type(b) is int:
        flip = (m.mask >> 1) + 1
        a ^= flip
        b ^= flip
        if op == 0x2A:
            s.append(1 if a >= b else 0)
        elif op == 0x29:
            s.append(1 if a == b else 0)
        elif op == 0x2D:
            s.append(1 if a < b else 0)
        elif op == 0x2B:
            s.append(1 if a > b else 0)
        elif op == 0x2C:
            s.append(1 if a <= b else 0)
        else:
            s.append(1 if a != b else 0)
    else:
        s.append(compare(_COMPARE[op], a, b, m.bits))
    return pos


@handles(0x23)
def _plus_uconst(m, op, code, pos):
    """Integral operands only; the result is generic (GDB: value_as_long + constant)."""
    k, pos = uleb128(code, pos)
    v = m.stack.pop()
    if type(v) is not int:
        if v.type.kind == "float":
            raise TypeMismatch(INTEGRAL)
        v = v.value
    m.stack.append((v + k) & m.mask)
    return pos


@handles(0x19)
def _abs(m, op, code, pos):
    v = m.stack.pop()
    if type(v) is int:
        m.stack.append(-v & m.mask if v >> (m.bits - 1) else v)
    else:
        m.stack.append(unary("abs", v, m.bits))
    return pos


@handles(0x1F)
def _neg(m, op, code, pos):
    v = m.stack.pop()
    m.stack.append(-v & m.mask if type(v) is int else unary("neg", v, m.bits))
    return pos


@handles(0x20)
def _not(m, op, code, pos):
    v = m.stack.pop()
    m.stack.append(~v & m.mask if type(v) is int else unary("not", v, m.bits))
    return pos


# --- control flow -----------------------------------------------------------------------------------

@handles(0x2F, 0x28)
def _branch(m, op, code, pos):
    off, pos = read_sint(code, pos, 2, m.order)
    if op == 0x28:
        v = m.stack.pop()
        if type(v) is not int:
            if v.type.kind == "float":
                raise TypeMismatch(INTEGRAL)
            v = v.value
        if v == 0:
            return pos
    target = pos + off
    if not 0 <= target <= len(code):
        raise MalformedExpression(f"{op_name(op)} jumps outside the expression "
                                  f"(to offset {target}, length {len(code)})")
    if off < 0:                             # only a jump back can loop: count those
        m.steps += 1
        if m.steps > m.max_steps:
            raise StepLimit(m.max_steps)
    return target


@handles(0x96)
def _nop(m, op, code, pos):
    return pos


@handles(0x98, 0x99)
def _call(m, op, code, pos):
    """DW_OP_call2/4: the DW_AT_location of the DIE at a unit offset, run on this stack
    (a DIE without one does nothing: DWARF 5 section 2.5.1.5)."""
    off, pos = read_uint(code, pos, 2 if op == 0x98 else 4, m.order)
    if m.procedure is None:
        raise ContextUnavailable(f"{op_name(op)}: no DWARF procedures here")
    body = m.procedure(off)
    if body:
        if m.depth >= MAX_NESTING:
            raise LoopDetected(m.depth + 1)
        m.depth += 1
        try:
            run(m, body)
        finally:
            m.depth -= 1
    return pos


# --- entry values -------------------------------------------------------------------------------

def _entry_block_ok(block):
    """GDB's forms of DW_OP_entry_value's block: one register (DW_OP_reg*, DW_OP_regx),
    or DW_OP_breg*(0) / DW_OP_bregx(r, 0) then DW_OP_deref / DW_OP_deref_size; and a
    typed register (DW_OP_regval_type), which swk reads as well."""
    if not block:
        return False
    op = block[0]
    try:
        if 0x50 <= op <= 0x6F:
            return len(block) == 1
        if op in (0x90, 0xA5, 0xF5):
            _r, p = uleb128(block, 1)
            if op != 0x90:
                _t, p = uleb128(block, p)
            return p == len(block)
        if 0x70 <= op <= 0x8F or op == 0x92:
            p = 1 if op != 0x92 else uleb128(block, 1)[1]
            off, p = sleb128(block, p)
            if off != 0 or p >= len(block):
                return False
            return block[p:] == b"\x06" or (block[p] == 0x94 and p + 2 == len(block))
    except DecodeError:
        return False
    return False


@handles(0xA3, 0xF3)
def _entry_value(m, op, code, pos):
    """The value a register (or the memory it pointed at) had on entry to the function,
    from the caller's call site: the ``entry_value`` hook's (an int, or a register's bytes)."""
    size, pos = uleb128(code, pos)
    if pos + size > len(code):
        raise MalformedExpression("DW_OP_entry_value: too few bytes available.")
    block = bytes(code[pos:pos + size])
    pos += size
    if not _entry_block_ok(block):
        raise MalformedExpression("DWARF-2 expression error: DW_OP_entry_value is supported only for single "
                                  "DW_OP_reg* or for DW_OP_breg*(0)+DW_OP_deref*")
    what = f"{op_name(op)}: entry value unavailable"
    if m.entry_value is None:
        raise EntryValueUnavailable(what)
    v = m.entry_value(block)
    if v is None:
        raise EntryValueUnavailable(what)
    t = None
    if block[0] in (0xA5, 0xF5):                        # a typed register (a double in a vector register)
        t = m.base(uleb128(block, uleb128(block, 1)[1])[0], op)
    if t is not None:
        b = bytes(v) if isinstance(v, (bytes, bytearray)) else (v & m.mask).to_bytes(m.ptr_size, m.order)
        m.stack.append(from_bytes(low_end(b, t.size, m.order), t, m.order))
    elif isinstance(v, (bytes, bytearray)):
        m.stack.append(int.from_bytes(low_end(v, m.ptr_size, m.order), m.order))
    else:
        m.stack.append(v & m.mask)
    return pos


@handles(0xFA)
def _parameter_ref(m, op, code, pos):
    """The entry value of the parameter at a unit offset, from the caller's call site
    (DW_AT_call_parameter); unresolvable is GDB's NO_ENTRY_VALUE_ERROR."""
    off, pos = read_uint(code, pos, 4, m.order)
    what = f"{op_name(op)}: entry value unavailable"
    if m.parameter_ref is None:
        raise EntryValueUnavailable(what)
    v = m.parameter_ref(off)
    if v is None:
        raise EntryValueUnavailable(what)
    m.stack.append(v & m.mask)
    return pos


# --- typed values (DWARF 5 and their GNU forms) ------------------------------------------------------

@handles(0xA4, 0xF4)
def _const_type(m, op, code, pos):
    die, pos = uleb128(code, pos)
    size, pos = read_uint(code, pos, 1, m.order)
    if pos + size > len(code):
        raise DecodeError("block")
    data = bytes(code[pos:pos + size])
    pos += size
    t = m.base(die, op)
    if t is None:
        v = int.from_bytes(data, m.order)
        if v > m.mask:
            raise TypeMismatch(f"{op_name(op)}: {size}-byte constant does not fit the address-sized stack")
        m.stack.append(v)
    elif t.size != size:
        raise TypeMismatch("DW_OP_const_type has different sizes for type and data")
    else:
        m.stack.append(from_bytes(data, t, m.order))
    return pos


@handles(0xA5, 0xF5)
def _regval_type(m, op, code, pos):
    r, pos = uleb128(code, pos)
    die, pos = uleb128(code, pos)
    t = m.base(die, op)
    if t is None:
        m.stack.append(m.reg(r, op))
    else:
        m.stack.append(from_bytes(low_end(m.reg_bytes(r, op), t.size, m.order), t, m.order))
    return pos


@handles(0xA8, 0xF7)
def _convert(m, op, code, pos):
    die, pos = uleb128(code, pos)
    v = m.stack.pop()
    t = m.base(die, op)
    m.stack.append(v if t is None and type(v) is int else convert(v, t, m.bits))
    return pos


@handles(0xA9, 0xF9)
def _reinterpret(m, op, code, pos):
    die, pos = uleb128(code, pos)
    v = m.stack.pop()
    t = m.base(die, op)
    m.stack.append(v if t is None and type(v) is int else reinterpret(v, t, m.ptr_size, m.order))
    return pos
