"""How long the things the tests used to time take: printed, not asserted.

    .venv/bin/python benchmarks/bounds.py [--only NAME[,NAME...]] [--strict]

The tests assert what swk does; they no longer assert how fast (a time bound is
flaky on a busy 2-core machine: docs/testing.md).  The figures those tests used to
bound are measured here, on the same inputs, and printed beside the bound the test
had ("former bound"), marked OVER where a figure exceeds it:

  symbols   libc's symbol table built; 20,000 lookups in it; libc's first line lookup
            (tests/test_symbols.py)
  cfi       10 libc functions' FDEs found and their rows computed; 400 corrupted
            .eh_frame/.debug_frame tables read (tests/test_cfi.py)
  core      a core of 70,000 segments over ~270 MB of sparse file opened, and read at
            every 7th segment (tests/test_corefile.py)
  analysis  stack-height analysis of each function of tests/test_analysis.py's PROGRAM
            (-O2, no CFI): mean and max per function
  walks     synthetic walks of tests/test_properties.py's random targets: the slowest
  session   1,000 swk-bt in one GDB session (tests/test_long_session.py): the median
            of each kind of walk early (walks 50-249) and late (800-999); the former
            bound: late <= 2 x early + 2 ms

--strict exits 1 when a figure is over its former bound (default: always 0).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"
RESULTS: list[tuple[str, str, bool]] = []


def report(name: str, seconds: float, bound: float | None, note: str = "") -> None:
    over = bound is not None and seconds > bound
    text = f"{seconds * 1e3:10.2f} ms" + (f"   (former bound {bound * 1e3:.0f} ms)" if bound is not None else "")
    RESULTS.append((name, text + (f"  {note}" if note else ""), over))
    print(f"{'OVER ' if over else '     '}{name:<68}{text}{f'  {note}' if note else ''}", flush=True)


def timed(fn):
    t0 = time.perf_counter()
    res = fn()
    return time.perf_counter() - t0, res


# --------------------------------------------------------------------------

def bench_symbols() -> None:
    from swk_plugin.dwarf.lines import LineTable
    from swk_plugin.elf.module import ElfModule
    from swk_plugin.elf.symbols import SymbolTable

    def build():
        m = ElfModule(LIBC)
        st = SymbolTable.from_module(m)
        return m, st, st.by_name("abort")[0]
    secs, (m, st, ab) = timed(build)
    report("symbols: libc's table built (first in this process)", secs, 0.5)
    secs, _ = timed(lambda: [st.lookup(ab.value + (i % 64)) for i in range(20000)])
    report("symbols: 20,000 lookups in libc's table", secs, 0.5)
    secs, _ = timed(lambda: LineTable.from_module(m).lookup(ab.value + 5))
    report("lines: libc's first line lookup (abort+5)", secs, 1.0)


def bench_cfi() -> None:
    import random

    import test_cfi as TC
    from swk_plugin.elf.module import ElfModule
    libc = ElfModule(LIBC)
    syms = TC._func_symbols(libc, ["malloc", "free", "printf", "qsort", "getenv", "fopen", "strtol",
                                   "abort", "exit", "open"])

    def lookups():
        t = TC._libc_table(libc)
        for addr in syms.values():
            t.find_fde(addr)
            t.row_at(addr)
    secs, _ = timed(lookups)
    report(f"cfi: {len(syms)} libc functions' FDEs and rows", secs, 0.5)
    eh, hdr, spans = TC.build_many(n=5)
    secs, _ = timed(lambda: TC._corrupt_and_read(random.Random(1234), eh, hdr, spans, eh.data))
    report("cfi: 400 corrupted tables read", secs, 20.0)


def bench_core() -> None:
    import test_corefile as TF
    from swk_plugin.linux.coredump import CoreFile
    page, n = 4096, 70000
    loads = [(0x10000000 + i * page, page, page, 6, None) for i in range(n)]
    notes = [TF._note(b"CORE", TF.cf.NT_PRSTATUS, TF._prstatus(1, {"rsp": 0x10000000}))]
    with tempfile.TemporaryDirectory() as d:
        path = TF.write_core(Path(d) / "big", notes, loads, xnum=True)
        secs, core = timed(lambda: CoreFile(path))
        report("core: 70,000 segments opened", secs, 3.0)
        secs, _ = timed(lambda: [core.read(0x10000000 + i * page + 8, 8) for i in range(0, n, 7)])
        report("core: 10,000 reads across them", secs, 3.0)
        core.close()


def bench_analysis() -> None:
    import test_analysis as TA
    with tempfile.TemporaryDirectory() as d:
        nocfi, _ = TA.compile_twice(Path(d), "-O2", [TA.PROGRAM])
        funcs = TA.program_functions(nocfi)
        _mod, ps = TA.load_module(nocfi)
        w = TA.Walker(ps, stepper_group=TA.StepperGroup())
        TA.analyzer_for(ps)
        times = []
        for start, _size, _name in funcs:
            secs, _ = timed(lambda: TA.frame_rule_at(ps, start, True))
            times.append(secs)
    report(f"analysis: per function, mean of {len(times)} (-O2, no CFI)", statistics.mean(times), 0.05)
    report("analysis: per function, slowest", max(times), None)


def bench_walks() -> None:
    from hypothesis import HealthCheck, given, seed, settings

    import test_properties as TP
    times = []

    @seed(12)
    @settings(max_examples=TP.EXAMPLES, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(TP.targets(), TP.st.sampled_from([1, 2, 3, 5, 17, 100, 100_000]))
    def walks(target, cap):
        w, _ps = TP.build(target, cap)
        secs, _ = timed(w.walk_stack)
        times.append(secs)
    walks()
    report(f"walks: slowest of {len(times)} synthetic walks", max(times), 2.0,
           f"median {statistics.median(times) * 1e3:.3f} ms")


def bench_session() -> None:
    import test_long_session as TL
    with tempfile.TemporaryDirectory() as d:
        res = TL.long_session(Path(d))
    for kind, (early, late) in TL.walk_medians(res["times"]).items():
        report(f"session: {kind}, median of walks 50-249", early, None)
        report(f"session: {kind}, median of walks 800-999", late, 2 * early + 0.002)


BENCHES = {"symbols": bench_symbols, "cfi": bench_cfi, "core": bench_core, "analysis": bench_analysis,
           "walks": bench_walks, "session": bench_session}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="", help="comma-separated: " + ",".join(BENCHES))
    ap.add_argument("--strict", action="store_true", help="exit 1 when a figure is over its former bound")
    args = ap.parse_args()
    names = [n for n in args.only.split(",") if n] or list(BENCHES)
    for n in names:
        if n not in BENCHES:
            ap.error(f"unknown benchmark {n!r} (one of {', '.join(BENCHES)})")
    print(f"swk bounds: {os.uname().nodename}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
    for n in names:
        BENCHES[n]()
    over = [name for name, _t, o in RESULTS if o]
    print(f"{len(RESULTS)} figures, {len(over)} over the former bound" + (f": {', '.join(over)}" if over else ""))
    return 1 if args.strict and over else 0


if __name__ == "__main__":
    sys.exit(main())
