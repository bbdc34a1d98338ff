"""The module of JIT code, for unwind/modules.module_at: code no library holds is given to the
CFI stepper (and the symbol lookup) as a module loaded at 0 where its JIT described it with CFI:
an object registered through GDB's JIT interface, a jitdump code load with unwinding data, or
frames given to libgcc's __register_frame."""
from ..errors import BadFileError, MemoryReadError
from .gdbjit import object_at
from .registered import registered_at
from .symbols import jit_sources


def jit_module_at(ps, addr):
    """(library, module) of the JIT code at ``addr``, or (None, None)."""
    obj = object_at(ps, addr)
    if obj is not None:
        return obj.library, obj.module
    try:
        dump = jit_sources(ps).current_jitdump(ps)
        load = dump.lookup(addr) if dump is not None else None
        lib = load.library(ps.arch) if load is not None else None
        if lib is None:
            frames = registered_at(ps, addr)
            lib = frames.library if frames is not None else None
    except (BadFileError, MemoryReadError):
        return None, None
    return (lib, lib.module) if lib is not None else (None, None)


def cfi_only_swk_reads(ps, addr, lib):
    """Whether ``lib`` (module_at's for ``addr``) is JIT code whose CFI only swk reads: a
    jitdump's, libgcc's registered frames.  GDB and LLDB read a GDB-JIT object's themselves;
    a debugger's unwinder hook must not leave the others to the debugger's CFI unwinder."""
    libs = ps.library_state
    if lib is None or (libs is not None and libs.get_library_at_addr(addr) is not None):
        return False
    return object_at(ps, addr) is None
