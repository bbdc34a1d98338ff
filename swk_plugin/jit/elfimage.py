"""A small ELF image, made in memory, for code a JIT described without one (a jitdump's code
load, frames given to libgcc's __register_frame): its function symbol (where there is a name)
and its .eh_frame (and .eh_frame_hdr) at the addresses they have in the process, so that the
symbol lookup and the CFI stepper read it like any module loaded at 0 (what perf inject's
genelf.c writes to disk for perf report)."""
import struct

from ..elf.module import ElfModule

ET_EXEC = 2
SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_NOBITS = 1, 2, 3, 8
SHF_ALLOC, SHF_EXECINSTR = 0x2, 0x4
STB_GLOBAL, STT_FUNC = 1, 2


def align8(n):
    return (n + 7) & ~7


def code_image(name, start, size, eh_frame, eh_frame_hdr, machine, elfclass, byteorder, label):
    """An ElfModule holding ``name`` at [start, start + size) (.text, no bytes: the code is in
    the process) and its CFI: .eh_frame at the first 8-byte boundary after the code, and
    .eh_frame_hdr right after it, as a jitdump's JIT laid them out."""
    eh_addr = start + align8(size)
    return image(name, start, size, eh_frame, eh_addr, eh_frame_hdr, eh_addr + len(eh_frame), machine,
                 elfclass, byteorder, label)


def image(name, start, size, eh_frame, eh_addr, eh_frame_hdr, hdr_addr, machine, elfclass, byteorder, label):
    """An ElfModule: .text [start, start + size) (no bytes), a symbol ``name`` for it (none
    where ``name`` is None), .eh_frame at ``eh_addr``, .eh_frame_hdr at ``hdr_addr`` (where
    given)."""
    o = "<" if byteorder == "little" else ">"
    is64 = elfclass == 64
    shstr = b"\0.text\0.eh_frame\0.eh_frame_hdr\0.symtab\0.strtab\0.shstrtab\0"

    def at(s):
        return shstr.index(s.encode() + b"\0")
    strtab = b"\0" + (name or "").encode("utf-8", "replace") + b"\0"
    if is64:
        sym_fmt, sh_fmt, eh_size, sh_size = o + "IBBHQQ", o + "IIQQQQIIQQ", 64, 64
        syms = struct.pack(sym_fmt, 0, 0, 0, 0, 0, 0)
        if name:
            syms += struct.pack(sym_fmt, 1, (STB_GLOBAL << 4) | STT_FUNC, 0, 1, start, size)
    else:
        sym_fmt, sh_fmt, eh_size, sh_size = o + "IIIBBH", o + "IIIIIIIIII", 52, 40
        syms = struct.pack(sym_fmt, 0, 0, 0, 0, 0, 0)
        if name:
            syms += struct.pack(sym_fmt, 1, start, size, (STB_GLOBAL << 4) | STT_FUNC, 0, 1)
    hdr = eh_frame_hdr or b""
    blobs = [eh_frame, hdr, syms, strtab, shstr]
    offsets, pos = [], eh_size
    for b in blobs:
        pos = align8(pos)
        offsets.append(pos)
        pos += len(b)
    shoff = align8(pos)
    sections = [
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
        (at(".text"), SHT_NOBITS, SHF_ALLOC | SHF_EXECINSTR, start, offsets[0], size, 0, 0, 16, 0),
        (at(".eh_frame"), SHT_PROGBITS, SHF_ALLOC, eh_addr, offsets[0], len(eh_frame), 0, 0, 8, 0),
    ]
    if hdr:
        sections.append((at(".eh_frame_hdr"), SHT_PROGBITS, SHF_ALLOC, hdr_addr, offsets[1], len(hdr), 0, 0, 4, 0))
    symtab = len(sections)
    sections += [
        (at(".symtab"), SHT_SYMTAB, 0, 0, offsets[2], len(syms), symtab + 1, 1, 8, struct.calcsize(sym_fmt)),
        (at(".strtab"), SHT_STRTAB, 0, 0, offsets[3], len(strtab), 0, 0, 1, 0),
        (at(".shstrtab"), SHT_STRTAB, 0, 0, offsets[4], len(shstr), 0, 0, 1, 0),
    ]
    ident = b"\x7fELF" + bytes([2 if is64 else 1, 1 if o == "<" else 2, 1]) + bytes(9)
    head = o + ("HHIQQQIHHHHHH" if is64 else "HHIIIIIHHHHHH")
    header = ident + struct.pack(head, ET_EXEC, machine, 1, 0, 0, shoff, 0, eh_size, 0, 0, sh_size,
                                 len(sections), len(sections) - 1)
    out = bytearray(header)
    for off, b in zip(offsets, blobs):
        out += bytes(off - len(out)) + b
    out += bytes(shoff - len(out))
    for sec in sections:
        out += struct.pack(sh_fmt, *sec)
    return ElfModule(data=bytes(out), name=label)
