"""RISC-V 64 register sets as Linux stores them: NT_PRSTATUS in cores, PTRACE_GETREGSET live.

pr_reg of NT_PRSTATUS is an ``elf_gregset_t`` of 32 8-byte slots holding ``struct
user_regs_struct`` (the kernel's arch/riscv/include/uapi/asm/ptrace.h): pc where x0 would
be, then x1-x31 in order (ra, sp, gp, tp, t0-t2, s0, s1, a0-a7, s2-s11, t3-t6).  The
signal frame's ``sc_regs`` is the same struct.  elf_prstatus and elf_prpsinfo are the
generic 64-bit layouts (pr_reg at 112; 4-byte uid; tests/test_arch_kit.py checks them
against the cross toolchain's <sys/procfs.h>).  The FP state is NT_PRFPREG: struct
__riscv_d_ext_state, f0-f31 (8 bytes each) then fcsr (4, padded to 8).
"""
from ..regsets import UserRegsetView
from . import registers

SLOT = 8
#: user_regs_struct, in order, by swk's names (x8, the kernel's ``s0``, is GDB's ``fp``).
USER_REGS = ("pc", *registers.X_NAMES[1:])
PRSTATUS_REG_OFFSET = 112
PRSTATUS_SIZE = PRSTATUS_REG_OFFSET + SLOT * len(USER_REGS) + 8      # 376: pr_fpvalid, padded
LONG = 8
PRPSINFO = {"uid": 16, "uid_size": 4, "pid": 24, "fname": 40, "psargs": 56, "size": 136}
#: The slot of each register in user_regs_struct (the signal frame's sc_regs too).
SLOTS = {name: i for i, name in enumerate(USER_REGS)}

NT_PRFPREG = 2
FPREGSET_SIZE = 32 * 8 + 8


def unpack_fp_notes(notes):
    """{DWARF regno: bytes} of f0-f31 from a thread's core-file (or ptrace) notes."""
    raw = notes.get(NT_PRFPREG)
    if raw is None or len(raw) < 32 * 8:
        return {}
    return {registers.F0 + i: bytes(raw[8 * i:8 * i + 8]) for i in range(registers.NUM_F)}


def thread_pointer(regs, notes):
    """tp (x4), the thread pointer, from the general registers."""
    return regs.get(registers.tp)


REGSETS = UserRegsetView(
    USER_REGS, SLOT, registers.DWARF_NAMES, prstatus_reg_offset=PRSTATUS_REG_OFFSET,
    prstatus_size=PRSTATUS_SIZE, long=LONG, prpsinfo=PRPSINFO,
    ptrace_notes=((NT_PRFPREG, FPREGSET_SIZE),), fp_notes=unpack_fp_notes, tls=thread_pointer)
