"""JIT code named from perf maps (issue 27): Node with --perf-basic-prof running a recursion
that blocks at its bottom (tests/corpus/jit_recurse.js), walked live (`swk bt --pid`), in GDB
(swk-bt) and on a core (`swk bt --core --perf-map`).

Oracles, all the runtime's own: the map node wrote (/tmp/perf-PID.map: each JIT frame must
carry the name of the latest line covering its pc), and V8's own account of the stack
(new Error().stack, written by the program at its bottom: the JS functions in order).
"""
from __future__ import annotations

import ast
import html
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

import swk_suite as S
from swk_testlib import CORPUS, GDB, GDB_INIT, PYTHON, REPO, parse_swk_json, run_cmd

from swk_plugin.jit.perfmap import PerfMap, open_perf_map, paint, parse_lines

PROGRAM = CORPUS / "jit_recurse.js"
DEPTH = 12
#: node's flags: every JIT function in the map; interpreted functions each with its own copy
#: of the interpreter's entry trampoline, so they are in the map too.
FLAGS = ("--perf-basic-prof", "--interpreted-frames-native-stack")


class NodeRun:
    """node running jit_recurse.js, blocked at the bottom of its recursion."""

    def __init__(self, workdir: Path, warm: int, flags=FLAGS):
        node = S.need_tool("node", "nodejs")
        self.warm = warm
        self.stack_file = workdir / "stack.txt"
        self.proc = subprocess.Popen([node, *flags, str(PROGRAM), str(DEPTH), str(self.stack_file), str(warm)],
                                     cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.pid = self.proc.pid
        self.map_path = Path(f"/tmp/perf-{self.pid}.map")
        deadline = time.time() + 60
        while not self.stack_file.exists():
            if self.proc.poll() is not None or time.time() > deadline:
                out = self.proc.stdout.read().decode(errors="replace") if self.proc.poll() is not None else ""
                self.close()
                pytest.fail(f"node did not reach the bottom of its recursion: {out}")
            time.sleep(0.05)
        time.sleep(0.3)         # from writing the file to Atomics.wait

    def js_stack(self) -> list[str]:
        """V8's own stack: the function of each "at F (...)" line, innermost first."""
        names = []
        for line in self.stack_file.read_text().splitlines()[1:]:
            m = re.match(r"\s*at (?:(.*?) \()?(.*?)\)?$", line)
            if m:
                names.append((m.group(1) or "", m.group(2)))
        return names

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()
        try:
            self.map_path.unlink()
        except OSError:
            pass


@pytest.fixture(params=[0, 200000], ids=["interpreted", "optimised"])
def node_run(request, tmp_path):
    run = NodeRun(tmp_path, request.param)
    yield run
    run.close()


def map_lines(path: Path):
    """The map's lines as (start, size, name, line number): read here the simplest way, for
    the oracle (later lines win where ranges overlap)."""
    rows = []
    for i, line in enumerate(Path(path).read_text().splitlines()):
        start, size, name = line.split(" ", 2)
        rows.append((int(start, 16), int(size, 16), name, i))
    return rows


def oracle_name(rows, pc):
    """The name the map gives ``pc``: the last line whose range holds it."""
    hits = [r for r in rows if r[0] <= pc < r[0] + r[1]]
    return hits[-1][2] if hits else None


def js_function(map_name: str) -> str:
    """The function a V8 map name is about: "JS:*down /x.js:20:14" is down (V8's tier marks
    ~ ^ + * after "JS:"; a script's top level has an empty name)."""
    m = re.match(r"JS:[~^+*]?(.*) \S+$", map_name)
    return m.group(1) if m else map_name


def check_walk(walk: dict, map_rows, run: NodeRun, lookup_pc, source="perf-map"):
    """Every frame in JIT code named exactly as the map names its pc (kind "jit", the name's
    source "perf-map"); the program's JS frames in V8's own order; the walk complete."""
    frames = walk["frames"]
    jit = [f for f in frames if f["library"] is None and f["kind"] != "signal"]
    assert jit, "no frame in JIT code"
    for f in jit:
        want = oracle_name(map_rows, lookup_pc(f))
        assert want is not None, f"frame #{f['level']} at 0x{f['pc']:x}: no map line covers it"
        assert f["function"] == want, f"#{f['level']} 0x{f['pc']:x}: {f['function']!r}, the map says {want!r}"
        assert f["kind"] == "jit" and f["name_source"] == source, f
    # the program's own functions, innermost first, as V8 lists them (a frame V8 left
    # interpreted without a copy of the trampoline is its shared builtin: not in the map)
    script = str(PROGRAM)
    v8 = [name.split(".")[-1] if name != "Object.<anonymous>" else "" for name, where in run.js_stack()
          if where.startswith(script + ":")]
    ours = [js_function(f["function"]) for f in jit if f["function"].split(" ")[-1].startswith(script + ":")]
    if run.warm:
        assert ours == v8[len(v8) - len(ours):], (ours, v8)       # leaf deoptimised: the shared trampoline
        assert ours.count("down") == DEPTH + 1
    else:
        assert ours == v8, (ours, v8)
    names = [f["function"] for f in frames]
    assert "node::Start(int, char**)" in names and names[-1] == "_start", names
    assert names.index("node::Start(int, char**)") > max(f["level"] for f in jit)
    assert walk["stop_reason"].startswith("bottom of the stack"), walk["stop_reason"]


def _lookup_pc(f):
    return f["pc"] if f["level"] == 0 else f["pc"] - 1


def test_parser_reads_every_line_and_later_lines_win(node_run):
    """Every line of node's map parsed; at each line's start the map answers the last line
    covering it (checked against a plain scan of the file)."""
    rows = map_lines(node_run.map_path)
    pm = PerfMap.read(str(node_run.map_path))
    assert len(pm) == len(rows) and pm.lines == len(rows)
    assert [(e.start, e.size, e.name) for e in pm.entries] == [r[:3] for r in rows]
    by_start = {}
    for r in rows:
        for addr in (r[0], r[0] + r[1] - 1):
            by_start[addr] = oracle_name(rows, addr)
    for addr, want in by_start.items():
        got = pm.lookup(addr)
        assert (got.name if got else None) == want, hex(addr)
    spans = paint(pm.entries)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))


def test_a_map_that_grew_is_read_from_where_it_was_left(node_run, tmp_path):
    """The map is read again only when it changed, and then only its new lines: node's
    map copied in two parts gives the same entries as the whole."""
    data = node_run.map_path.read_bytes()
    cut = data.index(b"\n", len(data) // 2) + 1
    copy = tmp_path / "grow.map"
    copy.write_bytes(data[:cut + 7])                # half a line: left for the next read
    first = open_perf_map(str(copy))
    assert open_perf_map(str(copy)) is first        # unchanged: the same map
    assert first.offset == cut
    with open(copy, "ab") as f:
        f.write(data[cut + 7:])
    whole = open_perf_map(str(copy))
    assert whole is not first and whole.offset == len(data)
    assert [(e.start, e.size, e.name) for e in whole.entries] == \
        [(e.start, e.size, e.name) for e in PerfMap.read(str(node_run.map_path)).entries]
    copy.write_bytes(data[:cut])                    # rewritten (jcmd's maps are): read afresh
    os.utime(copy, ns=(time.time_ns(), time.time_ns() + 10**9))
    again = open_perf_map(str(copy))
    assert len(again) == len(first)


def test_live_pid_names_every_js_frame(node_run):
    p = run_cmd([PYTHON, "-m", "swk_plugin", "bt", "--pid", str(node_run.pid), "--thread", str(node_run.pid),
                 "--json"], cwd=REPO, timeout=120)
    assert p.returncode == 0, p.stdout
    walk = parse_swk_json(p.stdout)[0]
    check_walk(walk, map_lines(node_run.map_path), node_run, _lookup_pc)
    text = run_cmd([PYTHON, "-m", "swk_plugin", "bt", "--pid", str(node_run.pid), "--thread",
                    str(node_run.pid)], cwd=REPO, timeout=120).stdout
    # a name without debug information, as GDB shows one: "#N  0x... in NAME ()"
    down = next(f for f in walk["frames"] if f["kind"] == "jit" and js_function(f["function"]) == "down")
    assert re.search(rf"^#{down['level']}\s+0x{down['pc']:016x} in {re.escape(down['function'])} \(\)$", text,
                     re.M), text


def test_swk_bt_in_gdb_names_every_js_frame(node_run):
    """swk-bt in GDB attached to node; and GDB's own bt, whose frames in JIT code swk's frame
    filter names from the map (`bt -no-filters`: GDB's ?? as before)."""
    S.need_tool("gdb")
    out = run_cmd([GDB, "-nx", "-batch", "-q", "-iex", "set debuginfod enabled off", "-iex", "set width 0",
                   "-iex", "set pagination off", "-ex", f"source {GDB_INIT}", "-ex", "swk-bt -json",
                   "-ex", "echo SWK-BT\\n", "-ex", "bt", "-ex", "echo SWK-RAW\\n", "-ex", "bt -no-filters",
                   "-p", str(node_run.pid)], timeout=180).stdout
    walk = parse_swk_json(out)[0]
    rows = map_lines(node_run.map_path)
    check_walk(walk, rows, node_run, _lookup_pc)
    bt, raw = out.split("SWK-BT\n", 1)[1].split("SWK-RAW\n", 1)
    lines = {int(m.group(1)): (int(m.group(2), 16), m.group(3))
             for m in re.finditer(r"^#(\d+)\s+0x([0-9a-f]+) in (.*?) \(", bt, re.M)}
    jit = [f for f in walk["frames"] if f["kind"] == "jit"]
    for f in jit:
        assert lines.get(f["level"]) == (f["pc"], oracle_name(rows, f["pc"] - 1)), (f, bt)
    assert re.search(rf"^#{jit[0]['level']}\s+0x{jit[0]['pc']:016x} in \?\? \(\)$", raw, re.M), raw


def test_core_with_perf_map(tmp_path):
    """A core of the same program walked with its map copied elsewhere (--perf-map): the
    names are the map's; without the map the frames are still walked, unnamed."""
    S.need_tool("gdb")
    run = NodeRun(tmp_path, 0)
    try:
        core = tmp_path / "node.core"
        out = run_cmd([GDB, "-nx", "-batch", "-q", "-ex", f"gcore {core}", "-p", str(run.pid)], timeout=180).stdout
        assert core.exists(), out
        saved = tmp_path / "copied.map"
        shutil.copy(run.map_path, saved)
        run.proc.send_signal(signal.SIGKILL)
        run.proc.wait()
        run.map_path.unlink()                       # the default place has no map now
        p = run_cmd([PYTHON, "-m", "swk_plugin", "bt", "--core", str(core), "--thread", str(run.pid), "--json",
                     "--perf-map", str(saved)], cwd=REPO, timeout=180)
        assert p.returncode == 0, p.stdout
        check_walk(parse_swk_json(p.stdout)[0], map_lines(saved), run, _lookup_pc)
        bare = parse_swk_json(run_cmd([PYTHON, "-m", "swk_plugin", "bt", "--core", str(core), "--thread",
                                       str(run.pid), "--json"], cwd=REPO, timeout=180).stdout)[0]
        named = parse_swk_json(p.stdout)[0]["frames"]
        assert [f["pc"] for f in bare["frames"] if f["library"] is None] == \
            [f["pc"] for f in named if f["library"] is None]
        assert all(f["function"] is None for f in bare["frames"] if f["library"] is None)
        assert bare["frames"][-1]["function"] == "_start"
        missing = run_cmd([PYTHON, "-m", "swk_plugin", "bt", "--core", str(core), "--perf-map",
                           str(tmp_path / "none.map")], cwd=REPO, timeout=60)
        assert missing.returncode == 2 and "--perf-map" in missing.stdout
    finally:
        run.close()
        for f in tmp_path.glob("*.core"):
            f.unlink()


def test_swk_bt_in_lldb_names_every_js_frame(node_run):
    """swk-bt in LLDB attached to node: the JSON as everywhere, and the text lines of JIT
    frames swk's own (LLDB reads no perf map: its line would have no name).  And LLDB 22's own
    `bt` with swk's frame provider: every frame in no module named as the map names its pc,
    the same frames as swk-bt's, in its order (LLDB 16 has no providers: no name there); a JIT
    frame can be selected, and the SB API gives its name."""
    lldb, version = S.need_lldb()
    lldb_init = REPO / "lldb_init.py"
    api = ("script print('SB:', [(f.GetPC(), f.GetFunctionName()) for f in lldb.process.GetThreadAtIndex(0)"
           " if f.GetModule().IsValid() is False])")
    out = run_cmd([lldb, "-b", "-x", "-o", f"command script import {lldb_init}", "-o",
                   f"process attach -p {node_run.pid}", "-o", "swk-bt -json", "-o", "swk-bt", "-o", "script print('LLDB-BT')",
                   "-o", "bt", "-o", "script print('LLDB-SELECT')", "-o", "frame select 9", "-o", api],
                  timeout=180).stdout
    walk = parse_swk_json(out)[0]
    rows = map_lines(node_run.map_path)
    check_walk(walk, rows, node_run, _lookup_pc)
    for f in walk["frames"]:
        if f["kind"] == "jit":
            assert re.search(rf"frame #{f['level']}: 0x{f['pc']:016x} {re.escape(f['function'])} \+ \d+$", out,
                             re.M), (f, out)
    bt, select = out.split("\nLLDB-BT\n", 1)[1].split("\nLLDB-SELECT\n", 1)
    assert "swk: the frame provider failed" not in out and "PLEASE submit a bug report" not in out, out
    # LLDB's own lines for frames in no module: "frame #N: 0xPC NAME [synthetic]" (no module`)
    lines = [(int(m.group(1)), int(m.group(2), 16), (m.group(3) or "").strip())
             for m in re.finditer(r"^\s*\*?\s*frame #(\d+): 0x([0-9a-f]+)(?: ([^`\n]*?))?(?: \[synthetic\])?$",
                                  bt.split("\n(lldb)", 1)[0], re.M)]
    jit = [f for f in walk["frames"] if f["kind"] == "jit"]
    assert [pc for _n, pc, _name in lines] == [f["pc"] for f in jit], (bt, jit)
    if version >= (22,):
        for n, pc, name in lines:
            assert name == oracle_name(rows, pc - 1), (n, hex(pc), name, bt)
        sb = ast.literal_eval(select.split("SB: ", 1)[1].splitlines()[0])
        assert sb == [(pc, name) for _n, pc, name in lines], (sb, lines)
        n9 = next(ln for ln in lines if ln[0] == 9) if any(ln[0] == 9 for ln in lines) else None
        if n9 is not None:
            assert re.search(rf"^frame #9: 0x{n9[1]:016x} {re.escape(n9[2])}", select, re.M), select
    else:
        assert all(not name for _n, _pc, name in lines), bt


def test_profile_names_js_frames(node_run, tmp_path):
    """`swk profile`: the folded stacks (a flame graph's input) carry the map's names, in
    the order the walk found them (outermost first)."""
    p = run_cmd([PYTHON, "-m", "swk_plugin", "bt", "--pid", str(node_run.pid), "--thread", str(node_run.pid),
                 "--json"], cwd=REPO, timeout=120)
    walk = parse_swk_json(p.stdout)[0]
    check_walk(walk, map_lines(node_run.map_path), node_run, _lookup_pc)
    js = [f["function"].replace(";", ":") for f in walk["frames"] if f["kind"] == "jit"]
    folded = tmp_path / "folded.txt"
    svg = tmp_path / "flame.svg"
    prof = run_cmd([PYTHON, "-m", "swk_plugin", "profile", "--pid", str(node_run.pid), "--duration", "1",
                    "--hz", "20", "--folded", str(folded), "--svg", str(svg)], cwd=REPO, timeout=120)
    assert prof.returncode == 0, prof.stdout
    main = [line for line in folded.read_text().splitlines() if "JS:" in line]
    assert main, folded.read_text()
    assert all(";".join(reversed(js)) in line for line in main), (js, main)
    assert html.escape(next(n for n in js if js_function(n) == "down"), quote=False) in svg.read_text()


def test_stale_map_of_a_reused_pid_is_not_read():
    """A perf map stays in /tmp after its JIT exits, and the PID comes round again: a map last
    written before the process now bearing the PID started (its start in /proc) is not that
    process's and is not read (before, LLDB's bt in such a process hung on the JIT frames swk's
    provider made of another program's names); one written after it started is."""
    from swk_plugin.jit import perfmap
    proc = subprocess.Popen(["sleep", "100"])
    path = Path(perfmap.default_path(proc.pid))
    try:
        time.sleep(0.3)
        path.write_text("1000 40 LazyCompile:*not_this_process\n")
        old = time.time() - 3600
        os.utime(path, (old, old))
        assert perfmap.stale(str(path), proc.pid)
        os.utime(path, None)
        assert not perfmap.stale(str(path), proc.pid)
    finally:
        proc.kill()
        proc.wait()
        path.unlink(missing_ok=True)
    assert not perfmap.stale(str(path), proc.pid)          # no map, no process: nothing to say
