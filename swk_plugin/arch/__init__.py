"""Architectures: the one place that knows register numbers, names and widths.

Everything above this layer talks in DWARF register numbers, so the CFI
interpreter, the steppers and the back-ends never hard-code a register.
"""
from .base import Architecture
from .x86_64 import X86_64

_BY_NAME = {"x86_64": X86_64, "i386:x86-64": X86_64, "amd64": X86_64}


def get_architecture(name="x86_64"):
    """Return the Architecture for a debugger's or ELF's architecture name."""
    try:
        return _BY_NAME[name]()
    except KeyError:
        raise ValueError(f"unsupported architecture {name!r} (swk knows: x86_64)") from None


def from_elf_machine(e_machine):
    if e_machine in ("EM_X86_64", 62):
        return X86_64()
    raise ValueError(f"unsupported ELF machine {e_machine!r}")


__all__ = ["Architecture", "X86_64", "get_architecture", "from_elf_machine"]
