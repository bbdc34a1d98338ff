"""x86-64 register sets as Linux stores them: NT_PRSTATUS in cores, PTRACE_GETREGSET live.

``struct user_regs_struct`` (the kernel's arch/x86/include/asm/user_64.h) is
pr_reg of NT_PRSTATUS and what PTRACE_GETREGSET(NT_PRSTATUS) returns: 27
8-byte slots, in this order.
"""
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


# --- the x87/SSE/AVX state ----------------------------------------------------------------
#: The FXSAVE area (``struct user_fpregs_struct``): NT_FPREGSET in cores, PTRACE_GETFPREGS,
#: and the start of a signal frame's fpstate.  ST(0)..ST(7) in 16-byte slots (10 bytes
#: used), from the top of the x87 stack; xmm0..xmm15.
FXSAVE_SIZE = 512
FXSAVE_ST = 32
FXSAVE_XMM = 160
#: ``fx_sw_bytes`` in the FXSAVE area's software-reserved bytes: a signal frame's fpstate
#: says there whether an XSAVE area follows (magic1, extended_size, xfeatures, xstate_size).
FX_SW_BYTES = 464
FP_XSTATE_MAGIC1 = 0x46505853
#: The XSAVE area (NT_X86_XSTATE): the FXSAVE area, the XSAVE header (XSTATE_BV first),
#: then, in the standard format Linux writes, the upper halves of ymm0..ymm15.
XSTATE_BV = 512
XSAVE_YMM_HI = 576
XFEATURE_X87, XFEATURE_SSE, XFEATURE_YMM = 1, 2, 4
#: Bounds on an XSAVE area's size (AVX-512 needs 2,696 bytes; AMX more).
XSAVE_MAX = 1 << 16


def unpack_fp(fxsave=None, xsave=None):
    """{DWARF regno: bytes} of st0-st7 and xmm0-xmm15 (ymm0-ymm15 where the XSAVE area has
    their upper halves), from an FXSAVE area and/or an XSAVE area; {} from neither.  A
    component XSTATE_BV marks as in its initial state reads as its initial value (zeros),
    whatever the area's bytes: XSAVE need not write it."""
    area = xsave if xsave is not None and len(xsave) >= XSAVE_YMM_HI else fxsave
    if area is None or len(area) < FXSAVE_XMM + 16 * len(registers.XMM):
        return {}
    bv = (int.from_bytes(area[XSTATE_BV:XSTATE_BV + 8], "little") if area is xsave
          else XFEATURE_X87 | XFEATURE_SSE)
    out = {}
    for i, regno in enumerate(registers.ST):
        out[regno] = (bytes(area[FXSAVE_ST + 16 * i:FXSAVE_ST + 16 * i + 10]) if bv & XFEATURE_X87
                      else bytes(10))
    has_ymm = area is xsave and len(area) >= XSAVE_YMM_HI + 16 * len(registers.XMM)
    for i, regno in enumerate(registers.XMM):
        low = bytes(area[FXSAVE_XMM + 16 * i:FXSAVE_XMM + 16 * i + 16]) if bv & XFEATURE_SSE else bytes(16)
        if has_ymm:
            high = (bytes(area[XSAVE_YMM_HI + 16 * i:XSAVE_YMM_HI + 16 * i + 16]) if bv & XFEATURE_YMM
                    else bytes(16))
            low += high
        out[regno] = low
    return out


#: Core-file notes of a thread's FP state (``CoreThread.notes``).
NT_FPREGSET = 2
NT_X86_XSTATE = 0x202


def unpack_fp_notes(notes):
    """{DWARF regno: bytes} from a thread's core-file notes (by note type)."""
    return unpack_fp(fxsave=notes.get(NT_FPREGSET), xsave=notes.get(NT_X86_XSTATE))


def fpstate_size(fxsave):
    """How many bytes of fpstate a signal frame holds, from its FXSAVE area's fx_sw_bytes:
    the XSAVE area's size when the kernel wrote one, else the FXSAVE area's."""
    if len(fxsave) >= FX_SW_BYTES + 16 and \
            int.from_bytes(fxsave[FX_SW_BYTES:FX_SW_BYTES + 4], "little") == FP_XSTATE_MAGIC1:
        size = int.from_bytes(fxsave[FX_SW_BYTES + 12:FX_SW_BYTES + 16], "little")
        if XSAVE_YMM_HI <= size <= XSAVE_MAX:
            return size
    return FXSAVE_SIZE
