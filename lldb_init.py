"""Load swk into LLDB:  (lldb) command script import /path/to/lldb_init.py

LLDB support is planned (issue 6): this file only says so, so that importing it
never fails with a traceback.
"""


def __lldb_init_module(debugger, internal_dict):
    print("swk: LLDB support is not built yet; use GDB (source gdb_init.py) or "
          "`python -m swk_plugin bt --core CORE --exe PROGRAM`.")
