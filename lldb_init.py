"""Load swk into LLDB:  (lldb) command script import /path/to/lldb_init.py

Finds the project's virtual environment (.venv beside this file, or $SWK_VENV),
checks that it was made for LLDB's own Python (never sys.executable: inside
LLDB that is LLDB, or nothing useful), adds its site-packages, and registers
swk-bt, swk-settings and, on LLDB 22 or newer, swk's frame provider.
Anything missing is said in one line.
"""
import os
import sys


def _swk_setup():
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    from swk_plugin.venv import activate
    return activate(here, "LLDB")


def __lldb_init_module(debugger, internal_dict):
    try:
        problem = _swk_setup()
        if problem is None:
            from swk_plugin.backends.lldb import install
            problem = install(debugger, internal_dict)
    except Exception as exc:  # never a traceback while loading
        problem = f"swk: could not load into LLDB: {exc.__class__.__name__}: {exc}"
    if problem:
        print(problem)
