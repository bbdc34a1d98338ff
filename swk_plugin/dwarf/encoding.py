"""LEB128 numbers and DW_EH_PE pointer encodings, shared by the CFI and expression readers.

Every reader takes the buffer and a position and returns ``(value, next_position)``.
They check bounds themselves and raise DecodeError (never IndexError), so callers
can turn any malformed input into their own one-line error.  Fixed-size values are in
the ``byteorder`` ("little" / "big") a reader binds once from its module (ElfModule.byteorder).
"""
import struct

# Pointer encodings (LSB "DWARF Extensions": the low nibble is the format, the
# next three bits say what the value is relative to, 0x80 asks for a dereference).
DW_EH_PE_absptr = 0x00
DW_EH_PE_uleb128 = 0x01
DW_EH_PE_udata2 = 0x02
DW_EH_PE_udata4 = 0x03
DW_EH_PE_udata8 = 0x04
DW_EH_PE_signed = 0x08
DW_EH_PE_sleb128 = 0x09
DW_EH_PE_sdata2 = 0x0A
DW_EH_PE_sdata4 = 0x0B
DW_EH_PE_sdata8 = 0x0C

DW_EH_PE_pcrel = 0x10
DW_EH_PE_textrel = 0x20
DW_EH_PE_datarel = 0x30
DW_EH_PE_funcrel = 0x40
DW_EH_PE_aligned = 0x50

DW_EH_PE_indirect = 0x80
DW_EH_PE_omit = 0xFF

_FORMATS = {
    (DW_EH_PE_udata2, 0): "H", (DW_EH_PE_udata4, 0): "I", (DW_EH_PE_udata8, 0): "Q",
    (DW_EH_PE_sdata2, 0): "h", (DW_EH_PE_sdata4, 0): "i", (DW_EH_PE_sdata8, 0): "q",
    (DW_EH_PE_absptr, 4): "I", (DW_EH_PE_absptr, 8): "Q", (DW_EH_PE_absptr, 2): "H",
}
#: {byte order: {(format, size): struct.Struct}}
_STRUCTS = {order: {k: struct.Struct(prefix + f) for k, f in _FORMATS.items()}
            for order, prefix in (("little", "<"), ("big", ">"))}


class DecodeError(ValueError):
    """Raised by the readers here; callers re-raise it as their own error type."""


def uleb128(buf, pos):
    try:
        b = buf[pos]
    except IndexError:
        raise DecodeError(f"LEB128 number runs past the end at offset {pos}") from None
    if b < 0x80:
        return b, pos + 1
    result = b & 0x7F
    shift = 7
    pos += 1
    end = len(buf)
    while pos < end:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
    raise DecodeError(f"LEB128 number runs past the end at offset {pos}")


def sleb128(buf, pos):
    try:
        b = buf[pos]
    except IndexError:
        raise DecodeError(f"LEB128 number runs past the end at offset {pos}") from None
    if b < 0x80:
        return (b - 0x80 if b & 0x40 else b), pos + 1
    result = b & 0x7F
    shift = 7
    pos += 1
    end = len(buf)
    while pos < end:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            if b & 0x40:
                result -= 1 << shift
            return result, pos
    raise DecodeError(f"LEB128 number runs past the end at offset {pos}")


def read_uint(buf, pos, size, byteorder):
    """Unsigned integer of ``size`` bytes at ``pos`` in ``byteorder``."""
    end = pos + size
    if end > len(buf) or pos < 0:
        raise DecodeError(f"{size}-byte value runs past the end at offset {pos}")
    return int.from_bytes(buf[pos:end], byteorder), end


def read_sint(buf, pos, size, byteorder):
    end = pos + size
    if end > len(buf) or pos < 0:
        raise DecodeError(f"{size}-byte value runs past the end at offset {pos}")
    return int.from_bytes(buf[pos:end], byteorder, signed=True), end


def fixed_size(enc, ptr_size):
    """Byte size of an encoded pointer's format, or None for LEB128 (variable)."""
    fmt = enc & 0x0F
    if fmt == DW_EH_PE_absptr:
        return ptr_size
    if fmt in (DW_EH_PE_udata2, DW_EH_PE_sdata2):
        return 2
    if fmt in (DW_EH_PE_udata4, DW_EH_PE_sdata4):
        return 4
    if fmt in (DW_EH_PE_udata8, DW_EH_PE_sdata8):
        return 8
    if fmt in (DW_EH_PE_uleb128, DW_EH_PE_sleb128):
        return None
    raise DecodeError(f"unknown pointer format 0x{enc:02x}")


def struct_for(enc, ptr_size, byteorder):
    """A struct.Struct for a fixed-size format in ``byteorder`` (for fast table probes), or None."""
    fmt = enc & 0x0F
    return _STRUCTS[byteorder].get((fmt, ptr_size if fmt == DW_EH_PE_absptr else 0))


def read_format(buf, pos, enc, ptr_size, byteorder):
    """Read the raw value of the format in ``enc``'s low nibble (no base applied)."""
    fmt = enc & 0x0F
    if fmt == DW_EH_PE_absptr:
        return read_uint(buf, pos, ptr_size, byteorder)
    if fmt == DW_EH_PE_udata4:
        return read_uint(buf, pos, 4, byteorder)
    if fmt == DW_EH_PE_sdata4:
        return read_sint(buf, pos, 4, byteorder)
    if fmt == DW_EH_PE_uleb128:
        return uleb128(buf, pos)
    if fmt == DW_EH_PE_sleb128:
        return sleb128(buf, pos)
    if fmt == DW_EH_PE_udata2:
        return read_uint(buf, pos, 2, byteorder)
    if fmt == DW_EH_PE_sdata2:
        return read_sint(buf, pos, 2, byteorder)
    if fmt == DW_EH_PE_udata8:
        return read_uint(buf, pos, 8, byteorder)
    if fmt == DW_EH_PE_sdata8:
        return read_sint(buf, pos, 8, byteorder)
    raise DecodeError(f"unknown pointer format 0x{enc:02x}")


def decode_pointer(buf, pos, enc, ptr_size, byteorder, *, addr=None, data_base=None, text_base=None,
                   func_base=None):
    """Decode one DW_EH_PE-encoded pointer at ``buf[pos]``.

    ``addr`` is the address of ``buf[0]`` (for pcrel and aligned).  Returns
    ``(value, next_pos)``; value is None for DW_EH_PE_omit.  The indirect bit is
    left to the caller: the result is then the address of the real pointer.
    """
    if enc == DW_EH_PE_omit:
        return None, pos
    app = enc & 0x70
    if app == DW_EH_PE_aligned:
        if addr is None:
            raise DecodeError("aligned pointer encoding needs the section address")
        pos += (-(addr + pos)) % ptr_size
        value, pos = read_uint(buf, pos, ptr_size, byteorder)
        return value, pos
    start = pos
    value, pos = read_format(buf, pos, enc, ptr_size, byteorder)
    if app:
        if app == DW_EH_PE_pcrel:
            if addr is None:
                raise DecodeError("pc-relative pointer without a known address")
            base = addr + start
        elif app == DW_EH_PE_datarel:
            base = data_base
        elif app == DW_EH_PE_textrel:
            base = text_base
        elif app == DW_EH_PE_funcrel:
            base = func_base
        else:
            raise DecodeError(f"unknown pointer encoding 0x{enc:02x}")
        if base is None:
            kind = {DW_EH_PE_datarel: "data", DW_EH_PE_textrel: "text",
                    DW_EH_PE_funcrel: "function"}[app]
            raise DecodeError(f"pointer encoding 0x{enc:02x} needs a {kind} base address")
        value += base
    return value & ((1 << (ptr_size * 8)) - 1), pos
