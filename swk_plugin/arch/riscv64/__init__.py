"""RISC-V 64 (RV64GC, the LP64D psABI, Linux): registers, and where every other fact lives.

registers.py  DWARF numbering (x0-x31, f0-f31; swk's pc column 64), GDB's and LLDB's names
rv.py         the RV64GC instructions swk decodes itself, compressed ones expanded
signal.py     the kernel's (and qemu-user's) rt_sigframe and the sigreturn trampoline
calls.py      jal / jalr / c.jalr linking ra, ending at a return address; PLT entries
prologue.py   the frame record {ra, s0} below s0 as unwind rules (prologue, body, epilogue)
analysis.py   stack heights without CFI: rv.py's decoder for arch/dataflow.py
scan.py       function entries in raw code
regsets.py    user_regs_struct: the general-register layout of NT_PRSTATUS and ptrace
"""
from ..base import Architecture, lazy_module
from . import calls, prologue, registers, regsets, signal


class Riscv64(Architecture):
    name = "riscv64"
    #: GDB's name (``riscv:rv64``); uname and LLDB's triples say riscv64.
    aliases = ("riscv:rv64",)
    elf_machine = 243
    ptr_size = registers.ptr_size
    dwarf_names = registers.DWARF_NAMES
    sp = registers.sp
    fp = registers.fp
    ra = registers.ra
    pc = registers.pc
    callee_saved = registers.CALLEE_SAVED
    general = registers.GENERAL
    gdb_names = registers.GDB_NAMES
    lldb_names = registers.LLDB_NAMES
    #: Sv48's user half (Linux maps user space below 2**47 on Sv48 and Sv57 unless a
    #: program asks for more, and below 2**38 on Sv39).
    max_user_address = (1 << 47) - 1
    #: ``jal ra`` leaves the return address in ra: a leaf's CFA may be its sp.
    return_address_pushed = False
    #: GCC's frame record: s0 one slot below ra.
    scan_saved_fp = -8
    #: s0 is a frame pointer only where GCC keeps one; _start does not zero it.
    zero_fp_is_outermost = False
    sysroots = ("/usr/riscv64-linux-gnu",)
    #: LP64D: long double is IEEE binary128.
    long_double_format = "ieee128"
    signal_frame = signal
    calls = calls
    prologue = prologue
    analysis = lazy_module(__name__ + ".analysis")
    scan = lazy_module(__name__ + ".scan")
    regsets = regsets.REGSETS
    #: asm-generic's numbers (process_vm_readv: 270).
    syscalls = {"process_vm_readv": 270}
    fp_registers = registers.FP_REGISTERS
    thread_pointer = registers.THREAD_POINTER
    tls_variant = 1
    #: glibc's tp points at the first TLS block itself, the TCB before it (TLS_TCB_SIZE 0).
    tls_first_block = 0

    def reg_size(self, regno):
        return registers.reg_size(regno)

    def gdb_name(self, regno):
        return registers.GDB_NAMES.get(regno)

    def lldb_name(self, regno):
        return registers.LLDB_NAMES.get(regno)
