"""Stack-height analysis of RISC-V code without CFI: rv.py's decoder for arch/dataflow.py.

The engine follows control flow from the entry and runs the dataflow; this module says
what each instruction does in the engine's vocabulary of effects.  What RISC-V brings:

* a call leaves the return address in ra: the height is 0 at entry and ra is tracked
  like a callee-saved register until stored (a leaf keeps it there);
* ``addi sp,sp,-N`` (c.addi16sp, c.addi) moves sp; a frame too large for 12 bits is
  ``li t0,-N`` (or ``lui``/``addi``) then ``add sp,sp,t0``: the constant is followed
  from the instructions just before, else the height is lost (alloca);
* ``sd rN,k(sp)`` (c.sdsp) saves, ``ld rN,k(sp)`` (c.ldsp) restores; ``addi s0,sp,k``
  makes s0 a frame base, ``addi sp,s0,-k`` puts sp back from it;
* control flow: jal/jalr linking ra call (``auipc ra; jalr ra`` with its target),
  ``j`` jumps, ``jr`` other than ``ret`` is a tail call or a jump table, ``ret`` and
  ``ebreak`` stop.
"""
from .. import dataflow as D
from ..dataflow import MAX_CODE  # noqa: F401 (the kit's MAX_CODE)
from ..heights import AnalysisError, FunctionAnalysis  # noqa: F401 (re-exported)
from . import registers as R
from . import rv
from .prologue import _constant, sp_delta

_FLOWS = {rv.CALL: D.CALL, rv.JUMP: D.JUMP, rv.COND: D.COND, rv.IJUMP: D.IJUMP, rv.STOP: D.STOP}
_MASK = (1 << 64) - 1


class RV64(D.InstructionSet):
    """RV64GC for the engine: s0 the frame pointer, ra the link register, s0-s11 callee-saved."""

    def __init__(self):
        super().__init__(R, R.CALLEE_SAVED, ra_on_stack=False, align=2, noreturn_by_clash=False)

    def effects(self, ins, consts):
        """The engine's effects of one instruction (``consts``: registers holding a constant
        the instructions just before loaded)."""
        w = ins.writes
        if ins.op == rv.SD and ins.rs1 in (R.sp, R.fp):
            return ((D.SAVE_SP if ins.rs1 == R.sp else D.SAVE_FP, ins.rs2, ins.imm),)
        if w is None:
            return ()
        if w == R.sp:
            if ins.op == rv.ADDI and ins.rs1 == R.fp:
                return ((D.SP_FROM_FP, ins.imm, None),)
            d = sp_delta(ins, consts)
            return ((D.SP_UNKNOWN, None, None),) if d is None else ((D.SP_ADD, d, None),) if d else ()
        if ins.op == rv.LD and ins.rs1 == R.sp and w in self.savable:
            return ((D.RESTORE, w, None),)
        if w == R.fp:
            if ins.op == rv.ADDI and ins.rs1 == R.sp:
                return ((D.FP_FROM_SP, ins.imm, None),)
            return ((D.FP_UNKNOWN, None, None),)
        return ()

    def decode(self, data, addr, known=None):
        """The engine's (address, Insn) of the code ``data`` at ``addr``, linearly (those in
        ``known`` as they are)."""
        consts = {}
        prev = None
        for a, ins in rv.insns(data, addr):
            have = known.get(a) if known else None
            if have is not None:
                yield a, have
                consts = {}
                prev = (a, ins)
                continue
            f, target = rv.flow(ins, a)
            if f == rv.CALL and target is None and prev is not None and prev[1].op == rv.AUIPC \
                    and prev[1].rd == ins.rs1 == R.ra and prev[0] + 4 == a:
                target = (prev[0] + prev[1].imm + ins.imm) & _MASK          # auipc ra; jalr ra
            raw = int.from_bytes(data[a - addr:a - addr + ins.size], "little")
            flow = _FLOWS.get(f, D.FALL)
            if ins.op == rv.OTHER and raw in (0, 0xc0001073):              # c.unimp / unimp
                flow = D.STOP
            yield a, (ins.size, self.effects(ins, consts), flow, target, rv.is_padding(ins, raw))
            w = ins.writes
            if w is not None:
                c = _constant(consts, ins)
                consts.pop(w, None)
                if c is not None:
                    consts[w] = c
            if flow != D.FALL:
                consts = {}
            prev = (a, ins)


_RV64 = RV64()
ENTRY = _RV64.entry


def analyze(read, start, end=None, follow=None, noreturn=None, hi=None):
    """Analyse the function entered at ``start``; return its FunctionAnalysis (see
    arch/dataflow.InstructionSet.analyze for the arguments).  Raises AnalysisError."""
    return _RV64.analyze(read, start, end, follow, noreturn, hi)
