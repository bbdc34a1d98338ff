"""The x86-64 Linux signal frame: what the kernel pushes before running a handler.

From the kernel's arch/x86/include/asm/sigframe.h and uapi asm/sigcontext.h::

    struct rt_sigframe { char *pretcode; struct ucontext uc; struct siginfo info; };
    struct ucontext    { u64 uc_flags; ucontext *uc_link; stack_t uc_stack;
                         struct sigcontext uc_mcontext; sigset_t uc_sigmask; };
    struct sigcontext  { u64 r8..r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags;
                         u16 cs, gs, fs, ss; u64 err, trapno, oldmask, cr2, fpstate, reserved[8]; };

The handler is entered as if ``pretcode`` (the sa_restorer trampoline,
glibc's __restore_rt) had called it; its ``ret`` pops pretcode, so in the
trampoline's frame the stack pointer is the ucontext's address.  The
offsets below agree with glibc's own CFI for __restore_rt (DW_OP_breg7
40 + slot: r8 at rsp+40 ... rip at rsp+168), which tests/test_sighandler.py
checks against the installed libc.
"""
from ...rule import UnwindRule
from .. import xsave as xsave_layout
from . import registers, regsets


#: rt_sigreturn's syscall number.
NR_RT_SIGRETURN = 15

#: The trampoline's code: ``mov $15,%rax; syscall`` (glibc, musl) and the
#: shorter ``mov $15,%eax; syscall``.  Each with where its ``syscall`` sits, so a
#: frame stopped on that instruction is recognised too.
TRAMPOLINES = (
    (bytes.fromhex("48c7c00f000000" "0f05"), 7),
    (bytes.fromhex("b80f000000" "0f05"), 5),
)

#: Symbol names of trampolines (glibc and musl both say __restore_rt).
TRAMPOLINE_NAMES = frozenset({"__restore_rt"})

# --- struct rt_sigframe ------------------------------------------------------------------
PRETCODE_SIZE = 8
#: Where the ucontext is relative to the trampoline frame's sp (pretcode already popped).
UC_FROM_SP = 0

# --- struct ucontext (kernel's: sigset_t is 8 bytes) -------------------------------------
UC_FLAGS = 0
UC_LINK = 8
UC_STACK = 16            # stack_t: ss_sp (8), ss_flags (int + 4 pad), ss_size (8)
STACK_T_SIZE = 24
UC_MCONTEXT = 40         # struct sigcontext
SIGCONTEXT_SIZE = 256
UC_SIGMASK = UC_MCONTEXT + SIGCONTEXT_SIZE   # 296
UCONTEXT_SIZE = UC_SIGMASK + 8               # 304
SIGINFO_SIZE = 128
RT_SIGFRAME_SIZE = PRETCODE_SIZE + UCONTEXT_SIZE + SIGINFO_SIZE   # 440

# --- struct sigcontext: the 18 saved general registers, in order -------------------------
#: Size of one saved register.
SLOT = 8
#: DWARF number of %rflags (psABI figure 3.36), which the arch table does not name.
RFLAGS = registers.RFLAGS
#: (name, DWARF number) of each 8-byte slot, from the start of the sigcontext.
SIGCONTEXT_REGS = (
    ("r8", 8), ("r9", 9), ("r10", 10), ("r11", 11),
    ("r12", 12), ("r13", 13), ("r14", 14), ("r15", 15),
    ("rdi", 5), ("rsi", 4), ("rbp", 6), ("rbx", 3),
    ("rdx", 1), ("rax", 0), ("rcx", 2), ("rsp", 7),
    ("rip", 16), ("eflags", RFLAGS),
)
#: DWARF number -> offset of its slot in the sigcontext.
SC_OFFSETS = {regno: SLOT * i for i, (_name, regno) in enumerate(SIGCONTEXT_REGS)}
#: DWARF number -> the name GDB gives the register (for eflags, which the arch lacks).
SC_NAMES = {regno: name for name, regno in SIGCONTEXT_REGS}
SC_GREGS_SIZE = SLOT * len(SIGCONTEXT_REGS)     # 144: what a stepper must read
SC_SEGMENTS = 144        # u16 cs, gs, fs, ss
SC_ERR = 152
SC_TRAPNO = 160
SC_OLDMASK = 168
SC_CR2 = 176
SC_FPSTATE = 184         # pointer to the FP/xsave area (above the rt_sigframe)
SC_RESERVED = 192


def sigcontext_address(tramp_sp):
    """The sigcontext's address, given the stack pointer in the trampoline's frame."""
    return tramp_sp + UC_FROM_SP + UC_MCONTEXT


def frame_end(tramp_sp):
    """The first address above the rt_sigframe: what the signal frame owns ends here."""
    return tramp_sp + UC_FROM_SP + UCONTEXT_SIZE + SIGINFO_SIZE


def trampoline_start(code_at, pc, exact):
    """The trampoline's start address if ``pc`` is in one, else None.

    ``code_at(addr, n)`` returns n bytes or None.  A return address is the
    trampoline's first byte; a frame that stopped there (``exact``: the top frame
    or one a signal interrupted) may also sit on its ``syscall``.
    """
    for code, syscall_at in TRAMPOLINES:
        for start in ((pc, pc - syscall_at) if exact else (pc,)):
            if code_at(start, len(code)) == code:
                return start
    return None


def is_trampoline_code(code):
    """Whether ``code`` (bytes at an address) starts a sigreturn trampoline."""
    return any(code.startswith(pattern) for pattern, _syscall_at in TRAMPOLINES)


#: How far the CFA (frame_end) is above the trampoline frame's sp.
CFA_FROM_SP = UC_FROM_SP + UCONTEXT_SIZE + SIGINFO_SIZE
_RULE = []


def rule():
    """The trampoline frame's UnwindRule: CFA = sp + CFA_FROM_SP, every register of the
    interrupted code in the sigcontext, and the caller interrupted (not calling)."""
    if not _RULE:
        sc = UC_FROM_SP + UC_MCONTEXT - CFA_FROM_SP          # the sigcontext, from the CFA
        saved = {regno: sc + off for regno, off in SC_OFFSETS.items()}
        _RULE.append(UnwindRule.at_cfa(registers.sp, CFA_FROM_SP, registers.ra, saved[registers.ra], saved,
                                       signal_frame=True))
    return _RULE[0]


def fp_registers(read_mem, sc):
    """{DWARF regno: bytes} of the x87/SSE/AVX registers of the code the signal interrupted,
    from the fpstate the sigcontext at ``sc`` points to (Linux resets them for the handler,
    so the handler's own registers say nothing of the interrupted code's); {} without one."""
    ptr = int.from_bytes(read_mem(sc + SC_FPSTATE, SLOT), "little")
    if not ptr:
        return {}
    fxsave, xsave = xsave_layout.read_fpstate(read_mem, ptr)
    return regsets.unpack_fp(fxsave, xsave)


class _SignalFrame:
    """x86-64 has one kind of signal frame: the rt_sigframe (what frame_kind returns)."""
    name = "rt_sigframe"

    @property
    def rule(self):
        return rule()

    @staticmethod
    def sigcontext_address(sp):
        return sigcontext_address(sp)

    @staticmethod
    def frame_end(sp):
        return frame_end(sp)


RT_SIGFRAME = _SignalFrame()


#: The frame's size is known without reading it: no rule_at.
rule_at = None


def frame_kind(code_at, pc, exact, name=None):
    """The kind of signal frame a trampoline at ``pc`` returns from: always the rt_sigframe."""
    return RT_SIGFRAME
