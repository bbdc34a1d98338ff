"""A target described by callbacks, as libunwind's remote unwinding describes one
(libunwind-remote-accessors: ``unw_create_addr_space(accessors, byte_order)``).

``AddressSpace(accessors, byte_order=0, caching="global")`` takes an object (or a dict)
with libunwind's callbacks as Python callables and gives a ProcessState — so a Walker —
over it: a gdbserver connection, a minidump, a simulator, a snapshot, anything a user can
read memory and registers from.

``byte_order`` is unw_create_addr_space's: 0 (or None) for the target's own (its
architecture's), else ``"little"`` / ``"big"`` or <endian.h>'s ``__LITTLE_ENDIAN`` (1234) /
``__BIG_ENDIAN`` (4321).  It picks the architecture of that byte order where a machine has
two (ppc64le / ppc64); one the target's machine does not have is refused, as libunwind
refuses it.  Every word swk reads out of the target's memory (pointers, saved registers,
variables' values) is read in it.

The callbacks, in swk's Python form:

``access_mem(addr, size) -> bytes``  (required) target memory as it is (its bytes in the
    target's byte order: swk converts the words it reads, where libunwind's C callback
    hands over one word converted to the host's order); raise, or return fewer bytes, where
    it is unreadable.  Reading only: swk never writes (libunwind's ``write`` flag).
``access_reg(regno, thread) -> int``  (required) a general register of the thread's innermost
    frame, by DWARF number, as a number (so in no byte order); raise (any exception) where it
    is unknown.
``access_fpreg(regno, thread) -> bytes``  floating-point / vector registers, their bytes in
    the target's byte order.
``find_proc_info(ip) -> ProcInfo | None``  the procedure at ``ip``: its bounds, name and, as
    libunwind's unwind_info, an UnwindRule for ``ip`` (swk_plugin.rule) — how JIT code
    without ELF tells swk how to unwind it.  Asked before swk's own steppers.
``put_unwind_info(proc_info)``  told when swk is done with a ProcInfo.
``get_proc_name(ip) -> (name, offset) | None``  a name where swk finds no symbol.
``get_dyn_info_list_addr() -> int``  libunwind's dynamic-info list (`_U_dyn_info_list`);
    swk reads no such list and says so (``dyn_info_list``), it never guesses.
``resume(...)``  never called: swk never resumes a target.
and swk's own additions: ``threads() -> [thread]`` (default: [0]), ``libraries() ->
[(path, load bias)]`` (ELF files whose CFI, symbols and DWARF swk may use), ``regions()
-> [(start, end, perms)]`` (the mappings, perms as /proc's "r-xp": code is told from
data by them), ``thread_pointer(thread)`` (for thread-local variables), ``arch()`` (an
architecture name; default: this machine's).  Without libraries, get_proc_name's
procedure starts (ip - offset) stand for symbols: the frame-pointer stepper and the
stack-height analysis use them.

Caching, as unw_set_caching_policy: ``"none"`` (every read asks access_mem), ``"global"``
(memory and registers kept until ``flush_cache()``), ``"per_thread"`` (kept per thread, so
one thread's walk never sees another's stale pages; flushed the same way).

Every back-end is one: ``AddressSpace.of(process_state)`` gives the accessors of a GDB, LLDB,
core or ptrace ProcessState, and walking through them is walking the back-end itself.
"""
from ..arch import UnsupportedArchitecture, from_elf_machine, get_architecture, host_architecture
from ..elf.module import open_module
from ..errors import MemoryReadError, RegisterError, SwkError
from ..procstate import Library, LibraryState, MemoryRegion, ProcessState
from ..stepper import PRIORITY_FRAMEFUNC, FrameStepper, Gcf
from ..symlookup import ElfSymbolLookup
from ..unwind.apply import caller_by_rule
from ..walker import Walker

CACHING = ("none", "global", "per_thread")
#: unw_create_addr_space's byte orders: <endian.h>'s __LITTLE_ENDIAN and __BIG_ENDIAN, swk's
#: words for them, and 0 / None: the target's own.
BYTE_ORDERS = {0: None, None: None, "little": "little", "big": "big", 1234: "little", 4321: "big"}


class ProcInfo:
    """libunwind's unw_proc_info_t, as swk uses it."""
    __slots__ = ("start_ip", "end_ip", "name", "unwind_info")

    def __init__(self, start_ip, end_ip, name=None, unwind_info=None):
        self.start_ip, self.end_ip, self.name, self.unwind_info = start_ip, end_ip, name, unwind_info


def _callback(accessors, name):
    if isinstance(accessors, dict):
        return accessors.get(name)
    return getattr(accessors, name, None)


def _architecture(accessors, byte_order):
    """The target's Architecture: the one its ``arch`` callback names (else this machine's),
    or its machine's other one of ``byte_order`` (ppc64 for ppc64le)."""
    arch_fn = _callback(accessors, "arch")
    arch = get_architecture(arch_fn()) if callable(arch_fn) else host_architecture()
    if byte_order is None or byte_order == arch.byteorder:
        return arch
    try:
        return from_elf_machine(arch.elf_machine, 8 * arch.ptr_size, byte_order)
    except UnsupportedArchitecture:
        raise SwkError(f"swk: byte order {byte_order}: {arch.name} is {arch.byteorder}-endian and swk knows "
                       f"no {byte_order}-endian {arch.name}") from None


class AddressSpace:
    def __init__(self, accessors, byte_order=0, caching="global"):
        try:
            order = BYTE_ORDERS[byte_order]
        except (KeyError, TypeError):
            raise SwkError(f"swk: byte order {byte_order!r}: say 0 (the target's), 'little' or 'big' "
                           f"(__LITTLE_ENDIAN, __BIG_ENDIAN)") from None
        if caching not in CACHING:
            raise SwkError(f"swk: caching {caching!r}: one of {', '.join(CACHING)}")
        for required in ("access_mem", "access_reg"):
            if not callable(_callback(accessors, required)):
                raise SwkError(f"swk: the accessors have no {required} callback")
        self.accessors = accessors
        #: The target's Architecture, of the byte order asked for.
        self.arch = _architecture(accessors, order)
        #: "little" or "big": the target's words, as every read of its memory takes them.
        self.byte_order = self.arch.byteorder
        self.caching = caching
        self._states = []

    def callback(self, name):
        fn = _callback(self.accessors, name)
        return fn if callable(fn) else None

    def set_caching_policy(self, caching):
        if caching not in CACHING:
            raise SwkError(f"swk: caching {caching!r}: one of {', '.join(CACHING)}")
        self.caching = caching
        self.flush_cache()

    def flush_cache(self):
        """Forget what was read (unw_flush_cache): the target changed."""
        for ps in self._states:
            ps.invalidate()

    def process_state(self):
        ps = AccessorProcessState(self)
        self._states.append(ps)
        return ps

    def walker(self, **kw):
        """A Walker over this address space, find_proc_info's rules asked first."""
        ps = self.process_state()
        walker = Walker(ps, symbol_lookup=ProcNameLookup(self), **kw)
        if self.callback("find_proc_info") is not None:
            walker.add_stepper(ProcInfoStepper(walker, self))
        return walker

    @classmethod
    def of(cls, ps, caching="global"):
        """The accessors of an existing ProcessState (any back-end's): the same contract."""
        libs = ps.library_state

        class _Of:
            def access_mem(self, addr, size):
                return ps.read_raw(addr, size)

            def access_reg(self, regno, thread):
                return ps.read_thread_registers(thread)[regno]

            def access_fpreg(self, regno, thread):
                return ps.read_thread_fp_register(thread, regno)

            def threads(self):
                return ps.get_thread_ids()

            def libraries(self):
                return [(lib.path, lib.base) for lib in libs.get_libraries()] if libs is not None else []

            def arch(self):
                return ps.arch.name

            def regions(self):
                regs = ps.memory_regions()
                return [(r.start, r.end, r.perms) for r in regs] if regs else []

            def thread_pointer(self, thread):
                return ps.get_thread_pointer(thread)
        return cls(_Of(), ps.arch.byteorder, caching)


class AccessorLibraryState(LibraryState):
    def __init__(self, space):
        super().__init__()
        self.space = space

    def scan(self):
        fn = self.space.callback("libraries")
        if fn is None:
            return []
        libs = []
        for path, base in fn() or ():
            libs.append(Library(path, base, lambda lib: _open(lib.path)))
        if libs:
            libs[0].is_aout = True
        return libs


def _open(path):
    return open_module(path)


class ProcNameLookup(ElfSymbolLookup):
    """Names from the ELF files the accessors list, else from their get_proc_name."""

    def __init__(self, space, walker=None):
        super().__init__(walker)
        self.space = space

    def lookup_at_addr(self, addr):
        hit = super().lookup_at_addr(addr)
        if hit is not None:
            return hit
        fn = self.space.callback("get_proc_name")
        try:
            got = fn(addr) if fn is not None else None
        except Exception:   # a user's callback failing only loses the name
            got = None
        if not got:
            return None
        name, offset = got
        return name, _NamedAt(addr - offset)


class _NamedAt:
    """The opaque object of a get_proc_name answer: where the procedure starts."""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class AccessorProcessState(ProcessState):
    """A ProcessState whose every read is a callback (with the AddressSpace's caching)."""

    def __init__(self, space):
        super().__init__(space.arch, None)
        self.space = space
        self.library_state = AccessorLibraryState(space)
        self._thread_pages = {}

    def get_thread_ids(self):
        fn = self.space.callback("threads")
        return list(fn()) if fn is not None else [0]

    def memory_regions(self):
        fn = self.space.callback("regions")
        if fn is None:
            return None
        out = []
        for start, end, perms in fn() or ():
            perms = str(perms)
            out.append(MemoryRegion(start, end, perms[:1] == "r", perms[1:2] == "w", perms[2:3] == "x"))
        return out

    def read_raw(self, addr, size):
        try:
            data = self.space.callback("access_mem")(addr, size)
        except MemoryReadError:
            raise
        except Exception as exc:
            raise MemoryReadError(addr, size) from exc
        if data is None or len(data) < size:
            raise MemoryReadError(addr, size)
        return bytes(data[:size])

    def read_memory(self, addr, size):
        if self.space.caching == "none":
            return self.read_raw(addr, size)
        return super().read_memory(addr, size)

    def get_registers(self, thread=None):
        if thread is None:
            thread = self.get_default_thread()
        if self.space.caching == "none":
            return dict(self.read_thread_registers(thread))
        if self.space.caching == "per_thread":
            # a walk starts with its thread's registers: its reads go to that thread's pages
            self._pages = self._thread_pages.setdefault(thread, {})
        return super().get_registers(thread)

    def read_thread_registers(self, thread):
        fn = self.space.callback("access_reg")
        regs = {}
        names = self.arch.dwarf_names
        for regno, name in enumerate(names):
            if not name:
                continue
            try:
                value = fn(regno, thread)
            except Exception:   # a register the target does not know
                continue
            if value is not None:
                regs[regno] = int(value) & self.arch.address_mask
        if self.arch.pc not in regs or self.arch.sp not in regs:
            raise RegisterError(f"thread {thread}: access_reg gave no pc or stack pointer")
        return regs

    def read_thread_fp_register(self, thread, regno):
        fn = self.space.callback("access_fpreg")
        if fn is None:
            return None
        try:
            data = fn(regno, thread)
        except Exception:   # unknown: values in this register are <optimized out>
            return None
        return bytes(data) if data is not None else None

    def read_thread_named_register(self, thread, name):
        fn = self.space.callback("thread_pointer")
        if fn is None or name != self.arch.thread_pointer:
            return None
        try:
            return fn(thread)
        except Exception:
            return None

    def invalidate(self):
        super().invalidate()
        self._thread_pages.clear()

    @property
    def dyn_info_list(self):
        """get_dyn_info_list_addr's answer, or None: swk reads no libunwind dynamic info."""
        fn = self.space.callback("get_dyn_info_list_addr")
        return fn() if fn is not None else None


class ProcInfoStepper(FrameStepper):
    """The rules a user's find_proc_info gives (libunwind's unwind_info), before swk's own."""
    name = "ProcInfoStepper"
    priority = PRIORITY_FRAMEFUNC - 0x10      # before every stepper of swk's own
    trust = "cfi"

    def __init__(self, walker, space):
        super().__init__(walker)
        self.space = space

    def get_caller_frame(self, frame):
        ip = frame.lookup_pc
        info = self.space.callback("find_proc_info")(ip)
        if info is None or getattr(info, "unwind_info", None) is None:
            return Gcf.NOT_ME, "find_proc_info has no rule here"
        try:
            caller, _cfa = caller_by_rule(frame, info.unwind_info, self.process_state)
        except MemoryReadError as exc:
            return Gcf.FAILED, f"find_proc_info's rule reads unreadable memory ({exc})"
        finally:
            put = self.space.callback("put_unwind_info")
            if put is not None:
                put(info)
        return Gcf.SUCCESS, caller


__all__ = ["AddressSpace", "ProcInfo", "AccessorProcessState", "ProcInfoStepper"]
