"""What any Python unwinder costs GDB 13's bt, beside what swk's costs, in one GDB session.

    .venv/bin/python benchmarks/unwinder_floor.py [--stops N] [--depth D] [--opts O2,O0]

For each build of benchmarks/deep.c, one GDB session stops D deep and then, N times, for
each of four set-ups in turn makes a new stop (`stepi`) and times GDB's own `bt` (process
CPU time: the session's other work does not count):
  none   no Python unwinder enabled;
  noop   an unwinder that returns None at once (what GDB's Python hook itself costs);
  pc     an unwinder that reads the frame's pc and returns None: the least any unwinder
         that decides by pc can do, since GDB 13's PendingFrame has no pc() (GDB 14 has);
  swk    swk's unwinder (`set swk unwinder on`).
It prints the medians and their ratios to "none".  Issue 18's goal for swk's unwinder is
1.1x; "pc" shows what GDB 13 allows (docs/performance.md).
"""
import argparse
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from run import build  # noqa: E402  (benchmarks/run.py: the same builds)

SESSION = r"""
import gdb, os, statistics, time
import gdb.unwinder

class PcOnly(gdb.unwinder.Unwinder):
    def __init__(self):
        super().__init__("floor-pc-only")
        self.enabled, self.desc = False, None

    def __call__(self, pf):
        if self.desc is None:
            arch = pf.architecture()
            self.desc = next(r for r in arch.registers("general") if r.name in ("rip", "pc", "eip"))
        int(pf.read_register(self.desc))
        return None

class Noop(gdb.unwinder.Unwinder):
    def __init__(self):
        super().__init__("floor-noop")
        self.enabled = False

    def __call__(self, pf):
        return None

pc_only, noop = PcOnly(), Noop()
gdb.unwinder.register_unwinder(None, pc_only, replace=True)
gdb.unwinder.register_unwinder(None, noop, replace=True)
gdb.execute("break stop_here", to_string=True)
gdb.execute("run {depth}", to_string=True)
modes = ["none", "noop", "pc", "swk"]
res = {{m: [] for m in modes}}

def setmode(m):
    gdb.execute("set swk unwinder " + ("on" if m == "swk" else "off"), to_string=True)
    pc_only.enabled, noop.enabled = m == "pc", m == "noop"
    gdb.invalidate_cached_frames()

lines = {{}}
for _ in range({stops}):
    for m in modes:
        setmode(m)
        gdb.execute("stepi", to_string=True)
        setmode(m)
        t = time.process_time()
        out = gdb.execute("bt", to_string=True)
        res[m].append(time.process_time() - t)
        lines[m] = out.count(chr(10))
base = statistics.median(res["none"])
for m in modes:
    print(f"SWKFLOOR {{m}} {{statistics.median(res[m]):.4f}} {{statistics.median(res[m]) / base:.3f}} {{lines[m]}}")
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stops", type=int, default=8)
    ap.add_argument("--depth", type=int, default=10000)
    ap.add_argument("--opts", default="O2,O0")
    args = ap.parse_args()
    script = REPO / "benchmarks" / "_build" / "floor-session.py"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(SESSION.format(depth=args.depth, stops=args.stops))
    for opt in args.opts.split(","):
        exe = build(opt)
        p = subprocess.run(["gdb", "-nx", "-batch", "-q", "-iex", "set debuginfod enabled off", "-ex",
                            "set pagination off", "-ex", f"source {REPO}/gdb_init.py", "-ex", f"source {script}",
                            str(exe)], capture_output=True, text=True, timeout=1800)
        rows = [ln.split()[1:] for ln in p.stdout.splitlines() if ln.startswith("SWKFLOOR ")]
        if len(rows) != 4:
            raise SystemExit(f"unwinder_floor: the session printed no result:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
        if len({r[3] for r in rows}) != 1:
            raise SystemExit(f"unwinder_floor: bt printed different frame counts: {rows}")
        print(f"== -{opt} -g, {rows[0][3]} frames, GDB's bt at {args.stops} new stops each (medians, CPU time) ==")
        for mode, t, ratio, _n in rows:
            print(f"  {mode:5} {float(t):.3f} s  {float(ratio):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
