"""Reading a variable's value in a frame: DW_AT_location (expression or location list),
DW_AT_const_value, frame bases, pieces, entry values and call-site parameters.

The rule that matters most: a value is only ever built from registers the walk really
recovered.  A register missing from ``regs`` makes the variable optimized out, never
a guess.  Addresses in DWARF (DW_OP_addr, location-list ranges) are the module's own;
``bias`` turns DW_OP_addr/addrx operands into target addresses, while location lists
are matched against the unbiased ``addr`` the caller passes.
"""
from ..dwarf.encoding import sleb128, uleb128
from ..dwarf.expr import ExprError, ExprResult, evaluate
from ..errors import SwkError
from . import dies
from .dwarfconst import *  # noqa: F401,F403
from .typedexpr import evaluate_typed, has_typed_ops
from .types import Type, strip_typedefs

__all__ = ["VarValue", "read_variable", "call_site_entry_regs", "find_location_expr",
           "module_symbolizer", "make_symbolizer"]


class VarValue:
    """A variable's value as read from a frame.

    ``data`` holds ``type.size`` bytes (None when there is nothing to show);
    ``optimized_out`` is True when no part of it can be known, ``opt_mask`` marks the
    bytes that are optimized out when only some are; ``error`` is GDB's message when
    reading failed ("Cannot access memory at address 0x10"); ``address`` is where the
    value lives in memory (None for registers and computed values).
    """
    __slots__ = ("data", "optimized_out", "unavailable", "error", "type", "address", "opt_mask",
                 "var", "synthetic", "synthetic_target", "reason", "symbolize", "static_value",
                 "entry_used", "regs_used")

    def __init__(self, type_, data=None, *, optimized_out=False, error=None, address=None):
        self.type = type_
        self.data = data
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

    def __repr__(self):
        if self.error:
            return f"<VarValue error {self.error!r}>"
        if self.optimized_out:
            return f"<VarValue <optimized out> ({self.reason})>"
        return f"<VarValue {self.data.hex() if self.data is not None else None} @{self.address}>"


class _OptimizedOut(Exception):
    pass


# --- DWARF expression operand walking (to relocate DW_OP_addr) -----------------------------

def _skip_leb(code, pos):
    while code[pos] & 0x80:
        pos += 1
    return pos + 1


def _relocate(code, bias, ptr_size, offsz=4):
    """The expression with every DW_OP_addr operand moved by ``bias`` (same length, so
    branch offsets stay right)."""
    if not bias or 0x03 not in code:
        return code
    out = bytearray(code)
    pos = 0
    n = len(code)
    fixed = {0x08: 1, 0x09: 1, 0x0a: 2, 0x0b: 2, 0x0c: 4, 0x0d: 4, 0x0e: 8, 0x0f: 8, 0x15: 1,
             0x28: 2, 0x2f: 2, 0x94: 1, 0x95: 1, 0x98: 2, 0x99: 4, 0xfa: 4}
    one_leb = {0x10, 0x11, 0x23, 0x90, 0x91, 0x93, 0xa1, 0xa2, 0xa8, 0xa9, 0xf7, 0xf9, 0xfb, 0xfc}
    mask = (1 << (8 * ptr_size)) - 1
    try:
        while pos < n:
            op = code[pos]
            pos += 1
            if op == 0x03:
                v = int.from_bytes(code[pos:pos + ptr_size], "little")
                out[pos:pos + ptr_size] = ((v + bias) & mask).to_bytes(ptr_size, "little")
                pos += ptr_size
            elif 0x70 <= op <= 0x8f:
                pos = _skip_leb(code, pos)
            elif op in fixed:
                pos += fixed[op]
            elif op in one_leb:
                pos = _skip_leb(code, pos)
            elif op in (0x92, 0x9d, 0xa5, 0xf5):        # bregx, bit_piece, regval_type
                pos = _skip_leb(code, _skip_leb(code, pos))
            elif op in (0x9e, 0xa3, 0xf3):              # implicit_value, entry_value
                ln, pos = uleb128(code, pos)
                pos += ln
            elif op in (0xa0, 0xf2):                    # implicit_pointer
                pos = _skip_leb(code, pos + offsz)
            elif op in (0xa4, 0xf4):                    # const_type
                pos = _skip_leb(code, pos)
                pos += 1 + code[pos]
            elif op in (0xa6, 0xf6):                    # deref_type
                pos = _skip_leb(code, pos + 1)
            elif op == 0x9a or op == 0xfd:              # call_ref, variable_value
                pos += offsz
            elif op == 0xf1:                            # GNU_encoded_addr: give up
                return bytes(out)
    except Exception:                                   # truncated: relocate what was seen
        pass
    return bytes(out)


# --- location lists ------------------------------------------------------------------------

def _loclists_base(d, cu):
    cache = getattr(d, "_swk_llbase", None)
    if cache is None:
        cache = d._swk_llbase = {}
    b = cache.get(cu.offset)
    if b is None:
        a = d.unit_attrs(cu).get(AT_loclists_base)
        b = a[1] if a is not None and isinstance(a[1], int) else (12 if cu.offsz == 4 else 20)
        cache[cu.offset] = b
    return b


def find_location_expr(d, cu, form, value, addr, func_entry=None):
    """The expression of a location list that applies at unbiased ``addr`` (None: the
    variable has no location there).  DWARF 5 .debug_loclists (all DW_LLE_* kinds,
    DW_FORM_loclistx) and DWARF 2-4 .debug_loc (base-address entries included)."""
    little = d.little
    asz = cu.addr_size
    base = cu.low_pc or 0
    if cu.version >= 5:
        # inflate a compressed .debug_loclists only as far as this list (libc's is 1.4 MB)
        secs = d.secs
        if form == FORM_loclistx or (isinstance(value, tuple) and value[0] == "loclistx"):
            idx = value[1] if isinstance(value, tuple) else value
            lb = _loclists_base(d, cu)
            p = lb + idx * cu.offsz
            sec = secs.upto(".debug_loclists", p + cu.offsz)
            if sec is None:
                return None
            off = lb + int.from_bytes(sec[p:p + cu.offsz], "little" if little else "big")
        elif isinstance(value, int):
            off = value
        else:
            return None
        sec = secs.upto(".debug_loclists", off + 4096)
        if sec is None:
            return None
        whole = False
        pos = off
        n = len(sec)
        default = None
        while pos < n:
            if not whole and pos + 1024 > n:
                sec, whole = secs.get(".debug_loclists"), True
                if sec is None:
                    return None
                n = len(sec)
            kind = sec[pos]
            pos += 1
            lo = hi = None
            if kind == 0:                               # end_of_list
                break
            if kind == 1:                               # base_addressx
                i, pos = uleb128(sec, pos)
                base = d.address(cu, ("addrx", i)) or 0
                continue
            if kind == 6:                               # base_address
                base = int.from_bytes(sec[pos:pos + asz], "little")
                pos += asz
                continue
            if kind == 2:                               # startx_endx
                a, pos = uleb128(sec, pos)
                b, pos = uleb128(sec, pos)
                lo, hi = d.address(cu, ("addrx", a)), d.address(cu, ("addrx", b))
            elif kind == 3:                             # startx_length
                a, pos = uleb128(sec, pos)
                ln, pos = uleb128(sec, pos)
                lo = d.address(cu, ("addrx", a))
                hi = lo + ln if lo is not None else None
            elif kind == 4:                             # offset_pair
                a, pos = uleb128(sec, pos)
                b, pos = uleb128(sec, pos)
                lo, hi = base + a, base + b
            elif kind == 5:                             # default_location
                pass
            elif kind == 7:                             # start_end
                lo = int.from_bytes(sec[pos:pos + asz], "little")
                hi = int.from_bytes(sec[pos + asz:pos + 2 * asz], "little")
                pos += 2 * asz
            elif kind == 8:                             # start_length
                lo = int.from_bytes(sec[pos:pos + asz], "little")
                pos += asz
                ln, pos = uleb128(sec, pos)
                hi = lo + ln
            else:
                return None
            ln, pos = uleb128(sec, pos)
            if not whole and pos + ln > n:
                sec, whole = secs.get(".debug_loclists"), True
                if sec is None:
                    return None
                n = len(sec)
            expr = sec[pos:pos + ln]
            pos += ln
            if kind == 5:
                default = expr
                continue
            if lo is None or hi is None:
                continue
            if lo == hi and addr == lo and func_entry is not None and addr == func_entry:
                return expr
            if lo <= addr < hi:
                return expr
        return default
    sec = d.secs.get(".debug_loc")
    if sec is None or not isinstance(value, int):
        return None
    pos = value
    n = len(sec)
    maxaddr = (1 << (8 * asz)) - 1
    while pos + 2 * asz <= n:
        lo = int.from_bytes(sec[pos:pos + asz], "little")
        hi = int.from_bytes(sec[pos + asz:pos + 2 * asz], "little")
        pos += 2 * asz
        if lo == 0 and hi == 0:
            break
        if lo == maxaddr:
            base = hi
            continue
        ln = int.from_bytes(sec[pos:pos + 2], "little")
        pos += 2
        expr = sec[pos:pos + ln]
        pos += ln
        lo += base
        hi += base
        if lo == hi and addr == lo and func_entry is not None and addr == func_entry:
            return expr
        if lo <= addr < hi:
            return expr
    return None


def _is_loclist(form, value):
    return not isinstance(value, (bytes, bytearray)) and (
        form in (FORM_sec_offset, FORM_loclistx, 0x06, 0x07)
        or (isinstance(value, tuple) and value[0] == "loclistx"))


# --- register contents ---------------------------------------------------------------------

def _reg_size(r):
    if 17 <= r <= 32:
        return 16          # xmm0-15
    if 33 <= r <= 40:
        return 10          # st0-7
    return 8


def _reg_bytes(regs, r):
    v = regs.get(r)
    if v is None:
        return None
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)
    size = _reg_size(r)
    return (v & ((1 << (8 * size)) - 1)).to_bytes(size, "little")


# --- the frame context ---------------------------------------------------------------------

class _FrameCtx:
    def __init__(self, var, addr, regs, cfa, read_mem, bias, ptr_size, entry_regs):
        self.var = var
        self.scope = var.scope
        self.fn = var.scope.function
        self.eng = self.fn.engine
        self.d = self.eng.d
        self.addr = addr
        self.regs = regs or {}
        self.cfa = cfa
        self.read_mem = read_mem
        self.bias = bias or 0
        self.ptr_size = ptr_size
        self.entry_regs = entry_regs
        self.used_entry = set()
        self.used_regs = set()
        self.libraries = []
        self.symbolize = None
        self._fb = None

    # hooks for dwarf.expr.evaluate
    def read_reg(self, r):
        v = self.regs.get(r)
        if v is None:
            raise _OptimizedOut(f"register {r} not recovered")
        self.used_regs.add(r)
        if isinstance(v, (bytes, bytearray)):
            return int.from_bytes(v[:8], "little")
        return v

    def mem(self, a, n):
        return _read(self.read_mem, a, n)

    def _mem_or_none(self, a, n):
        try:
            return _read(self.read_mem, a, n)
        except _MemError:
            return None

    def frame_base(self):
        if self._fb is None:
            fb = self.fn.frame_base
            if fb is None:
                raise _OptimizedOut("no DW_AT_frame_base")
            form, value = fb
            cu = self.fn.cu
            if _is_loclist(form, value):
                expr = find_location_expr(self.d, cu, form, value, self.addr, self.fn.entry_pc)
                if expr is None:
                    raise _OptimizedOut("frame base has no location here")
            else:
                expr = value
            r = self.evaluate(expr, cu, with_fb=False)
            if r.kind == "register":
                v = self.regs.get(r.value)
                if v is None:
                    raise _OptimizedOut(f"frame base register {r.value} not recovered")
                self._fb = v if isinstance(v, int) else int.from_bytes(v[:8], "little")
            elif r.kind in ("memory", "value"):
                self._fb = r.value
            else:
                raise _OptimizedOut("frame base is not an address")
        return self._fb

    def _cfa(self):
        if self.cfa is None:
            raise _OptimizedOut("CFA unknown")
        return self.cfa

    def entry_value(self, block):
        r = None
        if len(block) == 1 and 0x50 <= block[0] <= 0x6f:
            r = block[0] - 0x50
        elif block[:1] == b"\x90":
            r, _p = uleb128(block, 1)
        if r is None or not self.entry_regs or self.entry_regs.get(r) is None:
            raise _OptimizedOut("entry value not known")
        self.used_entry.add(r)
        return self.entry_regs[r]

    def evaluate(self, expr, cu, with_fb=True):
        d = self.d
        bias = self.bias
        code = _relocate(bytes(expr), bias, cu.addr_size or self.ptr_size, cu.offsz)

        def addrx(i):
            v = d.address(cu, ("addrx", i))
            if v is None:
                raise ExprError(f"no .debug_addr entry {i}")
            return v + bias

        def base_type(off):
            t = self.eng.types.type_at(cu, cu.offset + off)
            t = strip_typedefs(t)
            return t.size or self.ptr_size, not t.unsigned and t.kind in ("int", "char", "enum")

        if has_typed_ops(code):
            def reg_bytes(r):
                b = _reg_bytes(self.regs, r)
                if b is None:
                    raise _OptimizedOut(f"register {r} not recovered")
                self.used_regs.add(r)
                return b

            def typed_base(off):
                t = strip_typedefs(self.eng.types.type_at(cu, cu.offset + off))
                kind = "float" if t.kind == "float" else "unsigned" if t.unsigned else "signed"
                return t.size or self.ptr_size, kind
            try:
                return evaluate_typed(code, read_reg_bytes=reg_bytes, read_mem=self._mem_or_none,
                                      ptr_size=self.ptr_size,
                                      frame_base=self.frame_base if with_fb else None, cfa=self._cfa,
                                      entry_value=self.entry_value, addr_lookup=addrx,
                                      base_type=typed_base)
            except ExprError as exc:
                msg = str(exc)
                if msg.startswith("Cannot access memory"):
                    raise _MemError(int(msg.rsplit(" ", 1)[1], 16)) from None
                if "0xfa" in msg or "0xa0" in msg or "0xf2" in msg or "entry value" in msg:
                    raise _OptimizedOut(msg) from None
                raise
        try:
            return evaluate(code, read_reg=self.read_reg, read_mem=self.mem, ptr_size=self.ptr_size,
                            frame_base=self.frame_base if with_fb else None, cfa=self._cfa,
                            entry_value=self.entry_value, addr_base_lookup=addrx,
                            base_type=base_type)
        except ExprError as exc:
            cause = exc.__context__ or exc.__cause__
            if isinstance(cause, _OptimizedOut):
                raise cause from None
            msg = str(exc)
            if ("unavailable" in msg or "entry value" in msg or "parameter_ref" in msg
                    or "implicit pointer" in msg):
                # GDB: NO_ENTRY_VALUE_ERROR and friends make the value optimized out
                raise _OptimizedOut(msg) from None
            raise


def _read(read_mem, addr, size):
    if size == 0:
        return b""
    try:
        data = read_mem(addr, size)
    except Exception:
        data = None
    if data is None or len(data) < size:
        raise _MemError(addr)
    return bytes(data[:size])


class _MemError(Exception):
    def __init__(self, addr):
        super().__init__(f"Cannot access memory at address 0x{addr:x}")
        self.addr = addr


# --- reading ---------------------------------------------------------------------------------

#: (libraries object, normalised pairs, symbolizer) of the last read_variable call: a walk's
#: frames all pass the same list, so it is normalised once.
_LAST_LIBS = None
#: DW_OP_call_frame_cfa as a whole DW_AT_frame_base: the usual x86-64 GCC frame base.
_CFA_BASE = b"\x9c"

def read_variable(var, *, addr, regs, cfa, read_mem, bias, ptr_size=8, entry_regs=None,
                  libraries=None):
    """The value of ``var`` in a frame (see VarValue).

    addr: unbiased lookup pc (a caller frame passes its return address - 1, so location
    lists give the entry that covers the call); regs: {DWARF regno: value} the walk
    recovered for this frame; cfa: the frame's CFA; bias: the library's load bias;
    entry_regs: {DWARF regno: value at function entry} for DW_OP_entry_value (see
    call_site_entry_regs), else such values are optimized out; libraries: the process's
    (module, bias) pairs (or Library objects): pointers then print <symbol> from any of
    them and C++ static members are found across them, as GDB does.
    """
    ctx = _FrameCtx(var, addr, regs, cfa, read_mem, bias, ptr_size, entry_regs)
    global _LAST_LIBS
    last = _LAST_LIBS
    if libraries is not None and last is not None and last[0] is libraries:
        ctx.libraries, ctx.symbolize = last[1], last[2]   # the same list as the last call: a walk's frames
    else:
        ctx.libraries = _libraries(libraries)
        ctx.symbolize = make_symbolizer(ctx.libraries) if ctx.libraries \
            else module_symbolizer(ctx.eng.module, ctx.bias)
        if libraries is not None:
            _LAST_LIBS = (libraries, ctx.libraries, ctx.symbolize)
    vv = VarValue(var.type)
    vv.var = var
    vv.symbolize = ctx.symbolize
    vv.static_value = lambda f, _c=ctx: _static_member(f, _c)
    try:
        t = vv.type = _resolve_dynamic(var.type, ctx)
        _fill(vv, var, t, ctx)
    except _OptimizedOut as exc:
        _mark_out(vv, str(exc))
    except _MemError as exc:
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


def _cfa_frame_base(fn):
    fb = fn.frame_base
    return fb is not None and not _is_loclist(fb[0], fb[1]) and bytes(fb[1]) == _CFA_BASE


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
        vv.data = (v & ((1 << (8 * size)) - 1)).to_bytes(size, "little") if size else b""
        return
    cvr = dies.chain_attr(d, node, AT_const_value)
    if cvr is not None:
        vv.data = _const_bytes(d, cvr[0].cu, cvr[1], size)
        return
    locr = dies.chain_attr(d, node, AT_location)
    if locr is None:
        raise _OptimizedOut("no location")
    lnode, (form, value) = locr
    cu = lnode.cu
    if _is_loclist(form, value):
        expr = find_location_expr(d, cu, form, value, ctx.addr, ctx.fn.entry_pc)
        if expr is None:
            raise _OptimizedOut("no location-list entry for this pc")
    else:
        expr = value
    if not expr:
        raise _OptimizedOut("empty location")
    if expr[0] == 0x91 and ctx.cfa is not None and _cfa_frame_base(ctx.fn):
        off, end = sleb128(expr, 1)                  # DW_OP_fbreg N on a CFA frame base: the
        if end == len(expr):                         # common case, without the evaluator
            _store(vv, ExprResult("memory", (ctx.cfa + off) & ((1 << (8 * ctx.ptr_size)) - 1)), size, ctx)
            return
    if expr[0] in (0xa0, 0xf2):                      # DW_OP_implicit_pointer: a synthetic pointer
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
    from .scopes import Variable
    from ..dwarf.encoding import sleb128
    s = strip_typedefs(t)
    if s.kind not in ("ref", "rref", "ptr") or s.target is None:
        return None
    try:
        ref_size = cu.offsz if cu.version >= 3 else cu.addr_size
        die = int.from_bytes(expr[1:1 + ref_size], "little")
        off, _p = sleb128(expr, 1 + ref_size)
    except Exception:
        return None
    node = dies.node_at(ctx.d, cu, die)
    if node is None:
        return None
    tmp = Variable("", False, node, ctx.scope, "computed")
    inner = read_variable(tmp, addr=ctx.addr, regs=ctx.regs, cfa=ctx.cfa, read_mem=ctx.read_mem,
                          bias=ctx.bias, ptr_size=ctx.ptr_size, entry_regs=ctx.entry_regs,
                          libraries=ctx.libraries)
    ctx.used_regs.update(inner.regs_used)
    ctx.used_entry.update(inner.entry_used)
    out = VarValue(s.target)
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


def _const_bytes(d, cu, attr, size):
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
        b = ((iv or 0) & ((1 << (8 * max(size, 1))) - 1)).to_bytes(max(size, 1), "little")
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
        vv.data = _read(ctx.read_mem, res.value, size)
    elif kind == "register":
        rb = _reg_bytes(ctx.regs, res.value)
        if rb is None:
            raise _OptimizedOut(f"register {res.value} not recovered")
        ctx.used_regs.add(res.value)
        if size > len(rb):
            raise _OptimizedOut(f"value larger than register {res.value}")
        vv.data = rb[:size]
    elif kind == "value":
        raw = (res.value & ((1 << (8 * ctx.ptr_size)) - 1)).to_bytes(ctx.ptr_size, "little")
        if size > len(raw):
            raw = raw + bytes(size - len(raw))
        vv.data = raw[:size]
    elif kind == "implicit":
        raw = bytes(res.value)
        if len(raw) < size:
            raw = raw + bytes(size - len(raw))
        vv.data = raw[:size]
    elif kind == "empty":
        raise _OptimizedOut("empty location")
    elif kind == "pieces":
        _store_pieces(vv, res, size, ctx)
    else:
        raise _OptimizedOut(f"location kind {kind}")


def _store_pieces(vv, res, size, ctx):
    acc = 0
    out_bits = 0
    pos = 0
    total = size * 8
    for part, nbytes in res.pieces:
        nbits = part.bit_size if part.bit_size is not None else nbytes * 8
        boff = part.bit_offset or 0
        src = None
        if part.kind == "register":
            src = _reg_bytes(ctx.regs, part.value)
            if src is not None:
                ctx.used_regs.add(part.value)
            else:
                vv.reason = f"register {part.value} not recovered"
        elif part.kind == "memory":
            need = (boff + nbits + 7) // 8
            src = _read(ctx.read_mem, part.value, need)
        elif part.kind == "value":
            src = (part.value & ((1 << (8 * ctx.ptr_size)) - 1)).to_bytes(ctx.ptr_size, "little")
        elif part.kind == "implicit":
            src = bytes(part.value)
        m = (1 << nbits) - 1
        if src is None:
            out_bits |= m << pos
        else:
            v = int.from_bytes(src, "little") >> boff
            acc |= (v & m) << pos
        pos += nbits
        if pos >= total:
            break
    if pos < total:
        out_bits |= ((1 << (total - pos)) - 1) << pos
    acc &= (1 << total) - 1 if total else 0
    out_bits &= (1 << total) - 1 if total else 0
    if total and out_bits == (1 << total) - 1:
        raise _OptimizedOut("every piece optimized out")
    vv.data = acc.to_bytes(size, "little") if size else b""
    if out_bits:
        mask = bytearray(size)
        for i in range(size):
            if (out_bits >> (8 * i)) & 0xFF:
                mask[i] = 1
        vv.opt_mask = mask


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
        from .scopes import Variable
        node = dies.node_at(ctx.d, cu, v)
        if node is not None:
            tmp = Variable("", False, node, ctx.scope, "computed")
            vv = read_variable(tmp, addr=ctx.addr, regs=ctx.regs, cfa=ctx.cfa, read_mem=ctx.read_mem,
                               bias=ctx.bias, ptr_size=ctx.ptr_size, entry_regs=ctx.entry_regs)
            if vv.data is not None and not vv.optimized_out:
                vt = strip_typedefs(vv.type)
                val = int.from_bytes(vv.data, "little", signed=not vt.unsigned)
    if val is None:
        # GDB would read the bound from a register it assumes unchanged; we do not guess
        raise _OptimizedOut("array bound not recovered")
    mask = (1 << (8 * ctx.ptr_size)) - 1
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
    vv = VarValue(t)
    vv.symbolize = ctx.symbolize
    vv.static_value = lambda f, _c=ctx: _static_member(f, _c)
    cv = dies.chain_attr(d, node, AT_const_value)
    if cv is not None:
        vv.data = _const_bytes(d, cv[0].cu, cv[1], size)
        return vv
    from ..symlookup import module_symbols
    names = []
    link = dies.chain_string(d, node, AT_linkage_name) or dies.chain_string(d, node, AT_MIPS_linkage_name)
    if link:
        names.append(link)
    owner = field.owner.name if field.owner is not None else None
    if owner and field.name:
        names.append(owner + "::" + field.name)
    mods = [(ctx.eng.module, ctx.bias)] + [m for m in ctx.libraries if m[0] is not ctx.eng.module]
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
                vv.data = _read(ctx.read_mem, a, size)
            except _MemError as exc:
                vv.error = str(exc)
            return vv
    return None


def _libraries(libs):
    out = []
    for lib in libs or ():
        if isinstance(lib, tuple):
            module, bias = lib
        else:
            module, bias = getattr(lib, "module", None), getattr(lib, "base", 0)
        if module is not None:
            out.append((module, bias))
    return out


def module_symbolizer(module, bias):
    """GDB's <symbol+offset> for an address in ``module`` (build_address_symbolic: the
    minimal symbol, or the DWARF function when it starts no later), else None."""
    cache = getattr(module, "_swk_symbolizers", None)
    if cache is None:
        cache = {}
        try:
            module._swk_symbolizers = cache
        except AttributeError:
            pass
    f = cache.get(bias)
    if f is not None:
        return f
    from ..symlookup import module_symbols
    from .scopes import engine_for

    def symbolize(a):
        off = a - bias
        if off < 0:
            return None
        st = module_symbols(module)
        msym = st.lookup(off) if st is not None else None
        if msym is not None:
            s = msym[0]
            if s.size == 0 and s._mst not in ("text", "file_text", "ifunc"):
                msym = None                       # zero-sized data symbols are not used
        fn = None
        if msym is None or msym[0]._mst in ("text", "file_text"):
            eng = engine_for(module)
            try:
                fn = eng.function_at(off) if eng is not None else None
            except Exception:
                fn = None
        name = loc = None
        if fn is not None:
            loc = fn.entry_pc
            name = fn.name
            if fn.cu.language in LANG_CPP and msym is not None and msym[0].value == loc:
                name = msym[0].demangled          # C++ symbols print with their parameters
        if msym is not None:
            s = msym[0]
            if fn is None or s.value > loc or (s.value == off and loc != off):
                name = s.demangled
                loc = s.value
        if name is None:
            return None
        k = off - loc
        return f"{name}+{k}" if k else name

    cache[bias] = symbolize
    return symbolize


_symbolizer_cache = {}


def make_symbolizer(libraries):
    """A process-wide symbolize(addr) over ``libraries``: (module, bias) pairs (or objects
    with .module and .base), for format_value(..., symbolize=...)."""
    libs = _libraries(libraries)
    key = tuple((id(m), b) for m, b in libs)
    hit = _symbolizer_cache.get(key)
    if hit is not None and all(a is b for (a, _), (b, _) in zip(hit[1], libs)):
        return hit[0]
    spans = []
    for lib in libraries:
        if isinstance(lib, tuple):
            module, bias = lib
        else:
            module, bias = lib.module, lib.base
        if module is None:
            continue
        try:
            for lo, hi in module.load_spans():
                spans.append((lo + bias, hi + bias, module, bias))
        except Exception:
            continue
    spans.sort(key=lambda s: s[0])

    def symbolize(a):
        for lo, hi, module, bias in spans:
            if lo <= a < hi:
                return module_symbolizer(module, bias)(a)
        return None

    if len(_symbolizer_cache) > 64:
        _symbolizer_cache.clear()
    _symbolizer_cache[key] = (symbolize, libs)
    return symbolize


# --- entry values from the caller's call site (GDB's DW_OP_entry_value resolution) ----------

def _call_sites(fn):
    """{return pc: call-site DieNode} of a function (unbiased), built once."""
    if fn._call_sites is None:
        eng = fn.engine
        out = {}
        root = eng.tree(fn.cu, fn.die)
        stack = [root] if root is not None else []
        d = eng.d
        while stack:
            n = stack.pop()
            for c in n.children:
                if c.tag in (TAG_call_site, TAG_GNU_call_site):
                    a = c.attrs.get(AT_call_return_pc) or c.attrs.get(AT_low_pc)
                    if a is not None:
                        pc = d.address(c.cu, a[1])
                        if pc is not None:
                            out[pc] = c
                elif c.children:
                    stack.append(c)
        fn._call_sites = out
    return fn._call_sites


def _call_target(eng, site):
    """What a call site calls: ("addr", unbiased entry in this module), ("name", linkage
    name of an external function), ("expr", DW_AT_call_target expression) or None."""
    a = site.attrs.get(AT_call_origin) or site.attrs.get(AT_abstract_origin)
    if a is None or dies.ref(a[1]) is None:
        t = site.attrs.get(AT_call_target) or site.attrs.get(AT_GNU_call_site_target)
        if t is not None and isinstance(t[1], (bytes, bytearray)):
            return ("expr", bytes(t[1]))
        return None
    node = dies.node_at(eng.d, site.cu, a[1])
    if node is None:
        return None
    for _ in range(4):
        lp = node.attrs.get(AT_low_pc)
        if lp is not None:
            v = eng.d.address(node.cu, lp[1])
            return ("addr", v) if v is not None else None
        if node.attrs.get(AT_declaration):
            nm = dies.chain_string(eng.d, node, AT_linkage_name) or dies.chain_string(eng.d, node, AT_name)
            if not nm:
                return None
            from ..symlookup import module_symbols
            st = module_symbols(eng.module)
            for h in (st.by_name(nm) if st is not None else []):
                if h._mst in ("text", "file_text"):
                    return ("addr", h.value)         # defined in this module after all
            return ("name", nm)
        ao = node.attrs.get(AT_abstract_origin) or node.attrs.get(AT_specification)
        if ao is None or dies.ref(ao[1]) is None:
            return None
        node = dies.node_at(eng.d, node.cu, ao[1])
        if node is None:
            return None
    return None


def _target_matches(tgt, ctx, caller_module, caller_bias, callee_module, callee_entry, callee_bias):
    """GDB's "DW_OP_entry_value resolving expects callee ..." check."""
    if tgt is None:
        return False
    kind, v = tgt
    callee_abs = callee_entry + callee_bias
    if kind == "addr":
        return v + caller_bias == callee_abs
    if kind == "name":
        from ..symlookup import module_symbols
        st = module_symbols(callee_module)
        if st is None:
            return False
        return any(h.value == callee_entry for h in st.by_name(v) if h._mst in ("text", "file_text"))
    try:
        r = ctx.evaluate(v, ctx.fn.cu)
    except Exception:
        return False
    if r.kind == "register":
        got = ctx.regs.get(r.value)
    elif r.kind in ("memory", "value"):
        got = r.value
    else:
        got = None
    return got == callee_abs


def _can_tail_call_itself(eng, entry):
    """func_verify_no_selftailcall: whether ``entry``'s function can reach itself by tail calls."""
    seen = set()
    todo = [entry]
    while todo:
        a = todo.pop()
        fn = eng.function_at(a)
        if fn is None:
            continue
        for site in _call_sites(fn).values():
            if not (site.attrs.get(AT_call_tail_call) or site.attrs.get(AT_GNU_tail_call)):
                continue
            tgt = _call_target(eng, site)
            if tgt is None or tgt[0] != "addr":
                continue
            tgt = tgt[1]
            if tgt == entry:
                return True
            if tgt not in seen:
                seen.add(tgt)
                todo.append(tgt)
    return False


class EntryRegs(dict):
    """{DWARF regno: entry value}; ``from_fbreg`` lists the registers whose DW_AT_call_value
    used DW_OP_fbreg (GDB 13 evaluates those against the callee's frame base, so its
    value differs from ours there)."""

    def __init__(self):
        super().__init__()
        self.from_fbreg = set()


def call_site_entry_regs(caller_module, caller_ra, *, regs, cfa, read_mem, bias, callee_entry=None,
                         callee_module=None, callee_bias=None, caller_entry_regs=None, ptr_size=8):
    """{DWARF regno: value} a callee's parameters had on entry, from the caller's
    DW_TAG_call_site at return address ``caller_ra`` (unbiased, in ``caller_module``
    loaded at ``bias``): each DW_TAG_call_site_parameter whose DW_AT_location is a
    register and whose DW_AT_call_value can be computed from the caller's recovered
    ``regs``/``cfa`` (and ``caller_entry_regs``, the caller's own entry values, for
    values passed through).  Pass the result as ``entry_regs`` to read_variable in the
    callee -- what GDB does for DW_OP_entry_value.  With ``callee_entry`` (unbiased in
    ``callee_module``, loaded at ``callee_bias``; default: the caller's) the call site
    must be known to call that function and it must not reach itself by tail calls,
    as GDB checks; otherwise nothing is returned."""
    from .scopes import engine_for, Scope
    out = EntryRegs()
    eng = engine_for(caller_module)
    if eng is None:
        return out
    fn = eng.function_at(caller_ra - 1)
    if fn is None:
        return out
    site = _call_sites(fn).get(caller_ra)
    if site is None:
        return out
    scopes = eng.scopes_at(caller_ra - 1)
    scope = scopes[-1] if scopes else Scope("function", fn.name, fn, fn.block)

    class _Pseudo:
        pass
    pv = _Pseudo()
    pv.scope = scope
    ctx = _FrameCtx(pv, caller_ra - 1, regs, cfa, read_mem, bias, ptr_size, caller_entry_regs)
    if callee_entry is not None:
        cmod = callee_module if callee_module is not None else caller_module
        cbias = callee_bias if callee_bias is not None else (bias if cmod is caller_module else 0)
        if not _target_matches(_call_target(eng, site), ctx, caller_module, bias, cmod,
                               callee_entry, cbias):
            return out
        ceng = engine_for(cmod)
        if ceng is not None and _can_tail_call_itself(ceng, callee_entry):
            return out
    for p in site.children:
        if p.tag not in (TAG_call_site_parameter, TAG_GNU_call_site_parameter):
            continue
        loc = p.attrs.get(AT_location)
        val = p.attrs.get(AT_call_value) or p.attrs.get(AT_GNU_call_site_value)
        if loc is None or val is None or not isinstance(loc[1], (bytes, bytearray)):
            continue
        lb = loc[1]
        if len(lb) == 1 and 0x50 <= lb[0] <= 0x6f:
            r = lb[0] - 0x50
        elif lb[:1] == b"\x90":
            r, _p = uleb128(lb, 1)
        else:
            continue
        ctx.used_entry = set()
        try:
            res = ctx.evaluate(val[1], p.cu)
        except (_OptimizedOut, _MemError, ExprError, SwkError):
            continue
        if res.kind in ("memory", "value"):
            out[r] = res.value
        elif res.kind == "register":
            v = regs.get(res.value)
            if v is not None:
                out[r] = v
        if r in out and (0x91 in bytes(val[1])
                         or ctx.used_entry & getattr(caller_entry_regs, "from_fbreg", set())):
            out.from_fbreg.add(r)
    return out


def int_on_cfa_plan(var):
    """(offset from the CFA, size, signed) when ``var`` is a plain integer (no char, bool or
    enum) living at DW_OP_fbreg N on a DW_OP_call_frame_cfa frame base, with no constant
    value; else None.  Such a variable's text is just str(int) of the bytes at CFA+N, so a
    backtrace line can print it without building a VarValue (remembered per DIE)."""
    key = var.node
    plan = _INT_PLANS.get(key, _INT_PLANS)
    if plan is not _INT_PLANS:
        return plan
    plan = None
    try:
        fn = var.scope.function
        d = fn.engine.d
        t = strip_typedefs(var.type) if var.type is not None else None
        from .format import _textual     # chars (and char-like ints) print with their character
        if (var.loc_class == "computed" and t is not None and t.kind == "int" and t.size in (1, 2, 4, 8)
                and not _textual(var.type)
                and _cfa_frame_base(fn) and dies.chain_attr(d, var.node, AT_const_value) is None):
            locr = dies.chain_attr(d, var.node, AT_location)
            if locr is not None:
                _lnode, (form, value) = locr
                if not _is_loclist(form, value) and value and value[0] == 0x91:
                    off, end = sleb128(value, 1)
                    if end == len(value):
                        plan = (off, t.size, not t.unsigned)
    except Exception:
        plan = None
    if len(_INT_PLANS) > 100000:
        _INT_PLANS.clear()
    _INT_PLANS[key] = plan
    return plan


_INT_PLANS = {}
