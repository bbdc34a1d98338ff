"""swk on stack overflows of 10,000 to 262,000 frames (issue 25), against GDB's bt and eu-stack.

    .venv/bin/python benchmarks/deep_stacks.py [--runs N] [--kib 320,960,1920,4096,8192] [--quick]
                                               [--no-gdb-deep] [--eu-deep]

Builds tests/corpus/overflow.c (-O2 -g) and, for each stack size in --kib, makes a core of
`overflow KIB plain` (it sets its own RLIMIT_STACK and recurses in rec_plain, one 32-byte frame a
level, until SIGSEGV: about 32 frames a KiB, 262,000 at 8192 KiB) with GDB's generate-core-file
(the kernel's core_pattern plays no part).  Then, --runs times, interleaved, each tool a fresh
process writing to a file:
  `swk bt --core CORE --exe EXE`                       (text, recursion collapsed: swk's default)
  `swk bt --core CORE --exe EXE --collapse unlimited`  (every frame's line, as GDB prints them)
with its wall time and peak RSS (GNU time's %M for the tool alone), and swk's time per frame at each
depth (over the whole run and between one depth and the next), so that linearity shows.  At the
two smallest depths (about 10,000 and 30,000 frames) also
  `gdb -batch -ex 'set pagination off' -ex 'set width 0' -ex bt EXE CORE`  (GDB 13's bt)
  `eu-stack -n 0 --core CORE -e EXE`                                       (elfutils)
and swk's ratios to them.  At the deepest core GDB's bt is run once (not with --no-gdb-deep or
--quick: about a minute and 3 GB here) and eu-stack only with --eu-deep (it grows faster than
linearly: minutes); both are also extrapolated from their two smaller figures.  Checks, cheaply:
each swk output reaches main, at the level GDB and eu-stack give main where they ran.  Medians;
times are printed, never asserted.  --quick: one run, no GDB at the deepest core.
"""
import argparse
import math
import os
import re
import statistics
import subprocess
import sys

from harness import BUILD, REPO, SWK, SWK_ENV, TIME, code_version, measure as _measure

TIMEOUT = 3600
GDB = ["gdb", "-nx", "-batch", "-q", "-iex", "set debuginfod enabled off"]

#: frame lines: swk's and GDB's `#N  0x... in NAME (`, eu-stack's `#N  0x... NAME`
MAIN_SWK = re.compile(r"^#(\d+)\s+(?:0x[0-9a-f]+ in )?main \(", re.M)
MAIN_EU = re.compile(r"^#(\d+)\s+0x[0-9a-f]+ main$", re.M)
LEVEL = re.compile(r"^#(\d+) ", re.M)


def measure(argv, out, env=None, timeout=None):
    return _measure(argv, out, env, TIMEOUT if timeout is None else timeout)


def build():
    BUILD.mkdir(parents=True, exist_ok=True)
    src = REPO / "tests" / "corpus" / "overflow.c"
    exe = BUILD / "overflow-O2"
    if not exe.exists() or exe.stat().st_mtime < src.stat().st_mtime:
        subprocess.run(["gcc", "-O2", "-g", "-I", str(src.parent), "-o", str(exe), str(src)], check=True)
    return exe


def make_core(exe, kib):
    core = BUILD / f"overflow-{kib}k.core"
    if not core.exists() or core.stat().st_mtime < exe.stat().st_mtime:
        tmp = BUILD / f".overflow-{kib}k.{os.getpid()}.core"
        subprocess.run([*GDB, "-ex", f"run {kib} plain", "-ex", f"generate-core-file {tmp}", str(exe)],
                       capture_output=True, timeout=900)
        if not tmp.exists() or tmp.stat().st_size == 0:
            raise SystemExit(f"benchmark: gdb made no core of `{exe.name} {kib} plain`")
        tmp.rename(core)
    return core


def main_level(text, eu=False):
    m = (MAIN_EU if eu else MAIN_SWK).findall(text)
    return int(m[-1]) if m else None


def power_fit(f1, t1, f2, t2, f):
    """t = a * frames**k through the two points, at f frames: (k, t)."""
    k = math.log(t2 / t1) / math.log(f2 / f1)
    return k, t2 * (f / f2) ** k


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3, help="runs of each tool at each depth (default 3)")
    ap.add_argument("--kib", default="320,960,1920,4096,8192",
                    help="stack sizes in KiB (about 32 frames each; default 320,960,1920,4096,8192)")
    ap.add_argument("--quick", action="store_true", help="one run, no GDB at the deepest core")
    ap.add_argument("--no-gdb-deep", action="store_true", help="do not run GDB's bt once at the deepest core")
    ap.add_argument("--eu-deep", action="store_true", help="also run eu-stack once at the deepest core (minutes)")
    args = ap.parse_args()
    if args.quick:
        args.runs, args.no_gdb_deep = 1, True
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    kibs = sorted(int(k) for k in args.kib.split(","))
    refs = kibs[:2]                      # GDB and eu-stack are timed here
    exe = build()
    cores = {k: make_core(exe, k) for k in kibs}
    med = statistics.median
    out = BUILD / "deep.out"
    swk = {k: {"c": [], "f": []} for k in kibs}      # (time, rss)
    ref = {k: {"gdb": [], "eu": []} for k in refs}
    frames, mains = {}, {}
    for run in range(args.runs):
        for k in kibs:
            core = cores[k]
            t, rss, text = measure([str(SWK), "bt", "--core", str(core), "--exe", str(exe)], out, SWK_ENV)
            swk[k]["c"].append((t, rss))
            if run == 0:
                mains[(k, "swk collapsed")] = main_level(text)
            t, rss, text = measure([str(SWK), "bt", "--core", str(core), "--exe", str(exe), "--collapse", "unlimited"],
                                   out, SWK_ENV)
            swk[k]["f"].append((t, rss))
            if run == 0:
                levels = LEVEL.findall(text)
                frames[k] = int(levels[-1]) + 1 if levels else 0
                mains[(k, "swk")] = main_level(text)
                if len(levels) != frames[k]:
                    print(f"  NOTE: swk --collapse unlimited printed {len(levels)} frame lines, its last is "
                          f"#{frames[k] - 1} ({k} KiB)")
            if k in refs:
                t, rss, text = measure([*GDB, "-ex", "set pagination off", "-ex", "set width 0", "-ex", "bt",
                                        str(exe), str(core)], out)
                ref[k]["gdb"].append((t, rss))
                if run == 0:
                    mains[(k, "gdb")] = main_level(text)
                t, rss, text = measure(["eu-stack", "-n", "0", "--core", str(core), "-e", str(exe)], out)
                ref[k]["eu"].append((t, rss))
                if run == 0:
                    mains[(k, "eu-stack")] = main_level(text, eu=True)
    deep = kibs[-1]
    gdb_deep = eu_deep = None
    if not args.no_gdb_deep:
        t, rss, text = measure([*GDB, "-ex", "set pagination off", "-ex", "set width 0", "-ex", "bt",
                                str(exe), str(cores[deep])], out)
        gdb_deep = (t, rss)
        mains[(deep, "gdb")] = main_level(text)
    if args.eu_deep:
        t, rss, text = measure(["eu-stack", "-n", "0", "--core", str(cores[deep]), "-e", str(exe)], out)
        eu_deep = (t, rss)
        mains[(deep, "eu-stack")] = main_level(text, eu=True)
    out.unlink(missing_ok=True)

    def mt(rs):
        return med(t for t, _ in rs)

    def mr(rs):
        return med(r for _, r in rs)

    print(f"swk on stack overflows (tests/corpus/overflow.c -O2 -g, `overflow KIB plain`; {os.uname().machine}, "
          f"{os.cpu_count()} cores); medians of {args.runs} runs, each tool a fresh process, interleaved")
    print(f"swk: {code_version()}")
    if not TIME:
        print("NOTE: no /usr/bin/time (GNU time): peaks are wait4's, which start from this script's own size")
    print("== swk bt --core: collapsed (the default) and --collapse unlimited (every frame's line) ==")
    print(f"  {'stack':>8} {'frames':>8} | {'collapsed':>9} {'peak':>7} {'us/frame':>8} | {'full text':>9} "
          f"{'peak':>7} {'us/frame':>8} {'marginal':>8}")
    prev = None
    for k in kibs:
        f, c, u = frames[k], swk[k]["c"], swk[k]["f"]
        marginal = f"{1e6 * (mt(u) - mt(swk[prev]['f'])) / (f - frames[prev]):8.1f}" if prev else f"{'':>8}"
        print(f"  {k:>5}KiB {f:>8} | {mt(c):8.3f}s {mr(c):5.0f}MB {1e6 * mt(c) / f:8.1f} | {mt(u):8.3f}s "
              f"{mr(u):5.0f}MB {1e6 * mt(u) / f:8.1f} {marginal}")
        prev = k
    lo, hi = kibs[0], deep
    for key, name in (("c", "collapsed"), ("f", "full text")):
        r = (mt(swk[hi][key]) / frames[hi]) / (mt(swk[lo][key]) / frames[lo])
        print(f"  {name}: time per frame at {frames[hi]} frames / at {frames[lo]}: {r:.2f}  (1.00 = linear; "
              f"below 1: the fixed start-up spread thinner)")
    print("== against GDB's bt and eu-stack -n 0 --core ==")
    for k in refs:
        g, e = ref[k]["gdb"], ref[k]["eu"]
        c, u = swk[k]["c"], swk[k]["f"]
        print(f"  {frames[k]} frames ({k} KiB): GDB bt {mt(g):.3f}s {mr(g):.0f}MB; eu-stack {mt(e):.3f}s "
              f"{mr(e):.0f}MB; swk full {mt(u):.3f}s, collapsed {mt(c):.3f}s")
        print(f"    swk full / GDB {mt(u) / mt(g):.2f}x   collapsed / GDB {mt(c) / mt(g):.2f}x   "
              f"full / eu-stack {mt(u) / mt(e):.2f}x   collapsed / eu-stack {mt(c) / mt(e):.2f}x")
    f1, f2 = frames[refs[0]], frames[refs[-1]]
    print(f"  at {frames[deep]} frames ({deep} KiB): swk full {mt(swk[deep]['f']):.3f}s, "
          f"collapsed {mt(swk[deep]['c']):.3f}s")
    for name, key, measured in (("GDB's bt", "gdb", gdb_deep), ("eu-stack", "eu", eu_deep)):
        if len(refs) < 2:
            break
        k_exp, guess = power_fit(f1, mt(ref[refs[0]][key]), f2, mt(ref[refs[1]][key]), frames[deep])
        line = (f"    {name}: extrapolated from {f1} and {f2} frames (time ~ frames^{k_exp:.2f}): {guess:.0f}s"
                f" = {mt(swk[deep]['f']) / guess:.2f}x for swk full")
        if measured:
            line += (f"; measured once: {measured[0]:.1f}s, {measured[1]:.0f}MB peak "
                     f"(swk full / it {mt(swk[deep]['f']) / measured[0]:.2f}x)")
        else:
            line += ("; not run: too slow to wait for (minutes; --eu-deep runs it once)" if key == "eu"
                     else "; not run (--quick or --no-gdb-deep; otherwise it runs once: about a minute)")
        print(line)
    print("== checks: the level of main in each output ==")
    bad = []
    for k in kibs:
        got = {tool: lvl for (kk, tool), lvl in mains.items() if kk == k}
        ok = None not in got.values() and len(set(got.values())) == 1
        if not ok:
            bad.append(k)
        print(f"  {k} KiB: " + ", ".join(f"{tool} #{lvl}" for tool, lvl in got.items())
              + ("" if ok else "   <- MISMATCH or main not reached"))
    print("  every output reaches main at the same level" if not bad else f"  NOT at {bad}")
    sys.stdout.flush()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
