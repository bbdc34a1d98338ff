"""The z/Architecture instructions swk decodes itself (z/Architecture Principles of Operation).

An instruction is 2, 4 or 6 bytes long, as the two top bits of its first byte say (00: 2,
01 and 10: 4, 11: 6), and big-endian.  What a walk needs of one: its length, how it moves
control (branches, calls, returns), whether it sets up or tears down a frame (``stmg``,
``lay``/``aghi``/``agfi`` on r15, ``lgr %r11,%r15``, ``lmg``, the FPRs a leaf parks r11 and
r15 in), and which general registers it writes (``writes``: from the opcode's family, so an
unknown way of changing r15 is seen as one).  Everything else is OTHER.
"""
from collections import namedtuple

# ops swk tells apart (CBR: a conditional branch other than brc/brcl — brct, brxh, compare and
# branch — its target relative where known)
(STMG, LMG, STG, LG, LAY, LA, AGHI, AGFI, SLGFI, ALGFI, LGR, AGR, SGR, LGDR, LDGR, STD, LD, LGHI, LGFI,
 BRASL, BRAS, BASR, BAS, BRC, BRCL, BCR, BC, CBR, SVC, LARL, ILLEGAL, OTHER) = (
    "stmg", "lmg", "stg", "lg", "lay", "la", "aghi", "agfi", "slgfi", "algfi", "lgr", "agr", "sgr", "lgdr", "ldgr",
    "std", "ld", "lghi", "lgfi", "brasl", "bras", "basr", "bas", "brc", "brcl", "bcr", "bc", "cbr", "svc", "larl",
    "illegal", "other")
RA, SP, FP = 14, 15, 11


class Insn(namedtuple("Insn", "size op r1 r2 x b d imm writes")):
    """One instruction: ``r1``/``r2`` its register fields (r2: R2 or R3, an FPR's number for
    ldgr/lgdr/std/ld), ``x``/``b``/``d`` an address's index, base and displacement, ``imm``
    an immediate or a relative branch's byte offset (or a branch's mask), ``writes`` the
    general registers it changes (a frozenset)."""
    __slots__ = ()


def length(code, i=0):
    """Bytes of the instruction at ``code[i:]`` (2, 4 or 6), None where it is cut short."""
    if len(code) < i + 2:
        return None
    n = (2, 4, 4, 6)[code[i] >> 6]
    return n if len(code) >= i + n else None


def _s(v, bits):
    return v - (1 << bits) if v & (1 << (bits - 1)) else v


_NONE = frozenset()
_ONE = [frozenset({r}) for r in range(16)]


def _pair(r):
    return frozenset({r, (r + 1) & 15})


def _range(r1, r3):
    """Registers r1 through r3, wrapping after r15 (lm/lmg/stmg)."""
    return frozenset((r1 + k) & 15 for k in range(((r3 - r1) & 15) + 1))


# General registers written, per opcode family (r1 unless said; P: r1 and r1+1).
_RR_W = {0x05, 0x06, 0x0B, 0x0C, 0x0D, *range(0x10, 0x15), 0x16, 0x17, 0x18, 0x1A, 0x1B, 0x1E, 0x1F}
_RR_P = {0x0E, 0x0F, 0x1C, 0x1D}
_RX_W = {0x41, 0x43, 0x45, 0x46, 0x48, 0x4A, 0x4B, 0x4C, 0x4D, 0x4F, 0x51, 0x54, 0x56, 0x57, 0x58, 0x5A, 0x5B,
         0x5E, 0x5F, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8A, 0x8B, 0xBF}
_RX_P = {0x5C, 0x5D, 0x8C, 0x8D, 0x8E, 0x8F, 0xA8, 0xA9}
_A7_W = {0x5, 0x6, 0x7, 0x8, 0x9, 0xA, 0xB, 0xC, 0xD}
_B2_W = {0x22, 0x4F, 0x52}
_B2_P = {0x55, 0x5D, 0x5E}
_B3_GPR = {0x8C, 0x98, 0x99, 0x9A, 0x9C, 0x9D, 0x9E, 0xA8, 0xA9, 0xAA, 0xAC, 0xAD, 0xAE, 0xB8, 0xB9, 0xBA,
           0xC8, 0xC9, 0xCA, 0xCD, 0xE1, 0xE2, 0xE3, 0xE5, 0xE7, 0xE9, 0xEA, 0xEB, 0xED, 0xEF}
_B9_NONE = {0x20, 0x21, 0x30, 0x31, 0x60, 0x61, 0x72, 0x73, 0xCD, 0xCF, 0xDD, 0xDF}
_B9_P = {0x0D, 0x1D, 0x83, 0x86, 0x87, 0x96, 0x97}
_C2_W = {0x0, 0x1, 0x4, 0x5, 0x8, 0x9, 0xA, 0xB}
_C4_W = {0x2, 0x4, 0x5, 0x6, 0x8, 0xC, 0xD, 0xE}
_E3_NONE = {0x20, 0x21, 0x24, 0x25, 0x2F, 0x30, 0x31, 0x34, 0x36, 0x3E, 0x3F, 0x50, 0x55, 0x59, 0x70, 0x72, 0x79,
            0x8E, 0xC3, 0xC7, 0xCB, 0xCD, 0xCF}
_E3_P = {0x0D, 0x1D, 0x86, 0x87, 0x8F, 0x96, 0x97}
_EB_W = {0x0A, 0x0B, 0x0C, 0x0D, 0x14, 0x1C, 0x1D, 0x30, 0x80, 0x81, 0xDC, 0xDD, 0xDE, 0xDF, 0xE2, 0xF2,
         0xE4, 0xE6, 0xE7, 0xE8, 0xEA, 0xF4, 0xF6, 0xF7, 0xF8, 0xFA}
_EB_P = {0x31, 0x3E}
_EB_RANGE = {0x04, 0x96, 0x98}
_EC_W = {0x42, 0x44, 0x45, 0x46, 0x4E, 0x51, 0x54, 0x55, 0x56, 0x57, 0x59, 0x5D, 0xD8, 0xD9, 0xDA, 0xDB}
#: Compare and branch relative (RIE-b, RIE-c): the target at bytes 2-3.
_EC_BRANCH = {0x76, 0x64, 0x77, 0x65, 0x7E, 0x7C, 0x7F, 0x7D}
#: ... and to an address (RRS, RIS): a conditional branch nowhere known.
_EC_BRANCH_ADDR = {0xF6, 0xE4, 0xF7, 0xE5, 0xFE, 0xFC, 0xFF, 0xFD}


def decode(code, i=0):
    """The Insn at ``code[i:]``, or None where no whole instruction is there."""
    n = length(code, i)
    if n is None:
        return None
    b0, b1 = code[i], code[i + 1]
    r1, r2 = b1 >> 4, b1 & 15
    if n == 2:
        return _rr(b0, r1, r2)
    b2, b3 = code[i + 2], code[i + 3]
    if n == 4:
        return _four(b0, b1, b2, b3, r1, r2)
    return _six(b0, b1, b2, b3, code[i + 4], code[i + 5], r1, r2)


def _rr(op, r1, r2):
    if op == 0:
        return Insn(2, ILLEGAL, None, None, None, None, 0, None, _NONE)
    if op == 0x07:
        return Insn(2, BCR, r1, r2, None, None, 0, r1, _NONE)
    if op in (0x05, 0x0D):                              # balr, basr
        return Insn(2, BASR, r1, r2, None, None, 0, None, _ONE[r1])
    if op == 0x0A:
        return Insn(2, SVC, None, None, None, None, 0, r1 << 4 | r2, _NONE)
    if op in _RR_W:
        return Insn(2, OTHER, r1, r2, None, None, 0, None, _ONE[r1])
    if op in _RR_P:
        return Insn(2, OTHER, r1, r2, None, None, 0, None, _pair(r1) | _pair(r2) if op < 0x10 else _pair(r1))
    return Insn(2, OTHER, None, None, None, None, 0, None, _NONE)


def _four(b0, b1, b2, b3, r1, r2):
    x, b, d12 = r2, b2 >> 4, (b2 & 15) << 8 | b3
    if b0 == 0xA7:
        imm = _s(b2 << 8 | b3, 16)
        if r2 == 0xB:
            return Insn(4, AGHI, r1, None, None, None, 0, imm, _ONE[r1])
        if r2 == 0x9:
            return Insn(4, LGHI, r1, None, None, None, 0, imm, _ONE[r1])
        if r2 == 0x4:
            return Insn(4, BRC, r1, None, None, None, 0, 2 * imm, _NONE)
        if r2 == 0x5:
            return Insn(4, BRAS, r1, None, None, None, 0, 2 * imm, _ONE[r1])
        if r2 in (0x6, 0x7):                            # brct, brctg
            return Insn(4, CBR, r1, None, None, None, 0, 2 * imm, _ONE[r1])
        return Insn(4, OTHER, r1, None, None, None, 0, imm, _ONE[r1] if r2 in _A7_W else _NONE)
    if b0 == 0x41:
        return Insn(4, LA, r1, None, x, b, d12, None, _ONE[r1])
    if b0 == 0x47:
        return Insn(4, BC, r1, None, x, b, d12, r1, _NONE)
    if b0 == 0x4D:
        return Insn(4, BAS, r1, None, x, b, d12, None, _ONE[r1])
    if b0 in (0x60, 0x68):                              # std, ld: r1 an FPR
        return Insn(4, STD if b0 == 0x60 else LD, r1, None, x, b, d12, None, _NONE)
    if b0 in (0x84, 0x85):                              # brxh, brxle
        return Insn(4, CBR, r1, r2, None, None, 0, 2 * _s(b2 << 8 | b3, 16), _ONE[r1])
    if b0 == 0x98:                                      # lm
        return Insn(4, OTHER, r1, r2, None, b, d12, None, _range(r1, r2))
    if b0 in (0xB2, 0xB3, 0xB9):
        op2, r1, r2 = b1, b3 >> 4, b3 & 15
        if b0 == 0xB9:
            if op2 == 0x04:
                return Insn(4, LGR, r1, r2, None, None, 0, None, _ONE[r1])
            if op2 in (0x08, 0x0A):
                return Insn(4, AGR, r1, r2, None, None, 0, None, _ONE[r1])
            if op2 in (0x09, 0x0B):
                return Insn(4, SGR, r1, r2, None, None, 0, None, _ONE[r1])
            if op2 in _B9_NONE:
                return Insn(4, OTHER, None, None, None, None, 0, None, _NONE)
            return Insn(4, OTHER, r1, r2, None, None, 0, None, _pair(r1) if op2 in _B9_P else _ONE[r1])
        if b0 == 0xB3:
            if op2 == 0xCD:
                return Insn(4, LGDR, r1, r2, None, None, 0, None, _ONE[r1])
            if op2 == 0xC1:
                return Insn(4, LDGR, r1, r2, None, None, 0, None, _NONE)
            return Insn(4, OTHER, r1, r2, None, None, 0, None, _ONE[r1] if op2 in _B3_GPR else _NONE)
        if op2 in _B2_W:
            return Insn(4, OTHER, r1, r2, None, None, 0, None, _ONE[r1])
        if op2 in _B2_P:
            return Insn(4, OTHER, r1, r2, None, None, 0, None, _ONE[r1] | _ONE[r2])
        return Insn(4, OTHER, None, None, None, None, 0, None, _NONE)
    if b0 == 0xA5:
        return Insn(4, OTHER, r1, None, None, None, 0, None, _ONE[r1])
    if b0 in _RX_W:
        return Insn(4, OTHER, r1, None, x, b, d12, None, _ONE[r1])
    if b0 in _RX_P:
        return Insn(4, OTHER, r1, None, x, b, d12, None, _pair(r1) | (_pair(r2) if b0 >= 0xA8 else _NONE))
    return Insn(4, OTHER, None, None, None, None, 0, None, _NONE)


def _six(b0, b1, b2, b3, b4, b5, r1, r2):
    if b0 in (0xC0, 0xC2, 0xC4, 0xC6, 0xC8, 0xCC):     # RIL: a 32-bit immediate
        op2, imm = r2, _s(b2 << 24 | b3 << 16 | b4 << 8 | b5, 32)
        if b0 == 0xC0:
            if op2 == 0x5:
                return Insn(6, BRASL, r1, None, None, None, 0, 2 * imm, _ONE[r1])
            if op2 == 0x4:
                return Insn(6, BRCL, r1, None, None, None, 0, 2 * imm, _NONE)
            if op2 == 0x0:
                return Insn(6, LARL, r1, None, None, None, 0, 2 * imm, _ONE[r1])
            if op2 == 0x1:
                return Insn(6, LGFI, r1, None, None, None, 0, imm, _ONE[r1])
            return Insn(6, OTHER, r1, None, None, None, 0, imm, _ONE[r1])
        if b0 == 0xC2:
            if op2 == 0x8:
                return Insn(6, AGFI, r1, None, None, None, 0, imm, _ONE[r1])
            if op2 in (0x4, 0xA):                       # slgfi, algfi: unsigned
                return Insn(6, SLGFI if op2 == 0x4 else ALGFI, r1, None, None, None, 0, imm & 0xffffffff, _ONE[r1])
            return Insn(6, OTHER, r1, None, None, None, 0, imm, _ONE[r1] if op2 in _C2_W else _NONE)
        if b0 == 0xC4:
            return Insn(6, OTHER, r1, None, None, None, 0, 2 * imm, _ONE[r1] if op2 in _C4_W else _NONE)
        if b0 == 0xCC and op2 == 0x6:                   # brcth
            return Insn(6, CBR, r1, None, None, None, 0, 2 * imm, _NONE)
        return Insn(6, OTHER, r1, None, None, None, 0, imm, _ONE[r1] if b0 == 0xCC and op2 in (0x8, 0xA, 0xB)
                    else _NONE)
    x, b = r2, b2 >> 4
    d20 = _s(b4 << 12 | (b2 & 15) << 8 | b3, 20)
    if b0 == 0xE3:
        if b5 == 0x24:
            return Insn(6, STG, r1, None, x, b, d20, None, _NONE)
        if b5 == 0x04:
            return Insn(6, LG, r1, None, x, b, d20, None, _ONE[r1])
        if b5 == 0x71:
            return Insn(6, LAY, r1, None, x, b, d20, None, _ONE[r1])
        if b5 in _E3_NONE:
            return Insn(6, OTHER, None, None, x, b, d20, None, _NONE)
        return Insn(6, OTHER, r1, None, x, b, d20, None, _pair(r1) if b5 in _E3_P else _ONE[r1])
    if b0 == 0xEB:
        r3 = r2
        if b5 == 0x24:
            return Insn(6, STMG, r1, r3, None, b, d20, None, _NONE)
        if b5 == 0x04:
            return Insn(6, LMG, r1, r3, None, b, d20, None, _range(r1, r3))
        if b5 in _EB_RANGE:
            return Insn(6, OTHER, r1, r3, None, b, d20, None, _range(r1, r3))
        if b5 in _EB_W or b5 in _EB_P:
            return Insn(6, OTHER, r1, r3, None, b, d20, None, _pair(r1) if b5 in _EB_P else _ONE[r1])
        return Insn(6, OTHER, None, None, None, b, d20, None, _NONE)
    if b0 == 0xEC:
        rel = 2 * _s(b2 << 8 | b3, 16)
        if b5 in _EC_BRANCH:
            return Insn(6, CBR, None, None, None, None, 0, rel, _NONE)
        if b5 in (0x44, 0x45):                          # brxhg, brxlg
            return Insn(6, CBR, r1, r2, None, None, 0, rel, _ONE[r1])
        if b5 in _EC_BRANCH_ADDR:
            return Insn(6, CBR, None, None, None, None, 0, None, _NONE)
        return Insn(6, OTHER, r1, r2, None, None, 0, None, _ONE[r1] if b5 in _EC_W else _NONE)
    if b0 == 0xED and b5 in (0x65, 0x67):               # ldy, stdy: r1 an FPR
        return Insn(6, LD if b5 == 0x65 else STD, r1, None, x, b, d20, None, _NONE)
    if b0 == 0xE7 and b5 == 0x21:                       # vlgv: a vector element into a GPR
        return Insn(6, OTHER, r1, None, None, None, 0, None, _ONE[r1])
    return Insn(6, OTHER, None, None, None, None, 0, None, _NONE)


def insns(code, start=0, offset=0):
    """(address, Insn) of the instructions in ``code`` from ``offset``, decoded linearly up to
    the first bytes that are not a whole instruction."""
    i = offset
    while True:
        ins = decode(code, i)
        if ins is None:
            return
        yield start + i, ins
        i += ins.size


# --- control flow -------------------------------------------------------------------------------
#: How an instruction moves control: CALL (brasl/bras linking r14; basr/bas linking any register:
#: it comes back), JUMP (also bras/brasl linking another register: a jump over a literal pool),
#: COND (a conditional branch, its target known or not), IJUMP (to a register or an address in
#: memory: a tail call, a jump table), STOP (``br %r14``, an illegal instruction), or None.
CALL, JUMP, COND, IJUMP, STOP = "call", "jump", "cond", "ijump", "stop"
_MASK = (1 << 64) - 1


def is_call(ins):
    """A branch that links r14: brasl, bras, basr (bas, balr) %r14 — basr with r2 = 0 does
    not branch (it only reads the pc)."""
    if ins.r1 != RA:
        return False
    if ins.op in (BRASL, BRAS, BAS):
        return True
    return ins.op == BASR and ins.r2 != 0


def is_return(ins):
    return ins.op == BCR and ins.imm == 15 and ins.r2 == RA


def flow(ins, addr):
    """(flow, target or None) of ``ins`` at ``addr``."""
    op = ins.op
    if op in (BRC, BRCL):
        mask = ins.r1
        if mask == 0:
            return None, None
        return (JUMP if mask == 15 else COND), (addr + ins.imm) & _MASK
    if op == CBR:
        return COND, ((addr + ins.imm) & _MASK) if ins.imm is not None else None
    if op in (BRASL, BRAS):
        target = (addr + ins.imm) & _MASK
        return (CALL if ins.r1 == RA else JUMP), target
    if op in (BASR, BAS):
        if op == BASR and ins.r2 == 0:
            return None, None
        return CALL, None
    if op == BCR:
        if ins.imm == 0 or ins.r2 == 0:
            return None, None
        if ins.imm != 15:
            return COND, None
        return (STOP if ins.r2 == RA else IJUMP), None
    if op == BC:
        if ins.imm == 0:
            return None, None
        return (IJUMP if ins.imm == 15 else COND), None
    if op == ILLEGAL:
        return STOP, None
    return None, None


def is_padding(ins, raw):
    """What GCC and the linker put between functions: ``nopr`` (bcr 0,%r7), ``nop`` (bc 0,0),
    zero halfwords."""
    return raw in (0x0707, 0x47000000, 0) or (ins.op in (BCR, BC) and ins.imm == 0)
