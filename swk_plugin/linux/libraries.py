"""The library list of a Linux process, from its executable, auxv and link map.

What a debugger's own list would say, worked out from the target alone, so
every back-end that can read memory (GDB's, ptrace, a user's callbacks) lists
the same libraries: the executable (its load bias from AT_ENTRY), each object
on the dynamic linker's list, the dynamic linker itself before its list exists
(AT_BASE and PT_INTERP), and the vDSO (AT_SYSINFO_EHDR).
"""
import os

from ..elf.module import open_module
from ..errors import MemoryReadError
from ..procstate import Library
from . import linkmap
from .auxv import AT_BASE, AT_ENTRY, AT_SYSINFO_EHDR
from .vdso import vdso_library


def open_library_module(lib):
    return open_module(lib.path)


def executable_library(exe_path, auxv):
    """(Library of the executable, its ElfModule): biased by AT_ENTRY when it is PIE."""
    exe_mod = open_module(exe_path)
    bias = 0
    if exe_mod.is_pie_or_shared and AT_ENTRY in auxv:
        bias = auxv[AT_ENTRY] - exe_mod.entry
    aout = Library(exe_path, bias, open_library_module)
    aout.is_aout = True
    return aout, exe_mod


def r_debug_of(ps, exe_mod, bias):
    """r_debug's address from the executable's DT_DEBUG, or 0."""
    ptr = ps.arch.ptr_size
    try:
        for seg in exe_mod.segments("PT_DYNAMIC"):
            found = linkmap.find_r_debug(ps.read_pointer, seg[1] + bias, ptr)
            if found:
                return found
    except MemoryReadError:
        pass
    return 0


def linked_objects(ps, r_debug):
    """[(l_addr, l_name)] on the dynamic linker's list ([] when unreadable)."""
    if not r_debug:
        return []
    try:
        return linkmap.link_map(ps.read_pointer, ps.read_memory, r_debug, ps.arch.ptr_size)
    except MemoryReadError:
        return []


def link_map_libraries(ps, r_debug, resolve=None, skip=()):
    """[Library] of the objects on the dynamic linker's list at ``r_debug`` (the executable
    and the vDSO left out), each path through ``resolve(name)`` (default: as is); paths in
    ``skip`` are left out too."""
    libs = []
    seen = set(skip)
    for l_addr, name in linked_objects(ps, r_debug):
        if not name or name.startswith("linux-vdso") or name.startswith("linux-gate"):
            continue
        path = resolve(name) if resolve is not None else name
        if path in seen:
            continue
        seen.add(path)
        libs.append(Library(path, l_addr, open_library_module))
    return libs


def process_libraries(ps, exe_path, auxv, resolve=None, r_debug_fallback=None):
    """([Library], r_debug address): the executable first, then the link map's objects,
    the dynamic linker and the vDSO.  ``resolve(name)`` maps a link-map name to a host
    path (default: as is); ``r_debug_fallback()`` is asked where DT_DEBUG says nothing
    (a debugger that knows the symbol ``_r_debug``)."""
    aout, exe_mod = executable_library(exe_path, auxv)
    libs = [aout]
    r_debug = r_debug_of(ps, exe_mod, aout.base)
    if not r_debug and r_debug_fallback is not None:
        r_debug = r_debug_fallback() or 0
    libs += link_map_libraries(ps, r_debug, resolve, skip=(exe_path,))
    interp = interpreter_library(exe_mod, auxv, libs)
    if interp is not None:
        libs.append(interp)
    ehdr = auxv.get(AT_SYSINFO_EHDR)
    if ehdr:
        try:
            libs.append(vdso_library(ps.read_memory, ehdr))
        except Exception:  # an unreadable vDSO only costs its own frames
            pass
    return libs, r_debug


def interpreter_library(exe_mod, auxv, libs):
    """The dynamic linker as a Library when the link map does not list it yet: from the
    moment the kernel starts the process (at ld.so's _start) until ld.so has made its
    link map, only the auxiliary vector (AT_BASE) and the program's PT_INTERP tell where
    it is.  None when it is listed already, or the program has no interpreter."""
    base = auxv.get(AT_BASE)
    if not base or any(lib.base == base and not getattr(lib, "is_aout", False) for lib in libs):
        return None
    try:
        segs = exe_mod.segments("PT_INTERP")
        if not segs:
            return None
        _type, _vaddr, _memsz, _flags, offset, filesz = segs[0]
        path = exe_mod.read_file(offset, filesz).split(b"\0", 1)[0].decode("utf-8", "replace")
    except Exception:  # a bad header costs only the dynamic linker's frames
        return None
    if not path or any(os.path.realpath(lib.path) == os.path.realpath(path) for lib in libs):
        return None
    return Library(path, base, open_library_module)
