"""A Python program busy in one place, for `swk profile --py` (tests/test_python_frames.py).

    python py_busy.py OUT.json

Descends a recursion to ``Spinner.work`` and spins there; the first time it gets there it
writes its own stack (qualified name, file, line of each frame, innermost first) to OUT.json:
what a profile's hottest stack must show.
"""
import json
import os
import sys

OUT = sys.argv[1]


def qualname(code):
    return getattr(code, "co_qualname", code.co_name)


def record(frame):
    rows = []
    while frame is not None:
        rows.append([qualname(frame.f_code), frame.f_code.co_filename, frame.f_lineno])
        frame = frame.f_back
    with open(OUT + ".tmp", "w") as f:
        json.dump({"pid": os.getpid(), "stack": rows}, f)
    os.rename(OUT + ".tmp", OUT)


class Spinner:
    def work(self):
        record(sys._getframe())
        total = 0
        while True:
            for i in range(1000):
                total += i * i


def descend(n):
    if n == 0:
        return Spinner().work()
    return descend(n - 1)


descend(8)
