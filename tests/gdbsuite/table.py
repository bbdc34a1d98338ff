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


def row(prog) -> str:
    if prog.id in G.NOT_BUILT:
        return f"| {prog.id} | — | not built: {G.NOT_BUILT[prog.id]} | — |"
    got = G._run(prog)
    stops = ", ".join(prog.stops[:4]) + (" …" if len(prog.stops) > 4 else "")
    if got is None:
        return f"| {prog.id} | {stops} | does not build (not listed: the test fails) | — |"
    pairs = got.stops
    equal = sum(g == s for g, s in pairs)
    text = f"equal at {equal} of {len(pairs)} stops"
    for i, (g, s) in enumerate(pairs):
        if g != s:
            text += f"; stop {i} differs: {G.KNOWN.get((prog.id, i), 'not listed: the test fails')}"
    cores = got.cores
    same = sum(g == s for g, s, _o in cores.values())
    core = f"equal on {same} of {len(cores)} cores"
    for i, (g, s, _o) in sorted(cores.items()):
        if g != s:
            why = G.KNOWN_CORE.get((prog.id, i), "not listed: the test fails")
            core += f"; core of stop {i} differs: " + ("as live" if why == G.KNOWN.get((prog.id, i)) else why)
    return f"| {prog.id} | {stops} | {text} | {core} |"


if __name__ == "__main__":
    with concurrent.futures.ThreadPoolExecutor(max(1, min(4, os.cpu_count() or 1))) as pool:
        rows = list(pool.map(row, G.PROGRAMS))
    print("| program | stops (breakpoints from its .exp) | swk-bt against GDB's bt | swk bt --core against GDB's bt on a core of the first 3 stops |")
    print("|---|---|---|---|")
    print("\n".join(rows))
