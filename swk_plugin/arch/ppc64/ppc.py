"""The few Power instruction words swk decodes itself (frame set-up and tear-down), from
the Power ISA's D-, DS-, X- and XFX-forms.

An instruction is one 32-bit word in the program's byte order: little-endian under ELFv2
(ppc64le), big-endian under ELFv1 (ppc64).  Every kit reading code takes that ``order``
(LITTLE by default; arch/ppc64/elfv1/ passes BIG) and reads words through ``word``: the
decoders below see the same word either way."""

LITTLE, BIG = "little", "big"

MFLR_R0 = 0x7c0802a6
MTLR_R0 = 0x7c0803a6
BLR = 0x4e800020
MR_R31_R1 = 0x7c3f0b78          # or r31,r1,r1
MR_R1_R31 = 0x7fe1fb78          # or r1,r31,r31


def word(code, i=0, order=LITTLE):
    """The instruction word at ``code[i:i+4]``."""
    return int.from_bytes(code[i:i + 4], order)


def words(code, order=LITTLE):
    """Every whole instruction word of ``code``, in order."""
    return [int.from_bytes(code[i:i + 4], order) for i in range(0, len(code) // 4 * 4, 4)]


def encode(insns, order=LITTLE):
    """The bytes of the instruction words ``insns`` (a pattern to match code against)."""
    return b"".join(w.to_bytes(4, order) for w in insns)


def simm16(insn):
    v = insn & 0xffff
    return v - 0x10000 if v & 0x8000 else v


def ds_offset(insn):
    v = insn & 0xfffc
    return v - 0x10000 if v & 0x8000 else v


def std_r1(insn):
    """(rs, displacement) of ``std rs,d(r1)``, else None."""
    if insn >> 26 == 62 and insn & 3 == 0 and (insn >> 16) & 31 == 1:
        return (insn >> 21) & 31, ds_offset(insn)
    return None


def stdu_r1(insn):
    """The displacement of ``stdu r1,d(r1)`` (the frame's allocation, negative), else None."""
    if insn >> 26 == 62 and insn & 3 == 1 and (insn >> 16) & 31 == 1 and (insn >> 21) & 31 == 1:
        return ds_offset(insn)
    return None


def ld_r1(insn):
    """(rt, displacement) of ``ld rt,d(r1)``, else None."""
    if insn >> 26 == 58 and insn & 3 == 0 and (insn >> 16) & 31 == 1:
        return (insn >> 21) & 31, ds_offset(insn)
    return None


def addi_r1(insn):
    """N of ``addi r1,r1,N``, else None."""
    if insn >> 26 == 14 and (insn >> 21) & 31 == 1 and (insn >> 16) & 31 == 1:
        return simm16(insn)
    return None


def is_toc_setup(insn):
    """ELFv2's global entry point: ``addis r2,r12,hi`` / ``addi r2,r2,lo``."""
    return insn & 0xffff0000 in (0x3c4c0000, 0x38420000)


NOP = 0x60000000
#: How a word moves control: CALL (bl, bctrl, blrl), JUMP (b), COND (bc), STOP (blr, bctr,
#: trap), or None (falls through).
CALL, JUMP, COND, STOP = "call", "jump", "cond", "stop"


def branch(insn, addr):
    """(flow, target or None) of the word ``insn`` at ``addr``."""
    op = insn >> 26
    if op == 18:                                    # I-form: b / bl (AA=0 only)
        if insn & 2:
            return STOP, None
        imm = insn & 0x03fffffc
        if imm & 0x02000000:
            imm -= 0x04000000
        return (CALL if insn & 1 else JUMP), (addr + imm) & ((1 << 64) - 1)
    if op == 16:                                    # B-form: bc
        imm = insn & 0xfffc
        if imm & 0x8000:
            imm -= 0x10000
        return (CALL if insn & 1 else COND), (addr + imm) & ((1 << 64) - 1)
    if op == 19:                                    # XL-form: bclr, bcctr
        xo = (insn >> 1) & 0x3ff
        if xo in (16, 528):
            if insn & 1:
                return CALL, None
            bo = (insn >> 21) & 31
            return (STOP if bo & 0x14 == 0x14 else COND), None
    if insn == 0x7fe00008:                          # trap
        return STOP, None
    return None, None


def is_padding(insn):
    return insn in (NOP, 0)
