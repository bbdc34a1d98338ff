"""The x87/SSE/AVX register state as x86 CPUs save it (FXSAVE, XSAVE) and Linux stores it:
NT_PRXFPREG / NT_FPREGSET (x86-64) / NT_X86_XSTATE in cores, PTRACE_GETFPREGS, and the
fpstate of a signal frame.  Shared by i386 and x86-64, which differ only in how many xmm
registers there are and what their DWARF numbers are.
"""

#: The FXSAVE area: ST(0)..ST(7) in 16-byte slots (10 bytes used), from the top of the
#: x87 stack; then xmm0..xmm7 (i386) or xmm0..xmm15 (x86-64).
FXSAVE_SIZE = 512
FXSAVE_ST = 32
FXSAVE_XMM = 160
#: ``fx_sw_bytes`` in the FXSAVE area's software-reserved bytes: a signal frame's fpstate
#: says there whether an XSAVE area follows (magic1, extended_size, xfeatures, xstate_size).
FX_SW_BYTES = 464
FP_XSTATE_MAGIC1 = 0x46505853
#: The XSAVE area: the FXSAVE area, the XSAVE header (XSTATE_BV first), then, in the
#: standard format Linux writes, the upper halves of the ymm registers.
XSTATE_BV = 512
XSAVE_YMM_HI = 576
XFEATURE_X87, XFEATURE_SSE, XFEATURE_YMM = 1, 2, 4
#: Bounds on an XSAVE area's size (AVX-512 needs 2,696 bytes; AMX more).
XSAVE_MAX = 1 << 16
#: The bytes of an XSAVE area unpack reads: to the last of the 16 ymm registers' upper halves
#: (a live thread's is read as far as this: with AMX the whole area is 11 KB).
XSAVE_USED = XSAVE_YMM_HI + 16 * 16
#: The legacy FSAVE area (i386's NT_FPREGSET, ``struct user_i387_struct``): a 28-byte
#: environment, then ST(0)..ST(7) packed, 10 bytes each.
FSAVE_ST = 28
FSAVE_SIZE = 108


def unpack(fxsave, xsave, st_regnos, xmm_regnos):
    """{DWARF regno: bytes} of the x87 and SSE registers (ymm where the XSAVE area has
    their upper halves), from an FXSAVE area and/or an XSAVE area; {} from neither.  A
    component XSTATE_BV marks as in its initial state reads as its initial value (zeros),
    whatever the area's bytes: XSAVE need not write it."""
    area = xsave if xsave is not None and len(xsave) >= XSAVE_YMM_HI else fxsave
    if area is None or len(area) < FXSAVE_XMM + 16 * len(xmm_regnos):
        return {}
    bv = (int.from_bytes(area[XSTATE_BV:XSTATE_BV + 8], "little") if area is xsave
          else XFEATURE_X87 | XFEATURE_SSE)
    out = {}
    for i, regno in enumerate(st_regnos):
        out[regno] = (bytes(area[FXSAVE_ST + 16 * i:FXSAVE_ST + 16 * i + 10]) if bv & XFEATURE_X87
                      else bytes(10))
    has_ymm = area is xsave and len(area) >= XSAVE_YMM_HI + 16 * len(xmm_regnos)
    for i, regno in enumerate(xmm_regnos):
        low = bytes(area[FXSAVE_XMM + 16 * i:FXSAVE_XMM + 16 * i + 16]) if bv & XFEATURE_SSE else bytes(16)
        if has_ymm:
            low += (bytes(area[XSAVE_YMM_HI + 16 * i:XSAVE_YMM_HI + 16 * i + 16]) if bv & XFEATURE_YMM
                    else bytes(16))
        out[regno] = low
    return out


def unpack_fsave(fsave, st_regnos):
    """{DWARF regno: bytes} of the x87 registers from a legacy FSAVE area."""
    if fsave is None or len(fsave) < FSAVE_ST + 10 * len(st_regnos):
        return {}
    return {regno: bytes(fsave[FSAVE_ST + 10 * i:FSAVE_ST + 10 * i + 10]) for i, regno in enumerate(st_regnos)}


def fpstate_size(fxsave):
    """How many bytes of fpstate a signal frame holds, from its FXSAVE area's fx_sw_bytes:
    the XSAVE area's size when the kernel wrote one, else the FXSAVE area's."""
    if len(fxsave) >= FX_SW_BYTES + 16 and \
            int.from_bytes(fxsave[FX_SW_BYTES:FX_SW_BYTES + 4], "little") == FP_XSTATE_MAGIC1:
        size = int.from_bytes(fxsave[FX_SW_BYTES + 12:FX_SW_BYTES + 16], "little")
        if XSAVE_YMM_HI <= size <= XSAVE_MAX:
            return size
    return FXSAVE_SIZE


def read_fpstate(read_mem, ptr):
    """The FXSAVE or XSAVE area a signal frame's fpstate pointer points at: (fxsave, xsave)."""
    fx = read_mem(ptr, FXSAVE_SIZE)
    size = fpstate_size(fx)
    if size > FXSAVE_SIZE:
        return None, read_mem(ptr, size)
    return fx, None
