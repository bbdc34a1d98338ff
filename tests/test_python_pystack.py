"""pystack (Bloomberg) as a comparison oracle for swk's Python frames (issue 28): on the same live
processes and cores, swk shows every Python frame pystack shows, in order, and the GIL states
pystack reports.

pystack is installed by scripts/setup.sh in a venv of its own under the build dir
(``pystack-venv``), never swk's.  Programs: tests/corpus/py_frames.py stopped at its bottom
(`pystack remote PID`, and `pystack core CORE` on a gcore of it), tests/corpus/py_crash.py's
kernel core (`pystack core`), tests/corpus/py_threads.py's GIL states (`pystack remote
--native`: "Has the GIL", "Waiting for the GIL"), on every CPython of the machine.
"""
from __future__ import annotations

import re

import pytest

from cpython_lib import INTERPRETERS
from swk_testlib import BUILD, parse_swk_json, run_cmd
from test_python_crash import Crashed
from test_python_frames import Stopped, python_frames, swk
from test_python_threads import Running

PYSTACK = BUILD / "pystack-venv" / "bin" / "pystack"
IDS = [i.name for i in INTERPRETERS]
HEAD = re.compile(r"^Traceback for thread (\d+) .*?\[([^]]*)\] \(most recent call last\):$", re.M)
FRAME = re.compile(r'^    \(Python\) File "(.*)", line (\d+), in (.*)$', re.M)


def pystack(*args):
    """{tid: (status, [(file, line, name)] innermost first)} of pystack's report."""
    assert PYSTACK.exists(), f"{PYSTACK} is missing (scripts/setup.sh installs pystack)"
    out = run_cmd([str(PYSTACK), *map(str, args)], timeout=180).stdout
    heads = list(HEAD.finditer(out))
    assert heads, out[-3000:]
    threads = {}
    for k, m in enumerate(heads):
        block = out[m.end():heads[k + 1].start() if k + 1 < len(heads) else len(out)]
        frames = [(f.group(1), int(f.group(2)), f.group(3)) for f in FRAME.finditer(block)]
        threads[int(m.group(1))] = (m.group(2), frames[::-1])
    return threads


def same_frames(theirs, walks):
    """Every thread pystack reports is swk's, with the frames pystack shows (pystack names a
    frame by co_name: the qualified name's last part)."""
    ours = {w["tid"]: [(f["file"], f["line"], f["function"].rsplit(".", 1)[-1]) for f in python_frames(w)]
            for w in walks}
    assert set(theirs) <= set(ours), (set(theirs), set(ours))
    for tid, (_status, frames) in theirs.items():
        assert frames and ours[tid] == frames, (tid, ours[tid], frames)


@pytest.mark.parametrize("interp", INTERPRETERS, ids=IDS)
def test_stopped_live_and_core(interp, tmp_path):
    run = Stopped(interp, tmp_path)
    try:
        same_frames(pystack("remote", run.pid), parse_swk_json(swk("bt", "--pid", run.pid, "--py", "--json")))
        core = run.make_core(tmp_path)
        same_frames(pystack("core", core, interp.python),
                    parse_swk_json(swk("bt", "--core", core, "--py", "--json")))
    finally:
        run.close()


@pytest.mark.parametrize("interp", INTERPRETERS, ids=IDS)
def test_crash_core(interp, tmp_path):
    run = Crashed(interp, tmp_path)
    same_frames(pystack("core", run.core, interp.python),
                parse_swk_json(swk("bt", "--core", run.core, "--py", "--json")))


@pytest.mark.parametrize("interp", INTERPRETERS, ids=IDS)
def test_gil_states(interp, tmp_path):
    """pystack's "Has the GIL" is swk's holds; its "Waiting for the GIL" swk's waiting (pystack
    says so only where it names a native frame take_gil: not in Debian's stripped python3.11,
    where swk knows the wait by PyEval_RestoreThread, which take_gil is inlined into)."""
    run = Running(interp, tmp_path)
    try:
        theirs = pystack("remote", "--native", run.pid)
        walks = parse_swk_json(swk("bt", "--pid", run.pid, "--py", "--json"))
        same_frames(theirs, walks)
        mine = {w["tid"]: w["python"]["gil"] for w in walks}
        for tid, (status, _frames) in theirs.items():
            assert ("Has the GIL" in status) == (mine[tid] == "holds"), (tid, status, mine[tid])
            assert "Waiting for the GIL" not in status or mine[tid] == "waiting", (tid, status, mine[tid])
        assert sorted(mine.values()) == ["holds", "released", "released", "waiting"], mine
        if interp.name != "3.11-debian":
            assert any("Waiting for the GIL" in status for status, _frames in theirs.values()), theirs
    finally:
        run.close()
