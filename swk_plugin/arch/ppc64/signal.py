"""The Power-64 Linux signal frame: what the kernel (or qemu-user) puts on the stack before
running a handler.

From the kernel's arch/powerpc/kernel/signal_64.c and the C library's <sys/ucontext.h>
(offsets checked against the cross toolchain's headers by tests/test_ppc64.py)::

    struct rt_sigframe { struct ucontext uc; unsigned long _unused[2]; u32 tramp[7];
                         siginfo *pinfo; void *puc; siginfo info; char abigap[288]; };
    ucontext:   uc_flags, uc_link, uc_stack (24), uc_sigmask (8 + 120 unused),
                uc_mcontext (a struct sigcontext) at 168
    sigcontext: _unused[4], signal, handler, oldmask, regs (-> gp_regs) at 56,
                gp_regs[48] at 64 (pt_regs' layout: regsets.py), fp_regs[33] at 448

The handler runs on a dummy caller frame below the rt_sigframe whose back chain is the
interrupted r1, with lr at the sigreturn trampoline:

* the kernel's, in the vDSO (``__kernel_sigtramp_rt64``): ``addi r1,r1,128; li r0,172;
  sc`` — the frame is 128 bytes above the handler's sp until the addi has run;
* qemu-user's, in a page of its own: ``li r0,172; sc`` — qemu leaves 144 bytes
  (SIGNAL_FRAMESIZE + 16) below the frame.

GDB 13 knows only the kernel's, so it stops at qemu's trampoline; swk tells them apart by
their code (each kind's offset) and checks the sigcontext's ``regs`` pointer, which points
at its own gp_regs.

Big-endian ELFv1 (elfv1/signal.py) has the same frames, trampolines and offsets (measured
under qemu-ppc64 as under qemu-ppc64le: the ucontext 144 bytes above the handler's sp, lr
at ``li r0,172; sc`` in a page of its own); only the trampolines' words are big-endian,
so the functions below take the code's byte order (``order``, ppc.py).
"""
from ...rule import UnwindRule
from . import registers, regsets
from .ppc import BIG, LITTLE, encode

NR_RT_SIGRETURN = 172
_ADDI_R1_128 = 0x38210080
_LI_R0 = 0x38000000 | NR_RT_SIGRETURN
_SC = 0x44000002
_KERNEL_WORDS = (_ADDI_R1_128, _LI_R0, _SC)
_QEMU_WORDS = (_LI_R0, _SC)

KERNEL_TRAMPOLINE = encode(_KERNEL_WORDS)
QEMU_TRAMPOLINE = encode(_QEMU_WORDS)
#: Each trampoline's code and where its ``sc`` sits (a frame stopped there is one too).
TRAMPOLINES = ((KERNEL_TRAMPOLINE, 8), (QEMU_TRAMPOLINE, 4))
#: (kernel's code, qemu's code, TRAMPOLINES) in each byte order.
_BY_ORDER = {LITTLE: (KERNEL_TRAMPOLINE, QEMU_TRAMPOLINE, TRAMPOLINES)}
_BY_ORDER[BIG] = (encode(_KERNEL_WORDS, BIG), encode(_QEMU_WORDS, BIG),
                  ((encode(_KERNEL_WORDS, BIG), 8), (encode(_QEMU_WORDS, BIG), 4)))


def trampolines(order=LITTLE):
    """TRAMPOLINES with words in byte order ``order``."""
    return _BY_ORDER[order][2]
#: Symbol names of trampolines (the vDSO's).
TRAMPOLINE_NAMES = frozenset({"__kernel_sigtramp_rt64", "__kernel_start_sigtramp_rt64"})

SIGNAL_FRAMESIZE = 128
# --- struct ucontext / sigcontext -------------------------------------------------------------
UC_SIGMASK = 40
UC_MCONTEXT = 168
UCONTEXT_SIZE = 1440
SC_REGS_POINTER = 56
SC_GP_REGS = 64
SC_FP_REGS = 448
SLOT = 8
#: DWARF number -> offset of its slot in the sigcontext (the registers a walk goes on with).
SC_OFFSETS = {**{i: SC_GP_REGS + SLOT * i for i in range(32)},
              **{getattr(registers, name): SC_GP_REGS + SLOT * regsets.SLOTS[name]
                 for name in ("pc", "lr", "ctr", "xer")}}
#: What a stepper must be able to read: the sigcontext up to the end of gp_regs.
SC_GREGS_SIZE = SC_GP_REGS + SLOT * regsets.NGREG


class _SignalFrame:
    """One way a trampoline's frame lies: the ucontext ``uc_from_sp`` above its sp."""

    def __init__(self, name, uc_from_sp):
        self.name, self.uc_from_sp = name, uc_from_sp
        cfa_from_sp = uc_from_sp + UCONTEXT_SIZE
        sc = uc_from_sp + UC_MCONTEXT - cfa_from_sp          # the sigcontext, from the CFA
        saved = {regno: sc + off for regno, off in SC_OFFSETS.items()}
        self.rule = UnwindRule.at_cfa(registers.sp, cfa_from_sp, registers.pc, saved[registers.pc], saved,
                                      signal_frame=True)

    def sigcontext_address(self, tramp_sp):
        return tramp_sp + self.uc_from_sp + UC_MCONTEXT

    def __repr__(self):
        return f"<ppc64 signal frame {self.name}: ucontext at sp+{self.uc_from_sp}>"


KERNEL = _SignalFrame("kernel", SIGNAL_FRAMESIZE)
KERNEL_POPPED = _SignalFrame("kernel, after its addi", 0)
QEMU = _SignalFrame("qemu-user", SIGNAL_FRAMESIZE + 16)

#: Every kind's frame is read by its own rule (frame_kind).
rule_at = None


def frame_kind(code_at, pc, exact, name=None, order=LITTLE):
    """The _SignalFrame of a trampoline frame at ``pc`` (``exact``: stopped there, not
    returned to), or None.  ``name()``: the pc's symbol, for a trampoline known by name only."""
    kernel, qemu, _all = _BY_ORDER[order]
    for start in ((pc, pc - 4, pc - 8) if exact else (pc,)):
        if code_at(start, len(kernel)) == kernel:
            return KERNEL if start == pc else KERNEL_POPPED
        if start >= pc - 4 and code_at(start, len(qemu)) == qemu:
            return QEMU
    if name is not None and (name() or "").split("@", 1)[0] in TRAMPOLINE_NAMES:
        return KERNEL
    return None


def trampoline_start(code_at, pc, exact, order=LITTLE):
    """The trampoline's start address if ``pc`` is in one, else None (``code_at(addr, n)``
    gives n bytes or None)."""
    for code, sc_at in _BY_ORDER[order][2]:
        for start in (range(pc, pc - sc_at - 1, -4) if exact else (pc,)):
            if code_at(start, len(code)) == code:
                return start
    return None


def is_trampoline_code(code, order=LITTLE):
    """Whether ``code`` (bytes at an address) starts a sigreturn trampoline."""
    return any(code.startswith(pattern) for pattern, _sc_at in _BY_ORDER[order][2])


def gdb_knows(code, order=LITTLE):
    """GDB 13 matches the kernel's trampoline by its code (ppc64_linux_sigaction_tramp_frame,
    words in the target's byte order), never qemu-user's."""
    return code.startswith(_BY_ORDER[order][0])


def fp_registers(read_mem, sc):
    """{DWARF regno: bytes} of f0-f31 of the code the signal interrupted, from the
    sigcontext at ``sc``."""
    raw = read_mem(sc + SC_FP_REGS, 8 * registers.NUM_F)
    return {registers.F0 + i: bytes(raw[8 * i:8 * i + 8]) for i in range(registers.NUM_F)}
