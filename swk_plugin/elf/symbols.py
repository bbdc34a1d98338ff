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
everything up to the next symbol of its section.

Nothing is decoded that a lookup does not reach: a symbol section is read as columns
(elf/symtab.py), its entries sorted by address alone, and an entry's name read
only when a lookup by address walks back to it or its string-table offset holds a name asked
for (libc's debug file has 10,000 symbols; a walk names a few pcs).  So no parsed table is
kept on disk: reading the columns again costs what reading a kept table did.

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
from .debugfile import attach_debug_file
from .demangle import demangle, strip_params
from .symtab import SHF_ALLOC, SHF_EXECINSTR, SHF_TLS, read_bytes, section_headers, symtab_entries

__all__ = ["Symbol", "SymbolTable"]


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
        data = read_bytes(module, sec[5], sec[4])
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


def _plt_symbols(module, shdrs, dyn, arch):
    """GDB-style synthetic "NAME@plt" symbols (size 0) for PLT entries; what an entry looks
    like is the architecture's (``arch.calls``); ``dyn``: the .dynsym's SymtabEntries."""
    if not dyn or arch is None:
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
            data = read_bytes(module, offset, size)
        except BadFileError:
            continue
        for i in range(size // entsize):
            row = struct.unpack_from(fmt, data, i * entsize)
            r_offset, r_info = row[0], row[1]
            symi = r_info >> 32 if is64 else r_info >> 8
            rtype = r_info & 0xFFFFFFFF if is64 else r_info & 0xFF
            # the architecture's JUMP_SLOT, and GLOB_DAT for .plt.got entries
            if rtype not in plt.PLT_RELOCATIONS or not (0 < symi < len(dyn)):
                continue
            nm = dyn.string(dyn.names[symi])
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
            data = read_bytes(module, offset, size)
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
_BY_NAME = operator.itemgetter(_NAME)


def _distinct(rows):
    """Rows sorted by (address, name) without exact duplicates (same address, name and
    section), as GDB's compact_minimal_symbols leaves them."""
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
    return out


class _Rows:
    """Rows made whole elsewhere (PLT entries, code symbols of function descriptors), each an
    entry of one row."""
    __slots__ = ("_rows", "values")

    def __init__(self, rows):
        self._rows = rows
        self.values = [r[0] for r in rows]

    def __len__(self):
        return len(self._rows)

    def rows(self, i):
        return (self._rows[i],)

    def named(self, name):
        return [i for i, r in enumerate(self._rows) if r[_NAME] == name]

    def containing(self, word):
        return [i for i, r in enumerate(self._rows) if word in r[_NAME]]


class _Table:
    """One objfile's minimal symbols.  Its entries (one section's, or rows made elsewhere) are
    sorted by address only; rows (value, name, size, section key, GDB's minimal-symbol type,
    kind, binding, section name, whether it is a hidden symbol version) are made for the
    entries of one address at a time, as a lookup walks back from its pc, and Symbols only
    for the rows asked for.  Among the rows of one address the order is by name, as if the
    whole table were sorted by (address, name)."""
    __slots__ = ("sources", "bases", "values", "order", "_groups", "_objs", "_all")

    def __init__(self, sources):
        self.sources = [src for src in sources if src is not None and len(src)]
        values, bases = [], []
        for src in self.sources:
            bases.append(len(values))
            values += src.values
        self.values, self.bases = values, bases
        # stable: entries of one address stay in the order of their sections
        self.order = sorted(range(len(values)), key=values.__getitem__)
        self._groups = {}
        self._objs = {}
        self._all = None

    def _entry_rows(self, g):
        k = bisect.bisect_right(self.bases, g) - 1
        return self.sources[k].rows(g - self.bases[k])

    def _group(self, p):
        """(first position, rows) of the address of ``order[p]``, the last position holding
        it: the rows sorted by name, without exact duplicates."""
        got = self._groups.get(p)
        if got is None:
            order, values = self.order, self.values
            v = values[order[p]]
            q = p
            while q > 0 and values[order[q - 1]] == v:
                q -= 1
            rows = [r for j in range(q, p + 1) for r in self._entry_rows(order[j])]
            if len(rows) > 1:
                rows.sort(key=_BY_NAME)
                rows = _distinct(rows)
            got = self._groups[p] = (q, rows)
        return got

    def _back(self, p):
        """The rows from the last at position ``p``'s address back to the first of all."""
        while p >= 0:
            q, rows = self._group(p)
            yield from reversed(rows)
            p = q - 1

    def all_rows(self):
        """Every row, sorted by (address, name), without exact duplicates."""
        rows = self._all
        if rows is None:
            rows = [r for src in self.sources for i in range(len(src)) for r in src.rows(i)]
            rows.sort(key=_BY_VALUE_NAME)
            rows = self._all = _distinct(rows)
        return rows

    def named(self, name):
        """The rows named ``name``, in address order."""
        hits = []
        for src, base in zip(self.sources, self.bases):
            for i in src.named(name):
                hits += [(r[_VALUE], base + i, r) for r in src.rows(i) if r[_NAME] == name]
        hits.sort(key=lambda h: h[:2])
        return _distinct([h[2] for h in hits])

    def containing(self, word):
        """The rows whose names contain ``word``, sorted by (address, name)."""
        hits = []
        for src, base in zip(self.sources, self.bases):
            for i in src.containing(word):
                hits += [(r[_VALUE], r[_NAME], base + i, r) for r in src.rows(i) if word in r[_NAME]]
        hits.sort(key=lambda h: h[:3])
        return _distinct([h[3] for h in hits])

    def symbol(self, row):
        """The Symbol of a row (one object per row)."""
        s = self._objs.get(row)
        if s is None:
            value, name, size, sec_key, mst, kind, binding, section = row[:8]
            s = self._objs[row] = Symbol(name, value, size, kind, binding, section, sec_key, mst)
        return s

    @property
    def syms(self):
        return [self.symbol(r) for r in self.all_rows()]

    def lookup(self, pc, pc_sec):
        """GDB's lookup_minimal_symbol_by_pc_section over this table: the Symbol, or None."""
        p = bisect.bisect_right(self.order, pc, key=self.values.__getitem__) - 1
        if p < 0:
            return None
        back = self._back(p)
        seen = []

        def at(j):          # the row j places before the last at or below pc, or None
            while len(seen) <= j:
                r = next(back, None)
                if r is None:
                    return None
                seen.append(r)
            return seen[j]

        sec_lo = pc_sec[1] if pc_sec is not None else None
        best_zero = None
        j = 0
        s = at(0)
        while s is not None:
            if pc_sec is not None and s[_SEC] != pc_sec:
                if s[_VALUE] < sec_lo:
                    s = None
                    break
                j += 1
                s = at(j)
                continue
            p = at(j + 1)
            if (p is not None and s[_MST] != "text" and p[_MST] == "text" and s[_SIZE] == p[_SIZE]
                    and s[_VALUE] == p[_VALUE] and s[_SEC] == p[_SEC]):
                j += 1
                s = p
                continue
            if s[_SIZE] == 0:
                if best_zero is None:
                    best_zero = s
                j += 1
                s = p
                continue
            if p is not None and s[_VALUE] + s[_SIZE] <= pc < p[_VALUE] + p[_SIZE]:
                j += 1
                s = p
                continue
            break
        if best_zero is not None and (s is None or s[_SIZE] == 0):
            s = best_zero
        if s is not None and s[_SIZE] != 0 and pc >= s[_VALUE] + s[_SIZE]:
            if best_zero is None:
                return None
            s = best_zero
        return self.symbol(s) if s is not None else None


class SymbolTable:
    """Address and name lookups over a module's symbols (see the module docstring)."""

    def __init__(self, main=(), debug=(), sections=None, name="<symbols>", descriptors=None):
        self.name = name
        #: The section of the architecture's function descriptors (ELFv1's .opd) where the
        #: module has one: a function pointer holds a descriptor's address there.
        self.descriptors = descriptors
        # each an objfile's sources: SymtabEntries of a symbol section, or _Rows
        self._sources = (list(main), list(debug))
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
        shdrs = section_headers(module)
        symtab = symtab_entries(module, shdrs, ".symtab")
        dyn = symtab_entries(module, shdrs, ".dynsym")
        arch = _architecture(module)
        main = [symtab, dyn]
        try:
            main.append(_Rows(_plt_symbols(module, shdrs, dyn, arch)))
        except (BadFileError, struct.error, ValueError, IndexError):
            pass
        debug = []
        if dbg is not None and dbg is not module:
            try:
                debug = [symtab_entries(dbg, section_headers(dbg), ".symtab")]
            except BadFileError:
                debug = []
        at_code = _descriptors(module, shdrs, arch)
        if at_code is not None:
            # a function descriptor's symbol is also put at its code: every row is needed
            main = [_Rows(at_code(_all_rows(main)))]
            debug = [_Rows(at_code(_all_rows(debug)))]
        sections = []
        for name, stype, flags, addr, size, _off, _link, _ent in shdrs:
            if flags & SHF_ALLOC and not flags & SHF_TLS and size > 0:
                sections.append((addr, addr + size, (name, addr)))
        descriptors = arch.function_descriptors if at_code is not None else None
        return cls(main, debug, sections, name=getattr(module, "name", "<module>"), descriptors=descriptors)

    def load(self):
        """Build the address tables now rather than at the first lookup."""
        self._ensure()

    def _ensure(self):
        t = self._tables
        if t is None:
            with self._lock:
                t = self._tables
                if t is None:
                    main, debug = self._sources
                    t = [_Table(main)]
                    if any(src is not None and len(src) for src in debug):
                        t.append(_Table(debug))
                    self._sources = None
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
        only the entries whose string-table names can be it are decoded)."""
        hit = [(t, r) for t in self._ensure() for r in t.named(name)]
        # a bare name is its default version, as GDB records minimal symbols: a hidden
        # one (pthread_cond_timedwait@GLIBC_2.2.5) answers only to a name with no other
        shown = [(t, r) for t, r in hit if not _hidden(r)]
        return [t.symbol(r) for t, r in (shown or hit)]

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
                        _index_demangled(memo, (t.symbol(r) for r in t.containing(word)))
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
        return sum(len(t.all_rows()) for t in self._ensure())

    def __repr__(self):
        return f"<SymbolTable {self.name}: {len(self)} symbols>"


def _all_rows(sources):
    """Every row of ``sources``, in their order."""
    return [r for src in sources if src is not None for i in range(len(src)) for r in src.rows(i)]


def module_symbols(module):
    """The module's SymbolTable, built once and kept in its cache; None if it cannot be read."""
    return module.cache.value("symbols", lambda: _build(module))


def _build(module):
    try:
        return SymbolTable.from_module(module)
    except Exception:   # a bad symbol table disables only what depends on it
        return None
