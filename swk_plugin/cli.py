"""Command line: walk a core file without any debugger.

    swk bt --core FILE [--exe PROGRAM] [--json] [--all] [--thread TID]
           [--sysroot DIR] [--frame-cap N] [-v] [--full] [N | -N]
"""
import argparse
import os
import sys

from .backends.core import CoreProcessState
from .errors import SwkError
from .linux.sysroot import elf_machine_is, is_elf
from .frontend import run_bt
from .options import BtOptions
from .walker import DEFAULT_FRAME_CAP, Walker


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, no usage dump
        raise SwkError(f"swk: {message}")


def build_parser():
    p = _Parser(prog="swk", description="swk: a stack walker for cores, GDB and LLDB")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    bt = sub.add_parser("bt", help="print the call stacks of a core file")
    bt.add_argument("--core", required=True, help="the core file")
    bt.add_argument("--exe", help="the program that dumped it (default: the core's own record)")
    bt.add_argument("--json", action="store_true", help="one JSON line per thread")
    bt.add_argument("--all", action="store_true", help="every thread (the default for cores)")
    bt.add_argument("--thread", type=lambda s: int(s, 0), help="only the thread with this OS thread id")
    bt.add_argument("--sysroot", help="prefix for the paths of the core's mapped files")
    bt.add_argument("--frame-cap", type=int, default=DEFAULT_FRAME_CAP, help="most frames per walk")
    bt.add_argument("-v", "--verbose", action="store_true", help="show how each frame was found")
    bt.add_argument("--full", action="store_true", help="also local variables, as GDB's bt full")
    bt.add_argument("limit", nargs="?", type=int, help="innermost N frames, or outermost -N")
    return p


def cmd_bt(args, out):
    if args.frame_cap <= 0:
        raise SwkError("swk: --frame-cap must be positive")
    if args.limit == 0:
        raise SwkError("swk: a frame count must not be zero")
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
    opts = BtOptions()
    opts.json, opts.verbose, opts.full, opts.limit = args.json, args.verbose, args.full, args.limit

    def sink(lines):
        if lines:
            out.write("\n".join(lines) + "\n")
    run_bt(walker, tids, opts, sink, headers=True)   # a core's threads are all shown, each headed
    return 0


def main(argv=None, out=None):
    out = out or sys.stdout
    try:
        args = build_parser().parse_args(argv)
        if args.command != "bt":
            raise SwkError("swk: usage: swk bt --core FILE [--exe PROGRAM] [--json] [--all] [-v] [N | -N]")
        return cmd_bt(args, out)
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
