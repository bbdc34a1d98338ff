"""Reading a variable's value in a frame: DW_AT_location (expression or location list),
DW_AT_const_value, frame bases, pieces, entry values and call-site parameters.

What a value needs from its frame comes in one object, a frames.FrameVariables.  The rule
that matters most: a value is only ever built from registers the walk really recovered.  A
register missing from its ``regs`` makes the variable optimized out, never a guess.
Addresses in DWARF (DW_OP_addr, location-list ranges) are the module's own; its ``bias``
turns DW_OP_addr/addrx operands into target addresses, while location lists are matched
against its unbiased ``addr``.
"""
from ..dwarf.encoding import sleb128, uleb128
from ..dwarf.expr import (BaseType, EntryValueUnavailable, ExprError, ExprResult, LoopDetected, RegisterUnavailable,
                          evaluate)
from ..elf.symbols import module_symbols
from ..errors import SwkError
from . import dies
from .dwarfconst import *  # noqa: F401,F403
from .loclists import _relocate, find_location_expr, is_loclist
from .scopes import Variable
from .symbolize import library_pairs, make_symbolizer, module_symbolizer
from .types import Type, strip_typedefs

#: GDB 13's dwarf_expr_context evaluates at most 257 nested expressions: a value reached
#: through a longer chain of DW_OP_entry_value (a recursion passing a parameter on, thousands
#: of frames deep) is this error there, not a number (m_max_recursion_depth, 0x100).
ENTRY_NESTING = 257
#: Its text, as EntryRegs.errors keeps it for display (x@entry=<error: ...>).
ENTRY_LOOP = str(LoopDetected(ENTRY_NESTING))

__all__ = ["VarValue", "read_variable", "find_location_expr"]


class VarValue:
    """A variable's value as read from a frame.

    ``data`` holds ``type.size`` bytes (None when there is nothing to show);
    ``optimized_out`` is True when no part of it can be known, ``opt_mask`` marks the
    bytes that are optimized out when only some are; ``error`` is GDB's message when
    reading failed ("Cannot access memory at address 0x10"); ``address`` is where the
    value lives in memory (None for registers and computed values); ``byteorder`` is the
    target's ("little" / "big"): what ``data``'s words are read in.
    """
    __slots__ = ("data", "optimized_out", "unavailable", "error", "type", "address", "opt_mask",
                 "var", "synthetic", "synthetic_target", "reason", "symbolize", "static_value",
                 "entry_used", "regs_used", "entry_referent", "byteorder")

    def __init__(self, type_, data=None, *, optimized_out=False, error=None, address=None,
                 byteorder="little"):
        self.type = type_
        self.data = data
        self.byteorder = byteorder
        self.optimized_out = optimized_out
        self.unavailable = False
        self.error = error
        self.address = address
        self.opt_mask = None
        self.var = None
        self.synthetic = False      # DW_OP_implicit_pointer: a pointer with no address
        self.synthetic_target = None  # ... and the VarValue it points at, when known
        self.reason = None          # why it is optimized out (for diagnostics)
        self.symbolize = None       # addr -> "sym+off" | None, for pointers (print symbol on)
        self.static_value = None    # Field -> VarValue | None, for C++ static members
        self.entry_used = ()        # DWARF registers whose entry values the value depends on
        self.regs_used = ()         # DWARF registers of this frame the value was read from
        #: a reference's entry value: the referred object's bytes on entry (call_data_value)
        self.entry_referent = None

    def __repr__(self):
        if self.error:
            return f"<VarValue error {self.error!r}>"
        if self.optimized_out:
            return f"<VarValue <optimized out> ({self.reason})>"
        return f"<VarValue {self.data.hex() if self.data is not None else None} @{self.address}>"


class OptimizedOut(Exception):
    pass


# --- register contents ---------------------------------------------------------------------

def _reg_bytes(regs, r, reg_size, byteorder):
    """A register's contents as bytes in the target's ``byteorder``, its size as the
    architecture says (``reg_size``)."""
    v = regs.get(r)
    if v is None:
        return None
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)
    size = reg_size(r)
    return (v & ((1 << (8 * size)) - 1)).to_bytes(size, byteorder)


def _low_end(data, size, byteorder):
    """The low-order ``size`` bytes of ``data`` (a register's, a stack value's): its first
    bytes on a little-endian target, its last on a big-endian one."""
    if size >= len(data):
        return bytes(data)
    return bytes(data[:size]) if byteorder == "little" else bytes(data[len(data) - size:])


def _word(data, byteorder):
    """The integer in a register held as bytes (at most its low-order 8 bytes)."""
    return int.from_bytes(_low_end(data, 8, byteorder), byteorder)


# --- the frame context ---------------------------------------------------------------------

class RegisterLost(OptimizedOut):
    """A register a step marked lost (CFI's DW_CFA_undefined) was needed: GDB's "value has
    been optimized out" error (an entry value then prints as that error, not as absent)."""

    def __init__(self, regno):
        super().__init__("value has been optimized out")
        self.regno = regno


class FrameCtx:
    """One variable read in one frame: the frame (a frames.FrameVariables), the variable's
    scope and DWARF, and what the reading used (registers, entry values); the hooks the
    evaluator is given."""

    def __init__(self, var, frame):
        self.var = var
        self.scope = var.scope
        self.fn = var.scope.function
        self.eng = self.fn.engine
        self.d = self.eng.d
        self.frame = frame
        self.used_entry = set()
        self.used_regs = set()
        #: the process's libraries as (module, bias) pairs, and GDB's <symbol> printer over them
        self.libraries = []
        self.symbolize = None
        self._fb = None

    def _missing(self, r):
        is_lost = getattr(self.frame.regs, "is_lost", None)
        if is_lost is not None and is_lost(r):
            raise RegisterLost(r)
        raise OptimizedOut(f"register {r} not recovered")

    # hooks for dwarf.expr.evaluate: a missing register is the locals' own OptimizedOut
    # (RegisterLost where a step lost it), which the evaluator passes through unchanged
    def read_reg(self, r):
        v = self.frame.regs.get(r)
        if v is None:
            self._missing(r)
        self.used_regs.add(r)
        if isinstance(v, (bytes, bytearray)):
            return _word(v, self.frame.byteorder)
        return v

    def mem(self, a, n):
        return _read(self.frame.read_mem, a, n)

    def frame_base(self):
        if self._fb is None:
            fb = self.fn.frame_base
            if fb is None:
                raise OptimizedOut("no DW_AT_frame_base")
            form, value = fb
            cu = self.fn.cu
            if is_loclist(form, value):
                expr = find_location_expr(self.d, cu, form, value, self.frame.addr, self.fn.entry_pc)
                if expr is None:
                    raise OptimizedOut("frame base has no location here")
            else:
                expr = value
            r = self.evaluate(expr, cu, with_fb=False)
            if r.kind == "register":
                v = self.frame.regs.get(r.value)
                if v is None:
                    raise OptimizedOut(f"frame base register {r.value} not recovered")
                self._fb = v if isinstance(v, int) else _word(v, self.frame.byteorder)
            elif r.kind in ("memory", "value"):
                self._fb = r.value
            else:
                raise OptimizedOut("frame base is not an address")
        return self._fb

    def _cfa(self):
        cfa = self.frame.cfa
        if cfa is None:
            raise OptimizedOut("CFA unknown")
        return cfa

    def entry_value(self, block):
        r = None
        if len(block) == 1 and 0x50 <= block[0] <= 0x6f:
            r = block[0] - 0x50
        elif block[:1] in (b"\x90", b"\xa5", b"\xf5"):   # regx, regval_type
            r, _p = uleb128(block, 1)
        er = self.frame.entry_regs
        # this expression and the call sites' ones nested under it, as GDB counts them (a
        # call site whose own chain was too deep records the limit: EntryRegs.depth)
        if r is not None and er is not None and 1 + getattr(er, "depth", {}).get(r, 1) > ENTRY_NESTING:
            raise LoopDetected(ENTRY_NESTING)
        if r is None or not er or er.get(r) is None:
            raise OptimizedOut("entry value not known")
        self.used_entry.add(r)
        return er[r]

    def _tls_address(self, offset):
        if self.frame.tls_base is None:
            raise ExprError("Cannot access thread-local variables here (no thread)")
        try:
            return self.frame.tls_base() + offset
        except SwkError as exc:
            raise ExprError(str(exc)) from None

    def _procedure(self, cu, off):
        """DW_OP_call2/4: the location expression of the DIE at unit offset ``off`` (none:
        nothing to run)."""
        node = dies.node_at(self.d, cu, cu.offset + off)
        loc = node.attrs.get(AT_location) if node is not None else None
        if loc is None or not isinstance(loc[1], (bytes, bytearray)):
            return b""
        frame = self.frame
        return _relocate(bytes(loc[1]), frame.bias, cu.addr_size or frame.ptr_size, cu.offsz, self.d.byteorder)

    def _variable_value(self, cu, off):
        """DW_OP_GNU_variable_value: the value of the variable at .debug_info offset ``off``
        in this frame, as an integer (GDB's sect_variable_value)."""
        v = _die_value(self, cu, off)
        if v is None:
            raise OptimizedOut(f"variable at DIE 0x{off:x} not available")
        return v

    def evaluate(self, expr, cu, with_fb=True):
        """The one evaluator (dwarf/expr) with this frame's hooks; a register or entry value
        the frame does not have makes the value optimized out (GDB's NO_ENTRY_VALUE_ERROR)."""
        d = self.d
        frame = self.frame
        bias = frame.bias
        code = _relocate(bytes(expr), bias, cu.addr_size or frame.ptr_size, cu.offsz, d.byteorder)

        def addrx(i):
            v = d.address(cu, ("addrx", i))
            if v is None:
                raise ExprError(f"no .debug_addr entry {i}")
            return v + bias

        def base_type(off):
            t = strip_typedefs(self.eng.types.type_at(cu, cu.offset + off))
            kind = "float" if t.kind == "float" else "unsigned" if t.unsigned else "signed"
            return BaseType(t.size or frame.ptr_size, kind)

        def reg_bytes(r):
            b = _reg_bytes(frame.regs, r, frame.reg_size, frame.byteorder)
            if b is None:
                self._missing(r)
            self.used_regs.add(r)
            return b

        try:
            return evaluate(code, read_reg=self.read_reg, read_mem=self.mem, ptr_size=frame.ptr_size,
                            byteorder=frame.byteorder, frame_base=self.frame_base if with_fb else None,
                            cfa=self._cfa, entry_value=self.entry_value, addr_base_lookup=addrx,
                            const_lookup=lambda i: addrx(i) - bias,      # DW_OP_constx: not an address
                            base_type=base_type, read_reg_bytes=reg_bytes, tls_address=self._tls_address,
                            ref_size=cu.offsz if cu.version >= 3 else (cu.addr_size or frame.ptr_size),
                            procedure=lambda off: self._procedure(cu, off),
                            variable_value=lambda off: self._variable_value(cu, off))
        except (RegisterUnavailable, EntryValueUnavailable) as exc:
            raise OptimizedOut(str(exc)) from None


def _read(read_mem, addr, size):
    if size == 0:
        return b""
    try:
        data = read_mem(addr, size)
    except Exception:
        data = None
    if data is None or len(data) < size:
        raise MemError(addr)
    return bytes(data[:size])


class MemError(Exception):
    def __init__(self, addr):
        super().__init__(f"Cannot access memory at address 0x{addr:x}")
        self.addr = addr


# --- reading ---------------------------------------------------------------------------------

#: (libraries object, normalised pairs, symbolizer) of the last read_variable call: a walk's
#: frames all pass the same list, so it is normalised once.
_LAST_LIBS = None
#: DW_OP_call_frame_cfa as a whole DW_AT_frame_base: the usual x86-64 GCC frame base.
_CFA_BASE = b"\x9c"

def read_variable(var, frame_vars):
    """The value of ``var`` in a frame (see VarValue), from what ``frame_vars`` (a
    frames.FrameVariables) gives of that frame: a caller frame's ``addr`` is its return address
    - 1, so location lists give the entry that covers the call; without its ``entry_regs``
    DW_OP_entry_value's values are optimized out; with its ``libraries`` pointers print
    <symbol> from any of them and C++ static members are found across them, as GDB does;
    the value's bytes are in its ``byteorder`` (VarValue.byteorder).
    """
    ctx = FrameCtx(var, frame_vars)
    libraries = frame_vars.libraries
    global _LAST_LIBS
    last = _LAST_LIBS
    if libraries is not None and last is not None and last[0] is libraries:
        ctx.libraries, ctx.symbolize = last[1], last[2]   # the same list as the last call: a walk's frames
    else:
        ctx.libraries = library_pairs(libraries)
        ctx.symbolize = make_symbolizer(ctx.libraries) if ctx.libraries \
            else module_symbolizer(ctx.eng.module, frame_vars.bias)
        if libraries is not None:
            _LAST_LIBS = (libraries, ctx.libraries, ctx.symbolize)
    vv = VarValue(var.type, byteorder=frame_vars.byteorder)
    vv.var = var
    vv.symbolize = ctx.symbolize
    vv.static_value = lambda f, _c=ctx: _static_member(f, _c)
    try:
        t = vv.type = _resolve_dynamic(var.type, ctx)
        _fill(vv, var, t, ctx)
    except OptimizedOut as exc:
        _mark_out(vv, str(exc))
    except MemError as exc:
        vv.data = None
        vv.error = str(exc)
    except SwkError as exc:                          # MemoryReadError from the evaluator
        a = getattr(exc, "addr", None)
        vv.data = None
        vv.error = f"Cannot access memory at address 0x{a:x}" if isinstance(a, int) else str(exc)
    except ExprError as exc:
        vv.data = None
        vv.error = str(exc)
    except (ValueError, IndexError, KeyError, TypeError, RecursionError) as exc:  # malformed DWARF
        vv.data = None
        vv.error = f"malformed DWARF ({type(exc).__name__}: {exc})"
    vv.entry_used = tuple(sorted(ctx.used_entry))
    vv.regs_used = tuple(sorted(ctx.used_regs))
    return vv


def cfa_frame_base(fn):
    fb = fn.frame_base
    return fb is not None and not is_loclist(fb[0], fb[1]) and bytes(fb[1]) == _CFA_BASE


def _mark_out(vv, reason):
    vv.data = None
    vv.optimized_out = True
    vv.reason = reason
    vv.opt_mask = None


def _fill(vv, var, t, ctx):
    d = ctx.d
    node = var.node
    size = strip_typedefs(t).size
    if var.loc_class == "enumerator":
        cv = node.attrs.get(AT_const_value)
        v = dies.const_int(cv[0], cv[1]) if cv is not None else 0
        vv.data = (v & ((1 << (8 * size)) - 1)).to_bytes(size, ctx.frame.byteorder) if size else b""
        return
    cvr = dies.chain_attr(d, node, AT_const_value)
    if cvr is not None:
        vv.data = _const_bytes(d, cvr[0].cu, cvr[1], size, ctx.frame.byteorder)
        return
    locr = dies.chain_attr(d, node, AT_location)
    if locr is None:
        raise OptimizedOut("no location")
    lnode, (form, value) = locr
    cu = lnode.cu
    if is_loclist(form, value):
        expr = find_location_expr(d, cu, form, value, ctx.frame.addr, ctx.fn.entry_pc)
        if expr is None:
            raise OptimizedOut("no location-list entry for this pc")
    else:
        expr = value
    if not expr:
        raise OptimizedOut("empty location")
    cfa = ctx.frame.cfa if expr[0] == 0x91 else None
    if cfa is not None and cfa_frame_base(ctx.fn):
        off, end = sleb128(expr, 1)                  # DW_OP_fbreg N on a CFA frame base: the
        if end == len(expr):                         # common case, without the evaluator
            _store(vv, ExprResult("memory", (cfa + off) & ((1 << (8 * ctx.frame.ptr_size)) - 1)), size, ctx)
            return
    if expr[0] in (0xa0, 0xf2) and strip_typedefs(t).kind in ("ptr", "ref", "rref"):
        # DW_OP_implicit_pointer: a synthetic pointer (one in a piece of an aggregate, such
        # as a lambda's captured reference, is marked in its bytes: _store_pieces)
        vv.synthetic = True
        vv.data = None
        vv.synthetic_target = tgt = _implicit_target(expr, cu, t, ctx)
        if tgt is not None and tgt.reason:
            vv.reason = tgt.reason
        return
    res = ctx.evaluate(expr, cu)
    _store(vv, res, size, ctx)


def _implicit_target(expr, cu, t, ctx):
    """What a synthetic pointer points at: the value of the DIE DW_OP_implicit_pointer names
    (read in the same frame), from its byte offset, as the pointed-to type; None if unknown.
    GDB shows it after a reference ("<synthetic pointer>: 5")."""
    s = strip_typedefs(t)
    if s.kind not in ("ref", "rref", "ptr") or s.target is None:
        return None
    try:
        ref_size = cu.offsz if cu.version >= 3 else cu.addr_size
        die = int.from_bytes(expr[1:1 + ref_size], ctx.d.byteorder)
        off, _p = sleb128(expr, 1 + ref_size)
    except Exception:
        return None
    inner = _die_variable(ctx, cu, die)
    if inner is None:
        return None
    ctx.used_regs.update(inner.regs_used)
    ctx.used_entry.update(inner.entry_used)
    out = VarValue(s.target, byteorder=ctx.frame.byteorder)
    out.symbolize = ctx.symbolize
    out.static_value = inner.static_value
    size = strip_typedefs(s.target).size
    if inner.error:
        out.error = inner.error
    elif inner.data is None or inner.optimized_out:
        # GDB prints the pointed-to object member by member, each <optimized out>
        out.data = bytes(size)
        out.opt_mask = bytearray([1]) * size
        out.reason = inner.reason
    else:
        out.data = inner.data[off:off + size]
        if len(out.data) < size:
            out.data = None
            out.optimized_out = True
        elif inner.opt_mask is not None:
            out.opt_mask = inner.opt_mask[off:off + size]
        if inner.address is not None:
            out.address = inner.address + off
    return out


def _const_bytes(d, cu, attr, size, byteorder):
    """DW_AT_const_value as the value's bytes: a block as written, a constant stored in
    the type's size in the target's ``byteorder`` (GDB's dwarf2_const_value_data)."""
    form, v = attr
    if isinstance(v, (bytes, bytearray)):
        b = bytes(v)
    elif isinstance(v, tuple) or form in (0x08, 0x0e, 0x1a, 0x25, 0x26, 0x27, 0x28, 0x1f):
        s = d.string(cu, v) if not isinstance(v, bytes) else v
        b = (s.encode("utf-8") + b"\0") if isinstance(s, str) else b""
    else:
        # dataN/udata are unsigned and sdata signed (GDB's constant_value); either way the
        # value is stored in the type's size, two's complement
        iv = dies.const_int(form, v)
        b = ((iv or 0) & ((1 << (8 * max(size, 1))) - 1)).to_bytes(max(size, 1), byteorder)
    if len(b) < size:
        b = b + bytes(size - len(b))
    return b[:size] if size else b


def _store(vv, res, size, ctx):
    kind = res.kind
    st = strip_typedefs(vv.type)
    if st.kind == "void" and kind == "memory":
        raise ExprError("Attempt to dereference a generic pointer.")
    if kind == "memory":
        vv.address = res.value
        vv.data = _read(ctx.frame.read_mem, res.value, size)
    elif kind == "register":
        frame = ctx.frame
        rb = _reg_bytes(frame.regs, res.value, frame.reg_size, frame.byteorder)
        if rb is None:
            raise OptimizedOut(f"register {res.value} not recovered")
        ctx.used_regs.add(res.value)
        if frame.register_value is not None:
            rb = frame.register_value(res.value, rb, size if st.kind == "float" else None)
        if size > len(rb):
            raise OptimizedOut(f"value larger than register {res.value}")
        vv.data = _low_end(rb, size, frame.byteorder)      # GDB's default_value_from_register
    elif kind == "value":
        # a stack value is anchored at its least significant end (GDB's DWARF_VALUE_STACK)
        frame = ctx.frame
        raw = (res.value & ((1 << (8 * frame.ptr_size)) - 1)).to_bytes(frame.ptr_size, frame.byteorder)
        if size > len(raw):
            pad = bytes(size - len(raw))
            raw = raw + pad if frame.byteorder == "little" else pad + raw
        vv.data = _low_end(raw, size, frame.byteorder)
    elif kind == "implicit":
        raw = bytes(res.value)
        if len(raw) < size:
            raw = raw + bytes(size - len(raw))
        vv.data = raw[:size]
    elif kind == "empty":
        raise OptimizedOut("empty location")
    elif kind == "pieces":
        _store_pieces(vv, res, size, ctx)
    elif kind == "synthetic":
        raise OptimizedOut("an implicit pointer for a value that is no pointer")
    else:
        raise OptimizedOut(f"location kind {kind}")


#: An opt_mask byte of a value's piece that is a synthetic pointer (DW_OP_implicit_pointer):
#: no bytes, printed "<synthetic pointer>" as GDB does; 1 marks an optimized-out byte.
SYNTHETIC_BYTE = 2


def _store_pieces(vv, res, size, ctx):
    """The value's bytes from its pieces, as GDB's rw_pieced_value reads them: each piece's
    bits follow the last one's in memory order (from each byte's least significant bit on
    a little-endian target, from its most significant on a big-endian one: copy_bitwise's
    bits_big_endian), a register's or a stack value's taken from its low-order end."""
    frame = ctx.frame
    big = frame.byteorder == "big"
    acc = 0
    out_bits = 0                    # out_bits, synth_bits: bit p is the value's p-th in memory order
    synth_bits = 0
    pos = 0
    total = size * 8
    for part, nbytes in res.pieces:
        nbits = part.bit_size if part.bit_size is not None else nbytes * 8
        boff = part.bit_offset or 0
        skip = boff                 # bits of the source before the piece, in memory order
        src = None
        if part.kind == "register":
            src = _reg_bytes(frame.regs, part.value, frame.reg_size, frame.byteorder)
            if src is not None:
                ctx.used_regs.add(part.value)
                if big and boff + nbits < 8 * len(src):
                    skip = 8 * len(src) - boff - nbits
            else:
                vv.reason = f"register {part.value} not recovered"
        elif part.kind == "memory":
            need = (boff + nbits + 7) // 8
            src = _read(frame.read_mem, part.value, need)
        elif part.kind == "value":
            src = (part.value & ((1 << (8 * frame.ptr_size)) - 1)).to_bytes(frame.ptr_size, frame.byteorder)
            if boff + nbits > 8 * len(src):
                src = b""           # past the stack value: zeros
            elif big:
                skip = 8 * len(src) - boff - nbits
        elif part.kind == "implicit":
            src = bytes(part.value)
        m = (1 << nbits) - 1
        if part.kind == "synthetic":
            synth_bits |= m << pos
        elif src is None:
            out_bits |= m << pos
        elif big:
            n = min(nbits, total - pos)
            shift = 8 * len(src) - skip - n
            v = int.from_bytes(src, "big")
            v = v >> shift if shift >= 0 else v << -shift
            acc |= (v & ((1 << n) - 1)) << (total - pos - n)
        else:
            v = int.from_bytes(src, "little") >> skip
            acc |= (v & m) << pos
        pos += nbits
        if pos >= total:
            break
    if pos < total:
        out_bits |= ((1 << (total - pos)) - 1) << pos
    acc &= (1 << total) - 1 if total else 0
    out_bits &= (1 << total) - 1 if total else 0
    synth_bits &= (1 << total) - 1 if total else 0
    if total and out_bits == (1 << total) - 1:
        raise OptimizedOut(f"every piece optimized out ({vv.reason})" if vv.reason else "every piece optimized out")
    vv.data = acc.to_bytes(size, frame.byteorder) if size else b""
    if out_bits or synth_bits:
        mask = OptMask(size)
        for i in range(size):
            if (synth_bits >> (8 * i)) & 0xFF:
                mask[i] = SYNTHETIC_BYTE
            elif (out_bits >> (8 * i)) & 0xFF:
                mask[i] = 1
        mask.bits = out_bits
        vv.opt_mask = mask


class OptMask(bytearray):
    """VarValue.opt_mask of a value made of pieces: per byte, and ``bits`` (bit p: the
    value's p-th bit in memory order) for what shares a byte with what is known, as GDB
    tracks it: a bitfield next to an optimized-out one still prints."""
    bits = None


# --- dynamic array bounds (VLAs) -----------------------------------------------------------

def _resolve_dynamic(t, ctx):
    s = strip_typedefs(t)
    if s.kind != "array" or s.dyn_count is None:
        return t
    dyn = s.dyn_count
    kind, cu, form, v = dyn[0], dyn[1], dyn[2], dyn[3]
    val = None
    if isinstance(v, (bytes, bytearray)):
        r = ctx.evaluate(v, cu)
        if r.kind in ("memory", "value"):
            val = r.value
    elif isinstance(v, int):
        val = _die_value(ctx, cu, v)
    if val is None:
        # GDB would read the bound from a register it assumes unchanged; we do not guess
        raise OptimizedOut("array bound not recovered")
    mask = (1 << (8 * ctx.frame.ptr_size)) - 1
    if val > mask >> 1:
        val -= mask + 1
    count = val - dyn[4] + 1 if kind == "upper" else val
    count = max(count, 0)
    inner = _resolve_dynamic(s.target, ctx)
    n = Type("array", None, 0, inner)
    n.count = count
    n.size = count * strip_typedefs(inner).size
    n.cplus = s.cplus
    return n


def _die_variable(ctx, cu, off):
    """The VarValue, read in this frame, of the variable DIE at .debug_info offset ``off`` (what
    DW_OP_implicit_pointer points at, a VLA's bound, DW_OP_GNU_variable_value's operand); None
    where there is no such DIE."""
    node = dies.node_at(ctx.d, cu, off)
    if node is None:
        return None
    return read_variable(Variable("", False, node, ctx.scope, "computed"), ctx.frame)


def _die_value(ctx, cu, off):
    """The integer value, in this frame, of the variable at .debug_info offset ``off`` (a
    VLA's bound, DW_OP_GNU_variable_value's operand); None if it has none."""
    vv = _die_variable(ctx, cu, off)
    if vv is None or vv.data is None or vv.optimized_out:
        return None
    return int.from_bytes(vv.data, ctx.frame.byteorder, signed=not strip_typedefs(vv.type).unsigned)


# --- C++ static members and pointer symbols ------------------------------------------------

def _static_member(field, ctx):
    """The value of a static data member (GDB's value_static_field): its constant, else
    the symbol named by its linkage name or by "Class::member", looked up in this module
    and then in every library read_variable was given; None means optimized out."""
    node = field.die
    if node is None:
        return None
    d = ctx.d
    t = field.type
    size = strip_typedefs(t).size
    vv = VarValue(t, byteorder=ctx.frame.byteorder)
    vv.symbolize = ctx.symbolize
    vv.static_value = lambda f, _c=ctx: _static_member(f, _c)
    cv = dies.chain_attr(d, node, AT_const_value)
    if cv is not None:
        vv.data = _const_bytes(d, cv[0].cu, cv[1], size, ctx.frame.byteorder)
        return vv
    names = []
    link = dies.chain_string(d, node, AT_linkage_name) or dies.chain_string(d, node, AT_MIPS_linkage_name)
    if link:
        names.append(link)
    owner = field.owner.name if field.owner is not None else None
    if owner and field.name:
        names.append(owner + "::" + field.name)
    mods = [(ctx.eng.module, ctx.frame.bias)] + [m for m in ctx.libraries if m[0] is not ctx.eng.module]
    for name in names:
        for module, bias in mods:
            st = module_symbols(module)
            hits = [h for h in (st.by_name(name) if st is not None else [])
                    if h._mst not in ("text", "file_text", "ifunc")]
            if not hits:
                continue
            a = hits[0].value + bias
            vv.address = a
            try:
                vv.data = _read(ctx.frame.read_mem, a, size)
            except MemError as exc:
                vv.error = str(exc)
            return vv
    return None
