"""Stack-height analysis of Power-64 code without CFI: the Power decoder of arch/dataflow.py.

The engine follows control flow from the entry and runs the dataflow; this module says what
each instruction word does, in the engine's vocabulary of effects.  What Power brings:

* a call leaves the return address in lr: the height is 0 at entry, lr is tracked until
  stored, and GCC stores it through r0 (``mflr r0; std r0,16(r1)``: a COPY, then a save in
  the caller's frame, 16 above the CFA);
* ``stdu r1,-N(r1)`` allocates the frame and stores the back chain (sp += -N);
  ``addi r1,r1,N`` frees it; ``ld r1,0(r1)`` reloads sp from the back chain (the CFA);
  ``stdux r1,r1,rN`` (alloca) moves sp by a register: only r31, when ``mr r31,r1`` made it
  a frame base, still locates the CFA;
* ``std rN,d(r1)`` below the CFA saves a callee-saved register (before or after the
  ``stdu``); ``ld rN,d(r1)`` restores it; ``mtlr r0`` puts the return address back in lr, whose
  slot still holds it (GCC's CFI keeps saying so up to the ``blr``).

Instruction words are decoded here (every 4-aligned word is an instruction, in the code's
byte order: ``order``; ppc.py has the forms); control flow is ppc.branch's.
"""
from .. import dataflow as D
from ..dataflow import MAX_CODE  # noqa: F401 (re-exported)
from ..heights import NOT_REACHED, AnalysisError, FunctionAnalysis, StackHeight  # noqa: F401 (re-exported)
from . import ppc
from . import registers as R
from .ppc import LITTLE

#: X-form (primary opcode 31) stores: bits 21-25 are a source there, not a target.
_X_STORES = frozenset({149, 181, 151, 183, 215, 247, 407, 439, 150, 214, 662, 918, 660, 663, 695, 727, 759,
                       983, 231, 487, 135, 167, 199})
#: X/XO-form (opcode 31) integer instructions whose bits 21-25 name the general register written
#: (add, subf, neg, mul*, div*, mfcr, mfspr, the indexed integer loads...).
_X_WRITES = frozenset({266, 778, 40, 552, 8, 520, 10, 522, 138, 650, 136, 648, 202, 714, 234, 746, 200, 712, 232,
                       744, 104, 616, 235, 747, 233, 745, 75, 73, 11, 9, 489, 1001, 491, 1003, 457, 969, 459, 971,
                       19, 339, 371, 21, 53, 23, 55, 87, 119, 279, 311, 341, 373, 343, 375, 532, 534, 790, 20, 84})
#: D/DS-form opcodes whose bits 21-25 name the register written.
_D_WRITES = frozenset({7, 8, 12, 13, 14, 15, 32, 33, 34, 35, 40, 41, 42, 43, 46, 58})
#: D-form and M/MD-form opcodes whose bits 16-20 name the register written (logical ops, rotates).
_A_WRITES = frozenset({20, 21, 23, 24, 25, 26, 27, 28, 29, 30})
_FLOWS = {None: D.FALL, ppc.CALL: D.CALL, ppc.JUMP: D.JUMP, ppc.COND: D.COND, ppc.STOP: D.STOP}
_SP, _FP = R.sp, R.fp


def _write(reg):
    """The effect of writing ``reg`` with something the analysis does not follow."""
    if reg == _SP:
        return ((D.SP_UNKNOWN, None, None),)
    if reg == _FP:
        return ((D.FP_UNKNOWN, None, None), (D.CLOBBER, reg, None))
    return ((D.CLOBBER, reg, None),)


def effects(insn, savable):
    """The engine's effects of one instruction word."""
    if insn == ppc.NOP:                                     # ori r0,r0,0 writes nothing
        return ()
    op = insn >> 26
    rt, ra = (insn >> 21) & 31, (insn >> 16) & 31
    if op == 62:                                            # std / stdu (DS-form)
        d = ppc.std_r1(insn)
        if d is not None:
            return ((D.SAVE_SP, d[0], d[1]),)
        alloc = ppc.stdu_r1(insn)
        if alloc is not None:
            return ((D.SP_ADD, alloc, None),)
        if insn & 3 == 0 and ra == _FP:
            return ((D.SAVE_FP, rt, ppc.ds_offset(insn)),)
        if insn & 3 == 1 and ra == _SP:
            return ((D.SP_UNKNOWN, None, None),)
        return ()
    if op == 58:                                            # ld / ldu / lwa
        ld = ppc.ld_r1(insn)
        if ld is not None and ld[0] == _SP and ld[1] == 0:
            return ((D.SP_TO_CFA, None, None),)             # r1 = the back chain
        if ld is not None and ld[0] in savable:
            return ((D.RESTORE, ld[0], None),)
        if insn & 3 == 1 and ra == _SP:
            return ((D.SP_UNKNOWN, None, None),) + _write(rt)
        return _write(rt)
    if op == 14 and rt in (_SP, _FP):                       # addi
        k = ppc.simm16(insn)
        if ra == _SP:
            return ((D.SP_ADD, k, None),) if rt == _SP else ((D.FP_FROM_SP, k, None),)
        if ra == _FP and rt == _SP:
            return ((D.SP_FROM_FP, k, None),)               # addi r1,r31,N: the frame freed by fp
        return _write(rt)
    if op == 31:
        xo = (insn >> 1) & 0x3ff
        if xo == 444:                                       # or (mr ra,rs when rs == rb)
            rs, rb = rt, (insn >> 11) & 31
            if rs == rb and ra == _FP and rs == _SP:
                return ((D.FP_FROM_SP, 0, None),)
            if rs == rb and ra == _SP and rs == _FP:
                return ((D.SP_FROM_FP, 0, None),)
            return _write(ra)
        if xo == 339 and ((insn >> 11) & 0x3ff) == 0x100:   # mflr rt
            return ((D.COPY, rt, R.lr),)
        if xo == 467 and ((insn >> 11) & 0x3ff) == 0x100:   # mtlr rs: lr reloaded for the blr; its
            return ()                                       # slot still holds it (as GCC's CFI says)
        if xo == 181 and rt == _SP and ra == _SP:           # stdux r1,r1,rb: alloca
            return ((D.SP_UNKNOWN, None, None),)
        if xo in _X_STORES:
            return ()
        if xo in (28, 60, 124, 284, 316, 412, 476, 954, 922, 986, 26, 58, 24, 27, 536, 539, 792, 794, 824, 826):
            return _write(ra)                               # logical, shifts, extends: ra is written
        if xo in _X_WRITES or (insn >> 1) & 0x1f == 15:    # integer ops writing rt; isel
            return _write(rt) if rt in (_SP, _FP, 0) or rt in savable else ()
        return ()                                           # vector/FP loads and the rest: rt is not a GPR
    if op in _D_WRITES:
        return _write(rt) if rt in (_SP, _FP, 0) or rt in savable else ()
    if op in _A_WRITES:
        return _write(ra) if ra in (_SP, _FP, 0) or ra in savable else ()
    return ()


class Power(D.InstructionSet):
    """Power-64 for the engine: r1 the stack pointer, r31 the frame pointer when GCC keeps one,
    lr the return address, r14-r31 callee-saved; words in byte order ``order``."""

    def __init__(self, order=LITTLE):
        super().__init__(R, R.CALLEE_SAVED - {R.toc}, ra_on_stack=False, align=4, noreturn_by_clash=False)
        self.order = order
        self.by_word = {}

    def decode(self, data, addr, known):
        by_word = self.by_word
        if len(by_word) > 200_000:
            by_word.clear()
        savable, order = self.savable, self.order
        for i in range(0, len(data) // 4 * 4, 4):
            a = addr + i
            ins = known.get(a)
            if ins is None:
                w = ppc.word(data, i, order)
                eff = by_word.get(w)
                if eff is None:
                    eff = by_word[w] = effects(w, savable)
                flow, target = ppc.branch(w, a)
                if flow == ppc.STOP and w >> 26 == 19 and ((w >> 1) & 0x3ff) == 528:
                    flow = D.IJUMP                          # bctr: a jump table or a tail call
                else:
                    flow = _FLOWS[flow]
                ins = 4, eff, flow, target, ppc.is_padding(w)
            yield a, ins


#: One decoder per byte order (each keeps its words' effects).
_POWER = {order: Power(order) for order in (ppc.LITTLE, ppc.BIG)}
ENTRY = _POWER[LITTLE].entry


def analyze(read, start, end=None, follow=None, noreturn=None, hi=None, order=LITTLE):
    """Analyse the function entered at ``start``; return its FunctionAnalysis (see
    arch/dataflow.InstructionSet.analyze for the arguments).  Raises AnalysisError."""
    return _POWER[order].analyze(read, start, end, follow, noreturn, hi)
