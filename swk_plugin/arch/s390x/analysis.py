"""Stack-height analysis of s390x code without CFI: zarch.py's decoder for arch/dataflow.py.

The engine follows control flow from the entry and runs the dataflow; this module says
what each instruction does in the engine's vocabulary of effects.  What s390x brings:

* the CFA is r15 + 160 at entry (the caller's register save area): the height starts at
  160, and a call leaves the return address in r14, tracked like a callee-saved register
  until stored;
* ``stmg %rA,%rB,d(%r15)`` saves several registers at once, in the caller's frame (above
  the CFA - 160); ``lay``/``la``/``aghi``/``agfi``/``slgfi`` on r15 move it (``agr``/``sgr``
  of a constant loaded just before, for a frame beyond 32 bits' reach);
* ``lmg ...,%r15,...`` restores what it loads, r15 back to the caller's (the CFA - 160), as
  ``lg %r15`` from r15's own slot does; any other load into a callee-saved register leaves
  its save where it is (``lg %r13,368(%r15)``: a stack argument; ``lmg %r6,%r7`` of
  temporaries);
* ``lgr %r11,%r15`` makes r11 a frame base, ``lgr %r15,%r11`` puts r15 back from it; a copy of
  the entry r15 in another register (``lgr %r12,%r15``) puts it back too;
* a leaf parks registers in floating-point ones (``ldgr %f2,%r11``; ``ldgr %f0,%r15`` at
  entry): the rule gives that register as holding the caller's value, and ``lgdr`` from it
  restores it (r15 back to the caller's);
* control flow: brasl/bras/basr linking r14 call, ``j``/``jg`` jump, ``br %r14`` returns,
  ``br %rN`` (another register) and ``b d(x,b)`` are tail calls or jump tables, an illegal
  instruction (the 0x00 opcodes) stops; a call whose fall-through brings another height
  than the other paths does not return (``brasl __libc_fatal`` before a retry loop's code).

The caller's r15 is the CFA - 160 wherever no slot holds it: each rule says so
(prologue.CALLER_SP), and where a leaf parked a register, that it is there.
"""
from .. import dataflow as D
from ..dataflow import MAX_CODE  # noqa: F401 (the kit's MAX_CODE)
from ..heights import AnalysisError, FunctionAnalysis, StackHeight  # noqa: F401 (re-exported)
from ...rule import REGISTER, RegRule, UnwindRule
from . import registers as R
from . import zarch as Z
from .prologue import CALLER_SP, constant, sp_delta

_FLOWS = {Z.CALL: D.CALL, Z.JUMP: D.JUMP, Z.COND: D.COND, Z.IJUMP: D.IJUMP, Z.STOP: D.STOP}
_TO_CALLERS_SP = ((D.SP_TO_CFA, None, None), (D.SP_ADD, -R.SAVE_AREA, None))
#: This decoder's own effects, beyond the engine's vocabulary (ZArch.transfer): (PARK, f, r)
#: ``ldgr %fN,%rM`` or ``lgr %rN,%r15``, (UNPARK, r, f) ``lgdr %rM,%fN`` or ``lgr %r15,%rN`` —
#: a restore only where the source holds the caller's value, else a write of anything;
#: (LOAD_SP, base, d) ``lg %r15,d(base)``: the caller's r15 where that is r15's slot.
PARK, UNPARK, LOAD_SP = 100, 101, 102


class ZArch(D.InstructionSet):
    """z/Architecture for the engine: r11 the frame pointer, r14 the link register, r6-r13
    and r15 callee-saved, a height of 160 at entry.  f8-f15 are preserved too, but saved
    through any base register (``std %f8,0(%r14)``, r14 a copy of the entry r15): their
    slots are left to the CFI rather than guessed from a spill."""

    def __init__(self):
        super().__init__(R, R.CALLEE_SAVED, ra_on_stack=False, align=2, noreturn_by_clash=True)
        self.entry = (R.SAVE_AREA, None, frozenset(), False, frozenset())
        self._rules = {}

    def transfer(self, state, effects):
        """The engine's transfer, with a leaf's FPR parking (PARK, UNPARK) decided on the state:
        a register parks its caller's value only while no slot holds it (r15: at the entry
        height; afterwards ``ldgr`` is a spill of a working value), and comes back as the caller's
        r15 (r11, r6-r13 as restored) only from the FPR holding it."""
        if effects[0][0] < PARK:
            return super().transfer(state, effects)
        op, a, b = effects[0]
        if op == LOAD_SP:
            h, fp, saved = state[0], state[1], state[2]
            off = None if (h if a == R.sp else fp) is None else b - (h if a == R.sp else fp)
            restored = off is not None and (R.sp, off) in saved
            return super().transfer(state, _TO_CALLERS_SP if restored else ((D.SP_UNKNOWN, None, None),))
        if op == PARK:
            if b == R.sp and state[0] != R.SAVE_AREA or any(r == b for r, _off in state[2]):
                return super().transfer(state, ((D.CLOBBER, a, None),))     # a spill, not a save
            return super().transfer(state, ((D.COPY, a, b),))
        parked = (b, a) in state[4]
        if a == R.sp:
            return super().transfer(state, _TO_CALLERS_SP if parked else ((D.SP_UNKNOWN, None, None),))
        if parked:
            return super().transfer(state, ((D.RESTORE, a, None),))
        return super().transfer(state, ((D.FP_UNKNOWN if a == R.fp else D.CLOBBER, a, None),))

    def height(self, state):
        """The engine's StackHeight, its rule saying where the caller's r15 is (a slot, else the
        CFA - 160) and which registers a leaf parked in FPRs."""
        got = self._rules.get(state, False)
        if got is not False:
            return got
        got = super().height(state)
        if got is not None:
            rule = got.rule
            regs = dict(rule.regs)
            for holder, tracked in state[4]:
                if tracked != R.sp:
                    regs.setdefault(tracked, RegRule(REGISTER, holder))
            regs.setdefault(R.sp, CALLER_SP)
            got = StackHeight(got.sp_offset, got.fp_offset, got.saved,
                              UnwindRule(None, rule.cfa, regs, False, rule.ra_reg))
        if len(self._rules) > 100_000:
            self._rules.clear()
        self._rules[state] = got
        return got

    def effects(self, ins, consts):
        """The engine's effects of one instruction (``consts``: registers holding a constant
        the instructions just before loaded)."""
        op, w = ins.op, ins.writes
        if op in (Z.STMG, Z.STG):
            if op == Z.STG and ins.x != 0 or ins.b not in (R.sp, R.fp):
                return ()
            kind = D.SAVE_SP if ins.b == R.sp else D.SAVE_FP
            n = ((ins.r2 - ins.r1) & 15) + 1 if op == Z.STMG else 1
            return tuple((kind, (ins.r1 + k) & 15, ins.d + 8 * k) for k in range(n))
        if op == Z.STD:
            return ()
        if op == Z.LD:
            return ((D.CLOBBER, R.F_DWARF[ins.r1], None),)
        if op == Z.LDGR:
            f = R.F_DWARF[ins.r1]
            return ((PARK, f, ins.r2),) if ins.r2 in self.savable else ((D.CLOBBER, f, None),)
        if not w:
            return ()
        if op == Z.LMG and ins.b in (R.sp, R.fp) and R.sp in w:
            return tuple((D.RESTORE, r, None) for r in w if r in self.savable and r != R.sp) + _TO_CALLERS_SP
        if op == Z.LGDR and ins.r1 in self.savable:
            return ((UNPARK, ins.r1, R.F_DWARF[ins.r2]),)
        if R.sp in w:
            if op == Z.LGR and ins.r2 == R.fp:
                return ((D.SP_FROM_FP, 0, None),)
            if op == Z.LGR:
                return ((UNPARK, R.sp, ins.r2),)
            if op == Z.LG and ins.x == 0 and ins.b in (R.sp, R.fp):
                return ((LOAD_SP, ins.b, ins.d),)
            if op in (Z.LAY, Z.LA) and ins.b == R.fp and ins.x == 0:
                return ((D.SP_FROM_FP, ins.d, None),)
            d = sp_delta(ins, consts)
            return ((D.SP_UNKNOWN, None, None),) if d is None else ((D.SP_ADD, d, None),) if d else ()
        if R.fp in w:
            if op == Z.LGR and ins.r2 == R.sp:
                return ((D.FP_FROM_SP, 0, None),)
            if op in (Z.LAY, Z.LA) and ins.b == R.sp and ins.x == 0:
                return ((D.FP_FROM_SP, ins.d, None),)
            return ((D.FP_UNKNOWN, None, None),)
        if op == Z.LGR and ins.r2 == R.sp:
            return ((PARK, ins.r1, R.sp),)
        if op == Z.LGR and ins.r2 in self.savable and ins.r2 != ins.r1:
            return ((D.COPY, ins.r1, ins.r2),)
        return tuple((D.CLOBBER, r, None) for r in w)

    def decode(self, data, addr, known=None):
        """The engine's (address, Insn) of the code ``data`` at ``addr``, linearly (those in
        ``known`` as they are)."""
        consts = {}
        for a, ins in Z.insns(data, addr):
            have = known.get(a) if known else None
            if have is not None:
                yield a, have
                consts = {}
                continue
            f, target = Z.flow(ins, a)
            raw = int.from_bytes(data[a - addr:a - addr + ins.size], "big")
            flow = _FLOWS.get(f, D.FALL)
            yield a, (ins.size, self.effects(ins, consts), flow, target, Z.is_padding(ins, raw))
            for r in ins.writes:
                consts.pop(r, None)
                c = constant(consts, ins)
                if c is not None:
                    consts[r] = c
            if flow != D.FALL:
                consts = {}


_ZARCH = ZArch()
ENTRY = _ZARCH.entry


def analyze(read, start, end=None, follow=None, noreturn=None, hi=None):
    """Analyse the function entered at ``start``; return its FunctionAnalysis (see
    arch/dataflow.InstructionSet.analyze for the arguments).  Raises AnalysisError."""
    return _ZARCH.analyze(read, start, end, follow, noreturn, hi)
