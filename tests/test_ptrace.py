"""swk without a debugger on live processes (issue 17), against `gdb -p` and the known chains.

tests/corpus/parked.c (see its header) runs with its threads parked in known chains:
main in an N-deep recursion then pause, sem_wait, nanosleep, a thread inside a signal
handler, and (unless "quiet") a busy thread.

  test_bt_pid_equals_gdb[depth]   `swk bt --pid --json` == `gdb -p`'s own walk, every thread
                                  (pcs, names, signal and tail-call frames, inline frames)
  test_bt_pid_known_chains        each thread's chain is the one the program was built with
  test_left_as_it_was[...]        after swk — done, failed, Ctrl-C'd, SIGTERM'd or SIGKILL'd
                                  mid-walk — no thread is traced or stopped, and a SIGUSR1
                                  is still handled exactly once
  test_signal_not_lost            a signal sent while swk holds the threads is delivered once
  test_errors[...]                no such process, a process another tracer holds, bad
                                  options: one line, exit 2, no traceback
  test_threads_come_and_go        threads exiting mid-walk: every walk ends cleanly
  test_pause_reported             snapshots report each thread's pause (JSON and -v)
  test_i386_process               a -m32 process (the 32-bit register sets)
  test_vector_registers_live[...] the FP/vector registers copied are those the program set
  test_profile                    `swk profile`: top functions, folded stacks, an SVG flame
                                  graph, the target's pause share; the process left as it was
  test_new_walker_pid             Walker.new_walker(pid=...) (spec: newWalker(pid))
  test_walk_self[...]             swk_plugin.walk_self() from plain code and from a signal handler
  test_accessors_*                AddressSpace: a target described only by callbacks
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import textwrap
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import swk_suite as S
import swk_testlib as T

pytestmark = [pytest.mark.corpus]

S.need_tool(T.GDB, "gdb")

CFLAGS = ("-O2", "-g")


def _ptrace_allowed() -> None:
    try:
        scope = Path("/proc/sys/kernel/yama/ptrace_scope").read_text().strip()
    except OSError:
        scope = "0"
    if scope not in ("0", "") and os.geteuid() != 0:
        S.missing("ptrace of a sibling process", "run as root or `sysctl kernel.yama.ptrace_scope=0`")


_ptrace_allowed()


def parked_exe(m32: bool = False) -> Path:
    cf = (*CFLAGS, *T.m32_flags()) if m32 else CFLAGS
    return T.build(["parked.c"], "parked-m32" if m32 else "parked", cf, ("-pthread",))


class Parked:
    """A running parked.c: started, waited for until every thread is parked, ended."""

    def __init__(self, depth=20, quiet=True, m32=False, exe=None):
        self.exe = exe or parked_exe(m32)
        self.proc = subprocess.Popen([str(self.exe), str(depth), "quiet" if quiet else "busy"],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True)
        line = self.proc.stdout.readline()
        if not line.startswith("ready"):
            self.close()
            raise T.HarnessError(f"parked did not start: {line!r}")
        self.pid = self.proc.pid

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def tasks(self) -> list[int]:
        return sorted(int(t) for t in os.listdir(f"/proc/{self.pid}/task"))

    def status(self, tid):
        out = {}
        try:
            text = Path(f"/proc/{self.pid}/task/{tid}/status").read_text()
        except OSError:
            return out
        for ln in text.splitlines():
            k, _, v = ln.partition(":")
            out[k] = v.strip()
        return out

    def untouched_errors(self) -> list[str]:
        """No thread traced or stopped, and SIGUSR1 handled exactly once."""
        errs = []
        deadline = time.time() + 5
        while True:
            bad = []
            for tid in self.tasks():
                st = self.status(tid)
                if st.get("TracerPid", "0") != "0":
                    bad.append(f"thread {tid} is still traced by {st['TracerPid']}")
                if st.get("State", "")[:1] in ("t", "T"):
                    bad.append(f"thread {tid} is stopped ({st['State']})")
            if not bad or time.time() > deadline:
                break
            time.sleep(0.05)
        errs += bad
        os.kill(self.pid, signal.SIGUSR1)
        line = _readline(self.proc, 5)
        if line != "USR1\n":
            errs.append(f"SIGUSR1 not handled: the process printed {line!r}")
        return errs


def _readline(proc, timeout):
    import selectors
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    if not sel.select(timeout):
        return None
    return proc.stdout.readline()


def swk(*args, timeout=300) -> subprocess.CompletedProcess:
    return T.run_swk_cli(list(args), timeout=timeout)


def gdb_native(exe: Path, pid: int) -> dict:
    out = T.run_gdb(exe, [f"attach {pid}", *T.native_commands(True), "detach"], timeout=300)
    return T.parse_native(out), out


def _fail(msgs, context=""):
    pytest.fail("\n".join(msgs) + (("\n--- context ---\n" + context[-8000:]) if context else ""), pytrace=False)


# --------------------------------------------------------------------------
# swk bt --pid
# --------------------------------------------------------------------------

@pytest.mark.parametrize("depth", [20, 10000])
def test_bt_pid_equals_gdb(depth):
    with Parked(depth) as p:
        r = swk("bt", "--pid", p.pid, "--json")
        errs = [] if r.returncode == 0 else [f"swk exited {r.returncode}"]
        errs += p.untouched_errors()
        swk_threads = T.parse_swk_json(r.stdout)
        native, gout = gdb_native(p.exe, p.pid)
        errs += T.compare_swk_to_gdb(native, swk_threads, by_tid=True)
        if errs:
            _fail(errs, r.stdout[-3000:] + "\n--- gdb ---\n" + T.format_native(native))


EXPECTED = {
    "main": ["__libc_pause", "park_main", "deep", "...", "main", "__libc_start_call_main",
             "__libc_start_main_impl", "_start"],
    "sem": ["sem_thread", "start_thread", "clone3"],
    "sleep": ["sleep_thread", "start_thread", "clone3"],
    "sig": ["in_handler", "on_usr2", "<signal>", "__GI_raise", "sig_thread", "start_thread", "clone3"],
}


def _chain(frames):
    out = []
    for f in frames:
        if f.get("kind") in ("inline", "tailcall"):
            continue
        out.append("<signal>" if f.get("kind") == "signal" else f.get("function"))
    return out


def test_bt_pid_known_chains():
    with Parked(30) as p:
        r = swk("bt", "--pid", p.pid, "--json")
        threads = {t["tid"]: t for t in T.parse_swk_json(r.stdout)}
        errs = p.untouched_errors()
    tids = sorted(threads)
    if len(tids) != 4:
        _fail([f"{len(tids)} threads, expected 4"], r.stdout)
    main = _chain(threads[tids[0]]["frames"])
    want = ["__libc_pause", "park_main"] + ["deep"] * 31 + ["main", "__libc_start_call_main",
                                                            "__libc_start_main_impl", "_start"]
    if main != want:
        errs.append(f"main thread: {main}")
    for key, tid in zip(("sem", "sleep", "sig"), tids[1:]):
        chain = _chain(threads[tid]["frames"])
        want = EXPECTED[key]
        it = iter(chain)
        if not all(name in it for name in want) or chain[-3:] != want[-3:]:
            errs.append(f"{key} thread: {chain} does not have {want} in this order, at its end")
    if errs:
        _fail(errs, r.stdout[-3000:])


# --------------------------------------------------------------------------
# the process is left as it was
# --------------------------------------------------------------------------

def _spawn_swk(*args):
    env = T._env()
    return subprocess.Popen([T.PYTHON, "-m", "swk_plugin", *map(str, args)], cwd=T.REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_traced(p: Parked, timeout=30) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if any(p.status(t).get("TracerPid", "0") != "0" for t in p.tasks()):
            return True
        time.sleep(0.002)
    return False


@pytest.mark.parametrize("how", ["done", "failed", "SIGINT", "SIGTERM", "SIGKILL"])
def test_left_as_it_was(how):
    """swk finished, failed (a thread it was asked for does not exist), interrupted, told to
    end, or killed outright while it held the threads (--stopped --full on a 10,000-frame
    stack keeps them stopped for a while)."""
    with Parked(10000) as p:
        if how == "done":
            r = swk("bt", "--pid", p.pid, "--full")
            errs = [] if r.returncode == 0 else [f"swk exited {r.returncode}: {r.stderr[-500:]}"]
        elif how == "failed":
            r = swk("bt", "--pid", p.pid, "--thread", "1")
            errs = [] if r.returncode == 2 and "no thread 1" in r.stdout + r.stderr else \
                [f"swk exited {r.returncode}: {r.stdout[-300:]}{r.stderr[-300:]}"]
        else:
            proc = _spawn_swk("bt", "--pid", p.pid, "--stopped", "--full")
            errs = [] if _wait_traced(p) else ["swk never attached"]
            time.sleep(0.2)
            proc.send_signal(getattr(signal, how))
            out, err = proc.communicate(timeout=60)
            if how != "SIGKILL" and "Traceback" in err:
                errs.append(f"a traceback:\n{err[-2000:]}")
            if how == "SIGINT" and proc.returncode != 130 and proc.returncode != 0:
                errs.append(f"swk exited {proc.returncode} on SIGINT")
        errs += p.untouched_errors()
        if errs:
            _fail(errs)


def test_signal_not_lost():
    """A SIGUSR1 sent while swk holds every thread stopped is delivered once, after."""
    with Parked(10000) as p:
        proc = _spawn_swk("bt", "--pid", p.pid, "--stopped", "--full")
        errs = [] if _wait_traced(p) else ["swk never attached"]
        time.sleep(0.1)
        os.kill(p.pid, signal.SIGUSR1)
        out, err = proc.communicate(timeout=120)
        if proc.returncode != 0:
            errs.append(f"swk exited {proc.returncode}: {err[-500:]}")
        first = _readline(p.proc, 5)
        if first != "USR1\n":
            errs.append(f"the SIGUSR1 sent meanwhile was not delivered: {first!r}")
        errs += p.untouched_errors()              # one more, handled once
        if _readline(p.proc, 0.5) is not None:
            errs.append("a signal was delivered twice")
        if errs:
            _fail(errs)


# --------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------

def _one_line_error(r, *wants):
    errs = []
    text = (r.stdout + r.stderr).strip()
    if r.returncode != 2:
        errs.append(f"exit {r.returncode}, expected 2")
    if "Traceback" in text or len(text.splitlines()) != 1:
        errs.append(f"not one line: {text!r}")
    for w in wants:
        if w not in text:
            errs.append(f"{w!r} not in {text!r}")
    return errs


def test_errors():
    errs = []
    dead = subprocess.Popen(["true"])
    dead.wait()
    errs += _one_line_error(swk("bt", "--pid", dead.pid), f"no process {dead.pid}")
    errs += _one_line_error(swk("bt", "--pid", "abc"), "not a process id")
    errs += _one_line_error(swk("bt", "--pid", "1", "--core", "x"), "not allowed with")
    with Parked(5) as p:
        errs += _one_line_error(swk("bt", "--pid", p.pid, "--exe", "/bin/true"), "for cores")
        # another tracer: a GDB attached to it
        gdb = subprocess.Popen([T.GDB, "-nx", "-q", "-p", str(p.pid)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            if _wait_traced(p):
                errs += _one_line_error(swk("bt", "--pid", p.pid), "already traced by process")
            else:
                errs.append("gdb -p did not attach")
        finally:
            gdb.communicate("detach\nquit\n", timeout=60)
        errs += p.untouched_errors()
    if errs:
        _fail(errs)


THREADS_SRC = r"""
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static void *brief(void *a) { usleep(200); return a; }
int main(void) {
    printf("ready\n"); fflush(stdout);
    for (;;) { pthread_t t[8]; for (int i = 0; i < 8; i++) pthread_create(&t[i], 0, brief, 0);
               for (int i = 0; i < 8; i++) pthread_join(t[i], 0); }
}
"""


def test_threads_come_and_go(tmp_path):
    """Threads created and ended all the time: each walk ends cleanly (a thread that exits
    is left out, or walked), never an error or a traceback."""
    src = tmp_path / "churn.c"
    src.write_text(THREADS_SRC)
    exe = tmp_path / "churn"
    subprocess.run(["gcc", "-O2", "-g", "-pthread", str(src), "-o", str(exe)], check=True)
    proc = subprocess.Popen([str(exe)], stdout=subprocess.PIPE, text=True)
    try:
        proc.stdout.readline()
        errs = []
        for _ in range(20):
            r = swk("bt", "--pid", proc.pid, "--json")
            if r.returncode != 0 or "Traceback" in r.stdout + r.stderr:
                errs.append(f"exit {r.returncode}: {(r.stdout + r.stderr)[-800:]}")
                break
            for t in T.parse_swk_json(r.stdout):
                if t["frames"] and not t["stop_reason"]:
                    errs.append(f"thread {t['tid']}: no stop reason")
        st = Path(f"/proc/{proc.pid}/status").read_text()
        if "TracerPid:\t0" not in st:
            errs.append("still traced")
        if errs:
            _fail(errs)
    finally:
        proc.kill()
        proc.wait()


def test_pause_reported():
    with Parked(20) as p:
        r = swk("bt", "--pid", p.pid, "--json")
        v = swk("bt", "--pid", p.pid, "-v")
        p.untouched_errors()
    pauses = [t.get("pause_us") for t in T.parse_swk_json(r.stdout)]
    if not pauses or not all(isinstance(x, int) and 0 <= x < 10_000_000 for x in pauses):
        _fail([f"pause_us: {pauses}"], r.stdout[-2000:])
    if not re.search(r"^Thread 1 \(LWP \d+\): pause \d+ us$", v.stdout, re.M):
        _fail(["no pause in -v's thread headers"], v.stdout[:2000])


def test_i386_process():
    with Parked(10, m32=True) as p:
        r = swk("bt", "--pid", p.pid, "--json")
        errs = [] if r.returncode == 0 else [f"swk exited {r.returncode}: {r.stderr[-500:]}"]
        errs += p.untouched_errors()
        native, _ = gdb_native(p.exe, p.pid)
        errs += T.compare_swk_to_gdb(native, T.parse_swk_json(r.stdout), by_tid=True)
        if errs:
            _fail(errs, r.stdout[-2000:])


_VECTOR_PROBE = """
import json, sys
from swk_plugin.backends.ptrace import PtraceProcessState, Tracer
from swk_plugin.linux.maps import read_proc_maps
pid, n, width = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
out = {}
for how in ("copy_each", "stopped"):
    with Tracer(pid) as tracer:
        if how == "stopped":
            tracer.stop()
            tracer.capture(0, read_proc_maps(pid))
        else:
            tracer.copy_each(4096, read_proc_maps(pid))
        ps = PtraceProcessState(tracer, live_stacks=how == "stopped")
        tid = ps.get_thread_ids()[0]
        name = "ymm" if width == 32 else "xmm"
        out[how] = [ps.get_fpreg_value(f"{name}{r}", tid)[:width].hex() for r in range(n)]
print(json.dumps(out))
"""


@pytest.mark.parametrize("m32", [False, True], ids=["x86_64", "i386"])
def test_vector_registers_live(m32):
    """A live thread's FP and vector registers, as swk copies them (the XSAVE area read only as
    far as the ymm registers, the FXSAVE area not read again), are the bytes the program put
    there itself (tests/corpus/vector_regs.c): every ymm register where the CPU has AVX, else
    every xmm register; each thread let go at once (copy_each) and all held (stop)."""
    cf = (*CFLAGS, *T.m32_flags()) if m32 else CFLAGS
    exe = T.build(["vector_regs.c"], "vector-regs-m32" if m32 else "vector-regs", cf)
    proc = subprocess.Popen([str(exe)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        line = _readline(proc, 30) or ""
        if not line.startswith("ready "):
            raise T.HarnessError(f"vector_regs did not start: {line!r}")
        _ready, pid, isa = line.split()
        n, width = (8 if m32 else 16), (32 if isa == "avx" else 16)
        time.sleep(0.2)                     # into its asm and pause
        p = T.run_cmd([T.PYTHON, "-c", _VECTOR_PROBE, pid, str(n), str(width)], cwd=T.REPO, timeout=120)
    finally:
        proc.kill()
        proc.wait(timeout=10)
    if p.returncode != 0:
        _fail([f"the probe exited {p.returncode}"], p.stdout + p.stderr)
    got = json.loads(p.stdout.strip().splitlines()[-1])
    want = [bytes((37 * r + 3 * b + 11) & 0xFF for b in range(width)).hex() for r in range(n)]
    errs = [f"{how} {r}: {v} != {w}" for how, vals in got.items() for r, (v, w) in enumerate(zip(vals, want))
            if v != w]
    if errs or set(got) != {"copy_each", "stopped"}:
        _fail(errs or [f"modes {sorted(got)}"], p.stdout)


# --------------------------------------------------------------------------
# the profiler
# --------------------------------------------------------------------------

def test_profile(tmp_path):
    folded, svg = tmp_path / "p.folded", tmp_path / "p.svg"
    with Parked(20, quiet=False) as p:
        r = swk("profile", "--pid", p.pid, "--duration", "1.5", "--hz", "100", "--folded", folded,
                "--svg", svg, "--top", "10")
        errs = [] if r.returncode == 0 else [f"swk exited {r.returncode}: {r.stderr[-800:]}"]
        errs += p.untouched_errors()
    out = r.stdout
    m = re.search(r": (\d+) samples of every thread in ([\d.]+) s \((\d+) stacks\)", out)
    if not m or int(m.group(1)) < 20 or int(m.group(3)) != 5 * int(m.group(1)):
        errs.append(f"sample counts: {m and m.groups()}")
    if not re.search(r"^target paused [\d.]+% of the time", out, re.M):
        errs.append("no pause share")
    if not re.search(r"\bspin\b", out):
        errs.append("the busy thread's spin() is not among the top functions")
    lines = folded.read_text().splitlines() if folded.exists() else []
    total = 0
    for ln in lines:
        stack, _, n = ln.rpartition(" ")
        total += int(n)
        if stack.split(";")[1] not in ("_start", "clone3"):
            errs.append(f"folded stack does not start at the bottom: {ln[:200]}")
            break
    if not any(";deep;deep;" in ln and ln.split(" ")[0].endswith("__libc_pause") for ln in lines):
        errs.append("no main-thread stack in the folded output")
    if m and total != int(m.group(3)):
        errs.append(f"folded counts {total} != {m.group(3)} stacks")
    try:
        root = ET.parse(svg).getroot()
        titles = [t.text for t in root.iter("{http://www.w3.org/2000/svg}title")]
        if not any(t and t.startswith("spin ") for t in titles):
            errs.append("no spin box in the flame graph")
    except (ET.ParseError, OSError) as exc:
        errs.append(f"the SVG: {exc}")
    if errs:
        _fail(errs, out)


def test_profile_rows_are_functions_without_symbols():
    """A stripped program (no symbol table; .eh_frame kept): the busy thread's samples land in
    rows named by library and function start, the starts the unstripped program's own symbol
    table (nm) gives, the busy spin() among them; no row is a pc inside a function."""
    plain = parked_exe()
    stripped = T.build(["parked.c"], "parked-stripped", CFLAGS, ("-pthread",), post=T.post_strip_all())
    nm = T.run_cmd(["nm", "--defined-only", str(plain)], timeout=60).stdout
    starts = {int(a, 16): n for a, _t, n in (ln.split()[:3] for ln in nm.splitlines() if len(ln.split()) >= 3)}
    with Parked(20, quiet=False, exe=stripped) as p:
        r = swk("profile", "--pid", p.pid, "--duration", "1.5", "--hz", "100", "--top", "40")
    assert r.returncode == 0, r.stderr[-800:]
    rows = re.findall(rf"^\s*(\d+)\s+[\d.]+%\s+\d+\s+[\d.]+%\s+{re.escape(stripped.name)}\+0x([0-9a-f]+)$", r.stdout, re.M)
    assert rows, r.stdout
    bad = [off for _n, off in rows if int(off, 16) not in starts]
    assert not bad, f"rows inside functions: {bad}; the functions start at {sorted(map(hex, starts))[:20]}"
    top = max(rows, key=lambda row: int(row[0]))
    assert starts[int(top[1], 16)] == "spin", (top, starts.get(int(top[1], 16)))


# --------------------------------------------------------------------------
# the Python API
# --------------------------------------------------------------------------

def _py(code: str, timeout=120) -> subprocess.CompletedProcess:
    return T.run_cmd([T.PYTHON, "-c", textwrap.dedent(code)], cwd=T.REPO, timeout=timeout)


def test_new_walker_pid():
    with Parked(20) as p:
        r = _py(f"""
            from swk_plugin.walker import Walker
            w = Walker.new_walker(pid={p.pid})
            try:
                for tid in w.get_available_threads():
                    walk = w.walk_stack(tid)
                    print("SWK", tid, " ".join(f.name or "??" for f in walk))
            finally:
                w.process_state.detach()
            """)
        errs = p.untouched_errors()
    rows = [ln.split() for ln in r.stdout.splitlines() if ln.startswith("SWK ")]
    if len(rows) != 4 or "park_main" not in rows[0] or rows[0][-1] != "_start":
        errs.append(f"walks: {rows}")
    if errs:
        _fail(errs, r.stdout + r.stderr)


@pytest.mark.parametrize("where", ["plain", "signal-handler"])
def test_walk_self(where):
    code = """
        import swk_plugin
        def inner():
            walk = swk_plugin.walk_self()
            names = [f.name for f in walk]
            print("SWK", walk.complete, " ".join(n or "??" for n in names))
        """
    if where == "plain":
        code += "inner()\n"
    else:
        code += """
        import os, signal
        signal.signal(signal.SIGUSR1, lambda s, f: inner())
        os.kill(os.getpid(), signal.SIGUSR1)
        """
    r = _py(code)
    m = re.search(r"^SWK (True|False) (.*)$", r.stdout, re.M)
    if not m:
        _fail(["no walk printed"], r.stdout + r.stderr)
    names = m.group(2).split()
    errs = []
    if m.group(1) != "True":
        errs.append("the walk did not reach the bottom of the stack")
    for want in ("_PyEval_EvalFrameDefault", "Py_RunMain", "__libc_start_call_main", "_start"):
        if want not in names:
            errs.append(f"{want} missing")
    if names[-1] != "_start":
        errs.append(f"last frame {names[-1]}")
    if errs:
        _fail(errs, r.stdout + r.stderr)


def _core_case():
    case = T.CASES_BY_ID["chain-O0g"] if hasattr(T, "CASES_BY_ID") else None
    exe = T.build(["chain.c"], "chain-accessors", ("-O0", "-g"))
    core = T.make_core(exe, ["break stop_here", "run"])
    return exe, core, case


ACCESSOR_SCRIPT = """
import json, sys
from swk_plugin.backends.core import CoreProcessState
from swk_plugin.backends.accessors import AddressSpace, ProcInfo
from swk_plugin.format import walk_text
from swk_plugin.walker import Walker

core = CoreProcessState(sys.argv[1], sys.argv[2])
tid = core.get_thread_ids()[0]
direct = walk_text(Walker(core).walk_stack(tid))

# a snapshot: every byte of the core's segments and the registers, as plain data
segs = {}
for r in core.memory_regions() or ():
    try:
        segs[r.start] = core.read_raw(r.start, r.end - r.start)
    except Exception:
        pass
regs = core.read_thread_registers(tid)
libs = [(lib.path, lib.base) for lib in core.library_state.get_libraries()]
calls = {"mem": 0}

def access_mem(addr, size):
    calls["mem"] += 1
    for start, data in segs.items():
        if start <= addr and addr + size <= start + len(data):
            return data[addr - start:addr - start + size]
    raise KeyError(hex(addr))

acc = {"access_mem": access_mem, "access_reg": lambda r, t: regs[r], "threads": lambda: [tid],
       "libraries": lambda: libs, "arch": lambda: "x86_64"}
out = {"direct": direct}
for caching in ("none", "global", "per_thread"):
    space = AddressSpace(acc, "little", caching)
    calls["mem"] = 0
    out[caching] = walk_text(space.walker().walk_stack(tid))
    out[caching + "-calls"] = calls["mem"]
    space.flush_cache()
# no libraries at all: names and procedure starts from get_proc_name (a user's own
# symbolizer; here the core's symbols), code told from data by the regions
w0 = Walker(core)

def proc_name(ip):
    hit = w0.symbol_lookup.lookup_at_addr(ip)
    return ("fn_" + hit[0], ip - hit[1].value) if hit and hit[1] is not None else None

maps = [(r.start, r.end, r.perms) for r in core.memory_regions()]
bare = dict(acc, libraries=lambda: [], get_proc_name=proc_name, regions=lambda: maps)
w = AddressSpace(bare).walker()
walk = w.walk_stack(tid)
out["bare"] = [(f.ra, f.name) for f in walk]
out["bare_complete"] = walk.complete
# find_proc_info's rules are asked first
used = []

def find_proc_info(ip):
    used.append(ip)
    return None

w = AddressSpace(dict(acc, find_proc_info=find_proc_info)).walker()
w.walk_stack(tid)
out["asked"] = len(used)
# find_proc_info's own rules (here: the core's CFI, as a JIT would describe its code), with
# no ELF for swk to read: every caller found by them
from swk_plugin.unwind.cfi import cfi_rule_at
from swk_plugin.unwind.modules import module_at
released, given = [], []

def rules(ip):
    lib, mod = module_at(core, ip)
    rule = cfi_rule_at(mod, ip - lib.base) if mod is not None else None
    info = ProcInfo(ip, ip + 1, unwind_info=rule) if rule is not None else None
    if info is not None:
        given.append(info)
    return info

w = AddressSpace(dict(bare, find_proc_info=rules, put_unwind_info=released.append)).walker()
walk = w.walk_stack(tid)
out["rules"] = [(f.ra, f.stepper.name if f.stepper else None) for f in walk]
out["released"] = sorted(map(id, released)) == sorted(map(id, given)) and len(given)
out["direct_pcs"] = [f.ra for f in Walker(core).walk_stack(tid)]
print("SWKACC " + json.dumps(out))
"""


def test_accessors_snapshot_target(tmp_path):
    """A target described only by callbacks (memory and registers from a core, as plain
    data) walks as the core does, under every caching policy; without caching every read
    is a callback; with no ELF at all the walk still goes on with frame pointers and names
    from get_proc_name; find_proc_info is asked."""
    exe, core, _case = _core_case()
    script = tmp_path / "acc.py"
    script.write_text(ACCESSOR_SCRIPT)
    r = T.run_cmd([T.PYTHON, str(script), str(core), str(exe)], cwd=T.REPO, timeout=120)
    m = re.search(r"^SWKACC (.*)$", r.stdout, re.M)
    if not m:
        _fail(["no result"], r.stdout + r.stderr)
    out = json.loads(m.group(1))
    errs = []
    for caching in ("none", "global", "per_thread"):
        if out[caching] != out["direct"]:
            errs.append(f"{caching}: {out[caching]} != {out['direct']}")
    if not out["none-calls"] > out["global-calls"] > 0:
        errs.append(f"access_mem calls: none {out['none-calls']}, global {out['global-calls']}")
    bare = out["bare"]
    names = [n for _ra, n in bare]
    if names[:5] != ["fn_stop_here", "fn_c", "fn_b", "fn_a", "fn_main"]:
        errs.append(f"bare walk: {bare[:8]}")
    if out["asked"] < 4:
        errs.append(f"find_proc_info asked {out['asked']} times")
    pcs = [ra for ra, _st in out["rules"]]
    if pcs != out["direct_pcs"] or not all(st == "ProcInfoStepper" for _ra, st in out["rules"][1:]):
        errs.append(f"find_proc_info's rules: {out['rules']} (the core's pcs: {out['direct_pcs']})")
    if not out["released"]:
        errs.append("put_unwind_info was not called once for each ProcInfo given")
    if errs:
        _fail(errs, r.stdout[-3000:])


def test_accessors_contract_errors():
    r = _py("""
        from swk_plugin.backends.accessors import AddressSpace
        from swk_plugin.errors import SwkError
        for args in (({},), ({"access_mem": len},), ({"access_mem": len, "access_reg": len}, "big"),
                     ({"access_mem": len, "access_reg": len}, "little", "sometimes")):
            try:
                AddressSpace(*args)
                print("SWKERR none")
            except SwkError as e:
                print("SWKERR", e)
        """)
    lines = [ln[7:] for ln in r.stdout.splitlines() if ln.startswith("SWKERR ")]
    want = ["no access_mem", "no access_reg", "big-endian", "caching 'sometimes'"]
    if len(lines) != 4 or any(w not in ln for w, ln in zip(want, lines)):
        _fail([f"errors: {lines}"], r.stdout + r.stderr)


def test_a_thread_on_its_way_out_counts_as_gone():
    """PTRACE_SEIZE of a thread in its exit fails with EPERM, not ESRCH: such a thread (a
    zombie, or one whose /proc entry is gone) is left out of the walk, not an error."""
    from swk_plugin.backends.ptrace import _exiting
    me = os.getpid()
    assert not _exiting(me, me)
    assert _exiting(me, 2 ** 22 + 12345)          # no such thread
    child = subprocess.Popen(["true"])
    deadline = time.time() + 10
    while Path(f"/proc/{child.pid}/status").read_text().find("State:\tZ") < 0 and time.time() < deadline:
        time.sleep(0.01)
    try:
        assert _exiting(child.pid, child.pid)     # a zombie
    finally:
        child.wait()
