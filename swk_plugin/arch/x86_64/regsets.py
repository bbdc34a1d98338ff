"""x86-64 register sets as Linux stores them: NT_PRSTATUS in cores, PTRACE_GETREGSET live.

``struct user_regs_struct`` (the kernel's arch/x86/include/asm/user_64.h) is
pr_reg of NT_PRSTATUS and what PTRACE_GETREGSET(NT_PRSTATUS) returns: 27
8-byte slots, in this order.  arch/regsets.py reads them; the FP state (the
FXSAVE/XSAVE areas, arch/xsave.py) is this module's own.
"""
from .. import xsave as xsave_layout
from ..regsets import UserRegsetView
from . import registers

#: user_regs_struct, in order.
USER_REGS = ("r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8",
             "rax", "rcx", "rdx", "rsi", "rdi", "orig_rax", "rip", "cs", "eflags",
             "rsp", "ss", "fs_base", "gs_base", "ds", "es", "fs", "gs")
SLOT = 8
#: Where pr_reg starts in struct elf_prstatus: pr_info (12) pr_cursig (2+2) pr_sigpend
#: pr_sighold (8+8) pr_pid pr_ppid pr_pgrp pr_sid (4 each) 4 timevals (16 each).
PRSTATUS_REG_OFFSET = 112
#: The whole elf_prstatus: pr_reg, then pr_fpvalid (4) and padding.
PRSTATUS_SIZE = PRSTATUS_REG_OFFSET + SLOT * len(USER_REGS) + 8        # 336
#: The width of a C long (elf_prstatus's pr_sigpend, pr_sighold; elf_prpsinfo's pr_flag).
LONG = 8
#: struct elf_prpsinfo: state sname zomb nice (4 chars, 4 pad), pr_flag (8), pr_uid pr_gid
#: (4 each), pr_pid pr_ppid pr_pgrp pr_sid (4 each), pr_fname[16], pr_psargs[80].
PRPSINFO = {"uid": 16, "uid_size": 4, "pid": 24, "fname": 40, "psargs": 56, "size": 136}


# --- the x87/SSE/AVX state (the FXSAVE/XSAVE layouts are arch/xsave.py's) ----------------
#: Core-file notes of a thread's FP state (``CoreThread.notes``).
NT_FPREGSET = 2
NT_X86_XSTATE = 0x202


def unpack_fp(fxsave=None, xsave=None):
    """{DWARF regno: bytes} of st0-st7 and xmm0-xmm15 (ymm0-ymm15 with an XSAVE area)."""
    return xsave_layout.unpack(fxsave, xsave, registers.ST, registers.XMM)


def unpack_fp_notes(notes):
    """{DWARF regno: bytes} from a thread's core-file notes (by note type)."""
    return unpack_fp(fxsave=notes.get(NT_FPREGSET), xsave=notes.get(NT_X86_XSTATE))


REGSETS = UserRegsetView(
    USER_REGS, SLOT, registers.DWARF_NAMES, prstatus_reg_offset=PRSTATUS_REG_OFFSET,
    prstatus_size=PRSTATUS_SIZE, long=LONG, prpsinfo=PRPSINFO,
    # the FP state: the XSAVE area as far as unpack reads it (its size depends on the CPU's
    # features), which begins with the FXSAVE area NT_FPREGSET would read again
    ptrace_notes=((NT_X86_XSTATE, xsave_layout.XSAVE_USED), (NT_FPREGSET, 512)),
    ptrace_covered={NT_FPREGSET: NT_X86_XSTATE}, fp_notes=unpack_fp_notes)
