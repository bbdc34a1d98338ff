"""The ELF file header and program headers, read with struct.

A walk opens every module of the process; pyelftools' ELFFile costs ~25 ms to
import and milliseconds per file to build its segment objects (it parses a
PT_DYNAMIC segment just to list it), so the header and the program headers
are read here directly. pyelftools stays available as ``ElfModule.elf`` for
whatever needs its full model.
"""
import struct

from ..arch import elf_machine_symbol
from ..errors import BadFileError

ET_NAMES = {0: "ET_NONE", 1: "ET_REL", 2: "ET_EXEC", 3: "ET_DYN", 4: "ET_CORE"}

PT_NAMES = {0: "PT_NULL", 1: "PT_LOAD", 2: "PT_DYNAMIC", 3: "PT_INTERP", 4: "PT_NOTE", 5: "PT_SHLIB",
            6: "PT_PHDR", 7: "PT_TLS", 0x6474E550: "PT_GNU_EH_FRAME", 0x6474E551: "PT_GNU_STACK",
            0x6474E552: "PT_GNU_RELRO", 0x6474E553: "PT_GNU_PROPERTY"}

NT_GNU_BUILD_ID = 3
PN_XNUM = 0xFFFF
#: p_flags bits.
PF_X, PF_W, PF_R = 1, 2, 4


class ElfHeader:
    """The fields of an ELF header that swk uses, under pyelftools' names."""
    __slots__ = ("elfclass", "little_endian", "fields")

    def __init__(self, raw, name):
        if len(raw) < 16 or raw[:4] != b"\x7fELF":
            raise BadFileError(f"{name}: not an ELF file (bad magic)")
        ei_class, ei_data = raw[4], raw[5]
        if ei_class not in (1, 2):
            raise BadFileError(f"{name}: not a readable ELF file (ELF class {ei_class})")
        if ei_data not in (1, 2):
            raise BadFileError(f"{name}: not a readable ELF file (ELF data encoding {ei_data})")
        self.elfclass = 64 if ei_class == 2 else 32
        self.little_endian = ei_data == 1
        e = "<" if self.little_endian else ">"
        fmt = e + ("HHIQQQIHHHHHH" if ei_class == 2 else "HHIIIIIHHHHHH")
        need = 16 + struct.calcsize(fmt)
        if len(raw) < need:
            raise BadFileError(f"{name}: not a readable ELF file (truncated header)")
        (e_type, e_machine, e_version, e_entry, e_phoff, e_shoff, e_flags, e_ehsize, e_phentsize,
         e_phnum, e_shentsize, e_shnum, e_shstrndx) = struct.unpack_from(fmt, raw, 16)
        self.fields = {
            "e_type": ET_NAMES.get(e_type, e_type), "e_machine": elf_machine_symbol(e_machine),
            "e_version": e_version, "e_entry": e_entry, "e_phoff": e_phoff, "e_shoff": e_shoff,
            "e_flags": e_flags, "e_ehsize": e_ehsize, "e_phentsize": e_phentsize, "e_phnum": e_phnum,
            "e_shentsize": e_shentsize, "e_shnum": e_shnum, "e_shstrndx": e_shstrndx,
        }

    def __getitem__(self, key):
        return self.fields[key]

    @property
    def endian(self):
        return "<" if self.little_endian else ">"

    @property
    def byteorder(self):
        return "little" if self.little_endian else "big"


def read_program_headers(hdr, read_file, name):
    """[(p_type, p_vaddr, p_memsz, p_flags, p_offset, p_filesz, p_align)] of the file;
    ``read_file(offset, size)`` raises BadFileError past the end of the file."""
    phoff, phnum, phentsize = hdr["e_phoff"], hdr["e_phnum"], hdr["e_phentsize"]
    if not phoff or not phnum:
        return []
    if phnum == PN_XNUM:  # the real count is in section 0's sh_info
        shoff = hdr["e_shoff"]
        if not shoff:
            raise BadFileError(f"{name}: bad program headers (PN_XNUM without sections)")
        off = 44 if hdr.elfclass == 64 else 28
        phnum = struct.unpack_from(hdr.endian + "I", read_file(shoff + off, 4))[0]
    if hdr.elfclass == 64:
        fmt, need = hdr.endian + "IIQQQQQQ", 56
    else:
        fmt, need = hdr.endian + "IIIIIIII", 32
    if phentsize < need:
        raise BadFileError(f"{name}: bad program headers (entry size {phentsize})")
    raw = read_file(phoff, phentsize * phnum)
    out = []
    for i in range(phnum):
        row = struct.unpack_from(fmt, raw, i * phentsize)
        if hdr.elfclass == 64:
            p_type, p_flags, p_offset, p_vaddr, _paddr, p_filesz, p_memsz, p_align = row
        else:
            p_type, p_offset, p_vaddr, _paddr, p_filesz, p_memsz, p_flags, p_align = row
        out.append((PT_NAMES.get(p_type, p_type), p_vaddr, p_memsz, p_flags, p_offset, p_filesz, p_align))
    return out


def iter_notes(data, endian, align=4):
    """(name, type, desc) of each note in a PT_NOTE segment's or SHT_NOTE section's bytes;
    ``endian``: the file's struct prefix (ElfHeader.endian)."""
    align = 8 if align == 8 else 4
    pos, n = 0, len(data)
    while pos + 12 <= n:
        namesz, descsz, ntype = struct.unpack_from(endian + "III", data, pos)
        pos += 12
        name_end = pos + namesz
        desc_at = (name_end + align - 1) & ~(align - 1)
        desc_end = desc_at + descsz
        if name_end > n or desc_end > n:
            return
        yield data[pos:name_end].rstrip(b"\0"), ntype, data[desc_at:desc_end]
        pos = (desc_end + align - 1) & ~(align - 1)


class NotElf(BadFileError):
    """Bytes that are not an ELF image this reader handles."""


class ElfImage:
    """What a loaded ELF's program headers say, read through ``read(offset, size)``: the
    file type, entry, its PT_LOADs (vaddr, memsz, offset, filesz, flags), PT_PHDR's and
    PT_DYNAMIC's places and where the image ends (the last segment or section table), in
    the image's own byte order."""
    __slots__ = ("e_type", "entry", "loads", "phdr_vaddr", "dynamic", "image_end", "elfclass", "machine",
                 "byteorder")

    def __init__(self, read, name="<image>"):
        raw = read(0, 64)
        try:
            hdr = ElfHeader(raw, name)
        except BadFileError as exc:
            raise NotElf(str(exc)) from None
        self.elfclass = hdr.elfclass
        self.byteorder = hdr.byteorder
        self.machine = hdr["e_machine"]
        self.e_type = hdr["e_type"]
        self.entry = hdr["e_entry"]
        if not 0 < hdr["e_phnum"] <= 4096 or hdr["e_phentsize"] > 1024:
            raise NotElf(f"{name}: bad program header table")

        def read_exact(offset, size):
            data = read(offset, size)
            if len(data) < size:
                raise NotElf(f"{name}: truncated program header table")
            return data
        rows = read_program_headers(hdr, read_exact, name)
        self.loads, self.phdr_vaddr, self.dynamic = [], None, None
        end = max(64, hdr["e_phoff"] + hdr["e_phentsize"] * hdr["e_phnum"])
        if hdr["e_shoff"] and 0 < hdr["e_shnum"] < 256 and hdr["e_shentsize"]:
            end = max(end, hdr["e_shoff"] + hdr["e_shnum"] * hdr["e_shentsize"])
        for p_type, p_vaddr, p_memsz, p_flags, p_offset, p_filesz, _align in rows:
            if p_type == "PT_LOAD":
                self.loads.append((p_vaddr, p_memsz, p_offset, p_filesz, p_flags))
                end = max(end, p_offset + p_filesz)
            elif p_type == "PT_PHDR":
                self.phdr_vaddr = p_vaddr
            elif p_type == "PT_DYNAMIC":
                self.dynamic = (p_vaddr, p_memsz)
        self.loads.sort()
        self.image_end = end

    def first_vaddr(self):
        """The lowest load address, page offset included (0 for an image with no PT_LOAD)."""
        return min(ld[0] - ld[2] for ld in self.loads) if self.loads else 0
