"""What a Python thread is doing about the GIL, as pystack reports it (issue 28).

Only one thread runs Python at a time: the one holding its interpreter's GIL.  Which one that
is, is the interpreter's own record, read from memory: ``struct _gil_runtime_state``'s
``locked`` and ``last_holder`` (the PyThreadState that took it last), in _PyRuntime.ceval.gil
in 3.10 and 3.11, and where the interpreter's ``ceval.gil`` points from 3.12 on (a
sub-interpreter may have one of its own).  The others are told apart by their native stacks,
as pystack does: a thread inside ``take_gil`` (or PyEval_RestoreThread /
PyEval_AcquireThread, which call it and keep its name where it was inlined) waits for the GIL,
one inside ``drop_gil`` (PyEval_SaveThread) is letting it go, and any other left it for a
native call (``Py_BEGIN_ALLOW_THREADS``: a sleep, a lock, I/O, a C library).
"""
from ..errors import MemoryReadError

HOLDS, WAITING, DROPPING, RELEASED = "holds", "waiting", "dropping", "released"

#: A state as a thread header says it: ``Thread 2 (LWP 123) [Python: holds the GIL]:``.
TEXT = {HOLDS: "holds the GIL", WAITING: "waiting for the GIL", DROPPING: "dropping the GIL",
        RELEASED: "GIL released"}

#: Native functions a thread is in while it waits for the GIL, or gives it up.
_TAKING = frozenset({"take_gil", "PyEval_RestoreThread", "PyEval_AcquireThread"})
_DROPPING = frozenset({"drop_gil", "PyEval_SaveThread"})


def _base(name):
    """A native name without the suffixes GCC gives the parts of a function (take_gil.part.0,
    drop_gil.constprop.0) or its clones."""
    return name.split(".", 1)[0] if name else name


def gil_holder(ps, runtime, tstate):
    """The address of the PyThreadState holding the GIL ``tstate`` runs under, 0 when none
    does, None when it cannot be read (a layout without the GIL, unreadable memory)."""
    layout = runtime.layout
    try:
        if layout.runtime_gil is not None:
            gil = runtime.address + layout.runtime_gil
        elif layout.interp_ceval_gil is not None:
            gil = ps.read_pointer(tstate.interp + layout.interp_ceval_gil)
        else:
            return None
        if not gil:
            return None
        if not ps.read_uint(gil + layout.gil_locked, 4):
            return 0
        return ps.read_pointer(gil + layout.gil_last_holder)
    except MemoryReadError:
        return None


def gil_state(ps, stack, native_names):
    """HOLDS, WAITING, DROPPING or RELEASED for the thread of ``stack`` (a cpython.PyStack with
    its thread state), whose native frames are named ``native_names``; None where the
    interpreter's GIL cannot be read."""
    if stack is None or stack.tstate is None or stack.runtime.layout is None:
        return None
    holder = gil_holder(ps, stack.runtime, stack.tstate)
    if holder is None:
        return None
    if holder == stack.tstate.address:
        return HOLDS
    names = {_base(n) for n in native_names if n}
    if names & _TAKING:
        return WAITING
    if names & _DROPPING:
        return DROPPING
    return RELEASED
