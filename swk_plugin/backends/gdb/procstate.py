"""GDB back-end: ProcessState and LibraryState over GDB's Python API.

Registers of each thread are read once per stop (switching threads and back
when needed); memory is read by page through the inferior and cached until
GDB reports a stop, a resume, or a memory or register change.
"""
import os
import re

import gdb

from ...arch import from_elf_machine, get_architecture, host_architecture
from ...errors import MemoryReadError, NoProcessError, RegisterError, ThreadStateError
from ...linux import linkmap
from ...linux.auxv import AT_ENTRY, read_proc_auxv
from ...linux.libraries import process_libraries
from ...linux.maps import read_proc_maps
from ...linux.sysroot import elf_machine_is, resolve_target_path
from ...procstate import LibraryState, ProcessState
from ...cache import LazyPattern

_AUXV_LINE = LazyPattern(r"^(\d+)\s+\S+.*?\s(0x[0-9a-fA-F]+|\d+)(?:\s+\".*\")?\s*$")


def thread_tid(thread):
    pid, lwp, tid = thread.ptid
    return lwp or tid or pid


def arch_name(inferior):
    """GDB's name of an inferior's architecture ("i386:x86-64", "i386"), or None."""
    try:
        return inferior.architecture().name()
    except (gdb.error, RuntimeError):
        return None


def architecture(gdb_arch):
    """swk's Architecture of a gdb.Architecture: by its name, and by its byte order where one
    name is two of swk's (``powerpc:common64``: ppc64le and big-endian ppc64).  GDB 13 names no
    byte order, but reads an integer from bytes in the architecture's own."""
    arch = get_architecture(gdb_arch.name())
    try:
        order = "little" if int(gdb.Value(b"\x01\x00", gdb_arch.integer_type(16, False))) == 1 else "big"
    except (gdb.error, AttributeError, TypeError, ValueError):
        return arch
    return arch if order == arch.byteorder else from_elf_machine(arch.elf_machine, 8 * arch.ptr_size, order)


def selected_thread():
    """gdb.selected_thread(), or None when no thread is selected, as after the selected
    thread exited in non-stop mode (GDB 13 then raises SystemError)."""
    try:
        th = gdb.selected_thread()
    except (SystemError, RuntimeError, gdb.error):
        return None
    return th if th is not None and th.is_valid() else None


def value_bytes(value):
    """The bytes of a gdb.Value not in memory (a register): GDB 13's Values have no
    ``bytes``, but cast to an array of bytes of the same size."""
    size = value.type.sizeof
    raw = value.cast(gdb.lookup_type("unsigned char").array(size - 1))
    return bytes(int(raw[i]) for i in range(size))


class GdbProcessState(ProcessState):
    def __init__(self, inferior=None):
        self.inferior = inferior or gdb.selected_inferior()
        #: GDB's name of the inferior's architecture when this state was made (None: unknown).
        self.gdb_arch_name = name = arch_name(self.inferior)
        super().__init__(architecture(self.inferior.architecture()) if name else host_architecture(), None)
        self.library_state = GdbLibraryState(self)
        self._thread_map = None
        #: The target's pointer-authentication code mask and whether GDB knows it (GDB then
        #: strips signed return addresses itself), read once per stop outside any unwinder:
        #: (mask or None, GDB knows it) once read, else None.
        self._pac = None

    # --- threads ---------------------------------------------------------------------
    def _threads(self):
        """tid -> gdb.InferiorThread.  Kept for a stop, but made anew when a thread in it
        has exited meanwhile (in non-stop mode threads come and go while others are
        stopped, and GDB 13 has no event for a thread's exit)."""
        m = self._thread_map
        if m is None or not all(t.is_valid() for t in m.values()):
            threads = sorted((t for t in self.inferior.threads() if t.is_valid()), key=lambda t: t.num)
            m = self._thread_map = {thread_tid(t): t for t in threads}
        return m

    def invalidate(self):
        super().invalidate()
        self._thread_map = None
        self._pac = None

    # --- pointer authentication --------------------------------------------------------------
    def _read_pac(self):
        """(mask or None, whether GDB has the mask register) from the newest frame; never
        inside an unwinder (GDB 13 must not be asked for frames there): (None, False) then."""
        if self._pac is not None:
            return self._pac
        name = self.arch.pac_mask_registers.get("gdb")
        if not name:
            return None, True                    # nothing to strip: GDB needs no mask
        if TARGET.in_unwinder:
            return None, False
        try:
            value = int(gdb.newest_frame().read_register(name))
            self._pac = (self.arch.usable_pac_mask(value), True)
        except (gdb.error, ValueError, RuntimeError):
            self._pac = (None, False)            # GDB does not know the mask (qemu 7's stub)
        return self._pac

    def code_address_mask(self):
        return self._read_pac()[0]

    def debugger_strips_signed_ra(self):
        """Whether GDB's own unwinders strip signed return addresses (they do where GDB
        reads the target's mask register; False while that is unknown)."""
        return self._read_pac()[1]

    def get_thread_ids(self):
        return list(self._threads())

    def get_default_thread(self):
        th = selected_thread()
        if th is None or th.inferior != self.inferior:
            ids = self.get_thread_ids()
            if not ids:
                raise NoProcessError("no process: start the program or load a core file")
            if th is None:
                # non-stop mode: the selected thread exited ("The current thread has terminated")
                raise NoProcessError("swk-bt: no thread is selected (the selected thread has exited): "
                                     "select one with `thread N`, or use swk-bt -all")
            return ids[0]
        return thread_tid(th)

    def gdb_thread(self, tid):
        th = self._threads().get(tid)
        if th is None:
            raise ThreadStateError(f"thread {tid} has exited", "has exited")
        return th

    def thread_label(self, tid):
        th = self._threads().get(tid)
        return (th.num if th is not None else None), tid

    def get_process_id(self):
        return self.inferior.pid or None

    # --- registers -------------------------------------------------------------------
    def read_thread_registers(self, tid):
        th = self.gdb_thread(tid)
        try:
            return self._read_thread_registers(th)
        except RuntimeError:
            if th.is_valid():
                raise
            # the thread exited meanwhile ("Thread no longer exists.")
            raise ThreadStateError(f"thread {tid} has exited", "has exited") from None

    def _read_thread_registers(self, th):
        mask = (1 << (8 * self.arch.ptr_size)) - 1

        def read(newest):
            regs = {}
            for num, name in enumerate(self.arch.general or self.arch.dwarf_names):
                if not name:
                    continue
                try:
                    regs[num] = int(newest.read_register(name)) & mask
                except (gdb.error, ValueError):
                    pass
            return regs
        return self._on_thread(th, read)

    def _on_thread(self, th, fn):
        """fn(the thread's newest gdb.Frame), with ``th`` selected meanwhile (GDB reads
        registers of the selected thread only); the user's selection is put back."""
        if not th.is_valid() or th.is_exited():
            raise ThreadStateError(f"thread {th.num} has exited", "has exited")
        if th.is_running():
            raise ThreadStateError(f"thread {th.num} is running: interrupt it first", "is running")
        current = selected_thread()
        frame = None
        if current is None:
            th.switch()   # no thread is selected (non-stop: it exited): GDB reads the selected one
        elif current != th:
            try:
                frame = gdb.selected_frame()
            except gdb.error:
                frame = None
            th.switch()
        try:
            return fn(gdb.newest_frame())
        except gdb.error as exc:
            raise RegisterError(str(exc)) from None
        finally:
            if current is not None and current != th:
                current.switch()
                if frame is not None:
                    try:
                        frame.select()
                    except gdb.error:
                        pass

    def read_thread_fp_register(self, tid, regno):
        entry = self.arch.fp_registers.get(regno)
        if entry is None:
            return None
        size, names = entry

        def read(newest):
            for name in names:
                try:
                    value = newest.read_register(name)
                except (gdb.error, ValueError):
                    continue
                return value_bytes(value)
            return None
        return self._on_thread(self.gdb_thread(tid), read)

    def read_thread_named_register(self, tid, name):
        th = self.gdb_thread(tid)

        words = self.arch.thread_pointer_words if name == self.arch.thread_pointer else None

        def read(newest):
            try:
                return int(newest.read_register(name)) & self.arch.address_mask
            except (gdb.error, ValueError):
                pass
            if words:       # a pointer GDB shows as two 32-bit registers (s390x's a0:a1)
                try:
                    hi, lo = (int(newest.read_register(w)) & 0xFFFFFFFF for w in words)
                except (gdb.error, ValueError):
                    return None
                return hi << 32 | lo
            return None
        value = self._on_thread(th, read)
        if value is None and name == self.arch.thread_pointer:
            # no register for it (i386's %gs base): glibc's thread handle, a pthread_t, is
            # the thread pointer (its TCB)
            try:
                handle = th.handle()
            except (gdb.error, RuntimeError, AttributeError):
                handle = None
            if handle:
                value = self.arch.unpack_pointer(bytes(handle)) or None
        return value

    # --- mappings ----------------------------------------------------------------------------
    def memory_regions(self):
        """Live local process: /proc/PID/maps (read once per stop).  A core loaded in
        GDB: the core's own segments.  Otherwise None (steppers fall back to modules)."""
        conn = self.inferior.connection
        kind = conn.type if conn is not None else None
        if kind == "native" and self.inferior.pid:
            return read_proc_maps(self.inferior.pid)
        if kind != "core":
            return None
        core = core_file_path()
        if core:
            return core_regions(core)
        return None

    # --- memory ----------------------------------------------------------------------------
    def read_raw(self, addr, size):
        try:
            return self.inferior.read_memory(addr, size).tobytes()
        except (gdb.MemoryError, gdb.error, OverflowError, ValueError) as exc:
            raise MemoryReadError(addr, size) from None


class GdbLibraryState(LibraryState):
    """Mirrors GDB's shared-library list from the dynamic linker's link map."""

    def __init__(self, procstate):
        super().__init__()
        self.ps = procstate
        self.dirty = True
        self.r_debug = 0
        self._auxv = None

    def ready_for_unwinder(self):
        """Whether the library list can be made inside an unwinder: the auxiliary vector is
        known (read before, or readable without GDB commands: a local process, a core).  A
        remote target's (qemu's stub) is read by `info auxv`, at a stop (Session.on_stop)."""
        if self._auxv is not None and self._auxv[0] == self._auxv_key():
            return True
        conn = self.ps.inferior.connection
        return conn is None or conn.type in ("native", "core")

    def _auxv_key(self):
        return (self.ps.inferior.pid, TARGET.core_path, self.ps.inferior.progspace.filename
                if self.ps.inferior.progspace else None)

    def auxv(self):
        """The auxiliary vector, read once per process.  A local process's comes from
        /proc/PID/auxv and a core's from the core itself, so an unwinder (where GDB
        commands must not run) can have it; `info auxv` is the fallback elsewhere."""
        key = self._auxv_key()
        if self._auxv is not None and self._auxv[0] == key:
            return self._auxv[1]
        vec = read_auxv(self.ps.inferior, self.ps.arch)
        if vec is None:
            if TARGET.in_unwinder:
                return {}
            vec = {}
            try:
                text = gdb.execute("info auxv", to_string=True)
            except gdb.error:
                text = ""
            for line in text.splitlines():
                m = _AUXV_LINE.match(line.strip())
                if m:
                    vec[int(m.group(1))] = int(m.group(2), 0)
            if AT_ENTRY not in vec:
                entry = _gdb_entry_point()
                if entry:
                    # only where the program is placed: not kept, `info auxv` is asked again
                    return {**vec, AT_ENTRY: entry}
        if vec:
            self._auxv = (key, vec)
        return vec

    def _objfile_paths(self):
        paths = {}
        for obj in gdb.objfiles():
            name = obj.filename
            if name and obj.is_valid():
                paths.setdefault(os.path.basename(name), name)
        return paths

    def _resolver(self):
        """name -> host path for a link-map name: as is when it exists, else the objfile
        GDB loaded for it, else relative to the process's working directory."""
        objpaths = self._objfile_paths()
        conn = self.ps.inferior.connection
        native = conn is not None and conn.type == "native"
        pid = self.ps.get_process_id() if native else None    # a remote stub's pid is not ours
        arch = self.ps.arch

        def resolve(name):
            if name and os.path.isabs(name) and os.path.exists(name) and (
                    not arch.sysroots or elf_machine_is(name, arch)):
                return name
            base = os.path.basename(name)
            if base in objpaths:
                return objpaths[base]
            if pid and name:
                cand = os.path.join(f"/proc/{pid}/cwd", name)
                if os.path.exists(cand):
                    return os.path.realpath(cand)
            return resolve_target_path(name, arch) or name
        return resolve

    def _r_debug_symbol(self):
        """&_r_debug as GDB knows it (never inside an unwinder: no GDB commands there)."""
        if TARGET.in_unwinder:
            return 0
        try:
            return int(gdb.parse_and_eval("(unsigned long)&_r_debug"))
        except gdb.error:
            return 0

    def scan(self):
        inferior = self.ps.inferior
        exe = inferior.progspace.filename if inferior.progspace else None
        if exe is None:
            return []
        libs, self.r_debug = process_libraries(self.ps, exe, self.auxv(), self._resolver(),
                                               self._r_debug_symbol)
        return libs

    def get_lib_trap_address(self):
        """r_debug.r_brk: where the dynamic linker calls on every library change."""
        self.ensure_current()
        if not self.r_debug:
            return 0
        try:
            return linkmap.r_brk(self.ps.read_pointer, self.r_debug, self.ps.arch.ptr_size)
        except MemoryReadError:
            return 0


_ENTRY_RE = LazyPattern(r"^\s*Entry point:\s*(0x[0-9a-fA-F]+)", re.M)


def _gdb_entry_point():
    """The program's entry point as GDB placed it (`info files`, GDB's own record: no
    request to the target), for a remote target whose `info auxv` said nothing (qemu's stub
    under load): a PIE program's bias comes from it.  0 when GDB has none."""
    try:
        m = _ENTRY_RE.search(gdb.execute("info files", to_string=True))
    except gdb.error:
        return 0
    return int(m.group(1), 16) if m else 0


_CORE_RE = LazyPattern(r"core dump file:\s*`(.+?)'", re.S)
_CORE_REGIONS = {}


class TargetInfo:
    """What swk must know of GDB's target without running GDB commands inside an
    unwinder: refreshed by events and commands, read by everyone."""
    core_path = None
    in_unwinder = False

    @classmethod
    def refresh(cls):
        if cls.in_unwinder:
            return
        try:
            text = gdb.execute("info target", to_string=True)
        except gdb.error:
            text = ""
        m = _CORE_RE.search(text)
        cls.core_path = m.group(1) if m else None


TARGET = TargetInfo


def core_file_path():
    """The core file GDB has loaded, or None."""
    return TARGET.core_path


def read_auxv(inferior, arch):
    """{AT_*: value} from /proc/PID/auxv (local process) or the loaded core, else None."""
    conn = inferior.connection
    kind = conn.type if conn is not None else None
    if kind == "native" and inferior.pid:
        return read_proc_auxv(inferior.pid, arch.ptr_size, arch.byteorder)
    if kind == "core" and TARGET.core_path:
        from ...linux.coredump import CoreFile    # a core's reader only for a core
        try:
            with CoreFile(TARGET.core_path) as core:
                return dict(core.auxv)
        except Exception:
            return None
    return None


def core_regions(path):
    regions = _CORE_REGIONS.get(path)
    if regions is None:
        from ...linux.coredump import CoreFile
        try:
            with CoreFile(path) as core:
                regions = core.regions()
        except Exception:
            regions = []
        _CORE_REGIONS.clear()
        _CORE_REGIONS[path] = regions
    return regions or None
