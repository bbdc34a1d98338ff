"""x32 (the x86-64 psABI's ILP32 model, Linux): x86-64's instructions, registers, calls and
frames with 32-bit pointers — ELF32 files and cores of e_machine EM_X86_64.

Everything but the pointer width, the core's register-set wrapping and the 32-bit ``mov
%esp,%ebp`` of its frame set-up (prologue.py, scan.py) is x86-64's (its modules are used as
they are): a call still pushes an 8-byte return address, registers are
64-bit, and only the values a program stores as pointers are 4 bytes.  regsets.py has the
compat elf_prstatus around x86-64's user_regs_struct.  Cores and files only: the kernel
here runs no x32 processes.
"""
from ..base import lazy_module
from ..x86_64 import X86_64, registers
from . import prologue, regsets


class X32(X86_64):
    name = "x32"
    #: GDB's name (``set architecture i386:x64-32``).
    aliases = ("i386:x64-32", "i386:x64-32:intel")
    ptr_size = 4
    max_user_address = (1 << 32) - 1
    regsets = regsets.REGSETS
    #: x32's system calls are x86-64's with bit 30 set (__X32_SYSCALL_BIT); swk makes none on
    #: an x32 host (there are none here).
    syscalls = {}
    prologue = prologue
    analysis = lazy_module("swk_plugin.arch.x86_64.analysis")
    scan = lazy_module(__name__ + ".scan")

    def reg_size(self, regno):
        return registers.reg_size(regno)
