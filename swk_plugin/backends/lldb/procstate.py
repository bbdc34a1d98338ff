"""LLDB back-end: ProcessState and LibraryState over LLDB's SB API.

Registers come from each thread's innermost frame (frame 0: the thread's own
registers), memory from SBProcess.ReadMemory in 4 KiB pages, libraries from
LLDB's module list with each module's load bias (a section's load address
minus its file address).  Everything read is kept until the process's stop id
changes: LLDB bumps it whenever the process resumes and stops again, so the
check on each use is exact and needs no event wiring.
"""
import lldb

from ...arch import get_architecture, host_architecture
from ...elf.module import open_module
from ...errors import MemoryReadError, NoProcessError, RegisterError
from ...linux.coredump import CoreFile
from ...linux.libraries import link_map_libraries, open_library_module, r_debug_of
from ...linux.sysroot import resolve_target_path
from ...linux.vdso import vdso_library
from ...procstate import Library, LibraryState, MemoryRegion, ProcessState

INVALID_ADDRESS = 0xFFFFFFFFFFFFFFFF
#: Where frame_registers puts the pointer-authentication code mask (not a DWARF register).
PAC_MASK_KEY = "code_mask"


def _arch_name(target):
    triple = target.GetTriple() or ""
    return triple.split("-")[0] or host_architecture().name


class LldbProcessState(ProcessState):
    """One LLDB process (live or a core), valid across stops."""

    def __init__(self, process):
        self.process = process
        self.target = process.GetTarget()
        super().__init__(get_architecture(_arch_name(self.target)), None)
        self.library_state = LldbLibraryState(self)
        self._stop_id = None
        self._threads = None
        self._core = None   # swk's own reader of the core LLDB loaded (False: none)
        self._pac = None    # the pointer-authentication code mask, once read this stop: (mask,)

    # --- staleness ---------------------------------------------------------------------
    def check_stop(self):
        """Forget everything read if the process ran since it was read."""
        sid = self.process.GetStopID()
        if sid != self._stop_id:
            if self._stop_id is not None:
                self.invalidate()
                self.library_state.mark_dirty()
            self._stop_id = sid

    def invalidate(self):
        super().invalidate()
        self._threads = None
        self._pac = None

    # --- pointer authentication ----------------------------------------------------------
    def code_address_mask(self):
        """The target's pointer-authentication code mask: LLDB's code address mask (LLDB 18+)
        when it names PAC bits, else the mask register lldb-server reports, as read with a
        thread's registers (frame_registers: never an SB call on a frame here, which a frame
        provider may have handed back to LLDB); None when LLDB knows neither (qemu's stub):
        the architecture's default then."""
        self.check_stop()
        arch = self.arch
        if not arch.pac_mask_registers:
            return None
        if self._pac is None:
            mask = None
            get_mask = getattr(self.process, "GetAddressMask", None)
            code = getattr(lldb, "eAddressMaskTypeCode", None)
            if get_mask is not None and code is not None:
                try:
                    mask = arch.usable_pac_mask(get_mask(code))
                except Exception:  # an LLDB whose signature differs: the register below
                    mask = None
            self._pac = (mask,)
        if self._pac[0] is not None:
            return self._pac[0]
        for regs in self._regs.values():       # registers already read this stop
            mask = arch.usable_pac_mask(regs.get(PAC_MASK_KEY))
            if mask is not None:
                return mask
        return None

    def is_alive(self):
        return self.process.IsValid() and self.process.GetState() not in (
            lldb.eStateInvalid, lldb.eStateExited, lldb.eStateDetached, lldb.eStateUnloaded)

    # --- threads -------------------------------------------------------------------------
    def _thread_map(self):
        if self._threads is None:
            self._threads = {}
            for i in range(self.process.GetNumThreads()):
                th = self.process.GetThreadAtIndex(i)
                if th.IsValid():
                    self._threads[th.GetThreadID()] = th
        return self._threads

    def get_thread_ids(self):
        return list(self._thread_map())

    def get_default_thread(self):
        th = self.process.GetSelectedThread()
        if th.IsValid():
            return th.GetThreadID()
        ids = self.get_thread_ids()
        if not ids:
            raise NoProcessError("swk-bt: the process has no threads")
        return ids[0]

    def sb_thread(self, tid):
        th = self._thread_map().get(tid)
        if th is None:
            th = self.process.GetThreadByID(tid)
            if not th.IsValid():
                raise RegisterError(f"no thread with id {tid}")
        return th

    def thread_label(self, tid):
        th = self._thread_map().get(tid)
        return (th.GetIndexID() if th is not None else None), tid

    def get_process_id(self):
        return self.process.GetProcessID() or None

    # --- registers ----------------------------------------------------------------------
    def prime_registers(self, tid, regs):
        """Take ``regs`` as ``tid``'s registers for this stop (the frame provider reads
        them from LLDB's own frame 0 before handing that frame back to LLDB: afterwards
        LLDB deadlocks on any question about it)."""
        self._regs[tid] = dict(regs)

    def read_thread_registers(self, tid):
        return frame_registers(self.sb_thread(tid).GetFrameAtIndex(0), self.arch)

    def read_thread_fp_register(self, tid, regno):
        entry = self.arch.fp_registers.get(regno)
        if entry is None:
            return None
        frame = self.sb_thread(tid).GetFrameAtIndex(0)
        for name in entry[1]:
            data = register_bytes(frame, name)
            if data is not None:
                return data
        return None

    def read_thread_named_register(self, tid, name):
        data = register_bytes(self.sb_thread(tid).GetFrameAtIndex(0), name)
        return self.arch.unpack_int(data) if data else None

    # --- memory --------------------------------------------------------------------------
    def read_raw(self, addr, size):
        err = lldb.SBError()
        try:
            data = self.process.ReadMemory(addr, size, err)
        except (OverflowError, TypeError, SystemError):
            data = None
        if err.Success() and data is not None and len(data) == size:
            return bytes(data)
        if self.is_core():
            # LLDB does not read a core's file-backed code that the core does not hold
            # (a library's .text): swk's core reader takes it from the mapped file, or,
            # when LLDB cannot say which core it loaded (LLDB < 15), the module's file.
            core = self._core_reader()
            if core is not None:
                return core.read(addr, size)
            data = self._read_module_file(addr, size)
            if data is not None:
                return data
        raise MemoryReadError(addr, size)

    def is_core(self):
        return self.process.GetPluginName() in ("elf-core", "minidump", "mach-o-core")

    def _read_module_file(self, addr, size):
        libs = self.library_state
        if libs._libs is None or libs.scanning:
            return None
        lib = libs.get_library_at_addr(addr)
        mod = lib.module if lib is not None else None
        if mod is None or lib.path.startswith("["):
            return None
        try:
            data = mod.read_vaddr(addr - lib.base, size)
        except Exception:
            return None
        return data if data is not None and len(data) == size else None

    def _core_reader(self):
        if self._core is None:
            self._core = False
            path = self.core_path()
            if path:
                try:
                    self._core = CoreFile(path)
                except Exception:
                    self._core = False
        return self._core or None

    def core_path(self):
        """The core file LLDB has loaded, or None (a live process, or an LLDB that cannot say)."""
        if not self.is_core():
            return None
        try:
            spec = self.process.GetCoreFile()
        except AttributeError:  # LLDB < 15
            return None
        return spec.fullpath if spec.IsValid() else None

    def memory_regions(self):
        """A live process: SBProcess.GetMemoryRegions() (/proc/PID/maps through
        lldb-server).  A core: the core's own segments, read by swk (LLDB reports the
        file-backed code a core does not hold as unmapped, "---").  None when unknown:
        steppers then go by the modules' executable segments."""
        core = self.is_core()
        if core:
            regions = core_regions(self.core_path())
            if regions is not None:
                return regions
        try:
            infos = self.process.GetMemoryRegions()
        except Exception:  # an LLDB without it: steppers fall back to modules
            return None
        out = []
        info = lldb.SBMemoryRegionInfo()
        for i in range(infos.GetSize()):
            if not infos.GetMemoryRegionAtIndex(i, info):
                continue
            if hasattr(info, "IsMapped") and not info.IsMapped():
                continue
            start, end = info.GetRegionBase(), info.GetRegionEnd()
            if end <= start:
                continue
            out.append(MemoryRegion(start, end, info.IsReadable(), info.IsWritable(),
                                    info.IsExecutable(), info.GetName() or ""))
        if core:
            out = self._core_regions_with_modules(out)
        return out or None

    def _core_regions_with_modules(self, regions):
        """LLDB's regions of a core it cannot name (LLDB < 15), with the modules' code put
        back: LLDB reports file-backed code the core does not hold as "---"."""
        spans = []
        for lib in self.library_state.get_libraries():
            mod = lib.module
            if mod is None:
                continue
            for lo, hi in mod.exec_spans():
                spans.append(MemoryRegion(lib.base + lo, lib.base + hi, True, False, True, lib.path))
        keep = [r for r in regions if (r.readable or r.writable or r.executable)
                and not any(r.start < sp.end and sp.start < r.end for sp in spans)]
        return sorted(keep + spans, key=lambda r: r.start)


_CORE_REGIONS = {}


def core_regions(path):
    """The mappings of an ELF core, read once per core file."""
    if not path:
        return None
    regions = _CORE_REGIONS.get(path)
    if regions is None:
        try:
            with CoreFile(path) as core:
                regions = core.regions()
        except Exception:  # not an ELF core swk can read: go by the modules
            regions = []
        _CORE_REGIONS.clear()
        _CORE_REGIONS[path] = regions
    return regions or None


class LldbLibraryState(LibraryState):
    """Mirrors LLDB's module list (the executable, shared libraries, the vDSO)."""

    def __init__(self, procstate):
        super().__init__()
        self.ps = procstate
        self.dirty = True
        self.scanning = False

    def ensure_current(self):
        self.ps.check_stop()
        super().ensure_current()

    def scan(self):
        self.scanning = True
        try:
            return self._scan_modules()
        finally:
            self.scanning = False

    def _scan_modules(self):
        target = self.ps.target
        exe = target.GetExecutable()
        exe_path = exe.fullpath if exe.IsValid() else None
        libs = []
        for i in range(target.GetNumModules()):
            mod = target.GetModuleAtIndex(i)
            lib = self._library(target, mod, exe_path)
            if lib is None:
                continue
            if getattr(lib, "is_aout", False):
                libs.insert(0, lib)
            else:
                libs.append(lib)
        if libs and getattr(libs[0], "is_aout", False) and not self.ps.is_core():
            known = {lib.base for lib in libs} | {lib.path for lib in libs}
            libs += [lib for lib in self._from_link_map(libs[0])
                     if lib.base not in known and lib.path not in known]
        return libs

    def _from_link_map(self, aout):
        """The objects on the target's own link map: LLDB on a remote stub it has no platform
        sysroot for (qemu-user's) lists the executable and what it saw dlopen'd, not the
        libraries loaded at start-up.  The link map is found through the executable's
        DT_DEBUG; a library's path is the target's, else found under the architecture's
        sysroots (linux/sysroot.py)."""
        try:
            exe_mod = open_module(aout.path)
            r_debug = r_debug_of(self.ps, exe_mod, aout.base)
        except Exception:  # an unreadable executable: LLDB's list as it is
            return []
        arch = self.ps.arch
        return link_map_libraries(self.ps, r_debug, lambda name: resolve_target_path(name, arch) or name,
                                  skip=(aout.path,))

    def _library(self, target, mod, exe_path):
        bias = module_bias(target, mod)
        if bias is None:
            return None  # not loaded in this process
        spec = mod.GetFileSpec()
        path = spec.fullpath or spec.GetFilename() or ""
        if spec.GetFilename() == "[vdso]" or path.endswith("[vdso]") or path.startswith("[vdso"):
            return self._vdso(target, mod)
        if not path:
            return None
        lib = Library(path, bias, open_library_module)
        if exe_path and path == exe_path:
            lib.is_aout = True
        return lib

    def _vdso(self, target, mod):
        ehdr = mod.GetObjectFileHeaderAddress().GetLoadAddress(target)
        if ehdr == INVALID_ADDRESS:
            return None
        try:
            return vdso_library(self.ps.read_memory, ehdr)
        except Exception:  # an unreadable vDSO only costs its own frames
            return None


def register_bytes(frame, name):
    """The raw bytes of an SBFrame's register ``name``, or None."""
    if not frame.IsValid():
        return None
    val = frame.FindRegister(name)
    if not val.IsValid():
        return None
    data = val.GetData()
    err = lldb.SBError()
    raw = data.ReadRawData(err, 0, data.GetByteSize())
    return bytes(raw) if err.Success() and raw else None


def frame_registers(frame, arch):
    """{DWARF regno: value} of an SBFrame's registers."""
    if not frame.IsValid():
        raise RegisterError("the thread has no frame: is it running?")
    regs = {}
    mask = (1 << (8 * arch.ptr_size)) - 1
    for num, name in enumerate(arch.general or arch.dwarf_names):
        if not name:
            continue
        val = frame.FindRegister(name)
        if not val.IsValid():
            continue
        err = lldb.SBError()
        v = val.GetValueAsUnsigned(err, 0)
        if err.Success():
            regs[num] = v & mask
    if arch.pc not in regs:
        pc = frame.GetPC()
        if pc != INVALID_ADDRESS:
            regs[arch.pc] = pc
    name = arch.pac_mask_registers.get("lldb")
    if name:                                    # the code mask lldb-server reports (PAC targets)
        val = frame.FindRegister(name)
        if val.IsValid():
            err = lldb.SBError()
            v = val.GetValueAsUnsigned(err, 0)
            if err.Success():
                regs[PAC_MASK_KEY] = v
    return regs


def module_bias(target, mod):
    """A module's load bias (load address minus file address of any loaded section),
    or None when none of its sections is loaded."""
    for j in range(mod.GetNumSections()):
        sec = mod.GetSectionAtIndex(j)
        bias = _section_bias(target, sec)
        if bias is not None:
            return bias
    return None


def _section_bias(target, sec):
    if not sec.IsValid():
        return None
    load = sec.GetLoadAddress(target)
    if load != INVALID_ADDRESS and sec.GetFileAddress() != INVALID_ADDRESS and sec.GetByteSize():
        return (load - sec.GetFileAddress()) & INVALID_ADDRESS
    for k in range(sec.GetNumSubSections()):
        bias = _section_bias(target, sec.GetSubSectionAtIndex(k))
        if bias is not None:
            return bias
    return None
