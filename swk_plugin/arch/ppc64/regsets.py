"""Power-64 register sets as Linux stores them: NT_PRSTATUS in cores (the kernel's and
qemu-user's), PTRACE_GETREGSET live.

pr_reg of NT_PRSTATUS is an ``elf_gregset_t`` of 48 8-byte slots holding ``struct
pt_regs`` (the kernel's arch/powerpc/include/uapi/asm/ptrace.h): gpr[32], nip, msr,
orig_gpr3, ctr, link, xer, ccr, softe, trap, dar, dsisr, result, then padding.  The
signal frame's ``gp_regs`` has the same layout.  elf_prstatus and elf_prpsinfo are the
generic 64-bit layouts (the cross toolchain's <sys/procfs.h>: pr_reg at 112, 504 bytes;
4-byte uid).  arch/regsets.py reads them; the FP and vector state is this module's own.
"""
from ..regsets import UserRegsetView
from . import registers

SLOT = 8
#: pt_regs, in order (elf_gregset_t pads it to 48 slots).
USER_REGS = tuple(f"r{i}" for i in range(32)) + (
    "pc", "msr", "orig_r3", "ctr", "lr", "xer", "cr", "softe", "trap", "dar", "dsisr", "result")
NGREG = 48
PRSTATUS_REG_OFFSET = 112
PRSTATUS_SIZE = PRSTATUS_REG_OFFSET + SLOT * NGREG + 8     # 504
LONG = 8
PRPSINFO = {"uid": 16, "uid_size": 4, "pid": 24, "fname": 40, "psargs": 56, "size": 136}
#: The slot of each register in pt_regs (the signal frame's gp_regs too).
SLOTS = {name: i for i, name in enumerate(USER_REGS)}


# --- the floating-point and vector state ----------------------------------------------------
#: Core-file notes (``CoreThread.notes``): f0-f31 and fpscr (8 bytes each); vr0-vr31, vscr
#: and vrsave (16 bytes each).
NT_FPREGSET = 2
NT_PPC_VMX = 0x100
FPREGSET_SIZE = 33 * 8
VMX_SIZE = 34 * 16


def unpack_fp_notes(notes):
    """{DWARF regno: bytes} of f0-f31 and vr0-vr31 from a thread's core-file (or ptrace) notes."""
    out = {}
    raw = notes.get(NT_FPREGSET)
    if raw is not None and len(raw) >= 32 * 8:
        out.update({registers.F0 + i: bytes(raw[8 * i:8 * i + 8]) for i in range(registers.NUM_F)})
    raw = notes.get(NT_PPC_VMX)
    if raw is not None and len(raw) >= 32 * 16:
        out.update({registers.VR0 + i: bytes(raw[16 * i:16 * i + 16]) for i in range(registers.NUM_VR)})
    return out


def thread_pointer(regs, notes):
    """r13, the thread pointer, from the general registers."""
    return regs.get(registers.tp)


def regset_view(byteorder):
    """The register sets of a Power-64 target of ``byteorder`` (one layout, both ABIs)."""
    return UserRegsetView(
        USER_REGS, SLOT, registers.DWARF_NAMES, prstatus_reg_offset=PRSTATUS_REG_OFFSET,
        prstatus_size=PRSTATUS_SIZE, long=LONG, prpsinfo=PRPSINFO, nslots=NGREG, byteorder=byteorder,
        widths={"cr": 4},                   # a 32-bit register in a 64-bit slot
        ptrace_notes=((NT_FPREGSET, FPREGSET_SIZE), (NT_PPC_VMX, VMX_SIZE)),
        fp_notes=unpack_fp_notes, tls=thread_pointer)


REGSETS = regset_view("little")
