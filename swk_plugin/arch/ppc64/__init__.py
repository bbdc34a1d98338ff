"""Power-64, little-endian (ELFv2 ABI, Linux): registers, and where every other fact lives.

registers.py  DWARF numbering (r0-r31, f0-f31, cr, xer, lr, ctr, vr0-vr31; swk's pc column),
              .eh_frame's older numbering, GDB's and LLDB's names
ppc.py        the instruction words swk decodes itself (frame set-up, tear-down, branches)
signal.py     the kernel's and qemu-user's rt_sigframe and trampolines
calls.py      bl / bctrl / blrl ending at a return address
prologue.py   the back chain and the lr save slot as unwind rules (prologue, body, epilogue)
analysis.py   stack heights without CFI: the Power decoder of arch/dataflow.py
scan.py       function entries in raw code; the CFA of a return address found on the stack
regsets.py    pt_regs: the general-register layout of NT_PRSTATUS and ptrace
elfv1/        big-endian Power-64 (ELFv1): these kits on big-endian words, function descriptors
"""
import struct

from ..base import Architecture, lazy_module
from . import calls, prologue, registers, regsets, signal


class Ppc64le(Architecture):
    name = "ppc64le"
    #: uname's, GDB's (``powerpc:common64``), LLDB's triple's and Debian's names.
    aliases = ("powerpc64le", "powerpc:common64", "ppc64el")
    elf_machine = 21
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
    #: The kernel's 64-bit user address space (TASK_SIZE_USER64 with 4 PB of it).
    max_user_address = (1 << 52) - 1
    #: ``bl`` leaves the return address in lr: a leaf's CFA may be its r1.
    return_address_pushed = False
    #: r31 is a frame pointer only when GCC needs one; the chain of frames is the back chain.
    zero_fp_is_outermost = False
    sysroots = ("/usr/powerpc64le-linux-gnu",)
    #: Debian's ppc64el: long double is IEEE binary128 (GCC 12's -mabi=ieeelongdouble
    #: is not the default: IBM's double-double is; see locals/floats).
    long_double_format = "ibm128"
    signal_frame = signal
    calls = calls
    prologue = prologue
    analysis = lazy_module(__name__ + ".analysis")
    scan = lazy_module(__name__ + ".scan")
    regsets = regsets.REGSETS
    syscalls = {"process_vm_readv": 351}
    capstone_mode = ("CS_ARCH_PPC", "CS_MODE_64")
    fp_registers = registers.FP_REGISTERS
    thread_pointer = registers.THREAD_POINTER
    tls_variant = 1
    #: The ABI's r13: 0x7000 past the end of the TCB, the first block right there (glibc's
    #: TLS_TCB_OFFSET, TLS_TCB_SIZE 0).
    tls_tcb_offset = 0x7000
    tls_first_block = 0
    #: GCC's .eh_frame numbers lr, ctr, cr and the vector registers its own way.
    cfi_renumber = registers.CFI_RENUMBER
    #: r0, r3-r12 and f0-f13 are volatile: GDB's DWARF unwinder (ppc_dwarf2_frame_init_reg)
    #: takes them as undefined in every caller the CFI says nothing of.
    cfi_undefined = registers.VOLATILE

    def reg_size(self, regno):
        return registers.reg_size(regno)

    def register_value(self, regno, raw, float_size=None):
        """A float in a floating-point register is held there as a double (the FPRs have one
        format): converted to 4 bytes, as GDB's rs6000_register_to_value does."""
        if float_size == 4 and registers.F0 <= regno < registers.F0 + registers.NUM_F and len(raw) == 8:
            fmt = "<" if self.byteorder == "little" else ">"
            value = struct.unpack(fmt + "d", raw)[0]
            try:
                return struct.pack(fmt + "f", value)
            except OverflowError:                   # beyond a float's range: infinite, as C's cast
                return struct.pack(fmt + "f", value * float("inf"))
        return raw

    def gdb_name(self, regno):
        return registers.GDB_NAMES.get(regno) or (
            f"vr{regno - registers.VR0}" if registers.VR0 <= regno < registers.VR0 + registers.NUM_VR else None)

    def scan_cfa(self, slot, read_pointer):
        return self.scan.scan_cfa(slot, read_pointer, self.ptr_size)
