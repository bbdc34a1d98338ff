"""Command line: walk a core file, or a live process, without any debugger.

    swk bt --core FILE [--exe PROGRAM] [--json] [--all] [--thread TID]
           [--sysroot DIR] [--frame-cap N] [-v] [--full] [N | -N]
    swk bt --pid PID [--json] [--all] [--thread TID] [--stopped] [--stack-bytes N]
           [--frame-cap N] [-v] [--full] [N | -N]
    swk profile --pid PID [--duration S] [--hz N] [--folded FILE] [--svg FILE] [--top N]
"""
import argparse
import os
import sys

from .backends.core import CoreProcessState
from .errors import SwkError
from .linux.sysroot import elf_machine_is, is_elf
from .frontend import run_bt
from .options import SETTINGS, BtOptions
from .walker import DEFAULT_FRAME_CAP, Walker


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, no usage dump
        raise SwkError(f"swk: {message}")


def build_parser():
    p = _Parser(prog="swk", description="swk: a stack walker for cores, GDB and LLDB")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    bt = sub.add_parser("bt", help="print the call stacks of a core file or a live process")
    where = bt.add_mutually_exclusive_group(required=True)
    where.add_argument("--core", help="the core file")
    where.add_argument("--pid", type=_pid, help="a live process (attached with ptrace, then left as it was)")
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
    bt.add_argument("--thread", type=lambda s: int(s, 0), help="only the thread with this OS thread id")
    bt.add_argument("--sysroot", help="prefix for the paths of the core's mapped files")
    bt.add_argument("--frame-cap", type=int, default=DEFAULT_FRAME_CAP, help="most frames per walk")
    bt.add_argument("-v", "--verbose", action="store_true", help="show how each frame was found")
    bt.add_argument("--full", action="store_true", help="also local variables, as GDB's bt full")
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
    pr.add_argument("--stack-bytes", type=_size, default=1 << 20,
                    help="bytes of each thread's stack copied per sample (default 1M)")
    pr.add_argument("--frame-cap", type=int, default=DEFAULT_FRAME_CAP, help="most frames per walk")
    return p


def _pid(text):
    try:
        pid = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a process id: {text!r}") from None
    if pid <= 0:
        raise argparse.ArgumentTypeError(f"not a process id: {text!r}")
    return pid


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
    if args.pid is not None:
        if args.exe is not None or args.sysroot is not None:
            raise SwkError("swk: --exe and --sysroot are for cores (a live process says what it runs)")
        return cmd_bt_pid(args, out)
    if args.stopped:
        raise SwkError("swk: --stopped is for --pid")
    if args.exe is not None and not os.path.isfile(args.exe):
        raise SwkError(f"swk: --exe {args.exe}: no such file")
    if args.sysroot is not None and not os.path.isdir(args.sysroot):
        raise SwkError(f"swk: --sysroot {args.sysroot}: no such directory")
    ps = CoreProcessState(args.core, exe_path=args.exe, sysroot=args.sysroot)
    if args.exe is not None and is_elf(args.exe) and not elf_machine_is(args.exe, ps.arch):
        raise SwkError(f"swk: --exe {args.exe}: not an {ps.arch.name} program (the core is of an "
                       f"{ps.arch.name} process)")
    walker = Walker(ps, frame_cap=args.frame_cap)
    tids = ps.get_thread_ids()
    if args.thread is not None:
        if args.thread not in tids:
            raise SwkError(f"swk: the core has no thread {args.thread} (it has {', '.join(map(str, tids))})")
        tids = [args.thread]

    def sink(lines):
        if lines:
            out.write("\n".join(lines) + "\n")
    # a core's threads are all shown, each headed
    run_bt(walker, tids, _options(args), sink, headers=True, write=out.write)
    return 0


def _options(args):
    opts = BtOptions()
    opts.json, opts.verbose, opts.full, opts.limit = args.json, args.verbose, args.full, args.limit
    opts.unique = opts.all = bool(getattr(args, "unique", False))
    for name in SETTINGS:
        value = getattr(args, name.replace("-", "_"))
        if value is not None:
            opts.set(name, value)
    return opts


def cmd_bt_pid(args, out):
    """Attach, stop, copy (or walk, --stopped / --full), resume; the process is left as it was."""
    # the ptrace back-end (and the profiler) only for a live process: a core's walk, a fresh
    # process each time, does not pay for importing them
    from .backends.ptrace import DEFAULT_STACK_BYTES, PtraceProcessState, Tracer
    from .linux.maps import read_proc_maps
    stopped = args.stopped or args.full
    stack_bytes = DEFAULT_STACK_BYTES if args.stack_bytes is None else args.stack_bytes
    with Tracer(args.pid) as tracer:
        tracer.stop()
        tracer.capture(0 if stopped else stack_bytes, read_proc_maps(args.pid))
        if not stopped:
            tracer.detach()                  # the pause ends here: the walks run on the copies
        ps = PtraceProcessState(tracer, live_stacks=stopped)
        walker = Walker(ps, frame_cap=args.frame_cap)
        tids = ps.get_thread_ids()
        if args.thread is not None:
            if args.thread not in tids:
                raise SwkError(f"swk: process {args.pid} has no thread {args.thread} "
                               f"(it has {', '.join(map(str, tids))})")
            tids = [args.thread]

        def info(tid):
            snap = tracer.threads.get(tid)
            if stopped or snap is None or snap.pause is None:
                return None
            return {"pause_us": round(snap.pause * 1e6)}

        def sink(lines):
            if lines:
                out.write("\n".join(lines) + "\n")
        run_bt(walker, tids, _options(args), sink, headers=True, thread_info=info, write=out.write)
    return 0


def main(argv=None, out=None):
    out = out or sys.stdout
    try:
        args = build_parser().parse_args(argv)
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
