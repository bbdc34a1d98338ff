"""Per-debugger state: one Walker per LLDB process, settings, the log file."""
import os
import tempfile
import time
import traceback

import lldb

from ...errors import NoProcessError
from ...walker import DEFAULT_FRAME_CAP, Walker
from .procstate import LldbProcessState


def log_path():
    return os.path.join(os.environ.get("TMPDIR") or tempfile.gettempdir(), "swk-lldb.log")


class Session:
    def __init__(self):
        self._walkers = {}   # SBProcess.GetUniqueID() -> Walker
        self.frame_cap = DEFAULT_FRAME_CAP
        self.debug = False
        self.provider_enabled = True
        self.reported = set()

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
        w.frame_cap = self.frame_cap
        w.process_state.check_stop()
        return w

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
