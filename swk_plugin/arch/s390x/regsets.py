"""s390x register sets as Linux stores them: NT_PRSTATUS in cores, PTRACE_GETREGSET live.

pr_reg of NT_PRSTATUS is an ``elf_gregset_t`` holding the kernel's ``s390_regs``
(arch/s390/include/uapi/asm/ptrace.h): the PSW (mask, address), gprs[16], acrs[16] and
orig_gpr2, 216 bytes, big-endian.  The access registers are 4 bytes each, so the 8-byte
slots of the table hold them two by two, the even one in the high half: the slot of a0
and a1 is the thread pointer itself (glibc's TCB, a0:a1).  elf_prstatus and elf_prpsinfo
are the generic 64-bit layouts (pr_reg at 112; a 4-byte uid; tests/test_arch_kit.py
checks them against the cross toolchain's <sys/procfs.h>).  The FP state is NT_PRFPREG:
``s390_fp_regs``, fpc (4 bytes, 4 of padding) then fprs[16], f0-f15 in their own order.
"""
from ..regsets import UserRegsetView
from . import registers

SLOT = 8
#: s390_regs in slots, by swk's names (the PSW address is the pc).
USER_REGS = ("pswm", "pc", *registers.R_NAMES, *(f"acr{i}_{i + 1}" for i in range(0, 16, 2)), "orig_r2")
PRSTATUS_REG_OFFSET = 112
PRSTATUS_SIZE = PRSTATUS_REG_OFFSET + SLOT * len(USER_REGS) + 8      # 336: pr_fpvalid, padded
LONG = 8
PRPSINFO = {"uid": 16, "uid_size": 4, "pid": 24, "fname": 40, "psargs": 56, "size": 136}
#: The slot of each register in s390_regs.
SLOTS = {name: i for i, name in enumerate(USER_REGS)}

NT_PRFPREG = 2
FP_FPRS = 8
FPREGSET_SIZE = FP_FPRS + 16 * 8


def unpack_fp_notes(notes):
    """{DWARF regno: bytes} of f0-f15 from a thread's core-file (or ptrace) notes."""
    raw = notes.get(NT_PRFPREG)
    if raw is None or len(raw) < FPREGSET_SIZE:
        return {}
    return {registers.F_DWARF[n]: bytes(raw[FP_FPRS + 8 * n:FP_FPRS + 8 * n + 8]) for n in range(16)}


def thread_pointer(regs, notes):
    """a0:a1, the thread pointer, from the general registers."""
    return regs.get(registers.THREAD_POINTER)


REGSETS = UserRegsetView(
    USER_REGS, SLOT, registers.DWARF_NAMES, byteorder="big", prstatus_reg_offset=PRSTATUS_REG_OFFSET,
    prstatus_size=PRSTATUS_SIZE, long=LONG, prpsinfo=PRPSINFO,
    ptrace_notes=((NT_PRFPREG, FPREGSET_SIZE),), fp_notes=unpack_fp_notes, tls=thread_pointer)
