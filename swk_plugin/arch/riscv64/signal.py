"""The RISC-V 64 Linux signal frame: what the kernel (or qemu-user) puts on the stack before
running a handler.

From the kernel's arch/riscv/kernel/signal.c and uapi asm/ucontext.h, asm/sigcontext.h
(offsets checked against the cross toolchain's <ucontext.h> by tests/test_riscv64.py)::

    struct rt_sigframe { struct siginfo info; struct ucontext uc; };
    ucontext:   uc_flags, uc_link, uc_stack (24), uc_sigmask (8 + 120 unused),
                uc_mcontext (a struct sigcontext, 16-aligned) at 176
    sigcontext: sc_regs (struct user_regs_struct: pc, then x1-x31) at 0,
                sc_fpregs (f0-f31, fcsr; the Q layout's 528 bytes) at 256

The handler is entered with sp at the rt_sigframe and ra at the sigreturn trampoline,
``li a7, 139; ecall`` (rt_sigreturn): the vDSO's ``__vdso_rt_sigreturn``, or on qemu-user
7.2 the same two instructions in a page of qemu's own.  qemu-riscv64 lays the frame out
as the kernel does: measured under it (a handler printing its own CFA, its ucontext
argument and the words at its ra), the ucontext is 128 bytes above the handler's CFA,
which is the rt_sigframe, and ra points at ``li a7, 139; ecall``.  So the trampoline's
frame (the handler has returned) has sp at the rt_sigframe, as GDB 13's
riscv_linux_sigframe_init reads it (mcontext at sp + 128 + 176), and GDB's trampoline
matcher (those two words) takes qemu's page as well as the vDSO's.

With the vector extension the kernel appends its state after the struct (a
``__riscv_ctx_hdr`` chain in sc_fpregs' reserved words): the frame's end is not read
from there, as every register a walk goes on with is at a fixed offset.
"""
from ...rule import UnwindRule
from . import registers, regsets

NR_RT_SIGRETURN = 139
_LI_A7 = 0x00000893 | NR_RT_SIGRETURN << 20                    # addi a7, zero, 139
_ECALL = 0x00000073
TRAMPOLINE = _LI_A7.to_bytes(4, "little") + _ECALL.to_bytes(4, "little")
#: The trampoline's code, and where its ``ecall`` sits (a frame stopped there is one too).
TRAMPOLINES = ((TRAMPOLINE, 4),)
#: Symbol names of trampolines (the vDSO's; glibc has no restorer of its own on RISC-V).
TRAMPOLINE_NAMES = frozenset({"__vdso_rt_sigreturn"})

# --- struct rt_sigframe / ucontext / sigcontext -------------------------------------------------
SIGINFO_SIZE = 128
UC_FROM_SP = SIGINFO_SIZE
UC_SIGMASK = 40
UC_MCONTEXT = 176
SC_REGS = 0
SC_FPREGS = 256
SIGCONTEXT_SIZE = SC_FPREGS + 528
UCONTEXT_SIZE = UC_MCONTEXT + SIGCONTEXT_SIZE                   # 960
RT_SIGFRAME_SIZE = SIGINFO_SIZE + UCONTEXT_SIZE                 # 1088
SLOT = 8
#: DWARF number -> offset of its slot in the sigcontext (sc_regs: pc where x0 would be).
SC_OFFSETS = {**{i: SC_REGS + SLOT * i for i in range(1, 32)}, registers.pc: SC_REGS + SLOT * regsets.SLOTS["pc"]}
#: What a stepper must be able to read: sc_regs.
SC_GREGS_SIZE = SC_FPREGS

#: One kind of signal frame, of a fixed size: no frame_kind, no rule_at.
frame_kind = None
rule_at = None


def sigcontext_address(tramp_sp):
    """The sigcontext's address, given the stack pointer in the trampoline's frame."""
    return tramp_sp + UC_FROM_SP + UC_MCONTEXT


_RULE = None


def rule():
    """The trampoline frame's UnwindRule: CFA = sp + the rt_sigframe's size; every x register
    and the pc of the interrupted code from sc_regs.  The return-address column is the pc:
    the interrupted code's ra is a register like any other here."""
    global _RULE
    if _RULE is None:
        sc = UC_FROM_SP + UC_MCONTEXT - RT_SIGFRAME_SIZE          # the sigcontext, from the CFA
        saved = {regno: sc + off for regno, off in SC_OFFSETS.items()}
        _RULE = UnwindRule.at_cfa(registers.sp, RT_SIGFRAME_SIZE, registers.pc, saved[registers.pc], saved,
                                  signal_frame=True)
    return _RULE


def trampoline_start(code_at, pc, exact):
    """The trampoline's start address if ``pc`` is in one, else None (``code_at(addr, n)``
    gives n bytes or None).  A frame stopped there (``exact``) may also sit on its ``ecall``."""
    for code, ecall_at in TRAMPOLINES:
        for start in ((pc, pc - ecall_at) if exact else (pc,)):
            if code_at(start, len(code)) == code:
                return start
    return None


def is_trampoline_code(code):
    """Whether ``code`` (bytes at an address) starts a sigreturn trampoline."""
    return any(code.startswith(pattern) for pattern, _at in TRAMPOLINES)


def gdb_knows(code):
    """GDB 13 matches the trampoline by its two words (riscv_linux_sigframe), wherever they are:
    the vDSO's and qemu-user's alike."""
    return code.startswith(TRAMPOLINE)


def fp_registers(read_mem, sc):
    """{DWARF regno: bytes} of f0-f31 of the code the signal interrupted, from the sigcontext
    at ``sc`` (the D layout: 8 bytes each)."""
    raw = read_mem(sc + SC_FPREGS, 8 * registers.NUM_F)
    return {registers.F0 + i: bytes(raw[8 * i:8 * i + 8]) for i in range(registers.NUM_F)}
