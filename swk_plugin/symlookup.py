"""SymbolLookup: names for frames (spec: SymbolLookup; the default is SwkSymtab).

The default looks an address up in the ELF symbol tables of the library
that holds it (its .symtab, its separate debug file's, its .dynsym), by
binary search over tables built the first time a module is asked.
"""
from .dwarf.linerows import row_at
from .dwarf.lines import module_lines
from .elf.symbols import module_symbols
from .frame import FrameKind
from .jit.symbols import JitSymbols


class SymbolLookup:
    """Interface: map an address to (name, opaque object)."""

    def __init__(self, walker=None, exec_path=""):
        self.walker = walker
        self.exec_path = exec_path

    def lookup_at_addr(self, addr):
        """(name, object) for ``addr``, or None (spec: lookupAtAddr)."""
        raise NotImplementedError

    def lookup_frame(self, frame):
        """(name, object, offset) for a frame; the offset is from the symbol's start."""
        addr = frame.ra if frame.kind == FrameKind.SIGNAL else frame.lookup_pc
        hit = self.lookup_at_addr(addr)
        if hit is None:
            return None, None, None
        name, obj = hit[0], hit[1]
        off = frame.ra - obj.value if hasattr(obj, "value") and obj.value is not None else None
        return name, obj, off

    def get_walker(self):
        return self.walker

    def get_process_state(self):
        return self.walker.process_state if self.walker else None


class SymbolHit:
    """The opaque object of the default lookup: the symbol, in target addresses."""
    __slots__ = ("symbol", "library", "value", "size")

    def __init__(self, symbol, library):
        self.symbol = symbol
        self.library = library
        self.value = symbol.value + library.base
        self.size = symbol.size

    @property
    def name(self):
        return self.symbol.name

    def __repr__(self):
        return f"<SymbolHit {self.symbol.name} @0x{self.value:x} in {self.library.path}>"


class ElfSymbolLookup(SymbolLookup):
    """Names as GDB's bt shows them: the DWARF function's name where the module
    (or its separate debug file) has one, else the ELF symbol, demangled.
    Answers are remembered per address until the libraries change (LibraryState.cache).
    Code no module holds is named by the JIT sources (``jit``: swk_plugin/jit), asked
    again at each stop."""

    def __init__(self, walker=None, exec_path="", jit=None):
        super().__init__(walker, exec_path)
        self.jit = jit if jit is not None else JitSymbols()

    def lookup_at_addr(self, addr):
        libs = self.walker.process_state.library_state if self.walker else None
        if libs is None:
            return self._jit_lookup(addr)
        libs.ensure_current()          # a rescan that changes the list drops the memo
        memo = libs.cache.memo("names")
        hit = memo.get(addr, memo)
        if hit is memo:
            hit = memo.put(addr, self._lookup(libs, addr))
        if hit is None and libs.get_library_at_addr(addr) is None:
            return self._jit_lookup(addr)
        return hit

    def _jit_lookup(self, addr):
        ps = self.walker.process_state if self.walker else None
        sym = self.jit.lookup(ps, addr) if ps is not None and self.jit is not None else None
        return (sym.name, sym) if sym is not None else None

    def _lookup(self, libs, addr):
        lib = libs.get_library_at_addr(addr)
        if lib is None or lib.module is None:
            return None
        off = addr - lib.base
        table = module_symbols(lib.module)
        hit = table.lookup(off) if table is not None else None
        obj = SymbolHit(hit[0], lib) if hit is not None else None
        name = dwarf_function_name(lib.module, off)
        if name is None and hit is not None:
            name = hit[0].demangled
        if name is None:
            return None
        return name, obj

    def symbol_name_at(self, addr):
        """The ELF symbol's own name at ``addr`` (no DWARF, not demangled), or None: what
        a signal trampoline is called (they are assembly: only symbol tables name them),
        asked without reading a library's debug information."""
        libs = self.walker.process_state.library_state if self.walker else None
        lib = libs.get_library_at_addr(addr) if libs is not None else None
        if lib is None or lib.module is None:
            return None
        table = module_symbols(lib.module)
        hit = table.lookup(addr - lib.base) if table is not None else None
        return hit[0].name if hit is not None else None

    def at_line_start(self, frame):
        """Whether the frame's pc is exactly where a source line begins."""
        return bool(_ask_lines(frame.library, frame.ra, lambda lines, off: lines.is_line_start(off)))

    def source_line(self, frame):
        """(file, line) of the frame's lookup pc, or None."""
        return _ask_lines(frame.library, frame.lookup_pc, lambda lines, off: lines.lookup(off))

    def source_unit(self, frame):
        """(module, CU offset, compilation directory) of the frame's lookup pc, or None: the
        unit a frame's source line is read from (sourcelines.SourceLister)."""
        unit = _ask_lines(frame.library, frame.lookup_pc, lambda lines, off: lines.source_unit(off))
        return None if unit is None else (frame.library.module, *unit)

    def code_line(self, lib, addr):
        """(file, line, column) LLDB gives code at ``addr`` in ``lib`` (a pointer's target: no
        pc - 1), or None without line information."""
        def ask(lines, off):
            fl = lines.lookup(off)
            if fl is None:
                return None
            line, column = _row(lines, off) or (fl[1], 0)
            return fl[0], line, column
        return _ask_lines(lib, addr, ask)

    def source_column(self, frame, line):
        """The column LLDB gives the frame's lookup pc (its line program's row there, every
        row kept: dwarf/linerows.py) where that row is at ``line``, else None."""
        row = _ask_lines(frame.library, frame.lookup_pc, _row)
        return row[1] if row is not None and row[0] == line and row[1] else None


def _ask_lines(lib, addr, ask):
    """``ask(line table, unbiased addr)`` of the library's line table, or None where it has
    none or the DWARF fails (bad DWARF costs only names and lines)."""
    if lib is None or lib.module is None:
        return None
    lines = module_lines(lib.module)
    if lines is None:
        return None
    try:
        return ask(lines, addr - lib.base)
    except Exception:
        return None


def _row(lines, off):
    """(line, column) of LLDB's line-table row at ``off`` (dwarf/linerows.py), or None."""
    cu = lines._cu(off)
    return row_at(lines._dwarf, cu, off) if cu is not None else None

def dwarf_function_name(module, addr):
    """The DWARF subprogram's name at unbiased ``addr`` (qualified like GDB's), or None."""
    lines = module_lines(module)
    if lines is None:
        return None
    try:
        return lines.function_name(addr)
    except Exception:
        return None


#: GDB's find_main_name after the debug info's own answer: minimal symbols that make another
#: language's function the program's main (D's _Dmain, Go's main.main, Pascal's, Fortran's
#: MAIN__: GDB 13's bt goes past a C main in a program that has a MAIN__, as gdb.base/langs').
FOREIGN_MAINS = ("_Dmain", "main.main", "_p__M0_main_program", "pascal_main_program", "MAIN__")


def foreign_main(ps):
    """The address of another language's main in the executable (GDB's find_main_name: a Go
    program's main.main, D's _Dmain, Pascal's), where GDB's inside_main_func looks for it
    instead of C's main; None for a C/C++/Rust program (or a stripped one)."""
    libs = ps.library_state
    aout = libs.get_aout() if libs is not None else None
    if aout is None or aout.module is None:
        return None
    cached = aout.module.cache.value("foreign-main", lambda: _foreign_main(aout.module))
    return None if cached is None else cached + aout.base


def _foreign_main(module):
    syms = module_symbols(module)
    if syms is None:
        return None
    for name in FOREIGN_MAINS:
        hit = [s for s in syms.by_linkage_name(name) if s.value]   # GDB's lookup_minimal_symbol
        if hit:
            return hit[0].value
    return None


def is_main_frame(frame):
    """Whether ``frame`` is in the program's main (where GDB's bt stops with `backtrace
    past-main off`): C's main by name, or the function at another language's main symbol."""
    ps = frame.walker.process_state if frame.walker is not None else None
    other = foreign_main(ps) if ps is not None else None
    if other is None:       # a JIT's own "main" (lli's) is not the program's: no library holds it
        return frame.name == "main" and frame.library is not None
    offset = frame.symbol_offset
    return offset is not None and frame.lookup_pc - offset == other
