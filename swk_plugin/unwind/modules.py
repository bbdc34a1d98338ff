"""What unwinding asks about an address: its library, module, function and mapping.

Services over a ProcessState (and its LibraryState), shared by the steppers,
the analysis and the back-ends' unwinder hooks.
"""
from ..dwarf.lines import PREFETCH, prefetch_dwarf
from ..elf.symbols import module_symbols
from ..errors import MemoryReadError
from ..jit.modules import jit_module_at


def module_at(ps, addr):
    """(library, module) containing ``addr``, or (None, None).  Code no library holds may be
    JIT code its JIT described with CFI (swk_plugin/jit/modules.py: a GDB-JIT object, a
    jitdump's code): its CFI and symbols are used like any module's."""
    libs = ps.library_state
    if libs is None:
        return None, None
    lib = libs.get_library_at_addr(addr)
    if lib is None:
        return jit_module_at(ps, addr)
    return lib, lib.module


def function_at(ps, addr):
    """(start, end) of the function containing ``addr`` from symbols, absolute; or None.
    ``end`` is None for a symbol without a size."""
    lib, mod = module_at(ps, addr)
    if mod is None:
        return _looked_up(ps, addr) if lib is None else None
    ahead = ps.cache.memo("dwarf-prefetch") if PREFETCH[0] else None
    if ahead is not None and not ahead:
        # a frame is in it, above main so far: its lines, names and arguments will be shown
        prefetch_dwarf(mod)
    table = module_symbols(mod)
    if table is None:
        return None
    hit = table.lookup(addr - lib.base)
    if hit is None:
        return None
    sym, _off = hit
    if ahead is not None and sym.name == "main":
        ahead.put("past main", True)     # GDB's bt stops here: nothing below is read ahead
    start = sym.value + lib.base
    end = start + sym.size if sym.size else None
    return start, end


def _looked_up(ps, addr):
    """(start, None) from the walker's SymbolLookup where no library holds ``addr``: a
    user's lookup (spec: SymbolLookup) or an accessor's get_proc_name knows code swk's
    ELF reader cannot see (JIT code, a target described by callbacks)."""
    walker = getattr(ps, "walker", None)
    lookup = getattr(walker, "symbol_lookup", None)
    if lookup is None:
        return None
    try:
        hit = lookup.lookup_at_addr(addr)
    except Exception:   # a user's lookup failing only loses the function's bounds
        return None
    start = getattr(hit[1], "value", None) if hit else None
    return (start, None) if isinstance(start, int) and start <= addr else None


def is_executable(ps, addr):
    """Whether ``addr`` lies in executable memory as far as swk can tell: the
    back-end's mappings when it knows them, else a module's executable segments, else
    (no mappings, no module: a remote stub such as qemu's) whether a sigreturn
    trampoline's code is there — the kernel's or an emulator's trampoline page belongs
    to no module, and a signal handler returns into it."""
    region = ps.region_at(addr)
    if region is not None:
        return region.executable
    if ps.knows_regions():
        return False
    lib, mod = module_at(ps, addr)
    if mod is not None:
        off = addr - lib.base
        return any(lo <= off < hi for lo, hi in mod.exec_spans())
    if lib is not None:
        return True
    return _is_trampoline(ps, addr) or _looked_up(ps, addr) is not None


def _is_trampoline(ps, addr):
    layout = ps.arch.signal_frame
    if layout is None:
        return False
    size = max(len(code) for code, *_rest in layout.TRAMPOLINES)
    try:
        return layout.is_trampoline_code(ps.read_memory(addr, size))
    except MemoryReadError:
        return False


def read_code(ps, addr, n):
    """Up to ``n`` bytes of code at ``addr``: the readable prefix (b"" when none)."""
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
