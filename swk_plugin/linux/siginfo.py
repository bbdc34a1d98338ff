"""siginfo_t: the signal that stopped a thread (a core's NT_SIGINFO, ptrace's
PTRACE_GETSIGINFO), as GDB describes it."""
import struct

_FAULT_SIGNALS = frozenset({4, 5, 7, 8, 11})  # SIGILL SIGTRAP SIGBUS SIGFPE SIGSEGV


class SigInfo:
    """The signal that stopped a thread (NT_SIGINFO, or just pr_cursig)."""
    __slots__ = ("signo", "errno", "code", "addr", "pid", "uid", "raw")

    def __init__(self, signo, errno=0, code=None, addr=None, pid=None, uid=None, raw=None):
        self.signo, self.errno, self.code = signo, errno, code
        self.addr, self.pid, self.uid, self.raw = addr, pid, uid, raw

    @classmethod
    def from_bytes(cls, desc, ptr_size, byteorder):
        """From a siginfo_t in the target's byte order: si_signo, si_errno, si_code, then
        (aligned to a pointer on 64-bit) si_addr for a fault, or the sender's si_pid and
        si_uid."""
        e = "<" if byteorder == "little" else ">"
        signo, errno, code = struct.unpack_from(e + "iii", desc, 0)
        addr = pid = uid = None
        body = 16 if ptr_size == 8 else 12
        if len(desc) >= body + ptr_size:
            if signo in _FAULT_SIGNALS and code > 0:  # sent by the kernel: si_addr
                addr = int.from_bytes(desc[body:body + ptr_size], byteorder)
            elif code <= 0:  # SI_USER, SI_TKILL, SI_QUEUE...: sender's pid and uid
                pid, uid = struct.unpack_from(e + "iI", desc, body)
        return cls(signo, errno, code, addr, pid, uid, bytes(desc))

    @property
    def name(self):
        import signal as _signal       # the signal module only when a signal is named
        try:
            return _signal.Signals(self.signo).name
        except ValueError:
            return f"signal {self.signo}"

    @property
    def description(self):
        import signal as _signal
        try:
            return _signal.strsignal(self.signo) or ""
        except ValueError:
            return ""

    def __str__(self):
        text = self.name
        if self.description:
            text += f" ({self.description})"
        if self.addr is not None:
            text += f", fault address 0x{self.addr:x}"
        elif self.pid is not None:
            text += f", sent by pid {self.pid}"
        return text

    def __repr__(self):
        return f"<SigInfo {self}>"
