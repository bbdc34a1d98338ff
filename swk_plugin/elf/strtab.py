"""Whether a module may define a name, without reading its whole symbol table.

Some questions ask one name of each library in turn: where GDB's JIT interface is
(``__jit_debug_descriptor``), which library defines a call site's callee named by linkage name
(GDB's lookup_minimal_symbol over its objfiles).  Building a library's SymbolTable reads all of
its thousands of symbols (libc with its debug file: 11,000, 40 ms); a module none of whose string
tables (.dynstr, .strtab, its debug file's .strtab) holds the name cannot define it, and a
substring search of them is a few microseconds.
"""
from ..errors import BadFileError
from .debugfile import attach_debug_file


def _string_tables(module):
    """The bytes of every string table naming the module's symbols (its own and its debug
    file's), or None where they cannot be listed.  A name may be the tail of a longer one
    (linkers merge suffixes: __pthread_kill inside __GI___pthread_kill), so a name is looked
    for as itself and a NUL."""
    out = []
    mods = [module]
    try:
        dbg = attach_debug_file(module)
    except Exception:   # an unreadable debug file: the module's own tables
        dbg = None
    if dbg is not None and dbg is not module:
        mods.append(dbg)
    for m in mods:
        for name in (".dynstr", ".strtab"):
            try:
                sec = m.section(name)
                data = sec.data if sec is not None else None
            except BadFileError:
                continue
            except Exception:   # not an ELF file swk reads: unknown
                return None
            if data:
                out.append(bytes(data))
    return out


def may_name(module, name: str) -> bool:
    """False when no string table of ``module`` (or its debug file) holds ``name`` (followed by
    its NUL, or by the @ of a version), so that none of its symbols is called that; True where
    its tables cannot be read (only the whole symbol table can tell)."""
    tables = module.cache.value("string-tables", lambda: _string_tables(module))
    if tables is None:
        return True
    raw = name.encode()
    whole, versioned = raw + b"\0", raw + b"@"      # name@VER: the version-less twin is name
    return any(whole in t or versioned in t for t in tables)
