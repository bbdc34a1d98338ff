"""A native crash under Python frames (tests/test_python_crash.py), for CPython 3.10 to 3.13.

    python py_crash.py OUT.json [DEPTH]

The main thread goes down a recursion (Walker.down), then calls libc's qsort through ctypes;
qsort calls the Python comparator back (a ctypes callback), which recurses (deeper) and then
reads the string at address 0 with ctypes.string_at: C code (strlen, in PyBytes_FromString,
in ctypes' string_at) dereferences NULL and the kernel kills the process with SIGSEGV, its
core dumped.  A second thread waits on a lock meanwhile.  Just before the fault, on the same
line as the fatal call, the main thread writes every thread's stack as the interpreter sees it
(its own record: qualified name, file, line of each frame, innermost first) to OUT.json,
with the one Python function the fatal call still enters (ctypes.string_at) and its lines.
"""
import ctypes
import json
import os
import sys
import threading

from py_record import qualname, stacks  # noqa: E402 - beside this script

OUT = sys.argv[1]
DEPTH = int(sys.argv[2]) if len(sys.argv) > 2 else 6
blocker = threading.Lock()
blocker.acquire()
waiting = threading.Event()


def callee(function):
    """[qualname, filename, [lines]] of the Python function the fatal call enters after the
    record is written: the lines its body's code is on (its def line left out)."""
    code = function.__code__
    lines = sorted({line for _s, _e, line in code.co_lines() if line and line != code.co_firstlineno})
    return [qualname(code), code.co_filename, lines]


def record():
    with open(OUT + ".tmp", "w") as f:
        json.dump({"pid": os.getpid(), "version": list(sys.version_info[:3]),
                   "threads": stacks((stacks.__code__, record.__code__)), "main": threading.get_native_id(),
                   "callee": callee(ctypes.string_at)}, f)
    os.rename(OUT + ".tmp", OUT)


def deeper(n):
    if n == 0:
        record(); return len(ctypes.string_at(0))       # noqa: E702 - one line: recorded where it faults
    return deeper(n - 1)


@ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))
def compare(a, b):
    return deeper(DEPTH // 2) + (a[0] > b[0]) - (a[0] < b[0])


def sort_in_c():
    libc = ctypes.CDLL(None)
    values = (ctypes.c_int * 2)(2, 1)
    libc.qsort(values, len(values), ctypes.sizeof(ctypes.c_int), compare)


class Walker:
    def down(self, n):
        if n == 0:
            return sort_in_c()
        return self.down(n - 1)


def wait():
    waiting.set()
    blocker.acquire()


def main():
    waiter = threading.Thread(target=wait, name="waiter", daemon=True)
    waiter.start()
    waiting.wait()
    while sys._current_frames()[waiter.ident].f_code is not wait.__code__:
        threading.Event().wait(0.01)
    Walker().down(DEPTH)


main()
