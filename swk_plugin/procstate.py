"""ProcessState and LibraryState: the contract between the walker and a back-end.

A back-end (GDB, LLDB, a core file, ptrace, a user's callbacks, synthetic
memory in tests) subclasses both, as pwndbg's debugger interface is
subclassed per debugger.  What it must provide:

ProcessState
  ``read_raw(addr, size)``            target memory, or MemoryReadError
  ``read_thread_registers(thread)``   {DWARF regno: value} of a thread's innermost frame
  ``get_thread_ids()``                the threads (any hashable id; the OS tid by convention)
  and may provide ``memory_regions()`` (its mappings), ``thread_label(thread)``,
  ``get_process_id()``, ``get_default_thread()``.
LibraryState
  ``scan()``                          the loaded files now: [Library]

Everything else is shared here: page-cached memory, registers read once per
thread per stop, pointer reads, the library index and load/unload news.

What a back-end must drop, and when (swk_plugin/cache.py has the whole rule):

* on every stop, resume, memory or register write: ``ProcessState.invalidate()``
  — pages, registers, mappings, walks and everything in ``ProcessState.cache``;
* when the library list may have changed (a debugger's objfile or module
  event, a dlopen seen at a stop): ``LibraryState.mark_dirty()``; the next
  lookup rescans, and if the list changed its ``cache`` is dropped, its
  ``generation`` moves on and listeners (the steppers) hear of each load and
  unload.
"""
import abc
import bisect

from .cache import Cache
from .errors import MemoryReadError, RegisterError

PAGE = 4096


class MemoryRegion:
    """One mapping of the target's address space, as far as a back-end knows it."""
    __slots__ = ("start", "end", "readable", "writable", "executable", "name")

    def __init__(self, start, end, readable=True, writable=False, executable=False, name=""):
        self.start, self.end = start, end
        self.readable, self.writable, self.executable = readable, writable, executable
        self.name = name

    def __contains__(self, addr):
        return self.start <= addr < self.end

    @property
    def perms(self):
        return ("r" if self.readable else "-") + ("w" if self.writable else "-") + ("x" if self.executable else "-")

    def describe(self):
        """How swk-bt names a frame's mapping outside any module: [name perms start-end]."""
        return f"[{self.name or 'anonymous'} {self.perms} 0x{self.start:x}-0x{self.end:x}]"

    def __repr__(self):
        return f"<MemoryRegion 0x{self.start:x}-0x{self.end:x} {self.perms} {self.name}>"


class ProcessState(abc.ABC):
    """Access to one target process (spec: ProcessState).

    Memory is cached by page until ``invalidate()``: a stop, a resume, or a
    write by the user makes the back-end call it.  Registers are read once per
    thread per stop.
    """

    def __init__(self, arch, library_state=None):
        self.arch = arch
        self.library_state = library_state
        self.walker = None
        self._pages = {}
        self._bad_pages = set()
        self._regs = {}
        self._fpregs = {}
        self._region_index = None
        self.generation = 0
        #: What this stop's memory and registers decide (dropped by invalidate()).
        self.cache = Cache("stop")

    # --- what a back-end provides -------------------------------------------------
    @abc.abstractmethod
    def read_raw(self, addr, size):
        """Read target memory, or raise MemoryReadError."""

    @abc.abstractmethod
    def read_thread_registers(self, thread):
        """Return {dwarf regno: value} for the innermost frame of ``thread``."""

    @abc.abstractmethod
    def get_thread_ids(self):
        """The target's threads."""

    def read_thread_named_register(self, thread, name):
        """A register outside the general set by the back-end's name for it (the thread
        pointer, ``arch.thread_pointer``), as an integer; None where it cannot be read."""
        return None

    def read_thread_fp_register(self, thread, regno):
        """The bytes of floating-point or vector register ``regno`` (one of
        ``arch.fp_registers``) in the innermost frame of ``thread``; None where the
        back-end cannot read it."""
        return None

    def get_default_thread(self):
        threads = self.get_thread_ids()
        if not threads:
            raise RegisterError("the target has no threads")
        return threads[0]

    def get_process_id(self):
        return None

    def get_executable_path(self):
        aout = self.library_state.get_aout() if self.library_state else None
        return aout.path if aout else None

    def memory_regions(self):
        """The target's mappings if the back-end knows them, else None."""
        return None

    def region_at(self, addr):
        """The MemoryRegion holding ``addr``, or None (unknown, or unmapped)."""
        if self._region_index is None:
            regions = sorted(self.memory_regions() or (), key=lambda r: r.start)
            self._region_index = ([r.start for r in regions], regions)
        starts, regions = self._region_index
        i = bisect.bisect_right(starts, addr) - 1
        if i >= 0 and addr < regions[i].end:
            return regions[i]
        return None

    def knows_regions(self):
        self.region_at(0)
        return bool(self._region_index[1])

    def thread_label(self, thread):
        """(debugger thread number or None, OS thread id) for output."""
        return None, thread

    # --- shared --------------------------------------------------------------------
    @property
    def address_width(self):
        return self.arch.ptr_size

    def get_architecture(self):
        return self.arch

    def code_address_mask(self):
        """The bits of a code pointer that are a pointer-authentication code, as the target
        says (a core's note, a debugger's register); None when unknown (the architecture's
        default) or when the architecture has none.  Back-ends that know override this."""
        return None

    def strip_return_address(self, addr):
        """A signed return address (UnwindRule.ra_signed) as the pc it is."""
        return self.arch.strip_pointer_auth(addr, self.code_address_mask())

    def invalidate(self):
        """Forget everything read: the target ran or was changed."""
        self._pages.clear()
        self._bad_pages.clear()
        self._regs.clear()
        self._fpregs.clear()
        self._region_index = None
        self.cache.clear()
        self.generation += 1

    @property
    def library_cache(self):
        """The cache whose lifetime is the current library list (the stop's without one)."""
        libs = self.library_state
        return libs.cache if libs is not None else self.cache

    def get_registers(self, thread=None):
        if thread is None:
            thread = self.get_default_thread()
        regs = self._regs.get(thread)
        if regs is None:
            regs = self._regs[thread] = dict(self.read_thread_registers(thread))
        return regs

    def get_reg_value(self, reg, thread=None):
        regs = self.get_registers(thread)
        if isinstance(reg, str):
            reg = self.arch.reg_number(reg)
        try:
            return regs[reg]
        except KeyError:
            raise RegisterError(f"register {self.arch.reg_name(reg)} unavailable") from None

    def get_thread_pointer(self, thread=None):
        """The thread pointer of ``thread`` (where its TLS blocks are found from)."""
        if thread is None:
            thread = self.get_default_thread()
        name = self.arch.thread_pointer
        if name is None:
            raise RegisterError(f"swk does not know the thread pointer of {self.arch.name}")
        regs = self.get_registers(thread)
        if name not in regs:
            regs[name] = self.read_thread_named_register(thread, name)
        if regs[name] is None:
            raise RegisterError(f"register {name} unavailable")
        return regs[name]

    def get_fpreg_value(self, reg, thread=None):
        """The bytes of a floating-point or vector register (DWARF number or name) of
        ``thread``'s innermost frame (libunwind's access_fpreg, reading only): read once
        per stop, only when asked, since most walks never need one."""
        if thread is None:
            thread = self.get_default_thread()
        if isinstance(reg, str):
            reg = self.arch.fp_register_number(reg)
        key = (thread, reg)
        if key not in self._fpregs:
            if reg not in self.arch.fp_registers:
                raise RegisterError(f"register {reg} is not a floating-point or vector register "
                                    f"of {self.arch.name}")
            self._fpregs[key] = self.read_thread_fp_register(thread, reg)
        value = self._fpregs[key]
        if value is None:
            raise RegisterError(f"register {self.arch.fp_register_name(reg)} unavailable")
        return value

    def _page(self, base):
        page = self._pages.get(base)
        if page is not None:
            return page
        if base in self._bad_pages:
            return None
        try:
            page = self.read_raw(base, PAGE)
            if len(page) != PAGE:
                raise MemoryReadError(base)
        except MemoryReadError:
            self._bad_pages.add(base)
            return None
        self._pages[base] = page
        return page

    def read_memory(self, addr, size):
        """Read ``size`` bytes at ``addr`` through the page cache."""
        if addr < 0 or addr + size > (1 << (8 * self.arch.ptr_size)):
            raise MemoryReadError(addr & ((1 << 64) - 1), size, "address out of range")
        base = addr & ~(PAGE - 1)
        end = addr + size
        if end <= base + PAGE:
            page = self._page(base)
            if page is not None:
                off = addr - base
                return page[off:off + size]
            return self._read_uncached(addr, size)
        chunks = []
        a = addr
        while a < end:
            b = a & ~(PAGE - 1)
            n = min(end, b + PAGE) - a
            page = self._page(b)
            if page is None:
                chunks.append(self._read_uncached(a, n))
            else:
                chunks.append(page[a - b:a - b + n])
            a += n
        return b"".join(chunks)

    def _read_uncached(self, addr, size):
        """A page could not be read whole (a partly mapped page): read exactly."""
        return self.read_raw(addr, size)

    def read_pointer(self, addr):
        """A pointer in the target's byte order (``arch.byteorder``)."""
        arch = self.arch
        n = arch.ptr_size
        off = addr & (PAGE - 1)
        if off <= PAGE - n:                 # the hot path of every walk: one cached page
            page = self._pages.get(addr - off)
            if page is not None:
                return int.from_bytes(page[off:off + n], arch.byteorder)
        return int.from_bytes(self.read_memory(addr, n), arch.byteorder)

    def read_uint(self, addr, size):
        return int.from_bytes(self.read_memory(addr, size), self.arch.byteorder)

    def is_readable(self, addr, size=1):
        try:
            self.read_memory(addr, size)
            return True
        except MemoryReadError:
            return False


class Library:
    """A loaded DSO (spec: LibAddrPair) with its load bias and, lazily, its ELF."""

    def __init__(self, path, base, module_loader=None, name=None, ranges=None):
        self.path = path
        self.base = base
        self.name = name or path
        self._loader = module_loader
        self._module = None
        self._module_error = None
        #: Executable address ranges [start, end) in the target, once known.
        self.ranges = list(ranges or ())

    @property
    def module(self):
        """The ElfModule, or None if the file cannot be read (reason in module_error)."""
        if self._module is None and self._module_error is None and self._loader is not None:
            try:
                self._module = self._loader(self)
            except Exception as exc:  # a bad file disables only what depends on it
                self._module_error = str(exc) or exc.__class__.__name__
        return self._module

    @property
    def module_error(self):
        return self._module_error

    def as_pair(self):
        return (self.path, self.base)

    def __iter__(self):
        return iter(self.as_pair())

    def __eq__(self, other):
        if isinstance(other, Library):
            return self.as_pair() == other.as_pair()
        if isinstance(other, tuple):
            return self.as_pair() == other
        return NotImplemented

    def __hash__(self):
        return hash(self.as_pair())

    def __repr__(self):
        return f"<Library {self.path} @0x{self.base:x}>"


LIBRARY_LOAD = "load"
LIBRARY_UNLOAD = "unload"


class LibraryState(abc.ABC):
    """The target's loaded DSOs (spec: LibraryState).

    Back-ends implement ``scan()`` returning the current list of Library;
    this class keeps an address index and tells listeners (the StepperGroup)
    of loads and unloads.
    """

    def __init__(self):
        self._libs = None
        self._starts = []
        self._spans = []
        self._listeners = []
        self._last = None         # the span found last: most lookups hit it again
        self.dirty = False
        self.generation = 0
        #: What the loaded files and their addresses decide (dropped when the list changes).
        self.cache = Cache("libraries")

    @abc.abstractmethod
    def scan(self):
        """The libraries loaded now, the executable first if known: [Library]."""

    def add_listener(self, fn):
        """fn(library, change) is called with LIBRARY_LOAD / LIBRARY_UNLOAD."""
        self._listeners.append(fn)

    def notify_of_update(self):
        """The library list may have changed: rescan and tell listeners the difference."""
        old = {lib.as_pair(): lib for lib in (self._libs or ())}
        fresh = self.scan()
        new = {lib.as_pair(): lib for lib in fresh}
        for key, lib in new.items():
            if key in old:  # keep the already loaded module and caches
                new[key] = old[key]
        changed = new.keys() != old.keys()
        self._set(list(new.values()), changed)
        for key, lib in old.items():
            if key not in new:
                self._tell(lib, LIBRARY_UNLOAD)
        for key, lib in new.items():
            if key not in old:
                self._tell(lib, LIBRARY_LOAD)

    def _tell(self, lib, change):
        for fn in self._listeners:
            fn(lib, change)

    def _set(self, libs, changed=True):
        self._libs = libs
        spans = []
        for lib in libs:
            for start, end in self._lib_spans(lib):
                spans.append((start, end, lib))
        spans.sort(key=lambda s: s[0])
        self._spans = spans
        self._starts = [s[0] for s in spans]
        if changed:
            self.cache.clear()
            self.generation += 1

    @staticmethod
    def _lib_spans(lib):
        if lib.ranges:
            return lib.ranges
        mod = lib.module
        if mod is None:
            return []
        return [(lib.base + lo, lib.base + hi) for lo, hi in mod.load_spans()]

    def mark_dirty(self):
        """The library list may have changed (an event said so): rescan before the next use."""
        self.dirty = True

    def ensure_current(self):
        """Rescan now if the list may have changed (or was never read)."""
        if self._libs is None or self.dirty:
            self.dirty = False
            self.notify_of_update()

    def get_libraries(self, allow_refresh=False):
        if allow_refresh:
            self.dirty = True
        self.ensure_current()
        return list(self._libs)

    def get_library_at_addr(self, addr):
        self.ensure_current()
        last = self._last
        if last is not None and last[0] <= addr < last[1] and last[3] == self.generation:
            return last[2]
        i = bisect.bisect_right(self._starts, addr) - 1
        while i >= 0:
            start, end, lib = self._spans[i]
            if start <= addr < end:
                self._last = (start, end, lib, self.generation)
                return lib
            if i > 0 and self._spans[i - 1][1] > addr:
                i -= 1
                continue
            break
        return None

    def _find(self, pred):
        self.ensure_current()
        for lib in self._libs:
            if pred(lib.path.rsplit("/", 1)[-1]):
                return lib
        return None

    def get_libc(self):
        return self._find(lambda n: n.startswith("libc.so") or n.startswith("libc-"))

    def get_libthread(self):
        lib = self._find(lambda n: n.startswith("libpthread"))
        return lib or self.get_libc()  # glibc >= 2.34 has threads inside libc

    def get_aout(self):
        self.ensure_current()
        for lib in self._libs:
            if getattr(lib, "is_aout", False):
                return lib
        return self._libs[0] if self._libs else None

    def get_lib_trap_address(self):
        """The dynamic linker's r_brk (spec: getLibTrapAddress); 0 when unknown."""
        return 0
