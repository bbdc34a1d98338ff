"""JIT code of a JVM (issue 27): OpenJDK 17 running tests/corpus/JitRecurse.java — compiled and
interpreted Java frames between the JVM's native frames — named from the perf map HotSpot writes
on request (`jcmd PID Compiler.perfmap`) and walked by their frame records
(-XX:+PreserveFramePointer: HotSpot's interpreter and compiled code keep rbp as the frame
pointer), live with `swk bt --pid`.

Oracles, all the JVM's own: the map (each JIT frame named by the latest line covering its pc),
and the program's record of its Java stack (Thread.getStackTrace at the bottom of the recursion:
with -XX:-Inline each Java call is one physical frame, so the JIT frames between JVM_Sleep and
the call stub are the record's frames, Thread.sleep's native frame in place of getStackTrace).
"""
from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

import swk_suite as S
import swk_testlib as T
from test_jit_perfmap import map_lines, oracle_name

PROGRAM = T.CORPUS / "JitRecurse.java"
DEPTH = 30
JAVA_FLAGS = ("-XX:+UnlockDiagnosticVMOptions", "-XX:+PreserveFramePointer")
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


def test_java_frames_named_and_walked(jvm):
    """Between JVM_Sleep and the call stub, every frame is JIT code named as the map names its
    pc; main's frame is the one the call stub called (interpreted, or compiled if HotSpot
    compiled it); the compiled frames are down's, no more of them than the record has; with
    -XX:-Inline exactly one frame per Java frame of the record; then the JVM's native frames to
    the thread's start."""
    inline, pid, record, rows = jvm
    p = T.run_swk_cli(["bt", "--pid", str(pid), "--json", "--all"], timeout=300)
    assert p.returncode == 0, p.stdout[-3000:]
    threads = T.parse_swk_json(p.stdout)
    walk = next((t for t in threads if any(f["function"] == "JVM_Sleep" for f in t["frames"])), None)
    assert walk is not None, p.stdout[-3000:]
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
