"""swk's speed against GDB's own bt and eu-stack, measured in one run on this machine.

    .venv/bin/python benchmarks/run.py [--runs N] [--depths 1000,10000]

Builds tests/corpus/recurse.c (-O0 -g) into benchmarks/_build, stops it at the
bottom of an N-deep recursion in GDB, and prints medians of --runs runs:
  swk-bt cold (first in a fresh GDB session), warm (again at the same stop: the
  walk is kept until the target changes, as GDB keeps its frame cache) and
  re-walked (warm modules, but registers, memory and walks dropped as a stop
  drops them) over GDB's bt (first, and again: GDB's frame cache kept);
  GDB's bt with swk's unwinder over without (frame cache flushed each time);
  `swk bt --core` (a fresh process) over `eu-stack --core` on a gcore of it;
  microseconds per frame, and the GDB process's peak memory with swk;
and the first swk-bt of a fresh GDB session through libstdc++, libpython and libc
frames (benchmarks/bigcode.cpp: a std::thread runs embedded Python that calls back
into C through ctypes), with and without `set swk prewarm` (ELF symbols read when
GDB loads an objfile, as GDB reads its own minimal symbols), and what loading swk
adds to GDB's `run` of that program.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "benchmarks" / "_build"
PY = REPO / ".venv" / "bin" / "python"
SWK = REPO / ".venv" / "bin" / "swk"   # the command users run (made by scripts/setup.sh)

GDB_SCRIPT = r"""
import gdb, json, time, resource
def timed(cmd, flush=False):
    if flush:
        gdb.execute("maint flush register-cache")
    t = time.perf_counter()
    gdb.execute(cmd, to_string=True)
    return time.perf_counter() - t
r = {}
r["swk_cold"] = timed("swk-bt")
r["swk_warm"] = min(timed("swk-bt") for _ in range(3))
from swk_plugin.backends.gdb.session import SESSION
def rewalk():
    SESSION.walker().process_state.invalidate()   # as after a stop: registers, memory, walks forgotten
    return timed("swk-bt")
r["swk_rewalk"] = min(rewalk() for _ in range(3))
gdb.execute("set swk unwinder off")
r["bt_first"] = timed("bt", flush=True)
r["bt_warm"] = min(timed("bt") for _ in range(3))
offs, ons = [], []
for _ in range(3):
    gdb.execute("set swk unwinder off"); offs.append(timed("bt", flush=True))
    gdb.execute("set swk unwinder on"); ons.append(timed("bt", flush=True))
r["bt_hook_off"] = min(offs)
r["bt_hook_on"] = min(ons)
r["frames"] = len(gdb.execute("swk-bt -json", to_string=True).split('"level"')) - 1
r["maxrss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print("SWKBENCH " + json.dumps(r))
"""


def build(depth_hint):
    BUILD.mkdir(parents=True, exist_ok=True)
    exe = BUILD / "recurse"
    src = REPO / "tests" / "corpus" / "recurse.c"
    if not exe.exists() or exe.stat().st_mtime < src.stat().st_mtime:
        subprocess.run(["gcc", "-O0", "-g", "-I", str(src.parent), "-o", str(exe), str(src)], check=True)
    return exe


def gdb_cmd(exe, depth, extra):
    return ["gdb", "-nx", "-batch", "-q", "-iex", "set debuginfod enabled off",
            "-ex", "set pagination off", "-ex", f"source {REPO}/gdb_init.py",
            "-ex", "break stop_here", "-ex", f"run {depth}", *extra, str(exe)]


def run_gdb_bench(exe, depth, script):
    out = subprocess.run(gdb_cmd(exe, depth, ["-ex", f"source {script}"]), capture_output=True,
                         text=True, timeout=1800).stdout
    line = next(ln for ln in out.splitlines() if ln.startswith("SWKBENCH "))
    return json.loads(line[len("SWKBENCH "):])


def make_core(exe, depth):
    core = BUILD / f"recurse-{depth}.core"
    if not core.exists() or core.stat().st_mtime < exe.stat().st_mtime:
        subprocess.run(gdb_cmd(exe, depth, ["-ex", f"gcore {core}"]), capture_output=True, timeout=600)
    return core


COLD_SCRIPT = r"""
import gdb, json, time
t = time.perf_counter()
gdb.execute("run", to_string=True)
load = time.perf_counter() - t
if not hasattr(gdb, "swk_loaded") and "swk-bt" not in gdb.execute("help all", to_string=True):
    print("SWKCOLD " + json.dumps({"load": load}))
    raise SystemExit
t = time.perf_counter()
gdb.execute("swk-bt", to_string=True)
cold = time.perf_counter() - t
libs = sorted({f["library"].rsplit("/", 1)[-1] for f in json.loads(gdb.execute("swk-bt -json", to_string=True))["frames"]
               if f["library"]})
print("SWKCOLD " + json.dumps({"cold": cold, "libs": libs, "load": load}))
"""


def cold_big_code(runs):
    """The first swk-bt of a fresh GDB session through libstdc++, libpython, libffi and libc frames."""
    exe = BUILD / "bigcode"
    src = REPO / "benchmarks" / "bigcode.cpp"
    if not exe.exists() or exe.stat().st_mtime < src.stat().st_mtime:
        cfg = "/usr/bin/python3.11-config"
        inc = subprocess.run([cfg, "--includes"], capture_output=True, text=True, check=True).stdout.split()
        ld = subprocess.run([cfg, "--ldflags", "--embed"], capture_output=True, text=True, check=True).stdout.split()
        subprocess.run(["g++", "-O2", "-g", "-rdynamic", "-pthread", *inc, "-o", str(exe), str(src), *ld], check=True)
    script = BUILD / "bench_cold.py"
    script.write_text(COLD_SCRIPT)
    res = {"on": [], "off": [], "none": []}
    setups = {"on": ["-ex", f"source {REPO}/gdb_init.py"],
              "off": ["-ex", f"source {REPO}/gdb_init.py", "-ex", "set swk prewarm off"],
              "none": []}
    for _ in range(runs):
        for mode, setup in setups.items():
            out = subprocess.run(["gdb", "-nx", "-batch", "-q", "-iex", "set debuginfod enabled off",
                                  *setup, "-ex", "break stop_here", "-ex", f"source {script}", str(exe)],
                                 capture_output=True, text=True, timeout=600).stdout
            line = next(ln for ln in out.splitlines() if ln.startswith("SWKCOLD "))
            res[mode].append(json.loads(line[len("SWKCOLD "):]))
    return res


def wall(argv):
    t = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
    return time.perf_counter() - t, p


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--depths", default="1000,10000")
    args = ap.parse_args()
    exe = build(0)
    script = BUILD / "bench_gdb.py"
    script.write_text(GDB_SCRIPT)
    med = statistics.median
    for depth in (int(d) for d in args.depths.split(",")):
        runs = [run_gdb_bench(exe, depth, script) for _ in range(args.runs)]
        m = {k: med(r[k] for r in runs) for k in runs[0]}
        frames = int(m["frames"])
        core = make_core(exe, depth)
        swk_core = [wall([str(SWK), "bt", "--core", str(core), "--exe", str(exe)])
                    for _ in range(args.runs)]
        eu = [wall(["eu-stack", "-n", str(frames + 16), f"--core={core}", "-e", str(exe)])
              for _ in range(args.runs)]
        t_swk_core, t_eu = med(t for t, _ in swk_core), med(t for t, _ in eu)
        print(f"== recursion depth {depth}: {frames} frames, medians of {args.runs} runs ==")
        print(f"  GDB bt: first {m['bt_first']:.3f} s, warm {m['bt_warm']:.3f} s")
        print(f"  swk-bt cold (first in session) {m['swk_cold']:.3f} s  ratio to GDB's first bt "
              f"{m['swk_cold'] / m['bt_first']:.2f}x")
        print(f"  swk-bt warm                    {m['swk_warm']:.3f} s  ratio to GDB's warm bt "
              f"{m['swk_warm'] / m['bt_warm']:.2f}x   ({1e6 * m['swk_warm'] / frames:.1f} us/frame)")
        print(f"  swk-bt re-walk (warm modules, stop caches dropped) {m['swk_rewalk']:.3f} s  ratio to GDB's "
              f"warm bt {m['swk_rewalk'] / m['bt_warm']:.2f}x   ({1e6 * m['swk_rewalk'] / frames:.1f} us/frame)")
        print(f"  GDB bt with swk unwinder       {m['bt_hook_on']:.3f} s  ratio to without "
              f"{m['bt_hook_on'] / m['bt_hook_off']:.2f}x")
        print(f"  swk bt --core                  {t_swk_core:.3f} s  ratio to eu-stack --core "
              f"{t_swk_core / t_eu:.2f}x  (eu-stack {t_eu:.3f} s)")
        print(f"  GDB peak memory with swk       {m['maxrss_kb'] / 1024:.0f} MiB")
    cold = cold_big_code(args.runs)
    on, off, none = cold["on"], cold["off"], cold["none"]
    print(f"== cold start on big code (fresh GDB session, medians of {args.runs} runs) ==")
    print(f"  first swk-bt through {', '.join(on[0]['libs'])}: "
          f"{med(r['cold'] for r in on):.3f} s (goal: under 0.3 s)")
    print(f"  the same with `set swk prewarm off` (ELF symbols read by the walk, not at load): "
          f"{med(r['cold'] for r in off):.3f} s")
    print(f"  GDB's `run` to the stop: {med(r['load'] for r in none):.3f} s without swk, "
          f"{med(r['load'] for r in on):.3f} s with swk (prewarm on), "
          f"{med(r['load'] for r in off):.3f} s (prewarm off)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
