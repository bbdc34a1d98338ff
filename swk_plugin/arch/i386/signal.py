"""The i386 Linux signal frames: what the kernel pushes before running a handler.

i386 has two (the kernel's arch/x86/include/asm/sigframe.h, ``sigframe_ia32`` and
``rt_sigframe_ia32``: the same on a 32-bit kernel and in a 64-bit kernel's ia32
emulation; uapi asm/sigcontext.h, ``sigcontext_32``)::

    struct sigframe_ia32    { u32 pretcode; int sig; struct sigcontext_32 sc;
                              struct _fpstate_32 fpstate_unused; u32 extramask[1]; char retcode[8]; };
    struct rt_sigframe_ia32 { u32 pretcode; int sig; u32 pinfo; u32 puc;
                              compat_siginfo_t info; struct ucontext_ia32 uc; char retcode[8]; };
    struct ucontext_ia32    { u32 uc_flags; u32 uc_link; stack_ia32_t uc_stack (12);
                              struct sigcontext_32 uc_mcontext; compat_sigset_t uc_sigmask; };
    struct sigcontext_32    { u16 gs, __gsh, fs, __fsh, es, __esh, ds, __dsh;
                              u32 di, si, bp, sp, bx, dx, cx, ax, trapno, err, ip;
                              u16 cs, __csh; u32 flags, sp_at_signal; u16 ss, __ssh;
                              u32 fpstate, oldmask, cr2; };

A handler installed without SA_SIGINFO gets a ``sigframe`` and returns into
``__kernel_sigreturn`` (the vDSO) or glibc's ``__restore``: ``pop %eax; mov
$0x77,%eax; int $0x80``; with SA_SIGINFO an ``rt_sigframe`` and ``__kernel_rt_sigreturn``
or ``__restore_rt``: ``mov $0xad,%eax; int $0x80``.  The handler is entered as if
pretcode had called it; its ``ret`` pops pretcode, so in the trampoline's frame the
stack pointer is the frame's address + 4 — and + 8 once ``__restore``'s ``pop %eax``
has run (a frame stopped at its ``mov`` or ``int``).

The offsets agree with the vDSO's own CFI for both trampolines (``zRS`` FDEs:
esp at sp+32 and sp+28 after the pop, eip at sp+60; esp at sp+188, eip at sp+216
in the rt frame), which tests/test_i386.py checks against the running kernel's
vDSO.  glibc's i386 __restore / __restore_rt have no CFI: their code alone says
what they are.
"""
from collections import namedtuple

from ...rule import UnwindRule
from .. import xsave as xsave_layout
from . import registers, regsets

#: sigreturn's and rt_sigreturn's numbers (i386).
NR_SIGRETURN = 0x77
NR_RT_SIGRETURN = 0xad

#: ``pop %eax; mov $0x77,%eax; int $0x80`` and ``mov $0xad,%eax; int $0x80``.
SIGRETURN_CODE = bytes.fromhex("58" "b877000000" "cd80")
RT_SIGRETURN_CODE = bytes.fromhex("b8ad000000" "cd80")
#: (code, where its int $0x80 sits, frame kind at each instruction start: offset -> kind name).
TRAMPOLINES = (
    (SIGRETURN_CODE, 6, {0: "sigframe", 1: "sigframe-popped", 6: "sigframe-popped"}),
    (RT_SIGRETURN_CODE, 5, {0: "rt_sigframe", 5: "rt_sigframe"}),
)
#: Symbol names of the trampolines -> the frame they return from (at their first byte).
TRAMPOLINE_KINDS = {"__restore": "sigframe", "__kernel_sigreturn": "sigframe",
                    "__restore_rt": "rt_sigframe", "__kernel_rt_sigreturn": "rt_sigframe"}
TRAMPOLINE_NAMES = frozenset(TRAMPOLINE_KINDS)

# --- the layouts ---------------------------------------------------------------------------
SLOT = 4
SIGCONTEXT_SIZE = 88
#: sigcontext_32: (name, DWARF number or None, offset) of each saved general register.
SIGCONTEXT_REGS = (
    ("edi", 7, 16), ("esi", 6, 20), ("ebp", 5, 24), ("esp", 4, 28), ("ebx", 3, 32),
    ("edx", 2, 36), ("ecx", 1, 40), ("eax", 0, 44), ("eip", 8, 56), ("eflags", registers.EFLAGS, 64),
)
SC_OFFSETS = {regno: off for _name, regno, off in SIGCONTEXT_REGS}
SC_NAMES = {regno: name for name, regno, _off in SIGCONTEXT_REGS}
SC_TRAPNO, SC_ERR, SC_SP_AT_SIGNAL, SC_FPSTATE, SC_OLDMASK, SC_CR2 = 48, 52, 68, 76, 80, 84
#: What a stepper must be able to read: gs .. eflags.
SC_GREGS_SIZE = 68
#: struct _fpstate_32 (legacy FSAVE + FXSR + padding): the unused copy in sigframe_ia32.
FPSTATE_32_SIZE = 624
SIGFRAME_SIZE = 4 + 4 + SIGCONTEXT_SIZE + FPSTATE_32_SIZE + 4 + 8              # 732
SIGINFO_SIZE = 128
UC_MCONTEXT = 20                                                              # in ucontext_ia32
UCONTEXT_SIZE = UC_MCONTEXT + SIGCONTEXT_SIZE + 8                             # 116
RT_UC = 16 + SIGINFO_SIZE                                                     # uc in rt_sigframe_ia32
RT_SIGFRAME_SIZE = RT_UC + UCONTEXT_SIZE + 8                                  # 268


class SignalFrame(namedtuple("SignalFrame", "name frame_from_sp sc_in_frame size")):
    """One way of finding the kernel's frame from the trampoline frame's sp: the frame's
    address (pretcode) is sp - ``frame_from_sp``, its sigcontext at ``sc_in_frame`` from
    there, and its ``size`` puts the CFA at its end."""
    __slots__ = ()

    def sigcontext_address(self, sp):
        return sp - self.frame_from_sp + self.sc_in_frame

    def frame_end(self, sp):
        return sp - self.frame_from_sp + self.size

    @property
    def rule(self):
        return _rule(self)


KINDS = {
    "sigframe": SignalFrame("sigframe", 4, 8, SIGFRAME_SIZE),
    "sigframe-popped": SignalFrame("sigframe-popped", 8, 8, SIGFRAME_SIZE),
    "rt_sigframe": SignalFrame("rt_sigframe", 4, RT_UC + UC_MCONTEXT, RT_SIGFRAME_SIZE),
}
_RULES = {}


def _rule(kind):
    """The trampoline frame's UnwindRule: CFA = the end of the kernel's frame, every general
    register of the interrupted code in the sigcontext, the caller interrupted (not calling)."""
    r = _RULES.get(kind.name)
    if r is None:
        cfa_from_sp = kind.size - kind.frame_from_sp
        sc = kind.sc_in_frame - kind.size                      # the sigcontext, from the CFA
        saved = {regno: sc + off for regno, off in SC_OFFSETS.items()}
        r = _RULES[kind.name] = UnwindRule.at_cfa(registers.sp, cfa_from_sp, registers.ra,
                                                  saved[registers.ra], saved, signal_frame=True)
    return r


def _match(code_at, pc, exact):
    """(start, kind name) of the trampoline at pc, or None."""
    for code, int_at, kinds in TRAMPOLINES:
        for off in sorted(kinds) if exact else (0,):
            start = pc - off
            if code_at(start, len(code)) == code:
                return start, kinds[off]
    return None


def trampoline_start(code_at, pc, exact):
    """The trampoline's start address if ``pc`` is in one, else None.

    ``code_at(addr, n)`` returns n bytes or None.  A return address is the
    trampoline's first byte; a frame that stopped there (``exact``: the top frame
    or one a signal interrupted) may also sit on a later instruction of it.
    """
    m = _match(code_at, pc, exact)
    return m[0] if m else None


def is_trampoline_code(code):
    """Whether ``code`` (bytes at an address) starts a sigreturn trampoline."""
    return any(code.startswith(pattern) for pattern, _int_at, _kinds in TRAMPOLINES)


#: The frame's size is known without reading it: no rule_at.
rule_at = None


def frame_kind(code_at, pc, exact, name=None):
    """The SignalFrame of a trampoline frame at ``pc``: from its code, else from its
    symbol's ``name()`` (called only when needed); None when neither says."""
    m = _match(code_at, pc, exact)
    if m is not None:
        return KINDS[m[1]]
    n = name() if callable(name) else name
    kind = TRAMPOLINE_KINDS.get((n or "").split("@", 1)[0])
    return KINDS[kind] if kind else None


#: The FXSAVE area follows the legacy FSAVE header in struct _fpstate_32.
FPSTATE_FXSAVE = 112


def fp_registers(read_mem, sc):
    """{DWARF regno: bytes} of the x87/SSE registers of the code the signal interrupted,
    from the _fpstate_32 the sigcontext at ``sc`` points to: its FXSAVE (or XSAVE) area
    when the kernel wrote one (magic 0), else the legacy FSAVE registers."""
    ptr = int.from_bytes(read_mem(sc + SC_FPSTATE, SLOT), "little")
    if not ptr:
        return {}
    head = read_mem(ptr, FPSTATE_FXSAVE)
    if int.from_bytes(head[110:112], "little") == 0xFFFF:       # regular FPU data only
        return regsets.unpack_fp(fsave=head)
    fxsave, xsave = xsave_layout.read_fpstate(read_mem, ptr + FPSTATE_FXSAVE)
    return regsets.unpack_fp(fxsave=fxsave, xsave=xsave)
