"""A native crash under Python frames (issue 28): the kernel's core of a CPython process that
segfaulted in C code called from Python, walked with its Python frames merged in.

tests/corpus/py_crash.py runs under each interpreter (pyenv's 3.10, 3.11, 3.12, 3.13 and
Debian's 3.11): Python → ctypes → libc's qsort → a Python comparator (a ctypes callback) →
Python → ctypes.string_at(0), whose C code reads address 0.  The kernel dumps the core
(RLIMIT_CORE raised for the program; where /proc/sys/kernel/core_pattern pipes cores to a
helper or names another directory, GDB runs the program and gcores it at the SIGSEGV).

Oracles: the program's own record, written on the line of the fatal call (every thread's
Python frames, and the one Python function the call still enters, ctypes.string_at, with the
lines of its body); GDB's own bt of the same core (every native frame, by pc: the fault's
frame first); for Debian's python3.11, GDB's py-bt (python3.11-dbg) on the core.  Checked:
`swk bt --core --py` (JSON, text), `swk-bt -py` in GDB and in LLDB on the core.
"""
from __future__ import annotations

import json
import re
import resource
import signal
import subprocess
from pathlib import Path

import pytest

import swk_suite as S
from cpython_lib import INTERPRETERS
from swk_testlib import CORPUS, GDB, GDB_INIT, REPO, native_frames, parse_swk_json, pcs, run_cmd
from test_python_frames import EVAL, _py_bt, python_frames, swk

PROGRAM = CORPUS / "py_crash.py"
DEPTH = 6
IDS = [i.name for i in INTERPRETERS]


def _core_pattern():
    try:
        return Path("/proc/sys/kernel/core_pattern").read_text().strip()
    except OSError:
        return "|"


def _dump_core():
    """Whether the kernel writes a core in the crashing program's directory (a plain name
    pattern), or pipes it elsewhere (then GDB gcores the program at its fault)."""
    pattern = _core_pattern()
    return not pattern.startswith("|") and "/" not in pattern


class Crashed:
    """The corpus program run to its crash under one interpreter: its record and its core."""

    def __init__(self, interp, workdir):
        assert interp.exists, f"{interp.python} is missing"
        self.interp, self.workdir = interp, workdir
        self.out = workdir / "record.json"
        argv = [str(interp.python), str(PROGRAM), str(self.out), str(DEPTH)]
        if _dump_core():
            self.core, self.how = self._kernel_core(argv), "kernel"
        else:
            self.core, self.how = self._gcore(argv), "gcore"
        self.record = json.loads(self.out.read_text())

    def _kernel_core(self, argv):
        def unlimited():
            resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        p = subprocess.run(argv, cwd=self.workdir, preexec_fn=unlimited, capture_output=True, text=True, timeout=120)
        assert p.returncode == -signal.SIGSEGV, (p.returncode, p.stderr[-2000:])
        cores = [c for c in self.workdir.iterdir() if c.name.startswith("core")]
        assert len(cores) == 1, (cores, _core_pattern())
        return cores[0]

    def _gcore(self, argv):
        S.need_tool("gdb")
        core = self.workdir / "core"
        out = run_cmd([GDB, "-nx", "-batch", "-q", "-iex", "set debuginfod enabled off", "-ex", "run",
                       "-ex", f"gcore {core}", "-ex", "kill", "--args", *argv], timeout=180, cwd=self.workdir).stdout
        assert "SIGSEGV" in out and core.exists(), out[-3000:]
        return core


@pytest.fixture(scope="module", params=INTERPRETERS, ids=IDS)
def crashed(request, tmp_path_factory):
    run = Crashed(request.param, tmp_path_factory.mktemp("crash"))
    yield run
    run.core.unlink(missing_ok=True)


def want_frames(run, tid):
    """The record's frames of thread ``tid`` as (name, file, line), innermost first."""
    return [tuple(r) for r in run.record["threads"][str(tid)]]


def check_thread(walk, run):
    """One thread of the core: its Python frames the record's (the crashing thread's under the
    callee the fatal call entered), each placed after an evaluator frame, nothing unplaced."""
    ours = [(f["function"], f["file"], f["line"]) for f in python_frames(walk)]
    want = want_frames(run, walk["tid"])
    if walk["tid"] == run.record["main"]:
        name, path, lines = run.record["callee"]
        assert ours[:1] and ours[0][:2] == (name, path) and ours[0][2] in lines, (ours[:2], run.record["callee"])
        ours = ours[1:]
    assert ours == want, (walk["tid"], ours, want)
    assert walk["python"]["error"] is None
    native = None
    for f in walk["frames"]:
        if f["kind"] != "python":
            native = f
        else:
            assert f["placed"] and native is not None and native["function"].startswith(EVAL), (f, native)


def test_kernel_core(crashed):
    """`swk bt --core --py`: every thread's native frames are GDB's, by pc, from the fault's
    frame (frame 0, the C code that read address 0) down; its Python frames the record's."""
    walks = parse_swk_json(swk("bt", "--core", crashed.core, "--py", "--json"))
    assert {str(w["tid"]) for w in walks} == set(crashed.record["threads"])
    gdb = {t.tid: t for t in native_frames(crashed.interp.python, [], core=crashed.core).values()}
    for walk in walks:
        check_thread(walk, crashed)
        native = [f for f in walk["frames"] if f["kind"] != "python"]
        assert pcs(native) == pcs(gdb[walk["tid"]]), (walk["tid"], crashed.how)
    main = next(w for w in walks if w["tid"] == crashed.record["main"])
    top = main["frames"][0]
    assert top["kind"] != "python" and "strlen" in (top["function"] or ""), top     # the fault: strlen(NULL)
    names = [f["function"] or "" for f in main["frames"]]
    # the callback: qsort's native frames between the comparator and the Python that called qsort
    a = names.index("compare")
    b = names.index("sort_in_c")
    assert any("qsort" in n for n in names[a:b]), names[a:b]
    assert any("string_at" in n for n in names[:names.index(EVAL)]), names     # ctypes' C string_at


def test_text(crashed):
    """The text: the fault's frame #0, then the native frames to the first evaluator frame,
    `#N  [Python] ...` lines numbered with them, the record's frames."""
    text = swk("bt", "--core", crashed.core, "--py", "--thread", crashed.record["main"])
    lines = re.findall(r"^#(\d+)\s+(.*)$", text, re.M)
    assert [int(n) for n, _ in lines] == list(range(len(lines)))
    assert "strlen" in lines[0][1] and "[Python]" not in lines[0][1]
    py = re.findall(r"^#\d+\s+\[Python\] (.*) \((.*):(\d+)\)$", text, re.M)
    assert [(n, f, int(ln)) for n, f, ln in py[1:]] == want_frames(crashed, crashed.record["main"])


def test_in_gdb_and_lldb(crashed):
    """swk-bt -py in GDB and in LLDB on the core: the same frames."""
    S.need_tool("gdb")
    out = run_cmd([GDB, "-nx", "-batch", "-q", "-iex", "set debuginfod enabled off", "-iex", "set width 0",
                   "-ex", f"source {GDB_INIT}", "-ex", "swk-bt -py -all -json", str(crashed.interp.python),
                   str(crashed.core)], timeout=180).stdout
    walks = parse_swk_json(out)
    assert {str(w["tid"]) for w in walks} == set(crashed.record["threads"])
    for walk in walks:
        check_thread(walk, crashed)
    lldb, _version = S.need_lldb()
    out = run_cmd([lldb, "-b", "-x", "-o", f"command script import {REPO / 'lldb_init.py'}", "-o",
                   f"target create {crashed.interp.python} --core {crashed.core}", "-o", "swk-bt -py -all -json"],
                  timeout=180).stdout
    walks = parse_swk_json(out)
    assert {str(w["tid"]) for w in walks} == set(crashed.record["threads"])
    for walk in walks:
        check_thread(walk, crashed)


def test_py_bt_on_the_kernel_core():
    """Debian's python3.11 with python3.11-dbg: GDB's py-bt on the kernel's core lists the
    frames swk lists, in order, the callee of the fatal call included."""
    interp = next(i for i in INTERPRETERS if i.name == "3.11-debian")
    S.need_tool("gdb")
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        run = Crashed(interp, Path(tmp))
        base = [GDB, "-nx", "-batch", "-q", "-iex", "set debuginfod enabled off", "-iex", "set width 0"]
        threads, out = _py_bt(base + ["-ex", "thread apply all py-bt", str(interp.python), str(run.core)])
        walks = parse_swk_json(swk("bt", "--core", run.core, "--py", "--json"))
        assert set(threads) == {w["tid"] for w in walks}, out
        for walk in walks:
            ours = [(f["file"], f["line"], f["function"].rsplit(".", 1)[-1]) for f in python_frames(walk)]
            assert ours and threads[walk["tid"]] == ours, (walk["tid"], threads[walk["tid"]], ours)
