"""The ptrace back-end: a live process walked with no debugger (spec: ProcDebug).

``Tracer`` attaches to every thread with PTRACE_SEIZE (no SIGSTOP), stops them with
PTRACE_INTERRUPT, and puts each back exactly as it was: resumed with the signal it was
stopped for (none is lost, none made up), a thread the process had stopped left in its
group-stop, every thread detached — on errors, on Ctrl-C and on SIGTERM too; if swk is
killed outright the kernel detaches (a signal swk had intercepted in that very instant is
the one thing lost).

``ThreadSnapshot`` is what is copied while a thread is stopped: its registers, its FP state
and thread pointer (the architecture's register sets, as in a core), and the live part of
its stack (from the stack pointer, less the red zone, up to a bound).  A walk can then run
after the threads were resumed, on the snapshot (``PtraceProcessState``), as perf's DWARF
mode and crash reporters do: the pause is only the copy.  Memory outside the snapshot (code,
data, a stack deeper than the bound) is read live.
"""
import errno
import os
import signal
import time
from bisect import bisect_right

from ..arch import UnsupportedArchitecture, from_elf_machine, known_names, machine_name
from ..elf.header import ElfHeader
from ..errors import BadFileError, MemoryReadError, NoProcessError, RegisterError, ThreadStateError
from ..linux import ptrace
from ..linux.auxv import read_proc_auxv
from ..linux.libraries import process_libraries
from ..linux.maps import read_proc_maps
from ..procstate import PAGE, LibraryState, ProcessState

#: Bytes of stack copied above the stack pointer (and the x86-64 red zone below it).
DEFAULT_STACK_BYTES = 8 << 20
RED_ZONE = 128
#: Threads copy_each asks to stop ahead of the one it copies.
COPY_AHEAD = 2
NT_PRSTATUS = 1


def process_architecture(pid):
    """The Architecture of process ``pid``, from its executable's ELF header."""
    path = f"/proc/{pid}/exe"
    try:
        with open(path, "rb") as f:
            head = f.read(64)
    except FileNotFoundError:
        raise NoProcessError(f"no process {pid}") from None
    except PermissionError:
        raise NoProcessError(f"cannot read process {pid}'s executable: permission denied") from None
    try:
        hdr = ElfHeader(head, path)
    except (BadFileError, ValueError, KeyError) as exc:
        raise NoProcessError(f"process {pid}: {exc}") from None
    try:
        return from_elf_machine(hdr["e_machine"], hdr.elfclass, hdr.byteorder)
    except UnsupportedArchitecture:
        raise NoProcessError(f"process {pid}: a {hdr.elfclass}-bit {machine_name(hdr['e_machine'])} program, "
                             f"which swk does not walk (swk knows: {', '.join(known_names())})") from None


class ThreadSnapshot:
    """One stopped thread: registers, register-set notes, its stack copy, and how long it
    was paused (seconds, from its stop to its resumption)."""
    __slots__ = ("tid", "regs", "notes", "stack_base", "stack", "stack_end", "signal", "group_stop",
                 "stopped_at", "resumed_at")

    def __init__(self, tid):
        self.tid = tid
        self.regs = {}
        self.notes = {}
        self.stack_base = 0
        self.stack = b""
        self.stack_end = 0           # where the stack's mapping ends
        self.signal = 0              # the signal to deliver on resumption (0: none)
        self.group_stop = False      # stopped by the process's own job control
        self.stopped_at = self.resumed_at = None

    @property
    def pause(self):
        if self.stopped_at is None or self.resumed_at is None:
            return None
        return self.resumed_at - self.stopped_at


class Tracer:
    """Every thread of process ``pid``, attached and stopped on demand (a context manager:
    leaving it detaches every thread, whatever happened)."""

    def __init__(self, pid, arch=None):
        self.pid = pid
        self.arch = arch or process_architecture(pid)
        self.threads = {}            # tid -> ThreadSnapshot of the last stop
        self.captures = 0            # how many times the threads were captured (snapshots changed)
        self.seized = []             # tids attached, in order
        self.stopped = set()         # tids in a ptrace-stop now
        self.gone = set()            # tids that exited while attached
        #: the threads in the order they are numbered, when copied a share at a time (cli)
        self.planned = None
        self.memory = ptrace.MemoryReader(pid)
        self._old_term = None
        self._regions = None         # (regions given, sorted by start, their starts)

    # --- attach / detach -------------------------------------------------------------------
    def __enter__(self):
        self.attach()
        return self

    def __exit__(self, *exc):
        self.detach()
        return False

    def attach(self):
        """PTRACE_SEIZE every thread (the list is read again until no new thread appears)."""
        if self._old_term is None and signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
            try:
                self._old_term = signal.signal(signal.SIGTERM, _terminate)
            except ValueError:      # not the main thread: the kernel detaches if swk dies
                pass
        for _round in range(100):
            new = [t for t in ptrace.thread_ids(self.pid) if t not in self.seized and t not in self.gone]
            if not new:
                return
            for tid in new:
                try:
                    ptrace.seize(tid)
                except ptrace.PtraceError as exc:
                    if tid != self.pid and (exc.errno == errno.ESRCH or (
                            exc.errno == errno.EPERM and _exiting(self.pid, tid))):
                        self.gone.add(tid)        # it exited meanwhile (an exiting thread: EPERM)
                        continue
                    self.detach()
                    raise NoProcessError(ptrace.why_not_attach(self.pid, exc.errno)) from None
                self.seized.append(tid)

    def stop(self):
        """Stop every attached thread (PTRACE_INTERRUPT) and wait until each has."""
        self.attach()                               # threads created since the last stop
        now = time.perf_counter()
        for tid in list(self.seized):
            if tid not in self.stopped:
                self._interrupt(tid)
        for tid in list(self.seized):
            if tid not in self.stopped:
                self._wait_stopped(tid)
        return now

    def copy_each(self, stack_bytes=DEFAULT_STACK_BYTES, regions=None, tids=None):
        """Each thread in turn stopped, copied (capture) and detached at once, with the
        signal it was stopped for (one the process itself stopped stays stopped): each is
        paused for its own copy only and the few before it (COPY_AHEAD are asked to stop
        ahead of their copy: a thread takes longer to come to its stop than to be copied).
        ``tids``: only those of the attached threads (default: all, those started since too)."""
        if tids is None:
            self.attach()
            order = list(self.seized)
        else:
            wanted = set(tids)
            order = [t for t in self.seized if t in wanted]
        asked = {}                           # thread id: when it was asked to stop
        ahead = 0
        for k, tid in enumerate(order):
            while ahead < len(order) and ahead <= k + COPY_AHEAD:
                t = order[ahead]
                ahead += 1
                if t not in self.stopped and self._interrupt(t):
                    asked[t] = time.perf_counter()
            if tid not in self.stopped and tid not in asked:
                continue                     # gone before it was asked
            if tid not in self.stopped:
                if not self._wait_stopped(tid):
                    continue
                # its pause counted from the asking (it may have stopped any time since)
                self.threads[tid].stopped_at = asked[tid]
            self.capture(stack_bytes, regions, tids=[tid])
            snap = self.threads.get(tid)
            try:
                ptrace.detach(tid, snap.signal if snap is not None else 0)
            except ptrace.PtraceError:
                pass                 # gone meanwhile
            if snap is not None:
                snap.resumed_at = time.perf_counter()
                snap.signal = 0
            self.seized.remove(tid)
            self.stopped.discard(tid)

    def _interrupt(self, tid):
        """PTRACE_INTERRUPT one thread; False when it is gone."""
        try:
            ptrace.interrupt(tid)
        except ptrace.PtraceError as exc:
            if exc.errno == errno.ESRCH:
                self._lost(tid)
                return False
            raise
        return True

    def _wait_stopped(self, tid):
        """Wait until an interrupted thread is in its ptrace-stop, noting why it stopped;
        False when it is gone."""
        snap = self.threads.get(tid) or ThreadSnapshot(tid)
        self.threads[tid] = snap
        while True:
            try:
                st = ptrace.wait(tid)
            except ptrace.PtraceError:
                self._lost(tid)
                return False
            if st.gone:
                self._lost(tid)
                return False
            if not st.stopped:
                continue
            snap.stopped_at = time.perf_counter()
            snap.resumed_at = None
            if st.event == ptrace.PTRACE_EVENT_STOP:
                # our interrupt, or the process's own job control (a group-stop)
                snap.group_stop = st.signal in ptrace.GROUP_STOP_SIGNALS
                snap.signal = 0
            elif st.event == 0:
                # a signal arrived first: it is delivered when the thread goes on
                snap.signal = st.signal
                snap.group_stop = False
            else:
                snap.signal = 0
            self.stopped.add(tid)
            return True

    def resume(self):
        """Let every stopped thread go on as it was: with its pending signal; a thread in
        the process's own group-stop stays stopped (PTRACE_LISTEN)."""
        for tid in list(self.stopped):
            snap = self.threads[tid]
            try:
                if snap.group_stop:
                    ptrace.listen(tid)
                else:
                    ptrace.cont(tid, snap.signal)
            except ptrace.PtraceError as exc:
                if exc.errno != errno.ESRCH:
                    raise
            snap.resumed_at = time.perf_counter()
            snap.signal = 0
            self.stopped.discard(tid)

    def detach(self):
        """Detach every thread: each must be in a ptrace-stop to be detached, so those
        running are stopped first; each goes with the signal it was stopped for."""
        try:
            running = [t for t in self.seized if t not in self.stopped]
            if running:
                try:
                    self.stop()
                except Exception:   # detach what can be detached
                    pass
            for tid in list(self.seized):
                snap = self.threads.get(tid)
                try:
                    ptrace.detach(tid, snap.signal if snap is not None else 0)
                except ptrace.PtraceError:
                    pass             # gone, or already detached
                if snap is not None and snap.resumed_at is None:
                    snap.resumed_at = time.perf_counter()
            self.seized.clear()
            self.stopped.clear()
        finally:
            self.memory.close()
            if self._old_term is not None:
                signal.signal(signal.SIGTERM, self._old_term)
                self._old_term = None

    def _lost(self, tid):
        if tid in self.seized:
            self.seized.remove(tid)
        self.stopped.discard(tid)
        self.threads.pop(tid, None)
        self.gone.add(tid)

    # --- what is copied while stopped ----------------------------------------------------
    def capture(self, stack_bytes=DEFAULT_STACK_BYTES, regions=None, notes=True, tids=None):
        """Registers, FP/TLS register sets (``notes``) and the stack of every stopped thread
        (or of ``tids``): ``stack_bytes`` from its sp, or ``stack_bytes(tid)`` (a profiler's
        copy as deep as that thread's last walk needed)."""
        rs = self.arch.regsets
        self.captures += 1
        if self._regions is None or self._regions[0] is not regions:
            ordered = sorted(regions or (), key=lambda r: r.start)
            self._regions = (regions, ordered, [r.start for r in ordered])
        _given, regions, starts = self._regions
        for tid in list(self.stopped) if tids is None else tids:
            snap = self.threads[tid]
            try:
                raw = ptrace.getregset(tid, NT_PRSTATUS, rs.user_regs_size)
            except ptrace.PtraceError:
                self._lost(tid)
                continue
            if raw is None or len(raw) < rs.user_regs_size:
                raise RegisterError(f"thread {tid}: PTRACE_GETREGSET gave no general registers")
            snap.regs = rs.unpack_user_regs(raw)
            snap.notes = {}
            for note, size in rs.ptrace_notes if notes else ():
                if rs.ptrace_covered.get(note) in snap.notes:
                    continue
                try:
                    data = ptrace.getregset(tid, note, size)
                except ptrace.PtraceError:
                    data = None
                if data:
                    snap.notes[note] = data
            size = stack_bytes(tid) if callable(stack_bytes) else stack_bytes
            if size:
                self._copy_stack(snap, size, regions, starts)

    def _copy_stack(self, snap, stack_bytes, regions, starts):
        sp = snap.regs.get(self.arch.sp)
        if sp is None:
            return
        # from the page holding the red zone's end: a page the walk reads there is then all
        # in the copy, not partly read live
        end = max(0, sp - RED_ZONE) + stack_bytes
        lo = max(0, sp - RED_ZONE) & ~(PAGE - 1)
        i = bisect_right(starts, sp) - 1          # the mapping holding sp, if any
        if i >= 0 and sp < regions[i].end:
            r = regions[i]
            lo, end = max(r.start, lo), min(r.end, end)
            snap.stack_end = r.end
        snap.stack_base = lo
        snap.stack = self.memory.read(lo, end - lo)


def _terminate(signum, frame):
    """SIGTERM while attached: unwind through the detach (a plain exit would leave it to the kernel)."""
    raise SystemExit(128 + signum)


class PtraceProcessState(ProcessState):
    """A live process by ptrace: from a Tracer's snapshots (stack copies) and live reads.

    With ``tracer`` stopped (``live_stacks``), every read is live: the walk runs while the
    threads wait, for values of locals that must be consistent.  Otherwise the threads may
    already run again: stacks come from the snapshot, other memory from the process."""

    def __init__(self, tracer, live_stacks=False, regions=None):
        super().__init__(tracer.arch, None)
        self.tracer = tracer
        self.pid = tracer.pid
        self.live_stacks = live_stacks
        # the mappings the caller read as it attached (1,000 threads' stacks: 2,000 lines)
        self._maps = regions if regions is not None else read_proc_maps(tracer.pid)
        self.live_reads_in_stacks = 0
        self._stack_index = None
        self._tids = None             # (what they were made from, thread ids, {tid: number})
        self.library_state = PtraceLibraryState(self)

    # --- threads and registers -----------------------------------------------------------
    def get_thread_ids(self):
        return list(self._thread_table()[1])

    def _thread_table(self):
        """(what it was made from, thread ids, {tid: number}), made again after a capture."""
        key = (self.tracer.captures, len(self.tracer.seized), len(self.tracer.threads))
        if self._tids is None or self._tids[0] != key:
            threads = self.tracer.threads
            planned = self.tracer.planned
            if planned:     # copied a share at a time: numbered as planned (GDB's numbers stay)
                tids = [t for t in planned if t in threads and threads[t].regs]
                numbers = {t: i + 1 for i, t in enumerate(planned)}
            else:
                tids = [t for t in self.tracer.seized if t in threads and threads[t].regs] or \
                    [t for t, s in threads.items() if s.regs]
                numbers = {t: i + 1 for i, t in enumerate(tids)}
            self._tids = (key, tids, numbers)
        return self._tids

    def get_default_thread(self):
        tids = self.get_thread_ids()
        if not tids:
            raise NoProcessError(f"process {self.pid}: no thread could be stopped")
        return self.pid if self.pid in tids else tids[0]

    def get_process_id(self):
        return self.pid

    def _snap(self, tid):
        snap = self.tracer.threads.get(tid)
        if snap is None or not snap.regs:
            raise ThreadStateError(f"thread {tid} has exited", "has exited")
        return snap

    def read_thread_registers(self, tid):
        return dict(self._snap(tid).regs)

    def read_thread_fp_register(self, tid, regno):
        snap = self._snap(tid)
        memo = self.cache.memo("fp-registers")
        if tid not in memo:
            memo.put(tid, self.arch.regsets.unpack_fp_notes(snap.notes))
        return memo[tid].get(regno)

    def read_thread_named_register(self, tid, name):
        snap = self._snap(tid)
        if name == self.arch.thread_pointer:
            return self.arch.regsets.thread_pointer(snap.regs, snap.notes)
        return None

    # --- memory ----------------------------------------------------------------------------
    def memory_regions(self):
        return self._maps

    def reset_regions(self, regions):
        """The process's mappings read again (a profiler's samples span library loads)."""
        self._maps = regions
        self._region_index = None

    def read_raw(self, addr, size):
        if not self.live_stacks:
            end = addr + size
            bases, snaps = self._stacks()
            i = bisect_right(bases, addr) - 1
            # the copy at or below addr, and the one after it (a read that runs into it)
            for snap in snaps[max(i, 0):i + 2]:
                lo, hi = snap.stack_base, snap.stack_base + len(snap.stack)
                if lo <= addr and end <= hi:
                    return snap.stack[addr - lo:end - lo]
                if addr < hi and end > lo:
                    return self._merged(addr, size, snap, lo, hi)
                if hi <= addr < snap.stack_end:
                    self.live_reads_in_stacks += 1       # deeper than the copy: read it live
                    break
        return self._live(addr, size)

    def _stacks(self):
        """The threads' stack copies sorted by address ([bases], [snapshots]), made again
        after each capture: a read finds its copy by bisection, not by trying every thread."""
        if self._stack_index is None or self._stack_index[0] != self.tracer.captures:
            snaps = sorted((s for s in self.tracer.threads.values() if s.stack), key=lambda s: s.stack_base)
            self._stack_index = (self.tracer.captures, [s.stack_base for s in snaps], snaps)
        return self._stack_index[1:]

    def _live(self, addr, size):
        try:
            data = self.tracer.memory.read(addr, size)
        except ptrace.PtraceError as exc:
            raise MemoryReadError(addr, size) from exc
        if len(data) < size:
            raise MemoryReadError(addr, size)
        return data

    def _merged(self, addr, size, snap, lo, hi):
        """A read (a cache page) partly inside a thread's stack copy: the copy where it has
        the bytes — the live stack has moved on since — and live memory for the rest."""
        try:
            live = self.tracer.memory.read(addr, size)
        except ptrace.PtraceError:
            live = b""
        a, b = max(addr, lo), min(addr + size, hi)
        if len(live) < a - addr or (len(live) < size and b < addr + size):
            raise MemoryReadError(addr, size)
        buf = bytearray(live.ljust(size, b"\0"))
        buf[a - addr:b - addr] = snap.stack[a - lo:b - lo]
        return bytes(buf)

    def detach(self):
        """Let the process go (its threads resumed as they were); the snapshots stay readable."""
        self.tracer.detach()

    def thread_label(self, tid):
        """(1-based number in the process's thread order, as GDB numbers them, tid)."""
        return self._thread_table()[2].get(tid), tid

    def get_executable_path(self):
        try:
            return os.readlink(f"/proc/{self.pid}/exe")
        except OSError:
            return None


class PtraceLibraryState(LibraryState):
    """The libraries of a live process: its executable, its link map, the vDSO."""

    def __init__(self, procstate):
        super().__init__()
        self.ps = procstate

    def scan(self):
        pid = self.ps.pid
        exe = f"/proc/{pid}/exe"
        if not os.path.exists(exe):
            return []
        auxv = read_proc_auxv(pid, self.ps.arch.ptr_size, self.ps.arch.byteorder) or {}

        def resolve(name):
            if name and os.path.isabs(name) and os.path.exists(name):
                return name
            root = os.path.join(f"/proc/{pid}/root", name.lstrip("/")) if name else ""
            return root if root and os.path.exists(root) else name
        libs, _r_debug = process_libraries(self.ps, exe, auxv, resolve)
        if libs:
            libs[0].name = self.ps.get_executable_path() or exe
        return libs


def _exiting(pid, tid):
    """Whether thread ``tid`` is gone or on its way out: the kernel refuses to attach to
    a thread in its exit (EPERM, not ESRCH) — a process whose threads come and go."""
    state = ptrace.proc_status(pid, tid).get("State")
    return state is None or state[:1] in ("Z", "X")

