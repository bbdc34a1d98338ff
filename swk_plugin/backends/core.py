"""The core-file back-end: a ProcessState and LibraryState over a Linux core file
(swk_plugin.linux.coredump), for walking a crashed process with no debugger."""
from ..elf.module import ElfModule
from ..errors import BadFileError, MemoryReadError, RegisterError
from ..linux.auxv import AT_ENTRY, AT_PHDR, AT_SYSINFO_EHDR
from ..linux import linkmap
from ..linux.coredump import NOT_ELF, CoreFile
from ..linux.libraries import r_debug_of
from ..linux.siginfo import SigInfo
from ..linux.vdso import vdso_library
from ..procstate import Library, LibraryState, ProcessState


class CoreLibraryState(LibraryState):
    """The loaded objects of a core: one Library per mapped ELF file, plus the vDSO."""

    def __init__(self, core):
        super().__init__()
        self.core = core

    def scan(self):
        core = self.core
        libs = []
        aout = None
        try:
            exe_mapped = core.exe_mapped_path
            paths = core.mapped_paths()
        except (MemoryReadError, BadFileError, OSError):
            exe_mapped, paths = None, []
        anchor = core.auxv.get(AT_PHDR) or core.auxv.get(AT_ENTRY)
        for path in paths:
            for inst in core.load_instances(path):
                try:
                    lib = self._library(path, inst)
                except (MemoryReadError, BadFileError, OSError):
                    lib = None
                if lib is None:
                    continue
                if aout is None and path == exe_mapped and (
                        not anchor or any(m.start <= anchor < m.end for m in inst)):
                    lib.is_aout = True
                    aout = lib
                else:
                    libs.append(lib)
        if aout is None and exe_mapped is not None:
            for lib in libs:  # AT_PHDR outside every instance: take the first
                if lib.mapped_path == exe_mapped:
                    libs.remove(lib)
                    lib.is_aout = True
                    aout = lib
                    break
        if aout is not None:
            libs.insert(0, aout)
            self._link_map_names(aout, libs)
        vdso = self._vdso()
        if vdso is not None:
            libs.append(vdso)
        return libs

    def _link_map_names(self, aout, libs):
        """Name each library as the dynamic linker's list does (the path it opened:
        /lib32/libc.so.6 where the core's file note has /usr/lib32/libc.so.6), as GDB
        names them; the file read stays the one the core mapped."""
        core = self.core
        try:
            mod = aout.module
            r_debug = r_debug_of(core, mod, aout.base) if mod is not None else 0
            objects = linkmap.link_map(core.read_pointer, core.read, r_debug, core.arch.ptr_size) \
                if r_debug else []
        except (MemoryReadError, BadFileError, OSError):
            return
        by_base = {}
        for lib in libs:
            if lib is not aout:
                by_base.setdefault(lib.base, lib)
        for l_addr, name in objects[1:]:
            lib = by_base.get(l_addr)
            if lib is not None and name and name.startswith("/"):
                lib.name = core.host_path(name)   # under the sysroot, as GDB names it

    def _library(self, path, inst):
        """A Library for one load instance of a mapped file, or None if it is
        not loaded code (a data file, an ELF mapped as data, /dev/zero...)."""
        core = self.core
        info = core.elf_info(path)
        if info is NOT_ELF:
            return None
        ranges = core.exec_ranges(inst)
        if not ranges:
            return None
        lib = Library(core.host_path(path), core.load_bias(inst), module_loader=_load_file_module,
                      ranges=ranges)
        lib.mapped_path = path
        return lib

    def _vdso(self):
        ehdr = self.core.auxv.get(AT_SYSINFO_EHDR)
        if not ehdr:
            return None
        try:
            return vdso_library(self.core.read, ehdr)
        except (MemoryReadError, BadFileError):
            return None


def _load_file_module(lib):
    return ElfModule(path=lib.path)


class CoreProcessState(ProcessState):
    """ProcessState over a core file: memory, registers and threads as dumped."""

    def __init__(self, core_path, exe_path=None, sysroot=None):
        self.core = CoreFile(core_path, sysroot=sysroot, exe_path=exe_path)
        super().__init__(self.core.arch, CoreLibraryState(self.core))
        self._index = {}
        for i, t in enumerate(self.core.threads):
            self._index.setdefault(t.tid, i)
        first = self.core.threads[0]
        self.signal_info = self.core.siginfo or (SigInfo(first.signal) if first.signal else None)

    def read_raw(self, addr, size):
        return self.core.read(addr, size)

    def code_address_mask(self):
        """The core's pointer-authentication code mask (NT_ARM_PAC_MASK), when it has one."""
        return self.core.pac_mask

    def read_thread_registers(self, thread):
        i = self._index.get(thread)
        if i is None:
            raise RegisterError(f"no thread {thread} in core file {self.core.path}")
        return dict(self.core.threads[i].regs)

    def read_thread_fp_register(self, thread, regno):
        i = self._index.get(thread)
        if i is None:
            return None
        t = self.core.threads[i]
        memo = self.cache.memo("fp-registers")
        if thread not in memo:
            memo.put(thread, self.arch.regsets.unpack_fp_notes(t.notes))
        return memo[thread].get(regno)

    def read_thread_named_register(self, thread, name):
        i = self._index.get(thread)
        if i is None or name != self.arch.thread_pointer:
            return None
        t = self.core.threads[i]
        return self.arch.regsets.thread_pointer(t.regs, t.notes)

    def get_thread_ids(self):
        return [t.tid for t in self.core.threads]

    def get_process_id(self):
        if self.core.pid:
            return self.core.pid
        return None

    def memory_regions(self):
        return self.core.regions()

    def thread_label(self, thread):
        """(GDB's thread number for this core, tid): GDB numbers core threads
        in note order, from 1."""
        i = self._index.get(thread)
        return (i + 1 if i is not None else None), thread

    def get_executable_path(self):
        path = super().get_executable_path()
        return path or self.core.host_path(self.core.exe_mapped_path)

    def close(self):
        self.core.close()
