"""x86-64 register sets as Linux stores them: NT_PRSTATUS in cores, PTRACE_GETREGSET live.

``struct user_regs_struct`` (the kernel's arch/x86/include/asm/user_64.h) is
pr_reg of NT_PRSTATUS and what PTRACE_GETREGSET(NT_PRSTATUS) returns: 27
8-byte slots, in this order.
"""
from .. import xsave as xsave_layout
from . import registers

#: user_regs_struct, in order.
USER_REGS = ("r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8",
             "rax", "rcx", "rdx", "rsi", "rdi", "orig_rax", "rip", "cs", "eflags",
             "rsp", "ss", "fs_base", "gs_base", "ds", "es", "fs", "gs")
SLOT = 8
USER_REGS_SIZE = SLOT * len(USER_REGS)          # 216
#: Where pr_reg starts in struct elf_prstatus: pr_info (12) pr_cursig (2+2) pr_sigpend
#: pr_sighold (8+8) pr_pid pr_ppid pr_pgrp pr_sid (4 each) 4 timevals (16 each).
PRSTATUS_REG_OFFSET = 112
#: The whole elf_prstatus: pr_reg, then pr_fpvalid (4) and padding.
PRSTATUS_SIZE = PRSTATUS_REG_OFFSET + USER_REGS_SIZE + 8
#: The width of a C long (elf_prstatus's pr_sigpend, pr_sighold; elf_prpsinfo's pr_flag).
LONG = 8
#: struct elf_prpsinfo: state sname zomb nice (4 chars, 4 pad), pr_flag (8), pr_uid pr_gid
#: (4 each), pr_pid pr_ppid pr_pgrp pr_sid (4 each), pr_fname[16], pr_psargs[80].
PRPSINFO = {"uid": 16, "uid_size": 4, "pid": 24, "fname": 40, "psargs": 56, "size": 136}


def unpack_user_regs(raw):
    """{DWARF regno or name: value} from a user_regs_struct (names for registers with no
    DWARF number here: orig_rax, cs, eflags, segment bases...)."""
    dwarf = registers.DWARF_NAMES
    regs = {}
    for i, name in enumerate(USER_REGS):
        value = int.from_bytes(raw[i * SLOT:(i + 1) * SLOT], "little")
        regs[dwarf.index(name) if name in dwarf else name] = value
    return regs


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


#: The register sets ptrace is asked for besides NT_PRSTATUS, by note type, with a bound on
#: each one's size: the FP state (the XSAVE area's size depends on the CPU's features).
PTRACE_NOTES = ((NT_FPREGSET, 512), (NT_X86_XSTATE, 1 << 14))
