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

Addresses given to and returned by this module are absolute (biased).
"""
from bisect import bisect_right

from ..errors import MemoryReadError
from . import x86_64 as x86

#: A gap larger than this is not swept (the backward search handles it).
MAX_GAP = 256 * 1024
#: How far back the search for an entry looks, and how many entries it tries.
SEARCH_BACK = 4096
MAX_SEARCH_CANDIDATES = 8

_PROLOGUE_STARTS = (
    b"\x55", b"\x53", b"\x41\x54", b"\x41\x55", b"\x41\x56", b"\x41\x57",   # push rbp/rbx/r12-r15
    b"\x48\x83\xec", b"\x48\x81\xec",                                     # sub $imm,%rsp
    b"\x48\x89\xe5",                                                      # mov %rsp,%rbp
)
_ENDBR64 = b"\xf3\x0f\x1e\xfa"
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
    def read(addr, n):
        try:
            return ps.read_memory(addr, n)
        except MemoryReadError:
            pass
        out = b""
        while n > 0:
            step = min(n, 4096 - (addr & 4095))
            try:
                out += ps.read_memory(addr, step)
            except MemoryReadError:
                return out
            addr += step
            n -= step
        return out
    return read


# --- symbols ----------------------------------------------------------------------------------

def _symbol_list(table):
    """The table's symbols (a table without iteration has none to offer)."""
    try:
        return list(table)
    except TypeError:
        return []


def symbol_starts(module, table):
    """Sorted unbiased starts of the module's code symbols, built once per module."""
    starts = getattr(module, "_swk_an_starts", None)
    if starts is None:
        starts = sorted({s.value for s in _symbol_list(table) if s.kind in _FUNC_KINDS})
        module._swk_an_starts = starts
    return starts


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


def symbol_bounds(lib, module, table, pc):
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
        if end is not None and end - start > x86.MAX_CODE:
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
    cover = getattr(module, "_swk_an_cover", None)
    if cover is not None:
        return cover
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
    cover = ([m[0] for m in merged], [m[1] for m in merged])
    module._swk_an_cover = cover
    return cover


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


def split_gap(code, lo):
    """Function starts in the CFI-less code ``code`` found at ``lo``, sorted.

    The first non-padding instruction starts one; so does every direct call
    target.  The instruction after a ret/jmp/ud2 (and its padding) starts
    one unless a branch between other code crosses that point: compilers
    align jump targets after a ret too, but only their own code jumps there.
    """
    md = x86.decoder()
    insns = []
    pos = 0
    n = len(code)
    while pos < n:
        got = False
        for a, size, mn, ops in md.disasm_lite(code[pos:], lo + pos):
            insns.append((a, size, mn, ops))
            pos = a + size - lo
            got = True
        if pos < n:
            insns.append((lo + pos, 1, "(bad)", ""))
            pos += 1
        elif not got:
            break
    hi = lo + n
    strong, weak, edges = set(), set(), []
    boundaries = set()
    first = True
    after_stop = False
    for a, size, mn, ops in insns:
        boundaries.add(a)
        if x86.is_padding(mn, ops) or mn == "(bad)":
            continue
        if first:
            strong.add(a)
            first = False
        elif after_stop:
            weak.add(a)
        after_stop = False
        _e, _x, _y, flow, tgt = x86.classify_memo(mn, ops)
        if flow == x86.CALL:
            if tgt is not None and lo <= tgt < hi:
                strong.add(tgt)
        elif flow in (x86.JUMP, x86.COND):
            if tgt is not None and lo <= tgt < hi:
                edges.append((a, tgt))
            after_stop = flow == x86.JUMP
        elif flow in (x86.STOP, x86.IJUMP):
            after_stop = True
    strong &= boundaries
    points = sorted(strong | weak)
    inner = set()
    for s, t in edges:
        if t in strong:
            continue                        # a tail call into a known entry
        a, b = (s, t) if s < t else (t, s)
        i = bisect_right(points, a)
        while i < len(points) and points[i] <= b:
            if points[i] in weak:
                inner.add(points[i])
            i += 1
    return [p for p in points if p not in inner]


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
    cache = getattr(module, "_swk_an_gaps", None)
    if cache is None:
        cache = module._swk_an_gaps = {}
    starts = cache.get(gap)
    if starts is None:
        code = reader(ps)(gap[0] + lib.base, gap[1] - gap[0])
        starts = cache[gap] = [s - lib.base for s in split_gap(code, gap[0] + lib.base)] if code else []
    i = bisect_right(starts, off) - 1
    if i < 0:
        return None
    end = starts[i + 1] if i + 1 < len(starts) else gap[1]
    return Bounds(starts[i] + lib.base, end + lib.base, "gap", None, lib)


# --- backward search -------------------------------------------------------------------------

def _looks_like_entry(code, i):
    if code.startswith(_ENDBR64, i):
        i += 4
    return any(code.startswith(p, i) for p in _PROLOGUE_STARTS)


def _ends_code(code, i):
    """Whether an instruction ending exactly at offset i is padding or ends a path."""
    md = x86.decoder()
    for k in range(1, min(15, i) + 1):
        for _a, size, mn, ops in md.disasm_lite(code[i - k:i], 0, 1):
            if size == k:
                m = mn.rpartition(" ")[2]
                if x86.is_padding(mn, ops) or m in x86.STOPS or m == "jmp":
                    return True
    return False


def _reaches(code, i, target, exact):
    """Whether linear decoding from offset i lands on offset target (exact) or on
    an instruction holding it."""
    md = x86.decoder()
    pos = i
    while pos <= target:
        got = False
        for _a, size, _mn, _ops in md.disasm_lite(code[pos:target + 16], pos):
            if pos == target or (not exact and pos + size > target):
                return True
            pos += size
            got = True
            if pos > target:
                break
        if not got:
            return False
    return False


def search_entries(code, lo, pc, exact=True, region_start=None):
    """Likely entries at or before pc in ``code`` (the bytes at lo..), nearest first."""
    t = pc - lo
    out = []
    for i in range(t - (lo + t) % 16, -1, -16):
        if not _looks_like_entry(code, i):
            continue
        if (i == 0 and lo == region_start) or (i > 0 and _ends_code(code, i)):
            if _reaches(code, i, t, exact):
                out.append(lo + i)
                if len(out) >= MAX_SEARCH_CANDIDATES:
                    break
    if region_start == lo and (not out or out[-1] != lo) and len(out) < MAX_SEARCH_CANDIDATES \
            and _reaches(code, 0, t, exact):
        out.append(lo)                      # the mapping's first byte starts code
    return out


def search_bounds(ps, pc, exact=True, limit=SEARCH_BACK):
    """Bounds for entries found by searching back from pc (JIT code, unknown gaps)."""
    read = reader(ps)
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
    hi = hi if hi is not None else pc + x86.MAX_CODE
    return [Bounds(a, None, "search", hi=min(hi, a + x86.MAX_CODE))
            for a in search_entries(code, lo, pc, exact, region_start)]
