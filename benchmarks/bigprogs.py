"""swk on big real programs with distribution DWARF (issue 25, item 4), against GDB, in one run.

    .venv/bin/python benchmarks/bigprogs.py [--runs N] [--only NAME[,NAME...]] [--baseline DIR]

Each program is started parked in a known place (Debian's own binaries, their DWARF from the -dbg
packages scripts/setup.sh installs: python3.11 + python3.11-dbg in a 30-deep Python recursion
sleeping; lua5.4 + liblua5.4-0-dbg blocked reading its stdin; sqlite3's shell and bash blocked
reading stdin, with libc6-dbg), then, after one untimed run of each, --runs times, interleaved, each
a fresh process on the same running program:
  `swk bt --pid P`                         against `gdb -p P -batch -ex 'thread apply all bt'`
  `gdb -p P -ex 'source gdb_init.py' -ex swk-bt`   against `gdb -p P -ex bt`   (attach + first walk)
swk runs twice each way: warm, with its on-disk cache of inflated debug sections filled by the
untimed run (elf/diskcache.py: what a user's second and later sessions meet), and cold, with the
cache off (SWK_CACHE_DIR=off: a first session).  Medians of wall time, the ratios, and issue 25's goals beside them: `swk bt --pid` <= 0.5x `gdb -p`;
in GDB, the first swk-bt adds at most a quarter to attach + bt (ratio <= 1.25).  --baseline DIR: another
tree of swk (`git archive REV swk_plugin gdb_init.py | tar -x -C DIR`) timed the same two ways in the
same rounds, with this checkout's venv: a before/after that the machine's load moves alike.  Times are
printed, never asserted.  Needs ptrace (root, or kernel.yama.ptrace_scope 0).
"""
import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import REPO, SWK, SWK_ENV, code_version

GDB = ["gdb", "-nx", "-batch", "-q", "-iex", "set debuginfod enabled off", "-ex", "set pagination off"]
PY_SCRIPT = "import time\ndef f(n):\n    if n == 0:\n        time.sleep(10000)\n    return f(n - 1)\nf(30)\n"

#: name -> (argv, whether it reads stdin (kept open and silent), what it needs installed).  Debian's
#: own binaries by their paths: a python3.11 found first on $PATH (pyenv's, built here with plain
#: uncompressed DWARF) is not the program these figures are about.
PROGRAMS = {
    "python3.11": (["/usr/bin/python3.11", "-c", PY_SCRIPT], False, "python3.11, python3.11-dbg"),
    "lua5.4": (["/usr/bin/lua5.4", "-e", "io.read()"], True, "lua5.4, liblua5.4-0-dbg"),
    "sqlite3": (["/usr/bin/sqlite3"], True, "sqlite3"),
    "bash": (["/bin/bash", "-c", "read x"], True, "bash"),
}
GOALS = {"pid": 0.5, "gdb": 1.25}
#: GDB's Python writes swk's compiled modules as a user's would (PYTHONDONTWRITEBYTECODE left
#: out: set, every session would compile the modules changed since they were last written).
GDB_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def start(argv, stdin):
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    time.sleep(1.0)               # parked: asleep, or blocked in read
    if proc.poll() is not None:
        raise SystemExit(f"benchmark: {argv[0]} ended at once")
    return proc


def wall(argv, env=None, cwd=REPO):
    t = time.perf_counter()
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=cwd, timeout=600)
    took = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"benchmark: {' '.join(argv)} exited {p.returncode}: {p.stdout[-600:]!r}")
    return took, p.stdout.decode(errors="replace")


def bench(name, runs, baseline=None):
    argv, stdin, _needs = PROGRAMS[name]
    proc = start(argv, stdin)
    pid = str(proc.pid)
    cache = tempfile.mkdtemp(prefix="swk-bench-cache-")
    warm_swk, warm_gdb = {**SWK_ENV, "SWK_CACHE_DIR": cache}, {**GDB_ENV, "SWK_CACHE_DIR": cache}
    cold_swk, cold_gdb = {**SWK_ENV, "SWK_CACHE_DIR": "off"}, {**GDB_ENV, "SWK_CACHE_DIR": "off"}
    swk_bt = [*GDB, "-p", pid, "-ex", f"source {REPO / 'gdb_init.py'}", "-ex", "swk-bt"]
    kinds = {
        "swk --pid": ([str(SWK), "bt", "--pid", pid], warm_swk, REPO),
        "swk --pid cold": ([str(SWK), "bt", "--pid", pid], cold_swk, REPO),
        "gdb -p": ([*GDB, "-p", pid, "-ex", "thread apply all bt"], GDB_ENV, REPO),
        "gdb + swk-bt": (swk_bt, warm_gdb, REPO),
        "gdb+swk-bt cold": (swk_bt, cold_gdb, REPO),
        "gdb + bt": ([*GDB, "-p", pid, "-ex", "bt"], GDB_ENV, REPO),
    }
    if baseline is not None:
        base_env = {**GDB_ENV, "PYTHONPATH": str(baseline), "SWK_VENV": str(REPO / ".venv")}
        kinds["base swk --pid"] = ([str(REPO / ".venv" / "bin" / "python"), "-m", "swk_plugin", "bt", "--pid", pid],
                                   base_env, baseline)
        kinds["base gdb+swk-bt"] = ([*GDB, "-p", pid, "-ex", f"source {baseline / 'gdb_init.py'}", "-ex", "swk-bt"],
                                    base_env, baseline)
    times = {k: [] for k in kinds}
    frames = {}
    try:
        for k, (a, env, cwd) in kinds.items():    # a warm-up, not timed: files in the page cache,
            wall(a, env, cwd)                     # swk's modules compiled (as in any later session)
        for _ in range(runs):
            for k, (a, env, cwd) in kinds.items():
                t, out = wall(a, env, cwd)
                times[k].append(t)
                frames[k] = sum(1 for ln in out.splitlines() if ln.startswith("#"))
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        shutil.rmtree(cache, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"== {name} (pid {pid}): frames printed " + ", ".join(f"{k} {n}" for k, n in frames.items()) + " ==")
    for k in kinds:
        print(f"  {k:<14} {med[k]:7.3f}s")
    r_pid = med["swk --pid"] / med["gdb -p"]
    r_gdb = med["gdb + swk-bt"] / med["gdb + bt"]
    c_pid = med["swk --pid cold"] / med["gdb -p"]
    c_gdb = med["gdb+swk-bt cold"] / med["gdb + bt"]
    for what, r, c, goal in (("swk bt --pid / gdb -p         ", r_pid, c_pid, GOALS["pid"]),
                             ("attach + swk-bt / attach + bt ", r_gdb, c_gdb, GOALS["gdb"])):
        print(f"  {what} warm {r:5.2f}x, cold {c:5.2f}x  (goal <= {goal}x: "
              f"warm {'met' if r <= goal else 'NOT MET'}, cold {'met' if c <= goal else 'NOT MET'})")
    if baseline is not None:
        print(f"  baseline: swk bt --pid / gdb -p {med['base swk --pid'] / med['gdb -p']:5.2f}x, "
              f"attach + swk-bt / attach + bt {med['base gdb+swk-bt'] / med['gdb + bt']:5.2f}x")
    return r_pid, r_gdb, c_pid, c_gdb


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", help="comma-separated program names: " + ", ".join(PROGRAMS))
    ap.add_argument("--baseline", type=Path, help="another tree of swk (swk_plugin/, gdb_init.py) timed alongside")
    args = ap.parse_args()
    names = args.only.split(",") if args.only else list(PROGRAMS)
    print(f"swk on big programs ({os.uname().machine}, {os.cpu_count()} cores); medians of {args.runs} runs, "
          f"each a fresh process, interleaved; swk: {code_version()}")
    missing = [n for n in names if n not in PROGRAMS or shutil.which(PROGRAMS[n][0][0]) is None]
    for n in missing:
        print(f"  {n}: not installed ({PROGRAMS[n][2] if n in PROGRAMS else 'unknown program'}): left out")
    baseline = args.baseline.resolve() if args.baseline else None
    if baseline is not None and not (baseline / "swk_plugin").is_dir():
        raise SystemExit(f"benchmark: {baseline} has no swk_plugin/")
    results = {n: bench(n, args.runs, baseline) for n in names if n not in missing}
    for label, pick in (("warm", lambda r: r[:2]), ("cold", lambda r: r[2:])):
        met = all(a <= GOALS["pid"] and b <= GOALS["gdb"] for a, b in map(pick, results.values()))
        print(f"== issue 25's big-program goals, {label}: {'all met' if met else 'NOT all met'} ==")
    return 0


if __name__ == "__main__":
    sys.exit(main())
