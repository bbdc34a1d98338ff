"""Where the function holding a pc starts, for code without CFI.

Three sources, best first:

* symbols: a sized symbol is the function; a size-0 one runs to the next
  symbol; a ``foo.cold`` part is analysed as part of ``foo``, since its stack
  height is whatever ``foo``'s was when it jumped there;
* neighbouring CFI and symbols: code without CFI sits in the gaps between
  FDE and symbol ranges (an object file built without unwind tables among
  others that have them).  A gap is swept once: its functions start after
  its leading padding, at direct call targets, and after a ret/jmp and its
  padding unless a branch crosses that point;
* a bounded backward search from the pc (JIT code in anonymous memory): an
  aligned address after padding or a ret that opens with a typical prologue.

What code looks like (entries, padding, calls) is the architecture's
(``arch.scan``, ``arch.analysis.MAX_CODE``); this module only decides which
source to trust.  Addresses given to and returned by this module are absolute
(biased); what depends only on a module's file is kept in its cache.
"""
from bisect import bisect_right

from ..unwind.modules import read_code

#: A gap larger than this is not swept (the backward search handles it).
MAX_GAP = 256 * 1024
#: How far back the search for an entry looks.
SEARCH_BACK = 4096

_FUNC_KINDS = ("func", "ifunc", "notype")


class Bounds:
    """A candidate function: [start, end) (end None: unknown, followed up to hi).

    ``sized``: the bounds are the function's own (a sized symbol or an FDE),
    so no other source is worth trying when they do not hold the pc.
    """
    __slots__ = ("start", "end", "hi", "how", "name", "lib", "sized")

    def __init__(self, start, end, how, name=None, lib=None, hi=None, sized=False):
        self.start, self.end, self.how, self.name, self.lib = start, end, how, name, lib
        self.hi = hi
        self.sized = sized

    def __repr__(self):
        end = f"0x{self.end:x}" if self.end is not None else "?"
        return f"<Bounds 0x{self.start:x}-{end} from {self.how}{' ' + self.name if self.name else ''}>"


def reader(ps):
    """read(addr, n) -> the readable prefix of n bytes at addr (b"" when none)."""
    return lambda addr, n: read_code(ps, addr, n)


# --- symbols ----------------------------------------------------------------------------------

def _symbol_list(table):
    """The table's symbols (a table without iteration has none to offer)."""
    try:
        return list(table)
    except TypeError:
        return []


def symbol_starts(module, table):
    """Sorted unbiased starts of the module's code symbols, built once per module."""
    return module.cache.value("analysis-symbol-starts",
                              lambda: sorted({s.value for s in _symbol_list(table) if s.kind in _FUNC_KINDS}))


def exec_span(module, off):
    """The module's executable (lo, hi) holding unbiased ``off``, or None."""
    try:
        spans = module.exec_spans()
    except Exception:
        return None
    for lo, hi in spans:
        if lo <= off < hi:
            return lo, hi
    return None


def symbol_bounds(arch, lib, module, table, pc):
    """Bounds from the symbol covering pc: its own, or its parent's for a .cold part
    (none when the parent is unknown: a cold part has no entry to start from).
    None when no symbol covers pc."""
    base = lib.base
    hit = table.lookup(pc - base)
    if hit is None:
        return None
    sym, off = hit
    if sym.size and off >= sym.size:
        return None
    name = sym.name
    cut = name.find(".cold")
    if cut > 0:
        parents = getattr(table, "by_name", None)
        out = []
        for p in (parents(name[:cut]) if parents else ()):
            if p.size:
                out.append(Bounds(p.value + base, p.value + p.size + base, "symbol", p.name, lib,
                                  sized=True))
        return out
    start = sym.value
    if sym.size:
        end = start + sym.size
    else:
        starts = symbol_starts(module, table)
        i = bisect_right(starts, start)
        end = starts[i] if i < len(starts) else None
        span = exec_span(module, start)
        if span is not None and (end is None or end > span[1]):
            end = span[1]
        if end is not None and end - start > arch.analysis.MAX_CODE:
            end = None                      # followed from the entry, up to MAX_CODE
    return [Bounds(start + base, end + base if end is not None else None, "symbol", name, lib,
                   sized=bool(sym.size))]


def cold_part(lib, table, parent, target):
    """(lo, hi) absolute of the symbol at target if it is ``parent``'s .cold part."""
    hit = table.lookup(target - lib.base)
    if hit is None:
        return None
    sym = hit[0]
    if not sym.size or not sym.name.startswith(parent + ".cold"):
        return None
    return sym.value + lib.base, sym.value + sym.size + lib.base


# --- CFI and symbol neighbours ----------------------------------------------------------------

def module_cover(module, table, cfi_tables):
    """Sorted, merged unbiased [lo, hi) ranges described by FDEs or sized symbols."""
    return module.cache.value("analysis-cover", lambda: _module_cover(table, cfi_tables))


def _module_cover(table, cfi_tables):
    ranges = []
    for t in cfi_tables:
        try:
            for fde in t.iter_fdes():
                if fde.pc_end > fde.pc_begin:
                    ranges.append((fde.pc_begin, fde.pc_end))
        except Exception:
            pass
    if table is not None:
        ranges.extend((s.value, s.value + s.size) for s in _symbol_list(table)
                      if s.size and s.kind in _FUNC_KINDS)
    ranges.sort()
    merged = []
    for lo, hi in ranges:
        if merged and lo <= merged[-1][1]:
            if hi > merged[-1][1]:
                merged[-1][1] = hi
        else:
            merged.append([lo, hi])
    return [m[0] for m in merged], [m[1] for m in merged]


def fde_bounds(lib, cfi_tables, pc):
    """Bounds of the FDE covering pc (a stripped function with CFI), or None."""
    for t in cfi_tables:
        try:
            fde = t.find_fde(pc - lib.base)
        except Exception:
            continue
        if fde is not None:
            return Bounds(fde.pc_begin + lib.base, fde.pc_end + lib.base, "cfi", None, lib, sized=True)
    return None


def gap_of(cover, span, off):
    """The uncovered [lo, hi) around unbiased ``off`` inside ``span``, or None if covered."""
    los, his = cover
    i = bisect_right(los, off) - 1
    if i >= 0 and his[i] > off:
        return None
    lo = his[i] if i >= 0 else span[0]
    hi = los[i + 1] if i + 1 < len(los) else span[1]
    return max(lo, span[0]), min(hi, span[1])


def gap_bounds(ps, lib, module, table, cfi_tables, pc):
    """Bounds of the function holding pc inside a gap between CFI/symbol ranges, or None."""
    off = pc - lib.base
    span = exec_span(module, off)
    if span is None:
        return None
    cover = module_cover(module, table, cfi_tables)
    gap = gap_of(cover, span, off)
    if gap is None or gap[1] - gap[0] > MAX_GAP:
        return None
    memo = module.cache.memo("analysis-gaps")
    starts = memo.get(gap)
    if starts is None:
        code = read_code(ps, gap[0] + lib.base, gap[1] - gap[0])
        starts = memo.put(gap, [s - lib.base for s in ps.arch.scan.split_gap(code, gap[0] + lib.base)]
                          if code else [])
    i = bisect_right(starts, off) - 1
    if i < 0:
        return None
    end = starts[i + 1] if i + 1 < len(starts) else gap[1]
    return Bounds(starts[i] + lib.base, end + lib.base, "gap", None, lib)


# --- backward search -------------------------------------------------------------------------

def search_bounds(ps, pc, exact=True, limit=SEARCH_BACK):
    """Bounds for entries found by searching back from pc (JIT code, unknown gaps)."""
    read = reader(ps)
    code_limit = ps.arch.analysis.MAX_CODE
    lo = max(0, pc - limit)
    hi = None
    region_start = None
    for r in ps.memory_regions() or ():
        if r.start <= pc < r.end:
            lo, hi, region_start = max(lo, r.start), r.end, r.start
            break
    # skip unreadable pages at the low end
    while lo <= pc:
        code = read(lo, pc + 16 - lo)
        if len(code) > pc - lo:
            break
        lo = (lo | 4095) + 1
    else:
        return []
    if region_start is None and lo > max(0, pc - limit):
        region_start = lo                   # the first readable page after an unreadable one
    hi = hi if hi is not None else pc + code_limit
    return [Bounds(a, None, "search", hi=min(hi, a + code_limit))
            for a in ps.arch.scan.search_entries(code, lo, pc, exact, region_start)]
