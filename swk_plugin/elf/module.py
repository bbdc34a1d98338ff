"""ElfModule: one ELF file (or an in-memory image such as the vDSO).

Everything is lazy: opening a module reads the ELF header only; sections,
symbols, CFI and line tables are read the first time a walk needs them.
Addresses here are the file's own (unbiased) virtual addresses.
"""
import io
import os
import struct
import threading

from ..cache import ModuleCache
from ..errors import BadFileError
from .header import NT_GNU_BUILD_ID, PF_X, ElfHeader, ElfImage, NotElf, iter_notes, read_program_headers
from .sections import SHF_COMPRESSED, inflate_gnu, inflate_section


#: Section types by number, spelled as pyelftools spells them.
SHT_NAMES = {0: "SHT_NULL", 1: "SHT_PROGBITS", 2: "SHT_SYMTAB", 3: "SHT_STRTAB", 4: "SHT_RELA",
             5: "SHT_HASH", 6: "SHT_DYNAMIC", 7: "SHT_NOTE", 8: "SHT_NOBITS", 9: "SHT_REL",
             11: "SHT_DYNSYM", 14: "SHT_INIT_ARRAY", 15: "SHT_FINI_ARRAY", 16: "SHT_PREINIT_ARRAY",
             17: "SHT_GROUP", 18: "SHT_SYMTAB_SHNDX", 19: "SHT_RELR", 0x6ffffff6: "SHT_GNU_HASH",
             0x6ffffffd: "SHT_GNU_verdef", 0x6ffffffe: "SHT_GNU_verneed", 0x6fffffff: "SHT_GNU_versym"}


class Section:
    """A section's placement plus its bytes, read (and inflated, when compressed) on first
    use.  ``size`` is the size in the file."""
    __slots__ = ("name", "addr", "offset", "size", "type", "flags", "_module", "_data", "gnu_compressed")

    def __init__(self, module, name, addr, offset, size, sh_type, flags=0, gnu_compressed=False):
        self._module = module
        self.name, self.addr, self.offset, self.size, self.type = name, addr, offset, size, sh_type
        self.flags = flags
        self.gnu_compressed = gnu_compressed     # a .zdebug_* section standing for .debug_*
        self._data = None

    @property
    def compressed(self):
        return bool(self.flags & SHF_COMPRESSED) or self.gnu_compressed

    @property
    def data(self):
        if self._data is None:
            if self.type == "SHT_NOBITS":
                self._data = b""
            else:
                raw = self._module.read_file(self.offset, self.size)
                if self.flags & SHF_COMPRESSED:
                    raw = inflate_section(raw, self._module.little_endian, self._module.elfclass == 64)
                elif self.gnu_compressed:
                    raw = inflate_gnu(raw)
                self._data = raw
        return self._data


class ElfModule:
    def __init__(self, path=None, data=None, name=None):
        if path is None and data is None:
            raise ValueError("ElfModule needs a path or data")
        self.path = path
        self.name = name or path or "<memory>"
        self._lock = threading.Lock()
        try:
            if data is not None:
                self._stream = io.BytesIO(data)
                self.file_size = len(data)
            else:
                self._stream = open(path, "rb")
                self.file_size = os.fstat(self._stream.fileno()).st_size
            self._stream.seek(0)
            raw = self._stream.read(64)
        except FileNotFoundError:
            raise BadFileError(f"{path}: no such file") from None
        except (OSError, ValueError) as exc:
            raise BadFileError(f"{self.name}: not a readable ELF file ({exc})") from None
        try:
            hdr = self.header = ElfHeader(raw, self.name)
        except BadFileError:
            self.close()
            raise
        self.elfclass = hdr.elfclass
        self.little_endian = hdr.little_endian
        #: "little" or "big": the byte order of every word in the file (its DWARF, CFI,
        #: notes), which every reader of the module binds once.
        self.byteorder = hdr.byteorder
        self.machine = hdr["e_machine"]
        self.type = hdr["e_type"]
        self.entry = hdr["e_entry"]
        self.ptr_size = 8 if hdr.elfclass == 64 else 4
        self._elf = None
        self._sections = None
        self._segments = None
        self._build_id = False
        self._debuglink = False
        self.debug_file = None  # set by the debug-file resolver (elf/debugfile.py)
        self._debug_file_resolved = False
        #: Everything derived from this file's bytes (swk_plugin.cache).
        self.cache = ModuleCache()

    def __repr__(self):
        return f"<ElfModule {self.name}>"

    @property
    def elf(self):
        """pyelftools' ELFFile over the same bytes, made on first use (tests, rare paths)."""
        if self._elf is None:
            from elftools.elf.elffile import ELFFile
            if self.path is not None:
                stream = open(self.path, "rb")
            else:
                with self._lock:
                    self._stream.seek(0)
                    stream = io.BytesIO(self._stream.read(self.file_size))
            self._elf = ELFFile(stream)
        return self._elf

    def close(self):
        try:
            self._stream.close()
        except Exception:
            pass

    # --- raw access ---------------------------------------------------------------
    def read_file(self, offset, size):
        if not (0 <= offset and 0 <= size and offset + size <= self.file_size):
            raise BadFileError(f"{self.name}: bad file range 0x{offset:x}+0x{size:x}")
        if self.path is not None:
            data = self._pread(offset, size)
        else:
            with self._lock:
                self._stream.seek(offset)
                data = self._stream.read(size)
        if len(data) != size:
            raise BadFileError(f"{self.name}: truncated at offset 0x{offset:x}")
        return data

    def _pread(self, offset, size):
        """The bytes at ``offset``, read where they are (pread), not at a file position:
        workers forked to walk threads (cli._in_shares) share the open file, and a seek in
        one moved the others' reads (their threads then lost call sites and entry values)."""
        fd = self._stream.fileno()
        parts = []
        while size > 0:
            chunk = os.pread(fd, min(size, 1 << 30), offset)
            if not chunk:
                break
            parts.append(chunk)
            offset += len(chunk)
            size -= len(chunk)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    @property
    def is_pie_or_shared(self):
        return self.type == "ET_DYN"

    # --- segments -------------------------------------------------------------------
    def _load_segments(self):
        if self._segments is None:
            try:
                rows = read_program_headers(self.header, self.read_file, self.name)
            except (struct.error, ValueError, OverflowError) as exc:
                raise BadFileError(f"{self.name}: bad program headers ({exc})") from None
            self._notes_align = {r[4]: r[6] for r in rows if r[0] == "PT_NOTE"}
            self._tls = next(((r[2], r[6]) for r in rows if r[0] == "PT_TLS"), None)
            self._segments = [r[:6] for r in rows]
        return self._segments

    def tls_segment(self):
        """(p_memsz, p_align) of the PT_TLS segment (the module's thread-local block),
        or None."""
        self._load_segments()
        return self._tls

    def segments(self, p_type=None):
        return [s for s in self._load_segments() if p_type is None or s[0] == p_type]

    def load_spans(self):
        """[(lo, hi)] of PT_LOAD segments, unbiased."""
        return [(s[1], s[1] + s[2]) for s in self.segments("PT_LOAD")]

    def exec_spans(self):
        """[(lo, hi)] of executable PT_LOAD segments, unbiased."""
        return [(s[1], s[1] + s[2]) for s in self.segments("PT_LOAD") if s[3] & PF_X]

    def first_load_vaddr(self):
        loads = self.segments("PT_LOAD")
        return min(s[1] - s[4] for s in loads) if loads else 0

    def vaddr_to_offset(self, vaddr, size=1):
        """File offset of an unbiased address that lies in a PT_LOAD's file bytes."""
        for _t, va, _memsz, _f, off, filesz in self.segments("PT_LOAD"):
            if va <= vaddr and vaddr + size <= va + filesz:
                return off + (vaddr - va)
        return None

    def read_vaddr(self, vaddr, size):
        off = self.vaddr_to_offset(vaddr, size)
        if off is None:
            return None
        return self.read_file(off, size)

    # --- sections ---------------------------------------------------------------------
    def section_headers(self):
        """[(name, type, flags, addr, size, offset, link, entsize)] by section index, read
        with struct in one go: pyelftools' per-section parsing costs milliseconds a file."""
        hdrs = getattr(self, "_shdrs", None)
        if hdrs is not None:
            return hdrs
        try:
            e = self.header
            shoff, shnum, shentsize, shstrndx = e["e_shoff"], e["e_shnum"], e["e_shentsize"], e["e_shstrndx"]
            if not shoff or not shnum:
                self._shdrs = []
                return self._shdrs
            little = self.little_endian
            if self.elfclass == 64:
                fmt, need = ("<" if little else ">") + "IIQQQQIIQQ", 64
            else:
                fmt, need = ("<" if little else ">") + "IIIIIIIIII", 40
            if shentsize < need or shnum > 65535:
                raise BadFileError(f"{self.name}: bad section headers")
            raw = self.read_file(shoff, shentsize * shnum)
            rows = [struct.unpack_from(fmt, raw, i * shentsize) for i in range(shnum)]
            names = self._strtab(rows[shstrndx]) if 0 < shstrndx < shnum else b""
            hdrs = []
            for r in rows:
                name_off, sh_type, flags, addr, offset, size, link, _info, _align, entsize = r
                end = names.find(b"\0", name_off) if name_off < len(names) else -1
                name = names[name_off:end].decode("utf-8", "replace") if end >= 0 else ""
                hdrs.append((name, SHT_NAMES.get(sh_type, sh_type), flags, addr, size, offset, link, entsize))
        except (struct.error, ValueError, OSError, KeyError) as exc:
            raise BadFileError(f"{self.name}: bad section headers ({exc})") from None
        self._shdrs = hdrs
        return hdrs

    def _strtab(self, row):
        _n, _t, _f, _a, offset, size, *_rest = row
        if size > (64 << 20):
            raise BadFileError(f"{self.name}: implausible section name table")
        return self.read_file(offset, size)

    def _load_sections(self):
        if self._sections is None:
            secs = {}
            for name, sh_type, flags, addr, size, offset, _link, _entsize in self.section_headers():
                if name and name not in secs:
                    secs[name] = Section(self, name, addr, offset, size, sh_type, flags)
            for name, sec in list(secs.items()):    # GNU's .zdebug_X stands for .debug_X
                if name.startswith(".zdebug_") and ".debug_" + name[8:] not in secs:
                    secs[".debug_" + name[8:]] = Section(self, ".debug_" + name[8:], sec.addr, sec.offset,
                                                         sec.size, sec.type, sec.flags, gnu_compressed=True)
            self._sections = secs
        return self._sections

    def section(self, name):
        """The Section named ``name`` with file bytes behind it, else None."""
        sec = self._load_sections().get(name)
        if sec is None or sec.type == "SHT_NOBITS":
            return None
        return sec

    def has_section(self, name):
        return name in self._load_sections()

    # --- identity -----------------------------------------------------------------------
    @property
    def build_id(self):
        """The GNU build-id as a hex string, or None."""
        if self._build_id is False:
            self._build_id = None
            try:
                for _t, _va, _memsz, _f, off, filesz in self.segments("PT_NOTE"):
                    if filesz > (1 << 20):
                        continue
                    data = self.read_file(off, filesz)
                    align = self._notes_align.get(off, 4)
                    for name, ntype, desc in iter_notes(data, self.header.endian, align):
                        if name == b"GNU" and ntype == NT_GNU_BUILD_ID and desc:
                            self._build_id = desc.hex()
                            break
                    if self._build_id:
                        break
            except (BadFileError, struct.error, ValueError):
                self._build_id = None
        return self._build_id

    @property
    def debuglink(self):
        """(file name, crc32) from .gnu_debuglink, or None."""
        if self._debuglink is False:
            self._debuglink = None
            sec = self.section(".gnu_debuglink")
            if sec is not None:
                data = sec.data
                nul = data.find(b"\0")
                if nul > 0:
                    name = data[:nul].decode("utf-8", "replace")
                    crc_off = (nul + 4) & ~3
                    crc = int.from_bytes(data[crc_off:crc_off + 4], self.byteorder) if len(data) >= crc_off + 4 else None
                    self._debuglink = (name, crc)
        return self._debuglink

    @property
    def basename(self):
        return os.path.basename(self.name)


_MODULE_CACHE = {}
_MODULE_CACHE_MAX = 512


def open_module(path):
    """An ElfModule for ``path``, shared while the file is unchanged.

    Keyed by (real path, mtime, size), so a re-run of the same program keeps
    its parsed symbols and CFI, and a rebuilt file is read afresh.
    """
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError:
        raise BadFileError(f"{path}: no such file") from None
    key = (real, st.st_mtime_ns, st.st_size)
    mod = _MODULE_CACHE.get(key)
    if mod is None:
        if len(_MODULE_CACHE) >= _MODULE_CACHE_MAX:
            _MODULE_CACHE.pop(next(iter(_MODULE_CACHE)))
        mod = _MODULE_CACHE[key] = ElfModule(path=real, name=path)
    return mod


def module_from_memory(read, addr, name):
    """An ElfModule from an ELF image mapped in the target at ``addr`` (the vDSO).

    The image size comes from its own headers: the program headers' file
    extent and the section header table, so section lookups work.
    """
    try:
        img = ElfImage(lambda off, n: read(addr + off, n), name)
    except NotElf as exc:
        raise BadFileError(f"{name}: no ELF image at 0x{addr:x} ({str(exc).split(': ', 1)[-1]})") from None
    if len(img.loads) > 64:
        raise BadFileError(f"{name}: implausible program headers")
    size = img.image_end
    if size > (16 << 20):
        raise BadFileError(f"{name}: implausible image size {size}")
    return ElfModule(data=read(addr, size), name=name)
