"""The Power-64 stack frame as unwind rules: the back chain and the lr save slot.

Every Power-64 frame starts with the back chain, the caller's r1, and a function that
calls saves lr in its caller's frame at 16 (both ABIs): so in a function's body,
whatever it did to r1 since (alloca), CFA = *(r1) and the return address is at CFA + 16.
GCC's prologue (after ELFv2's global-entry ``addis r2,r12 / addi r2,r2``)::

    mflr r0;  std r0,16(r1);  [std rN,-d(r1) ...];  stdu r1,-N(r1);  [mr r31,r1]

A top frame may be stopped inside it (lr not yet saved, r1 not yet moved) or in the
epilogue (``ld r0,N+16(r1); mtlr r0; addi r1,r1,N; blr``, or ``ld r1,0(r1)``):
``epilogue_at`` reads the code from the pc to the ``blr`` and says where the frame is.
ELFv1 (elfv1/prologue.py) has no global entry: the same code in big-endian words.
"""
from ...rule import OFFSET, REGISTER, CfaRule, RegRule, UnwindRule
from . import ppc
from . import registers as R
from .ppc import LITTLE

#: Bytes to read at a function's entry to parse its prologue (16 instructions).
READ_SIZE = 64
#: Bytes FrameFuncStepper reads at a top frame's pc for ``epilogue_at`` (8 instructions).
EPILOGUE_READ = 32
#: CFA = *(r1): DW_OP_breg1 0; DW_OP_deref.
BACK_CHAIN = CfaRule(None, 0, bytes((0x70 + R.sp, 0x00, 0x06)))
LR_SAVE = 16
_SAVABLE = R.CALLEE_SAVED


def _rule(cfa, saved, ra_in=None):
    """``saved``: {regno: offset from the CFA}; the return address there if saved, else in
    register ``ra_in`` (None: still in lr)."""
    regs = {r: RegRule(OFFSET, off) for r, off in saved.items()}
    if R.lr not in saved and ra_in is not None:
        regs[R.lr] = RegRule(REGISTER, ra_in)
    return UnwindRule(None, cfa, regs, False, R.lr)


class Epilogue:
    """Where a frame stopped on its way out is."""
    __slots__ = ("rule",)

    def __init__(self, rule):
        self.rule = rule


class Prologue:
    """Where the standard frame is set up in one function."""
    __slots__ = ("start", "body_at", "size", "saved", "rows", "end", "body")

    def __init__(self, start, body_at, size, saved, rows):
        self.start, self.body_at, self.size = start, body_at, size
        self.saved = saved          # {regno: offset from the CFA} in the body
        self.rows = rows            # {address: UnwindRule} of the instructions parsed
        self.end = max(rows) + 4
        self.body = _rule(BACK_CHAIN, saved)

    def rule_at(self, pc, exact, at_ret=None):
        """The UnwindRule at ``pc``: ``exact`` for a frame stopped there, else pc is inside a
        call; ``at_ret``: ``epilogue_at``'s Epilogue."""
        if exact:
            if isinstance(at_ret, Epilogue):
                return at_ret.rule
            row = self.rows.get(pc)
            if row is not None:
                return row
        return self.body

    def __repr__(self):
        return f"<Prologue 0x{self.start:x} body 0x{self.body_at:x} frame {self.size} saved {self.saved}>"


def parse_prologue(code, start, order=LITTLE):
    """A Prologue if ``code`` (bytes at ``start``, words in byte order ``order``) allocates
    a frame with ``stdu r1`` after saving lr, else None (a leaf keeps no frame: its caller
    is in lr)."""
    h = 0                       # CFA - r1
    saved = {}
    lr_in_r0 = False
    rows = {}
    n = len(code) // 4
    for i in range(n):
        addr = start + 4 * i
        insn = ppc.word(code, 4 * i, order)
        rows[addr] = _rule(CfaRule(R.sp, h), saved, 0 if lr_in_r0 and R.lr not in saved else None)
        if i < 2 and ppc.is_toc_setup(insn):
            continue
        if insn == ppc.MFLR_R0:
            lr_in_r0 = True
            continue
        st = ppc.std_r1(insn)
        if st is not None:
            rs, d = st
            if rs == 0 and lr_in_r0 and d - h == LR_SAVE and R.lr not in saved:
                saved[R.lr] = LR_SAVE
            elif rs in _SAVABLE and rs not in saved:
                saved[rs] = d - h
            continue
        alloc = ppc.stdu_r1(insn)
        if alloc is not None:
            if h or alloc >= 0 or R.lr not in saved:
                return None
            h = -alloc
            rows[addr + 4] = _rule(BACK_CHAIN, saved)
            return Prologue(start, addr + 4, h, dict(saved), rows)
        if insn >> 26 in (16, 18, 19) or ppc.addi_r1(insn) is not None or ppc.ld_r1(insn) is not None:
            return None         # a branch, or r1 moved another way, before the frame exists
    return None


def is_return(code, order=LITTLE):
    return epilogue_at(code, None, None, order)


def epilogue_at(code, pc, bounds, order=LITTLE):
    """An Epilogue when the code at a pc runs straight to ``blr`` through restores and r1
    adjustments only, else None."""
    insns = ppc.words(code, order)
    adds = 0                    # how far r1 moves up before the blr
    chain = False               # r1 reloaded from the back chain ahead
    lr_from = None              # ("mem", offset from r1 now) or ("r0",) once mtlr r0 is ahead
    r0_load = None
    for insn in insns:
        if insn == ppc.BLR:
            break
        a = ppc.addi_r1(insn)
        if a is not None:
            if a <= 0 or chain:
                return None
            adds += a
            continue
        ld = ppc.ld_r1(insn)
        if ld is not None:
            rt, d = ld
            if rt == 1 and d == 0 and not adds and not chain:
                chain = True
            elif rt == 0 and r0_load is None and lr_from is None:
                if chain:
                    return None
                r0_load = adds + d
            elif rt == 1 or rt == 0:
                return None
            continue
        if insn == ppc.MTLR_R0:
            if lr_from is not None:
                return None
            lr_from = ("mem", r0_load) if r0_load is not None else ("r0",)
            continue
        if insn == ppc.MR_R1_R31 or insn >> 26 in (16, 18, 19):
            return None
        return None             # anything else: not a plain epilogue
    else:
        return None
    cfa = BACK_CHAIN if chain else CfaRule(R.sp, adds)
    if lr_from is None:
        return Epilogue(_rule(cfa, {}))
    if lr_from[0] == "r0":
        return Epilogue(_rule(cfa, {}, 0))
    if chain or lr_from[1] != adds + LR_SAVE:
        return None
    return Epilogue(_rule(cfa, {R.lr: LR_SAVE}))
