"""JIT code named and unwound from a jitdump (issue 27): Node with --perf-prof
--perf-prof-unwinding-info writes jit-PID.dump (and maps it: the marker perf and swk find it
by), one record per compiled function, with the .eh_frame V8 made for its optimised code.

Oracles: the dump itself, read here record by record the plainest way (the name of the latest
code load covering each pc, and which loads carry unwinding data), and V8's new Error().stack.
"""
from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from swk_testlib import GDB, GDB_INIT, PYTHON, REPO, as_profiled, parse_swk_json, profiled_stacks, run_cmd
from test_jit_perfmap import DEPTH, NodeRun, _lookup_pc, check_walk, js_function

import swk_suite as S

FLAGS = ("--perf-prof", "--perf-prof-unwinding-info", "--interpreted-frames-native-stack")


def dump_loads(path: Path):
    """(start, size, name, record number, has unwinding data) of every code load and move."""
    data = path.read_bytes()
    total = struct.unpack_from("<I", data, 8)[0]
    pos, n, rows, pending, names = total, 0, [], False, {}
    while pos + 16 <= len(data):
        rid, size = struct.unpack_from("<II", data, pos)
        if size < 16 or pos + size > len(data):
            break
        body = data[pos + 16:pos + size]
        if rid == 0:
            _p, _t, _v, addr, csize, index = struct.unpack_from("<IIQQQQ", body)
            name = body[40:body.index(b"\0", 40)].decode()
            names[index] = name
            rows.append((addr, csize, name, n, pending))
            pending = False
        elif rid == 1:
            _p, _t, _v, _old, new, csize, index = struct.unpack_from("<IIQQQQQ", body)
            rows.append((new, csize, names.get(index), n, False))
        elif rid == 4:
            usize, hsize, _m = struct.unpack_from("<QQQ", body)
            pending = usize > hsize
        n += 1
        pos += size
    return rows


def latest(rows, pc):
    hits = [r for r in rows if r[0] <= pc < r[0] + r[1]]
    return hits[-1] if hits else None


@pytest.fixture
def node_dump(tmp_path):
    run = NodeRun(tmp_path, 200000, FLAGS)
    run.dump = tmp_path / f"jit-{run.pid}.dump"
    yield run
    run.close()


def check_dump_walk(walk, run):
    rows = dump_loads(run.dump)
    map_rows = [(r[0], r[1], r[2], r[3]) for r in rows]
    check_walk(walk, map_rows, run, _lookup_pc, source="jitdump")
    frames = walk["frames"]
    with_cfi = [f for f in frames if f["kind"] == "jit" and latest(rows, _lookup_pc(f))[4]]
    assert [js_function(f["function"]) for f in with_cfi].count("down") == DEPTH + 1, with_cfi
    # V8's own .eh_frame unwinds each optimised frame: its caller was found by CFI
    for f in with_cfi:
        caller = frames[f["level"] + 1]
        assert caller["trust"] == "cfi" and caller["stepper"] == "DebugStepper", (f, caller)


def test_live_pid(node_dump):
    p = run_cmd([PYTHON, "-m", "swk_plugin", "bt", "--pid", str(node_dump.pid), "--thread", str(node_dump.pid),
                 "--json"], cwd=REPO, timeout=120)
    assert p.returncode == 0, p.stdout
    check_dump_walk(parse_swk_json(p.stdout)[0], node_dump)


def test_swk_bt_in_gdb(node_dump):
    """swk-bt in GDB attached to node; and GDB's own bt, whose frames in JIT code swk's frame
    filter names from the dump (GDB reads no jitdump)."""
    S.need_tool("gdb")
    out = run_cmd([GDB, "-nx", "-batch", "-q", "-iex", "set debuginfod enabled off", "-iex", "set width 0",
                   "-iex", "set pagination off", "-ex", f"source {GDB_INIT}", "-ex", "swk-bt -json",
                   "-ex", "echo SWK-BT\\n", "-ex", "bt", "-p", str(node_dump.pid)], timeout=180).stdout
    walk = parse_swk_json(out)[0]
    check_dump_walk(walk, node_dump)
    bt = out.split("SWK-BT\n", 1)[1]
    lines = {int(m.group(1)): (int(m.group(2), 16), m.group(3))
             for m in re.finditer(r"^#(\d+)\s+0x([0-9a-f]+) in (.*?) \(", bt, re.M)}
    rows = dump_loads(node_dump.dump)
    for f in walk["frames"]:
        if f["kind"] == "jit":
            assert lines.get(f["level"]) == (f["pc"], latest(rows, f["pc"] - 1)[2]), (f, bt)


def test_core_with_jitdump(tmp_path):
    """A core of node (gcore) walked with its jitdump moved elsewhere (--jitdump): the core
    holds the code, the dump its names and V8's .eh_frame, so the walk is the live one's; with
    the dump gone from where the process mapped it and no --jitdump, the JIT frames are unnamed."""
    S.need_tool("gdb")
    run = NodeRun(tmp_path, 200000, FLAGS)
    try:
        core = tmp_path / "node.core"
        out = run_cmd([GDB, "-nx", "-batch", "-q", "-ex", f"gcore {core}", "-p", str(run.pid)], timeout=180).stdout
        assert core.exists(), out
        mapped = tmp_path / f"jit-{run.pid}.dump"
        run.dump = tmp_path / "moved.dump"
        mapped.rename(run.dump)
        run.proc.kill()
        run.proc.wait()
        p = run_cmd([PYTHON, "-m", "swk_plugin", "bt", "--core", str(core), "--thread", str(run.pid), "--json",
                     "--jitdump", str(run.dump)], cwd=REPO, timeout=180)
        assert p.returncode == 0, p.stdout
        check_dump_walk(parse_swk_json(p.stdout)[0], run)
        bare = parse_swk_json(run_cmd([PYTHON, "-m", "swk_plugin", "bt", "--core", str(core), "--thread",
                                       str(run.pid), "--json"], cwd=REPO, timeout=180).stdout)[0]
        anon = [f for f in bare["frames"] if f["library"] is None and f["kind"] != "signal"]
        assert anon and all(f["function"] is None for f in anon), anon
        bad = run_cmd([PYTHON, "-m", "swk_plugin", "bt", "--core", str(core), "--jitdump", str(core)],
                      cwd=REPO, timeout=60)
        assert bad.returncode == 2 and "--jitdump" in bad.stdout, bad.stdout
    finally:
        run.close()
        for f in tmp_path.glob("*.core"):
            f.unlink()


def test_profile(node_dump, tmp_path):
    """`swk profile` of node: each sample of its main thread has the JS frames named from the
    dump, in the walk's order (the dump's CFI unwinding them in the profiler too)."""
    p = run_cmd([PYTHON, "-m", "swk_plugin", "bt", "--pid", str(node_dump.pid), "--thread", str(node_dump.pid),
                 "--json"], cwd=REPO, timeout=120)
    walk = parse_swk_json(p.stdout)[0]
    check_dump_walk(walk, node_dump)
    frames = walk["frames"]
    jit = [i for i, f in enumerate(frames) if f["kind"] == "jit"]
    want = as_profiled(frames[jit[0]:jit[-1] + 1])
    stacks = [s for s in profiled_stacks(node_dump.pid, tmp_path / "folded.txt")
              if s.split(";", 1)[0].endswith(f"-{node_dump.pid}")]
    assert stacks and all(want in s and s.split(";")[1] == "_start" for s in stacks), (want, stacks)


def test_swk_bt_in_lldb(node_dump):
    """swk-bt in LLDB attached to node walks and names as everywhere (the dump's names and CFI);
    LLDB 22's own `bt`, through swk's frame provider, names every frame in no module as the
    dump names its pc (LLDB reads no jitdump)."""
    lldb, version = S.need_lldb()
    out = run_cmd([lldb, "-b", "-x", "-o", f"command script import {REPO / 'lldb_init.py'}", "-o",
                   f"process attach -p {node_dump.pid}", "-o", "swk-bt -json", "-o", "script print('LLDB-BT')",
                   "-o", "bt"], timeout=180).stdout
    walk = parse_swk_json(out)[0]
    check_dump_walk(walk, node_dump)
    bt = out.split("\nLLDB-BT\n", 1)[1]
    assert "swk: the frame provider failed" not in out and "PLEASE submit a bug report" not in out, out
    lines = [(int(m.group(1), 16), (m.group(2) or "").strip())
             for m in re.finditer(r"^\s*\*?\s*frame #\d+: 0x([0-9a-f]+)(?: ([^`\n]*?))?(?: \[synthetic\])?$",
                                  bt.split("\n(lldb)", 1)[0], re.M)]
    jit = [f for f in walk["frames"] if f["kind"] == "jit"]
    assert [pc for pc, _name in lines] == [f["pc"] for f in jit], (bt, jit)
    if version >= (22,):
        rows = dump_loads(node_dump.dump)
        assert all(name == latest(rows, pc - 1)[2] for pc, name in lines), (lines, bt)
