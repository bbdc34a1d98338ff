"""A name looked up without reading a whole symbol table.

A tail-call search resolves a call site's callee named by linkage name (DW_AT_call_origin to a
declaration) to the first library defining it, as GDB's lookup_minimal_symbol does over its
objfiles — a question of one name to each library, where building a library's SymbolTable reads
all of its thousands of symbols (libc with its debug file: 11,000, 40 ms).  Two cheaper answers:

* ``exported(module, name)``: DT_GNU_HASH (.gnu.hash: Bloom filter, buckets, hash chains over
  .dynsym) finds a defined dynamic function by name in a few reads;
* ``may_name(module, name)``: a module none of whose string tables (.dynstr, .strtab, its debug
  file's .strtab) holds the name, whole or as the tail of another, cannot define it.

Only where neither answers does the caller read the whole table.
"""
import struct

from ..errors import BadFileError
from .debugfile import attach_debug_file

SHN_UNDEF = 0
SHN_LORESERVE = 0xFF00
#: STT_FUNC, STT_GNU_IFUNC
_FUNC_TYPES = (2, 10)
VERSYM_HIDDEN = 0x8000


def gnu_hash(name: bytes) -> int:
    """The GNU hash of a symbol name (dl_new_hash: h = h * 33 + c from 5381, 32 bits)."""
    h = 5381
    for c in name:
        h = (h * 33 + c) & 0xFFFFFFFF
    return h


class GnuHashTable:
    """A module's .gnu.hash with the .dynsym, .dynstr and .gnu.version it indexes."""

    def __init__(self, module):
        shdrs = {h[0]: h for h in module.section_headers()}
        gh, dynsym, dynstr = shdrs.get(".gnu.hash"), shdrs.get(".dynsym"), shdrs.get(".dynstr")
        if gh is None or dynsym is None or dynstr is None or "SHT_NOBITS" in (gh[1], dynsym[1], dynstr[1]):
            raise BadFileError("no .gnu.hash")
        order = "<" if module.little_endian else ">"
        self.is64 = module.elfclass == 64
        data = module.read_file(gh[5], gh[4])
        nbuckets, self.symoffset, bloom_size, _shift = struct.unpack_from(order + "4I", data, 0)
        word = 8 if self.is64 else 4
        start = 16 + bloom_size * word
        self.buckets = struct.unpack_from(f"{order}{nbuckets}I", data, start)
        chain_at = start + 4 * nbuckets
        self.chain = struct.unpack_from(f"{order}{(len(data) - chain_at) // 4}I", data, chain_at)
        self.syms = module.read_file(dynsym[5], dynsym[4])
        self.entsize = dynsym[7] or (24 if self.is64 else 16)
        self.strs = module.read_file(dynstr[5], dynstr[4])
        self.fmt = order + ("IBBHQQ" if self.is64 else "IIIBBH")
        ver = shdrs.get(".gnu.version")
        self.versym = module.read_file(ver[5], ver[4]) if ver is not None and ver[1] != "SHT_NOBITS" else b""
        self.order = order

    def _symbol(self, i):
        row = struct.unpack_from(self.fmt, self.syms, i * self.entsize)
        if self.is64:
            st_name, st_info, _other, shndx, value, _size = row
        else:
            st_name, value, _size, st_info, _other, shndx = row
        return st_name, st_info, shndx, value

    def _name_is(self, st_name, name):
        return self.strs.startswith(name, st_name) and self.strs[st_name + len(name):st_name + len(name) + 1] == b"\0"

    def _hidden(self, i):
        v = self.versym[2 * i:2 * i + 2]
        return len(v) == 2 and bool(int.from_bytes(v, "little" if self.order == "<" else "big") & VERSYM_HIDDEN)

    def function(self, name: bytes):
        """The value of the defined, not hidden dynamic function ``name``, or None."""
        if not self.buckets:
            return None
        h = gnu_hash(name)
        i = self.buckets[h % len(self.buckets)]
        if i < self.symoffset:
            return None
        while 0 <= i - self.symoffset < len(self.chain):
            ch = self.chain[i - self.symoffset]
            if (ch | 1) == (h | 1):
                st_name, st_info, shndx, value = self._symbol(i)
                if self._name_is(st_name, name) and shndx != SHN_UNDEF and shndx < SHN_LORESERVE \
                        and st_info & 0xF in _FUNC_TYPES and not self._hidden(i):
                    return value
            if ch & 1:
                return None
            i += 1
        return None


def _table(module):
    try:
        return GnuHashTable(module)
    except (BadFileError, struct.error, ValueError, IndexError):
        return None


def exported(module, name: str):
    """The value of the dynamic function ``name`` ``module`` defines (its .gnu.hash), else None —
    None too where it has no .gnu.hash: then ask may_name and the whole table."""
    table = module.cache.value("gnu-hash", lambda: _table(module))
    return table.function(name.encode()) if table is not None else None


def _string_tables(module):
    """The bytes of every string table naming the module's symbols (its own and its debug
    file's).  A name may be the tail of a longer one (linkers merge suffixes: __pthread_kill
    inside __GI___pthread_kill), so a name is looked for as itself and a NUL."""
    out = []
    mods = [module]
    try:
        dbg = attach_debug_file(module)
    except Exception:   # an unreadable debug file: the module's own tables
        dbg = None
    if dbg is not None and dbg is not module:
        mods.append(dbg)
    for m in mods:
        try:
            for h in m.section_headers():
                if h[0] in (".dynstr", ".strtab") and h[1] != "SHT_NOBITS" and h[4] > 0:
                    out.append(m.read_file(h[5], h[4]))
        except BadFileError:
            continue
    return out


def may_name(module, name: str) -> bool:
    """False when no string table of ``module`` (or its debug file) holds ``name`` (followed by
    its NUL, or by the @ of a version), so that none of its symbols is called that."""
    tables = module.cache.value("string-tables", lambda: _string_tables(module))
    if not tables:
        return True         # nothing read: only the whole table can tell
    raw = name.encode()
    whole, versioned = raw + b"\0", raw + b"@"      # name@VER: the version-less twin is name
    return any(whole in t or versioned in t for t in tables)
