"""x86-64 (System V psABI, Linux): registers, and where every other x86-64 fact lives.

registers.py  DWARF numbering, callee-saved set, register sizes
signal.py     the kernel's rt_sigframe and the sigreturn trampoline
calls.py      call instructions ending at a return address; PLT stubs
prologue.py   the standard frame-pointer prologue, as unwind rules
analysis.py   stack-height dataflow over capstone-decoded code (no CFI)
scan.py       function entries in code without symbols or CFI
regsets.py    the general-register layout of NT_PRSTATUS and ptrace
"""
from ..base import Architecture, lazy_module
from . import calls, prologue, regsets, registers, signal


class X86_64(Architecture):
    name = "x86_64"
    aliases = ("i386:x86-64", "i386:x86-64:intel", "amd64", "x86-64")
    elf_machine = 62
    ptr_size = registers.ptr_size
    dwarf_names = registers.DWARF_NAMES
    sp = registers.sp
    fp = registers.fp
    ra = registers.ra
    pc = registers.pc
    callee_saved = registers.CALLEE_SAVED
    #: General registers as debuggers name them, indexed by DWARF number.
    general = registers.DWARF_NAMES
    signal_frame = signal
    calls = calls
    prologue = prologue
    analysis = lazy_module(__name__ + ".analysis")
    scan = lazy_module(__name__ + ".scan")
    regsets = regsets.REGSETS
    syscalls = {"process_vm_readv": 310}
    #: capstone's (arch, mode) for this instruction set.
    capstone_mode = ("CS_ARCH_X86", "CS_MODE_64")
    fp_registers = registers.FP_REGISTERS
    x87_registers = registers.X87
    thread_pointer = registers.THREAD_POINTER
    tls_variant = 2

    def reg_size(self, regno):
        return registers.reg_size(regno)
