"""Threads in each GIL state (tests/test_python_threads.py), for CPython 3.10 to 3.13.

    python py_threads.py OUT.json

Four threads, each in one state pystack reports, held there for as long as the test needs:

- ``spinner`` spins in Python: it holds the GIL;
- ``sleeper`` sleeps in time.sleep: in a native call, the GIL released;
- ``locker`` waits on a lock (lock.acquire): in a native call, the GIL released;
- the main thread, once the others are in place, records every thread's stack (its own
  record: qualified name, file, line of each frame, innermost first, and each thread's role
  by its native id), then raises the switch interval so that no thread asks the spinner to
  let go, and sleeps for a moment: its sleep ends with the spinner holding the GIL, and it waits for
  the GIL from then on (in take_gil), at the line it recorded.
"""
import json
import os
import sys
import threading
import time

from py_record import stacks  # noqa: E402 - beside this script

OUT = sys.argv[1]
blocker = threading.Lock()
blocker.acquire()
started = threading.Barrier(4)
roles = {}


def record():
    roles[threading.get_native_id()] = "waiter"
    with open(OUT + ".tmp", "w") as f:
        json.dump({"pid": os.getpid(), "version": list(sys.version_info[:3]),
                   "roles": {str(k): v for k, v in roles.items()},
                   "threads": stacks((stacks.__code__, record.__code__))}, f)
    os.rename(OUT + ".tmp", OUT)


def spin():
    roles[threading.get_native_id()] = "spinner"
    started.wait()
    n = 0
    while True: n += 1         # noqa: E701 - one line: the frame's line whenever it is seen


def sleep():
    roles[threading.get_native_id()] = "sleeper"
    started.wait()
    while True: time.sleep(3600)         # noqa: E701


def lock():
    roles[threading.get_native_id()] = "locker"
    started.wait()
    blocker.acquire()


def at(thread, code):
    """Whether ``thread`` runs ``code`` now (its innermost Python frame)."""
    frame = sys._current_frames().get(thread.ident)
    return frame is not None and frame.f_code is code


def main():
    threads = [threading.Thread(target=f, name=f.__name__, daemon=True) for f in (spin, sleep, lock)]
    for t in threads:
        t.start()
    started.wait()
    # the sleeper and the locker are in their native calls once time.sleep / acquire is their
    # innermost frame's call: their frames are those functions' own (time.sleep and acquire
    # are C: no Python frame of their own)
    while not all(at(t, t._target.__code__) for t in threads):
        time.sleep(0.01)
    time.sleep(0.2)             # the sleeper and the locker inside their calls, the GIL given up
    # one line: recorded where it waits for the GIL.  The switch interval is raised only once
    # the record is written (writing a file lets the GIL go: with it raised, the main thread
    # would wait for the spinner for good before it had written it); from then on no one asks
    # the spinner to drop the GIL
    record(); sys.setswitchinterval(1e6); time.sleep(0.01)  # noqa: E702


main()
