"""The s390x Linux signal frames: what the kernel (or qemu-user) puts on the stack before
running a handler.  s390 has two, and still uses both: a handler installed without
SA_SIGINFO gets the old ``sigframe``, one with SA_SIGINFO an ``rt_sigframe``.

From the kernel's arch/s390/kernel/signal.c and uapi asm/sigcontext.h, asm/ucontext.h
(offsets checked against the cross toolchain's headers by tests/test_s390x.py)::

    struct sigframe    { u8 callee_used_stack[160]; struct sigcontext sc; _sigregs sregs;
                         int signo; _sigregs_ext sregs_ext; u16 svc_insn; };
    struct rt_sigframe { u8 callee_used_stack[160]; u16 svc_insn; siginfo_t info;
                         struct ucontext_extended uc; };
    sigcontext: oldmask (8), _sigregs *sregs (8)
    ucontext:   uc_flags, uc_link, uc_stack (24), uc_mcontext (a _sigregs) at 40, uc_sigmask
    _sigregs:   psw mask, psw addr, gprs[16] at 16, acrs[16] (4 bytes each) at 144,
                fpc (4 + 4 padding) at 208, fprs[16] at 216

The handler is entered with r15 at the frame (its own 160-byte save area first), the back
chain at 0(r15), and r14 at the sigreturn trampoline: ``svc 119`` (sigreturn) or ``svc 173``
(rt_sigreturn), one 2-byte instruction.  The kernel writes it into the frame (svc_insn) or
finds it in the vDSO (``__kernel_sigreturn``, ``__kernel_rt_sigreturn``); qemu-user 7.2
keeps both in a page of its own, ``svc 119`` at its start and ``svc 173`` 2 bytes on.
Measured under qemu-s390x (a handler printing its CFA - 160, its arguments and the bytes
at its r14): the rt_sigframe's siginfo at +168 and ucontext at +296, so the interrupted
registers at +336; the sigframe's sigcontext at +160, its sregs pointing at +176, signo at
+520 — the kernel's layouts.  So a trampoline's frame (the handler has returned) has sp at
the frame, and the code at its pc says which frame it is.

GDB 13 (s390_sigtramp_frame_sniffer) takes any ``svc 119``/``svc 173`` at a pc, but reads an
rt_sigframe's registers at sp + 336 only when the trampoline is in the frame itself (the
kernel's svc_insn, pc = sp + 160); anywhere else it takes the frame for an old one and reads
a "sregs pointer" at sp + 168, inside the siginfo: under qemu its walk stops at the
trampoline ("Cannot access memory at address 0xa00000088", si_signo 10 read as a pointer).
"""
from ...rule import UnwindRule
from . import registers

NR_SIGRETURN = 119
NR_RT_SIGRETURN = 173
SVC = 0x0A
OLD_TRAMPOLINE = bytes((SVC, NR_SIGRETURN))
RT_TRAMPOLINE = bytes((SVC, NR_RT_SIGRETURN))
#: Each trampoline's code and where its ``svc`` sits (a frame stopped there is one too).
TRAMPOLINES = ((RT_TRAMPOLINE, 0), (OLD_TRAMPOLINE, 0))
#: Symbol names of trampolines (the vDSO's; glibc has no restorer of its own on s390x).
TRAMPOLINE_NAMES = frozenset({"__kernel_sigreturn", "__kernel_rt_sigreturn"})

# --- the frames -----------------------------------------------------------------------------------
SAVE_AREA = registers.SAVE_AREA
SIGINFO_SIZE = 128
RT_SIGINFO = SAVE_AREA + 8                              # after svc_insn, 8-aligned
RT_UCONTEXT = RT_SIGINFO + SIGINFO_SIZE                 # 296
UC_MCONTEXT = 40
UC_SIGMASK = 384
UCONTEXT_SIZE = 512                                     # glibc's ucontext_t: uc_sigmask's 128 bytes
OLD_SIGCONTEXT = SAVE_AREA
SIGCONTEXT_SIZE = 16
OLD_SREGS = OLD_SIGCONTEXT + SIGCONTEXT_SIZE            # 176
SIGREGS_SIZE = 344
OLD_SIGNO = OLD_SREGS + SIGREGS_SIZE                    # 520
# _sigregs
SR_PSW_MASK = 0
SR_PSW_ADDR = 8
SR_GPRS = 16
SR_ACRS = 144
SR_FPC = 208
SR_FPRS = 216
SLOT = 8
#: DWARF number -> offset of its slot in the _sigregs (the registers a walk goes on with).
SC_OFFSETS = {**{i: SR_GPRS + SLOT * i for i in range(16)}, registers.pswm: SR_PSW_MASK,
              registers.pc: SR_PSW_ADDR}
#: What a stepper must be able to read: the PSW and the general registers.
SC_GREGS_SIZE = SR_ACRS


class _SignalFrame:
    """One kind of frame: its _sigregs ``sregs_from_sp`` above the trampoline frame's sp, and
    its CFA the end of the kernel's fixed part (the frame owns all of it; the interrupted
    code's stack lies above)."""

    def __init__(self, name, sregs_from_sp, size):
        self.name, self.sregs_from_sp = name, sregs_from_sp
        saved = {regno: sregs_from_sp + off - size for regno, off in SC_OFFSETS.items()}
        self.rule = UnwindRule.at_cfa(registers.sp, size, registers.pc, saved[registers.pc], saved,
                                      signal_frame=True)

    def sigcontext_address(self, tramp_sp):
        """The _sigregs' address, given the stack pointer in the trampoline's frame."""
        return tramp_sp + self.sregs_from_sp

    def __repr__(self):
        return f"<s390x signal frame {self.name}: registers at sp+{self.sregs_from_sp}>"


RT = _SignalFrame("rt_sigframe", RT_UCONTEXT + UC_MCONTEXT, RT_UCONTEXT + UCONTEXT_SIZE)
OLD = _SignalFrame("sigframe", OLD_SREGS, OLD_SIGNO + 4)
_KINDS = {RT_TRAMPOLINE: RT, OLD_TRAMPOLINE: OLD}
_BY_NAME = {"__kernel_rt_sigreturn": RT, "__kernel_sigreturn": OLD}

#: Every kind's frame is read by its own rule (frame_kind).
rule_at = None


def _starts(pc, exact):
    """Where a trampoline holding ``pc`` may start: at pc, or (a frame stopped in the system
    call, ``exact``) 2 bytes before, the PSW past its ``svc``."""
    return (pc, pc - 2) if exact else (pc,)


def frame_kind(code_at, pc, exact, name=None):
    """The _SignalFrame of a trampoline frame at ``pc`` (``exact``: stopped there, not
    returned to), or None.  ``name()``: the pc's symbol, for a trampoline known by name only.
    The pc itself is tried first: qemu's ``svc 173`` follows its ``svc 119``."""
    for start in _starts(pc, exact):
        kind = _KINDS.get(code_at(start, 2))
        if kind is not None:
            return kind
    if name is not None:
        return _BY_NAME.get((name() or "").split("@", 1)[0])
    return None


def trampoline_start(code_at, pc, exact):
    """The trampoline's start address if ``pc`` is in one, else None (``code_at(addr, n)``
    gives n bytes or None)."""
    for start in _starts(pc, exact):
        if code_at(start, 2) in _KINDS:
            return start
    return None


def is_trampoline_code(code):
    """Whether ``code`` (bytes at an address) starts a sigreturn trampoline."""
    return code[:2] in _KINDS


def gdb_knows(code):
    """Whether GDB 13 unwinds the trampoline right by its own sigtramp unwinder: an old
    sigframe's (``svc 119``: its sregs pointer, wherever the trampoline is).  An rt_sigframe's
    only where its ``svc 173`` is the frame's own svc_insn, which the code does not tell:
    swk takes those (under qemu GDB's walk stops there)."""
    return code[:2] == OLD_TRAMPOLINE


def fp_registers(read_mem, sc):
    """{DWARF regno: bytes} of f0-f15 of the code the signal interrupted, from the _sigregs
    at ``sc``."""
    raw = read_mem(sc + SR_FPRS, 8 * registers.NUM_F)
    return {registers.F_DWARF[n]: bytes(raw[8 * n:8 * n + 8]) for n in range(16)}
