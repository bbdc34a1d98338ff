"""A value as LLDB prints it in a frame line (``function.name-with-args``), from swk's VarValue.

For the frames only swk finds, drawn in LLDB's frame-format (lldblines): LLDB's summary or value
of each argument, as its ValueObject printing gives them in a frame line:

- integers in decimal; ``char``-sized integers as characters (``'x'``, ``'\\n'``, ``'\\xc8'``);
  ``bool`` as ``true`` / ``false``; an enum as its enumerator, else its number;
- ``float`` to 9 significant digits, ``double`` to 17, ``long double`` to 21 (``%G``: ``1.5``,
  ``0.10000000000000001``, ``9.80908925E-45``);
- pointers as 16 (or 8) hex digits, a ``char`` pointer as its string (``"hi\\"x"``), a reference
  as the address it refers to; a pointer to a function as the code it points at,
  ``(prog`cmp at q.c:3:46)`` (``code_at``: the line entry LLDB gives that address);
- a struct or union whose members are all scalars on one line, ``(a = 1, b = 2)``; one holding an
  aggregate as ``Type @ 0x...`` where it is in memory;
- what cannot be known: ``<unavailable>``.
"""
from .types import strip_typedefs, type_name

_CHAR_ESC = {0: "\\0", 7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r", 39: "\\'",
             92: "\\\\"}
_STR_ESC = {0: "\\0", 7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r", 34: '\\"',
            92: "\\\\"}
_DIGITS = {4: 9, 8: 17, 10: 21, 12: 21, 16: 21}
MAX_STRING = 1024


def format_lldb_value(vv, read_mem, ptr_size=8, code_at=None):
    """LLDB's text of an argument's value in a frame line (``code_at(addr)``: "module`function
    at file:line:column" of code, or None)."""
    if vv is None or vv.error or vv.data is None or vv.optimized_out or vv.unavailable or vv.opt_mask is not None:
        return "<unavailable>"
    return _value(vv.type, bytes(vv.data), vv.address, read_mem, ptr_size, vv.byteorder, top=True, code_at=code_at)


def _value(t, raw, addr, read_mem, ptr_size, order, top=False, code_at=None):
    """``raw``: the value's bytes in the target's byte ``order``."""
    s = strip_typedefs(t)
    k = s.kind
    size = s.size or len(raw)
    if k == "bool":
        return "true" if any(raw[:size]) else "false"
    if k in ("int", "char"):
        v = int.from_bytes(raw[:size], order, signed=not s.unsigned)
        if size == 1:
            return "'" + _char(raw[0], _CHAR_ESC) + "'"
        return str(v)
    if k == "enum":
        v = int.from_bytes(raw[:size], order, signed=not s.unsigned)
        for name, value in s.enumerators or ():
            if value == v:
                return name
        return str(v)
    if k == "float":
        return _float(raw[:size], s, order)
    if k in ("ptr", "ref", "rref"):
        p = int.from_bytes(raw[:ptr_size], order)
        target = strip_typedefs(s.target) if s.target is not None else None
        if k == "ptr" and target is not None and target.kind in ("int", "char") and (target.size or 0) == 1 and p:
            text = _string(read_mem, p)
            if text is not None:
                return text
        if k == "ptr" and target is not None and target.kind == "func" and p and code_at is not None:
            where = code_at(p)
            if where is not None:
                return f"({where})"
        return f"0x{p:0{2 * ptr_size}x}"
    if k in ("struct", "union"):
        fields = [f for f in s.fields or () if not f.is_static]
        if all(_scalar(f.type) for f in fields) and not any(f.bitsize for f in fields):
            parts = []
            for f in fields:
                off = f.bitpos // 8
                fs = strip_typedefs(f.type).size or 0
                parts.append(f"{f.name} = {_value(f.type, raw[off:off + fs], None, read_mem, ptr_size, order)}")
            return "(" + ", ".join(parts) + ")"
        if addr is not None:
            return f"{type_name(t)} @ 0x{addr:0{2 * ptr_size}x}"
        return "<unavailable>"
    return "<unavailable>"


def _scalar(t):
    s = strip_typedefs(t)
    return s is not None and s.kind in ("int", "char", "bool", "enum", "float", "ptr")


def _char(b, table):
    if b in table:
        return table[b]
    if 32 <= b < 127:
        return chr(b)
    return f"\\x{b:02x}"


def _string(read_mem, p):
    out = bytearray()
    while len(out) < MAX_STRING:
        try:
            chunk = read_mem(p + len(out), 64)
        except Exception:
            if not out:
                return None
            break
        if not chunk:
            break
        end = chunk.find(0)
        if end >= 0:
            out += chunk[:end]
            break
        out += chunk
    return '"' + "".join(_char(b, _STR_ESC) for b in out) + '"'


def _float(raw, s, order):
    import struct
    n = len(raw)
    e = "<" if order == "little" else ">"
    if n == 4:
        v = struct.unpack(e + "f", raw)[0]
    elif n == 8:
        v = struct.unpack(e + "d", raw)[0]
    elif s.float_format == "x87" and n >= 10:      # x87's own (little-endian) layout
        man = int.from_bytes(raw[:8], "little")
        exp = int.from_bytes(raw[8:10], "little")
        sign = -1.0 if exp & 0x8000 else 1.0
        exp &= 0x7FFF
        if exp == 0x7FFF:
            return "-inf" if sign < 0 and man << 1 == 0 else ("inf" if man << 1 == 0 else "nan")
        v = sign * man * 2.0 ** (exp - 16383 - 63) if exp or man else 0.0
    else:
        return "<unavailable>"
    if v != v:
        return "nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    return "%.*G" % (_DIGITS.get(n, 17), v)


__all__ = ["format_lldb_value"]
