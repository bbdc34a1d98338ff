"""The RISC-V instructions swk decodes itself: RV64GC's base (RV64I, the loads and stores of
F/D) and its compressed forms (C), each expanded to the base instruction it stands for
(the ISA manual's "RVC Instruction Set Listings"), so every kit reads one vocabulary.

An instruction is 2 bytes when its low two bits are not 11, else 4 (RV64GC has no longer
ones: a 48-bit or longer encoding is not decoded).  Words are little-endian.  RV64C has
no ``c.jal`` (RV32C's encoding is ``c.addiw`` here): its only 2-byte call is ``c.jalr``.
"""
from collections import namedtuple

# ops of the expanded instruction
ADDI, ADD, SUB, LUI, AUIPC, LD, SD, FLD, FSD, LOAD, STORE, JAL, JALR, BRANCH, ECALL, EBREAK, OTHER = (
    "addi", "add", "sub", "lui", "auipc", "ld", "sd", "fld", "fsd", "load", "store", "jal", "jalr", "branch",
    "ecall", "ebreak", "other")
ZERO, RA, SP, T0, S0 = 0, 1, 2, 5, 8
NOP = 0x00000013                # addi zero,zero,0
C_NOP = 0x0001
RET = 0x00008067                # jalr zero,0(ra)
C_RET = 0x8082                  # c.jr ra


class Insn(namedtuple("Insn", "size op rd rs1 rs2 imm")):
    """One instruction as its base form: ``rd`` the integer register it writes (None: none;
    an f register's number for fld), ``rs1``/``rs2`` its sources (rs2: the register a store
    stores, an f register for fsd), ``imm`` its immediate (a branch's or jump's offset)."""
    __slots__ = ()

    @property
    def writes(self):
        """The integer register it writes, or None (x0 is never written)."""
        return self.rd if self.rd and self.op != FLD else None


def length(code, i=0):
    """Bytes of the instruction at ``code[i:]``: 2, 4, or None (too short, or longer than 4)."""
    if len(code) < i + 2:
        return None
    lo = code[i]
    if lo & 3 != 3:
        return 2
    if lo & 0x1c == 0x1c or len(code) < i + 4:
        return None
    return 4


def _sext(v, bits):
    return v - (1 << bits) if v & (1 << (bits - 1)) else v


def _bits(v, hi, lo):
    return (v >> lo) & ((1 << (hi - lo + 1)) - 1)


def decode(code, i=0):
    """The Insn at ``code[i:]``, or None where no whole instruction is there."""
    n = length(code, i)
    if n == 2:
        return _compressed(code[i] | code[i + 1] << 8)
    if n == 4:
        return _base(int.from_bytes(code[i:i + 4], "little"))
    return None


def _base(w):
    opc, rd, f3, rs1, rs2 = w & 0x7f, _bits(w, 11, 7), _bits(w, 14, 12), _bits(w, 19, 15), _bits(w, 24, 20)
    imm_i = _sext(w >> 20, 12)
    if opc == 0x13:                                     # OP-IMM
        return Insn(4, ADDI if f3 == 0 else OTHER, rd, rs1, None, imm_i)
    if opc == 0x33:                                     # OP
        f7 = w >> 25
        op = ADD if (f7, f3) == (0, 0) else SUB if (f7, f3) == (0x20, 0) else OTHER
        return Insn(4, op, rd, rs1, rs2, 0)
    if opc == 0x37:
        return Insn(4, LUI, rd, None, None, _sext(w & 0xfffff000, 32))
    if opc == 0x17:
        return Insn(4, AUIPC, rd, None, None, _sext(w & 0xfffff000, 32))
    if opc == 0x03:                                     # LOAD
        return Insn(4, LD if f3 == 3 else LOAD, rd, rs1, None, imm_i)
    if opc == 0x07 and f3 == 3:                         # LOAD-FP: fld
        return Insn(4, FLD, rd, rs1, None, imm_i)
    if opc in (0x23, 0x27):                             # STORE, STORE-FP
        imm_s = _sext(_bits(w, 31, 25) << 5 | rd, 12)
        op = (SD if opc == 0x23 else FSD) if f3 == 3 else STORE
        return Insn(4, op, None, rs1, rs2, imm_s)
    if opc == 0x6f:                                     # JAL
        imm = _bits(w, 31, 31) << 20 | _bits(w, 19, 12) << 12 | _bits(w, 20, 20) << 11 | _bits(w, 30, 21) << 1
        return Insn(4, JAL, rd, None, None, _sext(imm, 21))
    if opc == 0x67 and f3 == 0:                         # JALR
        return Insn(4, JALR, rd, rs1, None, imm_i)
    if opc == 0x63:                                     # BRANCH
        imm = _bits(w, 31, 31) << 12 | _bits(w, 7, 7) << 11 | _bits(w, 30, 25) << 5 | _bits(w, 11, 8) << 1
        return Insn(4, BRANCH, None, rs1, rs2, _sext(imm, 13))
    if w == 0x00000073:
        return Insn(4, ECALL, None, None, None, 0)
    if w == 0x00100073:
        return Insn(4, EBREAK, None, None, None, 0)
    if opc in (0x1b, 0x3b, 0x2f) or (opc == 0x73 and f3):   # OP-IMM-32, OP-32, AMO, CSR: write rd
        return Insn(4, OTHER, rd, None, None, 0)
    return Insn(4, OTHER, None, None, None, 0)          # FP arithmetic, fences, other stores


def _compressed(h):
    q, f3 = h & 3, h >> 13
    rd = _bits(h, 11, 7)
    rs2 = _bits(h, 6, 2)
    rdp, rs2p = 8 + _bits(h, 4, 2), 8 + _bits(h, 4, 2)
    rs1p = 8 + _bits(h, 9, 7)
    if q == 0:
        if f3 == 0:                                     # c.addi4spn rd', sp, nzuimm
            if h == 0:
                return Insn(2, OTHER, None, None, None, 0)          # the defined illegal instruction
            imm = _bits(h, 12, 11) << 4 | _bits(h, 10, 7) << 6 | _bits(h, 6, 6) << 2 | _bits(h, 5, 5) << 3
            return Insn(2, ADDI, rdp, SP, None, imm)
        uimm_d = _bits(h, 12, 10) << 3 | _bits(h, 6, 5) << 6
        if f3 == 1:
            return Insn(2, FLD, rdp, rs1p, None, uimm_d)
        if f3 == 3:
            return Insn(2, LD, rdp, rs1p, None, uimm_d)
        if f3 == 2:
            return Insn(2, LOAD, rdp, rs1p, None, 0)
        if f3 == 5:
            return Insn(2, FSD, None, rs1p, rs2p, uimm_d)
        if f3 == 7:
            return Insn(2, SD, None, rs1p, rs2p, uimm_d)
        return Insn(2, STORE, None, rs1p, rs2p, 0)
    if q == 1:
        imm6 = _sext(_bits(h, 12, 12) << 5 | rs2, 6)
        if f3 == 0:                                     # c.addi (c.nop)
            return Insn(2, ADDI, rd, rd, None, imm6)
        if f3 == 1:                                     # c.addiw
            return Insn(2, OTHER, rd, None, None, 0)
        if f3 == 2:                                     # c.li
            return Insn(2, ADDI, rd, ZERO, None, imm6)
        if f3 == 3:
            if rd == SP:                                # c.addi16sp
                imm = _bits(h, 12, 12) << 9 | _bits(h, 6, 6) << 4 | _bits(h, 5, 5) << 6 | \
                    _bits(h, 4, 3) << 7 | _bits(h, 2, 2) << 5
                return Insn(2, ADDI, SP, SP, None, _sext(imm, 10))
            return Insn(2, LUI, rd, None, None, imm6 << 12)
        if f3 == 4:                                     # c.srli .. c.and, c.subw, c.addw: rd'
            if _bits(h, 11, 10) == 3 and not _bits(h, 12, 12) and _bits(h, 6, 5) == 0:
                return Insn(2, SUB, rs1p, rs1p, rs2p, 0)
            return Insn(2, OTHER, rs1p, None, None, 0)
        if f3 == 5:                                     # c.j
            imm = _bits(h, 12, 12) << 11 | _bits(h, 11, 11) << 4 | _bits(h, 10, 9) << 8 | \
                _bits(h, 8, 8) << 10 | _bits(h, 7, 7) << 6 | _bits(h, 6, 6) << 7 | \
                _bits(h, 5, 3) << 1 | _bits(h, 2, 2) << 5
            return Insn(2, JAL, ZERO, None, None, _sext(imm, 12))
        imm = _bits(h, 12, 12) << 8 | _bits(h, 11, 10) << 3 | _bits(h, 6, 5) << 6 | \
            _bits(h, 4, 3) << 1 | _bits(h, 2, 2) << 5                       # c.beqz / c.bnez
        return Insn(2, BRANCH, None, rs1p, ZERO, _sext(imm, 9))
    if q == 2:
        if f3 == 0:                                     # c.slli
            return Insn(2, OTHER, rd, None, None, 0)
        uimm_ld = _bits(h, 12, 12) << 5 | _bits(h, 6, 5) << 3 | _bits(h, 4, 2) << 6
        if f3 == 1:
            return Insn(2, FLD, rd, SP, None, uimm_ld)
        if f3 == 3:
            return Insn(2, LD, rd, SP, None, uimm_ld)
        if f3 == 2:
            return Insn(2, LOAD, rd, SP, None, 0)
        if f3 == 4:
            if not _bits(h, 12, 12):
                if rs2 == 0:                            # c.jr
                    return Insn(2, JALR, ZERO, rd, None, 0)
                return Insn(2, ADD, rd, ZERO, rs2, 0)   # c.mv
            if rd == 0 and rs2 == 0:
                return Insn(2, EBREAK, None, None, None, 0)
            if rs2 == 0:                                # c.jalr
                return Insn(2, JALR, RA, rd, None, 0)
            return Insn(2, ADD, rd, rd, rs2, 0)         # c.add
        uimm_sd = _bits(h, 12, 10) << 3 | _bits(h, 9, 7) << 6
        if f3 == 5:
            return Insn(2, FSD, None, SP, rs2, uimm_sd)
        if f3 == 7:
            return Insn(2, SD, None, SP, rs2, uimm_sd)
        return Insn(2, STORE, None, SP, rs2, 0)
    return None


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
#: How an instruction moves control: CALL (jal/jalr linking ra), JUMP (j), COND (branches),
#: IJUMP (jr to anything but ra: a tail call or jump table), STOP (ret, ebreak), or None.
CALL, JUMP, COND, IJUMP, STOP = "call", "jump", "cond", "ijump", "stop"
_MASK = (1 << 64) - 1


def is_call(ins):
    """jal/jalr whose link register is ra (``jal t0`` is the alternate link register's
    millicode call: its return address never reaches the stack)."""
    return ins.op in (JAL, JALR) and ins.rd == RA


def is_return(ins):
    return ins.op == JALR and ins.rd == ZERO and ins.rs1 == RA and ins.imm == 0


def flow(ins, addr):
    """(flow, target or None) of ``ins`` at ``addr``."""
    if ins.op == JAL:
        target = (addr + ins.imm) & _MASK
        return (CALL if ins.rd == RA else JUMP if ins.rd == ZERO else CALL), target
    if ins.op == JALR:
        if ins.rd == ZERO:
            return (STOP if ins.rs1 == RA and ins.imm == 0 else IJUMP), None
        return CALL, None
    if ins.op == BRANCH:
        return COND, (addr + ins.imm) & _MASK
    if ins.op == EBREAK:
        return STOP, None
    return None, None


def is_padding(ins, raw):
    """nop / c.nop / zero halfwords between functions."""
    return raw in (NOP, C_NOP, 0)
