"""Threads whose native stacks are alike and whose Python stacks are not (tests/test_python_group.py).

    python py_pool.py OUT.json

Four workers park on one lock (lock.acquire: the same C calls from the same evaluator code in
each), two through ``wait_a``, two through ``wait_b``: swk-bt -unique groups them as one
without -py and as two with it, and -merge -py branches where they differ.  Once they are
parked the main thread writes every thread's stack as the interpreter sees it (its own
record: qualified name, file, line of each frame, innermost first, and each worker's role by
its native id) and stops the process (SIGSTOP) on the same line.
"""
import json
import os
import signal
import sys
import threading

from py_record import stacks  # noqa: E402 - beside this script

OUT = sys.argv[1]
gate = threading.Lock()
gate.acquire()
roles = {}


def record():
    with open(OUT + ".tmp", "w") as f:
        json.dump({"pid": os.getpid(), "roles": {str(k): v for k, v in roles.items()},
                   "threads": stacks((stacks.__code__, record.__code__))}, f)
    os.rename(OUT + ".tmp", OUT)


def park():
    gate.acquire()


def wait_a():
    roles[threading.get_native_id()] = "a"
    park()


def wait_b():
    roles[threading.get_native_id()] = "b"
    park()


def main():
    workers = [threading.Thread(target=wait_a if i % 2 == 0 else wait_b, daemon=True) for i in range(4)]
    for t in workers:
        t.start()
    while not all((f := sys._current_frames().get(t.ident)) is not None and f.f_code is park.__code__
                   for t in workers):
        threading.Event().wait(0.01)
    threading.Event().wait(0.2)        # each worker inside acquire, not at the call before it
    record(); os.kill(os.getpid(), signal.SIGSTOP)     # noqa: E702 - one line: recorded where stopped


main()
