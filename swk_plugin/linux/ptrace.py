"""Linux's ptrace(2) and process_vm_readv(2), through ctypes: what attaching to a live
process without a debugger needs, and nothing that writes to it.

Only these requests are made: PTRACE_SEIZE (attach without stopping: no SIGSTOP is
sent, so no signal is made up), PTRACE_INTERRUPT (stop now, as a ptrace event stop),
PTRACE_GETREGSET (registers by note type, as a core holds them), PTRACE_GETSIGINFO,
PTRACE_CONT and PTRACE_DETACH (with the signal the thread was stopped for, so none is
lost).  Memory is read with process_vm_readv, or from /proc/PID/mem where that is refused.
"""
import ctypes
import errno
import os

from ..arch import UnsupportedArchitecture, host_architecture
from ..errors import SwkError

PTRACE_CONT = 7
PTRACE_DETACH = 17
PTRACE_GETSIGINFO = 0x4202
PTRACE_GETREGSET = 0x4204
PTRACE_SEIZE = 0x4206
PTRACE_INTERRUPT = 0x4207
PTRACE_LISTEN = 0x4208
PTRACE_EVENT_STOP = 128
__WALL = 0x40000000
WNOHANG = 1
SIGTRAP = 5
SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU = 19, 20, 21, 22
#: The signals a group-stop reports (with PTRACE_EVENT_STOP): the process was stopped.
GROUP_STOP_SIGNALS = frozenset({SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU})


class PtraceError(SwkError):
    """A ptrace request failed: ``errno`` says why (ESRCH: the thread has gone)."""

    def __init__(self, message, err):
        super().__init__(message)
        self.errno = err


class _IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


_libc = None


def libc():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.ptrace.restype = ctypes.c_long
        _libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
        _libc.waitpid.restype = ctypes.c_int
        _libc.waitpid.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.c_int]
        _libc.syscall.restype = ctypes.c_long
    return _libc


def _ptrace(request, tid, addr=None, data=None, what="ptrace"):
    ctypes.set_errno(0)
    r = libc().ptrace(request, tid, addr, data)
    if r == -1:
        e = ctypes.get_errno()
        if e:
            raise PtraceError(f"{what} of thread {tid}: {os.strerror(e)}", e)
    return r


def seize(tid):
    """Attach to thread ``tid`` without stopping it."""
    _ptrace(PTRACE_SEIZE, tid, None, None, "PTRACE_SEIZE")


def interrupt(tid):
    _ptrace(PTRACE_INTERRUPT, tid, None, None, "PTRACE_INTERRUPT")


def cont(tid, sig=0):
    """Resume a stopped tracee, delivering ``sig`` (the signal it stopped for, or 0)."""
    _ptrace(PTRACE_CONT, tid, None, ctypes.c_void_p(sig), "PTRACE_CONT")


def listen(tid):
    """Leave a tracee in the group-stop it reported (it stays stopped, as it was)."""
    _ptrace(PTRACE_LISTEN, tid, None, None, "PTRACE_LISTEN")


def detach(tid, sig=0):
    _ptrace(PTRACE_DETACH, tid, None, ctypes.c_void_p(sig), "PTRACE_DETACH")


class Stop:
    """What waitpid said of one thread: stopped (with the signal and ptrace event), or gone."""
    __slots__ = ("status",)

    def __init__(self, status):
        self.status = status

    @property
    def stopped(self):
        return (self.status & 0xFF) == 0x7F

    @property
    def gone(self):
        return not self.stopped and (self.status & 0x7F) != 0x7F

    @property
    def signal(self):
        return (self.status >> 8) & 0xFF

    @property
    def event(self):
        return self.status >> 16


def wait(tid, nohang=False):
    """waitpid(tid, __WALL): the thread's next stop (None with ``nohang`` and nothing yet)."""
    status = ctypes.c_int(0)
    while True:
        r = libc().waitpid(tid, ctypes.byref(status), __WALL | (WNOHANG if nohang else 0))
        if r == -1:
            e = ctypes.get_errno()
            if e == errno.EINTR:
                continue
            raise PtraceError(f"waitpid of thread {tid}: {os.strerror(e)}", e)
        if r == 0:
            return None
        return Stop(status.value)


def getregset(tid, note_type, size):
    """The thread's register set ``note_type`` (NT_PRSTATUS, NT_FPREGSET, ...): the bytes
    the kernel filled in (as many as it says), or None where it has no such set."""
    buf = _buffers.get(size)
    if buf is None:             # one buffer per size, reused: a thousand threads' sets
        buf = _buffers[size] = ctypes.create_string_buffer(size)
    iov = _IoVec(ctypes.addressof(buf), size)
    try:
        _ptrace(PTRACE_GETREGSET, tid, ctypes.c_void_p(note_type), ctypes.byref(iov), "PTRACE_GETREGSET")
    except PtraceError as exc:
        if exc.errno in (errno.EINVAL, errno.ENODEV, errno.EIO):
            return None
        raise
    return ctypes.string_at(buf, min(iov.len, size))


_buffers = {}


def getsiginfo(tid, size=128):
    buf = ctypes.create_string_buffer(size)
    try:
        _ptrace(PTRACE_GETSIGINFO, tid, None, buf, "PTRACE_GETSIGINFO")
    except PtraceError:
        return None
    return buf.raw


def _host_syscall(name):
    """The number of system call ``name`` on this machine (its architecture's fact), or None:
    then /proc/PID/mem is read instead."""
    try:
        return host_architecture().syscalls.get(name)
    except UnsupportedArchitecture:
        return None


class MemoryReader:
    """Reads a process's memory: process_vm_readv (one system call, no stop needed), else
    /proc/PID/mem (which ptrace-attached tracers may read).  Never writes."""

    def __init__(self, pid):
        self.pid = pid
        self._nr = _host_syscall("process_vm_readv")
        self._mem = None

    def read(self, addr, size):
        """Up to ``size`` bytes at ``addr``: fewer where the mapping ends, b"" if none."""
        if size <= 0:
            return b""
        if self._nr is not None:
            buf = ctypes.create_string_buffer(size)
            local = _IoVec(ctypes.cast(buf, ctypes.c_void_p), size)
            remote = _IoVec(ctypes.c_void_p(addr), size)
            ctypes.set_errno(0)
            n = libc().syscall(self._nr, self.pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
            if n >= 0:
                return buf.raw[:n]
            e = ctypes.get_errno()
            if e == errno.EFAULT:
                return b""
            if e not in (errno.ENOSYS, errno.EPERM):
                if e == errno.ESRCH:
                    raise PtraceError(f"process {self.pid} has exited", e)
                return b""
            self._nr = None            # refused: /proc/PID/mem from now on
        return self._read_mem(addr, size)

    def _read_mem(self, addr, size):
        if self._mem is None:
            try:
                self._mem = os.open(f"/proc/{self.pid}/mem", os.O_RDONLY)
            except OSError as exc:
                raise PtraceError(f"cannot read the memory of process {self.pid}: {exc.strerror}",
                                  exc.errno) from None
        try:
            return os.pread(self._mem, size, addr)
        except OSError:
            return b""
        except OverflowError:
            return b""

    def close(self):
        if self._mem is not None:
            os.close(self._mem)
            self._mem = None


def thread_ids(pid):
    """The process's threads (/proc/PID/task), the main thread first."""
    try:
        tids = sorted(int(t) for t in os.listdir(f"/proc/{pid}/task") if t.isdigit())
    except FileNotFoundError:
        raise PtraceError(f"no process {pid}", errno.ESRCH) from None
    except PermissionError:
        raise PtraceError(f"cannot list the threads of process {pid}: permission denied",
                          errno.EPERM) from None
    if pid in tids:
        tids.remove(pid)
        tids.insert(0, pid)
    return tids


def proc_status(pid, tid=None):
    """/proc/PID[/task/TID]/status as {field: value} ({} when unreadable)."""
    path = f"/proc/{pid}/task/{tid}/status" if tid else f"/proc/{pid}/status"
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        out[key] = value.strip()
    return out


def why_not_attach(pid, err):
    """One line: why PTRACE_SEIZE of ``pid`` was refused."""
    if err == errno.ESRCH:
        return f"no process {pid}"
    status = proc_status(pid)
    tracer = status.get("TracerPid", "0")
    if tracer not in ("", "0"):
        return f"cannot attach to process {pid}: it is already traced by process {tracer}"
    try:
        with open("/proc/sys/kernel/yama/ptrace_scope") as f:
            scope = f.read().strip()
    except OSError:
        scope = None
    why = f"cannot attach to process {pid}: {os.strerror(err).lower()}"
    if err == errno.EPERM:
        if scope and scope != "0":
            why += (f" (kernel.yama.ptrace_scope is {scope}: run as root, or "
                    "`sysctl kernel.yama.ptrace_scope=0`)")
        elif os.geteuid() != 0:
            why += " (it belongs to another user: run as its owner or root)"
    return why
