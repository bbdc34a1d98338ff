"""GDB's JIT interface (GDB manual, "JIT Compilation Interface"): a runtime that wants its code
debugged keeps, in a global ``__jit_debug_descriptor``, a list of in-memory object files, one
per piece of generated code, with their symbols, CFI and DWARF (LLVM's MCJIT/ORC do: lli)::

    struct jit_code_entry { jit_code_entry *next_entry, *prev_entry;
                            const char *symfile_addr; uint64_t symfile_size; };
    struct jit_descriptor { uint32_t version; uint32_t action_flag;
                            jit_code_entry *relevant_entry, *first_entry; };

Everything is read from the target's memory through the ProcessState, so it works wherever
memory can be read: live, in GDB, in LLDB, on a core.  The list is read again at each stop
(ProcessState.cache); an object whose bytes are unchanged is parsed once (``_OBJECTS``).

The objects LLVM registers are relocatable (ET_REL) with each section's ``sh_addr`` set to
where its copy was loaded, but their bytes unrelocated: a symbol's address is its section's
address plus its value, and the loaded, relocated ``.eh_frame`` is the one in memory at the
section's address (the copy the JIT gave ``__register_frame``).  ``JitObject`` makes of each
an ElfModule that reads like a linked module loaded at 0 (symbols at their addresses, the
relocated CFI), so the CFI stepper and the symbol lookup use it like any module.
"""
import bisect
import struct

from ..elf.module import ElfModule
from ..elf.strtab import may_name
from ..elf.symbols import module_symbols
from ..errors import BadFileError, MemoryReadError, SwkError
from ..procstate import Library

#: The descriptor's symbol, as GDB's jit.c looks it up in every objfile.
DESCRIPTOR = "__jit_debug_descriptor"
#: Limits on what a damaged list can make swk read.
MAX_ENTRIES = 1 << 16
MAX_OBJECT = 64 << 20
#: The source a GDB-JIT object's names are reported with (JSON's "name_source").
SOURCE = "gdb-jit"

SHN_LORESERVE = 0xFF00
SHF_ALLOC, SHF_EXECINSTR = 0x2, 0x4


class JitDescriptor:
    """``struct jit_descriptor`` as read from the target."""
    __slots__ = ("addr", "version", "action_flag", "relevant_entry", "first_entry")

    def __init__(self, ps, addr):
        ptr, order = ps.arch.ptr_size, ps.arch.byteorder
        raw = ps.read_memory(addr, 8 + 2 * ptr)
        self.addr = addr
        self.version = int.from_bytes(raw[0:4], order)
        self.action_flag = int.from_bytes(raw[4:8], order)
        self.relevant_entry = int.from_bytes(raw[8:8 + ptr], order)
        self.first_entry = int.from_bytes(raw[8 + ptr:8 + 2 * ptr], order)


class JitCodeEntry:
    """``struct jit_code_entry``: where one object file is in the target's memory."""
    __slots__ = ("addr", "next_entry", "prev_entry", "symfile_addr", "symfile_size")

    def __init__(self, ps, addr):
        ptr, order = ps.arch.ptr_size, ps.arch.byteorder
        raw = ps.read_memory(addr, 3 * ptr + 12)
        self.addr = addr
        self.next_entry, self.prev_entry, self.symfile_addr = (
            int.from_bytes(raw[i * ptr:(i + 1) * ptr], order) for i in range(3))
        size = int.from_bytes(raw[3 * ptr:3 * ptr + 8], order)
        if ptr == 4 and not 0 < size <= MAX_OBJECT:
            # the uint64_t after three 4-byte pointers: at 12 where the ABI aligns it to 4
            # (i386), at 16 where to 8 (the rest); a misplaced read has the size in its high
            # half, so it is never a plausible size
            size = int.from_bytes(raw[16:24], order) if len(raw) >= 24 else 0
        self.symfile_size = size


def descriptor_address(ps):
    """The address of ``__jit_debug_descriptor`` in the target (any module's symbol, as GDB
    looks in every objfile), or None; looked for once per library list, and only once a
    walk meets code no module holds."""
    libs = ps.library_state
    if libs is None:
        return None
    libs.ensure_current()
    return libs.cache.value("jit-descriptor", lambda: _find_descriptor(libs))


def _find_descriptor(libs):
    for lib in libs.get_libraries():
        mod = lib.module
        if mod is None or not may_name(mod, DESCRIPTOR):
            continue        # its string tables do not hold the name: its symbols are not read
        table = module_symbols(mod)
        if table is None:
            continue
        for sym in table.by_linkage_name(DESCRIPTOR):
            if sym.value and sym.kind == "object":
                return sym.value + lib.base
    return None


def code_entries(ps, desc):
    """The descriptor's entries, first to last (a cycle or a bad pointer ends the list)."""
    out, seen = [], set()
    addr = desc.first_entry
    while addr and addr not in seen and len(out) < MAX_ENTRIES:
        seen.add(addr)
        try:
            entry = JitCodeEntry(ps, addr)
        except MemoryReadError:
            break
        out.append(entry)
        addr = entry.next_entry
    return out


class JitObject:
    """One registered object file: its ElfModule (read like a linked module at 0), the
    address ranges of its code, and a Library standing for it (path ``[jit object 0x...]``)."""

    def __init__(self, entry, image, module):
        self.symfile_addr, self.symfile_size = entry.symfile_addr, entry.symfile_size
        self.image = image
        self.module = module
        self.name = f"[jit object 0x{entry.symfile_addr:x}]"
        self.code = sorted((addr, addr + size) for name, _t, flags, addr, size, *_r in module.section_headers()
                           if flags & SHF_ALLOC and flags & SHF_EXECINSTR and size and addr)
        self.library = Library(self.name, 0, lambda _lib: module, name=self.name,
                               ranges=self.code)

    def covers(self, addr):
        return any(lo <= addr < hi for lo, hi in self.code)

    def symbol_at(self, addr):
        """(Symbol, offset) of the function holding ``addr``, or None."""
        table = module_symbols(self.module)
        return table.lookup(addr) if table is not None else None

    def __repr__(self):
        return f"<JitObject 0x{self.symfile_addr:x}+{self.symfile_size} code={[(hex(a), hex(b)) for a, b in self.code]}>"


#: Objects parsed, by (address, bytes): an unchanged object is not parsed again.
_OBJECTS = {}
_OBJECTS_MAX = 4096


def _object(ps, entry):
    if not 0 < entry.symfile_size <= MAX_OBJECT:
        return None
    try:
        image = ps.read_memory(entry.symfile_addr, entry.symfile_size)
    except MemoryReadError:
        return None
    key = (entry.symfile_addr, image)
    obj = _OBJECTS.get(key)
    if obj is None:
        try:
            module = ElfModule(data=loaded_image(ps, image), name=f"[jit object 0x{entry.symfile_addr:x}]")
            obj = JitObject(entry, image, module)
        except (SwkError, struct.error, ValueError):
            return None
        if len(_OBJECTS) >= _OBJECTS_MAX:
            _OBJECTS.clear()
        _OBJECTS[key] = obj
    return obj


def loaded_image(ps, image):
    """``image`` as a linked module loaded at 0 would read, when it is relocatable: each
    symbol's value plus its section's address, and ``.eh_frame``'s bytes the relocated copy
    in memory at the section's address (where readable).  Other objects as they are."""
    probe = ElfModule(data=image, name="[jit object]")
    if probe.type != "ET_REL":
        return image
    shdrs = probe.section_headers()
    out = bytearray(image)
    order = "<" if probe.little_endian else ">"
    is64 = probe.elfclass == 64
    sym_fmt = order + ("IBBHQQ" if is64 else "IIIBBH")
    std = struct.calcsize(sym_fmt)
    for name, sh_type, _flags, _addr, size, offset, _link, entsize in shdrs:
        if sh_type != "SHT_SYMTAB" or offset + size > len(image):
            continue
        entsize = entsize or std
        for pos in range(offset, offset + size - std + 1, entsize):
            row = list(struct.unpack_from(sym_fmt, out, pos))
            shndx = row[3] if is64 else row[5]
            if 0 < shndx < min(len(shdrs), SHN_LORESERVE):
                vi = 4 if is64 else 1
                row[vi] = (row[vi] + shdrs[shndx][3]) & ((1 << (64 if is64 else 32)) - 1)
                struct.pack_into(sym_fmt, out, pos, *row)
    for name, sh_type, _flags, addr, size, offset, _link, _entsize in shdrs:
        if name == ".eh_frame" and addr and size and offset + size <= len(image):
            try:
                out[offset:offset + size] = ps.read_memory(addr, size)
            except MemoryReadError:
                pass        # unrelocated: its pc-relative pointers would be wrong
    return bytes(out)


class JitObjects:
    """The objects registered at one stop, with the lookup of the one holding an address."""

    def __init__(self, objects):
        self.objects = objects
        spans = sorted((lo, hi, obj) for obj in objects for lo, hi in obj.code)
        self._spans = spans
        self._starts = [s[0] for s in spans]

    def at(self, addr):
        i = bisect.bisect_right(self._starts, addr) - 1
        for lo, hi, obj in reversed(self._spans[max(0, i - 63):i + 1]):    # the nearest first
            if lo <= addr < hi:
                return obj
        return None

    def __len__(self):
        return len(self.objects)


def current_objects(ps):
    """The JitObjects registered in the target at this stop (empty without a descriptor)."""
    return ps.cache.value("gdb-jit-objects", lambda: _read_objects(ps))


def _read_objects(ps):
    addr = descriptor_address(ps)
    if addr is None:
        return JitObjects([])
    try:
        desc = JitDescriptor(ps, addr)
    except MemoryReadError:
        return JitObjects([])
    if desc.version != 1:           # the only version GDB knows
        return JitObjects([])
    objs = [obj for obj in (_object(ps, e) for e in code_entries(ps, desc)) if obj is not None]
    return JitObjects(objs)


def object_at(ps, addr):
    """The JitObject whose code holds ``addr``, or None."""
    try:
        return current_objects(ps).at(addr)
    except (BadFileError, MemoryReadError):
        return None
