"""Helpers shared by the robustness tests of issue 8 that drive real debuggers:
tests/test_target_untouched.py, tests/test_long_session.py and
tests/test_session_robustness.py.

* the programs of tests/corpus/robust_*.c, built through swk_testlib.build;
* LLDB: the run's LLDB (swk_suite.lldb(): $SWK_LLDB, else the first of lldb-22,
  lldb-16, lldb whose Python module works), run in batch mode (``lldb_run``), or
  skipped with the reason (under CI: a failure);
* ``GdbDriver``: GDB driven through a pipe, command by command, so that GDB's
  event loop runs between commands (non-stop mode, threads that exit while
  the test waits) — `gdb -batch -ex ...` does not process target events
  between its commands.
"""
from __future__ import annotations

import functools
import os
import re
import subprocess
import threading
import time
from pathlib import Path


import swk_suite as S
import swk_testlib as T
from hard_cases import NOCFI

LLDB_INIT = T.REPO / "lldb_init.py"


# --------------------------------------------------------------------------
# the programs
# --------------------------------------------------------------------------

def untouched_exe() -> Path:
    """tests/corpus/robust_untouched.c (-O2 -g, 4 threads, a signal handler)."""
    return T.build(["robust_untouched.c"], "robust_untouched", ("-O2", "-g"), ("-pthread",))


#: GDB's stop of robust_untouched: thread 1 in stop_here under the SIGUSR1 handler.
UNTOUCHED_STOP = ["handle SIGUSR1 nostop noprint pass", "break stop_here", "run"]


@functools.lru_cache(maxsize=None)
def untouched_output() -> tuple[str, int]:
    """What robust_untouched prints and its exit status, run without any debugger."""
    p = subprocess.run([str(untouched_exe())], capture_output=True, text=True, timeout=60)
    return p.stdout, p.returncode


def longrun_exe() -> Path:
    """tests/corpus/robust_longrun.c (-O0 -g) linked against librobust_longrun.so (no CFI)."""
    lib = T.build(["robust_longrun_lib.c"], "librobust_longrun.so", (*NOCFI, "-fPIC"),
                  ("-shared", "-Wl,-soname,librobust_longrun.so"))
    return T.build(["robust_longrun.c"], "robust_longrun", ("-O0", "-g"),
                   (str(lib), f"-Wl,-rpath,{lib.parent}"))


def exiter_exe() -> Path:
    """tests/corpus/robust_exiter.c: a thread that exits when the test says so."""
    return T.build(["robust_exiter.c"], "robust_exiter", ("-O0", "-g"), ("-pthread",))


def need_gdb() -> None:
    S.need_tool(T.GDB, "gdb")


def need_tool(name: str) -> str:
    return S.need_tool(name)


# --------------------------------------------------------------------------
# LLDB
# --------------------------------------------------------------------------

def lldb_info() -> tuple[str | None, tuple[int, ...], str | None]:
    """(path, version, why no LLDB can be used or None): swk_suite.lldb(), the first
    candidate whose Python module works."""
    choice = S.lldb()
    return choice.path, choice.version, choice.problem


def need_lldb() -> tuple[str, tuple[int, ...]]:
    return S.need_lldb()


def lldb_has_providers() -> bool:
    """LLDB 22 or newer: swk's frame provider is behind LLDB's own bt."""
    return lldb_info()[1] >= (22,)


def lldb_argv(commands: list[str], crash_commands: list[str] = (), swk: bool = True,
              pre: list[str] = ()) -> list[str]:
    """lldb -b -x: settings, ``pre`` (before swk is imported), lldb_init.py, then the commands.
    In batch mode LLDB stops at the first command that fails; ``crash_commands`` (-k)
    run instead when the process stops on a crash."""
    lldb, _v = need_lldb()
    argv = [lldb, "-b", "-x", "-o", "settings set auto-confirm true",
            "-o", "settings set stop-disassembly-display never",
            "-o", "settings set stop-line-count-before 0", "-o", "settings set stop-line-count-after 0"]
    for c in pre:
        argv += ["-o", c]
    if swk:
        argv += ["-o", f"command script import {LLDB_INIT}"]
    for c in commands:
        argv += ["-o", c]
    for c in crash_commands:
        argv += ["-k", c]
    return argv


def lldb_env() -> dict:
    T.BUILD.mkdir(parents=True, exist_ok=True)
    return {**T._env(), "TMPDIR": str(T.BUILD)}


def lldb_run(commands: list[str], timeout: float = 240, **kw) -> str:
    return T.run_cmd(lldb_argv(commands, **kw), timeout=timeout, env=lldb_env()).stdout


def lldb_stop_untouched(exe: Path) -> list[str]:
    """robust_untouched to its stop in LLDB: stop at the entry to set SIGUSR1's handling
    (LLDB before 15 has no `process handle` without a process), then on to stop_here."""
    return [f"target create {exe}", "breakpoint set -n stop_here", "process launch -s",
            "process handle -s false -n false -p true SIGUSR1", "process continue"]


#: One command run through LLDB's interpreter from Python, its output and error
#: printed between markers: a failing command does not end a batch-mode LLDB.
LLDB_TRY = r'''
import lldb

def swk_try(debugger, command, tag):
    res = lldb.SBCommandReturnObject()
    debugger.GetCommandInterpreter().HandleCommand(command, res)
    print(f"SWK-TRY-BEGIN {tag}")
    out = (res.GetOutput() or "") + (res.GetError() or "")
    print(out.rstrip("\n"))
    print(f"SWK-TRY-END {tag} {'ok' if res.Succeeded() else 'failed'}")
'''


def lldb_try_script() -> Path:
    path = T.BUILD / "robust_lldb_try.py"
    T.BUILD.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != LLDB_TRY:
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(LLDB_TRY)
        os.replace(tmp, path)
    return path


def lldb_try(command: str, tag: str) -> str:
    """An LLDB -o command running ``command`` through swk_try (see LLDB_TRY)."""
    return f"script robust_lldb_try.swk_try(lldb.debugger, {command!r}, {tag!r})"


def tried(output: str, tag: str) -> tuple[list[str], bool]:
    """The lines a swk_try printed for ``tag`` and whether the command succeeded."""
    m = re.search(rf"^SWK-TRY-BEGIN {re.escape(tag)}\n(.*?)^SWK-TRY-END {re.escape(tag)} (ok|failed)$",
                  output, re.S | re.M)
    if not m:
        raise T.OutputError(f"no output of {tag!r} in lldb's:\n{output[-4000:]}")
    return [ln for ln in m.group(1).splitlines() if ln.strip()], m.group(2) == "ok"


# --------------------------------------------------------------------------
# GDB through a pipe
# --------------------------------------------------------------------------

class GdbDriver:
    """One GDB reading commands from a pipe.  ``cmd`` sends a command and returns
    what it printed (up to an `echo` marker); ``wait_for`` waits for GDB to print
    something by itself (an asynchronous event such as a thread's exit)."""

    def __init__(self, prog: Path | str, swk: bool = True, iex: list[str] = (), timeout: float = 120):
        argv = [T.GDB, "-nx", "-q", "-iex", "set prompt", "-iex", "set debuginfod enabled off",
                "-iex", "set pagination off", "-iex", "set confirm off", "-iex", "set width 0",
                "-iex", "set height 0"]
        for c in iex:
            argv += ["-iex", c]
        if swk:
            argv += ["-ex", f"source {T.GDB_INIT}"]
        argv.append(str(prog))
        self.timeout = timeout
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, env=T._env(), start_new_session=True,
                                  text=True, errors="replace", bufsize=1)
        self._buf = []
        self._cond = threading.Condition()
        self._pos = 0
        self._n = 0
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self.p.stdout:
            with self._cond:
                self._buf.append(line)
                self._cond.notify_all()
        with self._cond:
            self._buf.append(None)
            self._cond.notify_all()

    def text(self) -> str:
        with self._cond:
            return "".join(x for x in self._buf if x is not None)

    def _wait(self, pred, timeout: float, what: str) -> int:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for i in range(self._pos, len(self._buf)):
                    if self._buf[i] is None:
                        raise T.HarnessError(f"gdb ended while waiting for {what}\n{self.text()[-4000:]}")
                    if pred(self._buf[i]):
                        return i
                left = deadline - time.monotonic()
                if left <= 0:
                    raise T.GdbTimeout(f"gdb did not print {what} within {timeout}s\n{self.text()[-4000:]}")
                self._cond.wait(left)

    def cmd(self, command: str, timeout: float | None = None) -> str:
        """Run ``command``; return everything GDB printed since the last call (so also
        any asynchronous message), up to the end of this command's output."""
        self._n += 1
        marker = f"SWK-DRIVER-{self._n}"
        self.p.stdin.write(f"{command}\necho {marker}\\n\n")
        self.p.stdin.flush()
        i = self._wait(lambda ln: ln.rstrip("\n") == marker, timeout or self.timeout, marker)
        with self._cond:
            out = "".join(self._buf[self._pos:i])
            self._pos = i + 1
        return out

    def mark(self) -> int:
        """A position in GDB's output, for ``wait_for``."""
        with self._cond:
            return len(self._buf)

    def wait_for(self, pattern: str, since: int | None = None, timeout: float | None = None) -> str:
        """Wait until GDB prints a line matching ``pattern``, searching from ``since`` (a
        ``mark()``; default: what no ``cmd`` returned yet), and return that line.  Output
        that later ``cmd`` calls return is not consumed."""
        rx = re.compile(pattern)
        start = self._pos if since is None else since
        deadline = time.monotonic() + (timeout or self.timeout)
        with self._cond:
            while True:
                for i in range(start, len(self._buf)):
                    line = self._buf[i]
                    if line is None:
                        raise T.HarnessError(f"gdb ended while waiting for {pattern!r}\n{self.text()[-4000:]}")
                    if rx.search(line):
                        return line
                start = len(self._buf)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise T.GdbTimeout(f"gdb did not print {pattern!r} in time\n{self.text()[-4000:]}")
                self._cond.wait(left)

    def close(self) -> str:
        try:
            if self.p.poll() is None:
                self.p.stdin.write("kill\nquit\n")
                self.p.stdin.flush()
                self.p.stdin.close()
            self.p.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            pass
        finally:
            T._kill_session(self.p.pid)
            if self.p.poll() is None:
                self.p.kill()
                self.p.wait()
        self._reader.join(timeout=10)
        return self.text()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
