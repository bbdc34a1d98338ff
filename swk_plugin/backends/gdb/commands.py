"""GDB commands: swk-bt and the `set/show swk ...` settings.  Kept thin: the
walking is the core's, the rendering is swk_plugin.format's."""
import json
import traceback

import gdb

from ...errors import SwkError
from ...format import frame_info, frame_text, render, same_name, visible_frames
from ...options import parse_bt_args
from ...walker import DEFAULT_FRAME_CAP
from . import session as sess
from .procstate import ThreadStateError, selected_thread


class SwkPrefix(gdb.Command):
    """swk settings."""

    def __init__(self, name):
        super().__init__(name, gdb.COMMAND_DATA, prefix=True)


class FrameCapParameter(gdb.Parameter):
    """The most frames one swk walk may produce (default 100000)."""
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


def gdb_frames(thread):
    """GDB's own frames for a thread: [(level, pc, name, type)]; restores the selection."""
    current = selected_thread()
    try:
        sel = gdb.selected_frame()
    except gdb.error:
        sel = None
    if current != thread:
        thread.switch()
    out = []
    try:
        f = gdb.newest_frame()
        level = 0
        while f is not None and level < 100_000:
            out.append((level, f.pc(), f.name(), f.type()))
            f = f.older()
            level += 1
    except gdb.error:
        pass
    finally:
        if current is not None and current != thread:
            current.switch()
        if sel is not None:
            try:
                sel.select()
            except gdb.error:
                pass
    return out


class UnwinderParameter(gdb.Parameter):
    """Whether swk is GDB's frame unwinder where GDB alone is wrong (also:
disable/enable unwinder global swk)."""
    set_doc = "Set whether swk unwinds frames for GDB's own bt, up, finish and info locals."
    show_doc = "Show whether swk unwinds frames for GDB's own commands."

    def __init__(self):
        super().__init__("swk unwinder", gdb.COMMAND_STACK, gdb.PARAM_BOOLEAN)
        self.value = True

    def get_set_string(self):
        from . import unwinder
        unwinder.set_enabled(self.value)
        return ""

    def get_show_string(self, svalue):
        from . import unwinder
        u = unwinder.UNWINDER
        on = u is not None and u.enabled
        return (f"swk's unwinder is {'on' if on else 'off'}"
                + (f" ({u.unwound} frames unwound by swk so far)." if u is not None else "."))


class SwkBt(gdb.Command):
    """Print a backtrace found by swk's own stack walker.

Usage: swk-bt [-json] [-all] [-compare] [-v] [-full] [N | -N]

  N        show the innermost N frames; -N the outermost N.
  -all     walk every thread (also: thread apply all swk-bt).
  -json    one JSON line per thread: {"thread", "tid", "frames", "stop_reason"};
           frames carry level, pc, sp, fp, function, offset, library, file, line,
           stepper, trust and kind ("normal" or "signal").
  -compare print swk's frames beside GDB's own bt and mark every difference.
  -v       also show how each frame was found (stepper and trust), sp and fp.
  -full    also each frame's local variables, as `bt full` prints them; with -json
           every frame gains "args" and "locals": [{"name", "type", "value"}].
Inlined calls are shown as frames of kind "inline" above their physical frame, as GDB does.

Settings: set swk frame-cap N (default 100000), set swk debug on|off."""

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
        opts = parse_bt_args(gdb.string_to_argv(arg), allow_full=True)
        session = sess.SESSION
        walker = session.walker(all_threads=opts.all)
        ps = walker.process_state
        if opts.all:
            tids = ps.get_thread_ids()
        else:
            tids = [ps.get_default_thread()]
        past_main = bool(gdb.parameter("backtrace past-main"))
        aout = ps.library_state.get_aout()
        aout_path = aout.path if aout else None
        del walker.stepper_errors[:]
        for i, tid in enumerate(tids):
            num, os_tid = ps.thread_label(tid)
            try:
                walk = walker.walk_stack(tid, max_frames=opts.limit if opts.limit and opts.limit > 0 else None)
            except ThreadStateError as exc:
                if not opts.all:
                    raise
                # non-stop mode: a running (or just exited) thread is one line; the others are walked
                self._thread_state_line(opts, i, num, os_tid, exc)
                continue
            if opts.all and not opts.json:
                gdb.write(("\n" if i else "") + f"Thread {num} (LWP {os_tid}):\n")
            if opts.compare:
                self._compare(walk, visible_frames(walk, past_main), ps.gdb_thread(tid), aout_path,
                              opts.verbose)
            else:
                gdb.write("\n".join(render(walk, opts, num, os_tid, aout_path, past_main)) + "\n")
        if session.debug:
            for name, exc in walker.stepper_errors:
                gdb.write(f"swk debug: {name} raised {exc.__class__.__name__}: {exc}\n", gdb.STDERR)

    @staticmethod
    def _thread_state_line(opts, i, num, os_tid, exc):
        what = f"Thread {num} (LWP {os_tid}) {exc.state}"
        if exc.state == "is running":
            what += ": interrupt it to walk its stack"
        if opts.json:
            gdb.write(json.dumps({"thread": num, "tid": os_tid, "frames": [], "stop_reason": what,
                                  "error": str(exc)}) + "\n")
        else:
            gdb.write(("\n" if i else "") + what + "\n")

    def _compare(self, walk, visible, thread, aout_path, verbose):
        everything = gdb_frames(thread)
        virtual = (gdb.INLINE_FRAME, gdb.TAILCALL_FRAME)
        theirs = [g for g in everything if g[3] not in virtual]
        inline = len(everything) - len(theirs)
        n = max(visible, len(theirs))
        diffs = 0
        gdb.write(f"{'':2}{'swk':<60} | gdb\n")
        for i in range(n):
            mine = frame_text(frame_info(walk[i], i), aout_path, verbose) if i < visible else "-"
            if i < len(theirs):
                _lvl, pc, name, ftype = theirs[i]
                other = "<signal handler called>" if ftype == gdb.SIGTRAMP_FRAME else f"0x{pc:016x} in {name or '??'}"
            else:
                other = "-"
            same = (i < visible and i < len(theirs) and walk[i].ra == theirs[i][1]
                    and (theirs[i][3] == gdb.SIGTRAMP_FRAME or same_name(walk[i].name, theirs[i][2])))
            if not same:
                diffs += 1
            gdb.write(f"{'  ' if same else '!='}{mine:<60} | {other}\n")
        note = f" (GDB's {inline} inline/tail-call frame(s) not counted)" if inline else ""
        gdb.write(f"{diffs} difference(s) over {n} frames{note}; swk: {walk.stop_reason}\n")


def register():
    SwkPrefix("set swk")
    SwkPrefix("show swk")
    FrameCapParameter()
    DebugParameter()
    UnwinderParameter()
    SwkBt()
