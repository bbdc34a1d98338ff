"""Prints docs/testing.md's table of GDB's test programs (python tests/gdbsuite/table.py):
each program's stops, how swk-bt compares with GDB's bt there and how ``swk bt --core`` compares
with GDB's bt on cores of its first stops, from a run on this machine, with the reasons
tests/test_gdb_suite.py lists for the differences and the programs not built."""
from __future__ import annotations

import concurrent.futures
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import test_gdb_suite as G  # noqa: E402


def _chosen(argv):
    """The programs named on the command line (ids or parts of them), or all."""
    return [p for p in G.PROGRAMS if not argv or any(a in p.id for a in argv)]


def grouped(what: str, whys: list) -> str:
    """"; stop 2 differs: WHY" per reason, its stops together ("; stops 2, 6 differ: WHY")."""
    order = {}
    for i, why in whys:
        order.setdefault(why, []).append(i)
    out = ""
    for why, stops in order.items():
        if len(stops) == 1:
            out += f"; {what} {stops[0]} differs: {why}"
        else:
            many = what.replace("core of stop", "cores of stop") + "s"
            out += f"; {many} {', '.join(map(str, stops))} differ: {why}"
    return out


def row(prog) -> str:
    if prog.id in G.NOT_BUILT:
        return f"| {prog.id} | — | not built: {G.NOT_BUILT[prog.id]} | — |"
    got = G._run(prog)
    stops = ", ".join(prog.stops[:4]) + (" …" if len(prog.stops) > 4 else "")
    if prog.assembled:                  # what its recipe runs to: breakpoints, steps, finish ...
        recipe = G.A.build(prog, G.ASSEMBLED / prog.exp.stem, G.T.GDB)[0]
        stops = G.A.describe(recipe) if recipe is not None else "—"
    if got is None:
        return f"| {prog.id} | {stops} | does not build (not listed: the test fails) | — |"
    pairs = got.stops
    equal = sum(g == s for g, s in pairs)
    text = f"equal at {equal} of {len(pairs)} stops" + grouped(
        "stop", [(i, G.KNOWN.get((prog.id, i), "not listed: the test fails"))
                 for i, (g, s) in enumerate(pairs) if g != s])
    cores = got.cores
    same = sum(g == s for g, s, _o in cores.values())
    whys = []
    for i, (g, s, _o) in sorted(cores.items()):
        if g != s:
            why = G.KNOWN_CORE.get((prog.id, i), "not listed: the test fails")
            whys.append((i, "as live" if why == G.KNOWN.get((prog.id, i)) else why))
    core = f"equal on {same} of {len(cores)} cores" + grouped("core of stop", whys)
    return f"| {prog.id} | {stops} | {text} | {core} |"


if __name__ == "__main__":
    with concurrent.futures.ThreadPoolExecutor(max(1, min(4, os.cpu_count() or 1))) as pool:
        rows = list(pool.map(row, _chosen(sys.argv[1:])))
    print("| program | stops (breakpoints from its .exp) | swk-bt against GDB's bt | swk bt --core against GDB's bt on a core of the first 3 stops |")
    print("|---|---|---|---|")
    print("\n".join(rows))
