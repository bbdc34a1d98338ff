"""ELF symbol tables: address -> symbol, the way GDB's minimal symbols answer it.

A SymbolTable holds two sorted tables, as GDB holds two objfiles:

* the module's own: its .symtab, its .dynsym, and synthetic ``NAME@plt``
  symbols for PLT entries;
* the separate debug file's .symtab, when there is one.

``lookup(addr)`` runs GDB's ``lookup_minimal_symbol_by_pc_section`` over each
table and keeps the better answer (the higher start; the module's on a tie).
Among several symbols at one address GDB takes the last in (address,
linkage-name) order, preferring a global function over an otherwise identical
other symbol; a sized symbol covers [value, value+size); a size-0 symbol covers
everything up to the next symbol of its section.  Symbol tables are parsed with
``struct`` straight from the section bytes (no per-symbol pyelftools objects).

Where a function symbol's value is the address of a function descriptor (Power ELFv1's
.opd: ``Architecture.function_descriptors``), the symbol is also put at the code the
descriptor enters, in the section holding that code, as GDB's minimal symbols of BFD's
synthetic ones are: pcs name their functions, and a function's text symbol compares with
its entry pc; the descriptor's own symbol stays a data symbol (a function pointer's value).
"""
import bisect
import operator
import struct
import threading


from ..arch import UnsupportedArchitecture, from_elf_machine
from ..errors import BadFileError
from . import diskcache
from .debugfile import attach_debug_file
from .demangle import demangle, strip_params

__all__ = ["Symbol", "SymbolTable"]

SHN_UNDEF = 0
SHN_LORESERVE = 0xFF00
SHF_ALLOC = 0x2
SHF_EXECINSTR = 0x4
SHF_TLS = 0x400

_STT = {0: "notype", 1: "object", 2: "func", 10: "ifunc"}
_STB = {0: "local", 1: "global", 2: "weak", 10: "global"}   # 10: STB_GNU_UNIQUE


def _index_demangled(d, syms):
    """{demangled name, and that name without its parameters: [symbols]} of ``syms`` whose
    names demangle (or decode) to something else."""
    for s in syms:
        dm = s.demangled
        if dm != s.name:
            d.setdefault(dm, []).append(s)
            if "(" in dm:
                short = strip_params(dm)
                if short != dm:
                    d.setdefault(short, []).append(s)


def _last_word(name):
    """The identifier a demangled ``name`` ends with ("foo" of "ns::foo(int)" or of "pkg.foo"),
    which its linkage name holds as it is; None where it may not (operators, templates,
    anything else), and then every symbol is decoded."""
    base = strip_params(name) if "(" in name else name
    for sep in ("::", "."):
        base = base.rpartition(sep)[2]
    if base and base.isidentifier() and base.isascii() and not base.startswith("operator"):
        return base
    return None


class Symbol:
    """One ELF symbol: ``name`` is the raw (linkage) name without a version suffix,
    ``value`` the file's own (unbiased) address."""
    __slots__ = ("name", "value", "size", "kind", "binding", "section", "_sec", "_mst", "_demangled")

    def __init__(self, name, value, size, kind, binding, section=None, sec_key=None, mst="text"):
        self.name = name
        self.value = value
        self.size = size
        self.kind = kind
        self.binding = binding
        self.section = section      # name of the section holding it
        self._sec = sec_key         # (section name, section address): identifies the section
        self._mst = mst             # GDB's minimal-symbol type ("text", "file_text", "ifunc", "data", ...)
        self._demangled = None

    @property
    def demangled(self):
        """The name as GDB prints it (demangled C++, GDB's decoding of plain names)."""
        d = self._demangled
        if d is None:
            try:
                d = demangle(self.name)
            except Exception:
                d = self.name
            self._demangled = d
        return d

    @property
    def end(self):
        return self.value + self.size

    def __repr__(self):
        return f"<Symbol {self.name} 0x{self.value:x}+{self.size} {self.kind}/{self.binding}>"


def _section_headers(module):
    """[(name, type, flags, addr, size, offset, link, entsize)] indexed by section number."""
    return module.section_headers()


def _read(module, offset, size):
    if size <= 0:
        return b""
    return module.read_file(offset, size)


def _is_mapping_symbol(name):
    # ARM/AArch64/RISC-V mapping symbols: $a, $d, $t, $x, optionally "$x.<anything>"
    return len(name) >= 2 and name[0] == "$" and name[1] in "adtx" and (len(name) == 2 or name[2] == ".")


def _parse_symtab(module, shdrs, kind_name, strip_versions=True):
    """Symbols of the module's ``kind_name`` section (".symtab" / ".dynsym") as rows (see
    _Table), plus the raw list of (name) by symbol index for relocations when asked."""
    idx = None
    for i, h in enumerate(shdrs):
        if h[0] == kind_name and h[1] in ("SHT_SYMTAB", "SHT_DYNSYM"):
            idx = i
            break
    if idx is None:
        return [], None
    _n, _t, _f, _a, size, offset, link, entsize = shdrs[idx]
    if not (0 <= link < len(shdrs)) or shdrs[link][1] == "SHT_NOBITS" or shdrs[idx][1] == "SHT_NOBITS":
        return [], None
    is64 = module.elfclass == 64
    endian = "<" if module.little_endian else ">"
    if is64:
        fmt = endian + "IBBHQQ"
    else:
        fmt = endian + "IIIBBH"
    std = struct.calcsize(fmt)
    entsize = entsize or std
    if entsize < std or size <= 0:
        return [], None
    try:
        data = _read(module, offset, size)
        strtab = _read(module, shdrs[link][5], shdrs[link][4])
    except BadFileError:
        return [], None
    count = size // entsize
    if entsize == std:
        rows = struct.iter_unpack(fmt, memoryview(data)[:count * std])
    else:
        rows = (struct.unpack_from(fmt, data, i * entsize) for i in range(count))
    out = []
    want_names = kind_name == ".dynsym"      # relocations name PLT slots by dynamic symbol index
    versym = _versym(module, shdrs) if want_names else None
    names_by_index = [] if want_names else None
    nsec = len(shdrs)
    strlen = len(strtab)
    # per section: (name, key, executable) when its symbols can be minimal symbols, else None
    sec_info = []
    for sh in shdrs:
        flags = sh[2]
        sec_info.append((sh[0], (sh[0], sh[3]), bool(flags & SHF_EXECINSTR))
                        if flags & SHF_ALLOC and not flags & SHF_TLS else None)
    # per st_info byte: (kind, binding) when both are ones GDB keeps, else None
    info_tab = [(_STT.get(i & 0xF), _STB.get(i >> 4)) for i in range(256)]
    info_tab = [kb if kb[0] is not None and kb[1] is not None else None for kb in info_tab]
    decode = bytes.decode
    find = strtab.find
    for row in rows:
        if is64:
            st_name, st_info, _other, shndx, value, ssize = row
        else:
            st_name, value, ssize, st_info, _other, shndx = row
        if want_names:
            if 0 < st_name < strlen:
                e = find(b"\0", st_name)
                names_by_index.append(decode(strtab[st_name:e if e >= 0 else strlen], "utf-8", "replace"))
            else:
                names_by_index.append("")
        if shndx == SHN_UNDEF or shndx >= nsec or shndx >= SHN_LORESERVE:
            continue
        sec = sec_info[shndx]
        if sec is None:
            continue
        kb = info_tab[st_info]
        if kb is None or not 0 < st_name < strlen:
            continue
        kind, binding = kb
        executable = sec[2]
        if kind == "notype" and not executable:
            continue
        e = find(b"\0", st_name)
        name = decode(strtab[st_name:e if e >= 0 else strlen], "utf-8", "replace")
        if not name:
            continue
        c = name[0]
        if c == "." or c == "$":
            if binding == "local" and executable and (name.startswith(".L") or name.startswith("$L")):
                continue      # compiler-generated labels (GDB skips them too)
            if _is_mapping_symbol(name):
                continue
        hidden = False
        if executable:
            mst = "file_text" if binding == "local" else ("ifunc" if kind == "ifunc" else "text")
        else:
            mst = "file_data" if binding == "local" else "data"
        if strip_versions:
            at = name.find("@")
            if at > 0:
                # GDB's elf_symtab_read keeps ``name@VER`` / ``name@@VER`` as written and
                # installs the version-less name beside it, without a size (so at an address
                # the written one, sized, is preferred: ppc64's
                # ``00000049.plt_call.abort@@GLIBC_2.17`` stubs)
                out.append((value, name, ssize, sec[1], mst, kind, binding, sec[0], False))
                hidden = not name.startswith("@", at + 1)    # name@VER, not name@@VER
                name, ssize = name[:at], 0
        if versym is not None:
            i = len(names_by_index) - 1
            hidden = hidden or (i < len(versym) and bool(versym[i] & VERSYM_HIDDEN))
        out.append((value, name, ssize, sec[1], mst, kind, binding, sec[0], hidden))
    return out, names_by_index


#: .gnu.version: a dynamic symbol's version is hidden (name@VER, not the default name@@VER).
VERSYM_HIDDEN = 0x8000


def _versym(module, shdrs):
    """The .gnu.version entries (one 16-bit word per dynamic symbol), or None."""
    for name, _t, _f, _a, size, offset, _l, _e in shdrs:
        if name == ".gnu.version" and size > 0:
            try:
                data = _read(module, offset, size)
            except BadFileError:
                return None
            fmt = ("<" if module.little_endian else ">") + "H"
            return [v for (v,) in struct.iter_unpack(fmt, data[:len(data) & ~1])]
    return None


def _architecture(module):
    """The module's Architecture (machine, class and byte order), or None."""
    try:
        return from_elf_machine(module.machine, module.elfclass, module.byteorder)
    except UnsupportedArchitecture:
        return None


def _descriptors(module, shdrs, arch):
    """A function adding to rows of symbols a text symbol at the code each function
    descriptor's first word enters, for the function symbols in the architecture's descriptor
    section (read from the module's own section: a separate debug file's is SHT_NOBITS), or
    None where there are no descriptors."""
    name = arch.function_descriptors if arch is not None else None
    sec = next((h for h in shdrs if h[0] == name and h[1] != "SHT_NOBITS"), None) if name else None
    if sec is None:
        return None
    try:
        data = _read(module, sec[5], sec[4])
    except BadFileError:
        return None
    lo, width, order = sec[3], module.ptr_size, module.byteorder
    code = sorted((h[3], h[3] + h[4], h[0]) for h in shdrs
                  if h[2] & SHF_EXECINSTR and h[2] & SHF_ALLOC and h[4] > 0 and h[1] != "SHT_NOBITS")
    starts = [c[0] for c in code]

    def at_code(rows):
        out = list(rows)
        for row in rows:
            off = row[0] - lo
            if row[7] != name or row[5] not in ("func", "ifunc") or not 0 <= off <= len(data) - width:
                continue
            entry = int.from_bytes(data[off:off + width], order)
            i = bisect.bisect_right(starts, entry) - 1
            if i < 0 or entry >= code[i][1]:
                continue                    # not a descriptor of code here
            sec_name = code[i][2]
            binding, kind = row[6], row[5]
            mst = "file_text" if binding == "local" else ("ifunc" if kind == "ifunc" else "text")
            out.append((entry, row[1], row[2], (sec_name, code[i][0]), mst, kind, binding, sec_name, *row[8:]))
        return out
    return at_code


def _plt_symbols(module, shdrs, dyn_names, arch):
    """GDB-style synthetic "NAME@plt" symbols (size 0) for PLT entries; what an entry looks
    like is the architecture's (``arch.calls``)."""
    if not dyn_names or arch is None:
        return []
    plt = arch.calls
    if plt is None:
        return []
    is64 = module.elfclass == 64
    endian = "<" if module.little_endian else ">"
    # GOT slot -> dynamic symbol name, from the dynamic relocations
    got = {}
    for name, stype, _flags, _addr, size, offset, _link, entsize in shdrs:
        if stype not in ("SHT_RELA", "SHT_REL") or not name.startswith((".rela.", ".rel.")):
            continue
        if name not in (".rela.plt", ".rel.plt", ".rela.dyn", ".rel.dyn"):
            continue
        if is64:
            fmt = endian + ("QQq" if stype == "SHT_RELA" else "QQ")
        else:
            fmt = endian + ("IIi" if stype == "SHT_RELA" else "II")
        std = struct.calcsize(fmt)
        entsize = entsize or std
        if entsize < std or size <= 0:
            continue
        try:
            data = _read(module, offset, size)
        except BadFileError:
            continue
        for i in range(size // entsize):
            row = struct.unpack_from(fmt, data, i * entsize)
            r_offset, r_info = row[0], row[1]
            symi = r_info >> 32 if is64 else r_info >> 8
            rtype = r_info & 0xFFFFFFFF if is64 else r_info & 0xFF
            # the architecture's JUMP_SLOT, and GLOB_DAT for .plt.got entries
            if rtype not in plt.PLT_RELOCATIONS or not (0 < symi < len(dyn_names)):
                continue
            nm = dyn_names[symi]
            if nm:
                at = nm.find("@")
                got.setdefault(r_offset, nm[:at] if at > 0 else nm)
    if not got:
        return []
    got_base = None
    for h in shdrs:
        if h[0] == ".got.plt":
            got_base = h[3]
            break
    if got_base is None:
        for h in shdrs:
            if h[0] == ".got":
                got_base = h[3]
                break
    out = []
    for name, stype, flags, addr, size, offset, _link, entsize in shdrs:
        if name not in (".plt", ".plt.sec", ".plt.got", ".plt.bnd") or stype == "SHT_NOBITS":
            continue
        if not flags & SHF_EXECINSTR or size <= 0:
            continue
        try:
            data = _read(module, offset, size)
        except BadFileError:
            continue
        step = plt.PLT_ENTRY_SIZE
        if name == ".plt.got" and entsize in (8, 16):
            step = entsize
        elif name == ".plt.got":
            step = plt.PLT_GOT_ENTRY_SIZE
        start = plt.PLT0_SIZE if name == ".plt" else 0     # PLT0 has no symbol
        for off in range(start, size - step + 1, step):
            target = plt.plt_entry_slot(data[off:off + step], addr + off, got_base)
            if target is None:
                continue
            nm = got.get(target)
            if nm is None:
                continue
            out.append((addr + off, nm + "@plt", 0, (name, addr), "text", "func", "global", name))
    return out


_VALUE, _NAME, _SIZE, _SEC, _MST = range(5)


def _hidden(row):
    """Whether a row is a hidden symbol version (rows from elsewhere may lack the flag)."""
    return len(row) > 8 and row[8]
_BY_VALUE_NAME = operator.itemgetter(_VALUE, _NAME)


class _Table:
    """One objfile's minimal symbols, sorted by (address, name).  Kept as rows (value, name,
    size, section key, GDB's minimal-symbol type, kind, binding, section name, whether it is a
    hidden symbol version), and made
    Symbols only when one is asked for: a library has thousands, a walk names a few.
    ``kept``: rows an earlier process sorted, with their order by name (the disk cache)."""
    __slots__ = ("rows", "starts", "_objs", "_by_name")

    def __init__(self, rows, kept=None):
        self._objs = {}
        if kept is not None:
            self.rows, self._by_name = rows, kept
            self.starts = [r[0] for r in rows]
            return
        # drop exact duplicates (same address, name and section), as GDB's compact_minimal_symbols
        rows.sort(key=_BY_VALUE_NAME)
        out = []
        prev_v = prev_n = None
        secs = ()
        for r in rows:      # duplicates are neighbours once sorted by (value, name)
            v, n, sec = r[0], r[1], r[3]
            if v == prev_v and n == prev_n:
                if sec in secs:
                    continue
                secs = secs + (sec,)
            else:
                prev_v, prev_n, secs = v, n, (sec,)
            out.append(r)
        self.rows = out
        self.starts = [r[0] for r in out]
        self._by_name = None

    def name_order(self):
        """Row indices sorted by name (rows of one name in address order)."""
        order = self._by_name
        if order is None:
            rows = self.rows
            order = self._by_name = sorted(range(len(rows)), key=lambda i: rows[i][_NAME])
        return order

    def named(self, name):
        """Indices of the rows named ``name``, in address order."""
        rows, order = self.rows, self.name_order()
        key = lambda i: rows[i][_NAME]      # noqa: E731
        lo = bisect.bisect_left(order, name, key=key)
        hi = lo
        while hi < len(order) and rows[order[hi]][_NAME] == name:
            hi += 1
        return order[lo:hi]

    def symbol(self, i):
        """The Symbol of row ``i`` (one object per row)."""
        s = self._objs.get(i)
        if s is None:
            value, name, size, sec_key, mst, kind, binding, section = self.rows[i][:8]
            s = self._objs[i] = Symbol(name, value, size, kind, binding, section, sec_key, mst)
        return s

    @property
    def syms(self):
        return [self.symbol(i) for i in range(len(self.rows))]

    def lookup(self, pc, pc_sec):
        i = self.lookup_index(pc, pc_sec)
        return self.symbol(i) if i is not None else None

    def lookup_index(self, pc, pc_sec):
        rows = self.rows
        hi = bisect.bisect_right(self.starts, pc) - 1
        if hi < 0:
            return None
        sec_lo = pc_sec[1] if pc_sec is not None else None
        best_zero = -1
        while hi >= 0:
            s = rows[hi]
            if pc_sec is not None and s[_SEC] != pc_sec:
                if s[_VALUE] < sec_lo:
                    hi = -1
                    break
                hi -= 1
                continue
            if hi > 0:
                p = rows[hi - 1]
                if (s[_MST] != "text" and p[_MST] == "text" and s[_SIZE] == p[_SIZE]
                        and s[_VALUE] == p[_VALUE] and s[_SEC] == p[_SEC]):
                    hi -= 1
                    continue
            if s[_SIZE] == 0:
                if best_zero == -1:
                    best_zero = hi
                hi -= 1
                continue
            if hi > 0:
                p = rows[hi - 1]
                if pc >= s[_VALUE] + s[_SIZE] and pc < p[_VALUE] + p[_SIZE]:
                    hi -= 1
                    continue
            break
        if best_zero != -1 and (hi < 0 or rows[hi][_SIZE] == 0):
            hi = best_zero
        if hi >= 0 and rows[hi][_SIZE] != 0 and pc >= rows[hi][_VALUE] + rows[hi][_SIZE]:
            if best_zero != -1:
                hi = best_zero
            else:
                return None
        return hi if hi >= 0 else None


class SymbolTable:
    """Address and name lookups over a module's symbols (see the module docstring)."""

    def __init__(self, main_syms=(), debug_syms=(), sections=None, name="<symbols>", descriptors=None,
                 kept=None):
        self.name = name
        #: The section of the architecture's function descriptors (ELFv1's .opd) where the
        #: module has one: a function pointer holds a descriptor's address there.
        self.descriptors = descriptors
        self._main_raw = list(main_syms)
        self._debug_raw = list(debug_syms)
        #: (main order, debug order) by name when the rows are an earlier process's sorted rows
        self._kept = kept
        self._tables = None
        self._lock = threading.Lock()
        self._by_demangled = None
        self._by_word = {}            # identifier -> {demangled name: symbols} of those holding it
        # [(lo, hi, key)] of the module's allocated sections, for GDB's section check
        secs = sorted(sections or [], key=lambda t: (t[0], t[1]))
        self._sec_lo = [t[0] for t in secs]
        self._secs = secs

    # --- construction ----------------------------------------------------------------------
    @classmethod
    def from_module(cls, module):
        try:
            dbg = attach_debug_file(module)
        except Exception:
            dbg = None
        kept = _kept_rows(module, dbg)
        if kept is not None:
            main, debug, sections, descriptors, orders = kept
            return cls(main, debug, sections, name=getattr(module, "name", "<module>"), descriptors=descriptors,
                       kept=orders)
        shdrs = _section_headers(module)
        main, dyn_names = _parse_symtab(module, shdrs, ".symtab")
        dyn, dyn_names = _parse_symtab(module, shdrs, ".dynsym")
        main.extend(dyn)
        arch = _architecture(module)
        try:
            main.extend(_plt_symbols(module, shdrs, dyn_names, arch))
        except (BadFileError, struct.error, ValueError, IndexError):
            pass
        at_code = _descriptors(module, shdrs, arch)
        if at_code is not None:
            main = at_code(main)
        debug = []
        if dbg is not None and dbg is not module:
            try:
                debug, _ = _parse_symtab(dbg, _section_headers(dbg), ".symtab")
            except BadFileError:
                debug = []
            if at_code is not None:
                debug = at_code(debug)
        sections = []
        for name, stype, flags, addr, size, _off, _link, _ent in shdrs:
            if flags & SHF_ALLOC and not flags & SHF_TLS and size > 0:
                sections.append((addr, addr + size, (name, addr)))
        descriptors = arch.function_descriptors if at_code is not None else None
        table = cls(main, debug, sections, name=getattr(module, "name", "<module>"), descriptors=descriptors)
        _keep_rows(module, dbg, table)
        return table

    def load(self):
        """Build the address tables now rather than at the first lookup."""
        self._ensure()

    def _ensure(self):
        t = self._tables
        if t is None:
            with self._lock:
                t = self._tables
                if t is None:
                    kept = self._kept or (None, None)
                    t = [_Table(self._main_raw, kept[0])]
                    if self._debug_raw:
                        t.append(_Table(self._debug_raw, kept[1]))
                    self._main_raw = self._debug_raw = self._kept = None
                    self._tables = t
        return t

    # --- queries --------------------------------------------------------------------------
    def section_of(self, addr):
        """(name, address) key of the allocated section holding addr, or None."""
        i = bisect.bisect_right(self._sec_lo, addr) - 1
        # allocated sections do not overlap; a zero-size or nested one may precede the real one
        for j in (i, i - 1, i - 2):
            if j < 0:
                break
            lo, hi, key = self._secs[j]
            if lo <= addr < hi:
                return key
        return None

    def holds_descriptor(self, addr):
        """Whether the unbiased address lies in the function-descriptor section (GDB's
        convert_from_func_ptr_addr reads the entry there)."""
        if self.descriptors is None:
            return False
        key = self.section_of(addr)
        return key is not None and key[0] == self.descriptors

    def lookup(self, addr):
        """(Symbol, offset) for the unbiased address, or None."""
        try:
            tables = self._ensure()
            if self._secs:
                pc_sec = self.section_of(addr)
                if pc_sec is None:
                    return None
            else:
                pc_sec = None
            best = None
            for t in tables:
                s = t.lookup(addr, pc_sec)
                if s is not None and (best is None or best.value < s.value):
                    best = s
            if best is None:
                return None
            return best, addr - best.value
        except Exception:
            return None

    def by_linkage_name(self, name):
        """Symbols whose linkage name is exactly ``name`` (a minimal-symbol lookup by name:
        no demangled names, so no symbol needs decoding)."""
        hit = [(t, i) for t in self._ensure() for i in t.named(name)]
        # a bare name is its default version, as GDB records minimal symbols: a hidden
        # one (pthread_cond_timedwait@GLIBC_2.2.5) answers only to a name with no other
        shown = [(t, i) for t, i in hit if not _hidden(t.rows[i])]
        return [t.symbol(i) for t, i in (shown or hit)]

    def by_name(self, name):
        """Symbols whose linkage name is ``name`` (else whose demangled name, with or
        without parameters, is ``name``)."""
        hit = self.by_linkage_name(name)
        if hit:
            return hit
        tables = self._ensure()
        if self._by_demangled is None:
            word = _last_word(name)
            if word is not None:
                # a demangled (or Ada-decoded) name keeps its last identifier as it is in the
                # linkage name: only the symbols whose linkage names hold it need decoding,
                # not the whole table (15,000 decodings of a big program, for every miss)
                memo = self._by_word.setdefault(word, {})
                if not memo:
                    for t in tables:
                        _index_demangled(memo, (t.symbol(i) for i, row in enumerate(t.rows) if word in row[_NAME]))
                    memo.setdefault(None, [])
                return list(memo.get(name, ()))
            d = {}
            for t in tables:
                _index_demangled(d, t.syms)
            self._by_demangled = d
        return list(self._by_demangled.get(name, ()))

    def __iter__(self):
        tables = self._ensure()
        for t in tables:
            yield from t.syms

    def __len__(self):
        return sum(len(t.rows) for t in self._ensure())

    def __repr__(self):
        return f"<SymbolTable {self.name}: {len(self)} symbols>"


#: Tables of fewer rows are parsed again rather than kept on disk (a file costs more).
KEEP_ROWS = 2000


def _rows_name(module, dbg):
    """The disk cache's name for the module's parsed rows: this code's version (a CRC of its
    source: rows parsed by another swk are not used), the file's size (a stripped copy has the
    build-id of the program it was stripped from, not its symbols) and the debug file's (one
    installed or removed since changes the rows); None without a build-id."""
    build_id = getattr(module, "build_id", None)
    if not build_id:
        return None, None
    tag = "none" if dbg is None or dbg is module else f"{getattr(dbg, 'file_size', 0):x}"
    return build_id, f"symbols-{diskcache.code_tag(__file__)}-{getattr(module, 'file_size', 0):x}-{tag}"


def _kept_rows(module, dbg):
    """(main rows, debug rows, sections, descriptors, (main order, debug order)) an earlier
    process parsed and sorted, or None."""
    build_id, name = _rows_name(module, dbg)
    blob = diskcache.load_blob(build_id, name) if name else None
    if blob is None:
        return None
    import marshal
    try:
        kept = marshal.loads(blob)
    except (ValueError, EOFError, TypeError):
        return None
    return kept if isinstance(kept, tuple) and len(kept) == 5 and len(kept[4]) == 2 else None


def _keep_rows(module, dbg, table):
    """Keep a big table for the next process as it will use it: its rows sorted (by address,
    and the order by name), which is most of the cost of a first lookup."""
    if len(table._main_raw) + len(table._debug_raw) < KEEP_ROWS or diskcache.cache_dir() is None:
        return
    build_id, name = _rows_name(module, dbg)
    if name:
        import marshal
        tables = table._ensure()
        main, debug = tables[0], (tables[1] if len(tables) > 1 else None)
        rows = (main.rows, debug.rows if debug else [], table._secs, table.descriptors,
                (main.name_order(), debug.name_order() if debug else None))
        try:
            diskcache.store_blob(build_id, name, marshal.dumps(rows))
        except ValueError:
            pass


def module_symbols(module):
    """The module's SymbolTable, built once and kept in its cache; None if it cannot be read."""
    return module.cache.value("symbols", lambda: _build(module))


def _build(module):
    try:
        return SymbolTable.from_module(module)
    except Exception:   # a bad symbol table disables only what depends on it
        return None
