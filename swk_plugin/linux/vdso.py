"""The vDSO: an ELF image the kernel maps into every process, read from its memory."""
from ..elf.module import module_from_memory
from ..procstate import Library


def vdso_library(read, ehdr):
    """A Library for the vDSO whose ELF header is at ``ehdr`` (AT_SYSINFO_EHDR), its
    module made from target memory through read(addr, n); BadFileError if unreadable."""
    mod = module_from_memory(read, ehdr, "[vdso]")
    base = ehdr - mod.first_load_vaddr()
    ranges = [(base + lo, base + hi) for lo, hi in mod.exec_spans()]
    lib = Library("[vdso]", base, lambda _lib: mod, ranges=ranges)
    lib.image = mod
    return lib
