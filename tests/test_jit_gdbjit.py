"""JIT code named and unwound through GDB's JIT interface (issue 27): LLVM's lli running
tests/corpus/jit_recurse.ll, whose functions exist only as the objects lli registers in
``__jit_debug_descriptor``.  swk reads the descriptor and the objects from the target's memory,
names each frame from the object's symbols and unwinds it with the object's CFI.

Oracles: GDB's own bt (GDB reads the same interface), run without swk; and the objects
themselves, dumped from the process and read by readelf.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import swk_suite as S
from swk_testlib import (CORPUS, GDB, GDB_INIT, PYTHON, REPO, as_profiled, native_commands, parse_native,
                         parse_swk_json, profiled_stacks, run_cmd)

PROGRAM = CORPUS / "jit_recurse.ll"
DEPTH = 12
GDB_OPTS = ["-nx", "-batch", "-q", "-iex", "set debuginfod enabled off", "-iex", "set width 0",
            "-iex", "set pagination off", "-iex", "set confirm off", "-iex", "set backtrace past-main on"]

#: GDB Python that writes every object in __jit_debug_descriptor's list to DIR/objN.o.
DUMP = '''
import gdb
inf = gdb.selected_inferior()
d = gdb.parse_and_eval("(unsigned long *)&__jit_debug_descriptor")
e = int(d[2])
n = 0
while e and n < 1000:
    p = gdb.Value(e).cast(gdb.lookup_type("unsigned long").pointer())
    with open("%(dir)s/obj%%d.o" %% n, "wb") as f:
        f.write(bytes(inf.read_memory(int(p[2]), int(p[3]))))
    e = int(p[0])
    n += 1
print("SWK-DUMPED %%d" %% n)
'''


def lli():
    for name in ("lli", "lli-14"):
        if shutil.which(name):
            return shutil.which(name)
    return S.need_tool("lli", "llvm")


def object_functions(directory: Path) -> list[tuple[int, int, str]]:
    """(start, end, name) of every function in the dumped objects, by readelf: a relocatable
    object's symbol is at its section's address (which the JIT set to where it loaded it)
    plus its value."""
    S.need_tool("readelf")
    out = []
    for obj in sorted(directory.glob("obj*.o")):
        sections = {}
        for line in subprocess.run(["readelf", "-SW", str(obj)], capture_output=True, text=True).stdout.splitlines():
            m = re.match(r"\s*\[\s*(\d+)\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s", line)
            if m:
                sections[int(m.group(1))] = int(m.group(3), 16)
        for line in subprocess.run(["readelf", "-sW", str(obj)], capture_output=True, text=True).stdout.splitlines():
            f = line.split()
            if len(f) == 8 and f[3] == "FUNC" and f[6].isdigit():
                start = sections[int(f[6])] + int(f[1], 16)
                out.append((start, start + int(f[2], 0), f[7]))
    assert out, f"no functions in the objects dumped to {directory}"
    return out


def function_of(functions, pc):
    hits = [n for lo, hi, n in functions if lo <= pc < hi]
    return hits[0] if hits else None


def lookup_pc(f):
    return f["pc"] if f["level"] == 0 else f["pc"] - 1


def check_jit_frames(walk, functions, expect_top):
    """Every frame in the JIT's code named as its object names the pc, kind "jit" from
    "gdb-jit"; the chain leaf, down x13, main; each found by the objects' CFI."""
    frames = walk["frames"]
    jit = [f for f in frames if f["library"] is None]
    for f in jit:
        assert f["function"] == function_of(functions, lookup_pc(f)), f
        assert f["kind"] == "jit" and f["name_source"] == "gdb-jit", f
    assert [f["function"] for f in jit] == ["leaf"] + ["down"] * (DEPTH + 1) + ["main"]
    assert jit[0]["level"] == expect_top
    # each JIT frame's caller was found by the CFI the object carries
    after = [frames[f["level"] + 1] for f in jit]
    assert all(c["trust"] == "cfi" for c in after), [(c["level"], c["trust"], c["stepper"]) for c in after]
    names = [f["function"] for f in frames]
    assert names[-1] == "_start" and "runOrcJIT(char const*)" in names, names
    assert walk["stop_reason"].startswith("bottom of the stack"), walk["stop_reason"]


def gdb_frames(out):
    native = parse_native(out)
    return native[min(native)]


def compare_with_gdb(walk, native):
    """swk's frames are GDB's own: the same pcs and, where GDB names JIT code, the same names."""
    ours = [(f["pc"], f["function"]) for f in walk["frames"]]
    gdbs = [(g.pc, g.function) for g in native if not g.virtual]
    assert [p for p, _n in ours] == [p for p, _n in gdbs], (ours, gdbs)
    for (pc, mine), (_pc, theirs) in zip(ours, gdbs):
        if theirs in ("leaf", "down", "main"):
            assert mine == theirs, hex(pc)


def test_fault_in_gdb(tmp_path):
    """lli faulting at the bottom of its recursion, in GDB: swk-bt against GDB's own bt
    (another session, no swk loaded: GDB reads the JIT interface itself), and the names
    against the objects' own symbol tables."""
    S.need_tool("gdb")
    prog = lli()
    plain = run_cmd([GDB, *GDB_OPTS, "-ex", "run", *sum((["-ex", c] for c in native_commands(False)), []),
                     "--args", prog, str(PROGRAM)], timeout=180).stdout
    assert "SIGSEGV" in plain, plain
    native = gdb_frames(plain)
    script = tmp_path / "dump.py"
    script.write_text(DUMP % {"dir": tmp_path})
    out = run_cmd([GDB, *GDB_OPTS, "-ex", f"source {GDB_INIT}", "-ex", "run", "-ex", "swk-bt -json",
                   "-ex", f"source {script}", "--args", prog, str(PROGRAM)], timeout=180).stdout
    assert "SWK-DUMPED" in out, out
    walk = parse_swk_json(out)[0]
    check_jit_frames(walk, object_functions(tmp_path), expect_top=0)
    compare_with_gdb(walk, native)


class LliRun:
    """lli running the program in its waiting mode, stopped in pause() below leaf."""

    def __init__(self):
        self.proc = subprocess.Popen([lli(), str(PROGRAM), "block"], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT)
        line = self.proc.stdout.readline()
        if line != b"ready\n":
            self.close()
            pytest.fail(f"lli did not reach pause(): {line!r}")
        time.sleep(0.2)
        self.pid = self.proc.pid

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()


@pytest.fixture
def lli_run():
    run = LliRun()
    yield run
    run.close()


def test_live_and_core(lli_run, tmp_path):
    """`swk bt --pid` of lli waiting in pause(), against GDB attached to it (GDB's own bt
    and the objects dumped from it); then a core of it, walked by `swk bt --core`."""
    S.need_tool("gdb")
    p = run_cmd([PYTHON, "-m", "swk_plugin", "bt", "--pid", str(lli_run.pid), "--json"], cwd=REPO, timeout=120)
    assert p.returncode == 0, p.stdout
    live = parse_swk_json(p.stdout)[0]
    script = tmp_path / "dump.py"
    script.write_text(DUMP % {"dir": tmp_path})
    core = tmp_path / "lli.core"
    out = run_cmd([GDB, *GDB_OPTS, *sum((["-ex", c] for c in native_commands(False)), []),
                   "-ex", f"source {script}", "-ex", f"gcore {core}", "-p", str(lli_run.pid)], timeout=180).stdout
    functions = object_functions(tmp_path)
    check_jit_frames(live, functions, expect_top=1)
    compare_with_gdb(live, gdb_frames(out))
    try:
        assert core.exists(), out
        c = run_cmd([PYTHON, "-m", "swk_plugin", "bt", "--core", str(core), "--json"], cwd=REPO, timeout=180)
        assert c.returncode == 0, c.stdout
        dead = parse_swk_json(c.stdout)[0]
        check_jit_frames(dead, functions, expect_top=1)
        assert [(f["pc"], f["function"], f["kind"]) for f in dead["frames"]] == \
            [(f["pc"], f["function"], f["kind"]) for f in live["frames"]]
    finally:
        core.unlink(missing_ok=True)


def test_swk_bt_in_gdb_attached(lli_run):
    """swk-bt in GDB attached to the waiting lli: the same frames as `swk bt --pid`."""
    S.need_tool("gdb")
    out = run_cmd([GDB, *GDB_OPTS, "-ex", f"source {GDB_INIT}", "-ex", "swk-bt -json", "-p", str(lli_run.pid)],
                  timeout=180).stdout
    in_gdb = parse_swk_json(out)[0]
    p = run_cmd([PYTHON, "-m", "swk_plugin", "bt", "--pid", str(lli_run.pid), "--json"], cwd=REPO, timeout=120)
    live = parse_swk_json(p.stdout)[0]
    assert [(f["pc"], f["function"], f["kind"], f.get("name_source")) for f in in_gdb["frames"]] == \
        [(f["pc"], f["function"], f["kind"], f.get("name_source")) for f in live["frames"]]


def test_swk_bt_in_lldb(lli_run):
    """swk-bt in LLDB attached to the waiting lli (LLDB reads the same JIT interface)."""
    lldb, _version = S.need_lldb()
    out = run_cmd([lldb, "-b", "-x", "-o", f"command script import {REPO / 'lldb_init.py'}", "-o",
                   f"process attach -p {lli_run.pid}", "-o", "swk-bt -json"], timeout=180).stdout
    in_lldb = parse_swk_json(out)[0]
    p = run_cmd([PYTHON, "-m", "swk_plugin", "bt", "--pid", str(lli_run.pid), "--json"], cwd=REPO, timeout=120)
    live = parse_swk_json(p.stdout)[0]
    assert [(f["pc"], f["function"], f["kind"], f.get("name_source")) for f in in_lldb["frames"]] == \
        [(f["pc"], f["function"], f["kind"], f.get("name_source")) for f in live["frames"]]
    assert [f["function"] for f in in_lldb["frames"] if f["kind"] == "jit"] == \
        ["leaf"] + ["down"] * (DEPTH + 1) + ["main"]


def test_profile(lli_run, tmp_path):
    """`swk profile` of the waiting lli: each sample of its main thread is the whole stack from
    _start, with the JIT's frames (leaf, down x13, main) named from the GDB-JIT objects, in the
    walk's order."""
    p = run_cmd([PYTHON, "-m", "swk_plugin", "bt", "--pid", str(lli_run.pid), "--json"], cwd=REPO, timeout=120)
    walk = parse_swk_json(p.stdout)[0]
    jit = [f for f in walk["frames"] if f["kind"] == "jit"]
    assert [f["function"] for f in jit] == ["leaf"] + ["down"] * (DEPTH + 1) + ["main"], walk["frames"]
    want = as_profiled(jit)
    stacks = [s for s in profiled_stacks(lli_run.pid, tmp_path / "folded.txt")
              if s.startswith(f"lli-{lli_run.pid};")]
    assert stacks and all(s.split(";")[1] == "_start" and want in s for s in stacks), (want, stacks)
