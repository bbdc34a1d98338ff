"""What steppers ask about an address: its library, module and function."""


def module_at(walker, addr):
    """(library, module) containing ``addr``, or (None, None)."""
    libs = walker.process_state.library_state
    if libs is None:
        return None, None
    lib = libs.get_library_at_addr(addr)
    if lib is None:
        return None, None
    return lib, lib.module


def function_at(walker, addr):
    """(start, end) of the function containing ``addr`` from symbols, absolute; or None."""
    lib, mod = module_at(walker, addr)
    if mod is None:
        return None
    from ..symlookup import module_symbols
    table = module_symbols(mod)
    if table is None:
        return None
    hit = table.lookup(addr - lib.base)
    if hit is None:
        return None
    sym, _off = hit
    start = sym.value + lib.base
    end = start + sym.size if sym.size else None
    return start, end


def is_executable(walker, addr):
    """Whether ``addr`` lies in executable memory as far as swk can tell: the
    back-end's mappings when it knows them, else a module's executable segments."""
    ps = walker.process_state
    region = ps.region_at(addr)
    if region is not None:
        return region.executable
    if ps.knows_regions():
        return False
    lib, mod = module_at(walker, addr)
    if mod is not None:
        off = addr - lib.base
        return any(lo <= off < hi for lo, hi in mod.exec_spans())
    return lib is not None
