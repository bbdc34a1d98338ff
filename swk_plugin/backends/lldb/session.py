"""Per-debugger state: one Walker per LLDB process, settings, the log file."""
import os
import tempfile
import threading
import time
import traceback

import lldb

from ...errors import NoProcessError
from ...walker import DEFAULT_FRAME_CAP, Walker
from .procstate import LldbProcessState
from .values import LldbValuePrinter


def log_path():
    return os.path.join(os.environ.get("TMPDIR") or tempfile.gettempdir(), "swk-lldb.log")


class Session:
    def __init__(self):
        self._walkers = {}   # SBProcess.GetUniqueID() -> Walker
        self.frame_cap = DEFAULT_FRAME_CAP
        self.debug = False
        self.provider_enabled = True
        self.reported = set()
        # swk-bt and the frame provider on other threads (see enter_command)
        self._guard = threading.Lock()
        self._command_thread = None
        self._providers = {}   # thread ident -> depth of provider calls running there

    def walker(self, target):
        """The Walker for ``target``'s process, checked to be stopped (or a core)."""
        if target is None or not target.IsValid():
            raise NoProcessError("swk-bt: no target: load a program (target create PROG) "
                                 "or a core (target create PROG --core CORE)")
        process = target.GetProcess()
        if not process.IsValid():
            raise NoProcessError("swk-bt: the program is not being run (no process): "
                                 "process launch, attach, or load a core file")
        state = process.GetState()
        if state in (lldb.eStateRunning, lldb.eStateStepping, lldb.eStateLaunching,
                     lldb.eStateAttaching):
            raise NoProcessError("swk-bt: the process is running: interrupt it first")
        if state in (lldb.eStateExited, lldb.eStateDetached, lldb.eStateInvalid,
                     lldb.eStateUnloaded, lldb.eStateConnected):
            raise NoProcessError("swk-bt: the program is not being run (no process)")
        if process.GetNumThreads() == 0:
            if process.GetPluginName() not in ("elf-core", "minidump", "mach-o-core"):
                # async mode, just resumed: LLDB lists no threads while the process runs,
                # before its public state says "running"
                raise NoProcessError("swk-bt: the process is running: interrupt it first")
            raise NoProcessError("swk-bt: the process has no threads")
        return self.walker_for(process)

    def walker_for(self, process):
        """The process's Walker, made on first use and checked against its stop id."""
        key = process.GetUniqueID()
        w = self._walkers.get(key)
        if w is None:
            if len(self._walkers) > 16:
                self._walkers.clear()
            w = self._walkers[key] = Walker(LldbProcessState(process), frame_cap=self.frame_cap)
            w.value_printer = LldbValuePrinter(process.GetTarget())
        w.frame_cap = self.frame_cap
        w.process_state.check_stop()
        return w

    # --- swk-bt and the frame provider on another thread -------------------------------------
    # LLDB 22 asks a frame provider for frames while it holds the thread's frame-list lock,
    # also on its event-handler thread (announcing a stop in async mode) without the target's
    # API lock; every SB call the provider makes takes that API lock.  A command on the main
    # thread holds the API lock and then waits for the frame-list lock (SBThread.GetFrameAtIndex):
    # the two deadlock.  So swk-bt waits for providers already running elsewhere, and a provider
    # that starts elsewhere while swk-bt runs makes no SB call (LLDB's own frames, that stop).
    def enter_command(self, timeout=10.0):
        me = threading.get_ident()
        with self._guard:
            self._command_thread = me
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._guard:
                if not any(t != me for t in self._providers):
                    return
            time.sleep(0.001)

    def leave_command(self):
        with self._guard:
            self._command_thread = None

    def provider_enter(self):
        """False when swk-bt runs on another thread: the provider must not call LLDB now."""
        me = threading.get_ident()
        with self._guard:
            if self._command_thread not in (None, me):
                return False
            self._providers[me] = self._providers.get(me, 0) + 1
            return True

    def provider_exit(self):
        me = threading.get_ident()
        with self._guard:
            n = self._providers.get(me, 0) - 1
            if n > 0:
                self._providers[me] = n
            else:
                self._providers.pop(me, None)

    # --- problems that must not break LLDB --------------------------------------------------
    def log(self, what, exc=None):
        """Append a problem (and its traceback) to the log file; return the file's path."""
        path = log_path()
        try:
            with open(path, "a") as f:
                f.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {what}\n")
                if exc is not None:
                    f.write("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
        except OSError:
            pass
        return path

    def report_once(self, debugger, key, line):
        """Show ``line`` on LLDB's error stream the first time ``key`` happens."""
        if key in self.reported and not self.debug:
            return
        if len(self.reported) < 256:   # bounded: past that, a new problem is shown each time
            self.reported.add(key)
        write_err(debugger, line)


def write_err(debugger, line):
    text = line if line.endswith("\n") else line + "\n"
    try:
        if debugger is not None and debugger.IsValid():
            f = debugger.GetErrorFile()
            if f is not None and f.IsValid():
                f.Write(text.encode())
                f.Flush()
                return
    except Exception:
        pass
    import sys
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except Exception:
        pass


SESSION = Session()
