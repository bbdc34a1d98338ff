"""The bt command every front end runs, written once.

Walk the threads asked for, then print each walk (GDB-style text or JSON),
or set it beside the debugger's own frames (-compare), or say in one line why
a thread could not be walked (running, exited) — the same in GDB, in LLDB and
on the command line.  Front ends differ only in how they pick threads, where
the debugger's own frames come from, and where lines go: a sink that takes a
list of lines (one gdb.write per thread, not one per frame).
"""
import copy
from collections import namedtuple

from .cache import collector_paused
from .dwarf import unitcache
from .errors import ThreadStateError
from .errors import SwkError
from .flamegraph import svg_tree
from .format import frame_info, frame_text, pc_width, render, same_name, visible_frames
from .merge import MergeTree, header as merge_header, json_line, stack_labels, svg_tree as merged_svg, text_lines
from .stream import DEFAULT_COLLAPSE, SEGMENT, stream_json, stream_text
from .walker import WalkRest


def _py():
    """swk_plugin.pyframes, imported when a walk asks for Python frames (-py): the
    interpreter tables cost every other command line ~12 ms to import."""
    from . import pyframes
    return pyframes


class NativeFrame(namedtuple("NativeFrame", "pc name signal", defaults=(False,))):
    """One frame of the debugger's own backtrace (inline and tail-call frames left out)."""
    __slots__ = ()


class NativeBacktrace(namedtuple("NativeBacktrace", "debugger frames hidden", defaults=(0,))):
    """The debugger's own frames of a thread (``debugger``: its name), and how many virtual
    frames (inlined calls, tail calls) it showed besides, which -compare does not count."""
    __slots__ = ()


def run_bt(walker, tids, opts, sink, **kw):
    """Print swk-bt for ``tids`` through ``sink(lines)`` (_run_bt), Python's cyclic collector
    held off for all of it: run after each thread, it went through every object of the
    walks before again (a fifth of the time of 1,000 threads)."""
    try:
        with collector_paused():
            return _run_bt(walker, tids, opts, sink, **kw)
    finally:
        unitcache.flush()          # what the walks read of units' DIEs, for the next process


def _run_bt(walker, tids, opts, sink, *, past_main=True, headers=None, native=None, debug_sink=None,
            thread_info=None, top_inlines=None, lines_for=None, stream_for=None, write=None, first=0):
    """Print swk-bt for ``tids`` through ``sink(lines)``.

    ``opts``: options.BtOptions.  ``headers``: head each thread "Thread N (LWP tid):"
    (default: with -all, as GDB's thread apply all does).  ``native(tid)``: the
    debugger's NativeBacktrace, for -compare.  ``debug_sink(lines)``: where the
    steppers' internal errors go (None: not shown).  A thread that cannot be walked
    raises ThreadStateError, except with -all, where it is one line and the others
    are walked.  ``thread_info(tid)``: more to say of a thread ({"pause_us": ...} from the
    ptrace back-end): keys of its JSON object, and with -v words after its header.
    ``top_inlines(tid)``: how many inlined calls at the top frame's pc the debugger shows
    (None: all), so that swk-bt's levels are the debugger's.  ``lines_for(walk, tid)``: a
    debugger's own text of a walk, its thread header included (LLDB's frame-format), for
    the text that is neither JSON nor -compare; ``stream_for(head, rest, tid, emit, collapse,
    top_inlines)``: the same for a walk printed as it is found (below), None: such walks are
    walked whole for lines_for.  ``write(text)``: where a deep walk's JSON line
    goes in pieces as it is found (None: it is made whole, then given to ``sink``).  ``first``:
    how many threads were printed before these (by another call: a share of the threads).

    A walk deeper than stream.SEGMENT frames is printed as it is found, in segments
    (stream.py): its frames are not all kept.
    """
    ps = walker.process_state
    aout = ps.library_state.get_aout() if ps.library_state is not None else None
    aout_path = aout.name if aout else None   # as frames name their library (format.frame_info)
    if opts.merge:
        tree = MergeTree(opts.merge)
        merge_threads(tree, walker, tids, opts, past_main, top_inlines)
        return print_merge(tree, opts, sink)
    if opts.unique and not opts.compare:
        return _run_unique(walker, tids, opts, sink, past_main, top_inlines)
    headers = opts.all if headers is None else headers
    # bt N walks one frame more than it shows, as GDB does: the last frame's entry values come
    # from its caller's call site, and its caller's registers from the step past it
    py = getattr(opts, "py", False)         # Python frames merged in (pyframes.py)
    limit = opts.limit + 1 if opts.limit and opts.limit > 0 and not py else None   # -py N: lines
    collapse = getattr(opts, "collapse", DEFAULT_COLLAPSE)
    del walker.stepper_errors[:]
    for i, tid in enumerate(tids, first):
        num, os_tid = ps.thread_label(tid)
        whole = opts.compare or py or (lines_for is not None and stream_for is None and not opts.json)
        try:
            if whole:
                walk, rest = walker.walk_stack(tid, max_frames=limit), None
            else:
                walk, rest = walker.walk_stack_head(tid, max_frames=limit, head=SEGMENT)
        except ThreadStateError as exc:
            if not opts.all:
                raise
            sink(thread_state_lines(opts, i, num, os_tid, exc))
            continue
        tops = top_inlines(tid) if top_inlines is not None else None
        if top_inlines is not None:
            walk.top_inlines = tops
        info = thread_info(tid) if thread_info is not None else None
        head = f"Thread {num} (LWP {os_tid}){_py().thread_tag(walk) if py else ''}:"
        if info and opts.verbose:
            head += " " + ", ".join(f"{k[:-3].replace('_', ' ')} {v} us" if k.endswith("_us")
                                    else f"{k.replace('_', ' ')} {v}" for k, v in info.items())
        lines = ["", head] if i else [head]
        if not headers or opts.json:
            lines = []
        if rest is None and not opts.json and not whole and collapse is not None and len(walk) > collapse:
            rest = WalkRest.after(walk)          # a run may be longer than collapse: printed as a stream
        if rest is not None:
            with collector_paused():
                if stream_for is not None and not opts.json:
                    stream_for(walk, rest, tid, sink, collapse, tops)
                    continue
                sink(lines)
                if opts.json:
                    _stream_json(walk, rest, opts, num, os_tid, info, sink, write, past_main, tops)
                else:
                    stream_text(walk, rest, opts, aout_path, past_main, tops, sink, collapse)
            continue
        if opts.compare:
            rows = compare_lines(walk, native(tid), aout_path, opts.verbose, visible_frames(walk, past_main))
            lines += _py().python_compare_lines(walk, rows, visible_frames(walk, past_main)) if py else rows
        elif lines_for is not None and not opts.json:
            with collector_paused():
                lines = lines_for(walk, tid)
        else:
            with collector_paused():
                out = (_py().render_py if py else render)(walk, opts, num, os_tid, aout_path, past_main)
            if info and opts.json:
                import json   # only for JSON output: not at every start
                out = [json.dumps({**json.loads(line), **info}) for line in out]
            lines += out
        sink(lines)
    if debug_sink is not None and walker.stepper_errors:
        debug_sink([f"swk debug: {name} raised {exc.__class__.__name__}: {exc}"
                    for name, exc in walker.stepper_errors])


def _stream_json(walk, rest, opts, num, os_tid, info, sink, write, past_main, tops):
    if write is not None:
        return stream_json(walk, rest, opts, num, os_tid, info, write, past_main, tops)
    pieces = []
    stream_json(walk, rest, opts, num, os_tid, info, pieces.append, past_main, tops)
    sink(["".join(pieces).rstrip("\n")])


def _run_unique(walker, tids, opts, sink, past_main, top_inlines):
    """swk-bt -unique: the threads grouped by their stacks (the same frames at the same pcs),
    biggest group first, each stack printed once under "Threads 3–250, 400 (249 threads):";
    its arguments as `print frame-arguments presence` prints them ("(...)") where the
    threads' own differ.  Threads that cannot be walked are listed after."""
    groups = UniqueGroups()
    groups.add(walker, tids, opts, past_main, top_inlines)
    groups.print(opts, sink)


class Failed:
    """A thread that could not be walked, as a ThreadStateError says it (kept where the
    error itself is not: sent from a worker process)."""

    def __init__(self, state, message):
        self.state, self.message = state, message

    def __str__(self):
        return self.message


class UniqueGroups:
    """Threads grouped by their stacks, from one process or several (swk bt --pid A,B
    --unique): a frame is its library and offset there (the same code wherever each process
    loaded it), its kind, and the walk's end.  A process's threads become entries (entries()),
    which may be made in other processes (forked workers), then groups (add_entries())."""

    def __init__(self):
        self.groups, self.failed, self.processes = {}, [], []

    def add(self, walker, tids, opts, past_main=True, top_inlines=None, process=None):
        """Walk ``tids`` of ``walker``'s process (named ``process`` among several) into the groups."""
        self.processes.append(process)
        self.add_entries(self.entries(walker, tids, opts, past_main, top_inlines, process))

    @staticmethod
    def entries(walker, tids, opts, past_main=True, top_inlines=None, process=None, eager=False):
        """[("ok", who, key, text, presence) | ("failed", who, Failed)] of ``tids``: who is
        (process, number, LWP); presence, for the first thread of each key here, its text with
        arguments as "(...)" (``eager``), or a function making it; None for the others."""
        ps = walker.process_state
        aout = ps.library_state.get_aout() if ps.library_state is not None else None
        aout_path = aout.name if aout else None
        py = getattr(opts, "py", False)         # Python frames merged in: lines and keys (pyframes.py)
        limit = opts.limit if opts.limit and opts.limit > 0 and not py else None
        out, seen = [], set()
        for tid in tids:
            num, os_tid = ps.thread_label(tid)
            who = (process, num, os_tid)
            try:
                walk = walker.walk_stack(tid, max_frames=limit)
            except ThreadStateError as exc:
                out.append(("failed", who, Failed(exc.state, str(exc))))
                continue
            if top_inlines is not None:
                walk.top_inlines = top_inlines(tid)
            with collector_paused():
                text = (_py().render_py if py else render)(walk, opts, num, os_tid, aout_path, past_main)
            key = (tuple(_frame_key(f) for f in walk), walk.stop_reason, getattr(walk, "top_inlines", None),
                   _py().python_key(walk, past_main) if py else None)
            presence = None
            if key not in seen:
                seen.add(key)
                presence = _presence(walk, opts, num, os_tid, aout_path)
                if eager:
                    presence = presence()
            out.append(("ok", who, key, text, presence))
        return out

    def add_entries(self, entries):
        for entry in entries:
            if entry[0] == "failed":
                self.failed.append(entry[1:])
                continue
            _ok, who, key, text, presence = entry
            group = self.groups.get(key)
            if group is None:
                group = self.groups[key] = {"members": [], "text": text, "presence": presence, "differ": False}
            elif text != group["text"]:
                group["differ"] = True
            group["members"].append(who)

    def print(self, opts, sink):
        import json   # only for JSON output: not at every start
        several = len(self.processes) > 1
        order = sorted(self.groups.values(), key=lambda g: (-len(g["members"]), _member_order(g["members"][0])))
        for k, group in enumerate(order):
            members, text = group["members"], group["text"]
            if group["differ"]:                  # the members' arguments differ: shown as (...)
                text = group["presence"]
                if callable(text):
                    text = text()
            if opts.json:
                line = json.loads(text[0])
                line.pop("thread", None)
                line.pop("tid", None)
                extra = {"processes": [m[0] for m in members]} if several else {}
                sink([json.dumps({"threads": [m[1] for m in members], "tids": [m[2] for m in members],
                                  **extra, **line})])
                continue
            sink(([""] if k else []) + [group_header([m[1:] for m in members] if not several else members,
                                                     several)] + text)
        for i, ((process, num, os_tid), exc) in enumerate(self.failed):
            lines = thread_state_lines(opts, i + bool(order), num, os_tid, exc)
            if several and not opts.json:
                lines[-1] = f"Process {process}: {lines[-1]}"
            sink(lines)


def _presence(walk, opts, num, os_tid, aout_path):
    """A function making a walk's text with its arguments as "(...)" (GDB's `print
    frame-arguments presence`), for a group whose members' arguments differ."""
    def make():
        plain = copy.copy(opts)
        plain.frame_arguments = "presence"
        with collector_paused():
            return (_py().render_py if getattr(opts, "py", False) else render)(walk, plain, num, os_tid, aout_path, True)
    return make


def _frame_key(frame):
    """A frame as -unique compares it: where its code is in its library (one program's
    processes load it at different places), else its address; its kind."""
    lib = frame.library
    return (lib.name, frame.ra - lib.base, frame.kind) if lib is not None else (None, frame.ra, frame.kind)


def _member_order(member):
    process, num, os_tid = member
    return (str(process), num if num is not None else os_tid)


def merge_threads(tree, walker, tids, opts, past_main=True, top_inlines=None):
    """Add the stacks of ``tids`` (threads of ``walker``'s process) to ``tree`` (a
    merge.MergeTree); a deep walk is read as it is found, its frames not kept."""
    ps = walker.process_state
    proc = tree.add_process(ps.get_process_id(), ps.get_executable_path())
    add_merge_entries(tree, proc, merge_entries(walker, tids, opts, tree.by, past_main, top_inlines))


def merge_entries(walker, tids, opts, by="function", past_main=True, top_inlines=None):
    """[(number, LWP, names innermost first, or None and why not)] of ``tids``, for a MergeTree
    (made here, or in a forked worker)."""
    ps = walker.process_state
    out = []
    for tid in tids:
        num, os_tid = ps.thread_label(tid)
        py = getattr(opts, "py", False)     # Python frames merged in: walked whole (pyframes.py)
        try:
            walk, rest = (walker.walk_stack(tid), None) if py else walker.walk_stack_head(tid, head=SEGMENT)
        except ThreadStateError as exc:
            out.append((num, os_tid, None, exc.state))
            continue
        tops = top_inlines(tid) if top_inlines is not None else None
        if py and top_inlines is not None:
            walk.top_inlines = tops
        with collector_paused():
            if py:
                labels = _py().python_labels(walk, opts, past_main, by)
            else:
                labels = stack_labels(walk, rest, opts, past_main, tops, by)
            out.append((num, os_tid, labels, None))
    return out


def add_merge_entries(tree, proc, entries):
    for num, os_tid, labels, why in entries:
        if labels is None:
            tree.failed.append((proc, num, os_tid, why))
        else:
            tree.add(proc, num, os_tid, labels)


def print_merge(tree, opts, sink):
    """Print merged stacks: the tree in text (or one JSON line), and with -svg its picture."""
    if opts.svg is not None:
        title = merge_header(tree)
        try:
            with open(opts.svg, "w") as f:
                f.write(svg_tree(merged_svg(tree, opts.verbose), title, unit="threads"))
        except OSError as exc:
            raise SwkError(f"swk: cannot write {opts.svg}: {exc.strerror}") from None
    sink([json_line(tree)] if opts.json else text_lines(tree, opts.verbose))


def group_header(members, several=False):
    """ "Thread 3 (LWP 1234):" for one thread, "Threads 3–250, 400 (249 threads):" for more
    (by LWP where the threads have no debugger numbers); ``several``: members are (process,
    number, LWP), "Threads 1234: 2–11; 1240: 2–7 (16 threads):"."""
    if several:
        by_proc = {}
        for process, num, os_tid in members:
            by_proc.setdefault(process, []).append(num if num is not None else os_tid)
        if len(members) == 1:
            process, num, os_tid = members[0]
            return f"Process {process}: Thread {num} (LWP {os_tid}):"
        return f"Threads {'; '.join(f'{p}: {_runs(ids)}' for p, ids in by_proc.items())} ({len(members)} threads):"
    if len(members) == 1:
        num, os_tid = members[0][:2]
        return f"Thread {num} (LWP {os_tid}):" if num is not None else f"Thread (LWP {os_tid}):"
    numbered = all(m[0] is not None for m in members)
    ids = [m[0] if numbered else m[1] for m in members]
    return f"Threads {'' if numbered else 'LWP '}{_runs(ids)} ({len(members)} threads):"


def _runs(ids):
    """"3–250, 400"."""
    ids = sorted(ids)
    runs, start = [], ids[0]
    for a, b in zip(ids, ids[1:] + [None]):
        if b != a + 1:
            runs.append(f"{start}" if start == a else f"{start}\u2013{a}")
            start = b
    return ", ".join(runs)


def thread_state_lines(opts, i, num, os_tid, exc):
    """The line swk-bt -all prints for a thread it cannot walk now."""
    import json   # only for JSON output: not at every start
    what = f"Thread {num} (LWP {os_tid}) {exc.state}"
    if exc.state == "is running":
        what += ": interrupt it to walk its stack"
    if opts.json:
        return [json.dumps({"thread": num, "tid": os_tid, "frames": [], "stop_reason": what,
                            "error": str(exc)})]
    return ["", what] if i else [what]


def compare_lines(walk, native, aout_path, verbose, visible=None):
    """swk's frames beside the debugger's own, ``!=`` where the pc or the function
    differs (a signal frame on either side needs no name); the debugger's inlined and
    tail-call frames are left out and counted."""
    visible = len(walk) if visible is None else visible
    theirs = native.frames
    n = max(visible, len(theirs))
    diffs = 0
    width = pc_width(walk)
    out = [f"{'':2}{'swk':<60} | {native.debugger.lower()}"]
    for i in range(n):
        mine = frame_text(frame_info(walk[i], i), aout_path, verbose, width=width) if i < visible else "-"
        if i < len(theirs):
            t = theirs[i]
            other = "<signal handler called>" if t.signal else f"0x{t.pc:0{width}x} in {t.name or '??'}"
        else:
            other = "-"
        same = (i < visible and i < len(theirs) and walk[i].ra == theirs[i].pc
                and (theirs[i].signal or walk[i].kind == "signal" or same_name(walk[i].name, theirs[i].name)))
        if not same:
            diffs += 1
        out.append(f"{'  ' if same else '!='}{mine:<60} | {other}")
    note = (f" ({native.debugger}'s {native.hidden} inline/tail-call frame(s) not counted)"
            if native.hidden else "")
    out.append(f"{diffs} difference(s) over {n} frames{note}; swk: {walk.stop_reason}")
    return out
