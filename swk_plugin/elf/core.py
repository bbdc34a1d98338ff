"""An ELF core file: the memory it holds (PT_LOAD segments) and its notes (PT_NOTE).

Opening one reads the ELF header, the program headers and the notes, nothing
else; memory is read on demand with ``pread``, so cores of hundreds of
megabytes open at once.  What the notes mean (threads, registers, mapped
files) is the operating system's business: swk_plugin.linux.coredump reads
Linux's.  Memory a core does not hold is asked of ``read_missing``, which a
subclass may answer from the mapped files.
"""
import bisect
import collections
import os
import struct

from ..arch import UnsupportedArchitecture, from_elf_machine, known_names, machine_name
from ..errors import BadFileError, MemoryReadError
from .header import PN_XNUM, ElfHeader, read_program_headers

ET_CORE = "ET_CORE"
ADDR_LIMIT = 1 << 64


def _align4(n):
    return (n + 3) & ~3


class CoreSegment(collections.namedtuple("CoreSegment", "vaddr memsz filesz offset flags")):
    """One PT_LOAD of the core: target memory [vaddr, vaddr+memsz), the first
    filesz bytes of it stored at file offset ``offset``."""
    __slots__ = ()

    @property
    def end(self):
        return self.vaddr + self.memsz


class ElfCore:
    """An ELF core file: ``arch``, ``segments`` (PT_LOADs sorted by address), ``notes``
    ([(name, type, desc, file offset)] in file order) and ``warnings`` (one line each:
    e.g. a truncated core).  Subclasses interpret notes by overriding ``note``."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self.segments = []
        self._seg_starts = []
        self.notes = []
        self.warnings = []
        self.arch = None
        self.byteorder = None
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
        fh = getattr(self, "_fh", None)
        if fh is not None:
            fh.close()
        self._fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"<{self.__class__.__name__} {self.path}>"

    # --- parsing -------------------------------------------------------------------
    @staticmethod
    def pread(fd, offset, size):
        chunks = []
        while size > 0:
            data = os.pread(fd, min(size, 1 << 30), offset)
            if not data:
                break
            chunks.append(data)
            offset += len(data)
            size -= len(data)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def bad(self, why):
        return BadFileError(f"{self.path}: {why}")

    def _parse(self):
        raw = self.pread(self._fd, 0, 64)
        if len(raw) < 4 or raw[:4] != b"\x7fELF":
            raise self.bad("not an ELF file" if raw else "empty file, not a core file")
        if len(raw) < 20:
            raise self.bad("truncated ELF header")
        try:
            hdr = ElfHeader(raw, self.path)
        except BadFileError as exc:
            raise self.bad("truncated ELF header" if len(raw) < 64 else str(exc).split(": ", 1)[-1]) from None
        if hdr["e_type"] != ET_CORE:
            raise self.bad(f"not a core file (ELF type {hdr['e_type']})")
        bits = f"{hdr.elfclass}-bit"
        try:
            self.arch = from_elf_machine(hdr["e_machine"], hdr.elfclass, hdr.byteorder)
        except UnsupportedArchitecture:
            shape = bits if hdr.little_endian else f"{bits}, big-endian"
            raise self.bad(f"unsupported machine {machine_name(hdr['e_machine'])} ({shape}); swk reads cores of "
                           f"{', '.join(known_names())} (of their own ELF class and byte order)") from None
        self.header = hdr
        #: The byte order of the core's words (its notes, the memory it holds): its header's.
        self.byteorder = hdr.byteorder

        def read_file(offset, size):
            if offset + size > self._size:
                raise self.bad(f"truncated core file (program headers end at offset 0x{offset + size:x}, "
                               f"file has 0x{self._size:x} bytes)")
            return self.pread(self._fd, offset, size)
        if hdr["e_phnum"] == PN_XNUM and (not hdr["e_shoff"] or hdr["e_shoff"] + 64 > self._size):
            raise self.bad("truncated core file (section header 0 missing)")
        rows = read_program_headers(hdr, read_file, self.path)
        if not rows:
            raise self.bad("core file has no program headers")
        notes, segs = [], []
        for p_type, p_vaddr, p_memsz, p_flags, p_offset, p_filesz, _align in rows:
            if p_type == "PT_LOAD":
                if p_memsz == 0 or p_vaddr + p_memsz > ADDR_LIMIT:
                    continue
                segs.append(CoreSegment(p_vaddr, p_memsz, min(p_filesz, p_memsz), p_offset, p_flags))
            elif p_type == "PT_NOTE" and p_filesz:
                notes.append((p_offset, p_filesz))
        if not notes:
            raise self.bad("core file has no notes (PT_NOTE), so no threads")
        for offset, size in notes:
            if offset + size > self._size:
                raise self.bad(f"truncated core file (notes end at offset 0x{offset + size:x}, "
                               f"file has 0x{self._size:x} bytes)")
            self._parse_notes(self.pread(self._fd, offset, size), offset)
        segs.sort()
        self.segments = segs
        self._seg_starts = [s.vaddr for s in segs]
        data_end = max((s.offset + s.filesz for s in segs if s.filesz), default=0)
        if data_end > self._size:
            self.warnings.append(f"{self.path}: core file truncated: memory is stored up to offset "
                                 f"0x{data_end:x} but the file has 0x{self._size:x} bytes")
        self.parsed()

    def _parse_notes(self, data, base):
        pos, n = 0, len(data)
        head = struct.Struct(self.header.endian + "III")
        while pos + 12 <= n:
            namesz, descsz, ntype = head.unpack_from(data, pos)
            desc_off = pos + 12 + _align4(namesz)
            if desc_off + descsz > n:
                raise self.bad(f"malformed or truncated note at offset 0x{base + pos:x} "
                               f"(it runs past the end of the notes)")
            name = data[pos + 12:pos + 12 + namesz].rstrip(b"\0")
            desc = data[desc_off:desc_off + descsz]
            self.notes.append((name, ntype, desc, base + pos))
            self.note(name, ntype, desc, base + pos)
            pos = desc_off + _align4(descsz)

    def note(self, name, ntype, desc, where):
        """One note, in file order (for a subclass to interpret)."""

    def parsed(self):
        """Called once the headers and notes are read (for a subclass to check them)."""

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
        """Some (at least one) of the bytes at addr, from the core or read_missing."""
        i = bisect.bisect_right(self._seg_starts, addr) - 1
        seg = self.segments[i] if i >= 0 else None
        if seg is not None and addr < seg.end:
            off = addr - seg.vaddr
            if off < seg.filesz:
                where = seg.offset + off
                n = min(size, seg.filesz - off, self._size - where)
                data = self.pread(self._fd, where, n) if n > 0 else b""
                if not data:
                    raise MemoryReadError(addr, size, "core file truncated")
                return data
            limit, why = seg.end, "not saved in the core file"
        else:
            nxt = i + 1
            limit = self._seg_starts[nxt] if nxt < len(self._seg_starts) else ADDR_LIMIT
            why = "not in the core file"
        return self.read_missing(addr, min(size, limit - addr), why)

    def read_missing(self, addr, size, why):
        """Some bytes at ``addr`` that the core does not hold (``why`` says so)."""
        raise MemoryReadError(addr, size, why)

    def read_pointer(self, addr):
        n = self.arch.ptr_size
        return int.from_bytes(self.read(addr, n), self.byteorder)

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
