"""Python threads' GIL states (issue 28): which thread holds the GIL, which waits for it, which
left it for a native call, as pystack reports them, on every CPython of the machine.

tests/corpus/py_threads.py holds four threads in those states: one spinning in Python (it
holds the GIL), one in time.sleep and one waiting on a lock (native calls, the GIL released),
and the main thread, whose short sleep ended with the spinner holding the GIL and the switch
interval raised so that no one takes it back (it waits for the GIL).  Oracles: the program's
own record (each thread's role by its native id, its Python frames); the interpreter's own GIL
as GDB reads it through the interpreter's debug information (`last_holder`, `locked`), which
names the holder's PyThreadState.  Checked: `swk bt --pid --py` and on a gcore core (JSON's
``python.gil``, the text's thread headers), `swk-bt -py` in GDB and in LLDB.
"""
from __future__ import annotations

import json
import re
import subprocess
import time

import pytest

import swk_suite as S
from cpython_lib import INTERPRETERS
from swk_testlib import CORPUS, GDB, GDB_INIT, REPO, parse_swk_json, run_cmd
from test_python_frames import python_frames, swk

PROGRAM = CORPUS / "py_threads.py"
IDS = [i.name for i in INTERPRETERS]
#: Each role's state (interp.gil) and how a thread header says it.
STATES = {"spinner": ("holds", "holds the GIL"), "waiter": ("waiting", "waiting for the GIL"),
          "sleeper": ("released", "GIL released"), "locker": ("released", "GIL released")}


class Running:
    """The corpus program under one interpreter with its threads in place; its own record."""

    def __init__(self, interp, workdir):
        assert interp.exists, f"{interp.python} is missing"
        self.interp = interp
        self.out = workdir / "record.json"
        self.proc = subprocess.Popen([str(interp.python), str(PROGRAM), str(self.out)])
        deadline = time.time() + 120
        while not self.out.exists():
            if self.proc.poll() is not None or time.time() > deadline:
                self.close()
                pytest.fail(f"{interp.name}: the program did not record its threads")
            time.sleep(0.05)
        self.record = json.loads(self.out.read_text())
        self.roles = {int(tid): role for tid, role in self.record["roles"].items()}
        self.pid = self.proc.pid
        self._wait_for_the_gil()
        self.core = None

    def _wait_for_the_gil(self):
        """Until the main thread's sleep is over and it waits for the GIL (a futex wait after
        a nanosleep: its last system call is a futex's, not clock_nanosleep's)."""
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                call = (open(f"/proc/{self.pid}/task/{self.pid}/syscall").read().split() or ["-1"])[0]
            except OSError:
                call = "-1"
            if call == "202":            # futex(2) on x86-64: take_gil's condition wait
                return
            time.sleep(0.05)
        pytest.fail("the main thread does not wait for the GIL")

    def make_core(self, workdir):
        if self.core is None:
            core = workdir / f"threads-{self.interp.name}.core"
            out = run_cmd([GDB, "-nx", "-batch", "-q", "-iex", "set debuginfod enabled off", "-ex",
                           f"gcore {core}", "-p", str(self.pid)], timeout=180).stdout
            assert core.exists(), out
            self.core = core
        return self.core

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module", params=INTERPRETERS, ids=IDS)
def running(request, tmp_path_factory):
    run = Running(request.param, tmp_path_factory.mktemp("threads"))
    yield run
    run.close()
    if run.core is not None:
        run.core.unlink(missing_ok=True)


def gdb_gil_holder(run, core=None):
    """The address of the PyThreadState holding the GIL, as GDB reads the interpreter's own
    struct _gil_runtime_state through its debug information (None: not held)."""
    v = run.interp.version
    gil = "_PyRuntime.ceval.gil." if v < (3, 12) else "_PyRuntime.interpreters.main->ceval.gil->"
    value = "._value" if v < (3, 13) else ""        # 3.10-3.12: _Py_atomic_address/_int
    argv = [GDB, "-nx", "-batch", "-q", "-iex", "set debuginfod enabled off",
            "-ex", f"printf \"SWK-GIL %lu %d\\n\", (unsigned long)({gil}last_holder{value}), (int)({gil}locked{value})"]
    argv += [str(run.interp.python), str(core)] if core is not None else ["-p", str(run.pid)]
    out = run_cmd(argv, timeout=180).stdout
    m = re.search(r"^SWK-GIL (\d+) (-?\d+)$", out, re.M)
    assert m, out[-3000:]
    return int(m.group(1)) if int(m.group(2)) else None


def check(walks, run, holder):
    assert {w["tid"] for w in walks} == set(run.roles)
    for walk in walks:
        role = run.roles[walk["tid"]]
        assert walk["python"]["gil"] == STATES[role][0], (role, walk["python"])
        if role == "spinner":
            assert walk["python"]["thread_state"] == holder
        ours = [(f["function"], f["file"], f["line"]) for f in python_frames(walk)]
        want = [tuple(r) for r in run.record["threads"][str(walk["tid"])]]
        if role == "spinner":           # spinning on one line, its frame wherever the record saw it
            ours, want = [f[:2] for f in ours], [f[:2] for f in want]
        assert ours == want, (role, ours, want)


def check_text(text, run):
    heads = re.findall(r"^Thread \d+ \(LWP (\d+)\) \[Python: ([^]]*)\]:$", text, re.M)
    assert {int(t): s for t, s in heads} == {t: STATES[r][1] for t, r in run.roles.items()}, text[:3000]


def test_live(running):
    holder = gdb_gil_holder(running)
    check(parse_swk_json(swk("bt", "--pid", running.pid, "--py", "--json")), running, holder)
    check_text(swk("bt", "--pid", running.pid, "--py"), running)


def test_core(running, tmp_path_factory):
    core = running.make_core(tmp_path_factory.mktemp("core"))
    holder = gdb_gil_holder(running, core)
    check(parse_swk_json(swk("bt", "--core", core, "--py", "--json")), running, holder)
    check_text(swk("bt", "--core", core, "--py", "only"), running)


def test_in_gdb(running, tmp_path_factory):
    """swk-bt -py -all in GDB (on the core: the live process goes on spinning after)."""
    S.need_tool("gdb")
    core = running.make_core(tmp_path_factory.mktemp("core"))
    holder = gdb_gil_holder(running, core)
    out = run_cmd([GDB, "-nx", "-batch", "-q", "-iex", "set debuginfod enabled off", "-iex", "set width 0",
                   "-ex", f"source {GDB_INIT}", "-ex", "swk-bt -py -all -json", "-ex", "swk-bt -py -all",
                   str(running.interp.python), str(core)], timeout=180).stdout
    check(parse_swk_json(out), running, holder)
    check_text(out, running)


def test_in_lldb(running, tmp_path_factory):
    """swk-bt -py -all in LLDB on the core: each thread's state after LLDB's own thread line."""
    lldb, _version = S.need_lldb()
    core = running.make_core(tmp_path_factory.mktemp("core"))
    holder = gdb_gil_holder(running, core)
    out = run_cmd([lldb, "-b", "-x", "-o", f"command script import {REPO / 'lldb_init.py'}", "-o",
                   f"target create {running.interp.python} --core {core}", "-o", "swk-bt -py -all -json",
                   "-o", "swk-bt -py -all"], timeout=180).stdout
    walks = parse_swk_json(out)
    check(walks, running, holder)
    tids = {w["thread"]: w["tid"] for w in walks}
    heads = re.findall(r"^[* ] thread #(\d+),.* \[Python: ([^]]*)\]$", out, re.M)
    assert {tids[int(n)]: s for n, s in heads} == {t: STATES[r][1] for t, r in running.roles.items()}, out[-3000:]
