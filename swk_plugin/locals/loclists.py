"""Location lists (DW_AT_location as .debug_loc / .debug_loclists entries) and the
relocation of DW_OP_addr operands: which expression describes a variable at an address.
"""
from ..dwarf.dwo import dwo_location_expr
from ..dwarf.encoding import uleb128
from .dwarfconst import *  # noqa: F401,F403

__all__ = ["find_location_expr", "is_loclist"]


# --- DWARF expression operand walking (to relocate DW_OP_addr) -----------------------------

def _skip_leb(code, pos):
    while code[pos] & 0x80:
        pos += 1
    return pos + 1


def _relocate(code, bias, ptr_size, offsz, byteorder):
    """The expression with every DW_OP_addr operand (in the module's ``byteorder``) moved
    by ``bias`` (same length, so branch offsets stay right)."""
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
                v = int.from_bytes(code[pos:pos + ptr_size], byteorder)
                out[pos:pos + ptr_size] = ((v + bias) & mask).to_bytes(ptr_size, byteorder)
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
    cache = d.module.cache.memo("loclists-base")
    b = cache.get(cu.offset)
    if b is None:
        a = d.unit_attrs(cu).get(AT_loclists_base)
        b = cache.put(cu.offset, a[1] if a is not None and isinstance(a[1], int) else (12 if cu.offsz == 4 else 20))
    return b


def find_location_expr(d, cu, form, value, addr, func_entry=None):
    """The expression of a location list that applies at unbiased ``addr`` (None: the
    variable has no location there).  DWARF 5 .debug_loclists (all DW_LLE_* kinds,
    DW_FORM_loclistx) and DWARF 2-4 .debug_loc (base-address entries included)."""
    order = d.byteorder
    asz = cu.addr_size
    base = cu.low_pc or 0
    if cu.version >= 5:
        # inflate a compressed .debug_loclists only as far as this list (libc's is 1.4 MB)
        secs = d.unit_sections(cu)              # a split unit's: its .dwo's
        if form == FORM_loclistx or (isinstance(value, tuple) and value[0] == "loclistx"):
            idx = value[1] if isinstance(value, tuple) else value
            lb = _loclists_base(d, cu)
            p = lb + idx * cu.offsz
            sec = secs.upto(".debug_loclists", p + cu.offsz)
            if sec is None:
                return None
            off = lb + int.from_bytes(sec[p:p + cu.offsz], order)
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
                base = int.from_bytes(sec[pos:pos + asz], order)
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
                lo = int.from_bytes(sec[pos:pos + asz], order)
                hi = int.from_bytes(sec[pos + asz:pos + 2 * asz], order)
                pos += 2 * asz
            elif kind == 8:                             # start_length
                lo = int.from_bytes(sec[pos:pos + asz], order)
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
    if cu.skeleton is not None:                 # a DWARF 4 split unit: .debug_loc.dwo's entries
        return dwo_location_expr(d, cu, value, addr, func_entry)
    sec = d.secs.get(".debug_loc")
    if sec is None or not isinstance(value, int):
        return None
    pos = value
    n = len(sec)
    maxaddr = (1 << (8 * asz)) - 1
    while pos + 2 * asz <= n:
        lo = int.from_bytes(sec[pos:pos + asz], order)
        hi = int.from_bytes(sec[pos + asz:pos + 2 * asz], order)
        pos += 2 * asz
        if lo == 0 and hi == 0:
            break
        if lo == maxaddr:
            base = hi
            continue
        ln = int.from_bytes(sec[pos:pos + 2], order)
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


def is_loclist(form, value):
    return not isinstance(value, (bytes, bytearray)) and (
        form in (FORM_sec_offset, FORM_loclistx, 0x06, 0x07)
        or (isinstance(value, tuple) and value[0] == "loclistx"))
