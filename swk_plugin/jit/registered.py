"""Frames a program gave libgcc's unwinder itself: ``__register_frame(begin)`` (and
``__register_frame_info``) put a ``struct object`` on libgcc's list ``unseen_objects``, and the
first unwind through it moves it to ``seen_objects`` (unwind-dw2-fde.c, GCC 12)::

    struct object { void *pc_begin; void *tbase; void *dbase;
                    union { const struct dwarf_fde *single; struct dwarf_fde **array;
                            struct fde_vector *sort; } u;
                    union { struct { unsigned long sorted : 1, from_array : 1, ... } b; size_t i; } s;
                    struct object *next; };
    struct fde_vector { const void *orig_data; size_t count; const struct dwarf_fde *array[]; };

``u`` is the registered .eh_frame until the object is sorted, then the fde_vector whose
``orig_data`` it is: the .eh_frame is the one of the two that starts with a CIE.  It is read
from the target's memory up to its zero terminator and given to the CFI stepper as a module
(elfimage.py) covering its FDEs' code.  The lists are static variables: found by their symbols,
which a program linked with -static-libgcc carries.  Debian's libgcc_s.so.1 is stripped: there the
lists are among the few words of its writable segment (0x518 bytes), and a word is taken for a
list head only where it leads to objects whose frames parse as .eh_frame with FDEs (``_read``).
"""
from ..dwarf.cfi import CfiError, CfiTable
from ..elf.strtab import may_name
from ..elf.symbols import module_symbols
from ..elf.header import PF_W
from ..errors import BadFileError, MemoryReadError, SwkError
from ..procstate import Library
from .elfimage import image

#: libgcc's lists of registered objects, as unwind-dw2-fde.c names them.
LISTS = ("unseen_objects", "seen_objects")
#: What a libgcc exports that has those lists (a stripped one has no names for them).
REGISTER = "__register_frame_info"
#: The largest writable segment searched for the lists of a stripped libgcc.
MAX_SCAN = 1 << 16
MAX_OBJECTS = 4096
MAX_EH_FRAME = 16 << 20


def list_heads(ps):
    """(heads, scans) of libgcc's lists in the target (once per library list, see _find_lists)."""
    libs = ps.library_state
    if libs is None:
        return (), ()
    libs.ensure_current()
    return libs.cache.value("libgcc-object-lists", lambda: _find_lists(libs))


def _find_lists(libs):
    """(heads, scans): the list heads' addresses where their symbols say, and the writable
    ranges (address, size) of each libgcc without them, where the heads are searched for."""
    heads, scans = [], []
    for lib in libs.get_libraries():
        mod = lib.module
        if mod is None:
            continue
        named = []
        if may_name(mod, LISTS[0]):   # else its string tables do not hold the name: symbols not read
            table = module_symbols(mod)
            if table is not None:
                for name in LISTS:
                    named += [s.value + lib.base for s in table.by_linkage_name(name) if s.value and s.kind == "object"]
        heads += named
        if not named and may_name(mod, REGISTER):
            table = module_symbols(mod)
            if table is not None and any(s.value and s.kind == "func" for s in table.by_linkage_name(REGISTER)):
                scans += _writable(lib, mod)
    return tuple(heads), tuple(scans)


def _writable(lib, mod):
    try:
        loads = mod.segments("PT_LOAD")
    except SwkError:
        return []
    return [(lib.base + vaddr, memsz) for _t, vaddr, memsz, flags, _off, _filesz in loads
            if flags & PF_W and 0 < memsz <= MAX_SCAN]


def _is_cie(ps, addr):
    """Whether an .eh_frame CIE starts at ``addr`` (a length, then a CIE id of 0)."""
    try:
        raw = ps.read_memory(addr, 8)
    except MemoryReadError:
        return False
    order = ps.arch.byteorder
    length, cie_id = int.from_bytes(raw[:4], order), int.from_bytes(raw[4:], order)
    return 0 < length < MAX_EH_FRAME and cie_id == 0


def eh_frame_bytes(ps, begin):
    """The .eh_frame at ``begin``, to its zero terminator (or MAX_EH_FRAME)."""
    order = ps.arch.byteorder
    out, pos = bytearray(), begin
    while len(out) < MAX_EH_FRAME:
        length = int.from_bytes(ps.read_memory(pos, 4), order)
        if length == 0:
            break
        size = 4 + length
        if length == 0xFFFFFFFF:
            size = 12 + int.from_bytes(ps.read_memory(pos + 4, 8), order)
        out += ps.read_memory(pos, size)
        pos += size
    return bytes(out)


class RegisteredFrames:
    """One registered .eh_frame: its FDEs' code as a module at 0."""

    def __init__(self, ps, begin, data):
        arch = ps.arch
        table = CfiTable.from_eh_frame(data, begin, ptr_size=arch.ptr_size, byteorder=arch.byteorder)
        spans = sorted((f.pc_begin, f.pc_end) for f in table.iter_fdes() if f.pc_end > f.pc_begin)
        if not spans:
            raise CfiError(f"no FDE in the frames registered at 0x{begin:x}")
        self.begin, self.spans = begin, spans
        lo, hi = spans[0][0], max(e for _s, e in spans)
        label = f"[registered frames 0x{begin:x}]"
        self.module = image(None, lo, hi - lo, data, begin, None, None, arch.elf_machine, 8 * arch.ptr_size,
                            arch.byteorder, label)
        self.library = Library(label, 0, lambda _lib: self.module, name=label, ranges=spans)

    def covers(self, addr):
        return any(lo <= addr < hi for lo, hi in self.spans)


#: Registered frames parsed, by (.eh_frame address, its bytes).
_PARSED = {}


def current_registered(ps):
    """The RegisteredFrames on libgcc's lists at this stop."""
    return ps.cache.value("libgcc-registered", lambda: _read(ps))


def _read(ps):
    heads, scans = list_heads(ps)
    out, done = [], set()
    for head in heads:
        _objects(ps, ps.read_pointer, head, out, done)
    ptr, order = ps.arch.ptr_size, ps.arch.byteorder
    for start, size in scans:
        try:
            data = ps.read_memory(start, size)
        except MemoryReadError:
            continue
        for off in range(0, size - ptr + 1, ptr):
            if int.from_bytes(data[off:off + ptr], order):
                # a word is a list head only if its first object's frames parse: nothing else there does
                _objects(ps, ps.read_pointer, start + off, out, done, strict=True)
    return out


def _objects(ps, read_pointer, head, out, done, strict=False):
    """The RegisteredFrames of the objects on the list at ``head`` (``strict``: none unless the
    first object is one), each .eh_frame once (``done``)."""
    ptr = ps.arch.ptr_size
    try:
        obj, seen = read_pointer(head), set()
        while obj and obj not in seen and len(seen) < MAX_OBJECTS:
            seen.add(obj)
            u = read_pointer(obj + 3 * ptr)
            begin = u if _is_cie(ps, u) else read_pointer(u) if u else 0
            frames = _parsed(ps, begin) if begin and _is_cie(ps, begin) else None
            if frames is None and strict and len(seen) == 1:
                return
            if frames is not None and frames.begin not in done:
                done.add(frames.begin)
                out.append(frames)
            obj = read_pointer(obj + 5 * ptr)
    except MemoryReadError:
        return


def _parsed(ps, begin):
    try:
        data = eh_frame_bytes(ps, begin)
        key = (begin, data)
        got = _PARSED.get(key)
        if got is None:
            if len(_PARSED) > 1024:
                _PARSED.clear()
            got = _PARSED[key] = RegisteredFrames(ps, begin, data)
        return got
    except (MemoryReadError, CfiError, BadFileError):
        return None


def registered_at(ps, addr):
    """The RegisteredFrames whose FDEs cover ``addr``, or None."""
    for frames in current_registered(ps):
        if frames.covers(addr):
            return frames
    return None
