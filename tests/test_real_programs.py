"""Real programs nobody here wrote, sampled at random moments (issue 8, "Robustness").

The programs (drivers in tests/real_programs/): CPython 3.11 in Python
recursion, Node running JIT-compiled JavaScript recursion, Perl, Tcl and bash
in recursive subs / procs / shell functions, the sqlite3 CLI on a long
recursive CTE, multithreaded xz (-T2) and gzip compressing /dev/urandom.

Each sample starts the program, waits a random time, stops it with SIGSTOP
(so the moment is exact: gdb would otherwise let it run on while it reads
symbols, seconds for node), attaches ``gdb -p PID`` in batch mode and, in ONE
gdb session, records

  1. GDB's own walk of every thread (its Python API, as swk_testlib's native
     dump), the auxiliary vector and the frame-pointer chains of every thread
     (real_programs/fpchain.py), all BEFORE gdb_init.py is sourced, so swk's
     frame unwinder plays no part in them;
  2. ``swk-bt -all -json``;
  3. GDB's walk again, now with swk registered as its frame unwinder;

then gdb detaches (-batch detaches from a process it attached to) and the
program is killed.  Per program: one moment in the first 30 ms (the dynamic
linker, libc's and the interpreter's start-up) and SWK_REAL_SAMPLES (3)
moments while it runs.  Assertions, per sample:

  * swk walks EVERY thread to the bottom: a stop reason saying "bottom of the
    stack", and a last frame that is the start of the process (_start, or in a
    stripped executable the unnamed code at AT_ENTRY) or of a thread
    (start_thread, clone, clone3); stack pointers strictly increase except
    after a signal frame; frame 0 is "context" and every caller is found by a
    real stepper;
  * on every thread where GDB's own walk is complete (it ends "outermost" at
    such a frame, with no error), swk's walk is the same frame by frame: pc,
    sp, function name, signal frames (swk_testlib.compare_swk_to_gdb);
  * Node (running moments): some thread has frames in JIT code (anonymous
    executable mappings, no function name); those frames are exactly V8's
    frame-pointer chain (nothing skipped, nothing invented; see
    fp_chain_errors); GDB's own walk of that thread is NOT complete and right
    (the point of the sample; what GDB does is printed); with swk as its
    unwinder, GDB's bt of that thread is swk's walk down to _start;
  * xz (running moments): at least two threads.

Random moments, and the bytes xz and gzip compress, are drawn from the suite's
one seed (``SWK_TEST_SEED``, fixed under CI; tests/swk_suite.py), printed at the
start and end of the run and in every failure, so a failing moment can be tried
again (timing is never exactly reproducible, but the program, its input and the
delay are).  Each test prints its samples' summaries (-s or -rA shows them) and
asserts that swk was compared with GDB's complete walk of at least one thread.

Run the module as a script to take many samples by hand:

    .venv/bin/python tests/test_real_programs.py node 20 running
    SWK_REAL_DUMP=/tmp/d .venv/bin/python tests/test_real_programs.py all 15 startup
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import swk_suite as S  # noqa: E402
import swk_testlib as T  # noqa: E402

pytestmark = [pytest.mark.swk]

DRIVERS = T.TESTS / "real_programs"
SAMPLES = int(os.environ.get("SWK_REAL_SAMPLES", "3"))
SEED = S.SEED

#: Functions where a walk may end: the start of the process (_start; the dynamic
#: linker's _dl_start_user, the part of its _start that runs the libraries'
#: initialisers) or of a thread.
BOTTOMS = frozenset({"_start", "_dl_start_user", "__libc_start_main", "__libc_start_main_impl",
                     "start_thread", "clone", "__clone", "clone3", "__clone3", "__clone_internal"})
TRUSTS = frozenset({"cfi", "frame-pointer", "analysis", "scan", "signal"})

MARK_GDB, MARK_SWK, MARK_UNW, MARK_END = "SWKREAL-GDB", "SWKREAL-SWK", "SWKREAL-UNW", "SWKREAL-END"
FPCHAIN_TAG = "SWKFPCHAIN "
#: the return address in _start (the call of __libc_start_main) is this close to the entry point
START_CALL_MAX = 64
#: sample 0 of each program is a moment in its first 30 ms: the dynamic linker and initialisation
STARTUP_WINDOW = 0.03


@dataclasses.dataclass(frozen=True)
class Program:
    id: str
    argv: tuple[str, ...]
    #: the Debian package that installs it (scripts/setup.sh installs them all)
    package: str = ""
    #: stdin: None (/dev/null) or "random" (an endless stream of bytes drawn from the seed)
    stdin: str | None = None
    #: the random delay (seconds) is drawn uniformly from this range
    delay: tuple[float, float] = (0.2, 1.0)
    #: (Sample) -> list of errors: program-specific checks of the running moments
    extra: Callable | None = None
    note: str = ""

    @property
    def exe(self) -> str:
        return self.argv[0]


# --------------------------------------------------------------------------
# program-specific checks
# --------------------------------------------------------------------------

def _jit_frames(frames: list[dict]) -> list[dict]:
    """swk's frames in code outside every ELF file (anonymous executable memory)."""
    return [f for f in frames if f.get("library") is None and f.get("mapping")]


def fp_chain_errors(frames: list[dict], chains: list[list[list[int]]], tag: str) -> list[str]:
    """swk's JIT frames against V8's frame-pointer chain (tests/real_programs/fpchain.py).

    A link of the chain (rbp, saved rbp, return address) stands for the caller
    frame (pc, sp) = (return address, rbp + 16): the return address, and the
    stack pointer right after the call returns (the callee's CFA), which is
    how swk reports a caller.  Of the chains GDB's session recorded (from the
    thread's %rbp and from the %rbp of GDB's own frames up to the first JIT
    frame), the one holding most of swk's frames is the oracle R.  Then: every
    JIT frame below the topmost JIT frame's caller is in R (the topmost JIT
    frame's caller may be missing from R: the sample may stop in a prologue,
    before %rbp is pushed), and no frame of R between the first and the last
    frame swk shares with R is missing from swk's walk (nothing skipped)."""
    real = T.real_frames(frames)
    keys = [(f.get("pc"), f.get("sp")) for f in real]
    jit_levels = [i for i, f in enumerate(real) if f.get("library") is None and f.get("mapping")]
    if not jit_levels:
        return []
    have = set(keys)
    oracle = [[(ret, rbp + 16) for rbp, _saved, ret in chain] for chain in chains] or [[]]
    best = max(oracle, key=lambda c: len(set(c) & have))
    in_r = set(best)
    errs = []
    first = jit_levels[0]
    for i in jit_levels:
        if i > first + 1 and keys[i] not in in_r:
            errs.append(f"{tag} #{i}: JIT frame pc {T._hex(keys[i][0])} sp {T._hex(keys[i][1])} is not a "
                        f"frame of V8's frame-pointer chain")
    pos = [k for k, key in enumerate(best) if key in have]
    if pos:
        missing = [key for key in best[pos[0]:pos[-1] + 1] if key not in have]
        if missing:
            errs.append(f"{tag}: swk skipped {len(missing)} frame(s) of V8's frame-pointer chain: "
                        + ", ".join(f"pc {T._hex(pc)} sp {T._hex(sp)}" for pc, sp in missing[:5]))
    return errs[:8]


def _node_check(sample: "Sample") -> list[str]:
    """At least one thread runs JIT code: swk's JIT frames are V8's frame
    chain; GDB's own walk of that thread is incomplete or differs from swk's
    (that is the point of the sample: recorded in the summary); with swk as
    its unwinder, GDB's bt is swk's walk."""
    errs = []
    jit_threads = [n for n, t in sample.swk.items() if _jit_frames(t.get("frames") or [])]
    if not jit_threads:
        return ["no thread has frames in JIT code (anonymous mappings): was JavaScript not running "
                "JIT-compiled code at this moment?"]
    for num in jit_threads:
        frames = sample.swk[num]["frames"]
        tag = f"thread {num}"
        if any(f.get("function") is not None for f in _jit_frames(frames)):
            errs.append(f"{tag}: a JIT frame has a function name")
        errs += fp_chain_errors(frames, sample.fp_chains.get(num, []), tag)
        gdb = sample.native.get(num)
        if gdb is not None and _gdb_complete(gdb, sample.entry) and not T.compare_swk_to_gdb(
                {num: gdb}, [sample.swk[num]], check_sp=True):
            errs.append(f"{tag}: GDB's own walk went through the JIT code right: this sample no longer "
                        f"shows what it is for")
        unw = sample.native_unwinder.get(num)
        if unw is None or not _gdb_complete(unw, sample.entry):
            errs.append(f"{tag}: with swk as GDB's unwinder, GDB's bt still does not reach the bottom "
                        f"({_gdb_end(unw) if unw is not None else 'no walk'})")
        elif T.pcs(unw) != T.pcs(frames):
            errs.append(f"{tag}: with swk as GDB's unwinder, GDB's bt is not swk's walk")
    return errs


def _xz_check(sample: "Sample") -> list[str]:
    if len(sample.swk) < 2:
        return [f"xz -T2 had {len(sample.swk)} thread(s): the multithreaded compressor was not running"]
    return []


def _programs() -> list[Program]:
    py = "/usr/bin/python3.11"
    return [
        Program("python", (py, str(DRIVERS / "recurse.py")), "python3.11",
                note="CPython 3.11: Python recursion 300 deep, every 3rd level through sorted(key=f)"),
        Program("node", ("/usr/bin/node", "--stack-size=4000", str(DRIVERS / "recurse.js")), "nodejs",
                delay=(1.0, 2.0), extra=_node_check,
                note="Node/V8: JIT-compiled recursion (no symbols, no CFI)"),
        Program("perl", ("/usr/bin/perl", str(DRIVERS / "recurse.pl")), "perl", note="Perl: a recursive sub"),
        Program("tcl", ("/usr/bin/tclsh", str(DRIVERS / "recurse.tcl")), "tcl", note="tclsh: a recursive proc"),
        Program("sqlite", ("/usr/bin/sqlite3", ":memory:", f".read {DRIVERS / 'count.sql'}"), "sqlite3",
                note="sqlite3 CLI: a recursive CTE counting to 2e9"),
        Program("xz", ("/usr/bin/xz", "-T2", "-1", "-c"), "xz-utils", stdin="random", delay=(0.5, 1.5),
                extra=_xz_check, note="xz -T2: multithreaded compression of random bytes"),
        Program("gzip", ("/usr/bin/gzip", "-c"), "gzip", stdin="random", note="gzip: compressing random bytes"),
        Program("bash", ("/usr/bin/bash", str(DRIVERS / "recurse.sh")), "bash",
                note="bash: shell-function recursion 150 deep"),
    ]


PROGRAMS = _programs()
PROGRAMS_BY_ID = {p.id: p for p in PROGRAMS}


# --------------------------------------------------------------------------
# one sample
# --------------------------------------------------------------------------

@dataclasses.dataclass
class Sample:
    program: Program
    index: int
    delay: float
    startup: bool                                 # a moment in the first STARTUP_WINDOW seconds
    pid: int
    output: str
    native: dict[int, T.ThreadFrames]            # GDB alone
    swk: dict[int, dict]                          # swk-bt -all -json, by GDB thread number
    native_unwinder: dict[int, T.ThreadFrames]    # GDB with swk as its unwinder
    seconds: float
    entry: int | None                             # AT_ENTRY: the executable's _start
    fp_chains: dict[int, list[list[list[int]]]]   # thread -> frame-pointer chains (fpchain.py)

    @property
    def tag(self) -> str:
        return (f"{self.program.id} sample {self.index} (SWK_TEST_SEED={SEED}, "
                f"{'startup, ' if self.startup else ''}delay {self.delay:.3f} s, "
                f"pid {self.pid})")


class AttachRefused(T.HarnessError):
    """ptrace refused gdb -p (e.g. Yama's ptrace_scope >= 1 without CAP_SYS_PTRACE)."""


def _section(output: str, start: str, end: str) -> str:
    lines = output.splitlines()
    try:
        i, j = lines.index(start), lines.index(end, lines.index(start))
    except ValueError:
        raise T.OutputError(f"markers {start}/{end} missing from gdb's output\n--- output ---\n{output[-6000:]}")
    return "\n".join(lines[i + 1:j])


def gdb_attach_commands() -> list[str]:
    return [f"echo {MARK_GDB}\\n", *T.native_commands(True), "info auxv",
            f"source {DRIVERS / 'fpchain.py'}", "python swk_fp_chains()", f"echo {MARK_SWK}\\n",
            f"source {T.GDB_INIT}", T.swk_bt_command(), f"echo {MARK_UNW}\\n",
            "python swk_native_dump(True)", f"echo {MARK_END}\\n"]


def _feed(pipe, rng: random.Random) -> None:
    """Write bytes drawn from rng to the program's stdin until it is gone."""
    try:
        while True:
            pipe.write(rng.randbytes(1 << 16))
    except (BrokenPipeError, OSError, ValueError):
        pass
    finally:
        try:
            pipe.close()
        except OSError:
            pass


def _kill(proc: subprocess.Popen) -> None:
    """Kill the program's whole process group (bash forks subshells for $(...))."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.kill()
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pass


def _wait_stopped(pid: int, timeout: float = 10) -> None:
    """Wait until every thread of pid is in the stopped state (T)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        states = []
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            states.append(stat[stat.rfind(")") + 2:].split()[0])
        if states and all(st in "TtZX" for st in states):
            return
        time.sleep(0.002)
    raise T.HarnessError(f"pid {pid} did not stop after SIGSTOP")


@contextlib.contextmanager
def stopped_after(prog: Program, delay: float, data_rng: random.Random):
    """The program started (its input, if it reads one, drawn from ``data_rng``), stopped with
    SIGSTOP after ``delay`` seconds (the moment is then exact, not whenever gdb gets round to
    attaching: it reads the program's symbols first, up to seconds for node), and killed with
    its process group when the block ends."""
    proc = subprocess.Popen(list(prog.argv), stdin=subprocess.PIPE if prog.stdin else subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                            cwd=DRIVERS)
    feeder = None
    if prog.stdin:
        feeder = threading.Thread(target=_feed, args=(proc.stdin, data_rng), daemon=True)
        feeder.start()
    try:
        time.sleep(delay)
        if proc.poll() is not None:
            raise T.HarnessError(f"{prog.id} exited ({proc.returncode}) before it was sampled")
        os.kill(proc.pid, signal.SIGSTOP)
        _wait_stopped(proc.pid)
        yield proc
    finally:
        _kill(proc)
        if feeder is not None:
            feeder.join(timeout=30)


def take_sample(prog: Program, index: int, rng: random.Random, startup: bool = False,
                timeout: float = 120) -> Sample:
    """Start prog, stop it after a random delay (SIGSTOP: the moment is then exact, not
    whenever gdb gets round to attaching), attach gdb, record, kill the program.
    startup: a moment in the program's first STARTUP_WINDOW seconds (the dynamic
    linker, libc's and the interpreter's initialisation); else in prog.delay."""
    delay = rng.uniform(0, STARTUP_WINDOW) if startup else rng.uniform(*prog.delay)
    with stopped_after(prog, delay, random.Random(rng.getrandbits(64))) as proc:
        argv = T.gdb_argv(None, gdb_attach_commands())
        argv[argv.index("-q") + 1:argv.index("-q") + 1] = ["-p", str(proc.pid)]
        t0 = time.monotonic()
        out = T.run_cmd(argv, timeout=timeout).stdout
        seconds = time.monotonic() - t0
    if "ptrace: Operation not permitted" in out:
        raise AttachRefused(f"gdb may not attach to a process here (ptrace_scope?):\n{out[-2000:]}")
    gdb_part = _section(out, MARK_GDB, MARK_SWK)
    native = T.parse_native(gdb_part)
    swk_list = T.parse_swk_json(_section(out, MARK_SWK, MARK_UNW))
    swk = T.thread_by_key(swk_list, native)
    unw = T.parse_native(_section(out, MARK_UNW, MARK_END))
    m = re.search(r"^\d+\s+AT_ENTRY\s.*?(0x[0-9a-f]+)\s*$", gdb_part, re.M)
    chains = {}
    for line in gdb_part.splitlines():
        if line.startswith(FPCHAIN_TAG):
            obj = json.loads(line[len(FPCHAIN_TAG):])
            chains[obj["thread"]] = obj["chains"]
    return Sample(prog, index, delay, startup, proc.pid, out, native, swk, unw, seconds,
                  int(m.group(1), 16) if m else None, chains)


# --------------------------------------------------------------------------
# checks
# --------------------------------------------------------------------------

def _base(name: str | None) -> str | None:
    return None if name is None else T.strip_params(name).split("@", 1)[0]


def at_bottom(function: str | None, pc: int | None, entry: int | None) -> bool:
    """A frame where a stack ends: a start function by name, or (in a stripped
    executable, whose _start has no symbol) the call in the code at AT_ENTRY."""
    if _base(function) in BOTTOMS:
        return True
    return function is None and entry is not None and pc is not None and 0 < pc - entry <= START_CALL_MAX


def _gdb_complete(tf: T.ThreadFrames, entry: int | None) -> bool:
    """GDB's own walk of a thread ended where a stack ends, as it should."""
    real = T.real_frames(tf)
    return (not tf.error and tf.stop_reason == "outermost" and bool(real)
            and at_bottom(real[-1].function, real[-1].pc, entry))


def _gdb_end(tf: T.ThreadFrames) -> str:
    real = T.real_frames(tf)
    last = real[-1] if real else None
    return (f"{len(real)} frames, last {last.function if last else None!r} at "
            f"{T._hex(last.pc) if last else None}, stop {tf.stop_reason!r}"
            + (f", error {tf.error!r}" if tf.error else ""))


def swk_thread_errors(st: dict, tag: str, entry: int | None) -> list[str]:
    """swk walked this thread completely, and plausibly."""
    errs = []
    frames = st.get("frames") or []
    reason = st.get("stop_reason") or ""
    if not frames:
        return [f"{tag}: no frames"]
    if "bottom of the stack" not in reason:
        errs.append(f"{tag}: the walk did not reach the bottom: {reason!r}")
    last = T.real_frames(frames)[-1]
    if not at_bottom(last.get("function"), last.get("pc"), entry):
        errs.append(f"{tag}: the last frame is {last.get('function')!r} at {T._hex(last.get('pc'))} "
                    f"({last.get('library') or last.get('mapping')}), not the start of a process or thread "
                    f"(stop reason {reason!r})")
    if frames[0].get("trust") != "context":
        errs.append(f"{tag}: frame 0 trust {frames[0].get('trust')!r}")
    prev = None
    for f in frames:
        if T._is_virtual(f):     # inline and tail-call frames share their caller's sp
            continue
        if prev is not None:
            if f.get("trust") not in TRUSTS:
                errs.append(f"{tag} #{f.get('level')}: trust {f.get('trust')!r}")
            if prev.get("kind") != "signal" and not f.get("sp", 0) > prev.get("sp", 0):
                errs.append(f"{tag} #{f.get('level')}: sp {T._hex(f.get('sp'))} not above the callee's "
                            f"{T._hex(prev.get('sp'))}")
        prev = f
    return errs[:12]


def compared_with_gdb(s: Sample) -> list[int]:
    """The threads of a sample where GDB's own walk is complete: swk's walk is compared with it."""
    return [num for num in sorted(s.native) if num in s.swk and _gdb_complete(s.native[num], s.entry)]


def sample_errors(s: Sample) -> list[str]:
    errs = []
    if s.entry is None:
        errs.append("no AT_ENTRY in `info auxv`")
    if set(s.swk) != set(s.native):
        errs.append(f"threads: swk {sorted(s.swk)} != gdb {sorted(s.native)}")
    for num in sorted(s.swk):
        errs += swk_thread_errors(s.swk[num], f"thread {num}", s.entry)
    for num in compared_with_gdb(s):
        errs += T.compare_swk_to_gdb({num: s.native[num]}, [s.swk[num]], check_sp=True)
    if s.program.extra is not None and not s.startup:
        errs += s.program.extra(s)
    return errs


def summary(s: Sample) -> str:
    lines = [f"{s.tag}: gdb session {s.seconds:.1f} s, {len(s.swk)} thread(s), "
             f"{len(compared_with_gdb(s))} compared with GDB's complete walk"
             + (f"  [{s.program.note}]" if s.index == 0 and s.program.note else "")]
    for num in sorted(set(s.native) | set(s.swk)):
        st = s.swk.get(num, {})
        frames = T.real_frames(st.get("frames") or [])
        jit = len(_jit_frames(frames))
        trusts: dict[str, int] = {}
        for f in frames:
            trusts[f.get("trust")] = trusts.get(f.get("trust"), 0) + 1
        gdb = s.native.get(num)
        unw = s.native_unwinder.get(num)
        lines.append(f"  thread {num}: swk {len(frames)} frames{f' ({jit} in JIT code)' if jit else ''}, "
                     f"trust {trusts}, stop {st.get('stop_reason')!r}")
        if frames:
            top = [T.strip_params(f.get("function")) or (f.get("mapping") and "<jit>") or T._hex(f.get("pc"))
                   for f in frames[:6]]
            bottom = [T.strip_params(f.get("function")) or T._hex(f.get("pc")) for f in frames[-3:]]
            lines.append(f"    swk: {' < '.join(map(str, top))} ... {' < '.join(map(str, bottom))}")
        if gdb is not None:
            lines.append(f"    gdb alone: {'complete' if _gdb_complete(gdb, s.entry) else 'INCOMPLETE'}: {_gdb_end(gdb)}")
        if unw is not None:
            lines.append(f"    gdb + swk unwinder: {'complete' if _gdb_complete(unw, s.entry) else 'INCOMPLETE'}: "
                         f"{_gdb_end(unw)}")
    return "\n".join(lines)


def _detail(s: Sample) -> str:
    return ("--- summary ---\n" + summary(s) + "\n--- gdb alone ---\n" + T.format_native(s.native)
            + "\n--- gdb output (tail) ---\n" + s.output[-4000:])


# --------------------------------------------------------------------------
# the tests
# --------------------------------------------------------------------------

def _need_installed(prog: Program) -> None:
    S.need_tool(T.GDB, "gdb")
    if not os.access(prog.exe, os.X_OK):
        S.missing(f"{prog.exe} not found", S.install_hint(prog.package))


def program_rng(prog: Program) -> random.Random:
    """The moments and inputs of prog's samples: drawn from the suite's seed."""
    return S.rng_for(f"real-programs-{prog.id}")


@pytest.mark.parametrize("prog", [pytest.param(p, id=p.id) for p in PROGRAMS])
def test_real_program(prog: Program, record_property):
    _need_installed(prog)
    rng = program_rng(prog)
    failures, summaries = [], []
    compared = 0
    for i in range(SAMPLES + 1):
        try:
            s = take_sample(prog, i, rng, startup=i == 0)
        except AttachRefused as exc:
            S.missing(f"gdb may not attach to a running process ({str(exc).splitlines()[0]})",
                      "run as root, or sysctl kernel.yama.ptrace_scope=0")
        summaries.append(summary(s))
        compared += len(compared_with_gdb(s))
        errs = sample_errors(s)
        if errs:
            failures.append(f"{s.tag}:\n  " + "\n  ".join(errs) + "\n" + _detail(s))
    summaries.append(f"{prog.id}: {compared} thread walk(s) of swk compared with GDB's complete walk "
                     f"over {SAMPLES + 1} samples (SWK_TEST_SEED={SEED})")
    record_property("samples", "\n".join(summaries))
    print("\n" + "\n".join(summaries))
    if compared == 0:
        failures.append(f"{prog.id}: no thread of any sample had a complete GDB walk: swk was compared "
                        f"with nothing (SWK_TEST_SEED={SEED})\n" + "\n".join(summaries))
    if failures:
        pytest.fail("\n\n".join(failures), pytrace=False)


# --------------------------------------------------------------------------
# regressions: moments the samples found, made deterministic
# --------------------------------------------------------------------------

def test_stopped_at_dynamic_linker_entry():
    """A process stopped at its very first instruction, the dynamic linker's _start
    (a startup sample of xz landed there): the link map does not exist yet, so swk
    knew no library at that pc and could not walk frame 0.  The dynamic linker now
    comes from AT_BASE and the program's PT_INTERP: frame 0 is ld.so's _start, where
    the stack ends.  `starti` stops there every time."""
    S.need_tool(T.GDB, "gdb")
    exe = T.build(["chain.c"], "real-loader-entry", ["-O0", "-g"])
    out = T.run_gdb(exe, ["starti", *T.native_commands(True), T.swk_bt_command()], swk=True)
    native = T.parse_native(out)
    threads = T.parse_swk_json(out)
    assert len(threads) == 1, out
    frames, reason = threads[0]["frames"], threads[0]["stop_reason"]
    assert frames[0]["function"] == "_start" == native[1][0].function, out
    assert frames[0]["pc"] == native[1][0].pc, out
    assert os.path.basename(frames[0]["library"] or "").startswith("ld-linux"), frames[0]
    assert len(frames) == 1 and "bottom of the stack" in reason, (frames, reason)


if __name__ == "__main__":  # pragma: no cover - by hand
    # test_real_programs.py [PROGRAM[,PROGRAM...]|all] [N] [startup|running|both]
    which = (sys.argv[1] if len(sys.argv) > 1 else "all").split(",")
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    mode = sys.argv[3] if len(sys.argv) > 3 else "both"
    dump = os.environ.get("SWK_REAL_DUMP")  # a directory: gdb's output of each failing sample goes there
    print(f"SWK_TEST_SEED={SEED}")
    bad = 0
    for pid in ([p.id for p in PROGRAMS] if which == ["all"] else which):
        prog = PROGRAMS_BY_ID[pid]
        rng = program_rng(prog)
        for i in range(n):
            startup = mode == "startup" or (mode == "both" and i == 0)
            s = take_sample(prog, i, rng, startup=startup)
            errs = sample_errors(s)
            print(summary(s) if os.environ.get("SWK_REAL_VERBOSE") or errs else summary(s).splitlines()[0])
            for e in errs:
                print("  ERROR", e)
            if errs:
                bad += 1
                if dump:
                    Path(dump, f"{prog.id}-{i}.out").write_text(s.output)
    print(f"{bad} sample(s) failed")
