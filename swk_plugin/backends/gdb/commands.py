"""GDB commands: swk-bt and the `set/show swk ...` settings.  Kept thin: the bt loop is
swk_plugin.frontend's, the options swk_plugin.options'."""
import contextlib
import os
import re
import traceback

import gdb

from ...dwarf.lines import PREFETCH
from ...errors import SwkError
from ...frontend import NativeBacktrace, NativeFrame, run_bt
from ...options import SETTINGS, SOURCE_INFO, BtOptions, parse_bt_args
from ...sourcelines import SourceLister
from ...walker import DEFAULT_FRAME_CAP
from . import session as sess
from . import unwinder
from .procstate import selected_thread


class SwkPrefix(gdb.Command):
    """swk settings."""

    def __init__(self, name):
        super().__init__(name, gdb.COMMAND_DATA, prefix=True)


class FrameCapParameter(gdb.Parameter):
    """The most frames one swk walk may produce (default 1000000)."""
    set_doc = "Set the most frames one swk walk may produce."
    show_doc = "Show the most frames one swk walk may produce."

    def __init__(self):
        super().__init__("swk frame-cap", gdb.COMMAND_STACK, gdb.PARAM_ZUINTEGER)
        self.value = DEFAULT_FRAME_CAP

    def get_set_string(self):
        if self.value <= 0:
            self.value = DEFAULT_FRAME_CAP
            return f"swk frame-cap must be positive; kept {DEFAULT_FRAME_CAP}"
        sess.SESSION.frame_cap = self.value
        return ""

    def get_show_string(self, svalue):
        return f"swk walks stop after {svalue} frames."


class CollapseParameter(gdb.Parameter):
    """A run of more frames than this of one function at one return address (deep recursion)
    is printed by swk-bt as its first frame and one line "[... N more frames of f () at
    file:line ...]"; unlimited: every frame, as GDB's bt prints them."""
    set_doc = "Set how many frames of one recursion swk-bt prints before it collapses the rest."
    show_doc = "Show how many frames of one recursion swk-bt prints before it collapses the rest."

    def __init__(self):
        super().__init__("swk collapse", gdb.COMMAND_STACK, gdb.PARAM_UINTEGER)
        self.value = BtOptions().collapse

    def get_show_string(self, svalue):
        return f"swk-bt collapses runs of more than {svalue} frames of one recursion."


class DebugParameter(gdb.Parameter):
    """Show swk's internal errors in full."""
    set_doc = "Set whether swk shows details of its internal errors."
    show_doc = "Show whether swk shows details of its internal errors."

    def __init__(self):
        super().__init__("swk debug", gdb.COMMAND_MAINTENANCE, gdb.PARAM_BOOLEAN)
        self.value = False

    def get_set_string(self):
        sess.SESSION.debug = bool(self.value)
        return ""

    def get_show_string(self, svalue):
        return f"swk debug output is {svalue}."


@contextlib.contextmanager
def on_thread(thread):
    """GDB's selection on ``thread`` for the block; the thread and frame selected before are
    selected again after it."""
    current = selected_thread()
    try:
        sel = gdb.selected_frame()
    except gdb.error:
        sel = None
    try:
        if current != thread:
            thread.switch()
        yield
    finally:
        if current is not None and current != thread:
            current.switch()
        if sel is not None:
            try:
                sel.select()
            except (gdb.error, RuntimeError):
                pass


def gdb_frames(thread):
    """GDB's own frames for a thread: [(level, pc, name, type)]; restores the selection."""
    out = []
    with on_thread(thread):
        try:
            f = gdb.newest_frame()
            level = 0
            while f is not None and level < 100_000:
                out.append((level, f.pc(), f.name(), f.type()))
                f = f.older()
                level += 1
        except gdb.error:
            pass
    return out


def top_inline_frames(thread):
    """How many inline frames GDB shows at the thread's newest frame (it hides those a
    breakpoint stopped at the first instruction of), or None if GDB cannot say."""
    with on_thread(thread):
        try:
            f, n = gdb.newest_frame(), 0
            while f is not None and f.type() == gdb.INLINE_FRAME and n < 64:
                n += 1
                f = f.older()
            return n
        except (gdb.error, RuntimeError):
            return None


def native_backtrace(thread):
    """GDB's own bt of a thread for -compare (its inline and tail-call frames counted apart)."""
    everything = gdb_frames(thread)
    virtual = (gdb.INLINE_FRAME, gdb.TAILCALL_FRAME)
    frames = [NativeFrame(pc, name, ftype == gdb.SIGTRAMP_FRAME)
              for _lvl, pc, name, ftype in everything if ftype not in virtual]
    return NativeBacktrace("GDB", frames, len(everything) - len(frames))


class UnwinderParameter(gdb.Parameter):
    """Whether swk is GDB's frame unwinder where GDB alone is wrong (also:
disable/enable unwinder global swk)."""
    set_doc = "Set whether swk unwinds frames for GDB's own bt, up, finish and info locals."
    show_doc = "Show whether swk unwinds frames for GDB's own commands."

    def __init__(self):
        super().__init__("swk unwinder", gdb.COMMAND_STACK, gdb.PARAM_BOOLEAN)
        self.value = True

    def get_set_string(self):
        unwinder.set_enabled(self.value)
        return ""

    def get_show_string(self, svalue):
        u = unwinder.UNWINDER
        on = u is not None and u.enabled
        return (f"swk's unwinder is {'on' if on else 'off'}"
                + (f" ({u.unwound} frames unwound by swk so far)." if u is not None else "."))


class SwkBt(gdb.Command):
    """Print a backtrace found by swk's own stack walker.

Usage: swk-bt [-json] [-all] [-unique] [-merge[=line]] [-svg=FILE] [-compare] [-v] [-full]
              [-frame-arguments=MODE] [-entry-values=MODE] [N | -N]

  N        show the innermost N frames; -N the outermost N.
  -all     walk every thread (also: thread apply all swk-bt).
  -unique  every thread, those with the same stack printed once, as a group.
  -merge   every thread's stack merged into one call tree, outermost call first:
           each node a function (-merge=line: a function at a line) with the count
           and the numbers of the threads through it (LLNL STAT's call-prefix tree);
           -svg=FILE also draws it; -v lists every thread.
  -json    one JSON line per thread: {"thread", "tid", "frames", "stop_reason"};
           frames carry level, pc, sp, fp, function, offset, library, file, line,
           stepper, trust and kind ("normal" or "signal").
  -compare print swk's frames beside GDB's own bt and mark every difference.
  -v       also show how each frame was found (stepper and trust), sp and fp.
  -full    also each frame's local variables, as `bt full` prints them; with -json
           every frame gains "args" and "locals": [{"name", "type", "value"}].
  -frame-arguments=all|scalars|none|presence, -entry-values=no|only|preferred|
           if-needed|both|compact|default: as GDB's `set print frame-arguments` and
           `set print entry-values`, whose current values are the defaults.
The lines follow GDB's settings as bt does: print entry-values, frame-arguments,
frame-info, address, symbol, elements, repeats, output-radix and backtrace limit.
Inlined calls are shown as frames of kind "inline" above their physical frame, as GDB does.

Settings: set swk frame-cap N (default 1000000), set swk collapse N|unlimited (default 10000),
set swk debug on|off."""

    def __init__(self):
        super().__init__("swk-bt", gdb.COMMAND_STACK)

    def invoke(self, arg, from_tty):
        try:
            self._invoke(arg)
        except SwkError as exc:
            msg = str(exc)
            raise gdb.GdbError(msg if msg.startswith("swk") else f"swk-bt: {msg}") from None
        except gdb.GdbError:
            raise
        except KeyboardInterrupt:
            raise gdb.GdbError("swk-bt: interrupted") from None
        except BaseException as exc:  # never a traceback inside GDB, nor its end (SystemExit)
            if sess.SESSION.debug:
                traceback.print_exc()
            raise gdb.GdbError(f"swk-bt: internal error: {exc.__class__.__name__}: {exc} "
                               "(set swk debug on for details)") from None

    def _invoke(self, arg):
        opts = parse_bt_args(gdb.string_to_argv(arg), allow_full=True, defaults=_gdb_print_settings())
        session = sess.SESSION
        walker = session.walker(all_threads=opts.all)
        ps = walker.process_state
        tids = ps.get_thread_ids() if opts.all else [ps.get_default_thread()]
        if opts.frame_info in SOURCE_INFO or opts.filename_display == "absolute":
            opts.sources = _gdb_sources()
        PREFETCH[0] = True           # its walk's modules: their DWARF inflated meanwhile
        try:
            run_bt(walker, tids, opts, _write, past_main=bool(gdb.parameter("backtrace past-main")),
                   native=lambda tid: native_backtrace(ps.gdb_thread(tid)),
                   top_inlines=lambda tid: top_inline_frames(ps.gdb_thread(tid)),
                   debug_sink=_write_stderr if session.debug else None, write=gdb.write)
        finally:
            PREFETCH[0] = False


def _gdb_sources():
    """A SourceLister with GDB's source path and working directory, primed with GDB's current
    source file (`info source`: the one it last printed a line of, at a stop, `frame N` or a bt
    that printed source), whose error GDB will not repeat."""
    try:
        dirs = gdb.parameter("directories")
    except (gdb.error, RuntimeError):
        dirs = None
    sources = SourceLister(dirs or "$cdir:$cwd", os.getcwd())
    try:
        text = gdb.execute("info source", to_string=True)
    except gdb.error:
        return sources
    name = re.search(r"^Current source file is (.*)$", text, re.M)
    cdir = re.search(r"^Compilation directory is (.*)$", text, re.M)
    if name:
        sources.primer = (name.group(1), cdir.group(1) if cdir else None)
    return sources


def _gdb_print_settings():
    """GDB's own settings that change bt's lines (options.SETTINGS), read at each command
    as swk-bt's defaults (its -NAME=VALUE options override them)."""
    opts = BtOptions()
    for name, (gdb_name, _target, _allowed) in SETTINGS.items():
        try:
            value = gdb.parameter(gdb_name)
        except (gdb.error, RuntimeError):
            continue
        if name == "output-radix" and value not in (8, 10, 16):
            continue
        text = ("on" if value else "off") if isinstance(value, bool) else \
            "unlimited" if value is None else str(value)
        opts.set(name, text)
    return {k: getattr(opts, k) for k in ("frame_arguments", "entry_values", "frame_info", "backtrace_limit",
                                          "values", "collapse", "filename_display")}


def _write(lines):
    if lines:
        gdb.write("\n".join(lines) + "\n")


def _write_stderr(lines):
    gdb.write("\n".join(lines) + "\n", gdb.STDERR)


def register():
    SwkPrefix("set swk")
    SwkPrefix("show swk")
    FrameCapParameter()
    CollapseParameter()
    DebugParameter()
    UnwinderParameter()
    SwkBt()
