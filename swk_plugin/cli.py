"""Command line: walk a core file, or a live process, without any debugger.

    swk bt --core FILE [--core FILE ...] [--exe PROGRAM] [--json] [--all] [--unique]
           [--merge [function|line]] [--svg FILE] [--thread TID] [--sysroot DIR]
           [--frame-cap N] [--perf-map FILE] [--jitdump FILE] [-v] [--regs] [--full] [--py [only]] [N | -N]
    swk bt --pid PID[,PID...] [--json] [--all] [--unique] [--merge [function|line]] [--svg FILE]
           [--thread TID] [--stopped] [--stack-bytes N] [--frame-cap N] [-v] [--regs] [--full] [--py [only]]
           [N | -N]
    swk profile --pid PID [--duration S] [--hz N] [--folded FILE] [--svg FILE] [--top N] [--py]
"""
import argparse
import gc
import io
import os
import pickle
import signal
import sys

from .backends.core import CoreProcessState
from .dwarf.lines import PREFETCH
from .errors import SwkError
from .linux.sysroot import elf_machine_is, is_elf
from .jit.jitdump import open_jitdump
from .jit.symbols import JitSymbols
from .symlookup import ElfSymbolLookup
from .frontend import UniqueGroups, add_merge_entries, merge_entries, print_merge, run_bt
from .merge import MergeTree
from .options import MERGE_BY, PY_ONLY, REGS, SETTINGS, BtOptions, check_merge, check_py
from .walker import DEFAULT_FRAME_CAP, Walker


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, no usage dump
        raise SwkError(f"swk: {message}")


def build_parser():
    p = _Parser(prog="swk", description="swk: a stack walker for cores, GDB and LLDB")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    bt = sub.add_parser("bt", help="print the call stacks of a core file or a live process")
    where = bt.add_mutually_exclusive_group(required=True)
    where.add_argument("--core", action="append",
                       help="the core file (several --core: their stacks one after the other, or merged)")
    where.add_argument("--pid", type=_pids,
                       help="a live process (attached with ptrace, then left as it was); PID,PID,...: several")
    bt.add_argument("--stopped", action="store_true",
                    help="--pid: keep the threads stopped while walking (the default with --full: values "
                         "read consistently); otherwise they go on once their stacks are copied")
    bt.add_argument("--stack-bytes", type=_size, default=None,
                    help="--pid: bytes of each thread's stack copied while it is stopped (default 8M)")
    bt.add_argument("--exe", help="the program that dumped it (default: the core's own record)")
    bt.add_argument("--json", action="store_true", help="one JSON line per thread")
    bt.add_argument("--all", action="store_true", help="every thread (the default for cores)")
    bt.add_argument("--unique", action="store_true",
                    help="threads with the same stack printed once, as a group (biggest first)")
    bt.add_argument("--merge", nargs="?", const="function", choices=MERGE_BY,
                    help="every thread's stack merged into one call tree (STAT's), outermost call "
                         "first: each node a function (or a line), with the threads through it")
    bt.add_argument("--svg", help="--merge: also draw the tree as an SVG picture in this file")
    bt.add_argument("--thread", type=lambda s: int(s, 0), help="only the thread with this OS thread id")
    bt.add_argument("--sysroot", help="prefix for the paths of the core's mapped files")
    bt.add_argument("--frame-cap", type=int, default=DEFAULT_FRAME_CAP, help="most frames per walk")
    bt.add_argument("--perf-map", help="the JIT's perf map (default /tmp/perf-PID.map): names for its code")
    bt.add_argument("--jitdump", help="the JIT's jitdump (default: the file the process maps): names and "
                    "unwinding data for its code")
    bt.add_argument("-v", "--verbose", action="store_true", help="show how each frame was found")
    bt.add_argument("--regs", action="store_true",
                    help="-v, and after each frame where its caller's registers came from, by which rule")
    bt.add_argument("--full", action="store_true", help="also local variables, as GDB's bt full")
    bt.add_argument("--py", action="store_true",
                    help="the Python frames of each thread among its native ones (CPython 3.10-3.13); "
                         "--py only: them alone")
    bt.add_argument("--py-only", action="store_true", help=argparse.SUPPRESS)     # --py only, --py=only
    for name, (gdb_name, _target, allowed) in SETTINGS.items():
        bt.add_argument(f"--{name}", metavar="|".join(allowed) if not callable(allowed) else "N|unlimited",
                        help=f"as GDB's set {gdb_name}")
    bt.add_argument("limit", nargs="?", type=int, help="innermost N frames, or outermost -N")
    pr = sub.add_parser("profile", help="sample the call stacks of a live process")
    pr.add_argument("--pid", type=_pid, required=True, help="the process")
    pr.add_argument("--duration", type=float, default=5.0, help="seconds to sample (default 5)")
    pr.add_argument("--hz", type=float, default=100.0, help="samples per second (default 100)")
    pr.add_argument("--folded", help="write folded stacks (flamegraph.pl, speedscope, inferno)")
    pr.add_argument("--svg", help="write a flame graph drawn by swk")
    pr.add_argument("--top", type=int, default=20, help="functions listed (default 20)")
    pr.add_argument("--stack-bytes", type=_size, default=None,
                    help="bytes of each thread's stack copied per sample (default: as deep as its "
                         "last walk needed, twice over, 16K to 1M)")
    pr.add_argument("--frame-cap", type=int, default=DEFAULT_FRAME_CAP, help="most frames per walk")
    pr.add_argument("--py", action="store_true", help="Python functions too, after the evaluator frame running each")
    return p


def _pid(text):
    try:
        pid = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a process id: {text!r}") from None
    if pid <= 0:
        raise argparse.ArgumentTypeError(f"not a process id: {text!r}")
    return pid


def _pids(text):
    pids = [_pid(p) for p in text.split(",")]
    if len(set(pids)) != len(pids):
        raise argparse.ArgumentTypeError(f"a process given twice: {text!r}")
    return pids


def _size(text):
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    t = text.strip().lower().rstrip("b")
    mult = units.get(t[-1:], 1)
    try:
        n = int(t[:-1] if t[-1:] in units else t, 0) * mult
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"not a size: {text!r}")
    return n


def cmd_bt(args, out):
    if args.frame_cap <= 0:
        raise SwkError("swk: --frame-cap must be positive")
    if args.limit == 0:
        raise SwkError("swk: a frame count must not be zero")
    opts = _options(args)
    check_merge(opts, "swk: ", "--")
    check_py(opts, "swk: ", "--")
    PREFETCH[0] = True       # the modules on the stacks: their DWARF inflated while walking
    targets = args.pid if args.pid is not None else args.core
    if len(targets) > 1 and args.thread is not None:
        raise SwkError("swk: --thread is for one process")
    if args.pid is not None:
        if args.exe is not None or args.sysroot is not None:
            raise SwkError("swk: --exe and --sysroot are for cores (a live process says what it runs)")
    else:
        if args.stopped:
            raise SwkError("swk: --stopped is for --pid")
        if args.exe is not None and not os.path.isfile(args.exe):
            raise SwkError(f"swk: --exe {args.exe}: no such file")
        if args.sysroot is not None and not os.path.isdir(args.sysroot):
            raise SwkError(f"swk: --sysroot {args.sysroot}: no such directory")
    if args.perf_map is not None and not os.path.isfile(args.perf_map):
        raise SwkError(f"swk: --perf-map {args.perf_map}: no such file")
    if args.jitdump is not None and open_jitdump(args.jitdump) is None:
        raise SwkError(f"swk: --jitdump {args.jitdump}: no such file, or not a jitdump")
    # merged stacks, and -unique's groups across processes, are printed once every process is walked
    several = len(targets) > 1
    tree = (MergeTree(opts.merge) if opts.merge else UniqueGroups() if opts.unique else None) if several else None
    bt = cmd_bt_pid if args.pid is not None else cmd_bt_core
    for i, target in enumerate(targets):
        bt(args, opts, target, out, tree, i if len(targets) > 1 else None)
    if isinstance(tree, MergeTree):
        print_merge(tree, opts, _sink(out))
    elif tree is not None:
        tree.print(opts, _sink(out))
    return 0


def _sink(out):
    def sink(lines):
        if lines:
            out.write("\n".join(lines) + "\n")
    return sink


def _walk_process(args, opts, walker, what, out, tree, nth, info=None, parallel=True, copier=None):
    """Print the threads of one process, or group them by stack (--unique), or merge them
    (--merge), into ``tree`` where several processes share one; ``nth``: its place among several
    (None: the only one), which heads its threads with the process; ``parallel``: its memory
    does not change (a core, copies), so many threads may be walked by several processes;
    ``copier``: the threads of a live process are still to be copied (a _Copier), each share
    just before it is walked, so that workers walk while the others are copied."""
    ps = walker.process_state
    tids = copier.planned() if copier is not None else ps.get_thread_ids()
    if args.thread is not None:
        if args.thread not in tids:
            raise SwkError(f"swk: {what} has no thread {args.thread} (it has {', '.join(map(str, tids))})")
        tids = [args.thread]
    workers = _workers(len(tids), opts, parallel)
    if opts.unique and not opts.merge:
        groups = tree if tree is not None else UniqueGroups()
        pid = ps.get_process_id()
        process = None if tree is None else str(pid) if pid and str(pid) not in groups.processes else f"#{nth + 1}"
        groups.processes.append(process)
        for entries in _in_shares(tids, workers, lambda share: groups.entries(walker, share, opts, process=process,
                                                                              eager=workers > 1), copier):
            groups.add_entries(entries)
        if tree is None:
            groups.print(opts, _sink(out))
        return None
    if opts.merge:
        merged = tree if tree is not None else MergeTree(opts.merge)
        proc = merged.add_process(ps.get_process_id(), ps.get_executable_path())
        for entries in _in_shares(tids, workers, lambda share: merge_entries(walker, share, opts, merged.by),
                                  copier):
            add_merge_entries(merged, proc, entries)
        if tree is None:
            print_merge(merged, opts, _sink(out))
        return None
    if nth is not None:
        pid = ps.get_process_id()
        if not opts.json:
            out.write(("\n" if nth else "") + f"Process {pid or '?'} ({ps.get_executable_path() or '?'}):\n")
        info = _with_pid(pid, info)
    # every thread of a process is headed, as GDB's thread apply all does
    if workers == 1:
        if copier is not None:
            tids = copier.copy(tids)
        return run_bt(walker, tids, opts, _sink(out), headers=True, thread_info=info, write=out.write)
    firsts = {t: i for i, t in enumerate(tids)}

    def text(share):
        # a thread's place among those printed: 0 (no blank line before it) for the first
        # thread, or for the second where the first went before its copy
        first = firsts[share[0]] if share else 0
        if first == 1 and copier is not None and tids[0] not in ps.get_thread_ids():
            first = 0
        buf = io.StringIO()
        run_bt(walker, share, opts, _sink(buf), headers=True, thread_info=info, write=buf.write, first=first)
        return buf.getvalue()
    for part in _in_shares(tids, workers, text, copier):
        out.write(part)
    return None


#: Threads a process has before their walks are shared among forked workers: fewer are done
#: before the workers would have started.
PARALLEL_MIN = 48


def _workers(n, opts, parallel):
    """How many processes walk ``n`` threads: one, unless their memory is read-only (a core,
    the copies of a process let go) and there are enough of them and processors to share."""
    if not parallel or n < 2:
        return 1
    forced = os.environ.get("SWK_WORKERS", "")
    if forced.isdigit() and int(forced) > 0:        # SWK_WORKERS=N: that many (1: none)
        return min(int(forced), n)
    if n < PARALLEL_MIN:
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 8, n // (PARALLEL_MIN // 2)))


#: With a live process's threads copied share by share, this process's own share against
#: a worker's: it copies the workers' shares, and its own, before walking it.
OWN_SHARE = 0.85


def _in_shares(tids, workers, work, copier=None):
    """[work(share)] over ``tids`` in order: the first thread alone, here (what every walk
    needs is read once and inherited), then the others in ``workers`` contiguous shares, the
    first of them here and each other by a forked worker whose result comes back pickled
    through a pipe.  One worker: work(tids) here.  With a ``copier`` each share is copied
    just before it is walked or handed to its worker (the threads that went meanwhile left
    out), so the workers walk while the rest is copied."""
    ready = copier.copy if copier is not None else (lambda share: share)
    if workers <= 1:
        return [work(ready(tids))]
    results = [work(ready(tids[:1]))]
    rest = tids[1:]
    own = OWN_SHARE if copier is not None else 1.0
    total = own + workers - 1
    cuts = [0] + [round(len(rest) * (own + k) / total) for k in range(workers)]
    children = []
    try:
        for k in range(1, workers):
            children.append(_fork_share(work, ready(rest[cuts[k]:cuts[k + 1]])))
        results.append(work(ready(rest[cuts[0]:cuts[1]])))
        while children:
            pid, fd = children[0]
            with os.fdopen(fd, "rb") as f:
                data = f.read()
            os.waitpid(pid, 0)
            children.pop(0)
            if data[:1] != b"0":
                raise SwkError(data[1:].decode("utf-8", "replace") or
                               "swk: a worker walking threads ended without a word")
            results.append(pickle.loads(data[1:]))
    finally:
        for pid, fd in children:        # on an error or Ctrl-C: none is left behind
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:
                pass
            try:
                os.close(fd)
            except OSError:
                pass
    return results


def _fork_share(work, share):
    """(pid, read end): a forked worker sending work(share) into a pipe, pickled after a "0",
    or "1" and one line saying what went wrong."""
    r, w = os.pipe()
    pid = os.fork()
    if pid:
        os.close(w)
        return pid, r
    os.close(r)
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)      # the parent says what happened
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        data = b"0" + pickle.dumps(work(share), pickle.HIGHEST_PROTOCOL)
    except SwkError as exc:
        data = b"1" + str(exc).encode("utf-8", "replace")
    except BaseException as exc:   # noqa: B036 - one line back to the parent, never a traceback
        data = b"1" + f"swk: internal error: {exc.__class__.__name__}: {exc}".encode("utf-8", "replace")
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(w, view):]
    except OSError:
        code = 1
    os._exit(code)


def _with_pid(pid, info):
    """A thread's JSON keys (and -v words) with its process's id first."""
    def with_pid(tid):
        return {"pid": pid, **((info(tid) if info is not None else None) or {})}
    return with_pid


def cmd_bt_core(args, opts, core, out, tree, nth):
    ps = CoreProcessState(core, exe_path=args.exe, sysroot=args.sysroot)
    if args.exe is not None and is_elf(args.exe) and not elf_machine_is(args.exe, ps.arch):
        raise SwkError(f"swk: --exe {args.exe}: not an {ps.arch.name} program (the core is of an "
                       f"{ps.arch.name} process)")
    _walk_process(args, opts, _walker(ps, args), "the core", out, tree, nth)


def _walker(ps, args):
    """The walker of one process: its JIT code named from --perf-map and --jitdump when given."""
    given = args.perf_map or args.jitdump
    lookup = ElfSymbolLookup(jit=JitSymbols(perf_map=args.perf_map, jitdump=args.jitdump)) if given else None
    return Walker(ps, symbol_lookup=lookup, frame_cap=args.frame_cap)


def _options(args):
    opts = BtOptions()
    opts.json, opts.verbose, opts.full, opts.limit = args.json, args.verbose, args.full, args.limit
    opts.unique = bool(getattr(args, "unique", False))
    opts.py = PY_ONLY if getattr(args, "py_only", False) else bool(getattr(args, "py", False))
    if getattr(args, "regs", False):
        opts.regs, opts.verbose = True, REGS
    opts.merge, opts.svg = getattr(args, "merge", None), getattr(args, "svg", None)
    opts.all = opts.unique or bool(opts.merge)
    for name in SETTINGS:
        value = getattr(args, name.replace("-", "_"))
        if value is not None:
            opts.set(name, value)
    return opts


def cmd_bt_pid(args, opts, pid, out, tree, nth):
    """Attach; each thread stopped, copied and let go in turn (or all held while they are
    walked: --stopped / --full); the process is left as it was."""
    # the ptrace back-end (and the profiler) only for a live process: a core's walk, a fresh
    # process each time, does not pay for importing them
    from .backends.ptrace import DEFAULT_STACK_BYTES, PtraceProcessState, Tracer
    from .linux.maps import read_proc_maps
    stopped = args.stopped or args.full
    stack_bytes = DEFAULT_STACK_BYTES if args.stack_bytes is None else args.stack_bytes
    with Tracer(pid) as tracer:
        copier = None
        # the mappings read once, after the threads are attached (their stacks all mapped)
        if stopped:                          # every thread held until every walk is done
            tracer.stop()
            regions = read_proc_maps(pid)
            tracer.capture(0, regions)
        elif args.thread is None:            # each paused for its own copy, made when its share is walked
            copier = _Copier(tracer, stack_bytes, None)
            regions = copier.regions = read_proc_maps(pid)
        else:                                # each thread paused for its own copy only
            regions = read_proc_maps(pid)
            tracer.copy_each(stack_bytes, regions)
        ps = PtraceProcessState(tracer, live_stacks=stopped, regions=regions)

        def info(tid):
            snap = tracer.threads.get(tid)
            if stopped or snap is None or snap.pause is None:
                return None
            return {"pause_us": round(snap.pause * 1e6)}
        _walk_process(args, opts, _walker(ps, args), f"process {pid}", out, tree, nth, info,
                      parallel=not stopped, copier=copier)


class _Copier:
    """A live process's threads copied a share at a time (Tracer.copy_each on those): the
    threads it has now, in the order GDB numbers them, planned first."""

    def __init__(self, tracer, stack_bytes, regions):
        tracer.attach()
        tracer.planned = list(tracer.seized)
        self.tracer, self.stack_bytes, self.regions = tracer, stack_bytes, regions

    def planned(self):
        return list(self.tracer.planned)

    def copy(self, tids):
        """The threads of ``tids`` copied and let go; those of them that had not gone."""
        self.tracer.copy_each(self.stack_bytes, self.regions, tids=tids)
        threads = self.tracer.threads
        return [t for t in tids if t in threads and threads[t].regs]


def _py_only(argv):
    """``--py only`` and ``--py=only`` as the one option argparse reads (a bare --py takes no
    value: ``--py 5`` is Python frames and a frame count)."""
    out = []
    for arg in argv:
        if arg == PY_ONLY and out[-1:] == ["--py"]:
            out[-1] = "--py-only"
        else:
            out.append("--py-only" if arg == "--py=only" else arg)
    return out


def main(argv=None, out=None):
    out = out or sys.stdout
    # one command, then the process ends: Python's cyclic collector would only go through
    # every object of the walks again (a third of a second after 1,000 threads); reference
    # counting frees what matters, and a deep walk collects its segments' cycles itself
    collecting = gc.isenabled()
    gc.disable()
    try:
        args = build_parser().parse_args(_py_only(sys.argv[1:] if argv is None else list(argv)))
        if args.command == "bt":
            return cmd_bt(args, out)
        if args.command == "profile":
            from .backends.profiler import cmd_profile
            return cmd_profile(args, out)
        raise SwkError("swk: usage: swk bt (--core FILE | --pid PID) [--json] [--all] [-v] [N | -N], "
                       "or swk profile --pid PID [--duration S] [--hz N]")
    except SwkError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("swk: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a clear line, never a traceback
        print(f"swk: internal error: {exc.__class__.__name__}: {exc}", file=sys.stderr)
        return 3
    finally:
        PREFETCH[0] = False
        if collecting:          # as it was, for a caller in the same process
            gc.enable()
