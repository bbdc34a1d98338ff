"""swk on a process of thousands of threads (issue 25), live and on its core, against GDB and eu-stack.

    .venv/bin/python benchmarks/threads.py [--runs N] [--threads 1000,4000] [--stack-kib 64] [--keep-cores]

Builds benchmarks/manythreads.c (-O2 -g): `manythreads N KIB` starts N threads on KIB-KiB stacks,
parked in four places (a third in sem_wait under three noinline functions, a third in
pthread_cond_wait, a sixth each in nanosleep and pause), and prints "ready PID" once all sleep.
For each N, --runs times, interleaved, each tool a fresh process on the same running program:
  `swk bt --pid P` (warm and cold: its cache of inflated debug sections filled by an untimed
  run first, and off, SWK_CACHE_DIR=off)   `swk bt --pid P --unique`
  `gdb -nx -batch -ex 'set pagination off' -p P -ex 'thread apply all bt'`
  `eu-stack -p P`
then a core of it (GDB's generate-core-file, attached), the program ended (SIGTERM, also on any
error), and on that core:
  `swk bt --core CORE --exe EXE`   `swk bt --core CORE --exe EXE --unique`
  `eu-stack --core CORE -e EXE`
  `gdb -nx -batch -ex 'set pagination off' -ex 'thread apply all bt' EXE CORE`
Medians of wall time and peak RSS (GNU time's %M for the tool alone), the ratios swk / gdb and
swk / eu-stack, and issue 25's goals beside them (live: `swk bt --pid` <= 0.25x `gdb -p`; core:
`swk bt --core` <= 0.5x eu-stack).  Each output's threads are counted (swk's and GDB's "Thread"
headers, a --unique group's "(K threads)", eu-stack's "TID" lines) and a count short of N + 1 is
said.  Times are printed, never asserted.  The live part needs ptrace (root, or
kernel.yama.ptrace_scope 0); without it it is left out and says so.
"""
import argparse
import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

from harness import BUILD, REPO, SWK, SWK_ENV, TIME, code_version, measure as _measure

TIMEOUT = 1800
GDB = ["gdb", "-nx", "-batch", "-q", "-iex", "set debuginfod enabled off", "-ex", "set pagination off"]

#: issue 25's goals: (ratio, bound)
GOALS = {"live": ("swk bt --pid / gdb -p", 0.25), "core": ("swk bt --core / eu-stack --core", 0.5)}

THREAD = re.compile(r"^Thread \d+ \(", re.M)                # swk's and GDB's headers
GROUP = re.compile(r"^Threads .*\((\d+) threads\):$", re.M)  # swk --unique's groups
TID = re.compile(r"^TID \d+:$", re.M)                       # eu-stack's


def measure(argv, out, env=None, timeout=None):
    return _measure(argv, out, env, TIMEOUT if timeout is None else timeout)


def threads_in(tool, text):
    if tool == "eu-stack":
        return len(TID.findall(text))
    return len(THREAD.findall(text)) + sum(int(n) for n in GROUP.findall(text))


def build():
    BUILD.mkdir(parents=True, exist_ok=True)
    src = REPO / "benchmarks" / "manythreads.c"
    exe = BUILD / "manythreads"
    if not exe.exists() or exe.stat().st_mtime < src.stat().st_mtime:
        subprocess.run(["gcc", "-O2", "-g", "-pthread", "-o", str(exe), str(src)], check=True)
    return exe


def start(exe, n, kib):
    p = subprocess.Popen([str(exe), str(n), str(kib)], stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    if not line.startswith("ready"):
        p.kill()
        p.wait()
        raise SystemExit(f"benchmark: manythreads {n} did not start: {line!r}")
    return p


def stop(p):
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def ptrace_ok():
    if os.geteuid() == 0:
        return True, "root"
    try:
        scope = Path("/proc/sys/kernel/yama/ptrace_scope").read_text().strip()
    except OSError:
        return True, "no Yama"
    return scope == "0", f"kernel.yama.ptrace_scope={scope}"


#: swk warm (its cache of inflated debug sections filled by an untimed run first: a user's later
#: sessions) and cold (the cache off: a first session); elf/diskcache.py.
WARM = {**SWK_ENV, "SWK_CACHE_DIR": str(BUILD / "swk-cache")}
COLD = {**SWK_ENV, "SWK_CACHE_DIR": "off"}


def bench(exe, n, args, live):
    out = BUILD / "threads.out"
    tools_live = {
        "swk": lambda pid: ([str(SWK), "bt", "--pid", str(pid)], WARM),
        "swk cold": lambda pid: ([str(SWK), "bt", "--pid", str(pid)], COLD),
        "swk --unique": lambda pid: ([str(SWK), "bt", "--pid", str(pid), "--unique"], WARM),
        "gdb": lambda pid: ([*GDB, "-p", str(pid), "-ex", "thread apply all bt"], None),
        "eu-stack": lambda pid: (["eu-stack", "-p", str(pid)], None),
    }
    core = BUILD / f"manythreads-{n}.core"
    tools_core = {
        "swk": ([str(SWK), "bt", "--core", str(core), "--exe", str(exe)], WARM),
        "swk cold": ([str(SWK), "bt", "--core", str(core), "--exe", str(exe)], COLD),
        "swk --unique": ([str(SWK), "bt", "--core", str(core), "--exe", str(exe), "--unique"], WARM),
        "gdb": ([*GDB, "-ex", "thread apply all bt", str(exe), str(core)], None),
        "eu-stack": (["eu-stack", "--core", str(core), "-e", str(exe)], None),
    }
    res = {"live": {t: [] for t in tools_live}, "core": {t: [] for t in tools_core}}
    seen = {"live": {}, "core": {}}
    p = start(exe, n, args.stack_kib)
    try:
        if live:
            a, env = tools_live["swk"](p.pid)
            measure(a, out, env)                   # fills the warm cache, not timed
            for _ in range(args.runs):
                for tool, argv in tools_live.items():
                    a, env = argv(p.pid)
                    t, rss, text = measure(a, out, env)
                    res["live"][tool].append((t, rss))
                    seen["live"].setdefault(tool, threads_in(tool, text))
        core.unlink(missing_ok=True)
        t = time.perf_counter()
        subprocess.run([*GDB, "-p", str(p.pid), "-ex", f"generate-core-file {core}"],
                       capture_output=True, timeout=1800)
        made = time.perf_counter() - t
        if not core.exists():
            raise SystemExit(f"benchmark: gdb made no core of manythreads {n}")
    finally:
        stop(p)
    try:
        measure(tools_core["swk"][0], out, tools_core["swk"][1])     # the warm cache, not timed
        for _ in range(args.runs):
            for tool, argv in tools_core.items():
                t, rss, text = measure(argv[0], out, argv[1])
                res["core"][tool].append((t, rss))
                seen["core"].setdefault(tool, threads_in(tool, text))
    finally:
        out.unlink(missing_ok=True)
        if not args.keep_cores:
            core.unlink(missing_ok=True)
    return res, seen, made


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3, help="runs of each tool (default 3)")
    ap.add_argument("--threads", default="1000,4000", help="thread counts (default 1000,4000)")
    ap.add_argument("--stack-kib", type=int, default=64, help="each thread's stack in KiB (default 64)")
    ap.add_argument("--keep-cores", action="store_true", help="leave the cores in benchmarks/_build")
    args = ap.parse_args()
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))   # so that the finally clauses end the target
    counts = [int(n) for n in args.threads.split(",")]
    nproc = resource.getrlimit(resource.RLIMIT_NPROC)[0]
    if nproc != resource.RLIM_INFINITY and nproc < max(counts) + 100:
        print(f"NOTE: ulimit -u is {nproc}: manythreads {max(counts)} may not start")
    live, why = ptrace_ok()
    exe = build()
    med = statistics.median
    print(f"swk on many threads (benchmarks/manythreads.c -O2 -g, {args.stack_kib} KiB stacks; "
          f"{os.uname().machine}, {os.cpu_count()} cores); medians of {args.runs} runs, each tool a fresh "
          f"process, interleaved; ptrace: {why}")
    print(f"swk: {code_version()}")
    if not TIME:
        print("NOTE: no /usr/bin/time (GNU time): peaks are wait4's, which start from this script's own size")
    if not live:
        print("NOTE: ptrace not allowed (run as root or set kernel.yama.ptrace_scope=0): live part left out")
    sys.stdout.flush()
    verdicts = []
    for n in counts:
        res, seen, made = bench(exe, n, args, live)
        for where in ("live", "core"):
            r = res[where]
            if not r["swk"]:
                continue
            tm = {t: med(x for x, _ in rs) for t, rs in r.items()}
            rss = {t: med(m for _, m in rs) for t, rs in r.items()}
            what = ("live (swk --pid, gdb -p, eu-stack -p)" if where == "live"
                    else f"its core (gdb made it in {made:.1f}s)")
            print(f"== manythreads {n} ({n + 1} threads with main), {what} ==")
            for tool in r:
                short = "" if seen[where][tool] == n + 1 else f"   <- {seen[where][tool]} threads printed, not {n + 1}"
                print(f"  {tool:<13} {tm[tool]:7.3f}s  peak {rss[tool]:5.0f}MB  threads {seen[where][tool]}{short}")
            for tool in ("swk", "swk cold", "swk --unique"):
                print(f"  {tool:<13} / gdb {tm[tool] / tm['gdb']:5.2f}x   / eu-stack {tm[tool] / tm['eu-stack']:5.2f}x")
            other = tm["gdb"] if where == "live" else tm["eu-stack"]
            name, goal = GOALS[where]
            for label, tool in (("warm", "swk"), ("cold", "swk cold")):
                ratio = tm[tool] / other
                ok = ratio <= goal
                verdicts.append((n, f"{where} {label}", ratio, ok))
                print(f"  goal: {name} <= {goal}x, {label}: {ratio:.2f}x {'met' if ok else 'NOT MET'}")
    print("== issue 25's goals: " + ("all met" if all(v[3] for v in verdicts) else "NOT all met: " + "; ".join(
        f"{n} threads {where} {ratio:.2f}x" for n, where, ratio, ok in verdicts if not ok)) + " ==")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
