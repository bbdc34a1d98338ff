"""The few A64 encodings swk decodes from raw words (no disassembler needed): the
instructions that build and tear down a frame, pointer-authentication hints, returns
and branches.  Every A64 instruction is one little-endian 32-bit word.

``effect(insn)`` classifies one instruction by what it does to the stack pointer,
the frame pointer x29 and stack slots: enough for prologue and epilogue parsing
(prologue.py) and the entry scanner (scan.py).  The full analysis of code without
CFI decodes with capstone (analysis.py).
"""
SP = 31
FP = 29
LR = 30

PACIASP, PACIBSP, PACIAZ, PACIBZ = 0xd503233f, 0xd503237f, 0xd503231f, 0xd503235f
AUTIASP, AUTIBSP, AUTIAZ, AUTIBZ = 0xd50323bf, 0xd50323ff, 0xd503239f, 0xd50323df
PAC_SIGN = frozenset({PACIASP, PACIBSP, PACIAZ, PACIBZ})
PAC_AUTH = frozenset({AUTIASP, AUTIBSP, AUTIAZ, AUTIBZ})
NOP = 0xd503201f
BTI = frozenset({0xd503241f, 0xd503245f, 0xd503249f, 0xd50324df})
RET = 0xd65f03c0
RETAA, RETAB = 0xd65f0bff, 0xd65f0fff

# effect kinds
OTHER, SIGN, AUTH, HINT, ADJ_SP, SET_FP, SP_FROM_FP, STORE, LOAD, RETURN, BRANCH, WRITES_SP, \
    WRITES_FP, WRITES_LR = range(14)


def word(code, i=0):
    return int.from_bytes(code[i:i + 4], "little")


def _sext(v, bits):
    return v - (1 << bits) if v & (1 << (bits - 1)) else v


def _addsub_imm(insn):
    imm = (insn >> 10) & 0xfff
    return imm << 12 if insn & (1 << 22) else imm


def effect(insn):
    """(kind, a, b, c) for one instruction:

    SIGN / AUTH / HINT           paci*sp, auti*sp / bti, nop
    ADJ_SP n                     sp += n (add/sub sp, sp, #imm)
    SET_FP n                     x29 = sp + n (mov x29, sp / add x29, sp, #n)
    SP_FROM_FP n                 sp = x29 + n (mov sp, x29 / add/sub sp, x29, #n)
    STORE (regs, off, wb)        store of X registers ``regs`` (a tuple: first at off, next
                                 at off+8) relative to sp, with sp += wb first (pre-index) or
                                 after (post-index: wb is then given as ('post', n))
    LOAD  (regs, off, wb)        the same for loads from sp
    RETURN signed                ret / retaa / retab
    BRANCH                       any other branch, call, exception or system call
    WRITES_SP / WRITES_FP / WRITES_LR   any other write of sp, x29 or x30
    OTHER                        nothing swk follows
    """
    if insn in PAC_SIGN:
        return SIGN, None, None, None
    if insn in PAC_AUTH:
        return AUTH, None, None, None
    if insn == NOP or insn in BTI or insn & 0xfffff01f == 0xd503201f:     # hint space
        return HINT, None, None, None
    if insn & 0xfffffc1f == 0xd65f0000:
        return RETURN, False, None, None
    if insn in (RETAA, RETAB):
        return RETURN, True, None, None
    top = insn & 0xffc00000
    # --- add/sub immediate, 64-bit, not setting flags ------------------------------------
    if insn & 0xff000000 in (0x91000000, 0xd1000000):
        rd, rn = insn & 0x1f, (insn >> 5) & 0x1f
        imm = _addsub_imm(insn)
        if insn & 0xff000000 == 0xd1000000:
            imm = -imm
        if rd == SP:
            if rn == SP:
                return ADJ_SP, imm, None, None       # add/sub sp, sp, #n: sp += imm
            if rn == FP:
                return SP_FROM_FP, imm, None, None
            return WRITES_SP, None, None, None
        if rd == FP:
            return (SET_FP, imm, None, None) if rn == SP else (WRITES_FP, None, None, None)
        if rd == LR:
            return WRITES_LR, None, None, None
        return OTHER, None, None, None
    # --- load/store pair, 64-bit X registers (opc=10) ------------------------------------
    if top in (0xa8800000, 0xa9000000, 0xa9800000, 0xa8c00000, 0xa9400000, 0xa9c00000):
        rt, rn, rt2 = insn & 0x1f, (insn >> 5) & 0x1f, (insn >> 10) & 0x1f
        off = _sext((insn >> 15) & 0x7f, 7) * 8
        load = bool(insn & (1 << 22))
        mode = (insn >> 23) & 3                      # 1 post, 2 offset, 3 pre
        return _mem(load, (rt, rt2), rn, off, mode)
    # --- load/store pair, 64-bit D registers (opc=01, V=1) -------------------------------
    if top in (0x6c800000, 0x6d000000, 0x6d800000, 0x6cc00000, 0x6d400000, 0x6dc00000):
        rn = (insn >> 5) & 0x1f
        off = _sext((insn >> 15) & 0x7f, 7) * 8
        mode = (insn >> 23) & 3
        load = bool(insn & (1 << 22))
        return _mem(load, (), rn, off, mode)
    # --- load/store X register, unsigned offset -----------------------------------------
    if top in (0xf9000000, 0xf9400000):
        rt, rn = insn & 0x1f, (insn >> 5) & 0x1f
        return _mem(top == 0xf9400000, (rt,), rn, ((insn >> 10) & 0xfff) * 8, 2)
    # --- load/store X register, pre/post-index (imm9) -----------------------------------
    if insn & 0xffe00400 in (0xf8000400, 0xf8400400):
        rt, rn = insn & 0x1f, (insn >> 5) & 0x1f
        off = _sext((insn >> 12) & 0x1ff, 9)
        mode = 3 if insn & 0x800 else 1
        return _mem(bool(insn & (1 << 22)), (rt,), rn, off, mode)
    # --- branches, calls, exceptions (system instructions aside) -------------------------
    if insn & 0x1c000000 == 0x14000000:           # b, bl, b.cond, cbz, tbz, br, blr, svc ...
        if insn & 0xffc00000 == 0xd5000000:       # msr, mrs, barriers: no control flow
            return (WRITES_FP if insn & 0x1f == FP and insn & (1 << 21) else OTHER), None, None, None
        return BRANCH, None, None, None
    # --- anything else writing x29, x30 or sp --------------------------------------------
    rd = insn & 0x1f
    if _is_load(insn):
        rts = {rd, (insn >> 10) & 0x1f} if insn & 0x3a000000 == 0x28000000 else {rd}
        if FP in rts:
            return WRITES_FP, None, None, None
        if LR in rts:
            return WRITES_LR, None, None, None
        if (insn >> 5) & 0x1f == SP and _writeback(insn):
            return WRITES_SP, None, None, None
        return OTHER, None, None, None
    if _is_store(insn):
        if (insn >> 5) & 0x1f == SP and _writeback(insn):
            return WRITES_SP, None, None, None
        return OTHER, None, None, None
    if rd == FP and _data_processing(insn):
        return WRITES_FP, None, None, None
    if rd == LR and _data_processing(insn):
        return WRITES_LR, None, None, None
    if rd == SP and ((insn & 0x1f800000 == 0x12000000 and insn & 0x60000000 != 0x60000000)
                     or insn & 0x3f200000 == 0x0b200000):
        return WRITES_SP, None, None, None        # and/orr/eor sp, #imm; add/sub sp, .., extended reg
    return OTHER, None, None, None


def _mem(load, regs, rn, off, mode):
    if rn != SP:
        if load and (FP in regs or LR in regs):
            return (WRITES_FP if FP in regs else WRITES_LR), None, None, None
        return OTHER, None, None, None
    if mode == 3:
        return (LOAD if load else STORE), regs, 0, off          # pre-index: sp += off, then at sp
    if mode == 1:
        return (LOAD if load else STORE), regs, 0, ("post", off)
    return (LOAD if load else STORE), regs, off, 0


def _is_load(insn):
    # loads and stores: op0 bits 27 and 25 = x1x0; L (bit 22) for most forms
    return insn & 0x0a000000 == 0x08000000 and bool(insn & (1 << 22))


def _is_store(insn):
    return insn & 0x0a000000 == 0x08000000 and not insn & (1 << 22)


def _writeback(insn):
    # pair pre/post-index (bits 24:23 = 01 or 11), single imm9 pre/post (bits 11:10 = 01 or 11)
    if insn & 0x3a000000 == 0x28000000:
        return ((insn >> 23) & 3) in (1, 3)
    if insn & 0x3b200000 == 0x38000000:
        return ((insn >> 10) & 3) in (1, 3)
    return False


def _data_processing(insn):
    # data processing (immediate: op0 100x; register: x101)
    return insn & 0x1c000000 == 0x10000000 or insn & 0x0e000000 == 0x0a000000


# --- control flow from the raw word (scan.py: code without symbols) -------------------------

FALL, JUMP, COND, CALL, STOP, IJUMP = range(6)
_MASK = (1 << 64) - 1


def branch(insn, addr):
    """(flow, target) of one instruction: FALL, JUMP (b), COND (b.cond, cbz, tbz), CALL (bl,
    blr), STOP (ret, brk, udf), IJUMP (br); target None when indirect or not a branch."""
    top6 = insn & 0xfc000000
    if top6 == 0x14000000 or top6 == 0x94000000:
        imm = _sext(insn & 0x3ffffff, 26) * 4
        return (JUMP if top6 == 0x14000000 else CALL), (addr + imm) & _MASK
    if insn & 0xff000010 == 0x54000000:
        return COND, (addr + _sext((insn >> 5) & 0x7ffff, 19) * 4) & _MASK
    if insn & 0x7e000000 == 0x34000000:
        return COND, (addr + _sext((insn >> 5) & 0x7ffff, 19) * 4) & _MASK
    if insn & 0x7e000000 == 0x36000000:
        return COND, (addr + _sext((insn >> 5) & 0x3fff, 14) * 4) & _MASK
    if insn & 0xfe1ff000 == 0xd61f0000:
        opc = (insn >> 21) & 3
        if opc == 1:
            return CALL, None                    # blr, blraa(z), blrab(z)
        if opc == 0:
            return IJUMP, None                   # br, braa(z), brab(z)
        if opc == 2:
            return STOP, None                    # ret, retaa, retab
    if insn & 0xffe0001f == 0xd4200000 or insn & 0xffff0000 == 0 or insn & 0xffe0001f == 0xd4400000:
        return STOP, None                        # brk, udf, hlt
    return FALL, None


def is_padding(insn):
    """nop, or zero words (udf #0) the linker fills gaps with."""
    return insn == NOP or insn == 0
