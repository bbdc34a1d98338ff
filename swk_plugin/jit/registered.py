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
which a program linked with -static-libgcc carries (Debian's libgcc_s.so.1 is stripped).
"""
from ..dwarf.cfi import CfiError, CfiTable
from ..elf.strtab import may_name
from ..elf.symbols import module_symbols
from ..errors import BadFileError, MemoryReadError
from ..procstate import Library
from .elfimage import image

#: libgcc's lists of registered objects, as unwind-dw2-fde.c names them.
LISTS = ("unseen_objects", "seen_objects")
MAX_OBJECTS = 4096
MAX_EH_FRAME = 16 << 20


def list_heads(ps):
    """Addresses of libgcc's list heads in the target (once per library list), or ()."""
    libs = ps.library_state
    if libs is None:
        return ()
    libs.ensure_current()
    return libs.cache.value("libgcc-object-lists", lambda: _find_lists(libs))


def _find_lists(libs):
    heads = []
    for lib in libs.get_libraries():
        mod = lib.module
        if mod is None or not may_name(mod, LISTS[0]):
            continue        # its string tables do not hold the name: its symbols are not read
        table = module_symbols(mod)
        if table is None:
            continue
        for name in LISTS:
            heads += [s.value + lib.base for s in table.by_name(name) if s.value and s.kind == "object"]
    return tuple(heads)


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
    out = []
    ptr = ps.arch.ptr_size
    for head in list_heads(ps):
        try:
            obj, seen = ps.read_pointer(head), set()
            while obj and obj not in seen and len(seen) < MAX_OBJECTS:
                seen.add(obj)
                u = ps.read_pointer(obj + 3 * ptr)
                begin = u if _is_cie(ps, u) else ps.read_pointer(u) if u else 0
                if begin and _is_cie(ps, begin):
                    frames = _parsed(ps, begin)
                    if frames is not None:
                        out.append(frames)
                obj = ps.read_pointer(obj + 5 * ptr)
        except MemoryReadError:
            continue
    return out


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
