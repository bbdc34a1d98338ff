"""i386 register sets as Linux stores them: NT_PRSTATUS in cores, PTRACE_GETREGSET live.

``struct user_regs_struct`` of i386 (the kernel's arch/x86/include/asm/user_32.h) is
pr_reg of a 32-bit process's NT_PRSTATUS, on a 32-bit kernel and in the ia32
emulation of a 64-bit one alike (``compat_elf_gregset_t``): 17 4-byte slots, in this
order.  arch/regsets.py reads them; the FP state and the thread pointer (a TLS
descriptor, NT_386_TLS) are this module's own.
"""
from .. import xsave as xsave_layout
from ..regsets import UserRegsetView
from . import registers

#: user_regs_struct, in order (x.. are the segment registers, zero-extended to 4 bytes).
USER_REGS = ("ebx", "ecx", "edx", "esi", "edi", "ebp", "eax", "xds", "xes", "xfs", "xgs",
             "orig_eax", "eip", "xcs", "eflags", "esp", "xss")
SLOT = 4
#: Where pr_reg starts in the 32-bit struct elf_prstatus: pr_info (12) pr_cursig (2+2)
#: pr_sigpend pr_sighold (4 each) pr_pid pr_ppid pr_pgrp pr_sid (4 each) 4 timevals (8 each).
PRSTATUS_REG_OFFSET = 72
#: The whole elf_prstatus: pr_reg, then pr_fpvalid (4).
PRSTATUS_SIZE = PRSTATUS_REG_OFFSET + SLOT * len(USER_REGS) + 4        # 144
#: The width of a C long (elf_prstatus's pr_sigpend, pr_sighold; elf_prpsinfo's pr_flag).
LONG = 4
#: struct elf_prpsinfo: state sname zomb nice (4 chars), pr_flag (4), pr_uid pr_gid (2 each:
#: __kernel_uid_t is an unsigned short on i386), pr_pid pr_ppid pr_pgrp pr_sid (4 each),
#: pr_fname[16], pr_psargs[80].
PRPSINFO = {"uid": 8, "uid_size": 2, "pid": 12, "fname": 28, "psargs": 44, "size": 124}


# --- the x87/SSE state (the FSAVE/FXSAVE/XSAVE layouts are arch/xsave.py's) -------------
#: Core-file notes of a thread's FP state (``CoreThread.notes``): the legacy FSAVE area,
#: the FXSAVE area (NT_PRXFPREG, "LINUX") and the XSAVE area.
NT_FPREGSET = 2
NT_PRXFPREG = 0x46E62B7F
NT_X86_XSTATE = 0x202


def unpack_fp(fsave=None, fxsave=None, xsave=None):
    """{DWARF regno: bytes} of st0-st7 and xmm0-xmm7 (ymm0-ymm7 with an XSAVE area)."""
    if fxsave is None and xsave is None:
        return xsave_layout.unpack_fsave(fsave, registers.X87)
    return xsave_layout.unpack(fxsave, xsave, registers.X87, registers.SSE)


def unpack_fp_notes(notes):
    return unpack_fp(notes.get(NT_FPREGSET), notes.get(NT_PRXFPREG), notes.get(NT_X86_XSTATE))


# --- the thread pointer ------------------------------------------------------------------
#: NT_386_TLS: the thread's TLS descriptors (``struct user_desc``: entry_number, base_addr,
#: limit, flags; 4 bytes each), one of which %gs selects.
NT_386_TLS = 0x200
USER_DESC_SIZE = 16


def thread_pointer(regs, notes):
    """The base of the segment %gs selects (glibc's thread pointer on i386), from a core's
    registers and its NT_386_TLS note; None if they do not say."""
    gs = regs.get("xgs")
    raw = notes.get(NT_386_TLS)
    if gs is None or not raw:
        return None
    index = (gs & 0xFFFF) >> 3
    for off in range(0, len(raw) - USER_DESC_SIZE + 1, USER_DESC_SIZE):
        entry, base = int.from_bytes(raw[off:off + 4], "little"), int.from_bytes(raw[off + 4:off + 8], "little")
        if entry == index:
            return base
    return None


REGSETS = UserRegsetView(
    USER_REGS, SLOT, registers.DWARF_NAMES, prstatus_reg_offset=PRSTATUS_REG_OFFSET,
    prstatus_size=PRSTATUS_SIZE, long=LONG, prpsinfo=PRPSINFO,
    # the FP state, and the TLS descriptors (the thread pointer), each bounded
    ptrace_notes=((NT_X86_XSTATE, xsave_layout.XSAVE_USED), (NT_FPREGSET, 108), (NT_PRXFPREG, 512),
                  (NT_386_TLS, 3 * 16)),
    ptrace_covered={NT_FPREGSET: NT_X86_XSTATE, NT_PRXFPREG: NT_X86_XSTATE},
    fp_notes=unpack_fp_notes, tls=thread_pointer)
