"""The calling process's own stack (spec: ProcSelf, ``Walker::newWalker()``).

A thread cannot stop itself to be read, and its stack changes as soon as Python goes on:
the frames between the point captured and the interpreter's own frame are gone when the
capturing call returns.  So swk signals its own thread (pthread_kill, with the GIL held)
and copies its registers (the handler's ucontext: the kernel's, laid out as the
architecture's signal frame) and its stack from inside the handler, while every frame of
the thread is still intact below the signal frame; the walk then runs on that copy, as the
ptrace back-end's snapshots do.  The stack shows how it was captured: libc's
pthread_kill (or raise), libffi and _ctypes above the interpreter's frames — the calling
Python code's native stack from there down to ``_start``.

Memory outside the copied stack (code, data) is read with process_vm_readv on the
process itself, which fails cleanly on an unmapped address instead of crashing.
"""
import ctypes
import os
import signal
import threading
import time

from ..arch import host_architecture
from ..errors import SwkError
from ..format import walk_text
from ..linux import ptrace
from ..linux.maps import read_proc_maps
from ..walker import Walker
from .ptrace import DEFAULT_STACK_BYTES, RED_ZONE, PtraceProcessState, ThreadSnapshot

#: struct sigaction as glibc declares it (x86-64 and i386 alike in field order).
SA_SIGINFO = 4
SA_RESTART = 0x10000000
_lock = threading.Lock()


class _SigAction(ctypes.Structure):
    _fields_ = [("handler", ctypes.c_void_p), ("mask", ctypes.c_ulong * (128 // ctypes.sizeof(ctypes.c_ulong))),
                ("flags", ctypes.c_int), ("restorer", ctypes.c_void_p)]


_HANDLER = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)


class SelfCapture:
    """The calling thread, captured: what PtraceProcessState reads (as a Tracer's snapshots)."""

    def __init__(self, arch=None):
        self.pid = os.getpid()
        self.arch = arch or host_architecture()
        self.threads = {}
        self.seized = []
        self.captures = 0             # as a Tracer's: how many times the snapshots changed
        self.fp = {}                  # tid -> {DWARF regno: bytes}, from the signal's fpstate
        self.memory = ptrace.MemoryReader(self.pid)

    def capture(self, stack_bytes=DEFAULT_STACK_BYTES):
        """Copy the calling thread's registers and stack (from inside a signal to itself)."""
        self.captures += 1
        arch = self.arch
        layout = arch.signal_frame
        if layout is None or layout.SC_OFFSETS is None:
            raise SwkError(f"swk: walk_self does not know {arch.name}'s signal frames")
        tid = threading.get_native_id()
        regions = read_proc_maps(self.pid) or []
        snap = ThreadSnapshot(tid)
        libc = ptrace.libc()
        pylibc = ctypes.PyDLL(None)           # calls made holding the GIL: the handler needs it
        pylibc.pthread_kill.argtypes = [ctypes.c_ulong, ctypes.c_int]
        pylibc.pthread_self.restype = ctypes.c_ulong
        slot = layout.SLOT
        sc_off = layout.UC_MCONTEXT
        errors = []
        fp = {}

        def handler(_sig, _info, uc):
            try:
                sc = uc + sc_off
                regs = {regno: int.from_bytes(ctypes.string_at(sc + off, slot), arch.byteorder)
                        for regno, off in layout.SC_OFFSETS.items()}
                snap.regs = regs
                snap.stopped_at = time.perf_counter()
                sp = regs[arch.sp]
                lo, end = max(0, sp - RED_ZONE), sp + stack_bytes
                for r in regions:
                    if r.start <= sp < r.end:
                        lo, end = max(r.start, lo), min(r.end, end)
                        snap.stack_end = r.end
                        break
                snap.stack_base = lo
                snap.stack = ctypes.string_at(lo, end - lo)     # our own, mapped stack
                reader = layout.fp_registers
                if reader is not None:
                    try:
                        fp.update(reader(lambda a, n: ctypes.string_at(a, n), sc))
                    except Exception:   # no FP state: values in FP registers unknown
                        fp.clear()
                snap.resumed_at = time.perf_counter()
            except BaseException as exc:   # never let an exception out of a signal handler
                errors.append(exc)

        cb = _HANDLER(handler)
        signo = signal.SIGRTMAX - 2
        new, old = _SigAction(), _SigAction()
        new.handler = ctypes.cast(cb, ctypes.c_void_p)
        new.flags = SA_SIGINFO | SA_RESTART
        with _lock:
            if libc.sigaction(signo, ctypes.byref(new), ctypes.byref(old)) != 0:
                raise SwkError("swk: walk_self could not install its signal handler")
            try:
                pylibc.pthread_kill(pylibc.pthread_self(), signo)
            finally:
                libc.sigaction(signo, ctypes.byref(old), None)
        if errors:
            raise SwkError(f"swk: walk_self could not copy the stack: {errors[0]}")
        if not snap.regs:
            raise SwkError("swk: walk_self: the signal to this thread did not arrive")
        self.fp = {tid: fp}
        self.threads = {tid: snap}
        self.seized = [tid]
        return snap


class SelfProcessState(PtraceProcessState):
    """The calling thread's copy: registers and stack as captured, the rest read live."""

    def __init__(self, capture):
        super().__init__(capture)

    def read_thread_fp_register(self, tid, regno):
        return self.tracer.fp.get(tid, {}).get(regno)

    def read_thread_named_register(self, tid, name):
        if name == self.arch.thread_pointer and tid == threading.get_native_id():
            # glibc's pthread_t is the thread's TCB: x86's thread pointer
            lib = ctypes.CDLL(None)
            lib.pthread_self.restype = ctypes.c_ulong
            return lib.pthread_self() if self.arch.tls_variant == 2 else None
        return None


def walk_self(max_frames=None, stack_bytes=DEFAULT_STACK_BYTES):
    """The calling thread's native stack, as a Walk (spec: ProcSelf's walkStack): usable from
    a crash handler beside faulthandler.  ``walk.walker`` answers the walk's questions
    (names, locals); format_self prints it as swk-bt does."""
    cap = SelfCapture()
    snap = cap.capture(stack_bytes)
    ps = SelfProcessState(cap)
    walker = Walker(ps)
    return walker.walk_stack(snap.tid, max_frames=max_frames)


def format_self(max_frames=None, full=False):
    """walk_self's frames as swk-bt prints them (lines)."""
    return walk_text(walk_self(max_frames), full=full)
