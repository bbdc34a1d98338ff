"""An ELF symbol table section (.symtab, .dynsym) read as columns, its entries decoded one
at a time into the rows GDB's minimal symbols would make of them (elf/symbols.py).

A section is read as five columns (st_name, st_info, st_shndx, st_value, st_size) straight from
its bytes: strided views where the file's byte order is this machine's, else entry by entry.
An entry becomes rows only when asked for: a walk names a few pcs of a library whose tables
hold thousands of symbols, and decoding every one of them (libc's debug file: 10,000) was most
of a first walk's time in GDB.
"""
import bisect
import struct
import sys

from ..errors import BadFileError

__all__ = ["SymtabEntries", "symtab_entries", "section_headers", "read_bytes"]

SHN_UNDEF = 0
SHN_LORESERVE = 0xFF00
SHF_ALLOC = 0x2
SHF_EXECINSTR = 0x4
SHF_TLS = 0x400

_STT = {0: "notype", 1: "object", 2: "func", 10: "ifunc"}
_STB = {0: "local", 1: "global", 2: "weak", 10: "global"}   # 10: STB_GNU_UNIQUE


def section_headers(module):
    """[(name, type, flags, addr, size, offset, link, entsize)] indexed by section number."""
    return module.section_headers()


def read_bytes(module, offset, size):
    if size <= 0:
        return b""
    return module.read_file(offset, size)


def _is_mapping_symbol(name):
    # ARM/AArch64/RISC-V mapping symbols: $a, $d, $t, $x, optionally "$x.<anything>"
    return len(name) >= 2 and name[0] == "$" and name[1] in "adtx" and (len(name) == 2 or name[2] == ".")


#: per st_info byte: (kind, binding) when both are ones GDB keeps, else None
_INFO = [(_STT.get(i & 0xF), _STB.get(i >> 4)) for i in range(256)]
_INFO = [kb if kb[0] is not None and kb[1] is not None else None for kb in _INFO]


class SymtabEntries:
    """One symbol section's entries: its columns, and the rows of those entries asked for."""
    __slots__ = ("strtab", "names", "infos", "shndx", "values", "sizes", "versym", "sec_info",
                 "_rows", "_by_offset", "_asked")

    def __init__(self, strtab, columns, versym, sec_info):
        self.strtab = strtab
        self.names, self.infos, self.shndx, self.values, self.sizes = columns
        self.versym = versym
        self.sec_info = sec_info
        self._rows = {}
        self._by_offset = None
        self._asked = 0

    def __len__(self):
        return len(self.values)

    def string(self, off):
        """The name at string-table offset ``off`` ("" outside the table)."""
        strtab = self.strtab
        if not 0 < off < len(strtab):
            return ""
        e = strtab.find(b"\0", off)
        return strtab[off:e if e >= 0 else len(strtab)].decode("utf-8", "replace")

    def rows(self, i):
        """Entry ``i``'s rows: none for a symbol GDB's minimal symbols leave out, two for a
        ``name@VER`` (as written, and the version-less name without a size)."""
        got = self._rows.get(i)
        if got is None:
            got = self._rows[i] = self._decode(i)
        return got

    def _decode(self, i):
        shndx = self.shndx[i]
        if shndx == SHN_UNDEF or shndx >= SHN_LORESERVE or shndx >= len(self.sec_info):
            return ()
        sec = self.sec_info[shndx]
        kb = _INFO[self.infos[i]]
        st_name = self.names[i]
        if sec is None or kb is None or not 0 < st_name < len(self.strtab):
            return ()
        kind, binding = kb
        executable = sec[2]
        name = self.string(st_name)
        if not name:
            return ()
        c = name[0]
        if c == "." or c == "$":
            if binding == "local" and executable and (name.startswith(".L") or name.startswith("$L")):
                return ()     # compiler-generated labels (GDB skips them too)
            if _is_mapping_symbol(name):
                return ()
        value, ssize = self.values[i], self.sizes[i]
        if executable:
            mst = "file_text" if binding == "local" else ("ifunc" if kind == "ifunc" else "text")
        else:
            mst = "file_data" if binding == "local" else "data"
        out = ()
        hidden = False
        at = name.find("@")
        if at > 0:
            # GDB's elf_symtab_read keeps ``name@VER`` / ``name@@VER`` as written and installs
            # the version-less name beside it, without a size (so at an address the written
            # one, sized, is preferred: ppc64's ``00000049.plt_call.abort@@GLIBC_2.17`` stubs)
            out = ((value, name, ssize, sec[1], mst, kind, binding, sec[0], False),)
            hidden = not name.startswith("@", at + 1)    # name@VER, not name@@VER
            name, ssize = name[:at], 0
        versym = self.versym
        if versym is not None:
            hidden = hidden or (i < len(versym) and bool(versym[i] & VERSYM_HIDDEN))
        return out + ((value, name, ssize, sec[1], mst, kind, binding, sec[0], hidden),)

    def named(self, name):
        """Indices of the entries whose rows may be named ``name`` (found through the string
        table: an entry's st_name is the offset of its name, or of a name ending with it)."""
        try:
            want = name.encode("utf-8")
        except UnicodeError:
            return range(len(self))
        if not want:
            return ()
        strtab, offs = self.strtab, []
        n = len(want)
        pos = strtab.find(want, 1)
        while pos > 0:
            nxt = strtab[pos + n:pos + n + 1]
            if nxt == b"\0" or nxt == b"@" or not nxt:
                offs.append(pos)
            pos = strtab.find(want, pos + 1)
        if not offs:
            return ()
        self._asked += 1
        if self._by_offset is None and self._asked <= 8:
            hits, names = [], self.names
            for off in offs:      # a few names asked: a scan of the column for each is cheaper
                i = -1
                try:
                    while True:
                        i = names.index(off, i + 1)
                        hits.append(i)
                except ValueError:
                    pass
            return sorted(hits)
        return sorted(i for off in offs for i in self._between(off, off))

    def containing(self, word):
        """Indices of the entries whose names may contain ``word`` (from each place the string
        table holds it: the entries whose names start in the same string, at or before it)."""
        try:
            want = word.encode("utf-8")
        except UnicodeError:
            return range(len(self))
        strtab, hits = self.strtab, set()
        pos = strtab.find(want, 1) if want else -1
        while pos > 0:
            hits.update(self._between(strtab.rfind(b"\0", 0, pos) + 1, pos))
            pos = strtab.find(want, pos + 1)
        return sorted(hits)

    def _between(self, lo, hi):
        """The entries whose st_name lies in [lo, hi]."""
        index = self._by_offset
        if index is None:            # entries in st_name order, once
            names = self.names
            order = sorted(range(len(names)), key=names.__getitem__)
            index = self._by_offset = ([names[i] for i in order], order)
        offs, order = index
        return order[bisect.bisect_left(offs, lo):bisect.bisect_right(offs, hi)]


def _columns(data, count, entsize, is64, little):
    """(st_name, st_info, st_shndx, st_value, st_size) columns of ``count`` entries, as lists
    (bytes for st_info): straight from the bytes with strided views where the file's byte order
    is this machine's and its entries the standard size, else unpacked entry by entry."""
    endian = "<" if little else ">"
    fmt = endian + ("IBBHQQ" if is64 else "IIIBBH")
    std = struct.calcsize(fmt)
    data = memoryview(data)[:count * entsize]
    if entsize == std and little == (sys.byteorder == "little"):
        if is64:          # st_name I, st_info B, st_other B, st_shndx H, st_value Q, st_size Q
            q, w, h = data.cast("Q"), data.cast("I"), data.cast("H")
            return (w[0::6].tolist(), bytes(data[4::24]), h[3::12].tolist(), q[1::3].tolist(),
                    q[2::3].tolist())
        w, h = data.cast("I"), data.cast("H")     # st_name, st_value, st_size I; info B; other B; shndx H
        return w[0::4].tolist(), bytes(data[12::16]), h[7::8].tolist(), w[1::4].tolist(), w[2::4].tolist()
    rows = (struct.unpack_from(fmt, data, i * entsize) for i in range(count))
    cols = list(zip(*rows)) or [(), (), (), (), (), ()]
    if is64:
        names, infos, _other, shndx, values, sizes = cols
    else:
        names, values, sizes, infos, _other, shndx = cols
    return list(names), bytes(infos), list(shndx), list(values), list(sizes)


def symtab_entries(module, shdrs, kind_name):
    """The module's ``kind_name`` section (".symtab" / ".dynsym") as SymtabEntries, or None."""
    idx = None
    for i, h in enumerate(shdrs):
        if h[0] == kind_name and h[1] in ("SHT_SYMTAB", "SHT_DYNSYM"):
            idx = i
            break
    if idx is None:
        return None
    _n, _t, _f, _a, size, offset, link, entsize = shdrs[idx]
    if not (0 <= link < len(shdrs)) or shdrs[link][1] == "SHT_NOBITS" or shdrs[idx][1] == "SHT_NOBITS":
        return None
    is64 = module.elfclass == 64
    std = 24 if is64 else 16
    entsize = entsize or std
    if entsize < std or size <= 0:
        return None
    try:
        data = read_bytes(module, offset, size)
        strtab = read_bytes(module, shdrs[link][5], shdrs[link][4])
    except BadFileError:
        return None
    count = min(size, len(data)) // entsize
    columns = _columns(data, count, entsize, is64, module.little_endian)
    versym = _versym(module, shdrs) if kind_name == ".dynsym" else None
    # per section: (name, key, executable) when its symbols can be minimal symbols, else None
    sec_info = []
    for sh in shdrs:
        flags = sh[2]
        sec_info.append((sh[0], (sh[0], sh[3]), bool(flags & SHF_EXECINSTR))
                        if flags & SHF_ALLOC and not flags & SHF_TLS else None)
    return SymtabEntries(strtab, columns, versym, sec_info)


#: .gnu.version: a dynamic symbol's version is hidden (name@VER, not the default name@@VER).
VERSYM_HIDDEN = 0x8000


def _versym(module, shdrs):
    """The .gnu.version entries (one 16-bit word per dynamic symbol), or None."""
    for name, _t, _f, _a, size, offset, _l, _e in shdrs:
        if name == ".gnu.version" and size > 0:
            try:
                data = read_bytes(module, offset, size)
            except BadFileError:
                return None
            fmt = ("<" if module.little_endian else ">") + "H"
            return [v for (v,) in struct.iter_unpack(fmt, data[:len(data) & ~1])]
    return None
