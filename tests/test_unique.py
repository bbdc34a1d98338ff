"""swk-bt -unique / swk bt --unique (issue 25): threads whose stacks are the same printed once, as
a group, against GDB's own `thread apply all bt` of the same stop.

tests/corpus/pool.c parks 40 workers in two places (odd ids in sem_wait, even ids in
pthread_cond_wait), each with its own id as an argument, and main in stop_here.  The oracle is
GDB's bt of every thread with `print frame-arguments presence` (arguments as "(...)"): the
threads whose lines are equal there are a group; swk's groups must be exactly those, biggest
first, each printed as GDB prints its first thread (with "(...)" where the members' own
arguments differ, as here), live in GDB, and on a core of the stop with the command line.
"""
from __future__ import annotations

import json
import re

import pytest

import swk_suite as S
import swk_testlib as T

pytestmark = [pytest.mark.corpus]

S.need_tool(T.GDB, "gdb")

N = 40
STOP = ("break stop_here", f"run {N}")
SETTINGS = ("set width 0", "set height 0", "set confirm off", "set pagination off")
_HEAD = re.compile(r"^Thread (\d+) \(.*?LWP (\d+)\)")


@pytest.fixture(scope="module")
def pool():
    return T.build(["pool.c"], "pool-O2", ("-O2", "-g"), ("-pthread",))


def _gdb_threads(out: str) -> dict[int, tuple[int, tuple[str, ...]]]:
    """{GDB thread number: (LWP, its bt lines)} from `thread apply all bt`."""
    threads, cur = {}, None
    for ln in T.between_markers(out, "GDBALL"):
        m = _HEAD.match(ln)
        if m:
            cur = int(m.group(1))
            threads[cur] = (int(m.group(2)), [])
        elif cur is not None and ln.startswith("#"):
            threads[cur][1].append(ln)
    return {k: (lwp, tuple(lines)) for k, (lwp, lines) in threads.items()}


def _groups(lines: list[str]) -> list[tuple[str, list[str]]]:
    """[(header, frame lines)] of swk-bt -unique's output."""
    out = []
    for ln in lines:
        if ln.startswith("Thread"):
            out.append((ln, []))
        elif ln.startswith("#") and out:
            out[-1][1].append(ln)
    return out


def _members(header: str, lwp_of: dict[int, int]) -> set[int]:
    """The GDB thread numbers a group header names ("Threads 3–5, 9 (4 threads):", "Thread 1 (LWP n):",
    or by LWP: "Threads LWP 100–102 (...)")."""
    if header.startswith("Thread ") and "(LWP" in header:
        m = re.match(r"Thread (\d+)? ?\(LWP (\d+)\)", header)
        if m.group(1):
            return {int(m.group(1))}
        return {k for k, lwp in lwp_of.items() if lwp == int(m.group(2))}
    body = header.split(" (", 1)[0].split(" ", 1)[1]
    by_lwp = body.startswith("LWP ")
    ids = set()
    for part in body.removeprefix("LWP ").split(", "):
        a, _dash, b = part.partition("\u2013")
        ids.update(range(int(a), int(b or a) + 1))
    return {k for k, lwp in lwp_of.items() if lwp in ids} if by_lwp else ids


def _check(gdb: dict, groups: list, errs: list[str], with_frame_lines=True) -> None:
    want = {}
    for num, (_lwp, lines) in gdb.items():
        want.setdefault(lines, set()).add(num)
    lwp_of = {k: lwp for k, (lwp, _l) in gdb.items()}
    got = [(_members(h, lwp_of), lines) for h, lines in groups]
    if sorted(map(sorted, want.values())) != sorted(sorted(m) for m, _l in got):
        errs.append(f"groups {[sorted(m) for m, _l in got]}, GDB's {sorted(map(sorted, want.values()))}")
        return
    sizes = [len(m) for m, _l in got]
    if sizes != sorted(sizes, reverse=True):
        errs.append(f"groups not biggest first: {sizes}")
    if with_frame_lines:
        for members, lines in got:
            first = gdb[min(members)][1]
            if tuple(lines) != first:
                errs.append(f"group {sorted(members)}: swk {lines}, GDB's thread {min(members)} {list(first)}")


@pytest.mark.swk
def test_unique_in_gdb_is_gdbs_grouping(pool):
    out = T.run_gdb(pool, [*SETTINGS, *STOP, "set print frame-arguments presence",
                           *T.marked_commands("GDBALL", "thread apply all bt"),
                           "set print frame-arguments scalars", f"source {T.GDB_INIT}",
                           *T.marked_commands("SWK", "swk-bt -unique"),
                           *T.marked_commands("SWKJSON", "swk-bt -unique -json")], timeout=180)
    gdb = _gdb_threads(out)
    groups = _groups(T.between_markers(out, "SWK"))
    errs = [] if len(gdb) == N + 1 else [f"GDB lists {len(gdb)} threads, the program has {N + 1}"]
    # the pool's two stacks with their ids as (...), and main alone with its own arguments
    if groups and not re.fullmatch(rf"Threads [\d, \u2013]+ \({N // 2} threads\):", groups[0][0]):
        errs.append(f"first group: {groups[0][0]!r}")
    _check({k: v for k, v in gdb.items() if k != 1}, [g for g in groups if "(LWP" not in g[0]], errs)
    jsons = [json.loads(ln) for ln in T.between_markers(out, "SWKJSON") if ln.startswith("{")]
    if sorted(len(j.get("threads", [])) for j in jsons) != [1, N // 2, N // 2]:
        errs.append(f"JSON groups of {[len(j.get('threads', [])) for j in jsons]} threads")
    if errs:
        pytest.fail("\n".join(errs) + "\n--- swk-bt -unique ---\n" + "\n".join(T.between_markers(out, "SWK")),
                    pytrace=False)


@pytest.mark.swk
def test_unique_on_a_core_with_the_command_line(pool):
    core = T.make_core(pool, [*SETTINGS, *STOP])
    out = T.run_gdb(pool, [*SETTINGS, "set print frame-arguments presence",
                           *T.marked_commands("GDBALL", "thread apply all bt")], core=core, timeout=180)
    gdb = _gdb_threads(out)
    p = T.run_swk_cli(["bt", "--core", core, "--exe", pool, "--unique"])
    groups = _groups(p.stdout.splitlines())
    errs = [] if p.returncode == 0 else [f"swk exited {p.returncode}"]
    if len(gdb) != N + 1:
        errs.append(f"GDB lists {len(gdb)} threads on the core")
    # the command line numbers a core's threads by LWP; its walk goes past main (GDB's here does not)
    _check({k: v for k, v in gdb.items() if v[1] and "stop_here" not in v[1][0]},
           [g for g in groups if not g[1][0].startswith("#0  stop_here")], errs)
    if errs:
        pytest.fail("\n".join(errs) + "\n--- swk bt --unique ---\n" + p.stdout[-4000:], pytrace=False)
