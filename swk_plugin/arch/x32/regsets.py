"""x32 register sets as Linux stores them in a core: the kernel's compat elf_prstatus (32-bit
longs and timevals, as i386's) around x86-64's user_regs_struct (27 8-byte slots), and the
compat elf_prpsinfo (i386's: 2-byte uid).  Sizes checked against elfutils' x32 cores
(NT_PRSTATUS 296 bytes, NT_PRPSINFO 124) by tests/test_x32.py."""
from ..i386 import regsets as i386_regsets
from ..regsets import UserRegsetView
from ..x86_64 import registers
from ..x86_64 import regsets as x86_64_regsets

PRSTATUS_REG_OFFSET = 72
PRSTATUS_SIZE = PRSTATUS_REG_OFFSET + 8 * len(x86_64_regsets.USER_REGS) + 8     # 296

REGSETS = UserRegsetView(
    x86_64_regsets.USER_REGS, 8, registers.DWARF_NAMES, prstatus_reg_offset=PRSTATUS_REG_OFFSET,
    prstatus_size=PRSTATUS_SIZE, long=4, prpsinfo=i386_regsets.PRPSINFO,
    ptrace_notes=x86_64_regsets.REGSETS.ptrace_notes, ptrace_covered=x86_64_regsets.REGSETS.ptrace_covered,
    fp_notes=x86_64_regsets.unpack_fp_notes)
