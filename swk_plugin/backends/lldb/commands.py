"""LLDB commands: swk-bt and swk-settings.  Kept thin: the bt loop is swk_plugin.frontend's,
the options swk_plugin.options'."""
import shlex

import lldb

from ...errors import SwkError
from ...frame import FrameKind
from ...frontend import NativeBacktrace, NativeFrame, run_bt
from ...lldbformat import DEFAULT_FRAME_FORMAT, FormatError, parse as parse_format, setting_text
from ...lldblines import lldb_stream_lines, lldb_walk_lines
from ...options import PY_ONLY, USAGE, parse_bt_args
from ...pyframes import lldb_py_lines, thread_tag
from ...walker import DEFAULT_FRAME_CAP
from . import provider as prov
from .session import SESSION, log_path

BT_HELP = f"""Print a backtrace found by swk's own stack walker.

{USAGE.replace('usage: ', 'Usage: ').replace('[-full]', '[-full] [-gdb]')}

Frames are printed in LLDB's own frame-format (as LLDB's bt prints them; a frame
LLDB's unwinder found too is LLDB's own line), each thread headed as in LLDB's bt.

  N         the innermost N frames; -N the outermost N.
  -gdb      GDB's bt lines instead (as swk-bt prints them in GDB).
  -all      every thread.
  -unique   every thread, those with the same stack once, as a group (GDB's lines).
  -merge    every thread's stack merged into one call tree, outermost call first
            (-merge=line: nodes are lines; -svg=FILE also draws it).
  -json     one JSON line per thread: thread, tid, frames, stop_reason.
  -compare  swk's frames beside LLDB's own unwinding, != where they differ.
  -v        also how each frame was found (stepper, trust), its sp and fp.
  -full     also each frame's arguments and locals.
  -py       a Python program's own frames after each evaluator frame that runs
            them, each thread's GIL state after its thread line (-py only: the
            Python frames alone).

Every frame down to the bottom of the stack is shown, like LLDB's bt.
On LLDB 22 or newer, LLDB's own bt shows swk's frames where LLDB alone
is wrong.  Settings: swk-settings."""

SETTINGS_HELP = """Show or change swk's settings.

Usage: swk-settings [frame-cap N | debug on|off | provider on|off]

  frame-cap N      the most frames one walk may produce (default 1000000).
  debug on|off     details of swk's internal errors and stepper failures.
  provider on|off  LLDB 22+: whether LLDB's own bt shows swk's frames."""


def _target_of(debugger, exe_ctx):
    target = exe_ctx.GetTarget() if exe_ctx is not None else None
    if target is None or not target.IsValid():
        target = debugger.GetSelectedTarget()
    return target


class SwkBtCommand:
    def __init__(self, debugger, internal_dict):
        pass

    def get_short_help(self):
        return "Print a backtrace found by swk's own stack walker (swk-bt -json -all -compare -v N)."

    def get_long_help(self):
        return BT_HELP

    def __call__(self, debugger, command, exe_ctx, result):
        SESSION.enter_command()   # before any SB call: see Session.enter_command
        try:
            lines = self._run(debugger, command, exe_ctx)
            if lines:
                result.AppendMessage("\n".join(lines))
            result.SetStatus(lldb.eReturnStatusSuccessFinishResult)
        except SwkError as exc:
            result.SetError(str(exc))
        except KeyboardInterrupt:
            result.SetError("swk-bt: interrupted")
        except BaseException as exc:  # never a traceback inside LLDB, nor its end (SystemExit)
            path = SESSION.log(f"swk-bt {command!r}: {exc.__class__.__name__}: {exc}", exc)
            if SESSION.debug:
                import traceback
                traceback.print_exc()
            result.SetError(f"swk-bt: internal error: {exc.__class__.__name__}: {exc} (details in {path})")
        finally:
            SESSION.leave_command()

    def _run(self, debugger, command, exe_ctx):
        try:
            argv = shlex.split(command or "")
        except ValueError as exc:
            raise SwkError(f"swk-bt: {exc}; {USAGE}") from None
        opts = parse_bt_args(argv, allow_full=True, allow_gdb=True)
        target = _target_of(debugger, exe_ctx)
        walker = SESSION.walker(target)
        prov.ensure_provider(target)
        ps = walker.process_state
        if opts.all:
            tids = ps.get_thread_ids()
        else:
            th = exe_ctx.GetThread() if exe_ctx is not None else None
            tids = [th.GetThreadID() if th is not None and th.IsValid() else ps.get_default_thread()]
        out = []
        text = None if opts.gdb else LldbText(debugger, ps, opts)
        # every frame is shown: LLDB's bt has no main cut-off
        run_bt(walker, tids, opts, out.extend, past_main=True,
               native=lambda tid: native_backtrace(target, ps.process, ps.sb_thread(tid)),
               debug_sink=out.extend if SESSION.debug else None,
               lines_for=text.lines if text else None, stream_for=text.stream if text else None)
        return out


class LldbText:
    """swk-bt's text as LLDB's own bt: each thread headed by its thread-stop-format line (from
    LLDB), frames in LLDB's frame-format, LLDB's own line for each frame its unwinder found too
    (lldblines.lldb_walk_lines); the selected thread and frame marked with "*"."""

    def __init__(self, debugger, ps, opts):
        self.ps, self.opts = ps, opts
        self.process = ps.process
        text = lldb.SBDebugger.GetInternalVariableValue("frame-format", debugger.GetInstanceName())
        fmt = setting_text(text.GetStringAtIndex(0)) if text is not None and text.GetSize() else ""
        try:
            self.nodes = parse_format(fmt or DEFAULT_FRAME_FORMAT)
        except FormatError:
            self.nodes = parse_format(DEFAULT_FRAME_FORMAT)
        sel = self.process.GetSelectedThread()
        self.selected_tid = sel.GetThreadID() if sel is not None and sel.IsValid() else None

    def lines(self, walk, tid):
        """A walk's lines (with -py its Python frames too, pyframes.lldb_py_lines, and the
        thread's GIL state after LLDB's thread line)."""
        frames = lldb_py_lines if self.opts.py else lldb_walk_lines
        th = self.ps.sb_thread(tid)
        if th is None or not th.IsValid():
            return frames(walk, self.opts, self.nodes)
        stream = lldb.SBStream()
        th.GetDescription(stream, True)
        mine = th.GetThreadID() == self.selected_tid
        head = ("* " if mine else "  ") + stream.GetData().rstrip("\n") + (thread_tag(walk) if self.opts.py else "")
        selected = th.GetSelectedFrame().GetFrameID() if mine else None
        if self.opts.py == PY_ONLY:       # numbered among themselves: LLDB's frame numbers are not theirs
            return [head] + frames(walk, self.opts, self.nodes, None, None)
        return [head] + frames(walk, self.opts, self.nodes, self._native(th), selected)

    def stream(self, head, rest, tid, emit, collapse, top_inlines):
        """A deep walk (stream.py) as lines: its thread line, then frames in LLDB's format,
        each swk's own (lldblines.lldb_stream_lines), printed as they are found."""
        th = self.ps.sb_thread(tid)
        selected = None
        if th is not None and th.IsValid():
            stream = lldb.SBStream()
            th.GetDescription(stream, True)
            mine = th.GetThreadID() == self.selected_tid
            emit([("* " if mine else "  ") + stream.GetData().rstrip("\n")])
            selected = th.GetSelectedFrame().GetFrameID() if mine else None
        lldb_stream_lines(head, rest, self.opts, self.nodes, top_inlines, emit, collapse, selected)

    def _native(self, th):
        """native_line for lldb_walk_lines: LLDB's own line for the frame of LLDB's that is the
        same frame (pc, sp, inlined, artificial), renumbered to swk's level where LLDB has more
        or fewer frames above it (an invented tail-call frame, a frame it could not find)."""
        own = prov.lldb_own_frames(self.process, th)
        where = {}
        for j, key in enumerate(own):
            where.setdefault(key, []).append(j)
        last = [-1]

        def native_line(level, shown, pc):
            f = shown.frame
            key = (pc, f.sp, shown.kind == "inline", shown.kind == FrameKind.TAILCALL)
            j = next((j for j in where.get(key, ()) if j > last[0]), None)
            if j is None:
                return None
            fr = prov.lldb_own_frame(self.process, th, j)
            if fr is None or not fr.IsValid() or (fr.GetPC(), fr.GetSP()) != key[:2]:
                return None
            last[0] = j
            stream = lldb.SBStream()
            fr.GetDescription(stream)
            text = stream.GetData() or ""
            if j != level:
                head = f"frame #{j}:"
                if not text.startswith(head):
                    return None             # a frame-format that does not start with the index
                text = f"frame #{level}:" + text[len(head):]
            return text or None
        return native_line


def _lldb_name(target, pc, level):
    """The function LLDB names for a frame's pc (pc-1 for a return address)."""
    addr = target.ResolveLoadAddress(pc - 1 if level and pc else pc)
    fn = addr.GetFunction()
    if fn.IsValid():
        return fn.GetName()
    sym = addr.GetSymbol()
    return sym.GetName() if sym.IsValid() else None


def native_backtrace(target, process, thread):
    """LLDB's own frames of a thread for -compare (its inlined and artificial tail-call
    frames counted apart)."""
    everything = prov.lldb_own_frames(process, thread)
    real = [f for f in everything if not f[2] and not f[3]]
    frames = [NativeFrame(pc, _lldb_name(target, pc, i)) for i, (pc, _sp, _inl, _art) in enumerate(real)]
    return NativeBacktrace("LLDB", frames, len(everything) - len(real))


class SwkSettingsCommand:
    def __init__(self, debugger, internal_dict):
        pass

    def get_short_help(self):
        return "Show or change swk's settings (frame-cap, debug, provider)."

    def get_long_help(self):
        return SETTINGS_HELP

    def __call__(self, debugger, command, exe_ctx, result):
        SESSION.enter_command()   # before any SB call: see Session.enter_command
        try:
            result.AppendMessage(self._run(debugger, shlex.split(command or "")))
            result.SetStatus(lldb.eReturnStatusSuccessFinishResult)
        except SwkError as exc:
            result.SetError(str(exc))
        except BaseException as exc:  # KeyboardInterrupt and SystemExit too: one line, LLDB goes on
            path = SESSION.log(f"swk-settings {command!r}: {exc}", exc)
            result.SetError(f"swk-settings: internal error: {exc.__class__.__name__}: {exc} "
                            f"(details in {path})")
        finally:
            SESSION.leave_command()

    def _run(self, debugger, argv):
        if not argv:
            return self._show()
        if len(argv) != 2:
            raise SwkError("swk-settings: usage: swk-settings [frame-cap N | debug on|off | provider on|off]")
        name, value = argv
        if name == "frame-cap":
            try:
                n = int(value, 0)
            except ValueError:
                n = 0
            if n <= 0:
                raise SwkError(f"swk-settings: frame-cap must be a positive number, not {value!r}")
            SESSION.frame_cap = n
        elif name in ("debug", "provider"):
            if value not in ("on", "off", "true", "false", "1", "0"):
                raise SwkError(f"swk-settings: {name} is on or off, not {value!r}")
            on = value in ("on", "true", "1")
            if name == "debug":
                SESSION.debug = on
            else:
                if not prov.HAVE_PROVIDERS and on:
                    raise SwkError("swk-settings: this LLDB has no frame providers (LLDB 22 or newer has)")
                SESSION.provider_enabled = on
                if on:
                    for i in range(debugger.GetNumTargets()):
                        prov.ensure_provider(debugger.GetTargetAtIndex(i))
                else:
                    prov.remove_providers()
        else:
            raise SwkError(f"swk-settings: unknown setting {name!r} (frame-cap, debug, provider)")
        return self._show()

    def _show(self):
        if prov.HAVE_PROVIDERS:
            p = (f"{'on' if SESSION.provider_enabled else 'off'} "
                 f"({prov.STATS['swk']} frames given by swk, {prov.STATS['lldb']} kept from LLDB, "
                 f"{prov.STATS['python']} Python frames"
                 + (f"; {prov.STATS['busy']} calls found LLDB's API lock busy" if prov.STATS['busy'] else "")
                 + ")")
        else:
            p = "unavailable (this LLDB has no frame providers; LLDB 22 or newer has)"
        return (f"frame-cap: {SESSION.frame_cap}"
                + ("" if SESSION.frame_cap != DEFAULT_FRAME_CAP else " (default)")
                + f"\ndebug: {'on' if SESSION.debug else 'off'}\nprovider: {p}\nlog: {log_path()}")
