"""Architectures: the one place that knows register numbers, names, opcodes and layouts.

Everything above this layer talks in DWARF register numbers and asks the
Architecture (arch/base.py) for the rest.
"""
import os

from ..errors import SwkError
from .aarch64 import AArch64
from .base import Architecture
from .i386 import I386
from .x86_64 import X86_64

#: Names of each architecture: uname's and the ELF's, GDB's (``i386:x86-64``, ``i386``,
#: ``i386:intel``, ``aarch64``) and the first word of LLDB's target triple (``x86_64``, ``i386``,
#: ``i686``, ``aarch64``, ``arm64``).
_BY_NAME = {"x86_64": X86_64, "i386:x86-64": X86_64, "amd64": X86_64, "x86-64": X86_64,
            "i386": I386, "i386:intel": I386, "i486": I386, "i586": I386, "i686": I386, "x86": I386,
            "aarch64": AArch64, "arm64": AArch64}
_BY_MACHINE = {"EM_X86_64": X86_64, 62: X86_64, "EM_386": I386, 3: I386, "EM_AARCH64": AArch64, 183: AArch64}


class UnsupportedArchitecture(SwkError, ValueError):
    """swk has no Architecture for this name or ELF machine."""


def known_names():
    return sorted({cls.name for cls in _BY_NAME.values()})


def get_architecture(name="x86_64"):
    """The Architecture for a debugger's, a triple's or an ELF's architecture name."""
    try:
        return _BY_NAME[name]()
    except KeyError:
        raise UnsupportedArchitecture(f"unsupported architecture {name!r} "
                                      f"(swk knows: {', '.join(known_names())})") from None


def host_architecture():
    """The Architecture of the machine swk runs on (a debugger that cannot say which
    architecture its target has is debugging a local process)."""
    return get_architecture(os.uname().machine)


def from_elf_machine(e_machine):
    """The Architecture for an ELF e_machine (pyelftools' name or the number)."""
    try:
        return _BY_MACHINE[e_machine]()
    except KeyError:
        raise UnsupportedArchitecture(f"unsupported ELF machine {e_machine!r} "
                                      f"(swk knows: {', '.join(known_names())})") from None


__all__ = ["Architecture", "X86_64", "I386", "AArch64", "UnsupportedArchitecture", "get_architecture",
           "from_elf_machine",
           "host_architecture", "known_names"]
