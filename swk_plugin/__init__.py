"""swk: Dyninst's StackwalkerAPI in Python, for GDB, LLDB and core files.

The core (walker, frames, steppers, ELF/DWARF, architectures) never imports
a debugger; back-ends live in swk_plugin.backends.
"""
__version__ = "0.1.0"
