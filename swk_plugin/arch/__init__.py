"""Architectures: the one place that knows register numbers, names, opcodes and layouts.

Everything above this layer talks in DWARF register numbers and asks the
Architecture (arch/base.py) for the rest.  This module is the registry: which
architectures swk walks (``ARCHITECTURES``, one line each), found by the names
debuggers and uname give them or by an ELF file's machine, class and byte order;
and the names of ELF machines, for messages about the ones swk does not walk.
"""
import importlib
import os

from ..errors import SwkError
from .base import Architecture

#: Every architecture swk walks, as (module, class), in the order they are tried.  Each class
#: states its own names (``name``, ``aliases``: uname's, GDB's, the first word of LLDB's target
#: triple) and its ELF machine.  Each is imported when first tried (a walk of an x86-64
#: process imports x86_64 alone: the others cost every command line ~8 ms); ``ARCHITECTURES``
#: (the classes) imports them all.
_ENTRIES = (("x86_64", "X86_64"), ("i386", "I386"), ("aarch64", "AArch64"), ("ppc64", "Ppc64le"),
            ("riscv64", "Riscv64"), ("x32", "X32"), ("ppc64.elfv1", "Ppc64"), ("s390x", "S390x"))
_CLASS_MODULE = {cls_name: mod for mod, cls_name in _ENTRIES}


def _classes():
    """The Architecture classes in order, each imported as it is reached."""
    for mod, cls_name in _ENTRIES:
        yield getattr(importlib.import_module(f"{__name__}.{mod}"), cls_name)


def __getattr__(attr):
    """``ARCHITECTURES`` and the classes by name (``X86_64``...), imported when asked for."""
    if attr == "ARCHITECTURES":
        return tuple(_classes())
    if attr in _CLASS_MODULE:
        return getattr(importlib.import_module(f"{__name__}.{_CLASS_MODULE[attr]}"), attr)
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")

#: ELF e_machine values swk may meet: pyelftools' name (what ElfHeader gives) and the name a
#: message gives the machine (the ELF specification's processor names).
ELF_MACHINES = {
    0: ("EM_NONE", "no machine"), 2: ("EM_SPARC", "SPARC"), 3: ("EM_386", "i386"), 4: ("EM_68K", "m68k"),
    8: ("EM_MIPS", "MIPS"), 20: ("EM_PPC", "PowerPC"), 21: ("EM_PPC64", "PowerPC64"), 22: ("EM_S390", "s390"),
    40: ("EM_ARM", "ARM"), 42: ("EM_SH", "SuperH"), 43: ("EM_SPARCV9", "SPARC v9"), 50: ("EM_IA_64", "IA-64"),
    62: ("EM_X86_64", "x86-64"), 183: ("EM_AARCH64", "AArch64"), 243: ("EM_RISCV", "RISC-V"),
    258: ("EM_LOONGARCH", "LoongArch"),
}
_MACHINE_NUMBER = {symbol: number for number, (symbol, _name) in ELF_MACHINES.items()}


class UnsupportedArchitecture(SwkError, ValueError):
    """swk has no Architecture for this name or ELF machine."""


def known_names():
    return sorted({cls.name for cls in _classes()})


def get_architecture(name):
    """The Architecture for a debugger's, a triple's or an ELF's architecture name."""
    for cls in _classes():
        if name == cls.name or name in cls.aliases:
            return cls()
    raise UnsupportedArchitecture(f"unsupported architecture {name!r} "
                                  f"(swk knows: {', '.join(known_names())})")


def host_architecture():
    """The Architecture of the machine swk runs on (a debugger that cannot say which
    architecture its target has is debugging a local process)."""
    return get_architecture(os.uname().machine)


def elf_machine_number(e_machine):
    """An e_machine as its number (given pyelftools' name or the number), or None."""
    return e_machine if isinstance(e_machine, int) else _MACHINE_NUMBER.get(e_machine)


def elf_machine_symbol(number):
    """pyelftools' name of an e_machine number (``EM_...``), or the number itself."""
    entry = ELF_MACHINES.get(number)
    return entry[0] if entry else number


def machine_name(e_machine):
    """The name of an ELF machine (pyelftools' name or the number) for a message."""
    entry = ELF_MACHINES.get(elf_machine_number(e_machine))
    return entry[1] if entry else f"e_machine {e_machine}"


def from_elf_machine(e_machine, elfclass=None, byteorder=None):
    """The Architecture of an ELF file's e_machine (pyelftools' name or the number), of its
    class (32/64) and byte order ("little"/"big") where given: one machine may be several
    architectures (an ELF32 x86-64 program is x32, a big-endian ppc64 one is not ppc64le)."""
    number = elf_machine_number(e_machine)
    for cls in _classes():
        if cls.elf_machine == number and elfclass in (None, 8 * cls.ptr_size) \
                and byteorder in (None, cls.byteorder):
            return cls()
    shape = ", ".join(s for s in (f"{elfclass}-bit" if elfclass else "", f"{byteorder}-endian" if byteorder else "")
                      if s)
    raise UnsupportedArchitecture(f"unsupported ELF machine {machine_name(e_machine)}"
                                  f"{f' ({shape})' if shape else ''} (swk knows: {', '.join(known_names())})")


__all__ = ["ARCHITECTURES", "Architecture", "X86_64", "I386", "AArch64", "Ppc64le", "UnsupportedArchitecture",
           "get_architecture", "from_elf_machine", "host_architecture", "known_names", "machine_name",
           "elf_machine_number", "elf_machine_symbol", "ELF_MACHINES"]
