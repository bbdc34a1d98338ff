"""Python frames beside native frames (issue 28), on every CPython of the machine.

tests/corpus/py_frames.py runs under each interpreter (pyenv's 3.10, 3.11, 3.12, 3.13 and
Debian's 3.11): a method recursion, a generator driven by next(), a coroutine driven by
send(), a recursion to the bottom in the main thread; a second thread calling libc's qsort
through ctypes, whose Python comparator recurses and blocks.  At the bottom the program
writes every thread's stack as the interpreter sees it (its own record: qualified name,
file, line of each frame, innermost first) and stops itself on the same line.

Oracles: that record; the program's own shape (a next() and a ctypes callback are calls
through C: a native builtin_next / qsort frame lies between the Python frames on either
side); the repr() of each frame's simple locals, also in that record; for Debian's python3.11,
GDB's own py-bt (python3.11-dbg's python-gdb.py).  Checked: `swk bt --pid --py` and `swk bt
--core --py` (a gcore of the stopped process), as JSON and text, `--py only`, `--py --full`
(locals), `swk-bt -py` in GDB and in LLDB, GDB's own bt with swk's frame filter, a walk cut
short (--frame-cap), whose Python frames are all still shown, those it cannot place marked;
and `swk profile --py` of tests/corpus/py_busy.py, whose hot stack it recorded itself.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time

import pytest

import swk_suite as S
from cpython_lib import INTERPRETERS, has_dwarf
from swk_testlib import CORPUS, GDB, GDB_INIT, PYTHON, REPO, parse_swk_json, run_cmd

PROGRAM = CORPUS / "py_frames.py"
DEPTH = 20
IDS = [i.name for i in INTERPRETERS]
EVAL = "_PyEval_EvalFrameDefault"


def _state(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.rfind(")") + 2:].split()[0]


class Stopped:
    """The corpus program under one interpreter, stopped at its bottom; its own record."""

    def __init__(self, interp, workdir):
        assert interp.exists, f"{interp.python} is missing"
        self.interp = interp
        self.out = workdir / f"record-{interp.name}.json"
        self.proc = subprocess.Popen([str(interp.python), str(PROGRAM), str(self.out), str(DEPTH)],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.pid = self.proc.pid
        deadline = time.time() + 60
        while not (self.out.exists() and _state(self.pid) == "T"):
            if self.proc.poll() is not None or time.time() > deadline:
                out = self.proc.stdout.read().decode(errors="replace") if self.proc.poll() is not None else ""
                self.close()
                pytest.fail(f"{interp.name}: the program did not stop at its bottom: {out}")
            time.sleep(0.05)
        self.record = json.loads(self.out.read_text())
        self.core = None

    def make_core(self, workdir):
        if self.core is None:
            S.need_tool("gdb")
            core = workdir / f"py-{self.interp.name}.core"
            out = run_cmd([GDB, "-nx", "-batch", "-q", "-iex", "set debuginfod enabled off", "-ex",
                           f"gcore {core}", "-p", str(self.pid)], timeout=180).stdout
            assert core.exists(), out
            assert _state(self.pid) == "T", "gcore did not leave the process stopped"
            self.core = core
        return self.core

    def close(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()


@pytest.fixture(scope="module", params=INTERPRETERS, ids=IDS)
def stopped(request, tmp_path_factory):
    run = Stopped(request.param, tmp_path_factory.mktemp("py"))
    yield run
    run.close()
    if run.core is not None:
        run.core.unlink(missing_ok=True)


def swk(*args, timeout=180):
    p = run_cmd([PYTHON, "-m", "swk_plugin", *map(str, args)], cwd=REPO, timeout=timeout)
    assert p.returncode == 0, p.stdout
    return p.stdout


def python_frames(walk):
    return [f for f in walk["frames"] if f["kind"] == "python"]


def check_walk(walk, run, cut=False, named=True):
    """One thread's walk against the program's record: its Python frames in order, each at
    the record's file and line; each placed one after the evaluator frame of its call; the
    calls the program makes through C (next(), the qsort callback) with that C function's
    native frame between the Python frames either side.  ``cut``: the native walk ends
    early: frames past its last evaluator frame are shown, marked not placed.  ``named``: the
    interpreter names its static C functions (not stripped)."""
    want = [tuple(r[:3]) for r in run.record["threads"][str(walk["tid"])]]
    ours = python_frames(walk)
    assert [(f["function"], f["file"], f["line"]) for f in ours] == want, (walk["tid"], ours, want)
    frames = walk["frames"]
    assert [f["level"] for f in frames] == list(range(len(frames)))
    native = None
    evals = runs = 0
    for i, f in enumerate(frames):
        if f["kind"] != "python":
            native = f
            evals += bool(f["function"] and f["function"].startswith(EVAL) and f["kind"] != "inline")
            continue
        if f["placed"]:
            assert native is not None and native["function"].startswith(EVAL), (f, native)
        else:
            assert cut, f
        runs += frames[i - 1]["kind"] != "python"
    if not cut:
        assert all(f["placed"] for f in ours)
        assert runs <= evals, (runs, evals)
    else:
        assert not all(f["placed"] for f in ours), "the walk was cut: some frames cannot be placed"
        assert all(not f["placed"] for f in ours[ours.index(next(f for f in ours if not f["placed"])):])
        assert frames[-1]["kind"] == "python"           # after every native frame
        return
    names = [f["function"] for f in ours]
    assert walk["python"]["error"] is None

    def between(inner, outer, c_function):
        a = next(k for k, f in enumerate(frames) if f["kind"] == "python" and f["function"] == inner)
        b = next(k for k, f in enumerate(frames) if k > a and f["kind"] == "python" and f["function"] == outer)
        assert any(f["kind"] != "python" and (c_function in (f["function"] or "") or not named)
                   for f in frames[a:b]), (inner, outer, c_function, frames[a:b])
    if "compare" in names:
        between("compare", "sort_in_c", "qsort")
    if "generator" in names:
        between("generator", "drive", "builtin_next")


def check_process(walks, run, cut=False, named=True, dwarf=None):
    """``dwarf``: whether the interpreter carries DWARF (None: as readelf finds it)."""
    assert {str(w["tid"]) for w in walks} == set(run.record["threads"])
    dwarf = has_dwarf(run.interp.library) if dwarf is None else dwarf
    for walk in walks:
        check_walk(walk, run, cut, named)
        assert walk["python"]["version"].startswith(".".join(map(str, run.interp.version)))
        if run.interp.version >= (3, 13):
            assert walk["python"]["debug_offsets"], "3.13's own _Py_DebugOffsets were not read"
        # the layout's sources, the winner first: the debug offsets, the DWARF, the table
        want = ["debug offsets"] * (run.interp.version >= (3, 13)) + ["DWARF"] * dwarf + ["table"]
        assert walk["python"]["layout"] == want, (walk["python"]["layout"], want)


def test_live_pid(stopped):
    check_process(parse_swk_json(swk("bt", "--pid", stopped.pid, "--py", "--json")), stopped)


def test_core(stopped, tmp_path_factory):
    core = stopped.make_core(tmp_path_factory.mktemp("core"))
    check_process(parse_swk_json(swk("bt", "--core", core, "--py", "--json")), stopped)


def test_text_lines(stopped):
    """`#N  [Python] NAME (FILE:LINE)` lines in the record's order, numbered with the native
    lines as one backtrace; each thread's JSON and text agree."""
    text = swk("bt", "--pid", stopped.pid, "--py")
    walks = {str(w["tid"]): w for w in parse_swk_json(swk("bt", "--pid", stopped.pid, "--py", "--json"))}
    for block in text.split("\n\n"):
        head = re.match(r"Thread \d+ \(LWP (\d+)\) \[Python: (.*)\]:", block)
        assert head, block[:200]
        # the main thread stops itself in os.kill, which keeps the GIL; the sorter waits on a
        # lock, which gave it up (its drop_gil may still be waiting for the main thread to have
        # taken it, as CPython's forced switching does: then it is still dropping it)
        assert head.group(2) in (("holds the GIL",) if head.group(1) == str(stopped.pid)
                                 else ("GIL released", "dropping the GIL")), head
        lines = re.findall(r"^#(\d+)\s+(.*)$", block, re.M)
        assert [int(n) for n, _ in lines] == list(range(len(lines)))
        py = [(int(m.group(1)), m.group(2), m.group(3), int(m.group(4))) for m in
              re.finditer(r"^#(\d+)\s+\[Python\] (.*) \((.*):(\d+)\)$", block, re.M)]
        want = stopped.record["threads"][head.group(1)]
        assert [p[1:] for p in py] == [tuple(r[:3]) for r in want]
        assert [p[0] for p in py] == [f["level"] for f in python_frames(walks[head.group(1)])]


def test_python_frames_only(stopped):
    """--py only: the Python frames alone, numbered from 0, the record's."""
    for walk in parse_swk_json(swk("bt", "--pid", stopped.pid, "--py", "only", "--json")):
        assert [f["kind"] for f in walk["frames"]] == ["python"] * len(walk["frames"])
        assert [f["level"] for f in walk["frames"]] == list(range(len(walk["frames"])))
        assert [(f["function"], f["file"], f["line"]) for f in walk["frames"]] == \
            [tuple(r[:3]) for r in stopped.record["threads"][str(walk["tid"])]]
        assert all(f["placed"] for f in walk["frames"])
    text = swk("bt", "--pid", stopped.pid, "--thread", stopped.pid, "--py=only", "3")
    want = stopped.record["threads"][str(stopped.pid)][:3]
    assert re.findall(r"^#(\d+)\s+\[Python\] (.*) \((.*):(\d+)\)$", text, re.M) == \
        [(str(k), n, f, str(ln)) for k, (n, f, ln, _locals) in enumerate(want)]
    assert text.rstrip().endswith("(More stack frames follow...)")


def test_python_locals(stopped):
    """--py --full: each Python frame's locals, the simple ones as the program's own repr()
    of them (a cell and a free variable included, dicts' items), on the live process and in text."""
    walks = parse_swk_json(swk("bt", "--pid", stopped.pid, "--py", "only", "--full", "--json"))
    seen = 0
    for walk in walks:
        for f, row in zip(walk["frames"], stopped.record["threads"][str(walk["tid"])]):
            ours = {v["name"]: v["value"] for v in f["locals"]}
            for name, value in row[3].items():
                assert ours.get(name) == value, (f["function"], name, ours.get(name), value)
                seen += 1
    assert seen > 20, seen
    # the dicts (str keys; other keys, one deleted), the tuple holding a list: compared above
    leaf_rows = [row[3] for rows in stopped.record["threads"].values() for row in rows if row[0] == "leaf"]
    assert leaf_rows and all({"names", "table", "parts"} <= set(r) for r in leaf_rows), leaf_rows[:1]
    leaf = next(f for w in walks for f in w["frames"] if f["function"] == "leaf")
    drive = next(f for w in walks for f in w["frames"] if f["function"] == "drive")
    assert {v["name"] for v in drive["locals"]} >= {"n", "depth"}
    text = swk("bt", "--pid", stopped.pid, "--thread", stopped.pid, "--py", "--full")
    assert re.search(r"^#\d+\s+\[Python\] leaf \(.*\)\n(        \w+ = .*\n)*        label = 'leaf-é'$", text,
                     re.M), text[-3000:]
    assert any(v["name"] == "parts" for v in leaf["locals"])


def test_walk_cut_short(stopped):
    """A native walk that ends early (--frame-cap) has fewer evaluator frames than calls: the
    Python frames it reaches are placed, the others shown after it, marked, none dropped."""
    walk = parse_swk_json(swk("bt", "--pid", stopped.pid, "--thread", stopped.pid, "--py", "--json"))[0]
    evals = [f for f in walk["frames"] if f["kind"] != "python" and (f["function"] or "").startswith(EVAL)]
    upto = walk["frames"][:walk["frames"].index(evals[len(evals) // 2]) + 1]
    cap = sum(f["kind"] not in ("python", "inline", "tailcall") for f in upto) - 1   # through half the calls
    cut = parse_swk_json(swk("bt", "--pid", stopped.pid, "--thread", stopped.pid, "--py", "--json",
                             "--frame-cap", cap + 1))[0]
    check_walk(cut, stopped, cut=True)
    text = swk("bt", "--pid", stopped.pid, "--thread", stopped.pid, "--py", "--frame-cap", cap + 1)
    assert re.search(r"^#\d+\s+\[Python, not placed\] <module> \(.*py_frames\.py:\d+\)$", text, re.M), text


def test_swk_bt_in_gdb(stopped):
    """swk-bt -py in GDB (JSON and text, -py only), and GDB's own bt with swk's frame filter:
    the Python frames under their evaluator frames, in order (`bt -no-filters`: none)."""
    S.need_tool("gdb")
    out = run_cmd([GDB, "-nx", "-batch", "-q", "-iex", "set debuginfod enabled off", "-iex", "set width 0",
                   "-iex", "set pagination off", "-ex", f"source {GDB_INIT}", "-ex", "swk-bt -py -all -json",
                   "-ex", "echo SWK-TEXT\\n", "-ex", "swk-bt -py", "-ex", "echo SWK-ONLY\\n", "-ex", "swk-bt -py only",
                   "-ex", "echo SWK-BT\\n", "-ex", "bt", "-ex", "echo SWK-RAW\\n", "-ex", "bt -no-filters",
                   "-p", str(stopped.pid)], timeout=180).stdout
    walks = parse_swk_json(out)
    check_process(walks, stopped)
    text, rest = out.split("SWK-TEXT\n", 1)[1].split("SWK-ONLY\n", 1)
    only, rest = rest.split("SWK-BT\n", 1)
    bt, raw = rest.split("SWK-RAW\n", 1)
    main = next(w for w in walks if w["tid"] == stopped.pid)       # GDB's selected thread after attach
    ours = python_frames(main)
    got = [(int(m.group(1)), m.group(2), m.group(3), int(m.group(4))) for m in
           re.finditer(r"^#(\d+)\s+\[Python\] (.*) \((.*):(\d+)\)$", text, re.M)]
    assert got == [(f["level"], f["function"], f["file"], f["line"]) for f in ours]
    got = [(int(m.group(1)), m.group(2), m.group(3), int(m.group(4))) for m in
           re.finditer(r"^#(\d+)\s+\[Python\] (.*) \((.*):(\d+)\)$", only, re.M)]
    assert got == [(k, f["function"], f["file"], f["line"]) for k, f in enumerate(ours)]
    assert not re.search(r"^#\d+\s+0x", only, re.M), only
    lines = bt.splitlines()
    got = [(m.group(1), m.group(2), int(m.group(3))) for m in
           re.finditer(r"^    \[Python\] (.*) \(\) at (.*):(\d+)$", bt, re.M)]
    assert got == [(f["function"], f["file"], f["line"]) for f in ours], bt
    for k, line in enumerate(lines):            # each run of them right under an evaluator frame
        if line.startswith("    [Python]") and not lines[k - 1].startswith("    [Python]"):
            assert EVAL in lines[k - 1], (lines[k - 1], line)
    assert "[Python]" not in raw


def test_swk_bt_in_lldb(stopped):
    """swk-bt -py in LLDB, in LLDB's frame-format (`frame #12: 0x0000000000000000 [Python]
    leaf (/srv/py_frames.py:75)`), and LLDB 22's own bt through swk's frame provider: the
    same Python frames, each run of them right after an evaluator frame, and LLDB's bt's
    Python lines swk-bt's, renumbered.  LLDB lets the process go on when it detaches: this
    is the last test of each interpreter's stopped process."""
    lldb, _version = S.need_lldb()
    out = run_cmd([lldb, "-b", "-x", "-o", f"command script import {REPO / 'lldb_init.py'}", "-o",
                   f"process attach -p {stopped.pid}", "-o", "swk-bt -py -all -json", "-o", "script print('SWK-TEXT')",
                   "-o", "swk-bt -py", "-o", "script print('SWK-ONLY')", "-o", "swk-bt -py only",
                   "-o", "script print('SWK-BT')", "-o", "bt", "-o", "script print('SWK-END')",
                   "-o", "process detach"], timeout=180).stdout
    walks = parse_swk_json(out)
    check_process(walks, stopped)
    main = next(w for w in walks if w["tid"] == stopped.pid)
    want = [(f["function"], f["file"], f["line"]) for f in python_frames(main)]
    text = out.split("\nSWK-TEXT\n", 1)[1].split("\nSWK-ONLY\n", 1)[0]
    only = out.split("\nSWK-ONLY\n", 1)[1].split("\nSWK-BT\n", 1)[0]
    bt = out.split("\nSWK-BT\n", 1)[1].split("\nSWK-END\n", 1)[0]
    line = re.compile(r"^[ *]+frame #(\d+): 0x0+ \[Python\] (.*) \((.*):(\d+)\)$", re.M)
    got = [(int(m.group(1)), m.group(2), m.group(3), int(m.group(4))) for m in line.finditer(text)]
    assert got == [(f["level"], f["function"], f["file"], f["line"]) for f in python_frames(main)], text[-3000:]
    assert re.search(r"^\* thread #1, .*\[Python: holds the GIL\]$", text, re.M), text[:500]
    got = [(int(m.group(1)), m.group(2), m.group(3), int(m.group(4))) for m in line.finditer(only)]
    assert got == [(k, *f) for k, f in enumerate(want)], only[-3000:]
    assert not re.search(r"^[ *]+frame #\d+: 0x0*[1-9a-f]", only, re.M), only
    # LLDB's own bt: the same Python frames, each run after the native frame it follows in
    # swk-bt -py (LLDB's own line for it: LLDB names the frames, swk places the runs)
    assert runs(bt) == runs(text), (runs(bt), runs(text))
    assert [f for _before, run in runs(bt) for f in run] == [f"{n} ({p}:{ln})" for n, p, ln in want]


def runs(text):
    """[(the native line before it, [its Python frames])] of each run of Python frames in LLDB's
    frame lines (frame numbers and LLDB's own marks left out)."""
    lines = [re.sub(r" \[synthetic\]$", "", m.group(1)) for m in re.finditer(r"^[ *]+frame #\d+: (.*)$", text, re.M)]
    out = []
    for k, line in enumerate(lines):
        if not line.startswith("0x0000000000000000 [Python] "):
            continue
        name = line[len("0x0000000000000000 [Python] "):]
        if k and lines[k - 1].startswith("0x0000000000000000 [Python] "):
            out[-1][1].append(name)
        else:
            assert k, "a Python frame first: it would have no native frame before it"
            out.append((lines[k - 1], [name]))
    return out


PY_BT = re.compile(r'^  File "(.*)", line (\d+), in (.*)$', re.M)


def _py_bt(argv):
    """{LWP: [(file, line, name)]} from GDB's `thread apply all py-bt`."""
    out = run_cmd(argv, timeout=180).stdout
    assert "Undefined command" not in out, f"py-bt is not loaded (python3.11-dbg's python-gdb.py):\n{out[-2000:]}"
    threads = {}
    for block in re.split(r"^Thread \d+ ", out, flags=re.M)[1:]:
        lwp = int(re.search(r"\(LWP (\d+)\)", block).group(1))
        threads[lwp] = [(m.group(1), int(m.group(2)), m.group(3)) for m in PY_BT.finditer(block)]
    return threads, out


def test_py_bt_agrees_live_and_on_the_core(tmp_path_factory):
    """Debian's python3.11 with python3.11-dbg: GDB's own py-bt lists the same frames as swk,
    in order, live and on the core (py-bt names a frame by co_name: the qualified name's last
    part)."""
    interp = next(i for i in INTERPRETERS if i.name == "3.11-debian")
    S.need_tool("gdb")
    run = Stopped(interp, tmp_path_factory.mktemp("pybt"))
    try:
        base = [GDB, "-nx", "-batch", "-q", "-iex", "set debuginfod enabled off", "-iex", "set width 0"]
        live, out = _py_bt(base + ["-ex", "thread apply all py-bt", "-p", str(run.pid)])
        core = run.make_core(tmp_path_factory.mktemp("pybt-core"))
        on_core, out_core = _py_bt(base + ["-ex", "thread apply all py-bt", str(interp.python), str(core)])
        for where, gdb_threads, walks in (
                ("live", live, parse_swk_json(swk("bt", "--pid", run.pid, "--py", "--json"))),
                ("core", on_core, parse_swk_json(swk("bt", "--core", core, "--py", "--json")))):
            assert set(gdb_threads) == {w["tid"] for w in walks}, (where, gdb_threads.keys())
            for walk in walks:
                ours = [(f["file"], f["line"], f["function"].rsplit(".", 1)[-1]) for f in python_frames(walk)]
                assert gdb_threads[walk["tid"]] == ours, (where, walk["tid"], gdb_threads[walk["tid"]], ours)
                assert ours, where
    finally:
        run.close()
        if run.core is not None:
            run.core.unlink(missing_ok=True)


BUSY = CORPUS / "py_busy.py"


@pytest.mark.parametrize("interp", INTERPRETERS, ids=IDS)
def test_profile_shows_python_functions(interp, tmp_path):
    """`swk profile --py` of a program spinning in one Python method: every sample's stack
    carries the program's own chain of Python functions (as it recorded it), outermost first
    after the evaluator's callers; the flame graph names them."""
    assert interp.exists, interp.python
    out = tmp_path / "busy.json"
    proc = subprocess.Popen([str(interp.python), str(BUSY), str(out)])
    try:
        deadline = time.time() + 60
        while not out.exists():
            assert proc.poll() is None and time.time() < deadline, "the program did not start spinning"
            time.sleep(0.05)
        record = json.loads(out.read_text())["stack"]
        want = [f"{name} ({os.path.basename(path)})" for name, path, _line in reversed(record)]
        folded, svg = tmp_path / "folded.txt", tmp_path / "flame.svg"
        text = swk("profile", "--pid", proc.pid, "--py", "--duration", "1", "--hz", "30", "--folded", folded,
                   "--svg", svg)
        stacks = [line.rsplit(" ", 1)[0].split(";") for line in folded.read_text().splitlines()]
        assert stacks, text
        for stack in stacks:
            assert [s for s in stack if s.endswith(".py)")] == want, (stack, want)
            if "PyEval_EvalCode" in stack:                # the module runs under the evaluator's callers
                assert stack.index(want[0]) > stack.index("PyEval_EvalCode"), stack
        assert want[-1] in svg.read_text()            # the method it spins in
        plain = tmp_path / "plain.txt"
        swk("profile", "--pid", proc.pid, "--duration", "0.3", "--hz", "30", "--folded", plain)
        assert ".py)" not in plain.read_text()           # without --py: native frames only
    finally:
        proc.kill()
        proc.wait()
