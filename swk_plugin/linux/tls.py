"""Thread-local storage: where a module's TLS block is in one thread, as libthread_db says.

A thread-local variable's DWARF location is an offset in its module's TLS block
(DW_OP_form_tls_address).  Where that block is, glibc tells debuggers through
``_thread_db_*`` descriptors in libc (nptl_db's db-symbols: for each field libthread_db
needs, its size in bits, element count and offset), so nothing here hard-codes
glibc's struct layouts:

- the module's ``struct link_map`` (found on r_debug's list) has ``l_tls_modid``
  and ``l_tls_offset``;
- the thread's descriptor is at the thread pointer (x86's TLS_TCB_AT_TP; the
  architecture names the register) and its ``header.dtv`` points at the DTV, an
  array of ``dtv_t`` indexed by module id whose ``pointer.val`` is the block (odd
  while the thread has not allocated it: TLS_DTV_UNALLOCATED);
- a block in the static TLS area also lies at a fixed distance from the thread
  pointer: below it by ``l_tls_offset`` (variant 2, x86) or above it (variant 1).

This is what td_thr_tlsbase does, for live processes and cores alike.  A static
executable has no libc to ask; its own block (module 1) is the first in the static
area, rounded to its alignment.
"""
import os

from ..errors import MemoryReadError, SwkError
from ..elf.symbols import module_symbols
from . import linkmap
from .libraries import r_debug_of

#: glibc's marks in l_tls_offset and a DTV slot.
NO_TLS_OFFSET = 0
FORCED_DYNAMIC_TLS_OFFSET = -1


class TlsError(SwkError):
    """A thread-local variable's address cannot be worked out (one line, as GDB says it)."""


def _descriptor(libc, name):
    """(bits, count, offset) of libc's ``_thread_db_<name>``, or None."""
    mod = libc.module
    if mod is None:
        return None
    syms = module_symbols(mod)
    hit = syms.by_name("_thread_db_" + name) if syms is not None else None
    if not hit:
        return None
    raw = mod.read_vaddr(hit[0].value, 12)
    if raw is None or len(raw) < 12:
        return None
    return tuple(int.from_bytes(raw[i:i + 4], "little") for i in (0, 4, 8))


def _field(ps, base, desc, index=0):
    bits, _count, offset = desc
    size = bits // 8
    return int.from_bytes(ps.read_memory(base + offset + index * size, size), "little")


def _signed(value, bits):
    return value - (1 << bits) if value & (1 << (bits - 1)) else value


def _link_map_node(ps, lib):
    """The address of ``lib``'s struct link_map on r_debug's list, or None."""
    libs = ps.library_state
    aout = libs.get_aout()
    if aout is None or aout.module is None:
        return None
    r_debug = r_debug_of(ps, aout.module, aout.base)
    if not r_debug:
        return None
    nodes = linkmap.link_map_nodes(ps.read_pointer, r_debug, ps.arch.ptr_size)
    if getattr(lib, "is_aout", False):
        return nodes[0][0] if nodes else None
    want = os.path.basename(os.path.realpath(lib.path))
    fallback = None
    for node, l_addr, l_name in nodes[1:]:
        if l_addr != lib.base:
            continue
        name = linkmap.read_c_string(ps.read_memory, l_name) if l_name else ""
        if os.path.basename(os.path.realpath(name)) == want or os.path.basename(name) == want:
            return node
        fallback = fallback or node
    return fallback


def tls_block(ps, lib, thread):
    """The address of library ``lib``'s TLS block in ``thread``; TlsError if unknown."""
    arch = ps.arch
    tp = ps.get_thread_pointer(thread)
    libc = ps.library_state.get_libc()
    desc = {}
    if libc is not None:
        for name in ("link_map_l_tls_modid", "link_map_l_tls_offset", "pthread_dtvp", "dtv_dtv",
                     "dtv_t_pointer_val"):
            desc[name] = _descriptor(libc, name)
    if libc is None or None in desc.values():
        return _static_executable_block(ps, lib, tp)
    node = _link_map_node(ps, lib)
    if node is None:
        raise TlsError(f"Cannot find thread-local storage for {lib.path}: "
                       "it is not on the dynamic linker's list")
    try:
        modid = _field(ps, node, desc["link_map_l_tls_modid"])
        bits = desc["link_map_l_tls_offset"][0]
        offset = _signed(_field(ps, node, desc["link_map_l_tls_offset"]), bits)
        if not modid:
            raise TlsError(f"Cannot find thread-local storage for {lib.path}: it has none")
        dtv = _field(ps, tp, desc["pthread_dtvp"])
        slot = dtv + modid * (desc["dtv_dtv"][0] // 8)
        block = _field(ps, slot, desc["dtv_t_pointer_val"])
    except MemoryReadError as exc:
        raise TlsError(f"Cannot find thread-local storage for {lib.path}: {exc}") from None
    if block and not block & 1:
        return block
    if offset not in (NO_TLS_OFFSET, FORCED_DYNAMIC_TLS_OFFSET):   # in the static TLS area
        return (tp - offset if arch.tls_variant == 2 else tp + offset) & arch.address_mask
    raise TlsError(f"Cannot access thread-local variables of {os.path.basename(lib.path)} in this "
                   "thread yet: it has not allocated them")


def _static_executable_block(ps, lib, tp):
    """Module 1 of a program without libc's descriptors (a static executable)."""
    mod = lib.module if getattr(lib, "is_aout", False) else None
    seg = mod.tls_segment() if mod is not None else None
    if seg is None:
        raise TlsError("Cannot find thread-local variables: the program has no libc "
                       "(libthread_db's descriptors) and this is not the executable's")
    memsz, align = seg
    align = max(align, 1)
    size = (memsz + align - 1) // align * align
    if ps.arch.tls_variant == 2:
        return (tp - size) & ps.arch.address_mask
    return tp + 2 * ps.arch.ptr_size   # variant 1: the block follows the 2-word TCB
