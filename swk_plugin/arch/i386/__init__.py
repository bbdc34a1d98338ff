"""i386 (System V i386 psABI, Linux): 32-bit x86, and where every i386 fact lives.

registers.py  DWARF numbering (eax 0 ... esp 4, ebp 5, esi 6, edi 7, eip 8), callee-saved
              set, the x87/SSE/MMX registers, sizes, GDB's and LLDB's names
signal.py     the kernel's sigframe and rt_sigframe, the sigreturn trampolines
calls.py      32-bit call encodings ending at a return address; PLT stubs
prologue.py   ``[endbr32] push %ebp; mov %esp,%ebp``, as unwind rules
analysis.py   the stack-height dataflow in capstone's 32-bit mode (shared with x86-64)
scan.py       function entries in code without symbols or CFI (shared with x86-64)
regsets.py    the 32-bit NT_PRSTATUS / NT_PRPSINFO layouts
"""
from ..base import Architecture, lazy_module
from . import calls, prologue, regsets, registers, signal


class I386(Architecture):
    name = "i386"
    aliases = ("i386:intel", "i486", "i586", "i686", "x86")
    elf_machine = 3
    ptr_size = registers.ptr_size
    dwarf_names = registers.DWARF_NAMES
    sp = registers.sp
    fp = registers.fp
    ra = registers.ra
    pc = registers.pc
    callee_saved = registers.CALLEE_SAVED
    #: A 32-bit process's user space ends at 4 GiB (3 GiB on a 32-bit kernel).
    max_user_address = (1 << 32) - 1
    general = registers.DWARF_NAMES
    #: Every register swk knows (arch/i386/registers.Register: DWARF number, size, names).
    register_table = registers.REGISTERS
    signal_frame = signal
    calls = calls
    prologue = prologue
    analysis = lazy_module(__name__ + ".analysis")
    scan = lazy_module(__name__ + ".scan")
    regsets = regsets.REGSETS
    syscalls = {"process_vm_readv": 347}
    capstone_mode = ("CS_ARCH_X86", "CS_MODE_32")
    fp_registers = registers.FP_REGISTERS
    x87_registers = frozenset(registers.X87)
    #: The base of %gs: no debugger names it a register (GDB gives it as the thread's
    #: handle, a core in NT_386_TLS).
    thread_pointer = "gs_base"

    def reg_size(self, regno):
        return registers.reg_size(regno)

    def gdb_name(self, regno):
        return registers.gdb_name(regno)

    def lldb_name(self, regno):
        return registers.lldb_name(regno)
