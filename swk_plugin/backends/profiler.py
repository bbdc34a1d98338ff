"""A sampling profiler on the ptrace back-end: `swk profile --pid PID`.

Each sample stops every thread (PTRACE_INTERRUPT), copies registers and stacks, and lets
them go at once; the stacks are walked while the process runs (the pause is the copy, as
in `swk bt --pid`).  A thread's stack is copied as deep as its last walk needed, twice over
(at least 16 KiB, at most --stack-bytes), not a fixed megabyte of each stack every time.
Stacks are counted per distinct chain of function names (a function without a symbol named
by its library and the start the CFI gives it, liblzma.so.5+0x15b40), outermost first; the
output is the functions most often on top (self) and on the stack (total), folded stacks for
flamegraph.pl / speedscope / inferno (`--folded`), a flame graph drawn by swk (`--svg`), and
what sampling cost the target: the share of the time its threads were stopped.
With --py a Python process's stacks carry its Python functions too, after the evaluator
frame that runs each (``Handler.parse (server.py)``); the interpreter's frames, which live on
its heap, not on the copied stacks, are read before the threads go on.
"""
import collections
import os
import statistics
import sys
import time

from ..errors import SwkError
from ..frame import FrameKind
from ..interp.cpython import is_eval_function, python_stack
from ..interp.merge import NATIVE, interleave
from ..linux.maps import read_proc_maps
from ..unwind.cfi import cfi_function_start
from ..walker import Walker
from ..flamegraph import write_svg
from .ptrace import PtraceProcessState, Tracer

#: The library list is read again this often (seconds): a dlopen shows within it.
RESCAN_EVERY = 1.0
#: A thread's first copy, and the least one: its later ones are twice what its last walk used.
MIN_COPY = 16 << 10


class Profile:
    """What sampling found: stack -> count (stacks as tuples of names, outermost first,
    headed by the thread's name), and the pauses it cost."""

    def __init__(self, pid):
        self.pid = pid
        self.stacks = collections.Counter()
        self.samples = 0              # sampling rounds
        self.thread_samples = 0       # walks (threads x rounds)
        self.pauses = []              # seconds each round kept the process stopped
        self.thread_pauses = []       # seconds each thread was stopped, per round
        self.copied = []              # bytes of stack copied, per thread and round
        self.wall = 0.0
        self.errors = collections.Counter()

    def add(self, stack):
        self.stacks[stack] += 1
        self.thread_samples += 1

    def self_and_total(self):
        """{function: samples on top}, {function: samples with it anywhere on the stack}."""
        top, total = collections.Counter(), collections.Counter()
        for stack, n in self.stacks.items():
            if len(stack) > 1:
                top[stack[-1]] += n
            for name in set(stack[1:]):
                total[name] += n
        return top, total

    def folded(self):
        """Brendan Gregg's folded format: "frame;frame;frame count", outermost first."""
        return [";".join(s.replace(";", ":") for s in stack) + f" {n}"
                for stack, n in sorted(self.stacks.items(), key=lambda kv: (-kv[1], kv[0]))]

    def overhead(self):
        """The share of the sampled time the target's threads were stopped."""
        if not self.wall:
            return 0.0
        return sum(self.pauses) / self.wall


def frame_label(frame):
    """A frame as a profile names it: its function, else its library and the start of the
    function the CFI bounds there (one row per function, not per pc), else library+offset,
    else the address."""
    if frame.kind == FrameKind.SIGNAL:
        return "<signal handler called>"
    name = frame.name
    if name:
        return name
    lib = frame.library
    if lib is not None:
        off = frame.lookup_pc - lib.base
        start = cfi_function_start(lib.module, off) if lib.module is not None else None
        return f"{os.path.basename(lib.name)}+0x{off if start is None else start:x}"
    return f"0x{frame.ra:x}"


def python_label(frame):
    """A Python frame as a profile names it: its function and file, not its line (one row per
    function, as native frames are)."""
    return f"{frame.name or '??'} ({os.path.basename(frame.filename or '??')})"


def stack_labels(walk, ps, py=False):
    """The names of ``walk``'s frames, outermost first; ``py``: with the thread's Python
    frames after the evaluator frame running each (interp.merge)."""
    stack = python_stack(ps, walk.thread) if py and walk else None
    if stack is None:
        return [frame_label(f) for f in reversed(walk)]
    items = interleave([is_eval_function(f.name) for f in walk], stack.groups, walk.complete)
    return [frame_label(walk[item.index]) if item.kind == NATIVE else python_label(item.frame)
            for item in reversed(items)]


def _used(walk):
    """How many bytes of its stack above sp a walk read: to its outermost frame's sp, and
    a little past it for that frame's own saved registers."""
    if not walk:
        return 0
    sps = [f.sp for f in walk if isinstance(f.sp, int)]
    return max(sps) - walk[0].sp + 512 if sps and isinstance(walk[0].sp, int) else 0


def thread_name(pid, tid):
    try:
        with open(f"/proc/{pid}/task/{tid}/comm") as f:
            return f"{f.read().strip()}-{tid}"
    except OSError:
        return f"thread-{tid}"


def sample(pid, duration, hz, stack_bytes=1 << 20, frame_cap=None, progress=None, adaptive=True, py=False):
    """Sample process ``pid`` ``hz`` times a second for ``duration`` seconds: a Profile.
    ``progress(done_fraction, profile)`` is called after each sample.  ``adaptive``: each
    thread's stack copied as deep as its last walk needed (up to ``stack_bytes``), else
    ``stack_bytes`` of it each time.  ``py``: Python frames too (read while the threads are
    stopped)."""
    if hz <= 0 or duration <= 0:
        raise SwkError("swk: --hz and --duration must be positive")
    prof = Profile(pid)
    names = {}
    copies = {}                 # tid -> bytes of its stack to copy next time

    def copy_size(tid):
        return min(stack_bytes, copies.get(tid, MIN_COPY))
    with Tracer(pid) as tracer:
        ps = PtraceProcessState(tracer)
        walker = Walker(ps, frame_cap=frame_cap) if frame_cap else Walker(ps)
        regions = read_proc_maps(pid)
        start = last_scan = time.perf_counter()
        period = 1.0 / hz
        k = 0
        while True:
            now = time.perf_counter()
            if now - start >= duration:
                break
            if now - last_scan >= RESCAN_EVERY:
                regions = read_proc_maps(pid)
                ps.library_state.mark_dirty()
                ps.reset_regions(regions)
                last_scan = now
            t0 = time.perf_counter()
            tracer.stop()
            tracer.capture(copy_size if adaptive else stack_bytes, regions, notes=False)
            ps.invalidate()
            if py:                      # the interpreter's frames as they are now, kept for the walks
                for tid in ps.get_thread_ids():
                    python_stack(ps, tid)
            tracer.resume()
            prof.pauses.append(time.perf_counter() - t0)
            prof.samples += 1
            for tid in ps.get_thread_ids():
                snap = tracer.threads[tid]
                if snap.pause is not None:
                    prof.thread_pauses.append(snap.pause)
                short = ps.live_reads_in_stacks
                try:
                    walk = walker.walk_stack(tid)
                except SwkError as exc:
                    prof.errors[str(exc)] += 1
                    continue
                if adaptive:
                    need = max(MIN_COPY, 2 * _used(walk))
                    if ps.live_reads_in_stacks > short:     # the copy was short: much more next time
                        need = max(need, 4 * copy_size(tid))
                    copies[tid] = need
                    prof.copied.append(snap.stack and len(snap.stack))
                label = names.get(tid) or names.setdefault(tid, thread_name(pid, tid))
                prof.add((label, *stack_labels(walk, ps, py)))
            if progress is not None:
                progress(min(1.0, (time.perf_counter() - start) / duration), prof)
            k += 1
            delay = start + k * period - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            else:                             # behind: the next tick from now
                k = int((time.perf_counter() - start) / period) + 1
        prof.wall = time.perf_counter() - start
    return prof


def _bar(stream):
    if not stream.isatty():
        return None

    def show(frac, prof):
        n = int(frac * 30)
        stream.write(f"\rswk: sampling [{'#' * n}{'.' * (30 - n)}] {frac * 100:3.0f}%  {prof.samples} samples")
        stream.flush()
    return show


def report(prof, top_n=20):
    """The lines `swk profile` prints."""
    top, total = prof.self_and_total()
    n = max(prof.thread_samples, 1)
    lines = [f"swk profile of process {prof.pid}: {prof.samples} samples of every thread in {prof.wall:.2f} s "
             f"({prof.thread_samples} stacks)"]
    if prof.pauses:
        lines.append(f"target paused {prof.overhead() * 100:.2f}% of the time: "
                     f"median {statistics.median(prof.pauses) * 1e6:.0f} us per sample "
                     f"(max {max(prof.pauses) * 1e6:.0f} us), "
                     f"median {statistics.median(prof.thread_pauses or [0]) * 1e6:.0f} us per thread"
                     + (f", {statistics.median(prof.copied) / 1024:.0f} KiB of stack copied per thread"
                        if prof.copied else ""))
    lines.append("")
    lines.append(f"{'self':>7} {'self%':>6} {'total':>7} {'total%':>6}  function")
    for name, count in top.most_common(top_n):
        lines.append(f"{count:7d} {count * 100 / n:5.1f}% {total[name]:7d} {total[name] * 100 / n:5.1f}%  {name}")
    for err, count in prof.errors.most_common(3):
        lines.append(f"({count} walk(s) failed: {err})")
    return lines


def cmd_profile(args, out):
    adaptive = args.stack_bytes is None
    prof = sample(args.pid, args.duration, args.hz, args.stack_bytes or 1 << 20, args.frame_cap, _bar(sys.stderr),
                  adaptive=adaptive, py=getattr(args, "py", False))
    if sys.stderr.isatty():
        sys.stderr.write("\n")
    if args.folded:
        with open(args.folded, "w") as f:
            f.write("\n".join(prof.folded()) + "\n")
    if args.svg:
        write_svg(prof.stacks, args.svg, title=f"swk profile of process {args.pid}")
    out.write("\n".join(report(prof, args.top)) + "\n")
    return 0
