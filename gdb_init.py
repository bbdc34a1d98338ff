"""Load swk into GDB:  (gdb) source /path/to/gdb_init.py

Finds the project's virtual environment (.venv beside this file, or $SWK_VENV),
checks that it was made for GDB's own Python, adds its site-packages, and
registers swk's commands.  Anything missing is said in one line.

Sourced from another GDB Python script (``gdb.execute("source .../gdb_init.py")``
in a user's gdbinit), ``__file__`` is that script's, not this one's: the
project is found from this file's own code object, which GDB compiles under
this file's path.
"""
import os
import sys


def _swk_here():
    """(this file's directory, None) or (None, the one line saying why it is unknown)."""
    seen = None
    for path in (_swk_here.__code__.co_filename, globals().get("__file__")):
        if path and os.path.basename(path) == "gdb_init.py":
            here = os.path.dirname(os.path.abspath(path))
            if os.path.isdir(os.path.join(here, "swk_plugin")):
                return here, None
            seen = seen or here
    if seen:
        return None, f"swk: {seen} has no swk_plugin/ beside gdb_init.py: source the one in the swk project"
    return None, "swk: cannot tell where gdb_init.py is: source it by its path (source /path/to/swk/gdb_init.py)"


def _swk_setup():
    here, problem = _swk_here()
    if problem:
        return problem
    if here not in sys.path:
        sys.path.insert(0, here)
    from swk_plugin.venv import activate
    return activate(here, "GDB")


def _swk_inflate_ahead():
    """Sourced after an attach, GDB has loaded the process's files: their compressed DWARF
    starts inflating in another thread while the rest of swk is imported (elf/ahead.py)."""
    import gdb
    try:
        paths = [o.filename for o in gdb.objfiles() if o.filename and os.path.isfile(o.filename)]
        if paths:
            from swk_plugin.linux.inflateahead import inflate_files
            inflate_files(paths)
    except Exception:   # only ever a head start: the walk reads what it needs itself
        pass


def _swk_main():
    import gdb
    try:
        here, problem = _swk_here()
        if problem is None and here not in sys.path:
            sys.path.insert(0, here)
            _swk_inflate_ahead()
        problem = problem or _swk_setup()
        if problem is None:
            from swk_plugin.backends.gdb import install
            install()
    except Exception as exc:  # never a traceback while loading
        problem = f"swk: could not load into GDB: {exc.__class__.__name__}: {exc}"
    if problem:
        gdb.write(problem + "\n", gdb.STDERR)


_swk_main()
