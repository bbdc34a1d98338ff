"""Python frames for swk-bt -py (tests/test_python_frames.py), for CPython 3.10 to 3.13.

    python py_frames.py OUT.json [DEPTH]

The main thread goes down a method recursion (Descender.descend), through a generator
driven by next() (C: builtin_next) and a coroutine driven by send(), then a plain recursion
(leaf) to the bottom.  A second thread calls libc's qsort through ctypes, whose comparator (a
Python callback, called from C) recurses too and blocks on a lock.  At the bottom the main
thread writes every thread's stack as the interpreter itself sees it (sys._current_frames:
each frame's co_qualname, co_filename, f_lineno and the repr() of its simple locals,
innermost first) to OUT.json, and on the
same line stops the process (SIGSTOP), so each frame is still at the line it recorded.
"""
import ctypes
import json
import os
import signal
import sys
import threading

from py_record import stacks  # noqa: E402 - beside this script

OUT = sys.argv[1]
DEPTH = int(sys.argv[2]) if len(sys.argv) > 2 else 20
blocker = threading.Lock()
blocker.acquire()
parked = threading.Event()


def simple(value, depth=0):
    """Whether repr(value) is what a debugger can show without running code: a scalar, or a
    short tuple, list or dict of them, two levels deep."""
    if value is None or isinstance(value, (bool, int, float, bytes)):
        return not isinstance(value, bytes) or len(value) < 50
    if isinstance(value, str):
        return len(value) < 50
    if isinstance(value, (tuple, list)) and depth <= 1:         # swk shows two levels
        return len(value) <= 8 and all(simple(v, depth + 1) for v in value)
    if isinstance(value, dict) and depth <= 1:
        return len(value) <= 8 and all(simple(k, depth + 1) and simple(v, depth + 1) for k, v in value.items())
    return False


def local_reprs(frame):
    """{name: repr} of a function frame's locals that are simple (a module's are its globals)."""
    if not frame.f_code.co_flags & 1:           # CO_OPTIMIZED: a function's frame
        return {}
    return {name: repr(value) for name, value in frame.f_locals.items() if simple(value)}


def record():
    with open(OUT + ".tmp", "w") as f:
        json.dump({"pid": os.getpid(), "version": list(sys.version_info[:3]), "threads": stacks((stacks.__code__, record.__code__), local_reprs)}, f)
    os.rename(OUT + ".tmp", OUT)


def leaf(n):
    label, ratio, parts = "leaf-é", n / 4, (n, b"x\x00", None, True, [n, -2 ** 70])
    names, table = {"a": n, "b": "x"}, {3: 2.5, "gone": b"", None: True, (n, "t"): -n}   # str keys; others
    del table["gone"]                                           # a deleted entry, passed over
    if n == 0:
        record(); os.kill(os.getpid(), signal.SIGSTOP)     # noqa: E702 - one line: recorded where stopped
        return 0
    return leaf(n - 1) + 1


async def coroutine(n):
    return leaf(n)


def run_coroutine(n):
    coro = coroutine(n)
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value


def generator(n):
    yield run_coroutine(n)


def drive(n):
    def depth():
        return n                                # n: a cell of drive, a free variable of depth
    return next(generator(depth()))


class Descender:
    def descend(self, n):
        if n == 0:
            return drive(DEPTH // 2)
        return self.descend(n - 1)


def comparator_bottom(n):
    if n == 0:
        parked.set()
        blocker.acquire()
        return 0
    return comparator_bottom(n - 1)


@ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))
def compare(a, b):
    return comparator_bottom(DEPTH // 4) + (a[0] > b[0]) - (a[0] < b[0])


def sort_in_c():
    libc = ctypes.CDLL(None)
    values = (ctypes.c_int * 2)(2, 1)
    libc.qsort(values, len(values), ctypes.sizeof(ctypes.c_int), compare)


def main():
    worker = threading.Thread(target=sort_in_c, name="sorter", daemon=True)
    worker.start()
    parked.wait()
    # the sorter is at blocker.acquire()'s line from parked.set()'s return on (it releases the
    # interpreter inside acquire, or at the call before it: the line is the same either way)
    while sys._current_frames()[worker.ident].f_code is not comparator_bottom.__code__:
        threading.Event().wait(0.01)
    Descender().descend(DEPTH)


main()
