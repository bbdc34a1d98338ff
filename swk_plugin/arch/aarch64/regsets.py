"""AArch64 register sets as Linux stores them: NT_PRSTATUS in cores (the kernel's and
qemu-user's), PTRACE_GETREGSET live.

``struct user_pt_regs`` (the kernel's arch/arm64/include/uapi/asm/ptrace.h) is pr_reg
of NT_PRSTATUS: ``u64 regs[31]; u64 sp; u64 pc; u64 pstate;``.  elf_prstatus and
elf_prpsinfo are the generic 64-bit layouts (as on x86-64: 4-byte uid/gid).
arch/regsets.py reads them; the FP/SIMD state and TPIDR_EL0 are this module's own.
"""
from ..regsets import UserRegsetView
from . import registers

SLOT = 8
#: user_pt_regs, in order.
USER_REGS = tuple(f"x{i}" for i in range(31)) + ("sp", "pc", "pstate")
PRSTATUS_REG_OFFSET = 112
PRSTATUS_SIZE = PRSTATUS_REG_OFFSET + SLOT * len(USER_REGS) + 8     # 392
LONG = 8
PRPSINFO = {"uid": 16, "uid_size": 4, "pid": 24, "fname": 40, "psargs": 56, "size": 136}


# --- the FP/SIMD state and the thread pointer --------------------------------------------
#: Core-file notes (``CoreThread.notes``): ``struct user_fpsimd_state`` (vregs[32] of 16
#: bytes, fpsr, fpcr) and TPIDR_EL0.
NT_FPREGSET = 2
NT_ARM_TLS = 0x401
FPSIMD_SIZE = 32 * 16 + 8


def unpack_fp_notes(notes):
    """{DWARF regno: bytes} of v0-v31 from a thread's core-file (or ptrace) notes."""
    raw = notes.get(NT_FPREGSET)
    if raw is None or len(raw) < 32 * 16:
        return {}
    return {registers.V0 + i: bytes(raw[16 * i:16 * i + 16]) for i in range(registers.NUM_V)}


def thread_pointer(regs, notes):
    """TPIDR_EL0 from a core's (or ptrace's) NT_ARM_TLS, or None."""
    raw = notes.get(NT_ARM_TLS)
    return int.from_bytes(raw[:8], "little") if raw and len(raw) >= 8 else None


REGSETS = UserRegsetView(
    USER_REGS, SLOT, registers.DWARF_NAMES, prstatus_reg_offset=PRSTATUS_REG_OFFSET,
    prstatus_size=PRSTATUS_SIZE, long=LONG, prpsinfo=PRPSINFO,
    # the FP/SIMD state, TPIDR_EL0
    ptrace_notes=((NT_FPREGSET, FPSIMD_SIZE), (NT_ARM_TLS, 16)),
    fp_notes=unpack_fp_notes, tls=thread_pointer)
