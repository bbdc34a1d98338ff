"""Issue 8, robustness: swk never changes the process it looks at.

GDB (test_gdb_leaves_the_target_untouched, one gdb per stop):
  * stops: robust_untouched (4 threads; thread 1 in a SIGUSR1 handler, the others
    parked in libc), hard-nocfi-pie (no CFI, no frame pointer), hard-signal (a
    SIGSEGV in a handler that interrupted a frameless no-CFI loop) and
    hard-threads (4 threads, no CFI) from tests/hard_cases.py;
  * BEFORE (swk not even loaded yet; in the -loaded-first case swk is sourced before
    `run`, as from ~/.gdbinit, so its unwinder already ran while GDB reported the
    stop): every register of every thread, as GDB
    reads them from the target (all of `architecture().registers()`, vector and
    x87 registers included), every thread's stack from $sp-4096 to the end of
    its mapping, byte for byte, and a sha256 of every other readable mapping,
    read straight from /proc/PID/mem (not through GDB's caches);
  * then `source gdb_init.py` and every swk command and every GDB command that
    uses swk's unwinder or locals and does not itself resume or write: swk-bt in
    all its forms (-v, -all -full, -json -full, -compare, N / -N, thread apply
    all), bt, bt full, thread apply all bt full, up/down/frame, info frame / locals
    / args / registers in outer frames, and swk's Python API for locals
    (frame_variables and get_local_variable_value on every frame of every thread);
  * AFTER (GDB's register cache and data cache flushed first): the same, which
    must be byte-for-byte equal;
  * what swk did meanwhile, watched three ways: GDB's own events (memory_changed,
    register_changed, cont, inferior_call, stop, new_thread, exited: none may
    fire); every gdb.execute / gdb.parse_and_eval call made from swk_plugin's code
    (wrapped before gdb_init.py is sourced: read-only commands and expressions
    only); and GDB's own system calls under strace (no ptrace
    request that writes or resumes, no write to /proc/PID/mem, no signal sent);
  * `continue`: the program ends as it does without a debugger (robust_untouched
    prints the same checksums of its stack data and exits with status 7).
test_the_checks_see_a_write_and_a_resume proves the watchers see what they
must: code posing as swk writes a register and a stack byte and steps.

LLDB (test_lldb_leaves_the_target_untouched): robust_untouched and
hard-nocfi-pie with the same BEFORE / AFTER snapshot (registers of every thread
from LLDB, the stacks and mappings from /proc/PID/mem), swk-bt in all its forms,
LLDB's bt / bt all / frame select / frame variable (on LLDB 22, through swk's
frame provider), the process's stop id unchanged (LLDB bumps it on every resume),
every SB API method that writes or resumes wrapped to record calls from
swk_plugin, then `process continue` to the program's normal end.

Static (test_no_write_or_resume_in_the_source): an AST scan of swk_plugin/,
gdb_init.py and lldb_init.py for calls that write target memory or registers,
resume, stop, kill or detach a process, evaluate expressions in it, or run a
debugger command that is not read-only.
"""
from __future__ import annotations

import ast
import dataclasses
import hashlib
import json
import os
import re
from pathlib import Path
from typing import Callable

import pytest

import hard_cases as H
import robust_lib as R
import swk_testlib as T
import swk_suite as S

pytestmark = [pytest.mark.swk]

HARD = H.HardCorpus()

# --------------------------------------------------------------------------
# inside GDB: snapshots and the monitor
# --------------------------------------------------------------------------

GDB_SCRIPT = r'''
import gdb, hashlib, json, os, re, sys

SWK_MON = {"armed": False, "events": [], "execute": [], "eval": [], "n": 0}
_SWK_PKG = os.sep + "swk_plugin" + os.sep


def _swk_caller():
    """file:line of the innermost swk_plugin frame on the Python stack, or None."""
    f = sys._getframe(2)
    while f is not None:
        name = f.f_code.co_filename
        if _SWK_PKG in name:
            return f"{name.split(_SWK_PKG, 1)[1]}:{f.f_lineno}"
        f = f.f_back
    return None


def _wrap(name, kind):
    orig = getattr(gdb, name)
    def wrapper(*args, **kwargs):
        who = _swk_caller()
        if who is not None:
            SWK_MON[kind].append([str(args[0]) if args else "", who, SWK_MON["armed"]])
        return orig(*args, **kwargs)
    setattr(gdb, name, wrapper)


_wrap("execute", "execute")
_wrap("parse_and_eval", "eval")


def _event(name):
    def on_event(*_args):
        if SWK_MON["armed"]:
            SWK_MON["events"].append(name)
    return on_event


for _name in ("memory_changed", "register_changed", "cont", "inferior_call", "stop",
              "new_thread", "exited", "new_inferior", "inferior_deleted"):
    _reg = getattr(gdb.events, _name, None)
    if _reg is not None:
        _reg.connect(_event(_name))


def swk_arm():
    SWK_MON["n"] += 1
    os.access(f"/swk-monitor-begin-{SWK_MON['n']}", os.F_OK)   # a marker for strace
    SWK_MON["armed"] = True


def swk_disarm():
    SWK_MON["armed"] = False
    os.access(f"/swk-monitor-end-{SWK_MON['n']}", os.F_OK)


def swk_monitor_report(path):
    with open(path, "w") as f:
        json.dump(SWK_MON, f)


def _maps(pid):
    out = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            out.append((lo, hi, parts[1], parts[5].strip() if len(parts) > 5 else ""))
    return out


def _registers(frame):
    regs = {}
    for r in frame.architecture().registers():
        try:
            v = frame.read_register(r)
        except (gdb.error, ValueError) as e:
            regs[r.name] = f"<error {e}>"
            continue
        try:
            regs[r.name] = v.format_string(raw=True, format="x")
        except gdb.error:
            regs[r.name] = str(v)
    return regs


def swk_snapshot(path):
    """Registers of every thread (from GDB), stacks and mappings (from /proc/PID/mem)."""
    inf = gdb.selected_inferior()
    pid = inf.pid
    sel = gdb.selected_thread()
    try:
        sel_frame = gdb.selected_frame()
    except gdb.error:
        sel_frame = None
    maps = _maps(pid)
    snap = {"pid": pid, "threads": {}, "maps": {}}
    stacks = {}
    try:
        for th in sorted(inf.threads(), key=lambda t: t.num):
            th.switch()
            f = gdb.newest_frame()
            regs = _registers(f)
            sp = int(f.read_register("rsp")) & 0xffffffffffffffff
            m = next((m for m in maps if m[0] <= sp < m[1]), None)
            lo, hi = (max(m[0], sp - 4096), m[1]) if m else (sp - 4096, sp + 4096)
            snap["threads"][str(th.num)] = {"lwp": th.ptid[1], "regs": regs, "stack": [lo, hi]}
            stacks[th.num] = (lo, hi)
    finally:
        if sel is not None:
            sel.switch()
        if sel_frame is not None:
            sel_frame.select()
    with open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
        for num, (lo, hi) in stacks.items():
            mem.seek(lo)
            with open(f"{path}.stack{num}", "wb") as out:
                out.write(mem.read(hi - lo))
        for lo, hi, perms, name in maps:
            if perms[0] != "r" or name in ("[vvar]", "[vsyscall]"):
                continue
            key = f"{lo:x}-{hi:x} {perms} {name}"
            try:
                mem.seek(lo)
                snap["maps"][key] = hashlib.sha256(mem.read(hi - lo)).hexdigest()
            except OSError as e:
                snap["maps"][key] = f"<unreadable: {e}>"
    with open(path, "w") as f:
        json.dump(snap, f, indent=0, sort_keys=True)
    print(f"SWK-SNAPSHOT {path} {len(snap['threads'])} threads {len(snap['maps'])} mappings")


def swk_locals_api():
    """swk's Python API for locals on every frame of every thread (spec: frame_variables,
    getLocalVariableValue)."""
    from swk_plugin.backends.gdb.session import SESSION
    w = SESSION.walker()
    n = 0
    for tid in w.get_available_threads():
        walk = w.walk_stack(tid)
        for i in range(len(walk)):
            args, locals_ = w.frame_variables(walk, i)
            for v in [*args, *locals_]:
                w.get_local_variable_value(v, walk, i)
                n += 1
    print(f"SWK-LOCALS-API {n} values")
'''


def gdb_script() -> Path:
    digest = hashlib.sha256(GDB_SCRIPT.encode()).hexdigest()[:12]
    path = T.BUILD / f"_untouched_{digest}.py"
    if not path.exists():
        T.BUILD.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(GDB_SCRIPT)
        os.replace(tmp, path)
    return path


#: GDB commands run with swk loaded, between the snapshots: everything that walks or reads
#: through swk (its commands, GDB's own commands through swk's unwinder, swk's locals), and
#: nothing that itself resumes or writes.
GDB_COMMANDS = [
    "swk-bt", "swk-bt -v", "swk-bt -all -full", "swk-bt -all -json -full", "swk-bt -compare",
    "swk-bt 3", "swk-bt -2", "thread apply all swk-bt",
    "bt", "bt full", "thread apply all bt full", "info frame",
    "up", "info locals", "info args", "info frame", "info registers",
    "up", "info locals", "info all-registers", "down", "frame 0",
    "thread apply all info frame",
    "python swk_locals_api()",
    "set swk unwinder off", "bt", "set swk unwinder on", "bt",
]


@dataclasses.dataclass
class GdbStop:
    id: str
    exe: Callable[[], Path]
    stop: Callable[[], list[str]]
    #: what `continue` must print (a regex); None: the program never ends (killed)
    end: str | None
    #: the program's own output that must follow `continue`
    output: Callable[[], str] | None = None
    timeout: float = 240
    #: swk sourced before `run`, as from ~/.gdbinit (its unwinder then also runs while GDB
    #: reports the stop, before the first snapshot); otherwise sourced after it
    load_first: bool = False


def _hard(case_id):
    case = H.HARD_BY_ID[case_id].case
    return (lambda: HARD.exe(case)), (lambda: HARD.stop_cmds(case))


GDB_STOPS = [
    GdbStop("robust-untouched", R.untouched_exe, lambda: list(R.UNTOUCHED_STOP),
            r"\[Inferior 1 \(process \d+\) exited with code 07\]", lambda: R.untouched_output()[0]),
    GdbStop("robust-untouched-loaded-first", R.untouched_exe, lambda: list(R.UNTOUCHED_STOP),
            r"\[Inferior 1 \(process \d+\) exited with code 07\]", lambda: R.untouched_output()[0],
            load_first=True),
    GdbStop("hard-nocfi-pie", *_hard("hard-nocfi-pie"), r"\[Inferior 1 \(process \d+\) exited normally\]"),
    GdbStop("hard-signal", *_hard("hard-signal"), r"Program terminated with signal SIGSEGV"),
    GdbStop("hard-threads", *_hard("hard-threads"), None),
]

STRACE_CALLS = ("ptrace", "pread64", "pwrite64", "pwritev", "pwritev2", "process_vm_writev", "kill", "tgkill",
                "tkill", "access", "faccessat", "faccessat2")

#: ptrace requests that only read.
PTRACE_READS = {"PTRACE_PEEKTEXT", "PTRACE_PEEKDATA", "PTRACE_PEEKUSER", "PTRACE_GETREGS",
                "PTRACE_GETFPREGS", "PTRACE_GETFPXREGS", "PTRACE_GETREGSET", "PTRACE_GETSIGINFO",
                "PTRACE_PEEKSIGINFO", "PTRACE_GETSIGMASK", "PTRACE_GETEVENTMSG",
                "PTRACE_GET_THREAD_AREA", "PTRACE_GET_SYSCALL_INFO"}


def strace_argv(log: Path) -> list[str]:
    strace = S.need_tool("strace")
    # no -f: only GDB's main thread, which makes every ptrace call; the inferior is not traced
    return [strace, "-o", str(log), "-y", "-e", "trace=" + ",".join(STRACE_CALLS)]


def strace_problems(log: Path) -> tuple[list[str], int]:
    """What GDB's main thread did between the monitor's markers that writes or resumes, and
    how many reads of the target's memory it made there (to show strace saw GDB at work)."""
    problems = []
    reads = 0
    inside = False
    for line in log.read_text(errors="replace").splitlines():
        if '"/swk-monitor-begin-' in line:
            inside = True
            continue
        if '"/swk-monitor-end-' in line:
            inside = False
            continue
        if not inside:
            continue
        m = re.match(r"(\w+)\((.*)", line)
        if not m:
            continue
        call, rest = m.groups()
        if call == "pread64":
            reads += bool(re.match(r"\d+</proc/\d+/(task/\d+/)?mem>", rest))
        elif call == "ptrace":
            req = rest.split(",", 1)[0].strip()
            if req not in PTRACE_READS:
                problems.append(f"strace: {line[:200]}")
        elif call in ("pwrite64", "pwritev", "pwritev2", "process_vm_writev"):
            if call == "process_vm_writev" or re.match(r"\d+</proc/\d+/(task/\d+/)?mem>", rest):
                problems.append(f"strace: {line[:200]}")
        elif call in ("kill", "tgkill", "tkill"):
            problems.append(f"strace: {line[:200]}")
    return problems, reads


READ_ONLY_COMMANDS = ("info ", "show ", "maint info ", "maint print ", "help ")
_ASSIGN = re.compile(r"(?<![=!<>])=(?!=)|\+\+|--|[-+*/%&|^]=|<<=|>>=")
_CALL = re.compile(r"\b[A-Za-z_]\w*\s*\(")


def monitor_problems(mon: dict) -> list[str]:
    problems = [f"GDB event while swk ran: {e}" for e in mon["events"]]
    for command, who, _armed in mon["execute"]:
        if not command.startswith(READ_ONLY_COMMANDS):
            problems.append(f"swk ran gdb.execute({command!r}) at {who}")
    for expr, who, _armed in mon["eval"]:
        if _ASSIGN.search(expr) or _CALL.search(expr):
            problems.append(f"swk evaluated {expr!r} (an assignment or a call) at {who}")
    return problems


def _first_difference(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def snapshot_differences(before: Path, after: Path) -> list[str]:
    a, b = json.loads(before.read_text()), json.loads(after.read_text())
    diffs = []
    if set(a["threads"]) != set(b["threads"]):
        diffs.append(f"threads {sorted(a['threads'])} -> {sorted(b['threads'])}")
    for num in sorted(set(a["threads"]) & set(b["threads"]), key=int):
        ra, rb = a["threads"][num]["regs"], b["threads"][num]["regs"]
        changed = [r for r in sorted(set(ra) | set(rb)) if ra.get(r) != rb.get(r)]
        for r in changed[:10]:
            diffs.append(f"thread {num}: register {r}: {ra.get(r)} -> {rb.get(r)}")
        if a["threads"][num]["stack"] != b["threads"][num]["stack"]:
            diffs.append(f"thread {num}: stack range {a['threads'][num]['stack']} -> {b['threads'][num]['stack']}")
            continue
        sa = Path(f"{before}.stack{num}").read_bytes()
        sb = Path(f"{after}.stack{num}").read_bytes()
        if sa != sb:
            off = _first_difference(sa, sb)
            lo = a["threads"][num]["stack"][0]
            diffs.append(f"thread {num}: stack byte at 0x{lo + off:x} changed "
                         f"({sum(x != y for x, y in zip(sa, sb))} bytes differ)")
    for key in sorted(set(a["maps"]) | set(b["maps"])):
        if a["maps"].get(key) != b["maps"].get(key):
            diffs.append(f"mapping {key}: {str(a['maps'].get(key))[:16]} -> {str(b['maps'].get(key))[:16]}")
    return diffs


def run_watched_gdb(exe: Path, commands: list[str], tmp: Path, timeout: float) -> tuple[str, Path | None]:
    """gdb -batch with GDB_SCRIPT loaded first, under strace (which must be installed)."""
    argv = [*strace_argv(tmp / "strace.log"), *T.gdb_argv(exe, [f"source {gdb_script()}", *commands])]
    out = T.run_cmd(argv, timeout=timeout).stdout
    log = tmp / "strace.log"
    if not log.exists():
        pytest.fail(f"strace wrote no log:\n{out[-3000:]}", pytrace=False)
    return out, log


def snapshot_commands(tmp: Path, tag: str) -> list[str]:
    return [f"python swk_snapshot({str(tmp / tag)!r})"]


@pytest.mark.parametrize("stop", GDB_STOPS, ids=[s.id for s in GDB_STOPS])
def test_gdb_leaves_the_target_untouched(stop: GdbStop, tmp_path):
    R.need_gdb()
    exe = stop.exe()
    source = [f"source {T.GDB_INIT}"]
    commands = [*(source if stop.load_first else []),
                *stop.stop(),
                *snapshot_commands(tmp_path, "before"),
                "python swk_arm()",
                *([] if stop.load_first else source),
                *GDB_COMMANDS,
                "python swk_disarm()",
                "maint flush register-cache", "maint flush dcache",
                *snapshot_commands(tmp_path, "after"),
                f"python swk_monitor_report({str(tmp_path / 'monitor.json')!r})",
                "echo SWK-CONTINUE\\n",
                "continue" if stop.end else "kill"]
    out, log = run_watched_gdb(exe, commands, tmp_path, stop.timeout)
    assert out.count("SWK-SNAPSHOT ") == 2, out[-5000:]
    problems = snapshot_differences(tmp_path / "before", tmp_path / "after")
    mon = json.loads((tmp_path / "monitor.json").read_text())
    problems += monitor_problems(mon)
    seen, reads = strace_problems(log)
    problems += seen
    if not reads:
        problems.append("strace saw no read of the target's memory while swk ran")
    # swk really ran: its frames, the unwinder, the locals API
    if "Traceback" in out:
        problems.append("a Python traceback in GDB's output")
    if not re.search(r"^#1  0x[0-9a-f]+ in ", out, re.M) or "SWK-LOCALS-API" not in out:
        problems.append("swk's commands did not all run")
    tail = out.split("SWK-CONTINUE\n", 1)[-1]
    if stop.end and not re.search(stop.end, tail):
        problems.append(f"`continue` did not end with {stop.end!r}")
    if stop.output:
        want = stop.output().splitlines()
        got = [ln for ln in tail.splitlines() if ln in want]
        if got != want:
            problems.append(f"the program printed {got}, without a debugger {want}")
    if problems:
        pytest.fail("\n".join(problems) + "\n--- gdb output ---\n" + out[-6000:], pytrace=False)


CONTROL = r'''
import gdb
inf = gdb.selected_inferior()
sp = int(gdb.parse_and_eval("$sp"))
gdb.execute("set var $r12 = $r12 + 1")
old = inf.read_memory(sp + 16, 1).tobytes()
inf.write_memory(sp + 16, bytes([old[0] ^ 0xff]))
gdb.execute("stepi")
'''


def test_the_checks_see_a_write_and_a_resume(tmp_path):
    """The watchers and the snapshots catch code in swk_plugin that writes a register,
    writes a stack byte and steps an instruction (run through a file name inside
    swk_plugin/, so the monitor takes it for swk's)."""
    R.need_gdb()
    case = H.HARD_BY_ID["hard-nocfi-pie"].case
    fake = tmp_path / "swk_plugin" / "fake_writer.py"
    fake.parent.mkdir()
    fake.write_text(CONTROL)
    run_fake = f"python exec(compile(open({str(fake)!r}).read(), {str(fake)!r}, 'exec'), {{}})"
    commands = [*HARD.stop_cmds(case), *snapshot_commands(tmp_path, "before"), "python swk_arm()",
                run_fake, "python swk_disarm()", "maint flush register-cache", "maint flush dcache",
                *snapshot_commands(tmp_path, "after"),
                f"python swk_monitor_report({str(tmp_path / 'monitor.json')!r})", "kill"]
    out, log = run_watched_gdb(HARD.exe(case), commands, tmp_path, 120)
    diffs = snapshot_differences(tmp_path / "before", tmp_path / "after")
    assert any("register r12" in d for d in diffs), (diffs, out[-3000:])
    assert any("register rip" in d for d in diffs), diffs
    assert any("stack byte" in d for d in diffs), diffs
    mon = json.loads((tmp_path / "monitor.json").read_text())
    assert {"register_changed", "memory_changed", "cont", "stop"} <= set(mon["events"]), mon
    problems = monitor_problems(mon)
    assert any("set var $r12" in p for p in problems) and any("stepi" in p for p in problems), problems
    seen = "\n".join(strace_problems(log)[0])
    assert "PTRACE_SETREGS" in seen or "PTRACE_POKEUSER" in seen, seen
    assert "/mem>" in seen, seen
    assert "PTRACE_SINGLESTEP" in seen or "PTRACE_CONT" in seen, seen


# --------------------------------------------------------------------------
# LLDB
# --------------------------------------------------------------------------

LLDB_SCRIPT = r'''
import lldb, hashlib, json, os, sys, functools

SWK_LLDB_CALLS = []
_SWK_PKG = os.sep + "swk_plugin" + os.sep

#: SB API methods that write to, resume, stop or end a process, or run code in it.
_FORBIDDEN = {
    "SBProcess": ["WriteMemory", "Continue", "Stop", "Kill", "Detach", "Destroy", "Signal",
                  "SendAsyncInterrupt", "AllocateMemory", "DeallocateMemory", "PutSTDIN",
                  "LoadImage", "UnloadImage"],
    "SBThread": ["StepInto", "StepOver", "StepOut", "StepOutOfFrame", "StepInstruction",
                 "StepUsingScriptedThreadPlan", "RunToAddress", "JumpToLine", "ReturnFromFrame",
                 "Resume", "Suspend", "UnwindInnermostExpression"],
    "SBFrame": ["EvaluateExpression", "SetPC"],
    "SBValue": ["SetValueFromCString", "SetData"],
    "SBTarget": ["EvaluateExpression", "Launch", "LaunchSimple", "Attach", "AttachToProcessWithID",
                 "AttachToProcessWithName", "ConnectRemote", "BreakpointCreateByAddress",
                 "BreakpointCreateByName", "BreakpointCreateByLocation", "BreakpointCreateByRegex",
                 "BreakpointCreateBySourceRegex", "BreakpointCreateFromScript", "WatchAddress",
                 "WatchpointCreateByAddress"],
    "SBCommandInterpreter": ["HandleCommand"],
    "SBDebugger": ["HandleCommand", "SetAsync"],
}


def _swk_caller():
    f = sys._getframe(2)
    while f is not None:
        if _SWK_PKG in f.f_code.co_filename:
            return f"{f.f_code.co_filename.split(_SWK_PKG, 1)[1]}:{f.f_lineno}"
        f = f.f_back
    return None


def _wrap(cls, name):
    orig = getattr(cls, name, None)
    if orig is None:
        return
    @functools.wraps(orig)
    def wrapper(*args, **kwargs):
        who = _swk_caller()
        if who is not None:
            SWK_LLDB_CALLS.append([f"{cls.__name__}.{name}", repr(args[1:])[:200], who])
        return orig(*args, **kwargs)
    setattr(cls, name, wrapper)


for _cls, _names in _FORBIDDEN.items():
    for _n in _names:
        _wrap(getattr(lldb, _cls), _n)


def _maps(pid):
    out = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            out.append((lo, hi, parts[1], parts[5].strip() if len(parts) > 5 else ""))
    return out


def swk_snapshot(debugger, path):
    target = debugger.GetSelectedTarget()
    process = target.GetProcess()
    pid = process.GetProcessID()
    maps = _maps(pid)
    snap = {"pid": pid, "stop_id": process.GetStopID(), "threads": {}, "maps": {},
            "swk_breakpoints": []}
    stacks = {}
    for i in range(process.GetNumThreads()):
        th = process.GetThreadAtIndex(i)
        f = th.GetFrameAtIndex(0)
        regs = {}
        for regset in f.GetRegisters():
            for r in regset:
                regs[r.GetName()] = r.GetValue()
        sp = f.GetSP()
        m = next((m for m in maps if m[0] <= sp < m[1]), None)
        lo, hi = (max(m[0], sp - 4096), m[1]) if m else (sp - 4096, sp + 4096)
        num = str(th.GetIndexID())
        snap["threads"][num] = {"lwp": th.GetThreadID(), "regs": regs, "stack": [lo, hi]}
        stacks[num] = (lo, hi)
    for t in [target, debugger.GetDummyTarget()]:
        for j in range(t.GetNumBreakpoints()):
            bp = t.GetBreakpointAtIndex(j)
            names = lldb.SBStringList()
            bp.GetNames(names)
            if any(names.GetStringAtIndex(k).startswith("swk") for k in range(names.GetSize())):
                snap["swk_breakpoints"].append(bp.GetNumLocations())
    with open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
        for num, (lo, hi) in stacks.items():
            mem.seek(lo)
            with open(f"{path}.stack{num}", "wb") as out:
                out.write(mem.read(hi - lo))
        for lo, hi, perms, name in maps:
            if perms[0] != "r" or name in ("[vvar]", "[vsyscall]"):
                continue
            key = f"{lo:x}-{hi:x} {perms} {name}"
            try:
                mem.seek(lo)
                snap["maps"][key] = hashlib.sha256(mem.read(hi - lo)).hexdigest()
            except OSError as e:
                snap["maps"][key] = f"<unreadable: {e}>"
    with open(path, "w") as f:
        json.dump(snap, f, indent=0, sort_keys=True)
    print(f"SWK-SNAPSHOT {path} {len(snap['threads'])} threads {len(snap['maps'])} mappings")


def swk_calls_report(path):
    with open(path, "w") as f:
        json.dump(SWK_LLDB_CALLS, f)
'''


#: The module name LLDB_SCRIPT is imported as (`command script import`).
LLDB_MODULE = "swk_untouched_lldb"


def lldb_script() -> Path:
    digest = hashlib.sha256(LLDB_SCRIPT.encode()).hexdigest()[:12]
    path = T.BUILD / f"_untouched_lldb_{digest}" / f"{LLDB_MODULE}.py"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(LLDB_SCRIPT)
        os.replace(tmp, path)
    return path


def lldb_commands(providers: bool) -> list[str]:
    """Everything swk does in LLDB at a stop, and LLDB's own commands (through swk's frame
    provider on LLDB 22).  None of them may fail: batch-mode LLDB stops at a failure."""
    cmds = ["swk-bt", "swk-bt -gdb", "swk-bt -v", "swk-bt -all -full", "swk-bt -all -json -full",
            "swk-bt -compare", "swk-bt 3", "swk-bt -2", "swk-settings"]
    cmds += ["bt", "bt all", "thread backtrace all", "frame select 1", "frame variable",
             "register read", "frame select 2", "frame variable", "frame select 0", "frame info"]
    if providers:
        # (not `provider on` again: registering on a target with a process makes LLDB announce
        # the threads again from its event thread, and a command in the same instant can
        # deadlock LLDB 22 — docs/lldb.md)
        cmds += ["swk-settings provider off", "bt all"]
    return cmds


@dataclasses.dataclass
class LldbStop:
    id: str
    exe: Callable[[], Path]
    stop: Callable[[Path], list[str]]
    end: str
    output: Callable[[], str] | None = None


def _nocfi_lldb_stop(exe: Path) -> list[str]:
    return [f"target create {exe}", "breakpoint set -n stop_here", "process launch"]


LLDB_STOPS = [
    LldbStop("robust-untouched", R.untouched_exe, R.lldb_stop_untouched,
             r"Process \d+ exited with status = 7 ", lambda: R.untouched_output()[0]),
    LldbStop("hard-nocfi-pie", _hard("hard-nocfi-pie")[0], _nocfi_lldb_stop,
             r"Process \d+ exited with status = 0 "),
]


@pytest.mark.parametrize("stop", LLDB_STOPS, ids=[s.id for s in LLDB_STOPS])
def test_lldb_leaves_the_target_untouched(stop: LldbStop, tmp_path):
    R.need_lldb()
    providers = R.lldb_has_providers()
    exe = stop.exe()
    before, after, calls = tmp_path / "before", tmp_path / "after", tmp_path / "calls.json"
    commands = [*stop.stop(exe),
                f"script {LLDB_MODULE}.swk_snapshot(lldb.debugger, {str(before)!r})",
                *lldb_commands(providers),
                f"script {LLDB_MODULE}.swk_snapshot(lldb.debugger, {str(after)!r})",
                f"script {LLDB_MODULE}.swk_calls_report({str(calls)!r})",
                "script print('SWK-CONTINUE')", "process continue"]
    # the monitor wraps the SB API before lldb_init.py imports swk
    out = T.run_cmd(R.lldb_argv(commands, pre=[f"command script import {lldb_script()}"]),
                    timeout=300, env=R.lldb_env()).stdout
    assert out.count("SWK-SNAPSHOT ") == 2, out[-6000:]
    problems = snapshot_differences(before, after)
    a, b = json.loads(before.read_text()), json.loads(after.read_text())
    if a["stop_id"] != b["stop_id"]:
        problems.append(f"the process ran: stop id {a['stop_id']} -> {b['stop_id']}")
    if any(n != 0 for n in a["swk_breakpoints"] + b["swk_breakpoints"]):
        problems.append(f"swk's breakpoint has locations: {b['swk_breakpoints']}")
    for name, args, who in json.loads(calls.read_text()):
        # the one exception: install() adds swk's commands, and (LLDB 22) a breakpoint on the
        # dummy target whose resolver never sets a location (checked just above)
        if name.endswith("HandleCommand") and args.startswith("('command script add "):
            continue
        if name == "SBTarget.BreakpointCreateFromScript" and who.startswith("backends/lldb/__init__.py"):
            continue
        problems.append(f"swk called {name}{args} at {who}")
    if "Traceback" in out or "internal error" in out or "frame provider failed" in out:
        problems.append("swk reported an internal error")
    if not re.search(r"^#1  0x[0-9a-f]+ in ", out, re.M):
        problems.append("swk-bt printed no frames")
    tail = out.split("SWK-CONTINUE\n", 1)[-1]
    if not re.search(stop.end, tail):
        problems.append(f"`process continue` did not end with {stop.end!r}")
    if stop.output:
        want = stop.output().splitlines()
        got = [ln for ln in tail.splitlines() if ln in want]
        if got != want:
            problems.append(f"the program printed {got}, without a debugger {want}")
    if problems:
        pytest.fail("\n".join(problems) + "\n--- lldb output ---\n" + out[-6000:], pytrace=False)


# --------------------------------------------------------------------------
# static: nothing in swk's source writes, resumes or runs code in the target
# --------------------------------------------------------------------------

#: Attribute names whose use writes to the target, resumes / stops / ends it, or runs
#: code in it (GDB's and LLDB's Python APIs).
FORBIDDEN_ATTRS = {
    # GDB
    "write_memory": "writes target memory (gdb.Inferior)",
    "write_register": "writes a register (gdb.Frame, GDB 14+)",
    "assign": "writes through a value (gdb.Value, GDB 14+)",
    # LLDB SB API
    **{n: "writes to the target (LLDB)" for n in ("WriteMemory", "WriteMemoryAsCString", "SetValueFromCString",
                                                  "SetData", "SetPC", "PutSTDIN")},
    **{n: "resumes, stops or ends the process (LLDB)" for n in (
        "Continue", "Stop", "Kill", "Detach", "Destroy", "Signal", "SendAsyncInterrupt", "Resume",
        "Suspend", "StepInto", "StepOver", "StepOut", "StepOutOfFrame", "StepInstruction",
        "StepUsingScriptedThreadPlan", "RunToAddress", "JumpToLine", "ReturnFromFrame",
        "UnwindInnermostExpression", "Launch", "LaunchSimple", "Attach", "AttachToProcessWithID",
        "AttachToProcessWithName", "ConnectRemote", "SetAsync")},
    **{n: "runs code or allocates in the process (LLDB)" for n in (
        "EvaluateExpression", "AllocateMemory", "DeallocateMemory", "LoadImage", "UnloadImage")},
    **{n: "inserts breakpoints or watchpoints (LLDB)" for n in (
        "BreakpointCreateByAddress", "BreakpointCreateByName", "BreakpointCreateByLocation",
        "BreakpointCreateByRegex", "BreakpointCreateBySourceRegex", "BreakpointCreateByNames",
        "WatchAddress", "WatchpointCreateByAddress")},
}

#: (file, attribute): the uses that are allowed, and why.
ALLOWED_ATTR_USES = {
    ("swk_plugin/backends/lldb/__init__.py", "BreakpointCreateFromScript"):
        "the frame provider's target watcher on LLDB's dummy target: its resolver never sets a "
        "location (test_lldb_leaves_the_target_untouched checks it has none)",
}

#: Debugger command runners: every call must pass a read-only command, as a literal.
RUNNERS = {
    "execute": ("info ", "show ", "maint info ", "maint print ", "help "),
    "HandleCommand": ("command script add ",),
    "parse_and_eval": None,   # an expression: no assignment, no call
}


def _literal_prefix(node) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        return node.values[0].value
    return None


def _runner_problem(runner: str, call: ast.Call) -> str | None:
    if not call.args:
        return "no command"
    text = _literal_prefix(call.args[0])
    if text is None:
        return "a command that is not a literal string"
    allowed = RUNNERS[runner]
    if allowed is None:
        return "an assignment or a call" if (_ASSIGN.search(text) or _CALL.search(text)) else None
    return None if text.startswith(allowed) else f"{text!r} is not read-only"


def scan_source(path: Path, rel: str) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    problems = []
    # calls of a runner through an alias: name = x.HandleCommand; name("...")
    aliases: dict[str, str] = {}
    direct_calls = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Attribute) \
                and node.value.attr in RUNNERS:
            for t in node.targets:
                if isinstance(t, ast.Name):
                    aliases[t.id] = node.value.attr
        if isinstance(node, ast.Call):
            direct_calls.add(id(node.func))
    for node in ast.walk(tree):
        where = f"{rel}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Attribute):
            if node.attr in FORBIDDEN_ATTRS and (rel, node.attr) not in ALLOWED_ATTR_USES:
                problems.append(f"{where}: .{node.attr}: {FORBIDDEN_ATTRS[node.attr]}")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in FORBIDDEN_ATTRS:
            problems.append(f"{where}: the string {node.value!r} (getattr?): {FORBIDDEN_ATTRS[node.value]}")
        if isinstance(node, ast.Call):
            f = node.func
            runner = None
            if isinstance(f, ast.Attribute) and f.attr in RUNNERS:
                runner = f.attr
            elif isinstance(f, ast.Name) and f.id in aliases:
                runner = aliases[f.id]
            if runner:
                why = _runner_problem(runner, node)
                if why:
                    problems.append(f"{where}: {runner}(): {why}")
    # a runner handed around in any other way cannot be checked
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in RUNNERS and id(node) not in direct_calls:
            parent_ok = any(isinstance(a, ast.Assign) and a.value is node and
                            all(isinstance(t, ast.Name) for t in a.targets) for a in ast.walk(tree))
            if not parent_ok:
                problems.append(f"{rel}:{node.lineno}: .{node.attr} used other than by a call")
    return problems


def swk_sources() -> list[tuple[Path, str]]:
    files = sorted((T.REPO / "swk_plugin").rglob("*.py"))
    files += [T.REPO / "gdb_init.py", T.REPO / "lldb_init.py"]
    return [(p, str(p.relative_to(T.REPO))) for p in files]


def test_no_write_or_resume_in_the_source():
    problems = []
    for path, rel in swk_sources():
        problems += scan_source(path, rel)
    assert not problems, "\n".join(problems)


def test_the_scan_finds_what_it_looks_for(tmp_path):
    """The scanner itself: each kind of forbidden use in a made-up file is found."""
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import gdb\n"
        "def f(inf, proc, frame, cmd):\n"
        "    inf.write_memory(0, b'x')\n"
        "    proc.Continue()\n"
        "    frame.EvaluateExpression('1')\n"
        "    gdb.execute('continue')\n"
        "    gdb.execute(cmd)\n"
        "    gdb.parse_and_eval('$rsp = 0')\n"
        "    gdb.parse_and_eval('foo(1)')\n"
        "    run = proc.HandleCommand\n"
        "    run('process continue')\n"
        "    getattr(proc, 'Kill')()\n"
        "    ok = gdb.execute('info target', to_string=True)\n"
        "    return gdb.parse_and_eval('(unsigned long)&_r_debug'), ok\n")
    problems = scan_source(bad, "bad.py")
    for needle in (":3: .write_memory", ":4: .Continue", ":5: .EvaluateExpression", ":6: execute(): 'continue'",
                   ":7: execute(): a command that is not a literal", ":8: parse_and_eval(): an assignment",
                   ":9: parse_and_eval(): an assignment or a call", ":11: HandleCommand(): 'process continue'",
                   ":12: the string 'Kill'"):
        assert any(needle in p for p in problems), (needle, problems)
    assert not any(":13:" in p or ":14:" in p for p in problems), problems
