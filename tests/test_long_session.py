"""Issue 8, robustness: a long GDB session with swk keeps its memory and caches bounded.

One gdb runs robust_longrun (tests/corpus/robust_longrun.c: main, then 1 to 13
frames of a library without CFI or frame pointer, then leaf and stop_here, a
different depth at each of its stops) and, inside GDB's Python, 1,000
consecutive swk-bt.  Before each walk the stop is re-established in one of four
ways, in turn:

  0  `continue` to the next hit of the breakpoint: a new stop (every cache that
     lives for one stop is dropped, the library list re-read);
  1  `maint flush register-cache`: GDB forgets its registers and frames, swk's
     cached walk stays valid (the target did not change);
  2  what GDB's memory_changed / register_changed events make swk do (its
     Session.on_target_changed): everything read from the target is forgotten;
  3  nothing: the walk of this stop is asked again.

Every 8th walk is `swk-bt -full` (the locals engine), every 16th walk is followed
by GDB's own `bt` through swk's unwinder.  Measured: the gdb process's RSS
(VmRSS) and Python's allocated blocks (after a full gc) at walks 1, 100, 250,
500, 750 and 1000, and the time of every walk.  Asserted (bounds on growth):

  * RSS grows less than 20 MiB and Python's allocated blocks by less than 50,000
    from walk 100 (after warm-up) to walk 1000;
  * every walk printed frames, and swk's caches (the stop's, the library list's and
    each module's: swk_plugin/cache.py) are bounded at the end (numbers printed with
    -s and kept in docs/robustness.md).

Whether the late walks are as fast as the early ones is measured, not asserted
(a busy machine makes any time bound flaky): benchmarks/bounds.py runs this same
session and prints the median time of each kind of walk, early and late.
"""
from __future__ import annotations

import json
import statistics

import pytest

import robust_lib as R
import swk_testlib as T

pytestmark = [pytest.mark.swk]

WALKS = 1000

LOOP = r'''
import array, gc, json, sys, time
import gdb
from swk_plugin.backends.gdb.session import SESSION
from swk_plugin.backends.gdb import unwinder as _unw


def _rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def swk_long_session(n, path):
    times = array.array("d", bytes(8 * n))
    bad = array.array("i", bytes(4 * n))
    marks = {}
    mark_at = {0, 99, 249, 499, 749, n - 1}
    for i in range(n):
        kind = i % 4
        if kind == 0:
            gdb.execute("continue", to_string=True)
        elif kind == 1:
            gdb.execute("maint flush register-cache", to_string=True)
        elif kind == 2:
            SESSION.on_target_changed()
        cmd = "swk-bt -full" if i % 8 == 6 else "swk-bt"
        t0 = time.perf_counter()
        text = gdb.execute(cmd, to_string=True)
        times[i] = time.perf_counter() - t0
        bad[i] = not (text.startswith("#0  stop_here") and "in main (" in text)
        if i % 16 == 3:
            gdb.execute("bt", to_string=True)
        if i in mark_at:
            gc.collect()
            marks[i + 1] = [_rss_kib(), sys.getallocatedblocks()]
    w = SESSION.walker()
    ps = w.process_state
    caches = {
        "walks": len(ps.cache.memo("walks")),
        "stepper_errors": len(w.stepper_errors),
        "pages": len(ps._pages),
        "symbol_memo": len(ps.library_state.cache.memo("names")),
        "unwinder_decisions": len(_unw.UNWINDER.decisions),
        "unwinder_checked": len(_unw.UNWINDER.cfas),
        "unwinder_reported": len(_unw.UNWINDER.reported),
        "unwound": _unw.UNWINDER.unwound,
        "libraries": len(ps.library_state.get_libraries()),
    }
    # every other cache is a memo of the stop's, the library list's or a module's store
    for store, cache in (("stop", ps.cache), ("libraries", ps.library_state.cache)):
        for name, size in cache.sizes().items():
            caches[f"{store}.{name}"] = size
    for lib in ps.library_state.get_libraries():
        if lib.module is not None:
            for name, size in lib.module.cache.sizes().items():
                caches[f"module.{name}"] = max(caches.get(f"module.{name}", 0), size)
    with open(path, "w") as f:
        json.dump({"times": list(times), "bad": [i for i in range(n) if bad[i]], "marks": marks,
                   "caches": caches}, f)
    print("SWK-LONG-DONE")
'''


def long_session(tmp_path, walks: int = WALKS) -> dict:
    """Run the session (one gdb, ``walks`` swk-bt); its record: times, marks, caches, bad."""
    exe = R.longrun_exe()
    script = tmp_path / "loop.py"
    script.write_text(LOOP)
    result = tmp_path / "long.json"
    out = T.run_gdb(exe, ["break stop_here", "run 1000000", f"source {script}",
                          f"python swk_long_session({walks}, {str(result)!r})", "kill"],
                    swk=True, timeout=600)
    assert "SWK-LONG-DONE" in out and "Traceback" not in out, out[-4000:]
    return json.loads(result.read_text())


NAMES = {0: "after continue", 1: "after flush register-cache", 2: "after target-changed", 3: "same stop"}


def walk_medians(times: list[float]) -> dict[str, tuple[float, float]]:
    """{kind of walk: (median of walks 50-249, median of walks 800-999)} in seconds."""
    res = {}
    for kind in range(4):
        def med(lo, hi):
            return statistics.median(t for i, t in enumerate(times[lo:hi], lo)
                                     if i % 4 == kind and i % 8 != 6)
        res[f"swk-bt {NAMES[kind]}"] = (med(50, 250), med(800, WALKS))
    res["swk-bt -full"] = (statistics.median(times[i] for i in range(50, 250) if i % 8 == 6),
                           statistics.median(times[i] for i in range(800, WALKS) if i % 8 == 6))
    return res


def test_a_thousand_walks_in_one_session(tmp_path):
    R.need_gdb()
    res = long_session(tmp_path)
    times, marks, caches = res["times"], {int(k): v for k, v in res["marks"].items()}, res["caches"]
    assert len(times) == WALKS
    problems = []
    if res["bad"]:
        problems.append(f"{len(res['bad'])} walks printed no full chain (first: walk {res['bad'][0] + 1})")

    rss_growth = marks[WALKS][0] - marks[100][0]
    blocks_growth = marks[WALKS][1] - marks[100][1]
    if rss_growth >= 20 * 1024:
        problems.append(f"RSS grew {rss_growth} KiB from walk 100 to walk {WALKS}")
    if blocks_growth >= 50_000:
        problems.append(f"Python's allocated blocks grew by {blocks_growth} from walk 100 to walk {WALKS}")

    report = [f"RSS (KiB) / Python blocks at walk: " +
              ", ".join(f"{k}: {v[0]} / {v[1]}" for k, v in sorted(marks.items()))]
    report.append("caches at the end: " + json.dumps(caches, sort_keys=True))

    # every cache is bounded or lives for one stop: small at the end of a long session
    if caches["walks"] > 65 or caches["stepper_errors"] > 100 or caches["pages"] > 4096:
        problems.append("a per-stop cache is large at the end")
    for name, size in caches.items():
        if "." in name and size > 10_000:
            problems.append(f"cache {name} holds {size} entries")
    if caches["unwound"] == 0:
        problems.append("GDB's bt never used swk's unwinder")
    print("\n".join(report))
    if problems:
        pytest.fail("\n".join(problems + report), pytrace=False)
