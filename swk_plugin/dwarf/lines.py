"""Address -> (file, line) and the enclosing function's name from DWARF, the way GDB answers.

Nothing is read until the first lookup.  Then the unit holding an address is
found (aranges.py), its line program decoded once (lineprog.py) and searched
by bisection the way GDB's ``find_pc_sect_line`` does; names come from
names.py.  Malformed DWARF never raises out of a lookup: it yields None.
"""
import bisect
import os

from ..elf.debugfile import attach_debug_file
from ..elf.sections import debug_sections
from ..errors import BadFileError
from .constants import LANG_asm
from .info import DwarfInfo
from .names import FunctionNames

__all__ = ["LineTable", "module_lines", "prefetch_dwarf", "PREFETCH"]

#: Whether a walk's first look at a module starts inflating its compressed DWARF in the
#: background (prefetch_dwarf): what a backtrace printed at once will read (the command
#: line, swk-bt turn it on while they walk); off for other uses (GDB's own bt through
#: swk's unwinder, a program walking its own stacks through the API).
PREFETCH = [False]
_ALLOWED = os.environ.get("SWK_PREFETCH", "1") != "0"
#: What a first walk reads of a module's DWARF, biggest and first needed first.
_PREFETCHED = (".debug_info", ".debug_line", ".debug_loclists", ".debug_abbrev", ".debug_rnglists",
               ".debug_str", ".debug_line_str", ".debug_addr", ".debug_str_offsets", ".debug_loc",
               ".debug_ranges")


class LineTable:
    """Source lines and function names of one module (see the module docstring)."""

    def __init__(self, dwarf=None, name="<lines>"):
        self._dwarf = dwarf
        self.name = name
        self._line_memo = {}
        self._names = FunctionNames(dwarf) if dwarf is not None else None

    @classmethod
    def from_module(cls, module):
        """The module's line table; uses its separate debug file when it has no DWARF itself."""
        target = module
        try:
            if not _has_dwarf(module):
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
                # a separate debug file's split units are in the program's PROGRAM.dwp
                dwarf = DwarfInfo(target, program=getattr(module, "path", None) if target is not module else None)
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
        return self._names.name_of(cu, off) if self._names is not None else None

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

    def source_unit(self, addr):
        """(the CU's offset, its compilation directory) for the unbiased address: which symtab
        a frame's line is from, and where its relative file names start (GDB's $cdir)."""
        cu = self._cu(addr)
        return None if cu is None else (cu.offset, cu.comp_dir)

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
        except Exception:   # malformed DWARF: no name
            return None
        return self._names.name_of(cu, best) if best is not None else None


def _has_dwarf(module):
    try:
        secs = debug_sections(module)
    except Exception:
        return False
    return secs.has(".debug_info") and (secs.has(".debug_line") or secs.has(".debug_aranges"))


def prefetch_dwarf(module):
    """Start inflating the module's compressed DWARF in the background (once per module):
    called when a walk first meets the module, so that the sections its frames' lines,
    names and arguments will read are being inflated while the walk goes on (a third of a
    first walk of libc's frames, otherwise).  Only with a processor to spare: with none, the
    inflating thread would take its time from the walk, and it inflates whole sections where
    the walk may need their first part.  Sections over 64 MiB are left to be inflated as far
    as they are read; SWK_PREFETCH=0 in the environment turns it off."""
    if _ALLOWED and module.cache.peek("dwarf-prefetch") is None and _spare_processor():
        module.cache.value("dwarf-prefetch", lambda: _prefetch(module))


def _spare_processor():
    """Whether the last minute's load (this process's own walk counting for one) leaves
    about a processor this process may run on idle."""
    try:
        cpus = len(os.sched_getaffinity(0))
        return os.getloadavg()[0] + 0.5 < cpus
    except (AttributeError, OSError):
        return False


def _prefetch(module):
    try:
        target = module
        if not _has_dwarf(module):
            target = attach_debug_file(module)
            if target is None or not _has_dwarf(target):
                return False
        debug_sections(target).prefetch(_PREFETCHED)
    except Exception:   # nothing read ahead: the readers read as they need
        return False
    return True


def module_lines(module):
    """The module's LineTable, built once and kept in its cache; None without DWARF line info."""
    return module.cache.value("lines", lambda: _build_lines(module))


def _build_lines(module):
    try:
        return LineTable.from_module(module)
    except Exception:   # bad DWARF disables only names and lines
        return None
