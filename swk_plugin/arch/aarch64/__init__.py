"""AArch64 (AAPCS64, Linux): registers, and where every other AArch64 fact lives.

registers.py  DWARF numbering (x0-x30, sp, pc, v0-v31), sizes, GDB's and LLDB's names
pauth.py      pointer authentication: the PAC bits of a signed return address, stripped
a64.py        the A64 encodings swk decodes from raw words (frames, PAC hints, branches)
signal.py     the kernel's (and qemu's) rt_sigframe, its __reserved records, the trampoline
calls.py      bl/blr ending at a return address; PLT entries
prologue.py   the frame record {x29, x30} as unwind rules (prologue, body, epilogue)
analysis.py   stack-height dataflow over capstone-decoded code (no CFI)
scan.py       function entries in raw code; the CFA of a return address found on the stack
regsets.py    the general-register layout of NT_PRSTATUS and ptrace
"""
from ..base import Architecture, lazy_module
from . import calls, pauth, prologue, regsets, registers, signal


class AArch64(Architecture):
    name = "aarch64"
    aliases = ("arm64",)
    elf_machine = 183
    ptr_size = registers.ptr_size
    dwarf_names = registers.DWARF_NAMES
    sp = registers.sp
    fp = registers.fp
    ra = registers.ra
    pc = registers.pc
    callee_saved = registers.CALLEE_SAVED
    #: x0-x30, sp, pc: what the back-ends read (by these names in GDB and LLDB alike).
    general = registers.GENERAL
    gdb_names = registers.GDB_NAMES
    lldb_names = registers.LLDB_NAMES
    max_user_address = (1 << pauth.VA_BITS) - 1
    #: ``bl`` leaves the return address in x30: a callee's CFA is the caller's sp, and a leaf
    #: (or a function stopped before its prologue) may have its caller's sp as its own.
    return_address_pushed = False
    #: the frame record {x29, x30}: x29 one slot below x30.
    scan_saved_fp = -8
    #: Pointer authentication: the debuggers' names of the PAC mask registers.
    pac_mask_registers = {"gdb": pauth.GDB_MASK_REGISTERS[0], "lldb": pauth.LLDB_MASK_REGISTERS[0]}
    #: Debian's cross sysroots, where a target's libraries are found on another machine.
    sysroots = ("/usr/aarch64-linux-gnu",)
    #: AAPCS64: long double is IEEE binary128.
    long_double_format = "ieee128"
    signal_frame = signal
    calls = calls
    prologue = prologue
    analysis = lazy_module(__name__ + ".analysis")
    scan = lazy_module(__name__ + ".scan")
    regsets = regsets.REGSETS
    syscalls = {"process_vm_readv": 270}
    capstone_mode = ("CS_ARCH_ARM64", "CS_MODE_ARM")
    fp_registers = registers.FP_REGISTERS
    thread_pointer = registers.THREAD_POINTER
    tls_variant = 1

    def reg_size(self, regno):
        return registers.reg_size(regno)

    def strip_pointer_auth(self, addr, mask=None):
        return pauth.strip(addr, mask)

    def pac_mask_from_note(self, desc):
        return pauth.mask_from_note(desc)

    def usable_pac_mask(self, mask):
        return pauth.usable_mask(mask)

    def scan_cfa(self, slot, read_pointer):
        return self.scan.scan_cfa(slot, read_pointer, self.ptr_size)
