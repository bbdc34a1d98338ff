"""Load swk into GDB:  (gdb) source /path/to/gdb_init.py

Finds the project's virtual environment (.venv beside this file, or $SWK_VENV),
checks that it was made for GDB's own Python, adds its site-packages, and
registers swk's commands.  Anything missing is said in one line.
"""
import os
import sys


def _swk_setup():
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    from swk_plugin.venv import activate
    return activate(here, "GDB")


def _swk_main():
    import gdb
    problem = _swk_setup()
    if problem:
        gdb.write(problem + "\n", gdb.STDERR)
        return
    from swk_plugin.backends.gdb import install
    install()


_swk_main()
