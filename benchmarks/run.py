"""swk's speed against GDB's own bt and eu-stack, as a user meets it, measured in one run.

    .venv/bin/python benchmarks/run.py [--runs N] [--stops K] [--depths 1000,10000] [--opts O2,O0]
                                       [--no-bigcode] [--no-profile]

For each build of benchmarks/deep.c (-O2 -g and -O0 -g: a recursion N deep whose innermost
function spins, so that `stepi` makes a new stop at the same depth) and each depth, --runs
times, each tool in its own fresh GDB session (interleaved, so that a busy machine slows
all of them alike):
  GDB alone:           `run` to the stop, its first `bt`, then --stops times `stepi` + `bt`;
  GDB with swk loaded: the same with `swk-bt`;
  GDB with swk's unwinder (swk loaded, GDB's own `bt`): the same with `bt`;
and on a gcore of that stop, `swk bt --core` (a fresh process, as a user runs it) against
`eu-stack -n 0 --core` (all frames), interleaved.  It prints medians (over the sessions for
first walks, over every stop for the rest), each ratio from this one run, the goals of issue
18 beside them, and, unless --no-profile, where `swk bt --core`'s time goes (cProfile, per
frame: start-up, stepping, memory, symbols, lines, argument values, text).

Unless --no-bigcode: the first swk-bt of a fresh session through libstdc++, libpython,
libffi and libc frames (benchmarks/bigcode.cpp), with and without `set swk prewarm`, and what
loading swk adds to GDB's `run` of it.
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
SWK = REPO / ".venv" / "bin" / "swk"   # the command users run (made by scripts/setup.sh)

#: issue 18's goals: (measure, ratio it must not exceed)
GOALS = {"first": 0.75, "stop": 0.75, "hook": 1.1, "core": 0.5}

SESSION_SCRIPT = r"""
import gdb, json, resource, time
MODE, DEPTH, STOPS = {mode!r}, {depth}, {stops}
def timed(cmd):
    t = time.perf_counter()
    out = gdb.execute(cmd, to_string=True)
    return time.perf_counter() - t, out
r = {{"mode": MODE}}
gdb.execute("break stop_here", to_string=True)
r["run"], _ = timed(f"run {{DEPTH}}")
cmd = "swk-bt" if MODE == "swk" else "bt"
r["first"], out = timed(cmd)
r["lines"] = out.count("\n")
r["text"] = out if DEPTH <= 1000 else ""
r["stepi"], r["stops"] = [], []
for _ in range(STOPS):
    t, _ = timed("stepi")
    r["stepi"].append(t)
    t, out = timed(cmd)
    r["stops"].append(t)
    if out.count("\n") != r["lines"]:
        r["error"] = f"{{cmd}} printed {{out.count(chr(10))}} lines at a new stop, {{r['lines']}} at the first"
if MODE == "hook":
    from swk_plugin.backends.gdb import unwinder
    r["unwound"] = unwinder.UNWINDER.unwound if unwinder.UNWINDER else 0
r["maxrss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print("SWKBENCH " + json.dumps(r))
"""

PROFILE_SCRIPT = r"""
import cProfile, io, json, pstats, sys, time
argv = json.loads(sys.argv[1])
prof = cProfile.Profile()
t = time.perf_counter()
prof.enable()
from swk_plugin import cli
sink = io.StringIO()
rc = cli.main(argv, out=sink)
prof.disable()
total = time.perf_counter() - t
st = pstats.Stats(prof)
rows = [(f, line, name, tt, ct) for (f, line, name), (cc, nc, tt, ct, callers) in st.stats.items()]
print("SWKPROF " + json.dumps({"rc": rc, "total": total, "rows": rows, "frames": sink.getvalue().count("\n#")}))
"""

#: where a function's own time goes, by the file it is in (first match wins)
CATEGORIES = [
    ("text", ("swk_plugin/format.py", "swk_plugin/display.py", "swk_plugin/frontend.py", "swk_plugin/locals/format.py",
              "swk_plugin/dwarf/typeprint.py", "swk_plugin/dwarf/names.py", "swk_plugin/elf/demangle.py")),
    ("argument values", ("swk_plugin/locals/", "swk_plugin/dwarf/expr.py", "swk_plugin/dwarf/info.py",
                         "swk_plugin/dwarf/dies.py", "swk_plugin/dwarf/units.py", "swk_plugin/dwarf/encoding.py",
                         "swk_plugin/dwarf/aranges.py")),
    ("lines", ("swk_plugin/dwarf/lines.py", "swk_plugin/dwarf/lineprog.py")),
    ("symbols", ("swk_plugin/symlookup.py", "swk_plugin/elf/symbols.py")),
    ("memory", ("swk_plugin/procstate.py", "swk_plugin/backends/", "swk_plugin/elf/core.py", "swk_plugin/linux/")),
    ("stepping", ("swk_plugin/steppers/", "swk_plugin/steppergroup.py", "swk_plugin/stepper.py", "swk_plugin/rule.py",
                  "swk_plugin/unwind/", "swk_plugin/walker.py", "swk_plugin/frame.py", "swk_plugin/analysis/",
                  "swk_plugin/dwarf/cfi.py", "swk_plugin/arch/")),
    ("ELF files", ("swk_plugin/elf/", "elftools/")),
    ("start-up (imports)", ("<frozen importlib", "site-packages/capstone", "<frozen zipimport")),
]


def category(filename):
    for name, prefixes in CATEGORIES:
        if any(p in filename for p in prefixes):
            return name
    return "other (Python, caches)"


def build(opt):
    BUILD.mkdir(parents=True, exist_ok=True)
    exe = BUILD / f"deep-{opt}"
    src = REPO / "benchmarks" / "deep.c"
    if not exe.exists() or exe.stat().st_mtime < src.stat().st_mtime:
        subprocess.run(["gcc", f"-{opt}", "-g", "-o", str(exe), str(src)], check=True)
    return exe


def gdb_argv(exe, setup, script):
    return ["gdb", "-nx", "-batch", "-q", "-iex", "set debuginfod enabled off", "-ex", "set pagination off",
            *setup, "-ex", f"source {script}", str(exe)]


SWK_SETUP = ["-ex", f"source {REPO}/gdb_init.py"]


def session(exe, mode, depth, stops):
    script = BUILD / f"session-{mode}.py"
    script.write_text(SESSION_SCRIPT.format(mode=mode, depth=depth, stops=stops))
    p = subprocess.run(gdb_argv(exe, [] if mode == "gdb" else SWK_SETUP, script),
                       capture_output=True, text=True, timeout=1800)
    line = next((ln for ln in p.stdout.splitlines() if ln.startswith("SWKBENCH ")), None)
    if line is None:
        raise SystemExit(f"benchmark: the {mode} session printed no result:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    r = json.loads(line[len("SWKBENCH "):])
    if "error" in r:
        raise SystemExit(f"benchmark: {mode} session: {r['error']}")
    return r


def make_core(exe, depth):
    core = BUILD / f"{exe.name}-{depth}.core"
    if not core.exists() or core.stat().st_mtime < exe.stat().st_mtime:
        subprocess.run(["gdb", "-nx", "-batch", "-q", "-iex", "set debuginfod enabled off", "-ex", "break stop_here",
                        "-ex", f"run {depth}", "-ex", f"gcore {core}", str(exe)], capture_output=True, timeout=600)
    if not core.exists():
        raise SystemExit(f"benchmark: gdb made no core of {exe} at depth {depth}")
    return core


#: The CLI runs this checkout's swk_plugin even when the venv was made by another one
#: (a git worktree sharing it): PYTHONPATH comes before the venv's .pth.
SWK_ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(
    [str(REPO), *([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])])}


def wall(argv, env=None):
    t = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, text=True, timeout=1800, env=env)
    took = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"benchmark: {' '.join(argv)} exited {p.returncode}: {p.stderr[-500:]}")
    return took, p


def profile(core, exe):
    """Where a fresh `swk bt --core` spends its time, by category (own time of each function)."""
    p = subprocess.run([str(PY), "-c", PROFILE_SCRIPT, json.dumps(["bt", "--core", str(core), "--exe", str(exe)])],
                       capture_output=True, text=True, timeout=1800, env={**os.environ, "PYTHONPATH": str(REPO)})
    line = next((ln for ln in p.stdout.splitlines() if ln.startswith("SWKPROF ")), None)
    if line is None:
        raise SystemExit(f"benchmark: the profile printed no result: {p.stderr[-2000:]}")
    r = json.loads(line[len("SWKPROF "):])
    by_cat, by_func = {}, {}
    for f, ln, name, tt, _ct in r["rows"]:
        c = category(f)
        by_cat[c] = by_cat.get(c, 0.0) + tt
        key = f"{f.split('site-packages/')[-1].replace(str(REPO) + '/', '')}:{ln}({name})"
        by_func[key] = by_func.get(key, 0.0) + tt
    return r, by_cat, by_func


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
    setups = {"on": SWK_SETUP, "off": [*SWK_SETUP, "-ex", "set swk prewarm off"], "none": []}
    for _ in range(runs):
        for mode, setup in setups.items():
            out = subprocess.run(["gdb", "-nx", "-batch", "-q", "-iex", "set debuginfod enabled off",
                                  *setup, "-ex", "break stop_here", "-ex", f"source {script}", str(exe)],
                                 capture_output=True, text=True, timeout=600).stdout
            line = next(ln for ln in out.splitlines() if ln.startswith("SWKCOLD "))
            res[mode].append(json.loads(line[len("SWKCOLD "):]))
    return res


COLD_SCRIPT = r"""
import gdb, json, time
t = time.perf_counter()
gdb.execute("run", to_string=True)
load = time.perf_counter() - t
if "swk-bt" not in gdb.execute("help all", to_string=True):
    print("SWKCOLD " + json.dumps({"load": load}))
    raise SystemExit
t = time.perf_counter()
gdb.execute("swk-bt", to_string=True)
cold = time.perf_counter() - t
libs = sorted({f["library"].rsplit("/", 1)[-1] for f in json.loads(gdb.execute("swk-bt -json", to_string=True))["frames"]
               if f["library"]})
print("SWKCOLD " + json.dumps({"cold": cold, "libs": libs, "load": load}))
"""


def verdict(ratio, goal):
    return f"(goal <= {goal:.2f}x {'met' if ratio <= goal else 'NOT MET'})"


def bench(opt, depth, args, summary):
    exe = build(opt)
    med = statistics.median
    res = {"gdb": [], "swk": [], "hook": []}
    for _ in range(args.runs):
        for mode in res:
            res[mode].append(session(exe, mode, depth, args.stops))
    g, s, h = res["gdb"], res["swk"], res["hook"]
    if depth <= 1000 and s[0]["text"] != g[0]["text"]:
        print(f"  NOTE: swk-bt's text differs from GDB's bt at -{opt}, depth {depth}")
    first = {m: med(r["first"] for r in rs) for m, rs in res.items()}
    stop = {m: med(t for r in rs for t in r["stops"]) for m, rs in res.items()}
    stepi = {m: med(t for r in rs for t in r["stepi"]) for m, rs in res.items()}
    run = {m: med(r["run"] for r in rs) for m, rs in res.items()}
    frames = s[0]["lines"]
    core = make_core(exe, depth)
    swk_t, eu_t = [], []
    for _ in range(args.runs):
        swk_t.append(wall([str(SWK), "bt", "--core", str(core), "--exe", str(exe)], SWK_ENV)[0])
        eu_t.append(wall(["eu-stack", "-n", "0", f"--core={core}", "-e", str(exe)])[0])
    t_swk, t_eu = med(swk_t), med(eu_t)
    ratios = {"first": first["swk"] / first["gdb"], "stop": stop["swk"] / stop["gdb"],
              "hook": stop["hook"] / stop["gdb"], "hook_first": first["hook"] / first["gdb"],
              "core": t_swk / t_eu}
    print(f"== -{opt} -g, recursion {depth} deep: {frames} frames; {args.runs} fresh sessions of each, "
          f"{args.stops} new stops in each ==")
    print(f"  first swk-bt           {first['swk']:.3f} s   GDB's first bt {first['gdb']:.3f} s   "
          f"{ratios['first']:.2f}x {verdict(ratios['first'], GOALS['first'])}")
    print(f"  swk-bt at a new stop   {stop['swk']:.3f} s   GDB's bt there {stop['gdb']:.3f} s   "
          f"{ratios['stop']:.2f}x {verdict(ratios['stop'], GOALS['stop'])}  ({1e6 * stop['swk'] / frames:.1f} us/frame)")
    print(f"  GDB's bt with swk's unwinder at a new stop {stop['hook']:.3f} s   {ratios['hook']:.2f}x without "
          f"{verdict(ratios['hook'], GOALS['hook'])}; first bt {first['hook']:.3f} s ({ratios['hook_first']:.2f}x); "
          f"frames swk unwound: {h[0].get('unwound', 0)}")
    print(f"  swk bt --core          {t_swk:.3f} s   eu-stack -n 0 --core {t_eu:.3f} s   "
          f"{ratios['core']:.2f}x {verdict(ratios['core'], GOALS['core'])}")
    print(f"  stepi: {1e3 * stepi['gdb']:.1f} ms alone, {1e3 * stepi['swk']:.1f} ms with swk loaded; `run` to the stop: "
          f"{run['gdb']:.3f} s alone, {run['swk']:.3f} s with swk; GDB's peak memory "
          f"{med(r['maxrss_kb'] for r in g) / 1024:.0f} MiB alone, {med(r['maxrss_kb'] for r in s) / 1024:.0f} MiB "
          f"after swk-bt")
    summary.append((opt, depth, ratios))
    if not args.no_profile and depth == max(args.depth_list):
        r, by_cat, by_func = profile(core, exe)
        n = max(r["frames"], 1)
        print(f"  where `swk bt --core` spends {r['total']:.3f} s under cProfile ({n} frames; own time, "
              f"us per frame):")
        for c, t in sorted(by_cat.items(), key=lambda kv: -kv[1]):
            print(f"    {c:<24} {1e6 * t / n:7.1f}   ({100 * t / r['total']:.0f}%)")
        print("    the ten slowest functions (own time, us per frame):")
        for f, t in sorted(by_func.items(), key=lambda kv: -kv[1])[:10]:
            print(f"      {1e6 * t / n:6.1f}  {f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3, help="fresh sessions of each tool (default 3)")
    ap.add_argument("--stops", type=int, default=5, help="new stops (stepi) per session (default 5)")
    ap.add_argument("--depths", default="1000,10000")
    ap.add_argument("--opts", default="O2,O0")
    ap.add_argument("--no-bigcode", action="store_true")
    ap.add_argument("--no-profile", action="store_true")
    args = ap.parse_args()
    if args.runs < 1 or args.stops < 1:
        ap.error("--runs and --stops must be at least 1")
    args.depth_list = [int(d) for d in args.depths.split(",")]
    summary = []
    for opt in args.opts.split(","):
        for depth in args.depth_list:
            bench(opt, depth, args, summary)
    met = all(r[k] <= GOALS[k] for _, _, r in summary for k in GOALS)
    print("== issue 18's goals: " + ("all met" if met else "NOT all met: " + "; ".join(
        f"-{o} {d}: {k} {r[k]:.2f}x" for o, d, r in summary for k in GOALS if r[k] > GOALS[k])) + " ==")
    if not args.no_bigcode:
        med = statistics.median
        cold = cold_big_code(args.runs)
        on, off, none = cold["on"], cold["off"], cold["none"]
        print(f"== cold start on big code (fresh GDB session, medians of {args.runs} runs) ==")
        print(f"  first swk-bt through {', '.join(on[0]['libs'])}: {med(r['cold'] for r in on):.3f} s")
        print(f"  the same with `set swk prewarm off`: {med(r['cold'] for r in off):.3f} s")
        print(f"  GDB's `run` to the stop: {med(r['load'] for r in none):.3f} s without swk, "
              f"{med(r['load'] for r in on):.3f} s with swk (prewarm on), {med(r['load'] for r in off):.3f} s (off)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
