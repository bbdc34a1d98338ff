"""Address -> (file, line) and enclosing function from DWARF, lazily, the way GDB answers.

Nothing is read until the first lookup.  Then:

* the compilation unit (CU) holding an address is found through .debug_aranges,
  completed by the CU DIE's own ranges for CUs that aranges leave out;
* that CU's line program is decoded once (DWARF 2-5) into per-source-file
  tables built with GDB's rules (end markers on file switches, dropped line-0
  rows, non-statement rows yielding to statement rows at one address), then
  searched by bisection the way GDB's ``find_pc_sect_line`` does;
* file names are those GDB prints after "at": the CU's DW_AT_name for the
  primary source file, else the line table's directory joined to its file name.

All section reading is done here with ``struct`` (compressed sections are
inflated), so no pyelftools objects are built per row or per DIE.  Malformed
DWARF never raises out of a lookup: it yields None.
"""
import bisect
import re
import struct
import threading
import zlib

from ..errors import BadFileError
from .demangle import demangle, strip_params, gdb_can_parse, drop_return_type

__all__ = ["LineTable"]

SHF_COMPRESSED = 0x800

# DW_TAG
TAG_compile_unit = 0x11
TAG_partial_unit = 0x3c
TAG_skeleton_unit = 0x4a
TAG_subprogram = 0x2e
TAG_namespace = 0x39
TAG_class_type = 0x02
TAG_structure_type = 0x13
TAG_union_type = 0x17
TAG_enumeration_type = 0x04
TAG_lexical_block = 0x0b
TAG_interface_type = 0x38
_SCOPE_TAGS = frozenset((TAG_namespace, TAG_class_type, TAG_structure_type, TAG_union_type,
                         TAG_enumeration_type, TAG_interface_type))
_RECORD_TAGS = _SCOPE_TAGS | {TAG_subprogram, TAG_lexical_block}

# DW_AT
AT_sibling = 0x01
AT_name = 0x03
AT_stmt_list = 0x10
AT_low_pc = 0x11
AT_high_pc = 0x12
AT_language = 0x13
AT_comp_dir = 0x1b
AT_abstract_origin = 0x31
AT_declaration = 0x3c
AT_specification = 0x47
AT_ranges = 0x55
AT_linkage_name = 0x6e
AT_MIPS_linkage_name = 0x2007
AT_str_offsets_base = 0x72
AT_addr_base = 0x73
AT_rnglists_base = 0x74
AT_GNU_addr_base = 0x2133
AT_GNU_ranges_base = 0x2132

LANG_asm = 0x8001        # DW_LANG_Mips_Assembler, what gas emits for .S files
_CPP_LANGS = frozenset((0x04, 0x1a, 0x21, 0x2b, 0x2c, 0x33))   # C++, C++03, C++11, C++14, C++17, C++20

_DIE_ATTRS_TOP = frozenset((AT_name, AT_stmt_list, AT_low_pc, AT_high_pc, AT_language, AT_comp_dir,
                            AT_ranges, AT_str_offsets_base, AT_addr_base, AT_rnglists_base,
                            AT_GNU_addr_base))
_DIE_ATTRS_FUNC = frozenset((AT_name, AT_low_pc, AT_high_pc, AT_ranges, AT_linkage_name,
                             AT_MIPS_linkage_name, AT_specification, AT_abstract_origin,
                             AT_declaration, AT_sibling))


class _DwarfError(Exception):
    pass


class _All:
    """A set that holds every attribute."""
    def __contains__(self, _x):
        return True


_ALL_ATTRS = _All()


# --- low-level readers ---------------------------------------------------------------------

def _uleb(data, pos):
    result = 0
    shift = 0
    while True:
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7


def _sleb(data, pos):
    result = 0
    shift = 0
    while True:
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            if b & 0x40:
                result -= 1 << shift
            return result, pos


def _cstr(data, pos):
    end = data.index(b"\0", pos)
    return data[pos:end], end + 1


def _uint(data, pos, size, little=True):
    return int.from_bytes(data[pos:pos + size], "little" if little else "big")


# fixed sizes of forms that do not depend on the unit (None: variable or unit-dependent)
_FIXED = {0x0b: 1, 0x05: 2, 0x06: 4, 0x07: 8, 0x0c: 1, 0x11: 1, 0x12: 2, 0x13: 4, 0x14: 8,
          0x19: 0, 0x1c: 4, 0x1e: 16, 0x20: 8, 0x21: 0, 0x24: 8, 0x25: 1, 0x26: 2, 0x27: 3,
          0x28: 4, 0x29: 1, 0x2a: 2, 0x2b: 3, 0x2c: 4}


class _Inflating:
    """A zlib-compressed section inflated as far as its readers have needed so far."""
    __slots__ = ("_d", "_tail", "data", "size", "done")

    def __init__(self, raw, skip, size):
        self._d = zlib.decompressobj()
        self._tail = memoryview(raw)[skip:]
        self.data = b""
        self.size = size          # what the header promises (a hint only)
        self.done = False

    def upto(self, end):
        data = self.data
        if end <= len(data) or self.done:
            return data
        want = max(end, 2 * len(data), 1 << 16)
        parts = [data]
        have = len(data)
        d = self._d
        while have < want:
            out = d.decompress(self._tail, want - have)
            self._tail = d.unconsumed_tail
            if out:
                parts.append(out)
                have += len(out)
            if d.eof or not self._tail:
                self.done = True
                break
        self.data = b"".join(parts)
        return self.data

    def whole(self):
        data = self.upto(1 << 62)
        if not self._d.eof:
            raise zlib.error("truncated compressed section")
        return data


class _Sections:
    """A module's debug sections, inflated on first use (and .debug_info only as far as
    the units asked for)."""

    def __init__(self, module):
        self.module = module
        self.little = module.little_endian
        self.is64 = module.elfclass == 64
        self._hdrs = {}
        for name, sh_type, flags, _addr, size, offset, _link, _entsize in module.section_headers():
            if name and name not in self._hdrs:
                self._hdrs[name] = (sh_type, flags, offset, size)
        self._cache = {}
        self._lazy = {}

    def has(self, name):
        h = self._hdrs.get(name)
        if h is not None and h[0] != "SHT_NOBITS" and h[3] > 0:
            return True
        z = self._hdrs.get(".zdebug_" + name[7:]) if name.startswith(".debug_") else None
        return z is not None and z[0] != "SHT_NOBITS" and z[3] > 0

    def get(self, name):
        """The whole section (None if absent or unreadable)."""
        if name in self._cache:
            return self._cache[name]
        lazy = self._lazy.pop(name, None)
        data = None
        try:
            data = lazy.whole() if lazy is not None else self._load(name)
        except (BadFileError, zlib.error, ValueError, OSError, struct.error):
            data = None
        self._cache[name] = data
        return data

    def upto(self, name, end):
        """The section's first ``end`` bytes at least (all of it if shorter), inflating a
        zlib-compressed section only that far: one unit of libc's 6 MB .debug_info costs
        a fraction of inflating it all (~30 ms)."""
        if name in self._cache:
            return self._cache[name]
        lazy = self._lazy.get(name)
        if lazy is None:
            lazy = self._lazy_for(name)
            if lazy is None:
                return self.get(name)
            self._lazy[name] = lazy
        try:
            return lazy.upto(end)
        except (zlib.error, ValueError):
            self._lazy.pop(name, None)
            self._cache[name] = None
            return None

    def view(self, name):
        """What has been inflated of the section so far (readers of a unit that upto()
        brought in); the whole section when nothing partial is under way."""
        lazy = self._lazy.get(name)
        if lazy is not None:
            return lazy.data
        return self.get(name)

    def _lazy_for(self, name):
        h = self._hdrs.get(name)
        try:
            if h is not None and h[0] != "SHT_NOBITS" and h[3] > 0:
                if not h[1] & SHF_COMPRESSED:
                    return None
                e = "<" if self.little else ">"
                hsz = 24 if self.is64 else 12
                if h[3] <= hsz:
                    return None
                raw = self.module.read_file(h[2], h[3])
                if self.is64:
                    ch_type, _res, size, _align = struct.unpack_from(e + "IIQQ", raw, 0)
                else:
                    ch_type, size, _align = struct.unpack_from(e + "III", raw, 0)
                return _Inflating(raw, hsz, size) if ch_type == 1 else None
            if name.startswith(".debug_"):
                z = self._hdrs.get(".zdebug_" + name[7:])
                if z is not None and z[0] != "SHT_NOBITS" and z[3] > 12:
                    raw = self.module.read_file(z[2], z[3])
                    if raw[:4] == b"ZLIB":
                        return _Inflating(raw, 12, int.from_bytes(raw[4:12], "big"))
        except (BadFileError, struct.error, ValueError, OSError):
            return None
        return None

    def _load(self, name):
        h = self._hdrs.get(name)
        if h is not None and h[0] != "SHT_NOBITS" and h[3] > 0:
            raw = self.module.read_file(h[2], h[3])
            if h[1] & SHF_COMPRESSED:
                return self._inflate(raw)
            return raw
        if name.startswith(".debug_"):
            z = self._hdrs.get(".zdebug_" + name[7:])
            if z is not None and z[0] != "SHT_NOBITS" and z[3] > 12:
                raw = self.module.read_file(z[2], z[3])
                if raw[:4] == b"ZLIB":
                    return zlib.decompress(raw[12:])
                return raw
        return None

    def _inflate(self, raw):
        e = "<" if self.little else ">"
        if self.is64:
            ch_type, _res, _size, _align = struct.unpack_from(e + "IIQQ", raw, 0)
            body = raw[24:]
        else:
            ch_type, _size, _align = struct.unpack_from(e + "III", raw, 0)
            body = raw[12:]
        if ch_type == 1:
            return zlib.decompress(body)
        if ch_type == 2:
            try:
                import zstandard  # optional
                return zstandard.ZstdDecompressor().decompress(body, max_output_size=_size)
            except ImportError:
                try:
                    from compression import zstd  # Python >= 3.14
                    return zstd.decompress(body)
                except ImportError:
                    return None
        return None


class _CU:
    __slots__ = ("offset", "end", "version", "unit_type", "addr_size", "offsz", "abbrev_off",
                 "die_off", "name", "comp_dir", "stmt_list", "low_pc", "ranges", "language",
                 "str_offsets_base", "addr_base", "rnglists_base", "lowpc", "_lines", "_funcs",
                 "_abbrevs", "_scopes", "_parents", "_names")

    def __init__(self):
        self.name = None
        self.comp_dir = None
        self.stmt_list = None
        self.low_pc = None
        self.ranges = None
        self.language = None
        self.str_offsets_base = None
        self.addr_base = None
        self.rnglists_base = None
        self.lowpc = 0
        self._lines = None
        self._funcs = None
        self._abbrevs = None
        self._scopes = None
        self._parents = None
        self._names = None


class _Subfile:
    __slots__ = ("name", "symtab", "pcs", "lines", "stmts")

    def __init__(self, name):
        self.name = name
        self.symtab = None       # the name of the symtab GDB gives it (what "at FILE:LINE" shows)
        self.pcs = []
        self.lines = []
        self.stmts = []


def _is_abs(p):
    return p.startswith("/")


def _path_join(a, b):
    if not a:
        return b
    if a.endswith("/"):
        return a + b
    return a + "/" + b


class _Dwarf:
    """The DWARF of one ELF file."""

    def __init__(self, module):
        self.module = module
        self.secs = _Sections(module)
        self.little = self.secs.little
        self.default_addr_size = 8 if self.secs.is64 else 4
        self._lock = threading.RLock()
        self._cus = {}           # offset -> _CU (headers read so far)
        self._map = None         # (los, his, prefix_max_hi, cu_offsets)
        self._amap = None        # the same from .debug_aranges alone
        self._abbrev_cache = {}

    # --- units ------------------------------------------------------------------------------
    def unit_at(self, off):
        cu = self._cus.get(off)
        if cu is not None:
            return cu
        info = self.secs.upto(".debug_info", off + 12)
        if info is None:
            raise _DwarfError("no .debug_info")
        if off + 12 <= len(info):
            length = _uint(info, off, 4, self.little)
            if length == 0xFFFFFFFF:
                length = 8 + _uint(info, off + 4, 8, self.little)
            info = self.secs.upto(".debug_info", off + 4 + length)
        cu = self._read_unit_header(info, off)
        self._read_top_die(info, cu)
        self._cus[off] = cu
        return cu

    def _read_unit_header(self, info, off):
        little = self.little
        if off + 11 > len(info):
            raise _DwarfError("unit header out of range")
        cu = _CU()
        cu.offset = off
        length = _uint(info, off, 4, little)
        pos = off + 4
        offsz = 4
        if length == 0xFFFFFFFF:
            length = _uint(info, pos, 8, little)
            pos += 8
            offsz = 8
        elif length >= 0xFFFFFFF0:
            raise _DwarfError("bad unit length")
        cu.end = pos + length
        if cu.end > len(info):
            raise _DwarfError("unit runs past .debug_info")
        cu.offsz = offsz
        cu.version = version = _uint(info, pos, 2, little)
        pos += 2
        if version < 2 or version > 5:
            raise _DwarfError(f"DWARF version {version}")
        if version >= 5:
            cu.unit_type = info[pos]
            cu.addr_size = info[pos + 1]
            pos += 2
            cu.abbrev_off = _uint(info, pos, offsz, little)
            pos += offsz
            if cu.unit_type in (4, 5):          # skeleton / split_compile: dwo_id
                pos += 8
            elif cu.unit_type in (2, 6):        # type units
                pos += 8 + offsz
        else:
            cu.unit_type = 1
            cu.abbrev_off = _uint(info, pos, offsz, little)
            pos += offsz
            cu.addr_size = info[pos]
            pos += 1
        cu.die_off = pos
        return cu

    def _abbrevs(self, abbrev_off):
        tab = self._abbrev_cache.get(abbrev_off)
        if tab is not None:
            return tab
        data = self.secs.get(".debug_abbrev")
        if data is None:
            raise _DwarfError("no .debug_abbrev")
        tab = {}
        pos = abbrev_off
        n = len(data)
        while pos < n:
            code, pos = _uleb(data, pos)
            if code == 0:
                break
            tag, pos = _uleb(data, pos)
            children = data[pos]
            pos += 1
            specs = []
            while True:
                at, pos = _uleb(data, pos)
                form, pos = _uleb(data, pos)
                if at == 0 and form == 0:
                    break
                implicit = None
                if form == 0x21:
                    implicit, pos = _sleb(data, pos)
                specs.append((at, form, implicit))
            tab[code] = (tag, bool(children), tuple(specs))
        self._abbrev_cache[abbrev_off] = tab
        return tab

    def _read_form(self, data, pos, form, cu, implicit):
        """(value, new pos) of one attribute; strings are returned as ("strp", section, offset)
        or bytes, indexed forms as ("strx", i) / ("addrx", i)."""
        fixed = _FIXED.get(form)
        little = self.little
        if fixed is not None:
            if form == 0x19:                                   # flag_present
                return True, pos
            if form == 0x21:                                   # implicit_const
                return implicit, pos
            v = int.from_bytes(data[pos:pos + fixed], "little" if little else "big")
            if 0x11 <= form <= 0x14:                           # ref1..ref8: unit relative
                v += cu.offset
            elif 0x25 <= form <= 0x28:
                return ("strx", v), pos + fixed
            elif 0x29 <= form <= 0x2c:
                return ("addrx", v), pos + fixed
            elif form == 0x1c or form == 0x24:                 # ref_sup
                return ("ref_sup", v), pos + fixed
            return v, pos + fixed
        if form == 0x01:                                       # addr
            return int.from_bytes(data[pos:pos + cu.addr_size], "little" if little else "big"), pos + cu.addr_size
        if form in (0x0e, 0x1f, 0x1d, 0x1f21):                 # strp, line_strp, strp_sup, GNU_strp_alt
            v = int.from_bytes(data[pos:pos + cu.offsz], "little" if little else "big")
            sec = {0x0e: ".debug_str", 0x1f: ".debug_line_str"}.get(form)
            return ("strp", sec, v), pos + cu.offsz
        if form == 0x08:                                       # string
            return _cstr(data, pos)
        if form in (0x17, 0x1f20):                             # sec_offset, GNU_ref_alt
            v = int.from_bytes(data[pos:pos + cu.offsz], "little" if little else "big")
            if form == 0x1f20:
                return ("ref_alt", v), pos + cu.offsz
            return v, pos + cu.offsz
        if form == 0x10:                                       # ref_addr
            sz = cu.addr_size if cu.version <= 2 else cu.offsz
            return int.from_bytes(data[pos:pos + sz], "little" if little else "big"), pos + sz
        if form == 0x0f or form == 0x15 or form in (0x22, 0x23):   # udata, ref_udata, loclistx, rnglistx
            v, pos = _uleb(data, pos)
            if form == 0x15:
                v += cu.offset
            elif form == 0x23:
                return ("rnglistx", v), pos
            elif form == 0x22:
                return ("loclistx", v), pos
            return v, pos
        if form == 0x0d:                                       # sdata
            return _sleb(data, pos)
        if form in (0x1a, 0x1f02):                             # strx, GNU_str_index
            v, pos = _uleb(data, pos)
            return ("strx", v), pos
        if form in (0x1b, 0x1f01):                             # addrx, GNU_addr_index
            v, pos = _uleb(data, pos)
            return ("addrx", v), pos
        if form == 0x18 or form == 0x09:                       # exprloc, block
            n, pos = _uleb(data, pos)
            return data[pos:pos + n], pos + n
        if form == 0x0a:
            n = data[pos]
            return data[pos + 1:pos + 1 + n], pos + 1 + n
        if form == 0x03:
            n = _uint(data, pos, 2, little)
            return data[pos + 2:pos + 2 + n], pos + 2 + n
        if form == 0x04:
            n = _uint(data, pos, 4, little)
            return data[pos + 4:pos + 4 + n], pos + 4 + n
        if form == 0x16:                                       # indirect
            f, pos = _uleb(data, pos)
            return self._read_form(data, pos, f, cu, implicit)
        raise _DwarfError(f"unknown form 0x{form:x}")

    def _read_die(self, info, pos, cu, wanted):
        """(tag, has_children, {attr: (form, value)}, next pos) of the DIE at pos; None for a null entry."""
        code, pos = _uleb(info, pos)
        if code == 0:
            return None, pos
        abbrevs = cu._abbrevs
        if abbrevs is None:
            abbrevs = cu._abbrevs = self._abbrevs(cu.abbrev_off)
        ab = abbrevs.get(code)
        if ab is None:
            raise _DwarfError(f"unknown abbrev {code}")
        tag, children, specs = ab
        attrs = {}
        read_form = self._read_form
        for at, form, implicit in specs:
            v, pos = read_form(info, pos, form, cu, implicit)
            if at in wanted:
                attrs[at] = (form, v)
        return (tag, children, attrs), pos

    def _read_top_die(self, info, cu):
        die, _pos = self._read_die(info, cu.die_off, cu, _DIE_ATTRS_TOP)
        if die is None:
            return
        _tag, _ch, attrs = die
        get = attrs.get
        for at, slot in ((AT_str_offsets_base, "str_offsets_base"), (AT_addr_base, "addr_base"),
                         (AT_GNU_addr_base, "addr_base"), (AT_rnglists_base, "rnglists_base")):
            if at in attrs and isinstance(attrs[at][1], int):
                setattr(cu, slot, attrs[at][1])
        cu.name = self.string(cu, get(AT_name, (0, None))[1])
        cu.comp_dir = self.string(cu, get(AT_comp_dir, (0, None))[1])
        sl = get(AT_stmt_list)
        if sl is not None and isinstance(sl[1], int):
            cu.stmt_list = sl[1]
        lang = get(AT_language)
        if lang is not None and isinstance(lang[1], int):
            cu.language = lang[1]
        cu.ranges = self._die_ranges(cu, attrs, cu_die=True)
        if cu.ranges:
            cu.lowpc = min(lo for lo, _hi in cu.ranges)
        elif cu.low_pc is not None:
            cu.lowpc = cu.low_pc

    # --- attribute values -----------------------------------------------------------------------
    def string(self, cu, v):
        if v is None:
            return None
        if isinstance(v, bytes):
            return v.decode("utf-8", "replace")
        if isinstance(v, tuple):
            if v[0] == "strp":
                if v[1] is None:
                    return None
                sec = self.secs.get(v[1])
                if sec is None or v[2] >= len(sec):
                    return None
                end = sec.find(b"\0", v[2])
                if end < 0:
                    end = len(sec)
                return sec[v[2]:end].decode("utf-8", "replace")
            if v[0] == "strx":
                so = self.secs.get(".debug_str_offsets")
                if so is None:
                    return None
                base = cu.str_offsets_base if cu.str_offsets_base is not None else 8
                p = base + v[1] * cu.offsz
                if p + cu.offsz > len(so):
                    return None
                off = _uint(so, p, cu.offsz, self.little)
                return self.string(cu, ("strp", ".debug_str", off))
        return None

    def address(self, cu, v):
        if isinstance(v, int):
            return v
        if isinstance(v, tuple) and v[0] == "addrx":
            sec = self.secs.get(".debug_addr")
            if sec is None:
                return None
            base = cu.addr_base if cu.addr_base is not None else 8
            p = base + v[1] * cu.addr_size
            if p + cu.addr_size > len(sec):
                return None
            return _uint(sec, p, cu.addr_size, self.little)
        return None

    def _die_ranges(self, cu, attrs, cu_die=False):
        """[(lo, hi)] of a DIE from DW_AT_low_pc/high_pc or DW_AT_ranges (empty ranges dropped)."""
        low = attrs.get(AT_low_pc)
        lowv = self.address(cu, low[1]) if low is not None else None
        if cu_die:
            cu.low_pc = lowv
        rng = attrs.get(AT_ranges)
        if rng is not None:
            return self._ranges(cu, rng[0], rng[1], cu_die)
        high = attrs.get(AT_high_pc)
        if lowv is not None and high is not None:
            hform, hv = high
            if hform == 0x01 or (isinstance(hv, tuple) and hv[0] == "addrx"):
                hi = self.address(cu, hv)
            elif isinstance(hv, int):
                hi = lowv + hv
            else:
                hi = None
            if hi is not None and hi > lowv:
                return [(lowv, hi)]
            return []
        return []

    def _ranges(self, cu, form, v, cu_die):
        little = self.little
        asz = cu.addr_size
        out = []
        base = cu.low_pc if cu.low_pc is not None else 0
        if cu.version >= 5:
            sec = self.secs.get(".debug_rnglists")
            if sec is None:
                return out
            if isinstance(v, tuple) and v[0] == "rnglistx":
                rbase = cu.rnglists_base
                if rbase is None:
                    rbase = 12 if cu.offsz == 4 else 20
                p = rbase + v[1] * cu.offsz
                if p + cu.offsz > len(sec):
                    return out
                off = rbase + _uint(sec, p, cu.offsz, little)
            elif isinstance(v, int):
                # on a non-CU DIE, a DW_FORM_sec_offset is absolute; so is the CU's
                off = v
            else:
                return out
            pos = off
            n = len(sec)
            while pos < n:
                kind = sec[pos]
                pos += 1
                if kind == 0:                        # end_of_list
                    break
                if kind == 1:                        # base_addressx
                    i, pos = _uleb(sec, pos)
                    base = self.address(cu, ("addrx", i)) or 0
                elif kind == 2:                      # startx_endx
                    a, pos = _uleb(sec, pos)
                    b, pos = _uleb(sec, pos)
                    lo = self.address(cu, ("addrx", a))
                    hi = self.address(cu, ("addrx", b))
                    if lo is not None and hi is not None:
                        out.append((lo, hi))
                elif kind == 3:                      # startx_length
                    a, pos = _uleb(sec, pos)
                    ln, pos = _uleb(sec, pos)
                    lo = self.address(cu, ("addrx", a))
                    if lo is not None:
                        out.append((lo, lo + ln))
                elif kind == 4:                      # offset_pair
                    a, pos = _uleb(sec, pos)
                    b, pos = _uleb(sec, pos)
                    out.append((base + a, base + b))
                elif kind == 5:                      # base_address
                    base = _uint(sec, pos, asz, little)
                    pos += asz
                elif kind == 6:                      # start_end
                    lo = _uint(sec, pos, asz, little)
                    hi = _uint(sec, pos + asz, asz, little)
                    pos += 2 * asz
                    out.append((lo, hi))
                elif kind == 7:                      # start_length
                    lo = _uint(sec, pos, asz, little)
                    pos += asz
                    ln, pos = _uleb(sec, pos)
                    out.append((lo, lo + ln))
                else:
                    break
        else:
            sec = self.secs.get(".debug_ranges")
            if sec is None or not isinstance(v, int):
                return out
            pos = v
            maxaddr = (1 << (8 * asz)) - 1
            n = len(sec)
            while pos + 2 * asz <= n:
                lo = _uint(sec, pos, asz, little)
                hi = _uint(sec, pos + asz, asz, little)
                pos += 2 * asz
                if lo == 0 and hi == 0:
                    break
                if lo == maxaddr:
                    base = hi
                    continue
                out.append((base + lo, base + hi))
        return [(lo, hi) for lo, hi in out if hi > lo]

    # --- the address -> CU map -------------------------------------------------------------------
    def _aranges(self):
        """(entries, covered unit offsets) from .debug_aranges ([] and empty if none)."""
        entries = []
        covered = set()
        ar = self.secs.get(".debug_aranges")
        if ar is not None:
            try:
                self._parse_aranges(ar, entries, covered)
            except (IndexError, struct.error, ValueError, _DwarfError):
                entries = []
                covered = set()
        return entries, covered

    def _build_amap(self):
        entries, _covered = self._aranges()
        self._amap = self._index(entries)

    def _build_map(self):
        entries, covered = self._aranges()
        info = self.secs.get(".debug_info")
        if info is not None:
            off = 0
            n = len(info)
            while off + 11 <= n:
                try:
                    length = _uint(info, off, 4, self.little)
                    if length == 0xFFFFFFFF:
                        end = off + 12 + _uint(info, off + 4, 8, self.little)
                    else:
                        end = off + 4 + length
                    if end <= off or end > n:
                        break
                    if off not in covered:
                        cu = self.unit_at(off)
                        if cu.unit_type in (1, 3, 4) and cu.ranges:
                            for lo, hi in cu.ranges:
                                entries.append((lo, hi, off))
                    off = end
                except (IndexError, struct.error, ValueError, _DwarfError):
                    break
        self._map = self._index(entries)

    @staticmethod
    def _index(entries):
        entries.sort()
        los = [e[0] for e in entries]
        his = [e[1] for e in entries]
        pmax = []
        m = -1
        for h in his:
            if h > m:
                m = h
            pmax.append(m)
        return (los, his, pmax, [e[2] for e in entries])

    def _parse_aranges(self, ar, entries, covered):
        little = self.little
        pos = 0
        n = len(ar)
        while pos + 12 <= n:
            start = pos
            length = _uint(ar, pos, 4, little)
            pos += 4
            offsz = 4
            if length == 0xFFFFFFFF:
                length = _uint(ar, pos, 8, little)
                pos += 8
                offsz = 8
            end = pos + length
            if end > n or length == 0:
                break
            _version = _uint(ar, pos, 2, little)
            pos += 2
            cu_off = _uint(ar, pos, offsz, little)
            pos += offsz
            asz = ar[pos]
            seg = ar[pos + 1]
            pos += 2
            if asz not in (2, 4, 8) or seg:
                pos = end
                continue
            tup = 2 * asz
            rem = (pos - start) % tup
            if rem:
                pos += tup - rem
            count = (end - pos) // tup
            fmt = ("<" if little else ">") + {2: "HH", 4: "II", 8: "QQ"}[asz]
            for lo, ln in struct.iter_unpack(fmt, ar[pos:pos + count * tup]):
                if lo == 0 and ln == 0:
                    break
                if ln:
                    entries.append((lo, lo + ln, cu_off))
            covered.add(cu_off)
            pos = end

    def cu_for(self, addr):
        """The unit whose ranges hold ``addr``: from .debug_aranges when it names one (so
        only that unit is read), else from every unit's own ranges (the whole section)."""
        with self._lock:
            if self._amap is None:
                self._build_amap()
        cu = self._find_cu(self._amap, addr)
        if cu is not None:
            return cu
        with self._lock:
            if self._map is None:
                self._build_map()
        return self._find_cu(self._map, addr)

    def _find_cu(self, index, addr):
        los, his, pmax, offs = index
        i = bisect.bisect_right(los, addr) - 1
        while i >= 0 and pmax[i] > addr:
            if his[i] > addr:
                try:
                    return self.unit_at(offs[i])
                except _DwarfError:
                    return None
            i -= 1
        return None

    # --- line programs ---------------------------------------------------------------------------
    def lines_for(self, cu):
        if cu._lines is None:
            with self._lock:
                if cu._lines is None:
                    try:
                        cu._lines = self._decode_lines(cu)
                    except (IndexError, struct.error, ValueError, _DwarfError, UnicodeError):
                        cu._lines = []
        return cu._lines

    def _line_data(self, off):
        """.debug_line inflated at least through the line program at ``off``."""
        data = self.secs.upto(".debug_line", off + 12)
        if data is None or off + 12 > len(data):
            return data
        length = _uint(data, off, 4, self.little)
        if length == 0xFFFFFFFF:
            length = 8 + _uint(data, off + 4, 8, self.little)
        return self.secs.upto(".debug_line", off + 4 + length)

    def _line_header(self, data, off, cu):
        little = self.little
        pos = off
        length = _uint(data, pos, 4, little)
        pos += 4
        offsz = 4
        if length == 0xFFFFFFFF:
            length = _uint(data, pos, 8, little)
            pos += 8
            offsz = 8
        end = pos + length
        if end > len(data):
            raise _DwarfError("line program past section end")
        version = _uint(data, pos, 2, little)
        pos += 2
        if version < 2 or version > 5:
            raise _DwarfError(f"line table version {version}")
        addr_size = cu.addr_size
        if version >= 5:
            addr_size = data[pos]
            pos += 2          # address_size, segment_selector_size
        hlen = _uint(data, pos, offsz, little)
        pos += offsz
        prog = pos + hlen
        min_inst = data[pos]
        pos += 1
        max_ops = 1
        if version >= 4:
            max_ops = data[pos] or 1
            pos += 1
        default_is_stmt = bool(data[pos])
        line_base = struct.unpack_from("b", data, pos + 1)[0]
        line_range = data[pos + 2]
        opcode_base = data[pos + 3]
        pos += 4
        std_lens = list(data[pos:pos + max(opcode_base - 1, 0)])
        pos += max(opcode_base - 1, 0)
        dirs = []
        files = []         # (name, dir_index)
        if version >= 5:
            lcu = _CU()
            lcu.offset = 0
            lcu.version = 5
            lcu.offsz = offsz
            lcu.addr_size = addr_size
            lcu.str_offsets_base = cu.str_offsets_base

            def entries(pos):
                nfmt = data[pos]
                pos += 1
                fmts = []
                for _ in range(nfmt):
                    ct, pos = _uleb(data, pos)
                    fm, pos = _uleb(data, pos)
                    fmts.append((ct, fm))
                count, pos = _uleb(data, pos)
                out = []
                for _ in range(count):
                    name = None
                    dindex = 0
                    for ct, fm in fmts:
                        v, pos = self._read_form(data, pos, fm, lcu, None)
                        if ct == 1:
                            name = self.string(cu if fm in (0x1a, 0x25, 0x26, 0x27, 0x28) else lcu, v)
                        elif ct == 2 and isinstance(v, int):
                            dindex = v
                    out.append((name or "", dindex))
                return out, pos

            d, pos = entries(pos)
            dirs = [x[0] for x in d]
            files, pos = entries(pos)
        else:
            while True:
                s, pos = _cstr(data, pos)
                if not s:
                    break
                dirs.append(s.decode("utf-8", "replace"))
            while True:
                s, pos = _cstr(data, pos)
                if not s:
                    break
                di, pos = _uleb(data, pos)
                _mt, pos = _uleb(data, pos)
                _ln, pos = _uleb(data, pos)
                files.append((s.decode("utf-8", "replace"), di))
        return dict(version=version, end=end, prog=prog, min_inst=min_inst, max_ops=max_ops,
                    default_is_stmt=default_is_stmt, line_base=line_base, line_range=line_range,
                    opcode_base=opcode_base, std_lens=std_lens, dirs=dirs, files=files,
                    addr_size=addr_size)

    def _decode_lines(self, cu):
        """[_Subfile] in GDB's filetab order (primary first), each sorted by pc."""
        if cu.stmt_list is None:
            return []
        data = self._line_data(cu.stmt_list)
        if data is None or cu.stmt_list >= len(data):
            return []
        h = self._line_header(data, cu.stmt_list, cu)
        version = h["version"]
        dirs = h["dirs"]
        files = h["files"]
        comp_dir = cu.comp_dir or ""
        little = self.little

        # --- subfiles, named and matched as GDB's start_subfile does
        subfiles = []                       # creation order
        primary = _Subfile(cu.name if cu.name is not None else "<unknown>")
        subfiles.append(primary)

        def same(sf_name, name):
            if _is_abs(name) and not _is_abs(sf_name) and comp_dir:
                sf_name = _path_join(comp_dir, sf_name)
            return sf_name == name

        def start_subfile(name):
            for sf in reversed(subfiles):          # GDB walks its list newest first
                if same(sf.name, name):
                    return sf
            sf = _Subfile(name)
            subfiles.append(sf)
            return sf

        def file_name(idx):
            """Subfile path for file index idx (as numbered in the line program)."""
            i = idx if version >= 5 else idx - 1
            if i < 0 or i >= len(files):
                return None
            name, di = files[i]
            dj = di if version >= 5 else di - 1
            d = dirs[dj] if 0 <= dj < len(dirs) else None
            if not _is_abs(name) and d is not None:
                name = d + "/" + name
            return name

        file_cache = {}

        def subfile_for(idx):
            sf = file_cache.get(idx)
            if sf is None:
                nm = file_name(idx)
                if nm is None:
                    return None
                sf = start_subfile(nm)
                file_cache[idx] = sf
            return sf

        min_inst = h["min_inst"]
        max_ops = h["max_ops"]
        line_base = h["line_base"]
        line_range = h["line_range"] or 1
        opcode_base = h["opcode_base"]
        std_lens = h["std_lens"]
        default_is_stmt = h["default_is_stmt"]
        asz = h["addr_size"] or cu.addr_size
        lowpc = cu.lowpc
        tomb1 = (1 << (8 * asz)) - 1
        tomb2 = tomb1 - 1
        end = h["end"]
        pos = h["prog"]

        while pos < end:
            # --- one sequence: a fresh state machine
            address = 0
            op_index = 0
            file_idx = 1
            line = 1
            is_stmt = default_is_stmt
            discriminator = 0
            last_subfile = None
            last_address = 0
            stmt_at_address = False
            recording = True
            last_line = 0
            nonzero_disc = False
            cur = subfile_for(file_idx)
            end_seq = False

            def record_line_1(sf, ln, stmt, addr):
                if not recording or sf is None:
                    return
                if ln == 0:
                    pcs = sf.pcs
                    last_ln = None
                    while pcs:
                        last_ln = sf.lines[-1]
                        if pcs[-1] != addr:
                            break
                        pcs.pop()
                        sf.lines.pop()
                        sf.stmts.pop()
                    if last_ln is None or last_ln == 0:
                        return
                sf.pcs.append(addr)
                sf.lines.append(ln)
                sf.stmts.append(stmt)

            while pos < end and not end_seq:
                op = data[pos]
                pos += 1
                emit = False
                if op >= opcode_base:
                    adj = op - opcode_base
                    d = adj // line_range
                    if max_ops == 1:
                        address += d * min_inst
                    else:
                        address += ((op_index + d) // max_ops) * min_inst
                        op_index = (op_index + d) % max_ops
                    delta = line_base + adj % line_range
                    line += delta
                    if delta:
                        nonzero_disc = discriminator != 0
                    emit = True
                elif op == 0:
                    ln, pos = _uleb(data, pos)
                    ext_end = pos + ln
                    if ln == 0:
                        continue
                    sub = data[pos]
                    pos += 1
                    if sub == 1:                     # end_sequence: record_line(true) -> finish_line
                        end_seq = True
                        recording = True
                        if cur is not None and last_subfile is not None:
                            record_line_1(last_subfile, 0, True, address)
                    elif sub == 2:                   # set_address
                        sz = ext_end - pos
                        a = _uint(data, pos, sz, little) if sz > 0 else 0
                        if (a == 0 and a < lowpc) or a == tomb1 or a == tomb2:
                            recording = False
                        address = a
                        op_index = 0
                    elif sub == 3:                   # define_file (DWARF <= 4)
                        s, p2 = _cstr(data, pos)
                        di, p2 = _uleb(data, p2)
                        files.append((s.decode("utf-8", "replace"), di))
                    elif sub == 4:                   # set_discriminator
                        discriminator, _p = _uleb(data, pos)
                        nonzero_disc = nonzero_disc or discriminator != 0
                    pos = ext_end
                elif op == 1:                        # copy
                    emit = True
                elif op == 2:                        # advance_pc
                    a, pos = _uleb(data, pos)
                    if max_ops == 1:
                        address += a * min_inst
                    else:
                        address += ((op_index + a) // max_ops) * min_inst
                        op_index = (op_index + a) % max_ops
                elif op == 3:                        # advance_line
                    a, pos = _sleb(data, pos)
                    line += a
                    if a:
                        nonzero_disc = discriminator != 0
                elif op == 4:                        # set_file
                    file_idx, pos = _uleb(data, pos)
                    sf = subfile_for(file_idx)
                    if sf is not None:
                        nonzero_disc = discriminator != 0
                        cur = sf
                    else:
                        cur = None             # rows for an unknown file are not recorded
                elif op == 5:                        # set_column
                    _c, pos = _uleb(data, pos)
                elif op == 6:                        # negate_stmt
                    is_stmt = not is_stmt
                elif op == 7:                        # set_basic_block
                    pass
                elif op == 8:                        # const_add_pc
                    d = (255 - opcode_base) // line_range
                    if max_ops == 1:
                        address += d * min_inst
                    else:
                        address += ((op_index + d) // max_ops) * min_inst
                        op_index = (op_index + d) % max_ops
                elif op == 9:                        # fixed_advance_pc
                    address += _uint(data, pos, 2, little)
                    pos += 2
                    op_index = 0
                elif op in (10, 11):                 # prologue_end, epilogue_begin
                    pass
                elif op == 12:                       # set_isa
                    _c, pos = _uleb(data, pos)
                else:
                    for _ in range(std_lens[op - 1] if op - 1 < len(std_lens) else 0):
                        _c, pos = _uleb(data, pos)

                if emit:
                    # lnp_state_machine::record_line(false)
                    if cur is not None and op_index == 0:
                        file_changed = last_subfile is not cur
                        ignore = ((file_changed and last_address == address and not is_stmt
                                   and stmt_at_address) or line == 0)
                        if file_changed and not ignore and last_subfile is not None:
                            record_line_1(last_subfile, 0, True, address)
                        if not ignore:
                            if cur is not last_subfile or line != last_line or not nonzero_disc:
                                last_subfile = cur
                                record_line_1(cur, line, is_stmt, address)
                                last_line = line
                    if last_address != address:
                        stmt_at_address = False
                        last_address = address
                    stmt_at_address = stmt_at_address or is_stmt
                    discriminator = 0
            if not end_seq and last_subfile is not None:
                end_seq = True
                recording = True
                record_line_1(last_subfile, 0, True, address)

        # dwarf_decode_lines: a symtab for every file of the table, in table order
        symtabs = []                       # subfiles owning a symtab, in allocation order
        for k in range(len(files)):
            idx = k if version >= 5 else k + 1
            sf = file_cache.get(idx)
            if sf is None:
                nm = file_name(idx)
                if nm is None:
                    continue
                sf = start_subfile(nm)
                file_cache[idx] = sf
            if sf.symtab is None:
                sf.symtab = sf.name
                symtabs.append(sf)

        # buildsym's watch_main_source_file_lossage: a primary file known under another path
        if not primary.pcs and primary.symtab is None:
            base = primary.name.rsplit("/", 1)[-1]
            matches = [sf for sf in subfiles if sf is not primary
                       and sf.name.rsplit("/", 1)[-1] == base]
            if len(matches) == 1:
                alias = matches[0]
                primary.pcs, primary.lines, primary.stmts = alias.pcs, alias.lines, alias.stmts
                primary.symtab = alias.symtab
                alias.pcs, alias.lines, alias.stmts = [], [], []
                subfiles.remove(alias)
                symtabs = [primary if sf is alias else sf for sf in symtabs]
        for sf in reversed(subfiles):
            if sf.symtab is None:
                sf.symtab = sf.name
                symtabs.append(sf)
        # the primary file's symtab goes first
        order = [primary] + [sf for sf in symtabs if sf is not primary]
        out = []
        for sf in order:
            if not sf.pcs:
                continue
            # stable sort by pc, end markers (line 0) first among equal pcs
            pcs, lns = sf.pcs, sf.lines
            if any(pcs[k] > pcs[k + 1] or (pcs[k] == pcs[k + 1] and lns[k + 1] == 0 and lns[k] != 0)
                   for k in range(len(pcs) - 1)):
                idx = sorted(range(len(pcs)), key=lambda k: (pcs[k], lns[k] != 0))
                sf.pcs = [pcs[k] for k in idx]
                sf.lines = [lns[k] for k in idx]
                sf.stmts = [sf.stmts[k] for k in idx]
            out.append(sf)
        return out

    # --- functions ---------------------------------------------------------------------------------
    def function_die_at(self, cu, addr):
        """Offset of the innermost DW_TAG_subprogram of ``cu`` whose ranges hold addr, or None."""
        los, his, offs, pmax = self.funcs_for(cu)
        i = bisect.bisect_right(los, addr) - 1
        while i >= 0 and pmax[i] > addr:   # the containing range with the greatest start
            if his[i] > addr:
                return offs[i]
            i -= 1
        return None

    def funcs_for(self, cu):
        if cu._funcs is None:
            with self._lock:
                if cu._funcs is None:
                    try:
                        cu._funcs = self._scan_funcs(cu)
                    except (IndexError, struct.error, ValueError, _DwarfError, UnicodeError):
                        cu._funcs = ([], [], [], [])
        return cu._funcs

    def _skip_plan(self, cu, specs):
        """Attribute specs folded into skip steps: ints are fixed byte counts, other
        entries are forms whose size must be decoded."""
        plan = []
        fixed = 0
        for _at, form, _imp in specs:
            n = _FIXED.get(form)
            if n is None:
                if form == 0x01:
                    n = cu.addr_size
                elif form in (0x0e, 0x1f, 0x1d, 0x1f21, 0x17, 0x1f20):
                    n = cu.offsz
                elif form == 0x10:
                    n = cu.addr_size if cu.version <= 2 else cu.offsz
            if n is not None:
                fixed += n
                continue
            if fixed:
                plan.append(fixed)
                fixed = 0
            plan.append(("f", form))
        if fixed:
            plan.append(fixed)
        return plan

    def _skip_die(self, info, pos, cu, code, plans):
        plan = plans.get(code)
        if plan is None:
            plan = plans[code] = self._skip_plan(cu, cu._abbrevs[code][2])
        for step in plan:
            if step.__class__ is int:
                pos += step
                continue
            form = step[1]
            if form in (0x0f, 0x15, 0x22, 0x23, 0x0d, 0x1a, 0x1b, 0x1f01, 0x1f02):
                while info[pos] & 0x80:
                    pos += 1
                pos += 1
            elif form == 0x08:
                pos = info.index(b"\0", pos) + 1
            elif form == 0x18 or form == 0x09:
                n, pos = _uleb(info, pos)
                pos += n
            elif form == 0x0a:
                pos += 1 + info[pos]
            elif form == 0x03:
                pos += 2 + _uint(info, pos, 2, self.little)
            elif form == 0x04:
                pos += 4 + _uint(info, pos, 4, self.little)
            else:                      # indirect and anything unusual: decode it
                _v, pos = self._read_form(info, pos, form, cu, None)
        return pos

    def _scan_funcs(self, cu):
        """Walk the unit's DIEs once: function ranges and the scopes needed to name them."""
        info = self.secs.view(".debug_info")
        funcs = []                    # (lo, hi, die offset)
        scopes = {}                   # die offset -> (tag, attrs, nearest recorded ancestor)
        stack = []                    # recorded-ancestor offsets, one per open DIE with children
        if cu._abbrevs is None:
            cu._abbrevs = self._abbrevs(cu.abbrev_off)
        abbrevs = cu._abbrevs
        plans = {}
        read_form = self._read_form
        pos = cu.die_off
        end = cu.end
        depth0 = True
        while pos < end:
            die_off = pos
            code, pos = _uleb(info, pos)
            if code == 0:
                if stack:
                    stack.pop()
                if not stack:
                    break
                continue
            ab = abbrevs.get(code)
            if ab is None:
                raise _DwarfError(f"unknown abbrev {code}")
            tag, children, specs = ab
            if depth0:
                depth0 = False
                pos = self._skip_die(info, pos, cu, code, plans)
                if not children:
                    break
                stack.append(None)
                continue
            if tag in _RECORD_TAGS:
                attrs = {}
                for at, form, implicit in specs:
                    v, pos = read_form(info, pos, form, cu, implicit)
                    if at in _DIE_ATTRS_FUNC:
                        attrs[at] = (form, v)
                parent = stack[-1] if stack else None
                scopes[die_off] = (tag, attrs, parent)
                if tag == TAG_subprogram:
                    for lo, hi in self._die_ranges(cu, attrs):
                        funcs.append((lo, hi, die_off))
                if children:
                    stack.append(die_off)
            else:
                pos = self._skip_die(info, pos, cu, code, plans)
                if children:
                    stack.append(stack[-1] if stack else None)
        cu._scopes = scopes
        funcs.sort()
        pmax = []
        m = -1
        for f in funcs:
            if f[1] > m:
                m = f[1]
            pmax.append(m)
        return ([f[0] for f in funcs], [f[1] for f in funcs], [f[2] for f in funcs], pmax)

    def die_attrs(self, cu, off, wanted=_DIE_ATTRS_FUNC):
        """(tag, attrs) of the DIE at .debug_info offset ``off`` in the same unit, or None."""
        target = cu
        if not (cu.offset <= off < cu.end):
            target = self._unit_containing(off)
            if target is None:
                return None
        info = self.secs.view(".debug_info")
        die, _p = self._read_die(info, off, target, wanted)
        if die is None:
            return None
        return target, die[0], die[2]

    def die_full(self, cu, off):
        """(unit, tag, attrs, has_children, end of attributes) of any DIE, every attribute read."""
        target = cu
        if not (cu.offset <= off < cu.end):
            target = self._unit_containing(off)
            if target is None:
                return None
        info = self.secs.view(".debug_info")
        die, pos = self._read_die(info, off, target, _ALL_ATTRS)
        if die is None:
            return None
        return target, die[0], die[2], die[1], pos

    def children(self, cu, off):
        """Offsets of the direct children of the DIE at ``off`` (same unit)."""
        r = self.die_full(cu, off)
        if r is None or not r[3]:
            return []
        info = self.secs.view(".debug_info")
        tcu = r[0]
        if tcu._abbrevs is None:
            tcu._abbrevs = self._abbrevs(tcu.abbrev_off)
        plans = {}
        out = []
        pos = r[4]
        depth = 0
        while pos < tcu.end:
            start = pos
            code, pos = _uleb(info, pos)
            if code == 0:
                if depth == 0:
                    break
                depth -= 1
                continue
            ab = tcu._abbrevs.get(code)
            if ab is None:
                break
            if depth == 0:
                out.append(start)
            pos = self._skip_die(info, pos, tcu, code, plans)
            if ab[1]:
                depth += 1
        return out

    def parents(self, cu):
        """{DIE offset: parent DIE offset} for the whole unit (built on first use)."""
        if cu._parents is None:
            with self._lock:
                if cu._parents is None:
                    info = self.secs.view(".debug_info")
                    if cu._abbrevs is None:
                        cu._abbrevs = self._abbrevs(cu.abbrev_off)
                    plans = {}
                    par = {}
                    stack = []
                    pos = cu.die_off
                    try:
                        while pos < cu.end:
                            start = pos
                            code, pos = _uleb(info, pos)
                            if code == 0:
                                if stack:
                                    stack.pop()
                                if not stack:
                                    break
                                continue
                            ab = cu._abbrevs[code]
                            par[start] = stack[-1] if stack else None
                            pos = self._skip_die(info, pos, cu, code, plans)
                            if ab[1]:
                                stack.append(start)
                    except (IndexError, KeyError, ValueError, _DwarfError):
                        pass
                    cu._parents = par
        return cu._parents

    def _unit_containing(self, off):
        for c in self._cus.values():
            if c.offset <= off < c.end:
                return c
        p = 0
        while True:
            info = self.secs.upto(".debug_info", p + 12)   # inflate only as far as off's unit
            if info is None or p + 11 > len(info):
                break
            length = _uint(info, p, 4, self.little)
            e = p + 12 + _uint(info, p + 4, 8, self.little) if length == 0xFFFFFFFF else p + 4 + length
            if e <= p:
                return None
            if p <= off < e:
                return self.unit_at(p)
            p = e
        return None

    # --- whole DIE trees and unit helpers (for swk_plugin.locals) ------------------------------
    def unit_of(self, off):
        """The unit holding .debug_info offset ``off``, or None."""
        try:
            return self._unit_containing(off)
        except (IndexError, struct.error, ValueError, _DwarfError):
            return None

    def die_tree(self, cu, off):
        """The DIE at ``off`` with all its descendants, every attribute read, in one pass:
        a DieNode tree (None on malformed DWARF).  Functions and aggregates are small, so
        reading them whole is cheaper than a seek per child."""
        target = cu if cu is not None and cu.offset <= off < cu.end else self.unit_of(off)
        info = self.secs.view(".debug_info")
        if info is None or target is None:
            return None
        try:
            if target._abbrevs is None:
                target._abbrevs = self._abbrevs(target.abbrev_off)
            root = None
            stack = []
            pos = off
            end = target.end
            read_die = self._read_die
            while pos < end:
                start = pos
                die, pos = read_die(info, pos, target, _ALL_ATTRS)
                if die is None:
                    if not stack:
                        break
                    stack.pop()
                    if not stack:
                        break
                    continue
                tag, has_children, attrs = die
                node = DieNode(start, tag, attrs, target)
                if stack:
                    node.parent = stack[-1]
                    stack[-1].children.append(node)
                else:
                    root = node
                if has_children:
                    stack.append(node)
                elif not stack:
                    break
            return root
        except (IndexError, KeyError, struct.error, ValueError, _DwarfError):
            return None

    def die_ranges(self, cu, attrs):
        """[(lo, hi)] of a DIE from its DW_AT_low_pc/high_pc or DW_AT_ranges ([] if empty)."""
        return self._die_ranges(cu, attrs)

    def unit_attrs(self, cu):
        """Every attribute of the unit's own DIE (DW_AT_loclists_base and the like)."""
        r = self.die_full(cu, cu.die_off)
        return r[2] if r is not None else {}

    def file_name(self, cu, index):
        """The name GDB gives line-table file ``index`` of the unit (as DW_AT_decl_file /
        DW_AT_call_file number it): the unit's own name for its primary file."""
        data = self._line_data(cu.stmt_list) if cu.stmt_list is not None else None
        if data is None:
            return None
        try:
            h = self._line_header(data, cu.stmt_list, cu)
        except (IndexError, struct.error, ValueError, _DwarfError, UnicodeError):
            return None
        version = h["version"]
        files, dirs = h["files"], h["dirs"]
        i = index if version >= 5 else index - 1
        if i < 0 or i >= len(files):
            return None
        name, di = files[i]
        dj = di if version >= 5 else di - 1
        d = dirs[dj] if 0 <= dj < len(dirs) else None
        if not _is_abs(name) and d is not None:
            name = d + "/" + name
        prim = cu.name
        if prim is not None:
            cand = prim
            if _is_abs(name) and not _is_abs(prim) and cu.comp_dir:
                cand = _path_join(cu.comp_dir, prim)
            if cand == name:
                return prim
        return name


class DieNode:
    """One DIE of a die_tree: offset, tag, {attribute: (form, value)}, children, parent."""
    __slots__ = ("offset", "tag", "attrs", "cu", "children", "parent")

    def __init__(self, offset, tag, attrs, cu):
        self.offset = offset
        self.tag = tag
        self.attrs = attrs
        self.cu = cu
        self.children = []
        self.parent = None

    def __repr__(self):
        return f"<DieNode 0x{self.offset:x} tag 0x{self.tag:x}>"


class LineTable:
    """Source lines and functions of one module (see the module docstring)."""

    def __init__(self, dwarf=None, name="<lines>"):
        self._dwarf = dwarf
        self.name = name
        self._line_memo = {}

    @classmethod
    def from_module(cls, module):
        """The module's line table; uses its separate debug file when it has no DWARF itself."""
        target = module
        try:
            if not _has_dwarf(module):
                from .debugfile import attach_debug_file
                dbg = attach_debug_file(module)
                if dbg is not None and _has_dwarf(dbg):
                    target = dbg
        except BadFileError:
            raise
        except Exception:
            pass
        dwarf = None
        try:
            if _has_dwarf(target):
                dwarf = _Dwarf(target)
        except Exception:
            dwarf = None
        return cls(dwarf, name=getattr(module, "name", "<module>"))

    @property
    def has_dwarf(self):
        return self._dwarf is not None

    @property
    def dwarf(self):
        """The module's _Dwarf reader (None without DWARF), for swk_plugin.locals."""
        return self._dwarf

    def func_name_of(self, cu, off):
        """GDB's name for the subprogram / inlined subroutine DIE at ``off`` (see function_name)."""
        names = self.__dict__.setdefault("_names", {})
        key = (id(cu), off)
        name = names.get(key, names)
        if name is names:
            try:
                name = self._func_name(cu, off)
            except Exception:
                name = None
            names[key] = name
        return name

    def _cu(self, addr):
        if self._dwarf is None:
            return None
        try:
            return self._dwarf.cu_for(addr)
        except Exception:
            return None

    def lookup(self, addr):
        """(file, line) for the unbiased address as GDB would show it, or None (remembered
        per address: a deep recursion asks for the same few return addresses again and again)."""
        memo = self._line_memo
        hit = memo.get(addr, memo)
        if hit is memo:
            if len(memo) >= 65536:
                memo.clear()
            hit = memo[addr] = self._lookup_line(addr)
        return hit

    def _lookup_line(self, addr):
        cu = self._cu(addr)
        if cu is None:
            return None
        try:
            subfiles = self._dwarf.lines_for(cu)
            best = None
            best_sf = None
            for sf in subfiles:
                pcs = sf.pcs
                i = bisect.bisect_right(pcs, addr)
                if i == 0:
                    continue
                prev = i - 1
                lines = sf.lines
                if lines[prev] == 0:
                    continue
                if best is None or pcs[prev] > best_sf.pcs[best]:
                    stmts = sf.stmts
                    if not stmts[prev]:
                        t = prev
                        while t > 0 and pcs[t - 1] == pcs[t] and lines[t - 1] != 0 and not stmts[t]:
                            t -= 1
                        if stmts[t]:
                            prev = t
                    best = prev
                    best_sf = sf
            if best_sf is None:
                return None
            ln = best_sf.lines[best]
            if ln == 0:
                return None
            return best_sf.symtab or best_sf.name, ln
        except Exception:
            return None

    def is_line_start(self, addr):
        """Whether a line-table row starts exactly at addr (GDB then prints no pc for frame 0)."""
        cu = self._cu(addr)
        if cu is None:
            return False
        try:
            for sf in self._dwarf.lines_for(cu):
                pcs = sf.pcs
                i = bisect.bisect_left(pcs, addr)
                while i < len(pcs) and pcs[i] == addr:
                    if sf.lines[i] != 0 and sf.stmts[i]:
                        return True
                    i += 1
            return False
        except Exception:
            return False

    def has_debug_info(self, addr):
        """True when addr lies in a compilation unit with code (not an assembler-only unit)."""
        cu = self._cu(addr)
        if cu is None:
            return False
        return cu.language != LANG_asm

    def cu_name(self, addr):
        cu = self._cu(addr)
        return cu.name if cu is not None else None

    def function_name(self, addr):
        """The name GDB's bt shows for the (non-inlined) function holding addr, or None."""
        cu = self._cu(addr)
        if cu is None:
            return None
        try:
            best = self._dwarf.function_die_at(cu, addr)
            if best is None:
                return None
            names = self.__dict__.setdefault("_names", {})
            key = (id(cu), best)
            name = names.get(key, names)
            if name is names:
                name = names[key] = self._func_name(cu, best)
            return name
        except Exception:
            return None

    def _func_name(self, cu, off):
        """GDB's name for the function DIE: its linkage name (demangled, without parameters,
        for C++), else DW_AT_name qualified by the enclosing namespaces and classes."""
        cpp = cu.language in _CPP_LANGS
        linkage = self._attr_chain(cu, off, (AT_linkage_name, AT_MIPS_linkage_name))
        if linkage:
            if cpp and linkage.startswith("_Z"):
                dm = demangle(linkage)
                if dm and dm != linkage:
                    # GDB names the symbol by the demangled linkage name without its return
                    # type; bt drops the parameters when its C++ parser can read the name
                    return strip_params(dm) if gdb_can_parse(dm) else drop_return_type(dm)
            return linkage
        name = self._attr_chain(cu, off, (AT_name,))
        if name is None:
            return None
        if cpp:
            if "operator" not in name:      # gdb's parser rejects "operator()<...>" and keeps it
                name = _canon(name)
            prefix = self._prefix(cu, off)
            if prefix:
                name = prefix + "::" + name
            # GDB's symbol is named "qualified(params) [const]"; bt shows it whole when
            # its C++ parser cannot read it (lambdas, "struct {...}", "<>" ...)
            try:
                params = _TypePrinter(self._dwarf).physname_params(cu, off)
            except (IndexError, KeyError, ValueError, RecursionError, _DwarfError, TypeError):
                params = None
            if params is not None and not gdb_can_parse(name + params):
                return name + params
        return name

    def _attr_chain(self, cu, off, wanted):
        """dwarf2_attr: the first of ``wanted`` on the DIE, else on the DIE its
        DW_AT_specification / DW_AT_abstract_origin names, and so on."""
        d = self._dwarf
        cur_cu, cur = cu, off
        for _ in range(16):
            r = d.die_attrs(cur_cu, cur)
            if r is None:
                return None
            tcu, _tag, attrs = r
            for at in wanted:
                if at in attrs:
                    return d.string(tcu, attrs[at][1])
            nxt = attrs.get(AT_specification) or attrs.get(AT_abstract_origin)
            if nxt is None or not isinstance(nxt[1], int):
                return None
            cur_cu, cur = tcu, nxt[1]
        return None

    def _spec_die(self, cu, off):
        """die_specification: the DIE named by DW_AT_specification (looked up through
        DW_AT_abstract_origin links), else by the DIE's DW_AT_abstract_origin; or None."""
        d = self._dwarf
        cur_cu, cur = cu, off
        origin = None
        for _ in range(16):
            r = d.die_attrs(cur_cu, cur)
            if r is None:
                break
            tcu, _tag, attrs = r
            sp = attrs.get(AT_specification)
            if sp is not None and isinstance(sp[1], int):
                return tcu, sp[1]
            ao = attrs.get(AT_abstract_origin)
            if ao is None or not isinstance(ao[1], int):
                break
            if origin is None:
                origin = (tcu, ao[1])
            cur_cu, cur = tcu, ao[1]
        return origin

    def _prefix(self, cu, off):
        """determine_prefix for a C++ DIE (the enclosing scope's qualified name)."""
        d = self._dwarf
        spec = self._spec_die(cu, off)
        if spec is not None:
            cu, off = spec
        d.funcs_for(cu)
        scopes = cu._scopes or {}
        ent = scopes.get(off)
        if ent is None:
            return ""
        return self._scope_name(cu, scopes, ent[2], 0)

    def _scope_name(self, cu, scopes, off, depth):
        """The qualified name of scope DIE ``off`` as a prefix ("" when none)."""
        if off is None or depth > 64:
            return ""
        ent = scopes.get(off)
        if ent is None:
            return ""
        tag, attrs, parent = ent
        d = self._dwarf
        if tag == TAG_namespace:
            nm = d.string(cu, attrs[AT_name][1]) if AT_name in attrs else None
            if nm is None:
                nm = "(anonymous namespace)"
            outer = self._scope_name(cu, scopes, parent, depth + 1)
            return outer + "::" + nm if outer else nm
        if tag in _SCOPE_TAGS:
            nm = _canon(d.string(cu, attrs[AT_name][1])) if AT_name in attrs else None
            if nm is None:
                return ""          # anonymous aggregates give no prefix
            outer = self._scope_name(cu, scopes, parent, depth + 1)
            return outer + "::" + nm if outer else nm
        if tag == TAG_subprogram:
            return ""
        return self._scope_name(cu, scopes, parent, depth + 1)


# --- GDB's C type printer, for computed C++ names -------------------------------------------
TAG_array_type = 0x01
TAG_formal_parameter = 0x05
TAG_pointer_type = 0x0f
TAG_reference_type = 0x10
TAG_subroutine_type = 0x15
TAG_typedef = 0x16
TAG_unspecified_parameters = 0x18
TAG_ptr_to_member_type = 0x1f
TAG_subrange_type = 0x21
TAG_base_type = 0x24
TAG_const_type = 0x26
TAG_volatile_type = 0x35
TAG_restrict_type = 0x37
TAG_unspecified_type = 0x3b
TAG_rvalue_reference_type = 0x42
TAG_atomic_type = 0x47
AT_type = 0x49
AT_artificial = 0x34
AT_upper_bound = 0x2f
AT_count = 0x37
AT_containing_type = 0x1d
AT_signature = 0x69
AT_object_pointer = 0x64


_BASE_CANON = [(re.compile(r"(?<![\w])" + a + r"(?![\w])"), b) for a, b in (
    ("long long unsigned int", "unsigned long long"), ("long long int", "long long"),
    ("long unsigned int", "unsigned long"), ("short unsigned int", "unsigned short"),
    ("long int", "long"), ("short int", "short"), ("__int128 unsigned", "unsigned __int128"))]
_CONST_FIRST = re.compile(r"(?<=[<(,])(\s?)const ([A-Za-z_][\w:]*)(?=[&*,>)])")


def _canon(name):
    """A cheap cp_canonicalize_string: GDB canonicalizes C++ DWARF names it can parse
    ("long int" -> "long", "const int&" -> "int const&")."""
    if not name or not gdb_can_parse(name):
        return name
    if "int" in name:
        for rx, rep in _BASE_CANON:
            name = rx.sub(rep, name)
    if "const " in name:
        name = _CONST_FIRST.sub(r"\1\2 const", name)
    return name


class _T:
    """A type as GDB's printer sees it: a kind, cv flags, and its parts."""
    __slots__ = ("kind", "name", "target", "const", "volatile", "params", "varargs", "dim", "self_name")

    def __init__(self, kind, name=None, target=None):
        self.kind = kind
        self.name = name
        self.target = target
        self.const = self.volatile = False
        self.params = None
        self.varargs = False
        self.dim = None
        self.self_name = None

    def with_cv(self, const=False, volatile=False):
        t = _T(self.kind, self.name, self.target)
        t.params, t.varargs, t.dim, t.self_name = self.params, self.varargs, self.dim, self.self_name
        t.const = self.const or const
        t.volatile = self.volatile or volatile
        return t


_DERIVED = ("ptr", "ref", "rref", "func", "array", "memberptr")


class _TypePrinter:
    def __init__(self, dwarf):
        self.d = dwarf
        self._cache = {}

    # --- DIEs -> _T ------------------------------------------------------------------------
    def type_of(self, cu, attrs, depth=0):
        t = attrs.get(AT_type)
        if t is None:
            return _T("void", "void")
        if not isinstance(t[1], int):
            raise _DwarfError("type reference outside this file")
        return self.resolve(cu, t[1], depth + 1)

    def resolve(self, cu, off, depth=0):
        if depth > 40:
            raise _DwarfError("type nesting too deep")
        key = off
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        r = self.d.die_full(cu, off)
        if r is None:
            raise _DwarfError("bad type reference")
        tcu, tag, attrs, _ch, _end = r
        if AT_signature in attrs:
            raise _DwarfError("type unit")
        d = self.d
        if tag in (TAG_const_type, TAG_volatile_type, TAG_restrict_type, TAG_atomic_type):
            inner = self.type_of(tcu, attrs, depth)
            t = inner.with_cv(const=tag == TAG_const_type, volatile=tag == TAG_volatile_type)
        elif tag == TAG_pointer_type:
            t = _T("ptr", target=self.type_of(tcu, attrs, depth))
        elif tag == TAG_reference_type:
            t = _T("ref", target=self.type_of(tcu, attrs, depth))
        elif tag == TAG_rvalue_reference_type:
            t = _T("rref", target=self.type_of(tcu, attrs, depth))
        elif tag == TAG_subroutine_type:
            t = _T("func", target=self.type_of(tcu, attrs, depth))
            t.params, t.varargs = self.params(tcu, off, depth, skip_artificial=False)
        elif tag == TAG_array_type:
            t = self.type_of(tcu, attrs, depth)
            subs = [c for c in d.children(tcu, off)]
            dims = []
            for c in subs:
                rc = d.die_full(tcu, c)
                if rc is None or rc[1] != TAG_subrange_type:
                    continue
                a = rc[2]
                if AT_count in a and isinstance(a[AT_count][1], int):
                    dims.append(a[AT_count][1])
                elif AT_upper_bound in a and isinstance(a[AT_upper_bound][1], int):
                    dims.append(a[AT_upper_bound][1] + 1)
                else:
                    dims.append(None)
            for n in reversed(dims or [None]):
                a_t = _T("array", target=t)
                a_t.dim = n
                t = a_t
        elif tag == TAG_ptr_to_member_type:
            t = _T("memberptr", target=self.type_of(tcu, attrs, depth))
            ct = attrs.get(AT_containing_type)
            if ct is not None and isinstance(ct[1], int):
                t.self_name = self.name_of(self.resolve(tcu, ct[1], depth + 1))
        elif tag in (TAG_structure_type, TAG_class_type, TAG_union_type, TAG_enumeration_type,
                     TAG_interface_type, TAG_typedef):
            nm = d.string(tcu, attrs[AT_name][1]) if AT_name in attrs else None
            kind = {TAG_structure_type: "struct", TAG_class_type: "class", TAG_union_type: "union",
                    TAG_enumeration_type: "enum", TAG_interface_type: "class",
                    TAG_typedef: "typedef"}[tag]
            if nm is not None:
                pre = self.scope_prefix(tcu, off)
                nm = _canon(nm)
                nm = pre + "::" + nm if pre else nm
            t = _T(kind, nm)
        elif tag in (TAG_base_type, TAG_unspecified_type):
            nm = d.string(tcu, attrs[AT_name][1]) if AT_name in attrs else None
            t = _T("base", _canon(nm) or "void")
        else:
            raise _DwarfError(f"type tag 0x{tag:x}")
        self._cache[key] = t
        return t

    def params(self, cu, off, depth=0, skip_artificial=True):
        """([(type, artificial)], varargs) of a subprogram or subroutine type DIE."""
        d = self.d
        out = []
        varargs = False
        own = d.die_full(cu, off)
        objptr = own[2].get(AT_object_pointer) if own is not None else None
        for c in d.children(cu, off):
            r = d.die_full(cu, c)
            if r is None:
                continue
            tcu, tag, attrs, _ch, _e = r
            if tag == TAG_unspecified_parameters:
                varargs = True
            elif tag == TAG_formal_parameter:
                art = bool(self._chain_attr(tcu, c, AT_artificial))
                ty_attrs = attrs
                if AT_type not in attrs:
                    ty_attrs = self._chain_attrs(tcu, c, AT_type) or attrs
                    tcu2 = ty_attrs[1] if isinstance(ty_attrs, tuple) else tcu
                    ty_attrs = ty_attrs[0] if isinstance(ty_attrs, tuple) else ty_attrs
                else:
                    tcu2 = tcu
                ty = self.type_of(tcu2, ty_attrs, depth)
                if art and not ty.const:
                    # read_subroutine_type: a C++ "this" parameter is made const
                    nm = self._chain_attr(tcu, c, AT_name)
                    nm = d.string(tcu, nm) if nm is not None else None
                    if objptr is not None:
                        is_this = objptr[1] == c
                    else:
                        is_this = nm == "this" or (nm is None and not out)
                    if is_this:
                        ty = ty.with_cv(const=True)
                out.append((ty, art))
        return out, varargs

    def _chain_attrs(self, cu, off, at):
        d = self.d
        cur_cu, cur = cu, off
        for _ in range(8):
            r = d.die_full(cur_cu, cur)
            if r is None:
                return None
            tcu, _tag, attrs, _c, _e = r
            if at in attrs:
                return attrs, tcu
            nxt = attrs.get(AT_abstract_origin) or attrs.get(AT_specification)
            if nxt is None or not isinstance(nxt[1], int):
                return None
            cur_cu, cur = tcu, nxt[1]
        return None

    def _chain_attr(self, cu, off, at):
        r = self._chain_attrs(cu, off, at)
        return r[0][at][1] if r else None

    def scope_prefix(self, cu, off):
        """determine_prefix for a type DIE, from the unit's parent map."""
        d = self.d
        par = d.parents(cu)
        p = par.get(off)
        parts = []
        for _ in range(64):
            if p is None:
                break
            r = d.die_full(cu, p)
            if r is None:
                break
            _u, tag, attrs, _c, _e = r
            if tag == TAG_namespace:
                parts.append(d.string(cu, attrs[AT_name][1]) if AT_name in attrs else "(anonymous namespace)")
            elif tag in _SCOPE_TAGS:
                if AT_name not in attrs:
                    break
                parts.append(_canon(d.string(cu, attrs[AT_name][1])))
            elif tag == TAG_subprogram:
                break
            p = par.get(p)
        return "::".join(reversed(parts))

    # --- printing (c-typeprint.c) -----------------------------------------------------------
    def name_of(self, t):
        return self.print_type(t)

    def base(self, t):
        while t.kind in _DERIVED:
            t = t.target
        cv = ("const " if t.const else "") + ("volatile " if t.volatile else "")
        if t.name:
            return cv + t.name
        if t.kind in ("struct", "class", "union", "enum"):
            return cv + t.kind + " {...}"
        return cv + "void"

    def prefix(self, t, passed_a_ptr):
        k = t.kind
        if k == "ptr":
            s = self.prefix(t.target, True) + "*"
            if t.const:
                s += " const"
            if t.volatile:
                s += " volatile"
            return s
        if k in ("ref", "rref"):
            return self.prefix(t.target, True) + ("&" if k == "ref" else "&&")
        if k == "memberptr":
            if t.target is not None and t.target.kind == "func":      # pointer to method
                return self.prefix(t.target, False) + "(" + (t.self_name or "") + "::*"
            return self.prefix(t.target, False) + (t.self_name or "") + "::*"
        if k in ("func", "array"):
            return self.prefix(t.target, False) + ("(" if passed_a_ptr else "")
        return ""

    def suffix(self, t, passed_a_ptr):
        k = t.kind
        if k == "array":
            return ((")" if passed_a_ptr else "") + "[" + ("" if t.dim is None else str(t.dim)) + "]"
                    + self.suffix(t.target, False))
        if k in ("ptr", "ref", "rref"):
            return self.suffix(t.target, True)
        if k == "memberptr":
            if t.target is not None and t.target.kind == "func":
                return ")" + self.suffix(t.target, False)
            return self.suffix(t.target, False)
        if k == "func":
            return (")" if passed_a_ptr else "") + self.args(t.params, t.varargs, False) + \
                self.suffix(t.target, False)
        return ""

    def print_type(self, t):
        need_space = t.kind in _DERIVED and not t.name
        return self.base(t) + (" " if need_space else "") + self.prefix(t, False) + self.suffix(t, False)

    def args(self, params, varargs, linkage_name):
        out = []
        for ty, art in params or ():
            if art and linkage_name:
                continue
            if linkage_name:
                ty = ty.with_cv()
                ty.const = ty.volatile = False
            out.append(self.print_type(ty))
        if out and varargs:
            out.append("...")
        if not out:
            return "(void)"
        return "(" + ", ".join(out) + ")"

    def physname_params(self, cu, off):
        """The "(params) [const]" GDB appends to a computed C++ function name."""
        params, varargs = self.params(cu, off)
        s = self.args(params, varargs, True)
        if params and params[0][1]:
            this = params[0][0]
            if this.kind == "ptr" and this.target is not None and this.target.const:
                s += " const"
        return s


def _has_dwarf(module):
    try:
        secs = _Sections(module)
    except Exception:
        return False
    return secs.has(".debug_info") and (secs.has(".debug_line") or secs.has(".debug_aranges"))


def module_lines(module):
    """The module's LineTable, built once and kept in its cache; None without DWARF line info."""
    return module.cache.value("lines", lambda: _build_lines(module))


def _build_lines(module):
    try:
        return LineTable.from_module(module)
    except Exception:   # bad DWARF disables only names and lines
        return None
