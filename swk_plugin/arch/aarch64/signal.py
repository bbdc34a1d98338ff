"""The AArch64 Linux signal frame: what the kernel (or qemu-user) puts on the stack before
running a handler.

From the kernel's arch/arm64/kernel/signal.c and uapi asm/sigcontext.h, asm/ucontext.h::

    struct rt_sigframe { struct siginfo info; struct ucontext uc; };     then a frame record
    struct ucontext    { u64 uc_flags; ucontext *uc_link; stack_t uc_stack; sigset_t uc_sigmask;
                         u8 __unused[1024/8 - sizeof(sigset_t)]; struct sigcontext uc_mcontext; };
    struct sigcontext  { u64 fault_address; u64 regs[31]; u64 sp; u64 pc; u64 pstate;
                         u8 __reserved[4096] (16-aligned): records, see below };

The handler is entered with sp at the rt_sigframe, x29 at a frame record {fp, lr}
right above it and x30 at the sigreturn trampoline: the vDSO's
``__kernel_rt_sigreturn``, or on qemu-user the page qemu writes its own trampoline
into; both are ``mov x8, #139; svc #0`` (rt_sigreturn).  In the trampoline's frame
(the handler has returned) sp is the rt_sigframe's address again.

``__reserved`` holds records ``{u32 magic; u32 size; ...}`` ended by a zero record:
fpsimd_context first (fpsr, fpcr, v0-v31), then esr_context, sve_context, ..., and an
extra_context whose data lies after the rt_sigframe when the records do not fit
(SVE, SME).  The frame's end is the larger of the struct and that extra data,
rounded up to 16, then the 16-byte frame record.

The offsets agree with GDB's aarch64-linux-tdep.c (ucontext at sp + 128, sigcontext
at + 176, regs at + 8) and with where GDB finds registers on qemu (tests/test_aarch64.py).
"""
from ...rule import UnwindRule
from . import registers

NR_RT_SIGRETURN = 139
_MOV_X8 = 0xd2800008 | (NR_RT_SIGRETURN << 5)       # mov x8, #139
_SVC0 = 0xd4000001                                  # svc #0
#: The trampoline's code, and where its ``svc`` sits (a frame stopped there is one too).
TRAMPOLINES = ((_MOV_X8.to_bytes(4, "little") + _SVC0.to_bytes(4, "little"), 4),)
#: Symbol names of trampolines (the vDSO's; glibc has no restorer of its own on AArch64).
TRAMPOLINE_NAMES = frozenset({"__kernel_rt_sigreturn"})

# --- struct rt_sigframe -------------------------------------------------------------------
SIGINFO_SIZE = 128
UC_FROM_SP = SIGINFO_SIZE
# --- struct ucontext ----------------------------------------------------------------------
UC_FLAGS = 0
UC_LINK = 8
UC_STACK = 16                   # stack_t: ss_sp (8), ss_flags (int + 4 pad), ss_size (8)
UC_SIGMASK = 40
UC_MCONTEXT = 176               # after __unused, aligned to 16
# --- struct sigcontext --------------------------------------------------------------------
SC_FAULT_ADDRESS = 0
SC_REGS = 8                     # x0..x30
SC_SP = SC_REGS + 31 * 8        # 256
SC_PC = SC_SP + 8               # 264
SC_PSTATE = SC_PC + 8           # 272
SC_RESERVED = 288               # __reserved, 16-aligned
RESERVED_SIZE = 4096
SIGCONTEXT_SIZE = SC_RESERVED + RESERVED_SIZE                   # 4384
UCONTEXT_SIZE = UC_MCONTEXT + SIGCONTEXT_SIZE                   # 4560
RT_SIGFRAME_SIZE = SIGINFO_SIZE + UCONTEXT_SIZE                 # 4688
FRAME_RECORD_SIZE = 16
#: What a stepper must be able to read: fault_address .. pstate.
SC_GREGS_SIZE = SC_PSTATE + 8

#: DWARF number -> offset of its slot in the sigcontext.
SC_OFFSETS = {**{i: SC_REGS + 8 * i for i in range(31)},
              registers.sp: SC_SP, registers.pc: SC_PC}

# --- __reserved records ---------------------------------------------------------------------
FPSIMD_MAGIC = 0x46508001       # struct fpsimd_context: fpsr, fpcr (u32 each), vregs[32] (16 each)
ESR_MAGIC = 0x45535201          # struct esr_context: esr (u64)
EXTRA_MAGIC = 0x45585401        # struct extra_context: datap (u64), size (u32)
SVE_MAGIC = 0x53564501
TPIDR2_MAGIC = 0x54504902
ZA_MAGIC = 0x54366345
ZT_MAGIC = 0x5a544e01
RECORD_NAMES = {FPSIMD_MAGIC: "fpsimd", ESR_MAGIC: "esr", EXTRA_MAGIC: "extra", SVE_MAGIC: "sve",
                TPIDR2_MAGIC: "tpidr2", ZA_MAGIC: "za", ZT_MAGIC: "zt"}
FPSIMD_SIZE = 528
FPSIMD_VREGS = 16               # v0 at record + 16
MAX_RECORDS = 64
#: An extra_context larger than this is not believed (SVE/SME state is at most a few 100 KiB).
MAX_EXTRA = 1 << 20


#: One kind of signal frame here (rt_sigframe): no frame_kind; its size is read from the frame
#: itself (rule_at).
frame_kind = None


def sigcontext_address(tramp_sp):
    """The sigcontext's address, given the stack pointer in the trampoline's frame."""
    return tramp_sp + UC_FROM_SP + UC_MCONTEXT


def reserved_records(read, sc_addr):
    """[(magic, address, size)] of the sigcontext's ``__reserved`` records, in order, following
    an extra_context into its data; stops at the end record or at anything malformed.
    ``read(addr, n)`` returns bytes (MemoryReadError propagates)."""
    out = []
    addr, end = sc_addr + SC_RESERVED, sc_addr + SC_RESERVED + RESERVED_SIZE
    followed = False
    while len(out) < MAX_RECORDS and addr + 8 <= end:
        head = read(addr, 8)
        magic, size = int.from_bytes(head[:4], "little"), int.from_bytes(head[4:8], "little")
        if magic == 0:
            break
        if size < 8 or size % 16 or addr + size > end:
            break
        out.append((magic, addr, size))
        if magic == EXTRA_MAGIC and not followed and size >= 24:
            body = read(addr + 8, 12)
            datap, dsize = int.from_bytes(body[:8], "little"), int.from_bytes(body[8:12], "little")
            if dsize <= MAX_EXTRA and datap % 16 == 0 and datap >= sc_addr:
                followed = True
                addr, end = datap, datap + dsize
                continue
        addr += size
    return out


def frame_size(read, tramp_sp):
    """Bytes from the trampoline's sp to the end of the signal frame's data (the
    rt_sigframe, or the extra_context's data beyond it), rounded up to 16."""
    end = tramp_sp + RT_SIGFRAME_SIZE
    try:
        for _magic, addr, size in reserved_records(read, sigcontext_address(tramp_sp)):
            end = max(end, addr + size)
    except Exception:  # unreadable records: the struct's own size
        pass
    return (end - tramp_sp + 15) & -16


def fpsimd_vreg_address(read, tramp_sp, n):
    """Where v``n`` of the interrupted code is saved (the fpsimd record), or None."""
    for magic, addr, size in reserved_records(read, sigcontext_address(tramp_sp)):
        if magic == FPSIMD_MAGIC and size >= FPSIMD_SIZE:
            return addr + FPSIMD_VREGS + 16 * n
    return None


def frame_end(tramp_sp, read=None):
    """The first address above the signal frame (its frame record included)."""
    size = frame_size(read, tramp_sp) if read is not None else RT_SIGFRAME_SIZE
    return tramp_sp + size + FRAME_RECORD_SIZE


def trampoline_start(code_at, pc, exact):
    """The trampoline's start address if ``pc`` is in one, else None (``code_at(addr, n)``
    gives n bytes or None).  A return address is the trampoline's first instruction; a
    frame stopped there (``exact``) may also sit on its ``svc``."""
    for code, svc_at in TRAMPOLINES:
        for start in ((pc, pc - svc_at) if exact else (pc,)):
            if code_at(start, len(code)) == code:
                return start
    return None


def is_trampoline_code(code):
    """Whether ``code`` (bytes at an address) starts a sigreturn trampoline."""
    return any(code.startswith(pattern) for pattern, _svc_at in TRAMPOLINES)


_RULES = {}


def rule(size=RT_SIGFRAME_SIZE):
    """The trampoline frame's UnwindRule for a signal frame of ``size`` bytes (frame_size):
    CFA = sp + size + the frame record; every general register, sp and pc of the interrupted
    code from the sigcontext.  The return-address column is the pc: the interrupted code's
    x30 is a register like any other here."""
    r = _RULES.get(size)
    if r is None:
        cfa_from_sp = size + FRAME_RECORD_SIZE
        sc = UC_FROM_SP + UC_MCONTEXT - cfa_from_sp        # the sigcontext, from the CFA
        saved = {regno: sc + off for regno, off in SC_OFFSETS.items()}
        r = UnwindRule.at_cfa(registers.sp, cfa_from_sp, registers.pc, saved[registers.pc], saved,
                              signal_frame=True)
        if len(_RULES) < 64:
            _RULES[size] = r
    return r


def rule_at(read, tramp_sp):
    """The rule for the signal frame whose trampoline frame has stack pointer ``tramp_sp``
    (its size from the ``__reserved`` records)."""
    return rule(frame_size(read, tramp_sp))


def fp_registers(read_mem, sc):
    """{DWARF regno: bytes} of v0-v31 of the code the signal interrupted, from the fpsimd
    record among the sigcontext's ``__reserved`` records at ``sc``; {} without one."""
    for magic, addr, size in reserved_records(read_mem, sc):
        if magic == FPSIMD_MAGIC and size >= FPSIMD_SIZE:
            raw = read_mem(addr + FPSIMD_VREGS, 16 * registers.NUM_V)
            return {registers.V0 + i: bytes(raw[16 * i:16 * i + 16]) for i in range(registers.NUM_V)}
    return {}
