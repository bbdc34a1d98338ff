"""i386 register sets as Linux stores them: NT_PRSTATUS in cores, PTRACE_GETREGSET live.

``struct user_regs_struct`` of i386 (the kernel's arch/x86/include/asm/user_32.h) is
pr_reg of a 32-bit process's NT_PRSTATUS, on a 32-bit kernel and in the ia32
emulation of a 64-bit one alike (``compat_elf_gregset_t``): 17 4-byte slots, in this
order.
"""
from . import registers

#: user_regs_struct, in order (x.. are the segment registers, zero-extended to 4 bytes).
USER_REGS = ("ebx", "ecx", "edx", "esi", "edi", "ebp", "eax", "xds", "xes", "xfs", "xgs",
             "orig_eax", "eip", "xcs", "eflags", "esp", "xss")
SLOT = 4
USER_REGS_SIZE = SLOT * len(USER_REGS)          # 68
#: Where pr_reg starts in the 32-bit struct elf_prstatus: pr_info (12) pr_cursig (2+2)
#: pr_sigpend pr_sighold (4 each) pr_pid pr_ppid pr_pgrp pr_sid (4 each) 4 timevals (8 each).
PRSTATUS_REG_OFFSET = 72
#: The whole elf_prstatus: pr_reg, then pr_fpvalid (4).
PRSTATUS_SIZE = PRSTATUS_REG_OFFSET + USER_REGS_SIZE + 4      # 144
#: The width of a C long (elf_prstatus's pr_sigpend, pr_sighold; elf_prpsinfo's pr_flag).
LONG = 4
#: struct elf_prpsinfo: state sname zomb nice (4 chars), pr_flag (4), pr_uid pr_gid (2 each:
#: __kernel_uid_t is an unsigned short on i386), pr_pid pr_ppid pr_pgrp pr_sid (4 each),
#: pr_fname[16], pr_psargs[80].
PRPSINFO = {"uid": 8, "uid_size": 2, "pid": 12, "fname": 28, "psargs": 44, "size": 124}


def unpack_user_regs(raw):
    """{DWARF regno or name: value} from a user_regs_struct (names for registers with no
    DWARF number in the general table: orig_eax, xcs, eflags, the segments...)."""
    dwarf = registers.DWARF_NAMES
    regs = {}
    for i, name in enumerate(USER_REGS):
        value = int.from_bytes(raw[i * SLOT:(i + 1) * SLOT], "little")
        regs[dwarf.index(name) if name in dwarf else name] = value
    return regs
