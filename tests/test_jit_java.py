"""JIT code of a JVM (issue 27): OpenJDK 17 running tests/corpus/JitRecurse.java — compiled and
interpreted Java frames between the JVM's native frames — named from the perf map HotSpot writes
on request (`jcmd PID Compiler.perfmap`) and walked by their frame records
(-XX:+PreserveFramePointer: HotSpot's interpreter and compiled code keep rbp as the frame
pointer), live with `swk bt --pid`, in GDB (swk-bt, and GDB's own bt through swk's frame filter) and on
a core (`swk bt --core --perf-map`).

Oracles, all the JVM's own: the map (each JIT frame named by the latest line covering its pc),
and the program's record of its Java stack (Thread.getStackTrace at the bottom of the recursion:
with -XX:-Inline each Java call is one physical frame, so the JIT frames between JVM_Sleep and
the call stub are the record's frames, Thread.sleep's native frame in place of getStackTrace).
"""
from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import swk_suite as S
import swk_testlib as T
from test_jit_perfmap import map_lines, oracle_name

PROGRAM = T.CORPUS / "JitRecurse.java"
DEPTH = 30
#: A small heap and one GC thread: a smaller core (gcore writes every committed page).
JAVA_FLAGS = ("-XX:+UnlockDiagnosticVMOptions", "-XX:+PreserveFramePointer", "-Xmx64m", "-XX:+UseSerialGC")
#: With -XX:-Inline each Java call is one physical frame; with HotSpot's inlining one compiled
#: frame may hold several Java frames.
INLINE = {"no-inline": ("-XX:-Inline",), "inline": ()}


@pytest.fixture(scope="module", params=list(INLINE))
def jvm(request, tmp_path_factory):
    javac = S.need_tool("javac", "openjdk-17-jdk-headless")
    java = S.need_tool("java", "openjdk-17-jdk-headless")
    jcmd = S.need_tool("jcmd", "openjdk-17-jdk-headless")
    d = tmp_path_factory.mktemp("java")
    subprocess.run([javac, "-d", str(d), str(PROGRAM)], check=True, capture_output=True, timeout=300)
    record = d / "record.txt"
    proc = subprocess.Popen([java, *JAVA_FLAGS, *INLINE[request.param], f"-Drecord={record}", "-cp", str(d),
                             "JitRecurse", str(DEPTH)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    map_path = Path(f"/tmp/perf-{proc.pid}.map")
    try:
        deadline = time.time() + 120
        while not (record.exists() and record.stat().st_size):
            if proc.poll() is not None or time.time() > deadline:
                pytest.fail("the JVM did not reach the bottom of its recursion: "
                            + (proc.stdout.read().decode(errors="replace") if proc.poll() is not None else ""))
            time.sleep(0.1)
        time.sleep(0.5)             # from writing the record to Thread.sleep
        out = subprocess.run([jcmd, str(proc.pid), "Compiler.perfmap"], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0 and map_path.exists(), out.stdout + out.stderr
        yield request.param, proc.pid, record.read_text().split(), map_lines(map_path)
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
        try:
            map_path.unlink()
        except OSError:
            pass


def java_thread(threads):
    """The walk of the thread that sleeps at the bottom of the recursion (JVM_Sleep in it)."""
    return next((t for t in threads if any(f["function"] == "JVM_Sleep" for f in t["frames"])), None)


def check_java_walk(walk, inline, record, rows):
    """Between JVM_Sleep and the call stub, every frame is JIT code named as the map names its
    pc; main's frame is the one the call stub called (interpreted, or compiled if HotSpot
    compiled it); the compiled frames are down's, no more of them than the record has; with
    -XX:-Inline exactly one frame per Java frame of the record; then the JVM's native frames to
    the thread's start.  Returns the JIT frames."""
    frames = walk["frames"]
    names = [f["function"] for f in frames]
    top = names.index("JVM_Sleep")
    stub = next(i for i in range(top + 1, len(frames)) if frames[i]["library"] is not None)
    jit = frames[top + 1:stub]
    for f in jit:                    # every frame in the code cache named as the map names its pc
        want = oracle_name(rows, f["pc"] - 1)
        assert want is not None and f["function"] == want and f["kind"] == "jit", (f, want)
    # the call stub, then the JVM's native frames down to the thread's start
    assert names[stub - 1].startswith("StubRoutines") and names[stub].startswith("JavaCalls::call_helper"), names
    assert "JavaMain" in names[stub:] and walk["stop_reason"].startswith("bottom of the stack"), walk["stop_reason"]
    assert record[0].endswith("getStackTrace") and record[-1] == "JitRecurse.main", record
    java = jit[:-1]                  # the Java frames: Thread.sleep's native frame, down's, main's
    assert java[-1]["function"] == "Interpreter" or "JitRecurse.main" in java[-1]["function"], names[top:stub]
    compiled = [f for f in java if f["function"] != "Interpreter" and "JitRecurse.main" not in f["function"]]
    assert compiled and all(f["function"] == "int JitRecurse.down(int, boolean)" for f in compiled), names
    assert len(compiled) <= record.count("JitRecurse.down") and len(java) <= len(record), (names[top:stub], record)
    if inline == "no-inline":        # Thread.sleep's frame in place of getStackTrace's
        assert len(java) == len(record), (names[top:stub], record)
    return jit


def test_java_frames_named_and_walked(jvm):
    """`swk bt --pid --all`: the sleeping thread's walk (check_java_walk)."""
    inline, pid, record, rows = jvm
    p = T.run_swk_cli(["bt", "--pid", str(pid), "--json", "--all"], timeout=300)
    assert p.returncode == 0, p.stdout[-3000:]
    walk = java_thread(T.parse_swk_json(p.stdout))
    assert walk is not None, p.stdout[-3000:]
    check_java_walk(walk, inline, record, rows)


def test_java_profile(jvm, tmp_path):
    """`swk profile` of the JVM: every sample of the sleeping thread has the Java frames named
    and ordered as its walk has them (check_java_walk), down to the thread's start."""
    inline, pid, record, rows = jvm
    p = T.run_swk_cli(["bt", "--pid", str(pid), "--json", "--all"], timeout=300)
    walk = java_thread(T.parse_swk_json(p.stdout))
    assert walk is not None, p.stdout[-3000:]
    want = T.as_profiled(check_java_walk(walk, inline, record, rows))
    stacks = [s for s in T.profiled_stacks(pid, tmp_path / "folded.txt", duration=1, hz=10) if ";JVM_Sleep" in s]
    assert stacks and all(want in s and ";JavaMain;" in s for s in stacks), (want, stacks)


@pytest.fixture(scope="module")
def jvm_in_gdb(jvm, tmp_path_factory):
    """One GDB session attached to the JVM: swk-bt of every thread, GDB's own bt of every
    thread (swk loaded: its frame filter names JIT code from the map), and a core (gcore);
    the perf map copied beside the core, as a core's map would be kept."""
    S.need_tool("gdb")
    _inline, pid, _record, _rows = jvm
    d = tmp_path_factory.mktemp("java-core")
    core, saved = d / "java.core", d / "copied.map"
    shutil.copy(f"/tmp/perf-{pid}.map", saved)
    out = T.run_cmd([T.GDB, "-nx", "-batch", "-q", "-iex", "set debuginfod enabled off", "-iex", "set width 0",
                     "-iex", "set pagination off",
                     "-ex", f"source {T.GDB_INIT}", "-ex", "swk-bt -all -json", "-ex", "echo GDB-BT\\n",
                     "-ex", "thread apply all bt", "-ex", "echo GDB-END\\n", "-ex", f"gcore {core}",
                     "-p", str(pid)], timeout=600).stdout
    try:
        yield out, core, saved
    finally:
        for f in (core, saved):
            f.unlink(missing_ok=True)


def test_java_in_gdb(jvm, jvm_in_gdb):
    """swk-bt in GDB attached to the JVM walks and names the sleeping thread as the CLI does;
    GDB's own bt of that thread, with swk loaded, shows each of its JIT frames at swk's pc with
    the map's name."""
    inline, _pid, record, rows = jvm
    out, _core, _saved = jvm_in_gdb
    walk = java_thread(T.parse_swk_json(out.split("GDB-BT\n", 1)[0]))
    assert walk is not None, out[-3000:]
    jit = check_java_walk(walk, inline, record, rows)
    bts = out.split("GDB-BT\n", 1)[1].split("GDB-END\n", 1)[0]
    bt = next((b for b in re.split(r"^Thread \d+ ", bts, flags=re.M) if " JVM_Sleep " in b), None)
    assert bt is not None, bts[-3000:]
    lines = {int(m.group(1)): (int(m.group(2), 16), m.group(3))
             for m in re.finditer(r"^#(\d+)\s+0x([0-9a-f]+) in (.*) \(\)$", bt, re.M)}
    for f in jit:
        assert lines.get(f["level"]) == (f["pc"], oracle_name(rows, f["pc"] - 1)), (f, bt)


def test_java_core_with_perf_map(jvm, jvm_in_gdb):
    """The JVM's core (gcore) walked by `swk bt --core --perf-map` with the map copied beside
    it: the sleeping thread as live (check_java_walk)."""
    inline, _pid, record, rows = jvm
    _out, core, saved = jvm_in_gdb
    assert core.exists(), _out[-3000:]
    p = T.run_swk_cli(["bt", "--core", str(core), "--perf-map", str(saved), "--json"], timeout=600)
    assert p.returncode == 0, p.stdout[-3000:]
    walk = java_thread(T.parse_swk_json(p.stdout))
    assert walk is not None, p.stdout[-3000:]
    check_java_walk(walk, inline, record, rows)
