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
    hit = syms.by_linkage_name("_thread_db_" + name) if syms is not None else None
    if not hit:
        return None
    raw = mod.read_vaddr(hit[0].value, 12)
    if raw is None or len(raw) < 12:
        return None
    return tuple(int.from_bytes(raw[i:i + 4], mod.byteorder) for i in (0, 4, 8))


def _field(ps, base, desc, index=0):
    bits, _count, offset = desc
    size = bits // 8
    return int.from_bytes(ps.read_memory(base + offset + index * size, size), ps.arch.byteorder)


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


#: Bound on the threads walked on glibc's lists.
MAX_THREADS = 1 << 16
_FIELDS = ("link_map_l_tls_modid", "link_map_l_tls_offset", "pthread_dtvp", "dtv_dtv", "dtv_t_pointer_val")


def _descriptors(libc, names):
    out = {name: _descriptor(libc, name) for name in names}
    return None if None in out.values() else out


def _sizeof(libc, name):
    """libc's ``_thread_db_sizeof_<name>`` (a 32-bit size), or None."""
    mod = libc.module
    syms = module_symbols(mod) if mod is not None else None
    hit = syms.by_linkage_name("_thread_db_sizeof_" + name) if syms is not None else None
    raw = mod.read_vaddr(hit[0].value, 4) if hit else None
    return int.from_bytes(raw, mod.byteorder) if raw else None


def _pre_tcb_size(libc, arch):
    """Variant 1's TLS_PRE_TCB_SIZE: the bytes of struct pthread (and any TCB) below the TCB's
    end, from libc's own DB_THREAD_SELF where it states the thread pointer's bias
    (``_thread_db_register64``: thread descriptor = tp + bias, with Power's 0x7000 in it), else
    struct pthread's size (CONST_THREAD_AREA: AArch64's descriptor lies right below tp)."""
    reg = _descriptor(libc, "register%d" % (8 * arch.ptr_size))
    if reg is not None and reg[0] == 8 * arch.ptr_size:
        return -_signed(reg[1], 32) - arch.tls_tcb_offset
    return _sizeof(libc, "pthread")


def thread_descriptor(ps, thread, libc):
    """The address of ``thread``'s struct pthread (libthread_db's th_unique): from its
    thread pointer when the target has it (a register, GDB's thread handle, a core's
    notes), else found by thread id on glibc's lists of threads (_dl_stack_used,
    _dl_stack_user), as libthread_db walks them."""
    arch = ps.arch
    try:
        tp = ps.get_thread_pointer(thread)
    except SwkError:
        tp = None
    if tp is not None:
        if arch.tls_variant == 2:
            return tp
        pre = _pre_tcb_size(libc, arch)
        if pre is not None:
            return tp - arch.tls_tcb_offset - pre
    d = _descriptors(libc, ("rtld_global__dl_stack_used", "rtld_global__dl_stack_user", "list_t_next",
                            "pthread_list", "pthread_tid"))
    mod = libc.module
    syms = module_symbols(mod) if mod is not None else None
    hit = syms.by_linkage_name("__nptl_rtld_global") if syms is not None else None
    if d is None or not hit:
        raise TlsError(f"Cannot find thread-local storage for thread {thread}: no thread pointer, "
                       "and libc does not describe its list of threads")
    rtld = ps.read_pointer(libc.base + hit[0].value)
    for key in ("rtld_global__dl_stack_user", "rtld_global__dl_stack_used"):
        head = rtld + d[key][2]
        entry = ps.read_pointer(head + d["list_t_next"][2])
        for _ in range(MAX_THREADS):
            if entry in (0, head):
                break
            pd = entry - d["pthread_list"][2]
            if _field(ps, pd, d["pthread_tid"]) == thread:
                return pd
            entry = ps.read_pointer(entry + d["list_t_next"][2])
    raise TlsError(f"Cannot find thread-local storage for thread {thread}: it is not on libc's "
                   "list of threads")


def tls_block(ps, lib, thread):
    """The address of library ``lib``'s TLS block in ``thread``; TlsError if unknown."""
    arch = ps.arch
    libc = ps.library_state.get_libc()
    desc = _descriptors(libc, _FIELDS) if libc is not None else None
    if desc is None:
        return _static_executable_block(ps, lib, ps.get_thread_pointer(thread))
    node = _link_map_node(ps, lib)
    if node is None:
        raise TlsError(f"Cannot find thread-local storage for {lib.path}: "
                       "it is not on the dynamic linker's list")
    try:
        pd = thread_descriptor(ps, thread, libc)
        modid = _field(ps, node, desc["link_map_l_tls_modid"])
        bits = desc["link_map_l_tls_offset"][0]
        offset = _signed(_field(ps, node, desc["link_map_l_tls_offset"]), bits)
        if not modid:
            raise TlsError(f"Cannot find thread-local storage for {lib.path}: it has none")
        dtv = _field(ps, pd, desc["pthread_dtvp"])
        slot = dtv + modid * (desc["dtv_dtv"][0] // 8)
        block = _field(ps, slot, desc["dtv_t_pointer_val"])
    except MemoryReadError as exc:
        raise TlsError(f"Cannot find thread-local storage for {lib.path}: {exc}") from None
    if block and not block & 1:
        return block
    if offset not in (NO_TLS_OFFSET, FORCED_DYNAMIC_TLS_OFFSET):   # in the static TLS area
        if arch.tls_variant == 2:
            return (pd - offset) & arch.address_mask
        size = _pre_tcb_size(libc, arch) or 0
        return (pd + size + offset) & arch.address_mask
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
    arch = ps.arch
    if arch.tls_variant == 2:
        return (tp - size) & arch.address_mask
    # variant 1: the block follows the TCB's end, past a two-word TCB where one lies there
    first = 2 * arch.ptr_size if arch.tls_first_block is None else arch.tls_first_block
    return (tp - arch.tls_tcb_offset + (first + align - 1) // align * align) & arch.address_mask
