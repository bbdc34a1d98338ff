"""Merged stacks (issue 25): swk-bt -merge / swk bt --merge, STAT's call-prefix tree, against GDB.

The oracle is GDB's own `thread apply all bt` of the same stop: each thread's frames, outermost
first, are a path; every prefix of a path is a node of the tree, passed through by exactly the
threads whose paths start with it.  swk's tree must have exactly those nodes with exactly those
threads (by OS thread id), siblings biggest first; by line, GDB's `at FILE:LINE` too.  The
programs: tests/corpus/pool.c (40 workers parked in two places, main in stop_here), live in GDB,
on its core with the command line (and the SVG picture of it), two live processes of it merged
with `--pid A,B`; and tests/corpus/overflow.c's stack overflow, whose recursion is one node
repeated as often as the program's own counter says.
"""
from __future__ import annotations

import json
import re
import signal
import subprocess
import xml.etree.ElementTree as ET

import pytest

import swk_suite as S
import swk_testlib as T
from swk_plugin.merge import ELIDED, MergeTree, fold, members_text

pytestmark = [pytest.mark.corpus]

S.need_tool(T.GDB, "gdb")

N = 40
STOP = ("break stop_here", f"run {N}")
SETTINGS = ("set width 0", "set height 0", "set confirm off", "set pagination off",
            "set print frame-arguments presence")
_HEAD = re.compile(r"^Thread (\d+) \(.*?LWP (\d+)\)")
_FRAME = re.compile(r"^#\d+\s+(?:0x[0-9a-f]+ in )?(\S+) \(.*?\)(?: at (\S+):(\d+))?(?: from \S+)?$")


@pytest.fixture(scope="module")
def pool():
    return T.build(["pool.c"], "pool-O2", ("-O2", "-g"), ("-pthread",))


@pytest.fixture(scope="module")
def overflow():
    return T.build(["overflow.c"], "overflow-O2", ("-O2", "-g"))


def gdb_paths(lines: list[str], by_line: bool = False) -> dict[int, tuple]:
    """{LWP: its frames' labels, outermost first} from GDB's `thread apply all bt`."""
    paths, cur = {}, None
    for ln in lines:
        m = _HEAD.match(ln)
        if m:
            cur = int(m.group(2))
            paths[cur] = []
            continue
        if cur is None or not ln.startswith("#"):
            continue
        if "<signal handler called>" in ln:
            paths[cur].append(("<signal handler called>", None, None))
            continue
        f = _FRAME.match(ln)
        assert f, f"GDB frame line not understood: {ln!r}"
        name, file, line = f.groups()
        paths[cur].append((name, file, int(line)) if by_line and file else (name, None, None))
    return {lwp: tuple(reversed(p)) for lwp, p in paths.items()}


def prefix_tree(paths: dict) -> dict[tuple, set]:
    """{path prefix: the threads (key of ``paths``) whose paths start with it}."""
    out = {}
    for who, path in paths.items():
        for i in range(1, len(path) + 1):
            out.setdefault(path[:i], set()).add(who)
    return out


def swk_tree(top: dict, member=lambda proc, tid: tid) -> tuple[dict[tuple, set], list[str]]:
    """({path: threads}, problems) from swk's JSON tree (unfolded: no recursion here)."""
    out, errs = {}, []
    stack = [((), n) for n in top["tree"]]
    while stack:
        path, node = stack.pop()
        if "repeat" in node or "cycle" in node:
            errs.append(f"a folded node where there is no recursion: {node['function']}")
        path = path + ((node["function"], node.get("file"), node.get("line")),)
        who = {member(p, t) for p, tids in node["tids"].items() for t in tids}
        if len(who) != node["count"]:
            errs.append(f"{path[-1]}: count {node['count']}, {len(who)} threads listed")
        out[path] = who
        counts = [c["count"] for c in node["children"]]
        if counts != sorted(counts, reverse=True):
            errs.append(f"children of {path[-1][0]} not biggest first: {counts}")
        stack.extend((path, c) for c in node["children"])
    return out, errs


def tree_errors(got: dict, want: dict) -> list[str]:
    errs = []
    for path in sorted(set(got) | set(want), key=len):
        g, w = got.get(path), want.get(path)
        if g != w:
            errs.append(f"node {' > '.join(p[0] for p in path)}: swk {sorted(g) if g else None}, "
                        f"GDB {sorted(w) if w else None}")
            if len(errs) > 8:
                break
    return errs


def text_errors(text: list[str], top: dict) -> list[str]:
    """The text tree names the JSON tree's nodes in the same order, each branch with its count."""
    want = []
    stack = [(n, True) for n in reversed(top["tree"])]
    while stack:
        node, branch = stack.pop()
        want.append((node["count"] if branch else None, node["function"]))
        kids = node["children"]
        chain = len(kids) == 1 and kids[0]["count"] == node["count"]
        stack.extend((c, not chain) for c in reversed(kids))
    got = []
    for ln in text[1:]:
        body = ln.lstrip("\u2502\u251c\u2514\u2500 ")
        m = re.match(r"(\d+) \[[^\]]*\]  (.*)$", body)
        got.append((int(m.group(1)), m.group(2)) if m and ln.lstrip(" \u2502")[:1] in "\u251c\u2514"
                   else (None, body))
    return [] if got == want else [f"text nodes {got[:12]}..., JSON's {want[:12]}..."]


def _fail(errs, *outputs):
    if errs:
        pytest.fail("\n".join(errs) + "".join(f"\n--- {k} ---\n{v[-4000:]}" for k, v in outputs), pytrace=False)


@pytest.mark.swk
def test_merge_in_gdb_is_gdbs_stacks(pool):
    """swk-bt -merge in GDB at a stop of the pool: GDB's own stacks as one tree, by function and
    by line; the text names the same nodes."""
    out = T.run_gdb(pool, [*SETTINGS, *STOP, *T.marked_commands("GDBALL", "thread apply all bt"),
                           f"source {T.GDB_INIT}",
                           *T.marked_commands("FN", "swk-bt -merge -json"),
                           *T.marked_commands("LINE", "swk-bt -merge=line -json"),
                           *T.marked_commands("TEXT", "swk-bt -merge")], timeout=180)
    gdb_lines = T.between_markers(out, "GDBALL")
    errs = []
    for tag, by_line in (("FN", False), ("LINE", True)):
        want = gdb_paths(gdb_lines, by_line)
        if len(want) != N + 1:
            errs.append(f"GDB lists {len(want)} threads, the program has {N + 1}")
        top = json.loads(next(ln for ln in T.between_markers(out, tag) if ln.startswith("{")))
        got, problems = swk_tree(top)
        errs += problems + tree_errors(got, prefix_tree(want))
        if top["count"] != N + 1 or top["by"] != ("line" if by_line else "function"):
            errs.append(f"{tag}: count {top['count']}, by {top['by']}")
        if tag == "FN":
            text = T.between_markers(out, "TEXT")
            if not text or text[0] != (f"Merged stacks of {N + 1} threads of process {top['processes'][0]['pid']} "
                                       f"({top['processes'][0]['program']}), outermost call first:"):
                errs.append(f"text header {text[:1]}")
            errs += text_errors(text, top)
    _fail(errs, ("gdb", out))


@pytest.mark.swk
def test_merge_on_a_core_with_the_command_line(pool, tmp_path):
    """swk bt --merge on the pool's core (past main, as the command line walks) is GDB's
    `thread apply all bt` with past-main on, as one tree; --svg draws every node as wide as
    its threads."""
    core = T.make_core(pool, [*SETTINGS, *STOP])
    out = T.run_gdb(pool, [*SETTINGS, "set backtrace past-main on",
                           *T.marked_commands("GDBALL", "thread apply all bt")], core=core, timeout=180)
    want = prefix_tree(gdb_paths(T.between_markers(out, "GDBALL")))
    svg = tmp_path / "merged.svg"
    p = T.run_swk_cli(["bt", "--core", core, "--exe", pool, "--merge", "--json", "--svg", svg])
    errs = [] if p.returncode == 0 else [f"swk exited {p.returncode}"]
    top = json.loads(p.stdout.splitlines()[-1]) if p.returncode == 0 else {"tree": []}
    got, problems = swk_tree(top)
    errs += problems + tree_errors(got, want)
    # the picture: one box per node (and one for all threads), titled with its threads
    titles = ET.parse(svg).getroot().iter("{http://www.w3.org/2000/svg}title")
    boxes = sorted((m.group(1), int(m.group(2))) for t in titles
                   if (m := re.match(r"(.*) \((\d+) threads?, ", t.text or "")))
    nodes = sorted([(path[-1][0], len(who)) for path, who in got.items()] + [("all", N + 1)])
    if boxes != nodes:
        errs.append(f"SVG boxes {boxes[:10]}..., the tree's nodes {nodes[:10]}...")
    text = T.run_swk_cli(["bt", "--core", core, "--exe", pool, "--merge"])
    errs += text_errors(text.stdout.splitlines(), top)
    _fail(errs, ("swk", p.stdout), ("gdb", out))


def _parked(pool, n):
    proc = subprocess.Popen([str(pool), str(n), "park"], stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    if proc.stdout.readline().strip() != "ready":
        proc.kill()
        raise T.HarnessError(f"pool {n} park did not start")
    return proc


@pytest.mark.swk
def test_merge_across_processes_live(pool):
    """Two live processes of the pool (10 and 6 workers), merged with --pid A,B: every node's
    threads are those GDB's own bt of each process (attached with gdb -p) puts there; with
    --unique, the groups are the threads of either process whose stacks GDB prints alike;
    without either the two are printed one after the other, each headed."""
    procs = [_parked(pool, 10), _parked(pool, 6)]
    try:
        want_paths = {}
        for pr in procs:
            out = T.run_cmd([T.GDB, "-nx", "-batch", "-p", str(pr.pid), *sum(
                (["-ex", c] for c in (*SETTINGS, "set backtrace past-main on",
                                      *T.marked_commands("GDBALL", "thread apply all bt"))), [])], timeout=120).stdout
            paths = gdb_paths(T.between_markers(out, "GDBALL"))
            want_paths.update({(pr.pid, lwp): path for lwp, path in paths.items()})
        pids = ",".join(str(pr.pid) for pr in procs)
        p = T.run_swk_cli(["bt", "--pid", pids, "--merge", "--json"])
        plain = T.run_swk_cli(["bt", "--pid", pids])
        unique = T.run_swk_cli(["bt", "--pid", pids, "--unique", "--json"])
        for pr in procs:
            pr.send_signal(signal.SIGUSR1)          # still alive and handling signals after swk
    finally:
        for pr in procs:
            pr.kill()
            pr.wait()
    errs = [] if p.returncode == 0 else [f"swk exited {p.returncode}: {p.stdout[-500:]}"]
    if len(want_paths) != 18:
        errs.append(f"GDB found {len(want_paths)} threads in the two processes, they have 18")
    if p.returncode == 0:
        top = json.loads(p.stdout.splitlines()[-1])
        if [pr["pid"] for pr in top["processes"]] != [pr.pid for pr in procs] or top["count"] != 18:
            errs.append(f"processes {top['processes']}, count {top['count']}")
        got, problems = swk_tree(top, member=lambda proc, tid: (int(proc), tid))
        errs += problems + tree_errors(got, prefix_tree(want_paths))
    # --unique across the two: the threads whose stacks GDB prints alike, whichever process
    groups = {}
    for who, path in want_paths.items():
        groups.setdefault(path, set()).add(who)
    got_groups = [{(int(pid), tid) for pid, tid in zip(g["processes"], g["tids"])}
                  for g in map(json.loads, unique.stdout.splitlines())] if unique.returncode == 0 else []
    if sorted(map(sorted, got_groups)) != sorted(map(sorted, groups.values())):
        errs.append(f"--unique across the processes: groups of {[len(g) for g in got_groups]}, "
                    f"GDB's stacks alike in groups of {sorted(len(g) for g in groups.values())}")
    heads = [ln for ln in plain.stdout.splitlines() if ln.startswith("Process ")]
    if heads != [f"Process {pr.pid} ({pool}):" for pr in procs]:
        errs.append(f"the processes' headers without --merge: {heads}")
    if plain.stdout.count("\nThread ") + plain.stdout.startswith("Thread ") != 18:
        errs.append("without --merge not every thread of the two processes is printed")
    _fail(errs, ("swk --merge", p.stdout), ("swk", plain.stdout))


@pytest.mark.swk
def test_recursion_is_one_node(overflow):
    """A stack overflow (rec, its inlined descend and hop, thousands of times): one node for the
    cycle, repeated as often as rec's own counter n (GDB's bt 2) says, then the innermost two."""
    core = T.make_core(overflow, ("run 256",), timeout=300)
    out = T.run_gdb(overflow, T.marked_commands("BT", "bt 2"), core=core, timeout=300)
    n = int(re.search(r"rec \(n=(\d+)\)", "\n".join(T.between_markers(out, "BT"))).group(1))
    p = T.run_swk_cli(["bt", "--core", core, "--exe", overflow, "--merge", "--json"], timeout=600)
    t = T.run_swk_cli(["bt", "--core", core, "--exe", overflow, "--merge"], timeout=600)
    errs = [] if p.returncode == 0 and t.returncode == 0 else ["swk failed"]
    chain = []
    if p.returncode == 0:
        node = {"children": json.loads(p.stdout.splitlines()[-1])["tree"]}
        while node["children"]:
            node = node["children"][0]
            chain.append((node["function"], [c["function"] for c in node.get("cycle", [])], node.get("repeat")))
    want = [("_start", [], None), ("__libc_start_main_impl", [], None), ("__libc_start_call_main", [], None),
            ("main", [], None), ("rec", ["rec", "descend", "hop"], [n - 1, n - 1]), ("rec", [], None),
            ("descend", [], None)]
    if chain != want:
        errs.append(f"path {chain}, want {want}")
    if f"(rec \u2192 descend \u2192 hop) \u00d7{n - 1:,}" not in t.stdout:
        errs.append(f"no line for the recursion, {n - 1:,} times")
    _fail(errs, ("swk", t.stdout))


@pytest.mark.parametrize("args, message", [
    (["--merge", "--unique"], "swk: --merge and --unique cannot be combined"),
    (["--svg", "x.svg"], "swk: --svg draws merged stacks: give --merge too"),
    (["--merge", "--full"], "swk: --merge and --full cannot be combined"),
    (["--merge", "--svg", "/nonexistent/x.svg"], "swk: cannot write /nonexistent/x.svg: No such file or directory"),
    (["--merge=stack"], "swk: argument --merge: invalid choice: 'stack' (choose from 'function', 'line')"),
])
def test_bad_merge_options(pool, args, message):
    core = T.make_core(pool, [*SETTINGS, *STOP])
    p = T.run_swk_cli(["bt", "--core", core, *args])
    assert (p.returncode, p.stdout.strip()) == (2, message)


def test_bad_merge_options_in_gdb(pool):
    core = T.make_core(pool, [*SETTINGS, *STOP])
    out = T.run_gdb(pool, [f"source {T.GDB_INIT}", *T.marked_commands("A", "swk-bt -merge 5"),
                           *T.marked_commands("B", "swk-bt -merge=stack"),
                           *T.marked_commands("C", "swk-bt -merge -compare")], core=core, timeout=120)
    assert T.between_markers(out, "A") == ["swk-bt: -merge merges whole stacks: a frame count cannot be given"]
    assert T.between_markers(out, "B") == ["swk-bt: merge must be one of function, line, not 'stack'"]
    assert T.between_markers(out, "C") == ["swk-bt: -merge and -compare cannot be combined"]


# --- units: the folding of recursion and the thread lists, against their definitions ---

def test_fold_runs_and_cycles():
    assert fold(list("xrrrry")) == [(("x",), 1), (("r",), 4), (("y",), 1)]
    assert fold(list("mabcabcabcab")) == [(("m",), 1), (("a", "b", "c"), 3), (("a",), 1), (("b",), 1)]
    assert fold(list("ab" * 5), cycle=1) == [((c,), 1) for c in "ab" * 5]
    long = [str(i) for i in range(1000)]
    folded = fold(long, max_path=10)
    assert len(folded) == 10 and folded[5] == ((ELIDED,), 991) and folded[:5] == [((s,), 1) for s in long[:5]]
    assert folded[6:] == [((s,), 1) for s in long[-4:]]


def test_members_text():
    tree = MergeTree()
    p = tree.add_process(100, "/bin/x")
    for num in [1, 2, 3, 5, 7, 8, *range(10, 40, 2)]:
        tree.add(p, num, 1000 + num, [("f", None, None)])
    (node,) = tree.root.children.values()
    assert members_text(tree, node.members) == "1\u20133, 5, 7\u20138, 10, 12, 14, 16, 18, \u2026"
    assert members_text(tree, node.members, verbose=True).endswith("36, 38")
    q = tree.add_process(100, "/bin/x")      # a second core of one process: its own name
    tree.add(q, 1, 2000, [("f", None, None)])
    assert tree.processes[q].name == "#2"
    assert members_text(tree, node.members) == "100: 1\u20133, 5, 7\u20138, 10, 12, 14, 16, 18, \u2026"
    assert members_text(tree, node.members, verbose=True).endswith("36, 38; #2: 1")
