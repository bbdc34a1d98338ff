"""AArch64 register sets as Linux stores them: NT_PRSTATUS in cores (the kernel's and
qemu-user's), PTRACE_GETREGSET live.

``struct user_pt_regs`` (the kernel's arch/arm64/include/uapi/asm/ptrace.h) is pr_reg
of NT_PRSTATUS: ``u64 regs[31]; u64 sp; u64 pc; u64 pstate;``.  elf_prstatus and
elf_prpsinfo are the generic 64-bit layouts (as on x86-64: 4-byte uid/gid).
"""
from . import registers

SLOT = 8
#: user_pt_regs, in order.
USER_REGS = tuple(f"x{i}" for i in range(31)) + ("sp", "pc", "pstate")
USER_REGS_SIZE = SLOT * len(USER_REGS)          # 272
PRSTATUS_REG_OFFSET = 112
PRSTATUS_SIZE = PRSTATUS_REG_OFFSET + USER_REGS_SIZE + 8     # 392
LONG = 8
PRPSINFO = {"uid": 16, "uid_size": 4, "pid": 24, "fname": 40, "psargs": 56, "size": 136}


def unpack_user_regs(raw):
    """{DWARF regno or name: value} from a user_pt_regs (pstate by name)."""
    dwarf = registers.DWARF_NAMES
    regs = {}
    for i, name in enumerate(USER_REGS):
        value = int.from_bytes(raw[i * SLOT:(i + 1) * SLOT], "little")
        regs[dwarf.index(name) if name in dwarf else name] = value
    return regs
