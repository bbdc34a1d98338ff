"""A pure-Python ELF core-file back-end: walk a crashed process with no debugger.

``CoreFile`` reads an x86-64 Linux core as written by the kernel or by GDB's
``gcore``.  Opening it reads the ELF header, the program headers and the
notes, nothing else; memory is read on demand with ``pread``, so cores of
hundreds of megabytes open at once.

Memory the core left out (a PT_LOAD with ``p_filesz < p_memsz``, or no
PT_LOAD at all: unmodified file-backed text that the kernel's
``coredump_filter`` or gcore skipped) is read from the mapped file named in
NT_FILE, with the sysroot prefix or the executable override applied.  A core
without NT_FILE (old kernels, other writers) falls back to the dynamic
linker's ``r_debug`` list read from the core's own memory.

``CoreProcessState`` and ``CoreLibraryState`` adapt it to the walker's
ProcessState / LibraryState interfaces.
"""
import bisect
import collections
import os
import signal as _signal
import struct
import threading

from ..arch import X86_64
from ..arch.x86_64.regsets import USER_REGS, PRSTATUS_REG_OFFSET as _PRSTATUS_REG_OFF
from ..elf.module import ElfModule
from ..errors import BadFileError, MemoryReadError, RegisterError
from ..procstate import Library, LibraryState, MemoryRegion, ProcessState

ELF_MAGIC = b"\x7fELF"
ET_CORE = 4
EM_X86_64 = 62
PT_LOAD, PT_DYNAMIC, PT_NOTE, PT_PHDR = 1, 2, 4, 6
PF_X, PF_W, PF_R = 1, 2, 4
PN_XNUM = 0xFFFF

NT_PRSTATUS = 1
NT_FPREGSET = 2
NT_PRPSINFO = 3
NT_AUXV = 6
NT_X86_XSTATE = 0x202
NT_SIGINFO = 0x53494749
NT_FILE = 0x46494C45

AT_NULL = 0
AT_PHDR = 3
AT_PAGESZ = 6
AT_BASE = 7
AT_ENTRY = 9
AT_EXECFN = 31
AT_SYSINFO_EHDR = 33

DT_NULL = 0
DT_DEBUG = 21

ADDR_LIMIT = 1 << 64
#: Larger than any vDSO: a bigger image size means the headers are damaged.
VDSO_MAX = 1 << 20

_ET_NAMES = {0: "ET_NONE", 1: "ET_REL", 2: "ET_EXEC", 3: "ET_DYN", 4: "ET_CORE"}
_EM_NAMES = {3: "i386", 8: "MIPS", 20: "PowerPC", 21: "PowerPC64", 22: "s390", 40: "ARM",
             62: "x86-64", 183: "AArch64", 243: "RISC-V", 258: "LoongArch"}

_PRSTATUS_MIN = _PRSTATUS_REG_OFF + 8 * len(USER_REGS)
#: elf_prpsinfo: state sname zomb nice (4) pad (4) pr_flag (8) uid gid (4+4)
#: pid ppid pgrp sid (4 each), pr_fname[16], pr_psargs[80].
_PRPSINFO_MIN = 136

_FAULT_SIGNALS = frozenset({4, 5, 7, 8, 11})  # SIGILL SIGTRAP SIGBUS SIGFPE SIGSEGV

_Phdr = struct.Struct("<IIQQQQQQ")


def _align4(n):
    return (n + 3) & ~3


def _cstr(raw):
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")


class CoreSegment(collections.namedtuple("CoreSegment", "vaddr memsz filesz offset flags")):
    """One PT_LOAD of the core: target memory [vaddr, vaddr+memsz), the first
    filesz bytes of it stored at file offset ``offset``."""
    __slots__ = ()

    @property
    def end(self):
        return self.vaddr + self.memsz


class FileMapping(collections.namedtuple("FileMapping", "start end offset path")):
    """One NT_FILE entry: [start, end) maps ``path`` from byte ``offset``."""
    __slots__ = ()


class SigInfo:
    """The signal that stopped a thread (NT_SIGINFO, or just pr_cursig)."""
    __slots__ = ("signo", "errno", "code", "addr", "pid", "uid", "raw")

    def __init__(self, signo, errno=0, code=None, addr=None, pid=None, uid=None, raw=None):
        self.signo, self.errno, self.code = signo, errno, code
        self.addr, self.pid, self.uid, self.raw = addr, pid, uid, raw

    @classmethod
    def from_bytes(cls, desc):
        signo, errno, code = struct.unpack_from("<iii", desc, 0)
        addr = pid = uid = None
        if len(desc) >= 24:
            if signo in _FAULT_SIGNALS and code > 0:  # sent by the kernel: si_addr
                addr = struct.unpack_from("<Q", desc, 16)[0]
            elif code <= 0:  # SI_USER, SI_TKILL, SI_QUEUE...: sender's pid and uid
                pid, uid = struct.unpack_from("<iI", desc, 16)
        return cls(signo, errno, code, addr, pid, uid, bytes(desc))

    @property
    def name(self):
        try:
            return _signal.Signals(self.signo).name
        except ValueError:
            return f"signal {self.signo}"

    @property
    def description(self):
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


class CoreThread:
    """One NT_PRSTATUS: an OS thread and its registers at the time of the dump."""
    __slots__ = ("tid", "regs", "signal", "siginfo", "fpregs", "xstate",
                 "ppid", "pgrp", "sid", "sigpend", "sighold")

    def __init__(self, tid, regs, signal):
        self.tid, self.regs, self.signal = tid, regs, signal
        self.siginfo = None
        self.fpregs = None   # NT_FPREGSET: raw user_fpregs_struct
        self.xstate = None   # NT_X86_XSTATE: raw XSAVE area
        self.ppid = self.pgrp = self.sid = None
        self.sigpend = self.sighold = 0

    @property
    def pc(self):
        return self.regs.get(16)

    @property
    def sp(self):
        return self.regs.get(7)

    def __repr__(self):
        return f"<CoreThread {self.tid} pc=0x{self.regs.get(16, 0):x}>"


class _ElfInfo:
    """What the core back-end needs of a mapped ELF: its program headers."""
    __slots__ = ("e_type", "entry", "loads", "phdr_vaddr", "dynamic", "image_end")

    def __init__(self, e_type, entry, loads, phdr_vaddr, dynamic, image_end):
        self.e_type, self.entry, self.loads = e_type, entry, loads
        self.phdr_vaddr, self.dynamic, self.image_end = phdr_vaddr, dynamic, image_end

    def first_vaddr(self):
        return min(ld[0] - ld[2] for ld in self.loads) if self.loads else 0


class _NotElf(Exception):
    pass


def _parse_elf_image(read):
    """Program headers of a 64-bit little-endian ELF through read(offset, size).

    Raises _NotElf for anything else; read() may raise MemoryReadError/OSError.
    """
    hdr = read(0, 64)
    if len(hdr) < 64 or hdr[:4] != ELF_MAGIC:
        raise _NotElf("no ELF header")
    if hdr[4] != 2 or hdr[5] != 1:
        raise _NotElf("not a 64-bit little-endian ELF")
    e_type, _machine, _version, entry, phoff, shoff = struct.unpack_from("<HHIQQQ", hdr, 16)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", hdr, 54)
    if not _Phdr.size <= phentsize <= 1024 or not 0 < phnum <= 4096:
        raise _NotElf("bad program header table")
    table = read(phoff, phentsize * phnum)
    if len(table) < phentsize * phnum:
        raise _NotElf("truncated program header table")
    loads, phdr_vaddr, dynamic = [], None, None
    image_end = 64
    if shoff and shnum and shentsize:
        image_end = shoff + shnum * shentsize
    for i in range(phnum):
        p_type, p_flags, p_offset, p_vaddr, _pa, p_filesz, p_memsz, _al = _Phdr.unpack_from(table, i * phentsize)
        if p_type == PT_LOAD:
            loads.append((p_vaddr, p_memsz, p_offset, p_filesz, p_flags))
            image_end = max(image_end, p_offset + p_filesz)
        elif p_type == PT_PHDR:
            phdr_vaddr = p_vaddr
        elif p_type == PT_DYNAMIC:
            dynamic = (p_vaddr, p_memsz)
    loads.sort()
    return _ElfInfo(e_type, entry, loads, phdr_vaddr, dynamic, image_end)


_NOT_ELF = object()


class CoreFile:
    """An x86-64 Linux ELF core file.

    ``threads`` (CoreThread, in note order: the first got the signal),
    ``mappings`` (FileMapping from NT_FILE), ``auxv`` ({AT_*: value}),
    ``pid``, ``exe_name`` (pr_fname), ``psargs``, ``siginfo`` (the first
    NT_SIGINFO), ``segments`` (PT_LOADs sorted by address) and ``warnings``
    (one line each: e.g. a truncated core).

    ``sysroot`` prefixes the absolute paths of mapped files; ``exe_path``
    replaces the main executable's path (the file mapped at AT_PHDR).
    """

    def __init__(self, path, sysroot=None, exe_path=None):
        self.path = os.fspath(path)
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
        self.segments = []
        self.warnings = []
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
        try:
            self._fh = open(self.path, "rb", buffering=0)
        except FileNotFoundError:
            raise BadFileError(f"{self.path}: no such file") from None
        except IsADirectoryError:
            raise BadFileError(f"{self.path}: is a directory, not a core file") from None
        except OSError as exc:
            raise BadFileError(f"{self.path}: cannot open ({exc.strerror or exc})") from None
        self._fd = self._fh.fileno()
        try:
            self._size = os.fstat(self._fd).st_size
            self._parse()
        except BadFileError:
            self.close()
            raise
        except (struct.error, IndexError, ValueError, OverflowError, OSError, MemoryError) as exc:
            self.close()
            raise BadFileError(f"{self.path}: malformed core file ({exc.__class__.__name__}: {exc})") from None

    # --- life cycle ----------------------------------------------------------------
    def close(self):
        with self._lock:
            for fh, _ in self._files.values():
                if fh is not None:
                    fh.close()
            self._files.clear()
        fh = getattr(self, "_fh", None)
        if fh is not None:
            fh.close()
        self._fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"<CoreFile {self.path} pid={self.pid} threads={len(self.threads)}>"

    # --- parsing -------------------------------------------------------------------
    def _pread(self, fd, offset, size):
        chunks = []
        while size > 0:
            data = os.pread(fd, min(size, 1 << 30), offset)
            if not data:
                break
            chunks.append(data)
            offset += len(data)
            size -= len(data)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def _bad(self, why):
        return BadFileError(f"{self.path}: {why}")

    def _parse(self):
        hdr = self._pread(self._fd, 0, 64)
        if len(hdr) < 4 or hdr[:4] != ELF_MAGIC:
            raise self._bad("not an ELF file" if hdr else "empty file, not a core file")
        if len(hdr) < 20:
            raise self._bad("truncated ELF header")
        ei_class, ei_data = hdr[4], hdr[5]
        order = ">" if ei_data == 2 else "<"
        e_type, e_machine = struct.unpack_from(order + "HH", hdr, 16)
        if e_type != ET_CORE:
            raise self._bad(f"not a core file (ELF type {_ET_NAMES.get(e_type, e_type)})")
        if e_machine != EM_X86_64 or ei_class != 2 or ei_data != 1:
            bits = {1: "32-bit", 2: "64-bit"}.get(ei_class, "unknown class")
            name = _EM_NAMES.get(e_machine, f"e_machine {e_machine}")
            raise self._bad(f"unsupported machine {name} ({bits}); swk reads x86-64 cores")
        if len(hdr) < 64:
            raise self._bad("truncated ELF header")
        phoff, shoff = struct.unpack_from("<QQ", hdr, 32)
        phentsize, phnum = struct.unpack_from("<HH", hdr, 54)
        if phnum == PN_XNUM:  # more than 65534 mappings: the count is in section 0
            sh0 = self._pread(self._fd, shoff, 64) if shoff < self._size else b""
            if len(sh0) < 64:
                raise self._bad("truncated core file (section header 0 missing)")
            phnum = struct.unpack_from("<I", sh0, 44)[0]
        if phnum == 0:
            raise self._bad("core file has no program headers")
        if phentsize < _Phdr.size:
            raise self._bad(f"bad program header size {phentsize}")
        table_end = phoff + phnum * phentsize
        if table_end > self._size:
            raise self._bad(f"truncated core file (program headers end at offset 0x{table_end:x}, "
                            f"file has 0x{self._size:x} bytes)")
        table = self._pread(self._fd, phoff, phnum * phentsize)
        notes, segs = [], []
        for i in range(phnum):
            p_type, p_flags, p_offset, p_vaddr, _pa, p_filesz, p_memsz, _al = _Phdr.unpack_from(table, i * phentsize)
            if p_type == PT_LOAD:
                if p_memsz == 0 or p_vaddr + p_memsz > ADDR_LIMIT:
                    continue
                segs.append(CoreSegment(p_vaddr, p_memsz, min(p_filesz, p_memsz), p_offset, p_flags))
            elif p_type == PT_NOTE and p_filesz:
                notes.append((p_offset, p_filesz))
        if not notes:
            raise self._bad("core file has no notes (PT_NOTE), so no threads")
        for offset, size in notes:
            if offset + size > self._size:
                raise self._bad(f"truncated core file (notes end at offset 0x{offset + size:x}, "
                                f"file has 0x{self._size:x} bytes)")
            self._parse_notes(self._pread(self._fd, offset, size), offset)
        if not self.threads:
            raise self._bad("core file has no thread (NT_PRSTATUS) notes")
        segs.sort()
        self.segments = segs
        self._seg_starts = [s.vaddr for s in segs]
        data_end = max((s.offset + s.filesz for s in segs if s.filesz), default=0)
        if data_end > self._size:
            self.warnings.append(f"{self.path}: core file truncated: memory is stored up to offset "
                                 f"0x{data_end:x} but the file has 0x{self._size:x} bytes")
        if self.auxv.get(AT_PAGESZ) and not self.mappings:
            self.page_size = self.auxv[AT_PAGESZ]

    def _parse_notes(self, data, base):
        pos, n = 0, len(data)
        while pos + 12 <= n:
            namesz, descsz, ntype = struct.unpack_from("<III", data, pos)
            desc_off = pos + 12 + _align4(namesz)
            if desc_off + descsz > n:
                raise self._bad(f"malformed or truncated note at offset 0x{base + pos:x} "
                                f"(it runs past the end of the notes)")
            name = data[pos + 12:pos + 12 + namesz].rstrip(b"\0")
            self._note(name, ntype, data[desc_off:desc_off + descsz], base + pos)
            pos = desc_off + _align4(descsz)

    def _note(self, name, ntype, desc, where):
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
                    si = SigInfo.from_bytes(desc)
                    if self._cur_thread is not None and self._cur_thread.siginfo is None:
                        self._cur_thread.siginfo = si
                    if self.siginfo is None:
                        self.siginfo = si
            elif ntype == NT_FPREGSET:
                if self._cur_thread is not None:
                    self._cur_thread.fpregs = bytes(desc)
        elif name == b"LINUX" and ntype == NT_X86_XSTATE:
            if self._cur_thread is not None:
                self._cur_thread.xstate = bytes(desc)

    def _note_prstatus(self, desc, where):
        if len(desc) < _PRSTATUS_MIN:
            raise self._bad(f"malformed NT_PRSTATUS note at offset 0x{where:x} "
                            f"({len(desc)} bytes, x86-64 needs {_PRSTATUS_MIN})")
        cursig = struct.unpack_from("<h", desc, 12)[0]
        sigpend, sighold = struct.unpack_from("<QQ", desc, 16)
        tid, ppid, pgrp, sid = struct.unpack_from("<iiii", desc, 32)
        values = struct.unpack_from(f"<{len(USER_REGS)}Q", desc, _PRSTATUS_REG_OFF)
        dwarf = X86_64.dwarf_names
        regs = {}
        for reg, value in zip(USER_REGS, values):
            if reg in dwarf:
                regs[dwarf.index(reg)] = value
            else:
                regs[reg] = value
        thread = CoreThread(tid, regs, cursig)
        thread.ppid, thread.pgrp, thread.sid = ppid, pgrp, sid
        thread.sigpend, thread.sighold = sigpend, sighold
        self.threads.append(thread)
        self._cur_thread = thread

    def _note_prpsinfo(self, desc, where):
        if len(desc) < _PRPSINFO_MIN:
            raise self._bad(f"malformed NT_PRPSINFO note at offset 0x{where:x} ({len(desc)} bytes)")
        self.uid, self.gid = struct.unpack_from("<II", desc, 16)
        self.pid, self.ppid = struct.unpack_from("<ii", desc, 24)
        self.exe_name = _cstr(desc[40:56])
        self.psargs = _cstr(desc[56:136]).rstrip()

    def _note_auxv(self, desc):
        for i in range(0, len(desc) - 15, 16):
            key, value = struct.unpack_from("<QQ", desc, i)
            if key == AT_NULL:
                break
            self.auxv[key] = value

    def _note_file(self, desc, where):
        bad = self._bad(f"malformed NT_FILE note at offset 0x{where:x}")
        if len(desc) < 16:
            raise bad
        count, page = struct.unpack_from("<QQ", desc, 0)
        if count > (len(desc) - 16) // 24 or page == 0 or page & (page - 1):
            raise bad
        names = bytes(desc[16 + 24 * count:]).split(b"\0")
        if len(names) < count:
            raise bad
        self.page_size = page
        for i in range(count):
            start, end, pgoff = struct.unpack_from("<QQQ", desc, 16 + 24 * i)
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
                except (MemoryReadError, BadFileError, OSError, _NotElf, struct.error, ValueError) as exc:
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
        """Where a mapped file is found here: exe override, else sysroot + path."""
        if path is None:
            return None
        if self.exe_path and path == self.exe_mapped_path:
            return self.exe_path
        if self.sysroot and path.startswith("/"):
            return os.path.join(self.sysroot, path.lstrip("/"))
        return path

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
        return self._pread(fh.fileno(), offset, min(size, max(0, info - offset)))

    def _read_from_mapping(self, addr, size, why):
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
        data = self._pread(fd, off, min(n, info - off)) if off < info else b""
        if len(data) < n:  # past EOF: the rest of EOF's page reads as zeros, then SIGBUS
            ps = self.page_size
            page_end = (info + ps - 1) // ps * ps
            avail = min(n, max(0, page_end - off))
            if avail > len(data):
                data += bytes(avail - len(data))
            if not data:
                raise MemoryReadError(addr, size, f"past the end of {host}")
        return data

    # --- memory --------------------------------------------------------------------------
    def segment_at(self, addr):
        i = bisect.bisect_right(self._seg_starts, addr) - 1
        if i >= 0 and addr < self.segments[i].end:
            return self.segments[i]
        return None

    def read(self, addr, size):
        """``size`` bytes of target memory at ``addr``, or MemoryReadError."""
        if size < 0 or addr < 0 or addr + size > ADDR_LIMIT:
            raise MemoryReadError(addr % ADDR_LIMIT, size, "address out of range")
        if size == 0:
            return b""
        if self._fd is None:
            raise MemoryReadError(addr, size, "core file closed")
        parts = []
        a, end = addr, addr + size
        while a < end:
            data = self._read_some(a, end - a)
            parts.append(data)
            a += len(data)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def _read_some(self, addr, size):
        """Some (at least one) of the bytes at addr, from the core or a mapped file."""
        i = bisect.bisect_right(self._seg_starts, addr) - 1
        seg = self.segments[i] if i >= 0 else None
        if seg is not None and addr < seg.end:
            off = addr - seg.vaddr
            if off < seg.filesz:
                where = seg.offset + off
                n = min(size, seg.filesz - off, self._size - where)
                data = self._pread(self._fd, where, n) if n > 0 else b""
                if not data:
                    raise MemoryReadError(addr, size, "core file truncated")
                return data
            limit, why = seg.end, "not saved in the core file"
        else:
            nxt = i + 1
            limit = self._seg_starts[nxt] if nxt < len(self._seg_starts) else ADDR_LIMIT
            why = "not in the core file"
        return self._read_from_mapping(addr, min(size, limit - addr), why)

    def read_pointer(self, addr):
        return int.from_bytes(self.read(addr, 8), "little")

    def read_cstring(self, addr, limit=4096):
        out = bytearray()
        while len(out) < limit:
            n = min(limit - len(out), 256 - (addr & 255))
            try:
                chunk = self.read(addr, n)
            except MemoryReadError:
                if out:
                    break
                raise
            nul = chunk.find(b"\0")
            if nul >= 0:
                out += chunk[:nul]
                break
            out += chunk
            addr += n
        return out.decode("utf-8", "surrogateescape")

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
        """Program headers of a mapped file: _ElfInfo, _NOT_ELF, or None (unreadable).

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
                result = _parse_elf_image(read)
            except _NotElf:
                result = _NOT_ELF
            except (MemoryReadError, OSError):
                result = None
        if result is None:
            host = self.host_path(path)
            try:
                result = _parse_elf_image(lambda off, n: self._read_host(host, off, n))
            except _NotElf:
                result = _NOT_ELF
            except OSError:
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
        if isinstance(info, _ElfInfo) and info.loads:
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
        if not isinstance(info, _ElfInfo):
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
            raise _NotElf("the executable is unknown (give exe_path)")
        self._exe_mapped = exe
        maps = []
        host = self.host_path(exe)
        info = _parse_elf_image(lambda off, n: self._read_host(host, off, n))
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
        dyn_addr, dyn_size = bias + info.dynamic[0], info.dynamic[1]
        r_debug = 0
        for off in range(0, min(dyn_size, 16 * 512), 16):
            tag, val = struct.unpack("<qQ", self.read(dyn_addr + off, 16))
            if tag == DT_NULL:
                break
            if tag == DT_DEBUG:
                r_debug = val
        if not r_debug:
            return
        lm = self.read_pointer(r_debug + 8)
        seen = set()
        first = True
        while lm and lm not in seen and len(seen) < 4096:
            seen.add(lm)
            l_addr, l_name, _l_ld, l_next = struct.unpack("<QQQQ", self.read(lm, 32))
            if not first:
                name = self.read_cstring(l_name) if l_name else ""
                lhost = self.host_path(name) if name else None
                if lhost and os.path.isfile(lhost):
                    try:
                        linfo = _parse_elf_image(lambda off, n, h=lhost: self._read_host(h, off, n))
                        maps += self._elf_maps(name, linfo, l_addr)
                        self._set_fmaps(maps)
                    except (_NotElf, OSError):
                        pass
            first = False
            lm = l_next

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
        vdso = self._vdso()
        if vdso is not None:
            libs.append(vdso)
        return libs

    def _library(self, path, inst):
        """A Library for one load instance of a mapped file, or None if it is
        not loaded code (a data file, an ELF mapped as data, /dev/zero...)."""
        core = self.core
        info = core.elf_info(path)
        if info is _NOT_ELF:
            return None
        ranges = core.exec_ranges(inst)
        if not ranges:
            return None
        lib = Library(core.host_path(path), core.load_bias(inst), module_loader=_load_file_module,
                      ranges=ranges)
        lib.mapped_path = path
        return lib

    def _vdso(self):
        core = self.core
        ehdr = core.auxv.get(AT_SYSINFO_EHDR)
        if not ehdr:
            return None
        try:
            info = _parse_elf_image(lambda off, n: core.read(ehdr + off, n))
            size = info.image_end
            if size > VDSO_MAX:
                return None
            rounded = (size + core.page_size - 1) // core.page_size * core.page_size
            try:
                image = core.read(ehdr, rounded)
            except MemoryReadError:
                image = core.read(ehdr, size)
        except (MemoryReadError, _NotElf, struct.error):
            return None
        base = ehdr - info.first_vaddr()
        ranges = [(base + v, base + v + memsz) for v, memsz, _o, _f, flags in info.loads if flags & PF_X]

        def load(lib, image=image):
            return ElfModule(data=image, name="[vdso]")
        lib = Library("[vdso]", base, module_loader=load, ranges=ranges)
        lib.image = image
        return lib


def _load_file_module(lib):
    return ElfModule(path=lib.path)


class CoreProcessState(ProcessState):
    """ProcessState over a core file: memory, registers and threads as dumped."""

    def __init__(self, core_path, exe_path=None, sysroot=None):
        self.core = CoreFile(core_path, sysroot=sysroot, exe_path=exe_path)
        super().__init__(X86_64(), CoreLibraryState(self.core))
        self._index = {}
        for i, t in enumerate(self.core.threads):
            self._index.setdefault(t.tid, i)
        first = self.core.threads[0]
        self.signal_info = self.core.siginfo or (SigInfo(first.signal) if first.signal else None)

    def read_raw(self, addr, size):
        return self.core.read(addr, size)

    def read_thread_registers(self, thread):
        i = self._index.get(thread)
        if i is None:
            raise RegisterError(f"no thread {thread} in core file {self.core.path}")
        return dict(self.core.threads[i].regs)

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
