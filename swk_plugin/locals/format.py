"""Values printed exactly as GDB 13 prints them with its default settings (c-valprint.c,
valprint.c, cp-valprint.c): print elements 200, repeats 10, max-depth 20, print symbol
on, address on, null-stop off, pretty off, union on, static-members on.  A value's bytes
are in the target's byte order (VarValue.byteorder): integers, wide characters, pointers,
floats and bitfields are read in it.
"""
import os
import unicodedata
from collections import namedtuple

from ..dwarf.expr import evaluate
from .floats import format_float
from .locations import SYNTHETIC_BYTE
from .symbolize import Symbolizer
from .types import strip_typedefs, type_name

__all__ = ["format_value", "format_float", "ValueFormat", "PRINT_MAX", "REPEAT_THRESHOLD", "MAX_DEPTH"]

PRINT_MAX = 200
REPEAT_THRESHOLD = 10
UNLIMITED = 1 << 62


class ValueFormat(namedtuple("ValueFormat", "address symbol elements repeats radix")):
    """GDB's print settings that change a value's text: `print address` (pointers' hex),
    `print symbol` (a data pointer's <symbol>), `print elements` / `print repeats` (None:
    unlimited) and `output-radix` (8, 10 or 16: integers and characters' codes)."""
    __slots__ = ()

    @property
    def max_elements(self):
        return UNLIMITED if self.elements is None or self.elements <= 0 else self.elements

    @property
    def repeat_threshold(self):
        return UNLIMITED if self.repeats is None or self.repeats <= 0 else self.repeats


#: GDB's defaults.
DEFAULT_FORMAT = ValueFormat(True, True, PRINT_MAX, REPEAT_THRESHOLD, 10)
MAX_DEPTH = 20

_WIDE_NAMES = {"wchar_t": "L", "char16_t": "u", "char32_t": "U"}


def _host_is_utf8():
    """GDB's "auto" charset is the one of its locale (setlocale(LC_CTYPE, ""))."""
    for var in ("LC_ALL", "LC_CTYPE", "LANG"):
        v = os.environ.get(var)
        if v:
            v = v.lower()
            return "utf-8" in v or "utf8" in v
    try:
        import locale     # only without those: its import costs every start 1 ms
        return "utf" in locale.nl_langinfo(locale.CODESET).lower()
    except Exception:
        return False


UTF8 = _host_is_utf8()


# --- characters and strings (GDB's wchar_iterator + print_wchar) -----------------------------

_OK, _INVALID, _INCOMPLETE = 0, 1, 2
_SIMPLE_ESC = {7: "\\a", 8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t", 11: "\\v"}


def _classify(t):
    """classify_type: the string prefix ("", "L", "u", "U") of a character type."""
    n = 0
    while t is not None and n < 64:
        p = _WIDE_NAMES.get(t.name) if t.name else None
        if p is not None:
            return p
        if t.kind == "char" or not t.name or t.kind != "typedef":
            break
        t = t.target
        n += 1
    return ""


def _textual(t):
    """c_textual_element_type: whether values of this type print as characters."""
    s = strip_typedefs(t)
    if s.kind == "char":
        return True
    n = 0
    it = t
    while it is not None and n < 64:
        if it.name and it.name in _WIDE_NAMES:
            return True
        if it.kind != "typedef":
            break
        it = it.target
        n += 1
    return s.kind == "int" and s.size == 1


def _chars(buf, width, prefix, order="little"):
    """[(result, codepoint or None, raw bytes)] as GDB's wchar_iterator yields them
    (wide characters in the target's byte ``order``).

    UTF-8 is decoded as glibc's iconv does for GDB: F0-F7 lead 4-byte, F8-FB 5-byte and
    FC-FD 6-byte sequences (all invalid when complete), and a lead at the end of the
    buffer followed only by continuation bytes is an incomplete sequence.  GDB's
    iterator then drops the one character converted just before it (iconv returns
    EINVAL with that character in its output, which GDB ignores): so does this."""
    out = []
    n = len(buf)
    i = 0
    if width == 1:
        utf8 = UTF8
        while i < n:
            b = buf[i]
            if b < 0x80:
                out.append((_OK, b, buf[i:i + 1]))
                i += 1
                continue
            if not utf8:
                out.append((_INVALID, None, buf[i:i + 1]))
                i += 1
                continue
            ln = _UTF8_LEAD.get(b, 0)
            if ln == 0:
                out.append((_INVALID, None, buf[i:i + 1]))
                i += 1
                continue
            if i + ln > n:
                chunk = buf[i:]
                if all(c & 0xC0 == 0x80 for c in chunk[1:]):
                    if out and out[-1][0] == _OK:
                        out.pop()
                    out.append((_INCOMPLETE, None, chunk))
                    break
                out.append((_INVALID, None, buf[i:i + 1]))
                i += 1
                continue
            try:
                ch = buf[i:i + ln].decode("utf-8")
                out.append((_OK, ord(ch), buf[i:i + ln]))
                i += ln
            except UnicodeDecodeError:
                out.append((_INVALID, None, buf[i:i + 1]))
                i += 1
        return out
    if width == 2 and prefix == "u":
        while i + 2 <= n:
            u = int.from_bytes(buf[i:i + 2], order)
            if 0xD800 <= u <= 0xDBFF:
                if i + 4 > n:
                    out.append((_INCOMPLETE, None, buf[i:]))
                    break
                u2 = int.from_bytes(buf[i + 2:i + 4], order)
                if 0xDC00 <= u2 <= 0xDFFF:
                    out.append((_OK, 0x10000 + ((u - 0xD800) << 10) + (u2 - 0xDC00), buf[i:i + 4]))
                    i += 4
                    continue
                out.append((_INVALID, None, buf[i:i + 2]))
            elif 0xDC00 <= u <= 0xDFFF:
                out.append((_INVALID, None, buf[i:i + 2]))
            else:
                out.append((_OK, u, buf[i:i + 2]))
            i += 2
        return out
    while i + width <= n:
        u = int.from_bytes(buf[i:i + width], order)
        if u > 0x10FFFF or 0xD800 <= u <= 0xDFFF:
            out.append((_INVALID, None, buf[i:i + width]))
        else:
            out.append((_OK, u, buf[i:i + width]))
        i += width
    return out


#: Sequence length by lead byte, as glibc's UTF-8 decoder counts them.
_UTF8_LEAD = {**{b: 2 for b in range(0xC2, 0xE0)}, **{b: 3 for b in range(0xE0, 0xF0)},
              **{b: 4 for b in range(0xF0, 0xF8)}, **{b: 5 for b in range(0xF8, 0xFC)},
              0xFC: 6, 0xFD: 6}


#: Unicode categories glibc's iswprint calls unprintable (its locales' "print" class: every
#: assigned character but controls and the line and paragraph separators), which is what GDB
#: asks; Python's isprintable also refuses spaces, format characters and private use.
_UNPRINTABLE = frozenset({"Cn", "Cc", "Cs", "Zl", "Zp"})


def _printable(w):
    if w < 0x80:
        return 0x20 <= w < 0x7F
    if not UTF8:
        return False
    try:
        return unicodedata.category(chr(w)) not in _UNPRINTABLE
    except ValueError:
        return False


def _escape_bytes(raw, width, order="little"):
    s = []
    need = False
    i = 0
    while i + width <= len(raw):
        v = int.from_bytes(raw[i:i + width], order)
        if v <= 0o777:
            s.append("\\%03o" % v)
            need = False
        else:
            s.append("\\x%x" % v)
            need = True
        i += width
    while i < len(raw):
        s.append("\\%03o" % raw[i])
        need = False
        i += 1
    return "".join(s), need


class _Esc:
    """print_wchar with its need_escape state (a hex escape makes a following digit escape)."""
    __slots__ = ("need", "order")

    def __init__(self, order="little"):
        self.need = False
        self.order = order

    def wchar(self, w, raw, width, quoter):
        need = self.need
        self.need = False
        if w is not None and w in _SIMPLE_ESC:
            return _SIMPLE_ESC[w]
        if w is not None and _printable(w) and not (need and (48 <= w <= 57)):
            c = chr(w)
            if c == quoter or c == "\\":
                return "\\" + c
            return c
        s, self.need = _escape_bytes(raw, width, self.order)
        return s


def _emit_char(raw, t, order="little"):
    """c_printchar: 'c' with GDB's escapes and the L/u/U prefix."""
    prefix = _classify(t)
    width = len(raw)
    esc = _Esc(order)
    parts = []
    for res, w, b in _chars(raw, width, prefix, order):
        if res == _OK and (_printable(w) or w in _SIMPLE_ESC):
            parts.append(esc.wchar(w, b, width, "'"))
        else:
            parts.append(esc.wchar(None, b, width, "'"))
    return prefix + "'" + "".join(parts) + "'"


def _printstr(buf, width, t, force_ellipses, length=None, fmt=DEFAULT_FORMAT, order="little"):
    """generic_printstr with C's terminator rule and GDB's repeat / limit handling."""
    limit, threshold = fmt.max_elements, fmt.repeat_threshold
    prefix = _classify(t)
    if length is None:
        length = len(buf) // width
    if not force_ellipses and length > 0 and not any(buf[(length - 1) * width:length * width]):
        length -= 1
    if length == 0:
        return prefix + '""'
    chars = _chars(buf[:length * width], width, prefix, order)
    # count_next_character: runs of equal characters, until the print elements limit is reached
    groups = []            # [result, w, raw, repeat]
    i = 0
    k = 0
    n = len(chars)
    finished = False
    while i < limit:
        if k >= n:
            finished = True
            break
        res, w, raw = chars[k]
        if res == _INCOMPLETE:
            groups.append([res, w, raw, 1])
            k += 1
            finished = k >= n
            break
        rep = 1
        k += 1
        while k < n and chars[k][0] == res and chars[k][1] == w and chars[k][2] == raw:
            rep += 1
            k += 1
        groups.append([res, w, raw, rep])
        i += rep
    else:
        finished = k >= n
    out = []
    esc = _Esc(order)
    last = "start"
    for res, w, raw, rep in groups:
        if res == _INCOMPLETE:
            if last == "single":
                out.append('"')
            if last != "start":
                out.append(", ")
            out.append("<incomplete sequence " + _escape_bytes(raw, width, order)[0] + ">")
            last = "finish"
            break
        if rep > threshold:
            if last == "single":
                out.append('"')
            if last != "start":
                out.append(", ")
            out.append("'" + esc.wchar(w if res == _OK else None, raw, width, '"') + "'")
            out.append(f" <repeats {rep} times>")
            last = "repeat"
        else:
            if last != "single":
                if last != "start":
                    out.append(", ")
                out.append('"')
            for _ in range(rep):
                out.append(esc.wchar(w if res == _OK else None, raw, width, '"'))
            last = "single"
    if last == "single":
        out.append('"')
    s = "".join(out)
    if force_ellipses or not finished:
        s += "..."
    return prefix + s


# --- the value printer ---------------------------------------------------------------------

class _Printer:
    def __init__(self, read_mem, symbolize, static_value, fmt=DEFAULT_FORMAT, order="little"):
        self.read_mem = read_mem
        self.symbolize = symbolize
        self.static_value = static_value
        self.vb_seen = set()
        self.fmt = fmt
        #: The target's byte order: every word of a value is read in it.
        self.order = order

    def _mem(self, addr, size):
        try:
            data = self.read_mem(addr, size)
        except Exception:
            return None
        if data is None or len(data) < size:
            return None
        return bytes(data[:size])

    def address(self, a, func=False):
        """A pointer's text: its hex (`print address`), then <symbol> where one holds it (for
        data pointers only under `print symbol`; a function pointer always names its function)."""
        fmt = self.fmt
        s = "0x%x" % a if fmt.address else ""
        if self.symbolize is not None and (func or fmt.symbol):
            try:
                sym = self.symbolize(a)
            except Exception:
                sym = None
            if sym:
                s += f" <{sym}>" if s else f"<{sym}>"
        return s

    def integer(self, v, size):
        """An integer in `output-radix`: hex and octal show the type's bits (-1 is 0xffffffff)."""
        radix = self.fmt.radix
        if radix == 10:
            return str(v)
        if v < 0:
            v += 1 << (8 * size)
        if radix == 16:
            return "0x%x" % v
        return "0%o" % v if v else "0"

    @staticmethod
    def _out(mask, off, size):
        return mask is not None and any(mask[off:off + size])

    def value(self, t, buf, off, mask, recurse, addr, deref_ref):
        s = strip_typedefs(t)
        k = s.kind
        size = s.size
        if k in ("struct", "union") or (k == "array" and not (_textual(s.target) and s.count)):
            if recurse >= MAX_DEPTH:
                return "{...}"
        if k not in ("struct", "union", "array") and self._out(mask, off, size):
            if k in ("ptr", "ref", "rref") and size and all(b == SYNTHETIC_BYTE for b in mask[off:off + size]):
                return "<synthetic pointer>"     # a DW_OP_implicit_pointer piece (a lambda's capture)
            return "<optimized out>"
        raw = buf[off:off + size]
        order = self.order
        if k == "int" or k == "char":
            v = int.from_bytes(raw, order, signed=not s.unsigned)
            if self.fmt.radix != 10:        # output-radix: the code alone, no character
                return self.integer(v, size)
            out = str(v)
            if _textual(t):
                out += " " + _emit_char(raw, t, order)
            return out
        if k == "bool":
            v = int.from_bytes(raw, order)
            if self.fmt.radix != 10:        # output-radix formats bools as integers (not enums)
                return self.integer(v, size)
            return "false" if v == 0 else "true" if v == 1 else str(v)
        if k == "enum":
            return self.enum(s, raw)
        if k == "float":
            return format_float(raw, s.float_format, order)
        if k == "complex":
            half = size // 2
            fmt = s.target.float_format if s.target is not None else None
            return format_float(raw[:half], fmt, order) + " + " + format_float(raw[half:], fmt, order) + "i"
        if k == "ptr":
            return self.pointer(s, t, int.from_bytes(raw, order))
        if k in ("ref", "rref"):
            return self.reference(s, int.from_bytes(raw, order), recurse, deref_ref)
        if k == "array":
            return self.array(s, t, buf, off, mask, recurse, addr, deref_ref)
        if k in ("struct", "union"):
            if s.stub:
                return "<incomplete type>"
            return self.struct(s, buf, off, mask, recurse, addr)
        if k == "memberptr":
            return self.memberptr(s, raw)
        if k == "func":
            return "{%s} 0x%x" % (_tn(t), addr or 0)
        if k == "void":
            return "<incomplete type>" if s.stub else "void"
        return "<unknown>"

    def memberptr(self, s, raw):
        """cp_print_class_member / gnuv3_print_method_ptr."""
        target = strip_typedefs(s.target) if s.target is not None else None
        if target is not None and target.kind == "func":
            half = len(raw) // 2               # gnu-v3's {ptr, adj}: two pointer-sized words
            ptr = int.from_bytes(raw[:half], self.order)
            adj = int.from_bytes(raw[half:2 * half], self.order, signed=True)
            if ptr == 0:
                return "NULL"
            if ptr & 1:
                out = f"&virtual table offset {ptr - 1}"
            else:
                out = "(" + _tn(s) + ") " + self.address(ptr)
            if adj:
                out += f", this adjustment {adj}"
            return out
        v = int.from_bytes(raw, self.order, signed=True)
        if v == -1:
            return "NULL"
        st = s.self_type
        hit = _find_member(strip_typedefs(st), v * 8) if st is not None else None
        if hit is None:
            return str(v)
        owner, name = hit
        return "&" + (owner.name or "") + "::" + name

    def enum(self, s, raw):
        v = int.from_bytes(raw, self.order, signed=not s.unsigned)
        for name, ev in s.enumerators or ():
            if ev == v:
                return name
        if s.flag_enum:
            parts = []
            for name, ev in s.enumerators:
                if v & ev:
                    parts.append(name)
                    v &= ~ev
            if v:
                return "(" + " | ".join(parts + [f"unknown: 0x{v:x}"]) + ")" if parts \
                    else f"(unknown: 0x{v:x})"
            if not parts:
                return "0"
            return "(" + " | ".join(parts) + ")"
        return str(v)

    def function_pointer(self, a, size):
        """print_function_pointer_address: a pointer to a function descriptor (ELFv1) prints
        the descriptor's address, then the entry it holds with the function's name."""
        sym = self.symbolize
        if isinstance(sym, Symbolizer) and sym.descriptor(a):
            word = self._mem(a, size)
            entry = int.from_bytes(word, self.order) if word is not None else a
            if entry != a:
                return ("@0x%x: " % a if self.fmt.address else "") + self.address(entry, func=True)
        return self.address(a, func=True)

    def pointer(self, s, t, a):
        target = s.target
        ts = strip_typedefs(target) if target is not None else None
        if ts is not None and ts.kind == "func":
            return self.function_pointer(a, s.size)
        out = self.address(a)
        if target is not None and a != 0 and _textual(target):
            text = self.string_at(a, target)
            out = out + " " + text if out else text
        return out

    def string_at(self, a, elt):
        """val_print_string(len=-1): read up to PRINT_MAX characters or the NUL."""
        width = strip_typedefs(elt).size or 1
        buf = bytearray()
        err_addr = None
        found_nul = False
        cur = a
        limit = self.fmt.max_elements
        while len(buf) < limit * width and not found_nul:
            nfetch = min(8, limit - len(buf) // width)
            chunk = self._mem(cur, nfetch * width)
            if chunk is None:
                chunk = bytearray()
                for j in range(nfetch * width):
                    b = self._mem(cur + j, 1)
                    if b is None:
                        break
                    chunk += b
                chunk = bytes(chunk[:len(chunk) - len(chunk) % width])
                partial = True
            else:
                partial = False
            for j in range(0, len(chunk), width):
                buf += chunk[j:j + width]
                cur += width
                if not any(chunk[j:j + width]):
                    found_nul = True
                    break
            if partial and not found_nul:
                err_addr = cur
                break
        force = False
        if not found_nul and err_addr is None:
            peek = self._mem(cur, width)
            if peek is not None and any(peek):
                force = True
        out = ""
        if err_addr is None or buf:
            out = _printstr(bytes(buf), width, elt, force, fmt=self.fmt, order=self.order)
        if err_addr is not None:
            out += f"<error: Cannot access memory at address 0x{err_addr:x}>"
        return out

    def reference(self, s, a, recurse, deref_ref):
        """``@0xADDR: value`` (generic_val_print_ref); under `print address off` the value alone."""
        head = "@" + "0x%x" % a if self.fmt.address else ""
        if not deref_ref:
            return head
        sep = head + ": " if head else ""
        target = s.target
        ts = strip_typedefs(target)
        data = self._mem(a, ts.size) if ts.size else b""
        if data is None:
            return sep + f"<error: Cannot access memory at address 0x{a:x}>"
        return sep + self.value(target, data, 0, None, recurse, a, deref_ref)

    def array(self, s, t, buf, off, mask, recurse, addr, deref_ref):
        elt = s.target
        es = strip_typedefs(elt)
        n = s.count or 0
        if n == 0 or es.size == 0:
            a = (addr + off) if addr is not None else 0
            return self.pointer_like(elt, a)
        if _textual(elt) and not self._out(mask, off, n * es.size):
            return _printstr(bytes(buf[off:off + n * es.size]), es.size, elt, False, fmt=self.fmt,
                             order=self.order)
        esz = es.size
        parts = []
        things = 0
        i = 0
        limit, threshold = self.fmt.max_elements, self.fmt.repeat_threshold
        while i < n and things < limit:
            eo = off + i * esz
            rep1 = i + 1
            reps = 1
            cur = buf[eo:eo + esz]
            cm = mask[eo:eo + esz] if mask is not None else None
            while rep1 < n:
                o2 = off + rep1 * esz
                if buf[o2:o2 + esz] != cur or (mask is not None and mask[o2:o2 + esz] != cm):
                    break
                reps += 1
                rep1 += 1
            sub = self.value(elt, buf, eo, mask, recurse + 1,
                             (addr + 0) if addr is not None else None, deref_ref)
            if reps > threshold:
                parts.append(f"{sub} <repeats {reps} times>")
                i = rep1
                things += threshold
            else:
                parts.append(sub)
                i += 1
                things += 1
        s_ = ", ".join(parts)
        if i < n:
            s_ += "..."
        return "{" + s_ + "}"

    def pointer_like(self, elt, a):
        out = self.address(a)
        if a != 0 and _textual(elt):
            text = self.string_at(a, elt)
            out = out + " " + text if out else text
        return out

    def struct(self, s, buf, off, mask, recurse, addr):
        fields = s.fields or []
        out = ["{"]
        nbase = sum(1 for f in fields if f.is_base)
        for f in fields:
            if not f.is_base:
                continue
            bt = strip_typedefs(f.type)
            if f.is_virtual:
                # cp_print_value: a virtual base is printed once per top-level value
                key = bt.die or id(bt)
                if key in self.vb_seen:
                    continue
                self.vb_seen.add(key)
            out.append("<" + (f.name or "") + "> = ")
            if f.is_virtual:
                out.append(self.virtual_base(f, bt, addr, off, recurse))
            else:
                bo = off + f.bitpos // 8
                out.append(self.struct(bt, buf, bo, mask, recurse + 1,
                                       addr) if bt.kind in ("struct", "union") else "{}")
            out.append(", ")
        if len(fields) == nbase:
            out.append("<No data fields>")
        else:
            first = True
            for f in fields:
                if f.is_base:
                    continue
                if not first:
                    out.append(", ")
                first = False
                if f.is_static:
                    out.append("static " + f.name + " = ")
                    vv = None
                    if self.static_value is not None:
                        try:
                            vv = self.static_value(f)
                        except Exception:
                            vv = None
                    if vv is None or vv.data is None:
                        out.append("<optimized out>" if vv is None or not vv.error
                                   else f"<error reading variable: {vv.error}>")
                    else:
                        out.append(self.value(f.type, vv.data, 0, vv.opt_mask, recurse + 1,
                                              vv.address, False))
                    continue
                out.append(f.name + (" = " if f.name else ""))
                r = recurse + 1 if f.name else recurse
                if f.bitsize:
                    out.append(self.bitfield(f, buf, off, mask))
                else:
                    fo = off + f.bitpos // 8
                    out.append(self.value(f.type, buf, fo, mask, r,
                                          addr, False))
        out.append("}")
        return "".join(out)

    def virtual_base(self, f, bt, addr, off, recurse):
        """gnuv3_baseclass_offset: run DW_AT_data_member_location on the object's address."""
        if f.loc_expr is None or addr is None:
            return "<invalid address>"
        obj = addr + off
        try:
            res = evaluate(f.loc_expr, read_mem=lambda a, n: self._mem(a, n), initial_stack=(obj,),
                           byteorder=self.order)
            base = res.value if res.kind == "memory" else None
        except Exception:
            base = None
        data = self._mem(base, bt.size) if base is not None else None
        if data is None:
            return "<invalid address>"
        return self.struct(bt, data, 0, None, recurse + 1, base)

    def bitfield(self, f, buf, off, mask):
        ft = strip_typedefs(f.type)
        start = off * 8 + f.bitpos
        first = start // 8
        last = (start + f.bitsize - 1) // 8
        bits = getattr(mask, "bits", None)        # bit by bit where pieces left some out
        if (bits >> start) & ((1 << f.bitsize) - 1) if bits is not None else \
                self._out(mask, first, last - first + 1):
            return "<optimized out>"
        order = self.order
        word = int.from_bytes(buf[first:last + 1], order)
        # unpack_bits_as_long: bitpos counts from the first byte's LSB on a little-endian
        # target, from its MSB on a big-endian one (DWARF's bit numbering there)
        lsb = start % 8 if order == "little" else (last - first + 1) * 8 - start % 8 - f.bitsize
        v = (word >> lsb) & ((1 << f.bitsize) - 1)
        if not ft.unsigned and ft.kind in ("int", "char", "enum") and v >> (f.bitsize - 1):
            v -= 1 << f.bitsize
        size = ft.size or 1
        data = (v & ((1 << (8 * size)) - 1)).to_bytes(size, order)
        return self.value(f.type, data, 0, None, 0, None, False)


def _find_member(t, bitpos, depth=0):
    """cp_find_class_member: (class, field name) of the data member at ``bitpos``."""
    if depth > 20 or t.kind not in ("struct", "union"):
        return None
    for f in t.fields or ():
        if not f.is_base and not f.is_static and f.bitpos == bitpos:
            return t, f.name
    for f in t.fields or ():
        if f.is_base and not f.is_virtual and f.bitpos <= bitpos:
            hit = _find_member(strip_typedefs(f.type), bitpos - f.bitpos, depth + 1)
            if hit is not None:
                return hit
    return None


def _tn(t):
    return type_name(t)


def format_value(vv, read_mem, *, symbolize=None, summary=False, fmt=None):
    """The text GDB prints for the value in ``info locals`` / ``info args`` / ``bt full``.

    read_mem(addr, size) -> bytes reads target memory (strings behind char pointers,
    references); symbolize(addr) -> "sym+off" | None overrides the default
    <symbol> lookup (the variable's own module).  summary=True gives what bt's frame
    line shows for arguments ("..." for aggregates: print frame-arguments scalars).
    ``fmt``: a ValueFormat (GDB's print settings), GDB's defaults when None.  The value's
    bytes are read in its target's byte order (``vv.byteorder``).
    """
    if vv.error:
        if vv.var is not None:
            return f"<error reading variable {vv.var.name} ({vv.error})>"
        return f"<error: {vv.error}>"
    if summary and not vv.type.is_scalar:
        return "..."
    if vv.synthetic:
        st = strip_typedefs(vv.type)
        if st.kind in ("ref", "rref"):
            tgt = vv.synthetic_target
            if tgt is None:
                return "<synthetic pointer>: <optimized out>"
            inner = format_value(tgt, read_mem, symbolize=symbolize, fmt=fmt)
            if tgt.error:
                inner = f"<error: {tgt.error}>"
            return "<synthetic pointer>: " + inner
        return "<synthetic pointer>"
    if vv.optimized_out or vv.data is None:
        return "<optimized out>"
    p = _Printer(read_mem, symbolize if symbolize is not None else vv.symbolize, vv.static_value,
                 fmt or DEFAULT_FORMAT, vv.byteorder)
    s = strip_typedefs(vv.type)
    if (s.kind not in ("struct", "union", "array", "ptr", "ref", "rref") and vv.opt_mask is not None
            and any(vv.opt_mask)):
        return "<optimized out>"
    if vv.var is not None and vv.opt_mask is not None and all(b == 1 for b in vv.opt_mask):
        return "<optimized out>"                 # value_check_printable: entirely optimized out
    return p.value(vv.type, vv.data, 0, vv.opt_mask, 0, vv.address, True)
