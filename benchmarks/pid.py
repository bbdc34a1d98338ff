"""swk on live processes without a debugger, against `gdb -p` and `eu-stack -p`, in one run.

    .venv/bin/python benchmarks/pid.py [--runs N] [--depths 1000,10000] [--opt -O2]

Builds tests/corpus/parked.c (every thread parked in a known chain; the main thread under
an N-deep recursion) and prints medians of --runs runs, each tool a fresh process on the
same running program:
  `swk bt --pid P` (all threads, text) over `gdb -p P -batch -ex "thread apply all bt"`
  and over `eu-stack -n 0 -p P` (eu-stack's default stops at 256 frames);
  how long swk kept each thread stopped (the snapshot's copy), per thread;
and, on a CPU-bound program, what `swk profile --hz 100` costs it: its work rate while
sampled over its rate alone (and the share of time swk reports having stopped it).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "benchmarks" / "_build"
PY = REPO / ".venv" / "bin" / "python"
SWK = REPO / ".venv" / "bin" / "swk"   # the command users run: it writes .pyc files (PYTHONDONTWRITEBYTECODE unset)

SPIN_SRC = r"""
#include <stdio.h>
#include <time.h>
#include <unistd.h>
/* prints how many units of work it did in each 0.25 s, forever */
static volatile unsigned long sink;
__attribute__((noinline)) static unsigned long unit(unsigned long x) {
    for (int i = 0; i < 20000; i++) x = x * 6364136223846793005UL + 1442695040888963407UL;
    return x;
}
int main(void) {
    struct timespec a, b;
    printf("ready\n"); fflush(stdout);
    for (;;) {
        unsigned long n = 0;
        clock_gettime(CLOCK_MONOTONIC, &a);
        do { sink = unit(sink); n++; clock_gettime(CLOCK_MONOTONIC, &b); }
        while ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec) < 250e6);
        printf("%lu\n", n); fflush(stdout);
    }
}
"""


def build(opt):
    BUILD.mkdir(parents=True, exist_ok=True)
    src = REPO / "tests" / "corpus" / "parked.c"
    exe = BUILD / f"parked{opt}"
    if not exe.exists() or exe.stat().st_mtime < src.stat().st_mtime:
        subprocess.run(["gcc", opt, "-g", "-pthread", "-I", str(src.parent), "-o", str(exe), str(src)], check=True)
    spin = BUILD / "spin"
    if not spin.exists():
        (BUILD / "spin.c").write_text(SPIN_SRC)
        subprocess.run(["gcc", "-O2", "-o", str(spin), str(BUILD / "spin.c")], check=True)
    return exe, spin


def timed(argv):
    t = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, text=True, timeout=3600)
    return time.perf_counter() - t, p


def start(argv):
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    if not p.stdout.readline().startswith("ready"):
        raise SystemExit(f"{argv[0]} did not start")
    return p


def parked_bench(exe, depth, runs):
    p = start([str(exe), str(depth), "quiet"])
    try:
        swk, gdb, eu, pauses = [], [], [], []
        for _ in range(runs):
            t, r = timed([str(SWK), "bt", "--pid", str(p.pid)])
            swk.append(t)
            t, r = timed([str(SWK), "bt", "--pid", str(p.pid), "--json"])
            pauses += [json.loads(ln).get("pause_us", 0) for ln in r.stdout.splitlines() if ln.startswith("{")]
            t, _ = timed(["gdb", "-nx", "-batch", "-q", "-iex", "set debuginfod enabled off",
                          "-p", str(p.pid), "-ex", "thread apply all bt"])
            gdb.append(t)
            t, _ = timed(["eu-stack", "-n", "0", "-p", str(p.pid)])
            eu.append(t)
        return statistics.median(swk), statistics.median(gdb), statistics.median(eu), pauses
    finally:
        p.kill()
        p.wait()


def rate(proc, seconds):
    """Median units per 0.25 s the spin program reports over ``seconds``."""
    vals = []
    end = time.time() + seconds
    while time.time() < end:
        vals.append(int(proc.stdout.readline()))
    return statistics.median(vals[1:] or vals)


def profile_bench(spin, seconds=4.0, hz=100):
    p = start([str(spin)])
    try:
        alone = rate(p, seconds)
        prof = subprocess.Popen([str(SWK), "profile", "--pid", str(p.pid),
                                 "--hz", str(hz), "--duration", str(seconds + 1)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        sampled = rate(p, seconds)
        out, _err = prof.communicate(timeout=120)
        share = next((ln for ln in out.splitlines() if ln.startswith("target paused")), "")
        return alone, sampled, share
    finally:
        p.kill()
        p.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--depths", default="1000,10000")
    ap.add_argument("--opt", default="-O2")
    args = ap.parse_args()
    exe, spin = build(args.opt)
    print(f"swk on live processes ({os.uname().machine}, {os.cpu_count()} cores); medians of {args.runs} runs")
    for depth in (int(d) for d in args.depths.split(",")):
        swk, gdb, eu, pauses = parked_bench(exe, depth, args.runs)
        print(f"== parked.c {args.opt}, main thread {depth} frames deep, 4 threads ==")
        print(f"  swk bt --pid          {swk:7.3f} s   ratio to gdb -p {swk / gdb:5.2f}x  to eu-stack -p {swk / eu:5.2f}x")
        print(f"  gdb -p (all threads)  {gdb:7.3f} s")
        print(f"  eu-stack -n 0 -p      {eu:7.3f} s")
        if pauses:
            print(f"  threads stopped by swk: median {statistics.median(pauses)} us, max {max(pauses)} us per thread")
    alone, sampled, share = profile_bench(spin)
    print("== swk profile --hz 100 on a CPU-bound program ==")
    print(f"  work rate sampled / alone: {sampled / alone:.3f}  (slowdown {100 * (1 - sampled / alone):.1f}%)")
    print(f"  swk's report: {share}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
