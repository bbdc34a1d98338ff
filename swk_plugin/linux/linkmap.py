"""The dynamic linker's list of loaded objects, read from target memory.

glibc's ``struct r_debug { int r_version; struct link_map *r_map; ElfW(Addr) r_brk;
... }`` is found through the executable's DT_DEBUG entry, which ld.so fills in at
start-up; each ``struct link_map { l_addr; l_name; l_ld; l_next; l_prev; }`` is
pointer-sized fields, so one reader serves 32- and 64-bit processes.
"""
DT_NULL = 0
DT_DEBUG = 21
#: Bounds: dynamic entries scanned, objects listed, name length.
MAX_DYNAMIC = 1024
MAX_OBJECTS = 4096
MAX_NAME = 4096


def find_r_debug(read_pointer, dynamic_addr, ptr_size, count=MAX_DYNAMIC):
    """r_debug's address from the DT_DEBUG entry of the PT_DYNAMIC at ``dynamic_addr``,
    or 0 (no DT_DEBUG, or ld.so has not filled it in yet)."""
    for i in range(count):
        at = dynamic_addr + 2 * ptr_size * i
        tag = read_pointer(at)
        if tag == DT_NULL:
            break
        if tag == DT_DEBUG:
            return read_pointer(at + ptr_size)
    return 0


def read_c_string(read, addr, limit=MAX_NAME):
    """A NUL-terminated string at ``addr`` through read(addr, n), decoded leniently."""
    out = bytearray()
    while len(out) < limit:
        chunk = read(addr + len(out), 64 - ((addr + len(out)) % 64))
        nul = chunk.find(b"\0")
        if nul >= 0:
            out += chunk[:nul]
            break
        out += chunk
    return out.decode("utf-8", "surrogateescape")


def link_map(read_pointer, read, r_debug, ptr_size, limit=MAX_OBJECTS):
    """[(l_addr, l_name)] of every object on r_debug's list, in list order (the
    executable first, with an empty name).  Stops at a loop or after ``limit``."""
    out = []
    seen = set()
    lm = read_pointer(r_debug + ptr_size)
    while lm and lm not in seen and len(out) < limit:
        seen.add(lm)
        l_addr = read_pointer(lm)
        l_name = read_pointer(lm + ptr_size)
        out.append((l_addr, read_c_string(read, l_name) if l_name else ""))
        lm = read_pointer(lm + 3 * ptr_size)
    return out


def link_map_nodes(read_pointer, r_debug, ptr_size, limit=MAX_OBJECTS):
    """[(node address, l_addr, l_name pointer)] of r_debug's list, in list order."""
    out = []
    seen = set()
    lm = read_pointer(r_debug + ptr_size)
    while lm and lm not in seen and len(out) < limit:
        seen.add(lm)
        out.append((lm, read_pointer(lm), read_pointer(lm + ptr_size)))
        lm = read_pointer(lm + 3 * ptr_size)
    return out


def r_brk(read_pointer, r_debug, ptr_size):
    """r_debug.r_brk: where the dynamic linker calls on every library change."""
    return read_pointer(r_debug + 2 * ptr_size)
