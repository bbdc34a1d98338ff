"""Read a module's ELF symbol table when GDB loads its objfile.

GDB reads its minimal symbols when an objfile is loaded, so its first `bt` pays
nothing for them; swk does the same, so the first swk-bt (and the unwinder's
first frames) do not pay ~20 ms for libc's symbols at the stop. Only the ELF
symbol tables are read here (and swk's walk modules imported once); CFI, DWARF
and line tables stay lazy. Objfiles GDB had loaded before swk was sourced (an
attach) are left to the first walk, which needs only those on its stack.
`set swk prewarm off` turns it off.
"""
import os

import gdb

from ...elf.module import open_module
from ...elf.symbols import module_symbols

ENABLED = [True]
_imported = [False]


def _import_walk_modules():
    if _imported[0]:
        return
    _imported[0] = True
    # What the first swk-bt imports anyway (lines, the locals engine, rendering), imported
    # at the first objfile rather than when gdb_init.py is sourced: GDB starts faster.
    from ... import display, format  # noqa: F401
    from ...dwarf import lines  # noqa: F401
    from ... import locals as _locals  # noqa: F401


def on_new_objfile(event):
    warm(event.new_objfile)


def warm(objfile):
    if not ENABLED[0]:
        return
    try:
        if objfile is None or getattr(objfile, "owner", None) is not None:
            return             # a separate debug file: read through its owner's module
        path = objfile.filename
        if not path or not os.path.isfile(path):
            return             # the vDSO ("system-supplied DSO at ...") and the like
        _import_walk_modules()
        table = module_symbols(open_module(path))
        if table is not None:
            table.load()
    except Exception:          # a bad file is reported when a walk meets it, not at load
        pass


class PrewarmParameter(gdb.Parameter):
    """Whether swk reads a library's ELF symbols when GDB loads it (as GDB reads its own)."""
    set_doc = "Set whether swk reads ELF symbols when GDB loads an objfile."
    show_doc = "Show whether swk reads ELF symbols when GDB loads an objfile."

    def __init__(self):
        super().__init__("swk prewarm", gdb.COMMAND_STACK, gdb.PARAM_BOOLEAN)
        self.value = True

    def get_set_string(self):
        ENABLED[0] = bool(self.value)
        return ""

    def get_show_string(self, svalue):
        return f"swk reads ELF symbols when GDB loads an objfile: {svalue}."


_PARAM = []


def install():
    _PARAM.append(PrewarmParameter())
    gdb.events.new_objfile.connect(on_new_objfile)
    # objfiles loaded before swk was sourced (after an attach: dozens of libraries) are left
    # to the first walk, which reads the symbols of those its stack passes through only
    if ENABLED[0] and any(o.filename for o in gdb.objfiles()):
        _import_walk_modules()
