"""JIT code unwound by the CFI a program gave libgcc's __register_frame (issue 27), libgcc linked
into the program (with its symbols) or Debian's stripped libgcc_s.so.1:
tests/corpus/jit_register_frame.c copies two stubs into an anonymous page and registers an
.eh_frame for them.  The chain is known by construction (stop_here c_callback ?? ?? call_jit
main); the registered CFI must be what unwinds the stubs: the same program without the
registration ("noreg") is walked by the other steppers.
"""
from __future__ import annotations

import subprocess
import time

import pytest

import swk_suite as S
from swk_testlib import GDB, GDB_INIT, PYTHON, REPO, as_profiled, build, parse_swk_json, profiled_stacks, run_cmd

CHAIN = ["stop_here", "c_callback", None, None, "call_jit", "main"]
GDB_OPTS = ["-nx", "-batch", "-q", "-iex", "set debuginfod enabled off", "-iex", "set width 0",
            "-iex", "set pagination off", "-iex", "set confirm off", "-iex", "set backtrace past-main on"]


@pytest.fixture(scope="module", params=["static-libgcc", "libgcc_s"])
def prog(request):
    """-static-libgcc: libgcc's lists of registered objects are the program's own symbols; else
    __register_frame is Debian's stripped libgcc_s.so.1's, whose lists have no names."""
    if request.param == "static-libgcc":
        return build(["jit_register_frame.c"], "jit_register_frame", cflags=["-O0", "-g", "-static-libgcc"])
    exe = build(["jit_register_frame.c"], "jit_register_frame_s", cflags=["-O0", "-g", "-shared-libgcc"])
    libs = subprocess.run(["ldd", str(exe)], capture_output=True, text=True).stdout
    assert "libgcc_s.so.1" in libs, libs
    return exe


def check(walk, registered, top=0):
    frames = walk["frames"][top:]
    assert [f["function"] for f in frames[:len(CHAIN)]] == CHAIN, frames
    stubs = frames[2:4]
    assert all(f["library"] is None and f["mapping"] for f in stubs), stubs
    callers = frames[3:5]                      # found from the stubs' frames
    if registered:
        assert [f["trust"] for f in callers] == ["cfi", "cfi"], callers
        assert [f["stepper"] for f in callers] == ["DebugStepper", "DebugStepper"], callers
    else:
        assert all(f["trust"] != "cfi" for f in callers), callers
    assert walk["frames"][-1]["function"] == "_start", walk["frames"]
    assert walk["stop_reason"].startswith("bottom of the stack"), walk["stop_reason"]


@pytest.mark.parametrize("registered", [True, False], ids=["registered", "noreg"])
def test_in_gdb(prog, registered):
    S.need_tool("gdb")
    args = [] if registered else ["noreg"]
    out = run_cmd([GDB, *GDB_OPTS, "-ex", f"source {GDB_INIT}", "-ex", "break stop_here", "-ex", "run",
                   "-ex", "swk-bt -json", "--args", str(prog), *args], timeout=180).stdout
    check(parse_swk_json(out)[0], registered)


def test_live_pid(prog):
    """`swk bt --pid` of the program waiting in stop_here: libgcc's list read from the live process."""
    proc = subprocess.Popen([str(prog), "wait"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        assert proc.stdout.readline() == b"ready\n"
        time.sleep(0.1)
        p = run_cmd([PYTHON, "-m", "swk_plugin", "bt", "--pid", str(proc.pid), "--json"], cwd=REPO, timeout=120)
        assert p.returncode == 0, p.stdout
        walk = parse_swk_json(p.stdout)[0]
        top = next(i for i, f in enumerate(walk["frames"]) if f["function"] == "stop_here")
        check(walk, True, top)
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()


def test_core(prog, tmp_path):
    """A core of the program stopped in stop_here: libgcc's list read from the core's memory."""
    S.need_tool("gdb")
    core = tmp_path / "rf.core"
    run_cmd([GDB, *GDB_OPTS, "-ex", "break stop_here", "-ex", "run", "-ex", f"gcore {core}", str(prog)],
            timeout=180)
    assert core.exists()
    p = run_cmd([PYTHON, "-m", "swk_plugin", "bt", "--core", str(core), "--exe", str(prog), "--json"], cwd=REPO,
                timeout=120)
    assert p.returncode == 0, p.stdout
    check(parse_swk_json(p.stdout)[0], True)


def test_profile(prog, tmp_path):
    """`swk profile` of the parked program: every sample is the whole stack from _start, with the
    registered stubs between call_jit and c_callback as the walk found them (the registered CFI
    unwinds them in the profiler too)."""
    proc = subprocess.Popen([str(prog), "wait"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        assert proc.stdout.readline() == b"ready\n"
        time.sleep(0.1)
        p = run_cmd([PYTHON, "-m", "swk_plugin", "bt", "--pid", str(proc.pid), "--json"], cwd=REPO, timeout=120)
        walk = parse_swk_json(p.stdout)[0]
        top = next(i for i, f in enumerate(walk["frames"]) if f["function"] == "stop_here")
        check(walk, True, top)
        want = as_profiled(walk["frames"][top + 1:top + 5])        # c_callback, the stubs, call_jit
        stacks = profiled_stacks(proc.pid, tmp_path / "folded.txt")
        # each stack whole: from _start (after the thread's name), through main and the stubs
        assert stacks and all(s.split(";")[1] == "_start" and ";main;" + want in s for s in stacks), (want, stacks)
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
