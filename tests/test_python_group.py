"""-py with -unique, -merge and -compare (issue 28): threads grouped and merged by their native and
Python stacks together, and the Python frames beside the debugger's own unwinding.

tests/corpus/py_pool.py parks four workers on one lock through the same C calls, two by way of
``wait_a``, two of ``wait_b``, and stops itself.  Oracles: the program's own record (each
worker's role and every thread's Python frames); GDB's own unwinding for -compare.  Checked on
every CPython of the machine: `swk bt --pid --unique --py` groups the threads as --unique does,
split by their Python stacks, each group's Python frames the record's; `--merge --py` branches the
workers at wait_a / wait_b, each branch's threads the record's; `swk-bt -py -compare` in GDB
counts what `swk-bt -compare` counts, the Python frames in swk's column alone.
"""
from __future__ import annotations

import json
import re
import signal
import subprocess
import time

import pytest

import swk_suite as S
from cpython_lib import INTERPRETERS
from swk_testlib import CORPUS, GDB, GDB_INIT, parse_swk_json, run_cmd
from test_python_frames import _state, swk

PROGRAM = CORPUS / "py_pool.py"
IDS = [i.name for i in INTERPRETERS]


class Parked:
    """The corpus program under one interpreter, its workers parked and the process stopped."""

    def __init__(self, interp, workdir):
        assert interp.exists, f"{interp.python} is missing"
        self.interp = interp
        self.out = workdir / "record.json"
        self.proc = subprocess.Popen([str(interp.python), str(PROGRAM), str(self.out)])
        self.pid = self.proc.pid
        deadline = time.time() + 120
        while not (self.out.exists() and _state(self.pid) == "T"):
            if self.proc.poll() is not None or time.time() > deadline:
                self.close()
                pytest.fail(f"{interp.name}: the program did not stop with its workers parked")
            time.sleep(0.05)
        self.record = json.loads(self.out.read_text())
        self.roles = {int(t): r for t, r in self.record["roles"].items()}

    def frames(self, tid):
        return [tuple(r) for r in self.record["threads"][str(tid)]]

    def close(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()


@pytest.fixture(scope="module", params=INTERPRETERS, ids=IDS)
def parked(request, tmp_path_factory):
    run = Parked(request.param, tmp_path_factory.mktemp("pool"))
    yield run
    run.close()


def test_unique(parked):
    """--unique --py groups threads by their native and Python stacks together: the groups of
    --unique (alike native stacks; the adaptive interpreter may take one worker's first call
    down another C path) split by the record's Python stacks, each group's Python frames its
    members' own record; Python splits the workers' native group (wait_a, wait_b)."""
    plain = parse_swk_json(swk("bt", "--pid", parked.pid, "--unique", "--json").replace('{"threads"', '{"thread"'))
    want = []
    for g in plain:
        split = {}
        for tid in g["tids"]:
            split.setdefault(tuple(parked.frames(tid)), set()).add(tid)
        want += split.values()
    groups = parse_swk_json(swk("bt", "--pid", parked.pid, "--unique", "--py", "--json")
                            .replace('{"threads"', '{"thread"'))
    got = [set(g["tids"]) for g in groups]
    assert sorted(map(sorted, got)) == sorted(map(sorted, want)), (got, want)
    assert len(got) > len(plain), "the Python frames split no group"
    for g in groups:
        py = [(f["function"], f["file"], f["line"]) for f in g["frames"] if f["kind"] == "python"]
        for tid in g["tids"]:
            assert py == parked.frames(tid), (tid, py)
    text = swk("bt", "--pid", parked.pid, "--unique", "--py")
    heads = re.findall(r"^Threads .*\(\d+ threads\):$|^Thread \d+ \(LWP \d+\)", text, re.M)
    assert len(heads) == len(want), text[:3000]


def test_merge(parked):
    """--merge --py: the workers branch at their role's Python function, each branch the
    threads of that role; --py only merges the Python frames alone."""
    tree = json.loads(next(line for line in swk("bt", "--pid", parked.pid, "--merge", "--py", "--json").splitlines()
                           if line.startswith('{"merged"')))
    nodes = {}

    def visit(node):
        nodes.setdefault(node["function"], []).append(set(node["tids"][str(parked.pid)]))
        for child in node.get("children", ()):
            visit(child)
    for root in tree["tree"]:
        visit(root)
    for role, name in (("a", "wait_a"), ("b", "wait_b")):
        want = {t for t, r in parked.roles.items() if r == role}
        assert nodes.get(f"[Python] {name} (py_pool.py)") == [want], (role, nodes.keys())
    only = json.loads(next(line for line in swk("bt", "--pid", parked.pid, "--merge", "--py", "only", "--json")
                           .splitlines() if line.startswith('{"merged"')))
    names = []

    def walk(node):
        names.append(node["function"])
        for child in node.get("children", ()):
            walk(child)
    for root in only["tree"]:
        walk(root)
    assert names and all(n.startswith("[Python] ") for n in names), names


def test_compare_in_gdb(parked):
    """swk-bt -py -compare: the rows of swk-bt -compare, the Python frames between them in swk's
    column alone (no difference counted), each after its evaluator frame's row."""
    S.need_tool("gdb")
    out = run_cmd([GDB, "-nx", "-batch", "-q", "-iex", "set debuginfod enabled off", "-iex", "set width 0",
                   "-ex", f"source {GDB_INIT}", "-ex", "swk-bt -compare", "-ex", "echo SWK-PY\\n",
                   "-ex", "swk-bt -py -compare", "-ex", "echo SWK-ONLY\\n", "-ex", "swk-bt -py only -compare",
                   "-p", str(parked.pid)], timeout=180).stdout
    plain, py = out.split("SWK-PY\n", 1)
    py, only = py.split("SWK-ONLY\n", 1)
    assert "swk-bt: -py only and -compare cannot be combined" in only, only[-1000:]
    plain_rows = [line for line in plain.splitlines() if re.match(r"^(  |!=)#\d+", line)]
    py_lines = [line for line in py.splitlines() if re.match(r"^(  |!=)(#\d+|\[Python)", line)]
    assert [line for line in py_lines if "[Python" not in line] == plain_rows
    summary = re.compile(r"^\d+ difference\(s\) over \d+ frames.*$", re.M)
    assert summary.findall(py) == summary.findall(plain)
    ours = [re.match(r"^  \[Python\] (.*) \((.*):(\d+)\)\s+\| \(swk's alone\)$", line) for line in py_lines
            if "[Python" in line]
    assert all(ours) and [(m.group(1), m.group(2), int(m.group(3))) for m in ours] == parked.frames(parked.pid)
    for k, line in enumerate(py_lines):
        if "[Python" in line and "[Python" not in py_lines[k - 1]:
            assert "_PyEval_EvalFrameDefault" in py_lines[k - 1], py_lines[k - 1]
