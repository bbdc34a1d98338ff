"""s390x (z/Architecture, 64-bit, big-endian, the s390x ELF ABI, Linux): registers, and where
every other fact lives.

registers.py  DWARF numbering (r0-r15, f0-f15 in the ABI's order, a0-a15, the PSW: its
              address the pc), the register save area, GDB's and LLDB's names
zarch.py      the instructions swk decodes itself (2, 4 and 6 bytes long)
signal.py     the kernel's (and qemu-user's) sigframe and rt_sigframe, their trampolines
calls.py      brasl / bras / basr linking r14, ending at a return address; PLT entries
prologue.py   the frame pointer r11 or the back chain as unwind rules (prologue, body, epilogue)
analysis.py   stack heights without CFI: zarch.py's decoder for arch/dataflow.py
scan.py       function entries in raw code; the CFA of a return address found on the stack
regsets.py    s390_regs: the general-register layout of NT_PRSTATUS and ptrace
"""
from ..base import Architecture, lazy_module
from . import calls, prologue, registers, regsets, signal


class S390x(Architecture):
    name = "s390x"
    #: GDB's name (``s390:64-bit``); uname, LLDB's triples and Debian say s390x.
    aliases = ("s390:64-bit",)
    elf_machine = 22
    ptr_size = registers.ptr_size
    byteorder = "big"
    dwarf_names = registers.DWARF_NAMES
    sp = registers.sp
    fp = registers.fp
    ra = registers.ra
    pc = registers.pc
    callee_saved = registers.CALLEE_SAVED
    general = registers.GENERAL
    gdb_names = registers.GDB_NAMES
    lldb_names = registers.LLDB_NAMES
    #: The kernel's TASK_SIZE_MAX (-PAGE_SIZE): s390x user space may reach the top of the
    #: 64-bit space, its region tables growing with it.
    max_user_address = (1 << 64) - 4096 - 1
    #: ``brasl %r14`` leaves the return address in r14: a leaf's caller is still there.
    return_address_pushed = False
    #: the register save area: r11 at 88, r14 at 112.
    scan_saved_fp = -24
    #: The caller's r15 is the CFA - 160 (registers.SAVE_AREA) where no slot holds it.
    sp_below_cfa = registers.SAVE_AREA
    #: r11 is a frame pointer only where GCC keeps one; _start does not zero it.
    zero_fp_is_outermost = False
    sysroots = ("/usr/s390x-linux-gnu",)
    #: The ABI's long double: IEEE binary128 (in a pair of FPRs, or memory).
    long_double_format = "ieee128"
    signal_frame = signal
    calls = calls
    prologue = prologue
    analysis = lazy_module(__name__ + ".analysis")
    scan = lazy_module(__name__ + ".scan")
    regsets = regsets.REGSETS
    #: arch/s390/kernel/syscalls/syscall.tbl: process_vm_readv is 340.
    syscalls = {"process_vm_readv": 340}
    fp_registers = registers.FP_REGISTERS
    thread_pointer = registers.THREAD_POINTER
    #: GDB shows a0 and a1 as acr0 and acr1.
    thread_pointer_words = ("acr0", "acr1")
    #: Volatile registers print as <optimized out> in callers, as in GDB.
    cfi_undefined = registers.CALL_CLOBBERED

    def reg_size(self, regno):
        return registers.reg_size(regno)

    def gdb_name(self, regno):
        return registers.GDB_NAMES.get(regno)

    def lldb_name(self, regno):
        return registers.LLDB_NAMES.get(regno)

    def register_value(self, regno, raw, float_size=None):
        """A float in an FPR is its high-order (first) 4 bytes: the short format lives in the
        register's left half (GDB's s390_value_from_register: offset 0 below 8 bytes)."""
        if float_size is not None and float_size < 8 and regno in self.fp_registers:
            return bytes(raw[:float_size])
        return raw

    def scan_cfa(self, slot, read_pointer):
        return self.scan.scan_cfa(slot)
