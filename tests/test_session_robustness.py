"""Issue 8, robustness: a process that is running, a thread that has vanished, and an
error inside swk each give one clear line — never a traceback, never the end of the
debugger session.

GDB
  * non-stop mode (robust_exiter: thread 1 stopped, threads 2 and 3 running):
    swk-bt -all walks thread 1 and gives each running thread one line (JSON: a line
    with no frames and an "error"); swk-bt on a running thread is one line; then
    thread 2 exits (while GDB waits for commands) and swk-bt -all lists the threads
    that are left, swk-bt with no thread selected says so;
  * all-stop `continue &`: swk-bt and swk-bt -all say the program is running; after
    `interrupt` they walk the new stop;
  * internal errors: every stepper raising, the walk itself raising (RuntimeError,
    SystemExit, MemoryError, RecursionError), swk's unwinder raising SystemExit,
    and garbage registers written by the test (`set $rsp = 0`, `set $pc = 0`, ...):
    one line each, and the next GDB command works.
LLDB
  * async mode, `process continue`: swk-bt, swk-bt -all -json and (LLDB 22) bt say
    the process is running, in one line; after `process interrupt` swk-bt walks;
  * internal errors in swk-bt (the walk raising RuntimeError or SystemExit, every
    stepper raising): one line, and LLDB goes on (the provider's own failure is
    tests/test_lldb.py::test_provider_failure_reported_once).
"""
from __future__ import annotations

import json
import re

import pytest

import hard_cases as H
import robust_lib as R
import swk_testlib as T

pytestmark = [pytest.mark.swk]

HARD = H.HardCorpus()


def no_traceback(text: str) -> None:
    assert "Traceback" not in text and "Python Exception" not in text, text[-4000:]


def lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.strip()]


_ASYNC = re.compile(r"^\[Thread 0x[0-9a-f]+ \(LWP \d+\) exited\]$|^The current thread .*has terminated")


def cmd_lines(g: R.GdbDriver, command: str) -> list[str]:
    """What ``command`` printed, less GDB's own asynchronous notes (a thread's exit)."""
    return [ln for ln in lines(g.cmd(command)) if not _ASYNC.match(ln)]


# --------------------------------------------------------------------------
# GDB: running and vanished threads
# --------------------------------------------------------------------------

def test_gdb_non_stop_running_and_exited_threads(tmp_path):
    R.need_gdb()
    flag = tmp_path / "leave-now"
    with R.GdbDriver(R.exiter_exe(), iex=["set non-stop on"]) as g:
        out = g.cmd("break stop_here")
        out = g.cmd(f"run {flag}", timeout=120)
        assert re.search(r"hit Breakpoint 1, stop_here", out), out

        text = g.cmd("swk-bt -all")
        no_traceback(text)
        ls = lines(text)
        assert ls[0].startswith("Thread 1 (LWP ") and ls[1].startswith("#0  stop_here (x=1)"), text
        running = [ln for ln in ls if re.fullmatch(r"Thread [23] \(LWP \d+\) is running: interrupt it to walk "
                                                   r"its stack", ln)]
        assert len(running) == 2, text

        walks = T.parse_swk_json(g.cmd("swk-bt -all -json"))
        assert [w["thread"] for w in walks] == [1, 2, 3]
        assert walks[0]["frames"][0]["function"] == "stop_here"
        for w in walks[1:]:
            assert w["frames"] == [] and "is running" in w["stop_reason"] and "running" in w["error"], w

        assert "[Switching to thread 2" in g.cmd("thread 2")
        ls = lines(g.cmd("swk-bt"))
        assert ls == ["swk-bt: the selected thread is running: interrupt it first"], ls

        # thread 2 (selected) exits now; GDB tells it while it waits for the next command
        since = g.mark()
        g.cmd(f"shell touch {flag}")
        g.wait_for(r"^\[Thread 0x[0-9a-f]+ \(LWP \d+\) exited\]", since=since, timeout=60)

        ls = cmd_lines(g, "swk-bt")
        assert len(ls) == 1 and ls[0].startswith("swk-bt: no thread is selected"), ls
        ls = cmd_lines(g, "swk-bt -all")
        text = "\n".join(ls)
        no_traceback(text)
        assert "internal error" not in text, text
        assert ls[0].startswith("Thread 1 (LWP ") and ls[1].startswith("#0  stop_here (x=1)"), text
        assert [ln for ln in ls if ln.startswith("Thread ")][1:] == \
            [ln for ln in ls if re.fullmatch(r"Thread 3 \(LWP \d+\) is running: interrupt it to walk its stack", ln)]
        walks = T.parse_swk_json(g.cmd("swk-bt -all -json"))
        assert [w["thread"] for w in walks] == [1, 3], walks

        g.cmd("thread 1")
        ls = lines(g.cmd("swk-bt"))
        assert ls[0].startswith("#0  stop_here (x=1)") and "in main (" in ls[1], ls
        assert lines(g.cmd("bt"))[0].startswith("#0  stop_here (x=1)")
    no_traceback(g.text())


def test_gdb_background_continue_then_interrupt():
    """All-stop mode, `continue &`: every thread runs (robust_exiter's spinner never ends)."""
    R.need_gdb()
    with R.GdbDriver(R.exiter_exe()) as g:
        g.cmd("break stop_here")
        g.cmd("run /nonexistent-swk-flag", timeout=120)
        first = lines(g.cmd("swk-bt"))
        assert first[0].startswith("#0  stop_here (x=1)"), first
        g.cmd("delete")
        since = g.mark()
        g.cmd("continue &")
        for cmd, want in (("swk-bt", "swk-bt: the selected thread is running: interrupt it first"),
                          ("swk-bt -all", "swk-bt: the program is running: interrupt it first"),
                          ("swk-bt -all -json", "swk-bt: the program is running: interrupt it first")):
            ls = lines(g.cmd(cmd))
            assert ls == [want], (cmd, ls)
        g.cmd("interrupt")
        g.wait_for(r"received signal SIGINT|stopped\.", since=since, timeout=60)
        text = g.cmd("swk-bt -all -json")
        no_traceback(text)
        walks = T.parse_swk_json(text)
        assert len(walks) == 3 and all(w["frames"] and "error" not in w for w in walks), walks
    no_traceback(g.text())


# --------------------------------------------------------------------------
# GDB: errors inside swk
# --------------------------------------------------------------------------

BREAK_STEPPERS = r'''
python
from swk_plugin.backends.gdb.session import SESSION
for _s in SESSION.walker().stepper_group.steppers:
    def _boom(frame, _name=_s.name):
        raise ZeroDivisionError("injected into " + _name)
    _s.get_caller_frame = _boom
end
'''


def _gdb_lines(exe, stop, commands, tmp_path, script=None):
    marked = []
    for i, c in enumerate(commands):
        marked += [f"echo SWK-CMD-{i}\\n", c]
    marked.append("echo SWK-CMD-END\\n")
    pre = [f"source {script}"] if script else []
    p = T.run_cmd(T.gdb_argv(exe, [*stop, *pre, *marked], swk=True), timeout=180)
    out = p.stdout
    assert "SWK-CMD-END" in out, out[-4000:]
    parts = re.split(r"^SWK-CMD-(?:\d+|END)\n", out, flags=re.M)[1:]
    return [lines(x) for x in parts[:len(commands)]], out, p.returncode


@pytest.fixture(scope="module")
def chain():
    R.need_gdb()
    corpus = T.Corpus()
    case = T.CASES_BY_ID["chain-O0g"]
    return corpus.exe(case), corpus.stop_cmds(case)


def test_gdb_every_stepper_raising(chain, tmp_path):
    exe, stop = chain
    script = tmp_path / "break.gdb"
    script.write_text(BREAK_STEPPERS)
    res, out, rc = _gdb_lines(exe, stop, ["set swk debug on", "swk-bt -json", "set swk debug off", "swk-bt",
                                          "bt 2", "info frame"], tmp_path, script)
    no_traceback(out)
    walk = json.loads(res[1][0])
    assert len(walk["frames"]) == 1
    assert any(ln.startswith("swk debug: ") and "ZeroDivisionError" in ln for ln in res[1]), res[1]
    assert res[3][0].startswith("#0  stop_here"), res[3]
    assert res[3][-1].startswith("Backtrace stopped: no stepper could find the caller"), res[3]
    assert "internal error (ZeroDivisionError: injected into" in res[3][-1]
    assert res[4][0].startswith("#0  stop_here") and len(res[4]) >= 2
    assert res[5][0].startswith("Stack level 0")
    assert rc == 0


@pytest.mark.parametrize("exc", ["RuntimeError('injected')", "SystemExit(3)", "MemoryError()",
                                 "RecursionError('maximum recursion depth exceeded')"])
def test_gdb_the_walk_raising(chain, tmp_path, exc):
    exe, stop = chain
    script = tmp_path / "break.gdb"
    script.write_text("python\nimport swk_plugin.walker as _w\n"
                      "_orig = _w.Walker.frames_from\n"
                      f"def _boom(self, *a, **k):\n    raise {exc}\n"
                      "_w.Walker.frames_from = _boom\nend\n")
    restore = "python _w.Walker.frames_from = _orig"
    res, out, rc = _gdb_lines(exe, stop, ["swk-bt", "swk-bt -all -json", "bt 1", "info frame", restore, "swk-bt 1"],
                              tmp_path, script)
    no_traceback(out)
    name = exc.split("(", 1)[0]
    for r in res[:2]:
        assert len(r) == 1 and r[0].startswith(f"swk-bt: internal error: {name}"), r
        assert r[0].endswith("(set swk debug on for details)"), r
    assert res[2][0].startswith("#0  stop_here")
    assert res[3][0].startswith("Stack level 0")
    assert res[5][0].startswith("#0  stop_here") and res[5][1] == "(More stack frames follow...)"
    assert rc == 0


def test_gdb_unwinder_raising_system_exit(tmp_path):
    R.need_gdb()
    case = H.HARD_BY_ID["hard-nocfi-pie"].case
    script = tmp_path / "break.gdb"
    script.write_text("python\nfrom swk_plugin.backends.gdb import unwinder\n"
                      "def _boom(pc):\n    raise SystemExit(5)\n"
                      "unwinder.UNWINDER._classify = _boom\nunwinder.UNWINDER.forget()\n"
                      "gdb.invalidate_cached_frames()\nend\n")
    res, out, rc = _gdb_lines(HARD.exe(case), HARD.stop_cmds(case), ["bt 3", "up", "swk-bt"], tmp_path, script)
    no_traceback(out)
    assert out.count("swk unwinder: declined a frame after an internal error: SystemExit: 5") == 1, out[-3000:]
    assert res[2][:2] and res[2][0].startswith("#0  ") and "stop_here" in res[2][0]
    assert rc == 0


GARBAGE = [
    ("rsp zero", ["set var $rsp = 0"]),
    ("rsp misaligned", ["set var $rsp = $rsp + 3"]),
    ("rsp non-canonical", ["set var $rsp = 0x8000000000000000"]),
    ("rsp at the top", ["set var $rsp = 0xfffffffffffffff8"]),
    ("pc zero", ["set var $pc = 0"]),
    ("pc in data", ["set var $pc = $rsp"]),
    ("rbp loop", ["set var $rbp = $rsp"]),
    ("everything", ["set var $pc = 0x1234", "set var $rsp = 0x10", "set var $rbp = -1"]),
]


@pytest.mark.parametrize("writes", [w for _n, w in GARBAGE], ids=[n for n, _w in GARBAGE])
def test_gdb_garbage_registers(chain, tmp_path, writes):
    """The test writes nonsense into the registers (swk itself never writes): swk-bt still
    answers in its usual form, or with one line, and GDB goes on."""
    exe, stop = chain
    res, out, rc = _gdb_lines(exe, stop, [*writes, "swk-bt", "swk-bt -json -full", "swk-bt -v -all", "bt 3",
                                          "echo ALIVE\\n"], tmp_path)
    no_traceback(out)
    n = len(writes)
    text, js = res[n], res[n + 1]
    assert text and (text[0].startswith("#0  ") or (len(text) == 1 and text[0].startswith("swk-bt: "))), text
    assert "internal error" not in "\n".join(text + js + res[n + 2]), out[-3000:]
    if text[0].startswith("#0  "):
        walk = json.loads(js[0])
        assert walk["frames"] and isinstance(walk["stop_reason"], str)
    assert res[n + 4] == ["ALIVE"]
    assert rc == 0


# --------------------------------------------------------------------------
# LLDB
# --------------------------------------------------------------------------

def _wait_state(state: str) -> str:
    """An LLDB command that waits (up to 30 s) for the selected process's state."""
    return ("script exec(\"import time\\nfor _ in range(600):\\n    if lldb.debugger.GetSelectedTarget()"
            f".GetProcess().GetState() == lldb.{state}: break\\n    time.sleep(0.05)\")")


def _wait_stopped() -> str:
    return _wait_state("eStateStopped")


def _wait_running() -> str:
    """Async `process continue` returns before LLDB has resumed the process: until then
    it is still stopped, and walking it is right."""
    return _wait_state("eStateRunning")


def test_lldb_running_process():
    R.need_lldb()
    exe = R.exiter_exe()
    cmds = [f"target create {exe}", "breakpoint set -n stop_here", "process launch -- /nonexistent-swk-flag",
            f"command script import {R.lldb_try_script()}",
            R.lldb_try("swk-bt -gdb", "stopped"),
            "breakpoint delete -f", "script lldb.debugger.SetAsync(True)", "process continue",
            _wait_running(), R.lldb_try("swk-bt", "bt1"), R.lldb_try("swk-bt -all -json", "bt2"),
            R.lldb_try("swk-bt -compare", "bt3")]
    if R.lldb_has_providers():
        cmds.append(R.lldb_try("bt", "lldb-bt"))
    cmds += ["process interrupt", _wait_stopped(), "script lldb.debugger.SetAsync(False)",
             R.lldb_try("swk-bt -all -json", "after"), "process kill"]
    out = R.lldb_run(cmds)
    no_traceback(out)
    ls, ok = R.tried(out, "stopped")
    assert ok and ls[0].startswith("#0  stop_here (x=1)"), ls
    for tag in ("bt1", "bt2", "bt3"):
        ls, ok = R.tried(out, tag)
        assert not ok and ls == ["error: swk-bt: the process is running: interrupt it first"], (tag, ls)
    if R.lldb_has_providers():
        ls, ok = R.tried(out, "lldb-bt")
        # LLDB's own words; what matters is that the provider did not fail
        assert not ok and len(ls) == 1 and ("running" in ls[0] or "stopped" in ls[0]), ls
    ls, ok = R.tried(out, "after")
    walks = T.parse_swk_json("\n".join(ls))
    assert ok and len(walks) == 3 and all(w["frames"] for w in walks), ls
    assert "frame provider failed" not in out


@pytest.mark.parametrize("exc", ["RuntimeError('injected')", "SystemExit(3)"])
def test_lldb_the_walk_raising(exc):
    R.need_lldb()
    exe = T.Corpus().exe("chain-O0g")
    patch = ("script import swk_plugin.walker as _w; _orig = _w.Walker.frames_from; "
             f"_w.Walker.frames_from = lambda self, *a, **k: (_ for _ in ()).throw({exc})")
    cmds = [f"target create {exe}", "breakpoint set -n stop_here", "process launch",
            f"command script import {R.lldb_try_script()}", patch,
            R.lldb_try("swk-bt", "a"), R.lldb_try("swk-bt -all -json", "b"),
            "script _w.Walker.frames_from = _orig", R.lldb_try("swk-bt -gdb 2", "c"), "script print('ALIVE')"]
    out = R.lldb_run(cmds)
    no_traceback(out)
    name = exc.split("(", 1)[0]
    for tag in "ab":
        ls, ok = R.tried(out, tag)
        assert not ok and len(ls) == 1 and ls[0].startswith(f"error: swk-bt: internal error: {name}"), ls
    ls, ok = R.tried(out, "c")
    assert ok and ls[0].startswith("#0  stop_here") and ls[2] == "(More stack frames follow...)", ls
    assert "\nALIVE\n" in out


def test_lldb_every_stepper_raising():
    R.need_lldb()
    exe = T.Corpus().exe("chain-O0g")
    patch = ("script from swk_plugin.backends.lldb.session import SESSION; "
             "_w = SESSION.walker(lldb.debugger.GetSelectedTarget()); "
             "[setattr(s, 'get_caller_frame', lambda frame: 1 / 0) for s in _w.stepper_group.steppers]")
    cmds = [f"target create {exe}", "breakpoint set -n stop_here", "process launch",
            f"command script import {R.lldb_try_script()}", patch,
            R.lldb_try("swk-bt -gdb", "a"), R.lldb_try("bt", "b"), "script print('ALIVE')"]
    out = R.lldb_run(cmds)
    no_traceback(out)
    ls, ok = R.tried(out, "a")
    assert ok and ls[0].startswith("#0  stop_here") and len(ls) == 2, ls
    assert ls[1].startswith("Backtrace stopped: no stepper could find the caller"), ls
    assert "internal error (ZeroDivisionError" in ls[1], ls
    # LLDB's own bt: on LLDB 22 the provider keeps LLDB's frames below the one swk could not unwind
    ls, ok = R.tried(out, "b")
    assert ok and re.search(r"frame #4: 0x[0-9a-f]+ \S+`main", "\n".join(ls)), ls
    assert "\nALIVE\n" in out
