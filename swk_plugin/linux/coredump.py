"""A Linux core file: the threads, registers and mapped files its notes describe.

``CoreFile`` reads a core as written by the kernel or by GDB's ``gcore`` (and
qemu's, which has no NT_FILE) on swk_plugin.elf.core's ElfCore: NT_PRSTATUS
per thread (registers laid out as the architecture's ``regsets`` say),
NT_PRPSINFO, NT_AUXV, NT_SIGINFO, NT_FILE and the floating-point notes.

Memory the core left out (a PT_LOAD with ``p_filesz < p_memsz``, or no
PT_LOAD at all: unmodified file-backed text that the kernel's
``coredump_filter`` or gcore skipped) is read from the mapped file named in
NT_FILE, with the sysroot prefix or the executable override applied.  A core
without NT_FILE falls back to the dynamic linker's ``r_debug`` list read from
the core's own memory.
"""
import bisect
import collections
import os
import struct
import threading

from ..arch import host_architecture
from ..elf.core import ElfCore
from ..elf.header import PF_R, PF_W, PF_X, ElfImage, NotElf
from ..errors import BadFileError, MemoryReadError
from ..procstate import MemoryRegion
from . import linkmap
from .auxv import AT_ENTRY, AT_EXECFN, AT_PAGESZ, AT_PHDR, AT_SYSINFO_EHDR, parse_auxv
from .siginfo import SigInfo
from .sysroot import elf_machine_is, find_in_sysroot

NT_PRSTATUS = 1
NT_FPREGSET = 2
NT_PRPSINFO = 3
NT_AUXV = 6
NT_X86_XSTATE = 0x202
NT_ARM_PAC_MASK = 0x406
NT_SIGINFO = 0x53494749
NT_FILE = 0x46494C45

#: elf_info's answer for a mapped file that is not an ELF image.
NOT_ELF = object()


def _cstr(raw):
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")


class FileMapping(collections.namedtuple("FileMapping", "start end offset path")):
    """One NT_FILE entry: [start, end) maps ``path`` from byte ``offset``."""
    __slots__ = ()


def prstatus_head(desc, long, byteorder):
    """(pr_cursig, pr_sigpend, pr_sighold, pr_pid, pr_ppid, pr_pgrp, pr_sid) of an NT_PRSTATUS
    in the core's ``byteorder``: struct elf_prstatus's pr_info (3 ints), pr_cursig (a short,
    padded to the long-sized pr_sigpend and pr_sighold), then four ints; ``long``: the
    architecture's sizeof(long)."""
    e = "<" if byteorder == "little" else ">"
    cursig = struct.unpack_from(e + "h", desc, 12)[0]
    at = 16
    sigpend = int.from_bytes(desc[at:at + long], byteorder)
    sighold = int.from_bytes(desc[at + long:at + 2 * long], byteorder)
    return (cursig, sigpend, sighold, *struct.unpack_from(e + "iiii", desc, at + 2 * long))


class CoreThread:
    """One NT_PRSTATUS: an OS thread and its registers at the time of the dump."""
    __slots__ = ("tid", "regs", "signal", "siginfo", "fpregs", "xstate", "notes",
                 "ppid", "pgrp", "sid", "sigpend", "sighold", "arch")

    def __init__(self, tid, regs, signal, arch):
        self.tid, self.regs, self.signal, self.arch = tid, regs, signal, arch
        self.siginfo = None
        self.fpregs = None   # NT_FPREGSET: raw user_fpregs_struct
        self.xstate = None   # NT_X86_XSTATE: raw XSAVE area
        #: The thread's register-set notes by type (NT_FPREGSET and the "LINUX" ones):
        #: the architecture's regsets unpack what it needs (unpack_fp_notes).
        self.notes = {}
        self.ppid = self.pgrp = self.sid = None
        self.sigpend = self.sighold = 0

    @property
    def pc(self):
        return self.regs.get(self.arch.pc)

    @property
    def sp(self):
        return self.regs.get(self.arch.sp)

    def __repr__(self):
        return f"<CoreThread {self.tid} pc=0x{self.pc or 0:x}>"


class CoreFile(ElfCore):
    """A Linux ELF core file.

    ``threads`` (CoreThread, in note order: the first got the signal),
    ``mappings`` (FileMapping from NT_FILE), ``auxv`` ({AT_*: value}),
    ``pid``, ``exe_name`` (pr_fname), ``psargs``, ``siginfo`` (the first
    NT_SIGINFO), ``segments`` (PT_LOADs sorted by address), ``arch`` and
    ``warnings`` (one line each: e.g. a truncated core).

    ``sysroot`` prefixes the absolute paths of mapped files; ``exe_path``
    replaces the main executable's path (the file mapped at AT_PHDR).
    """

    def __init__(self, path, sysroot=None, exe_path=None):
        self.sysroot = os.fspath(sysroot) if sysroot else None
        self.exe_path = os.fspath(exe_path) if exe_path else None
        self.threads = []
        self.mappings = []
        self.auxv = {}
        self.pid = None
        self.ppid = None
        self.uid = self.gid = None
        self.exe_name = None
        self.psargs = None
        self.siginfo = None
        self.pac_mask = None
        self.page_size = 4096
        self._cur_thread = None
        self._lock = threading.Lock()
        self._files = {}        # host path -> (file, size) or (None, reason)
        self._fmaps = None      # file mappings (NT_FILE, or derived from r_debug)
        self._fmap_starts = []
        self._by_path = None
        self._exe_mapped = False
        self._elf_cache = {}
        self._regions = None
        self._host_paths = {}   # target path -> host path
        super().__init__(path)

    def close(self):
        with self._lock:
            for fh, _ in self._files.values():
                if fh is not None:
                    fh.close()
            self._files.clear()
        super().close()

    def __repr__(self):
        return f"<CoreFile {self.path} pid={self.pid} threads={len(self.threads)}>"

    def parsed(self):
        if not self.threads:
            raise self.bad("core file has no thread (NT_PRSTATUS) notes")
        if self.auxv.get(AT_PAGESZ) and not self.mappings:
            self.page_size = self.auxv[AT_PAGESZ]

    # --- notes ---------------------------------------------------------------------
    def note(self, name, ntype, desc, where):
        if name == b"CORE":
            if ntype == NT_PRSTATUS:
                self._note_prstatus(desc, where)
            elif ntype == NT_PRPSINFO:
                self._note_prpsinfo(desc, where)
            elif ntype == NT_AUXV:
                self._note_auxv(desc)
            elif ntype == NT_FILE:
                self._note_file(desc, where)
            elif ntype == NT_SIGINFO:
                if len(desc) >= 12:
                    si = SigInfo.from_bytes(desc, self.arch.ptr_size, self.byteorder)
                    if self._cur_thread is not None and self._cur_thread.siginfo is None:
                        self._cur_thread.siginfo = si
                    if self.siginfo is None:
                        self.siginfo = si
            elif ntype == NT_FPREGSET:
                if self._cur_thread is not None:
                    self._cur_thread.fpregs = self._cur_thread.notes[ntype] = bytes(desc)
        elif name == b"LINUX":
            if self._cur_thread is not None:
                self._cur_thread.notes.setdefault(ntype, bytes(desc))
                if ntype == NT_X86_XSTATE:
                    self._cur_thread.xstate = bytes(desc)
            if ntype == NT_ARM_PAC_MASK:
                mask = self.arch.pac_mask_from_note(bytes(desc))     # per thread, the same for all
                if mask is not None and self.pac_mask is None:
                    self.pac_mask = mask

    def _note_prstatus(self, desc, where):
        rs = self.arch.regsets
        need = rs.prstatus_reg_offset + rs.user_regs_size
        if len(desc) < need:
            raise self.bad(f"malformed NT_PRSTATUS note at offset 0x{where:x} "
                           f"({len(desc)} bytes, {self.arch.name} needs {need})")
        cursig, sigpend, sighold, tid, ppid, pgrp, sid = prstatus_head(desc, rs.long, self.byteorder)
        regs = rs.unpack_user_regs(desc[rs.prstatus_reg_offset:need])
        thread = CoreThread(tid, regs, cursig, self.arch)
        thread.ppid, thread.pgrp, thread.sid = ppid, pgrp, sid
        thread.sigpend, thread.sighold = sigpend, sighold
        self.threads.append(thread)
        self._cur_thread = thread

    def _note_prpsinfo(self, desc, where):
        lay = self.arch.regsets.prpsinfo       # field offsets differ per architecture
        if len(desc) < lay["size"]:
            raise self.bad(f"malformed NT_PRPSINFO note at offset 0x{where:x} ({len(desc)} bytes)")
        e = self.header.endian
        uid_fmt = e + ("II" if lay["uid_size"] == 4 else "HH")
        self.uid, self.gid = struct.unpack_from(uid_fmt, desc, lay["uid"])
        self.pid, self.ppid = struct.unpack_from(e + "ii", desc, lay["pid"])
        self.exe_name = _cstr(desc[lay["fname"]:lay["fname"] + 16])
        self.psargs = _cstr(desc[lay["psargs"]:lay["psargs"] + 80]).rstrip()

    def _note_auxv(self, desc):
        self.auxv.update(parse_auxv(desc, self.arch.ptr_size, self.byteorder))

    def _note_file(self, desc, where):
        # count, page size, then (start, end, page offset) per file, then the names: longs.
        bad = self.bad(f"malformed NT_FILE note at offset 0x{where:x}")
        w, order = self.arch.ptr_size, self.byteorder

        def word(pos):
            return int.from_bytes(desc[pos:pos + w], order)
        if len(desc) < 2 * w:
            raise bad
        count, page = word(0), word(w)
        if count > (len(desc) - 2 * w) // (3 * w) or page == 0 or page & (page - 1):
            raise bad
        names = bytes(desc[2 * w + 3 * w * count:]).split(b"\0")
        if len(names) < count:
            raise bad
        self.page_size = page
        for i in range(count):
            at = 2 * w + 3 * w * i
            start, end, pgoff = word(at), word(at + w), word(at + 2 * w)
            if end < start:
                raise bad
            path = names[i].decode("utf-8", "surrogateescape")
            self.mappings.append(FileMapping(start, end, pgoff * page, path))

    # --- mapped files ------------------------------------------------------------------
    @property
    def file_mappings(self):
        """NT_FILE's mappings sorted by address (or, without NT_FILE, ones
        rebuilt from the dynamic linker's list of loaded objects)."""
        if self._fmaps is None:
            self._set_fmaps([])  # guards the derivation's own memory reads
            if self.mappings:
                self._set_fmaps(self.mappings)
            else:
                try:
                    self._derive_mappings()
                except (MemoryReadError, BadFileError, OSError, struct.error, ValueError) as exc:
                    self.warnings.append(f"{self.path}: no NT_FILE note and the loaded objects "
                                         f"could not be recovered ({exc})")
        return self._fmaps

    def _set_fmaps(self, maps):
        self._fmaps = sorted(maps)
        self._fmap_starts = [m.start for m in self._fmaps]
        self._by_path = None

    def mapping_at(self, addr):
        """The FileMapping containing ``addr``, or None."""
        maps = self.file_mappings
        i = bisect.bisect_right(self._fmap_starts, addr) - 1
        if i >= 0 and addr < maps[i].end:
            return maps[i]
        return None

    def mappings_of(self, path):
        """Mappings of one mapped file, lowest file offset first."""
        if self._by_path is None:
            by = collections.OrderedDict()
            for m in self.file_mappings:
                by.setdefault(m.path, []).append(m)
            for ms in by.values():
                ms.sort(key=lambda m: (m.offset, m.start))
            self._by_path = by
        return list(self._by_path.get(path, ()))

    def mapped_paths(self):
        """Distinct mapped files, in address order."""
        self.mappings_of(None)
        return list(self._by_path)

    @property
    def exe_mapped_path(self):
        """The main executable's path as the core names it: the file mapped at
        AT_PHDR (or holding AT_ENTRY), else the first mapped file."""
        if self._exe_mapped is False:
            self._exe_mapped = None
            for key in (AT_PHDR, AT_ENTRY):
                addr = self.auxv.get(key)
                m = self.mapping_at(addr) if addr else None
                if m is not None:
                    self._exe_mapped = m.path
                    break
            else:
                maps = self.file_mappings
                if maps:
                    self._exe_mapped = maps[0].path
        return self._exe_mapped

    def host_path(self, path):
        """Where a mapped file is found here: the exe override; else under the sysroot
        (sysroot + path, or a library's name in the sysroot's lib directories: a cross
        target's ld.so names what qemu found, see linux/sysroot.py); without a sysroot, the
        path itself, or for a core of another architecture whose path is not that
        architecture's file here, the architecture's own sysroots (Debian's
        /usr/<triple>)."""
        if path is None:
            return None
        if self.exe_path and path == self.exe_mapped_path:
            return self.exe_path
        known = self._host_paths.get(path)
        if known is not None:
            return known
        if self.sysroot and path.startswith("/"):
            host = find_in_sysroot(path, (self.sysroot,))
            if host is None:
                # not under the sysroot: for a core of another architecture, a file of that
                # architecture at the path itself is the target's own (a program's library built
                # beside it); for this machine's cores the sysroot stands for every path
                cross = self.arch != host_architecture()
                host = path if cross and os.path.isfile(path) and elf_machine_is(path, self.arch) else \
                    os.path.join(self.sysroot, path.lstrip("/"))
        elif self.arch.sysroots and path.startswith("/") and not (
                os.path.isfile(path) and elf_machine_is(path, self.arch)):
            host = find_in_sysroot(path, self.arch.sysroots, self.arch) or path
        else:
            host = path
        if len(self._host_paths) < 4096:
            self._host_paths[path] = host
        return host

    def _open_host(self, host):
        with self._lock:
            entry = self._files.get(host)
            if entry is None:
                try:
                    if not os.path.isfile(host):  # never open a device or a FIFO
                        raise FileNotFoundError(2, "no such file" if not os.path.exists(host) else "not a regular file")
                    fh = open(host, "rb", buffering=0)  # closed by close() or with the CoreFile
                    entry = (fh, os.fstat(fh.fileno()).st_size)
                except OSError as exc:
                    entry = (None, exc.strerror or str(exc))
                self._files[host] = entry
        return entry

    def _read_host(self, host, offset, size):
        fh, info = self._open_host(host)
        if fh is None:
            raise OSError(f"{host}: {info}")
        return self.pread(fh.fileno(), offset, min(size, max(0, info - offset)))

    def read_missing(self, addr, size, why):
        """Memory the core does not hold: from the file mapped there (NT_FILE)."""
        m = self.mapping_at(addr)
        if m is None:
            raise MemoryReadError(addr, size, why)
        host = self.host_path(m.path)
        fh, info = self._open_host(host)
        if fh is None:
            raise MemoryReadError(addr, size, f"not in the core file, and {host}: {info}")
        fd = fh.fileno()
        n = min(size, m.end - addr)
        off = m.offset + (addr - m.start)
        data = self.pread(fd, off, min(n, info - off)) if off < info else b""
        if len(data) < n:  # past EOF: the rest of EOF's page reads as zeros, then SIGBUS
            ps = self.page_size
            page_end = (info + ps - 1) // ps * ps
            avail = min(n, max(0, page_end - off))
            if avail > len(data):
                data += bytes(avail - len(data))
            if not data:
                raise MemoryReadError(addr, size, f"past the end of {host}")
        return data

    # --- memory ----------------------------------------------------------------------
    @property
    def execfn(self):
        """AT_EXECFN: the path the program was exec'd with (from the core's stack)."""
        addr = self.auxv.get(AT_EXECFN)
        if not addr:
            return None
        try:
            return self.read_cstring(addr) or None
        except MemoryReadError:
            return None

    # --- mapped ELF files ------------------------------------------------------------
    def elf_info(self, path):
        """Program headers of a mapped file: an ElfImage, NOT_ELF, or None (unreadable).

        The in-memory headers (first page, which cores keep) are preferred
        over the file: they are what was loaded even if the file changed.
        """
        if path in self._elf_cache:
            return self._elf_cache[path]
        result = None
        maps = self.mappings_of(path)
        if maps and maps[0].offset == 0:
            m0 = maps[0]
            span = m0.end - m0.start
            host = self.host_path(path)

            def read(off, n):
                if off + n <= span:
                    return self.read(m0.start + off, n)
                return self._read_host(host, off, n)
            try:
                result = ElfImage(read, path)
            except NotElf:
                result = NOT_ELF
            except (MemoryReadError, OSError, BadFileError):
                result = None
        if result is None:
            host = self.host_path(path)
            try:
                result = ElfImage(lambda off, n: self._read_host(host, off, n), path)
            except NotElf:
                result = NOT_ELF
            except (OSError, BadFileError):
                result = None
        self._elf_cache[path] = result
        return result

    def _page_down(self, v):
        return v & ~(self.page_size - 1)

    def load_instances(self, path):
        """A mapped file's mappings (by address) split into load instances.

        Each instance starts at a mapping of the file's lowest offset (its ELF
        header) and takes the mappings above it: a file loaded twice (dlmopen)
        or also mapped as plain data (a tool reading a library) gives several.
        """
        maps = sorted(self.mappings_of(path))
        if not maps:
            return []
        low = min(m.offset for m in maps)
        out = []
        for m in maps:
            if m.offset == low or not out:
                out.append([m])
            else:
                out[-1].append(m)
        return out

    def load_bias(self, maps):
        """Load bias of one load instance (or of a path's first instance): the
        start of its lowest-offset mapping minus the page of the ELF PT_LOAD
        that maps that offset (0 for a non-PIE executable)."""
        if isinstance(maps, str):
            insts = self.load_instances(maps)
            if not insts:
                return None
            maps = insts[0]
        m0 = min(maps, key=lambda m: (m.offset, m.start))
        info = self.elf_info(m0.path)
        if isinstance(info, ElfImage) and info.loads:
            for vaddr, _memsz, offset, _filesz, _flags in info.loads:
                if self._page_down(offset) == m0.offset:
                    return m0.start - self._page_down(vaddr)
            vaddr, _memsz, offset = info.loads[0][:3]
            return m0.start - m0.offset - self._page_down(vaddr - offset)
        return m0.start - m0.offset

    def exec_ranges(self, maps):
        """[start, end) of the executable mappings of one load instance (or of
        all of a path's mappings): the core's PT_LOAD flags, or the ELF's
        PT_LOAD flags where the core has no PT_LOAD."""
        if isinstance(maps, str):
            maps = self.mappings_of(maps)
        ranges = []
        info = None
        for m in sorted(maps):
            seg = self.segment_at(m.start)
            if seg is not None:
                x = bool(seg.flags & PF_X)
            else:
                if info is None:
                    info = self.elf_info(m.path)
                x = bool(self._elf_flags(info, m.offset) & PF_X)
            if x:
                if ranges and ranges[-1][1] == m.start:
                    ranges[-1] = (ranges[-1][0], m.end)
                else:
                    ranges.append((m.start, m.end))
        return ranges

    def _elf_flags(self, info, file_offset):
        if not isinstance(info, ElfImage):
            return 0
        for _vaddr, _memsz, offset, filesz, flags in info.loads:
            if self._page_down(offset) <= file_offset < offset + max(filesz, 1):
                return flags
        return 0

    def regions(self):
        """MemoryRegion list: the core's PT_LOADs, plus file mappings (or parts)
        that no PT_LOAD covers, named after their files."""
        if self._regions is not None:
            return list(self._regions)
        vdso = self.auxv.get(AT_SYSINFO_EHDR)
        regions = []
        for seg in self.segments:
            m = self.mapping_at(seg.vaddr)
            name = m.path if m is not None else ("[vdso]" if seg.vaddr == vdso else "")
            regions.append(MemoryRegion(seg.vaddr, seg.end, bool(seg.flags & PF_R), bool(seg.flags & PF_W),
                                        bool(seg.flags & PF_X), name))
        for m in self.file_mappings:
            for lo, hi in self._uncovered(m.start, m.end):
                flags = self._elf_flags(self.elf_info(m.path), m.offset + (lo - m.start))
                if flags:
                    r, w, x = bool(flags & PF_R), bool(flags & PF_W), bool(flags & PF_X)
                else:
                    r, w, x = True, False, False
                regions.append(MemoryRegion(lo, hi, r, w, x, m.path))
        regions.sort(key=lambda r: r.start)
        self._regions = regions
        return list(regions)

    def _uncovered(self, start, end):
        gaps = []
        a = start
        i = max(0, bisect.bisect_right(self._seg_starts, start) - 1)
        while a < end and i < len(self.segments):
            seg = self.segments[i]
            if seg.end <= a:
                i += 1
                continue
            if seg.vaddr >= end:
                break
            if seg.vaddr > a:
                gaps.append((a, seg.vaddr))
            a = max(a, seg.end)
            i += 1
        if a < end:
            gaps.append((a, end))
        return gaps

    # --- no NT_FILE: the dynamic linker's list ------------------------------------------
    def _derive_mappings(self):
        exe = self.exe_path or self.execfn
        if not exe:
            raise BadFileError("the executable is unknown (give exe_path)")
        self._exe_mapped = exe
        maps = []
        host = self.host_path(exe)
        info = ElfImage(lambda off, n: self._read_host(host, off, n), exe)
        if self.auxv.get(AT_PHDR) and info.phdr_vaddr is not None:
            bias = self.auxv[AT_PHDR] - info.phdr_vaddr
        elif self.auxv.get(AT_ENTRY):
            bias = self.auxv[AT_ENTRY] - info.entry
        else:
            bias = 0
        maps += self._elf_maps(exe, info, bias)
        self._set_fmaps(maps)  # the exe's read-only data (DT_NEEDED names) is now readable
        if info.dynamic is None:
            return
        ptr = self.arch.ptr_size
        dyn_addr, dyn_size = bias + info.dynamic[0], info.dynamic[1]
        r_debug = linkmap.find_r_debug(self.read_pointer, dyn_addr, ptr, min(dyn_size // (2 * ptr), 512))
        if not r_debug:
            return
        for l_addr, name in linkmap.link_map(self.read_pointer, self.read, r_debug, ptr)[1:]:
            lhost = self.host_path(name) if name else None
            if lhost and os.path.isfile(lhost):
                try:
                    linfo = ElfImage(lambda off, n, h=lhost: self._read_host(h, off, n), name)
                    maps += self._elf_maps(name, linfo, l_addr)
                    self._set_fmaps(maps)
                except (BadFileError, OSError):
                    pass

    def _elf_maps(self, path, info, bias):
        ps = self.page_size
        out = []
        for vaddr, memsz, offset, filesz, _flags in info.loads:
            if not filesz:
                continue
            start = self._page_down(bias + vaddr)
            end = (bias + vaddr + filesz + ps - 1) // ps * ps
            out.append(FileMapping(start, end, self._page_down(offset), path))
        return out

    # --- threads -----------------------------------------------------------------------
    def thread(self, tid):
        for t in self.threads:
            if t.tid == tid:
                return t
        return None
