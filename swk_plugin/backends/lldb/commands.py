"""LLDB commands: swk-bt and swk-settings.  Kept thin: the walking is the core's,
the rendering is swk_plugin.format's, the options are swk_plugin.options'."""
import inspect
import shlex

import lldb

from ... import format as fmt
from ...errors import SwkError
from ...format import frame_info, frame_text, same_name, select_levels, walk_json, walk_text
from ...options import USAGE, parse_bt_args
from ...walker import DEFAULT_FRAME_CAP
from . import provider as prov
from .session import SESSION, log_path

#: -full (issue 5) is accepted only where the shared option parser knows it.
ALLOW_FULL = "allow_full" in inspect.signature(parse_bt_args).parameters

_FULL_HELP = "\n  -full     also each frame's arguments and locals."

BT_HELP = f"""Print a backtrace found by swk's own stack walker.

{USAGE.replace('usage: ', 'Usage: ')}

  N         the innermost N frames; -N the outermost N.
  -all      every thread, each headed "Thread N (LWP tid):".
  -json     one JSON line per thread: thread, tid, frames, stop_reason.
  -compare  swk's frames beside LLDB's own unwinding, != where they differ.
  -v        also how each frame was found (stepper, trust), its sp and fp.{_FULL_HELP if ALLOW_FULL else ''}

Every frame down to the bottom of the stack is shown, like LLDB's bt.
On LLDB 22 or newer, LLDB's own bt shows swk's frames where LLDB alone
is wrong.  Settings: swk-settings."""

SETTINGS_HELP = """Show or change swk's settings.

Usage: swk-settings [frame-cap N | debug on|off | provider on|off]

  frame-cap N      the most frames one walk may produce (default 100000).
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
        opts = parse_bt_args(argv, allow_full=True) if ALLOW_FULL else parse_bt_args(argv)
        target = _target_of(debugger, exe_ctx)
        walker = SESSION.walker(target)
        prov.ensure_provider(target)
        ps = walker.process_state
        process = ps.process
        if opts.all:
            tids = ps.get_thread_ids()
        else:
            th = exe_ctx.GetThread() if exe_ctx is not None else None
            tids = [th.GetThreadID() if th is not None and th.IsValid() else ps.get_default_thread()]
        aout = ps.library_state.get_aout()
        aout_path = aout.path if aout else None
        del walker.stepper_errors[:]
        out = []
        for i, tid in enumerate(tids):
            num, os_tid = ps.thread_label(tid)
            limit = opts.limit if opts.limit and opts.limit > 0 else None
            walk = walker.walk_stack(tid, max_frames=limit)
            if opts.all and not opts.json:
                if i:
                    out.append("")
                out.append(f"Thread {num} (LWP {os_tid}):")
            if opts.compare:
                out.extend(compare_lines(walk, prov.lldb_own_frames(process, ps.sb_thread(tid)),
                                         target, aout_path, opts.verbose))
            else:
                out.extend(render(walk, opts, num, os_tid, aout_path))
        if SESSION.debug:
            for name, exc in walker.stepper_errors:
                out.append(f"swk debug: {name} raised {exc.__class__.__name__}: {exc}")
        return out


def _lldb_name(target, pc, level):
    """The function LLDB names for a frame's pc (pc-1 for a return address)."""
    addr = target.ResolveLoadAddress(pc - 1 if level and pc else pc)
    fn = addr.GetFunction()
    if fn.IsValid():
        return fn.GetName()
    sym = addr.GetSymbol()
    return sym.GetName() if sym.IsValid() else None


def compare_lines(walk, theirs_all, target, aout_path, verbose):
    """swk's frames beside LLDB's own, `!=` where the pc or the function differs;
    LLDB's inlined and tail-call (artificial) frames are left out and counted."""
    theirs = [f for f in theirs_all if not f[2] and not f[3]]
    virtual = len(theirs_all) - len(theirs)
    n = max(len(walk), len(theirs))
    diffs = 0
    out = [f"{'':2}{'swk':<60} | lldb"]
    for i in range(n):
        mine = frame_text(frame_info(walk[i], i), aout_path, verbose) if i < len(walk) else "-"
        name = _lldb_name(target, theirs[i][0], i) if i < len(theirs) else None
        other = f"0x{theirs[i][0]:016x} in {name or '??'}" if i < len(theirs) else "-"
        same = (i < len(walk) and i < len(theirs) and walk[i].ra == theirs[i][0]
                and (walk[i].kind == "signal" or same_name(walk[i].name, name)))
        if not same:
            diffs += 1
        out.append(f"{'  ' if same else '!='}{mine:<60} | {other}")
    note = f" (LLDB's {virtual} inlined/tail-call frame(s) not counted)" if virtual else ""
    out.append(f"{diffs} difference(s) over {n} frames{note}; swk: {walk.stop_reason}")
    return out


def render(walk, opts, num, tid, aout_path):
    """swk-bt's lines for one walk: the shared rendering, every frame shown (LLDB's bt has
    no main cut-off)."""
    if hasattr(fmt, "render"):
        return fmt.render(walk, opts, num, tid, aout_path, past_main=True)
    levels = select_levels(len(walk), opts.limit)
    if opts.json:
        return [walk_json(walk, num, tid, levels)]
    return walk_text(walk, levels, opts.verbose, aout_path)


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
                 f"({prov.STATS['swk']} frames given by swk, {prov.STATS['lldb']} kept from LLDB)")
        else:
            p = "unavailable (this LLDB has no frame providers; LLDB 22 or newer has)"
        return (f"frame-cap: {SESSION.frame_cap}"
                + ("" if SESSION.frame_cap != DEFAULT_FRAME_CAP else " (default)")
                + f"\ndebug: {'on' if SESSION.debug else 'off'}\nprovider: {p}\nlog: {log_path()}")
