"""swk: Dyninst's StackwalkerAPI in Python, for GDB, LLDB and core files.

The core (walker, frames, steppers, ELF/DWARF, architectures) never imports
a debugger; back-ends live in swk_plugin.backends.
"""
__version__ = "0.1.0"


def walk_self(max_frames=None):
    """The calling thread's native stack, as a walk (spec: Walker::newWalker() / ProcSelf):
    usable from a crash handler, beside faulthandler.  The walker and the ptrace back-end it
    rests on are imported on first call, not with the package (GDB and LLDB load it too)."""
    from .backends.selfproc import walk_self as _walk_self
    return _walk_self(max_frames)
