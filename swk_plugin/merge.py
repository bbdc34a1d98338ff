"""Merged stacks (issue 25): STAT's call-prefix tree of many threads, of many processes.

LLNL's Stack Trace Analysis Tool (built on StackwalkerAPI) merges the stacks of thousands of
tasks into one tree: the outermost call at the root, each node a function with the tasks whose
stacks pass through it, so that a hang shows as the few places where tasks went their own way.
swk-bt -merge / swk bt --merge do the same for the threads of a process, and of several
(swk bt --pid P1,P2, several --core):

- a node is a function (``by="function"``, STAT's default) or a function at a line
  (``by="line"``), named as the backtrace names it: inlined calls and tail-call frames are
  nodes of their own, a frame without a name is its library and offset (libc.so.6+0x1234);
- recursion is one node: a run of one function, or of a cycle of up to CYCLE frames (rec →
  descend → hop → rec ...), is written once with how often it repeated (``rec ×24,999``; the
  range where threads recursed to different depths), so a 260,000-frame overflow is one line;
- a path of more than MAX_PATH nodes keeps its outermost and innermost halves around one
  ``[… N frames …]`` node.
"""
import os

from .frame import FrameKind
from .stream import Levels
from .walker import WalkRest

#: Longest cycle of frames folded into one node.
CYCLE = 8
#: Most nodes on one thread's path (after folding): deeper paths lose their middle.
MAX_PATH = 200
#: Runs of thread numbers listed on a node's line (all of them with -v, and in JSON).
SHOWN_RUNS = 8
ELIDED = "\u2026"


class Process:
    """One process whose threads are merged: its id (None for a core without one), its
    program, and the name the output gives it (its id; "#N", its place among the
    processes, where it has none or shares it: two cores of one process)."""
    __slots__ = ("pid", "program", "name")

    def __init__(self, pid, program, name):
        self.pid, self.program, self.name = pid, program, name


class Node:
    """A function (or a folded run of them) with the threads whose stacks pass through it."""
    __slots__ = ("labels", "members", "lo", "hi", "children")

    def __init__(self, labels):
        self.labels = labels          # the frames' labels (more than one: a folded cycle)
        self.members = []             # indices into MergeTree.members
        self.lo = self.hi = None      # how often the labels repeat, fewest and most
        self.children = {}

    @property
    def name(self):
        if self.labels == (ELIDED,):
            return f"[{ELIDED} {_span(self.lo, self.hi)} frames {ELIDED}]"
        names = [label_text(label) for label in self.labels]
        text = names[0] if len(names) == 1 else "(" + " \u2192 ".join(names) + ")"
        return text if self.hi == 1 else f"{text} \u00d7{_span(self.lo, self.hi)}"


def label_text(label):
    """"rec", or "rec at so.c:4" (merged by line)."""
    name, file, line = label
    return f"{name} at {file}:{line}" if file else name


def _span(lo, hi):
    return f"{lo:,}" if lo == hi else f"{lo:,}\u2013{hi:,}"


class MergeTree:
    """Threads' stacks merged into one call-prefix tree (``root``'s children are outermost
    calls); threads that could not be walked are kept in ``failed`` with why."""

    def __init__(self, by="function"):
        self.by = by
        self.root = Node(())
        self.processes = []           # Process
        self.members = []             # (process index, thread number, OS thread id)
        self.failed = []              # (process index, thread number, OS thread id, why)

    def add_process(self, pid, program):
        n = len(self.processes)
        name = str(pid) if pid and all(p.pid != pid for p in self.processes) else f"#{n + 1}"
        self.processes.append(Process(pid, program, name))
        return n

    def add(self, proc, num, tid, labels):
        """Thread ``num`` (``tid``) of process ``proc`` whose frames, innermost first, are named
        ``labels``."""
        m = len(self.members)
        self.members.append((proc, num, tid))
        node = self.root
        node.members.append(m)
        for key, times in fold(list(reversed(labels))):
            child = node.children.get(key)
            if child is None:
                child = node.children[key] = Node(key)
            child.members.append(m)
            child.lo = times if child.lo is None else min(child.lo, times)
            child.hi = times if child.hi is None else max(child.hi, times)
            node = child


def fold(seq, cycle=CYCLE, max_path=MAX_PATH):
    """``seq`` (names, outermost first) as [(names, times)]: each run of one name, or of a
    cycle of up to ``cycle`` names, once with how often it repeats; at most ``max_path``
    entries, the middle of a longer path as one ((ELIDED,), frames left out)."""
    out, i, n = [], 0, len(seq)
    while i < n:
        best_p, best_r = 1, 1
        for p in range(1, cycle + 1):
            if i + 2 * p > n:
                break
            block = seq[i:i + p]
            r = 1
            while seq[i + r * p:i + (r + 1) * p] == block:
                r += 1
            if r > 1 and r * p > best_r * best_p:
                best_p, best_r = p, r
        out.append((tuple(seq[i:i + best_p]), best_r))
        i += best_p * best_r
    if len(out) > max_path:
        head, tail = max_path // 2, max_path - max_path // 2 - 1
        middle = out[head:len(out) - tail]
        out = out[:head] + [((ELIDED,), sum(len(k) * t for k, t in middle))] + out[len(out) - tail:]
    return out


def frame_label(sf, by="function"):
    """A backtrace level as a node names it, (name, file, line): its function, else its
    library and offset, else its address; its source line only ``by="line"``."""
    if sf.kind == FrameKind.SIGNAL:
        return ("<signal handler called>", None, None)
    name = sf.name
    if not name:
        frame, lib = sf.frame, sf.frame.library
        name = f"{os.path.basename(lib.name)}+0x{frame.lookup_pc - lib.base:x}" if lib is not None \
            else f"0x{frame.ra:x}"
    if by == "line" and sf.file and sf.line:
        return (name, sf.file, sf.line)
    return (name, None, None)


def stack_labels(walk, rest, opts, past_main, top_inlines, by="function"):
    """The names of a walk's levels, innermost first, as its backtrace shows them (past main
    or not, GDB's backtrace limit); a deep walk (``rest``: a WalkRest) is read segment by
    segment, its frames not kept."""
    if rest is None:
        rest = WalkRest.after(walk)
    return [frame_label(lines.shown[k], by)
            for lines, k, _label in Levels(list(walk), rest, _NoLimit(opts), past_main, top_inlines)]


class _NoLimit:
    """A merge shows whole stacks: GDB's backtrace limit holds, a frame count does not."""
    limit = None

    def __init__(self, opts):
        self.backtrace_limit = opts.backtrace_limit


def _runs(nums):
    ids = sorted(set(nums))
    runs, start = [], ids[0]
    for a, b in zip(ids, ids[1:] + [None]):
        if b != a + 1:
            runs.append(f"{start}" if start == a else f"{start}\u2013{a}")
            start = b
    return runs


def _member_ids(tree, members):
    """{process index: [thread numbers]} of ``members`` (OS thread ids where a thread has no number)."""
    by_proc = {}
    for m in members:
        proc, num, tid = tree.members[m]
        by_proc.setdefault(proc, []).append(num if num is not None else tid)
    return by_proc


def members_text(tree, members, verbose=False):
    """"2–41" (one process), "1234: 1–40; 1240: 1–40" (several); at most SHOWN_RUNS runs
    unless ``verbose``, then "…"."""
    parts, budget = [], None if verbose else SHOWN_RUNS
    for proc, nums in sorted(_member_ids(tree, members).items()):
        runs = _runs(nums)
        if budget is not None:
            if budget <= 0:
                parts.append(ELIDED)
                break
            if len(runs) > budget:
                runs = runs[:budget] + [ELIDED]
            budget -= len(runs)
        text = ", ".join(runs)
        parts.append(text if len(tree.processes) == 1 else f"{tree.processes[proc].name}: {text}")
        if runs[-1] == ELIDED:
            break
    return "; ".join(parts)


def _ordered(node):
    return sorted(node.children.values(), key=lambda c: (-len(c.members), c.members[0]))


def header(tree):
    threads = len(tree.members) + len(tree.failed)
    procs = tree.processes
    if len(procs) == 1:
        p = procs[0]
        where = f"process {p.pid} ({p.program})" if p.pid else f"{p.program}"
    else:
        where = f"{len(procs)} processes (" + ", ".join(
            f"{p.name} {os.path.basename(p.program or '?')}" for p in procs) + ")"
    by = "" if tree.by == "function" else ", by line"
    return f"Merged stacks of {threads} thread{'s' if threads != 1 else ''} of {where}{by}"


def text_lines(tree, verbose=False):
    """The tree drawn in text: a node per line, ``count [threads]  name``; a chain of calls
    every one of the node's threads makes goes on under its name, without a new branch."""
    out = [header(tree) + ", outermost call first:"]
    kids = _ordered(tree.root)
    stack = [(c, "", i == len(kids) - 1) for i, c in reversed(list(enumerate(kids)))]
    while stack:
        node, prefix, last = stack.pop()
        head = f"{len(node.members)} [{members_text(tree, node.members, verbose)}]  "
        out.append(prefix + ("\u2514\u2500 " if last else "\u251c\u2500 ") + head + node.name)
        cont = prefix + ("   " if last else "\u2502  ")
        while len(node.children) == 1:
            (child,) = node.children.values()
            if len(child.members) != len(node.members):
                break
            out.append(cont + " " * len(head) + child.name)
            node = child
        kids = _ordered(node)
        stack.extend((c, cont, i == len(kids) - 1) for i, c in reversed(list(enumerate(kids))))
    for proc, num, tid, why in tree.failed:
        who = f"Thread {num} (LWP {tid})" if num is not None else f"Thread (LWP {tid})"
        if len(tree.processes) > 1:
            who = f"Process {tree.processes[proc].name}: {who}"
        out.append(f"{who} {why}")
    return out


def json_line(tree):
    """The tree as one JSON object: each node's function (file and line, merged by line),
    count, its threads by process (``"threads": {"1234": [1, 2]}``, their OS ids in ``"tids"``;
    a process without an id, or two cores of one: ``"#2"``), a folded cycle's frames and how
    often a folded run repeats (``"repeat": [fewest, most]``)."""
    import json   # only for JSON output: not at every start
    def node_json(node):
        if node.labels == (ELIDED,):
            d = {"function": None, "count": len(node.members), "elided_frames": [node.lo, node.hi]}
        else:
            name, file, line = node.labels[0]
            d = {"function": name, "count": len(node.members)}
            if file:
                d["file"], d["line"] = file, line
            if len(node.labels) > 1:      # a cycle: its frames, outermost first
                d["cycle"] = [{"function": n, **({"file": f, "line": ln} if f else {})}
                              for n, f, ln in node.labels]
            if node.hi != 1:
                d["repeat"] = [node.lo, node.hi]
        d["threads"] = {tree.processes[p].name: sorted(nums)
                        for p, nums in _member_ids(tree, node.members).items()}
        tids = {}
        for m in node.members:
            proc, _num, tid = tree.members[m]
            tids.setdefault(tree.processes[proc].name, []).append(tid)
        d["tids"] = {k: sorted(v) for k, v in tids.items()}
        d["children"] = []
        return d

    top = {"merged": True, "by": tree.by, "count": len(tree.members),
           "processes": [{"process": p.name, "pid": p.pid, "program": p.program}
                         for i, p in enumerate(tree.processes)],
           "tree": []}
    stack = [(c, top["tree"]) for c in reversed(_ordered(tree.root))]
    while stack:
        node, into = stack.pop()
        d = node_json(node)
        into.append(d)
        stack.extend((c, d["children"]) for c in reversed(_ordered(node)))
    top["failed"] = [{"process": tree.processes[p].name, "thread": num, "tid": tid, "error": why}
                     for p, num, tid, why in tree.failed]
    return json.dumps(top)


def svg_tree(tree, verbose=False):
    """The tree as flamegraph.svg_tree draws it: a box per node, as wide as its threads, the
    outermost calls at the bottom; its hover text names the threads."""
    def conv(node):
        return {"name": node.name if node.labels else "all", "count": len(node.members),
                "note": members_text(tree, node.members, verbose), "children": {}}

    root = conv(tree.root)
    stack = [(tree.root, root)]
    while stack:
        node, d = stack.pop()
        for i, c in enumerate(_ordered(node)):
            cd = d["children"][f"{i:08d}"] = conv(c)
            stack.append((c, cd))
    return root
