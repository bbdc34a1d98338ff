"""Stack-height analysis of A64 machine code without CFI: the A64 decoder of arch/dataflow.py.

The engine (arch/dataflow.py) follows control flow from the entry and runs the
dataflow; this module says what each instruction does, in the engine's
vocabulary of effects.  What A64 brings to it:

* a call leaves the return address in x30, not on the stack: the height is 0
  at entry, and x30 is tracked like a callee-saved register until stored
  (a leaf, or a function stopped before its prologue stored it, leaves it
  there);
* ``stp x29, x30, [sp, #-N]!`` (pre-index) is sp += -N and two saves at the new
  sp; ``ldp x29, x30, [sp], #N`` (post-index) restores both, then sp += N;
  ``stp x19, x20, [sp, #16]`` saves without moving sp;
* ``mov x29, sp`` / ``add x29, sp, #n`` makes x29 a frame base; after ``and sp,
  ...`` or a variable ``sub sp, sp, xN`` only x29 still locates the CFA;
* ``paciasp`` signs the return address, ``autiasp`` authenticates it (the rule's
  ``ra_signed``).

Stack effects are decoded from the instruction words (a64.effect); capstone
gives instruction boundaries, validity and control flow.
"""
from .. import dataflow as D
from ..dataflow import CALL, COND, FALL, IJUMP, JUMP, MAX_CODE, STOP  # noqa: F401 (re-exported)
from ..heights import NOT_REACHED, AnalysisError, FunctionAnalysis, StackHeight  # noqa: F401 (re-exported)
from . import a64
from . import registers as R

_STOPS = frozenset({"ret", "retaa", "retab", "eret", "eretaa", "eretab", "brk", "udf", "hlt", "hvc", "smc"})
_CALLS_IND = frozenset({"blr", "blraa", "blrab", "blraaz", "blrabz"})
_JUMPS_IND = frozenset({"br", "braa", "brab", "braaz", "brabz"})
_CONDS = frozenset({"cbz", "cbnz", "tbz", "tbnz"})


def _target(op_str):
    t = op_str.rpartition("#")[2]
    try:
        return int(t, 0)
    except ValueError:
        return None


def flow_of(mnemonic, op_str):
    """(flow, target) of one instruction from its text."""
    m = mnemonic
    if m[0] != "b" and m not in _CONDS and m not in _STOPS and m[0] != "r":
        return FALL, None
    if m == "b":
        return JUMP, _target(op_str)
    if m.startswith("b.") or m.startswith("bc.") or m in _CONDS:
        return COND, _target(op_str)
    if m == "bl":
        return CALL, _target(op_str)
    if m in _CALLS_IND:
        return CALL, None
    if m in _JUMPS_IND:
        return IJUMP, None
    if m in _STOPS:
        return STOP, None
    return FALL, None


class A64(D.InstructionSet):
    """A64 for the engine: x29 the frame pointer, x30 the link register, x19-x29 callee-saved."""

    def __init__(self):
        # No guessing of calls that do not return from clashing heights (x86 does it).
        super().__init__(R, R.CALLEE_SAVED, ra_on_stack=False, align=4, noreturn_by_clash=False)
        self.cs = None
        self.by_word = {}

    def decoder(self):
        if self.cs is None:
            import capstone   # imported on first use: most walks never need it
            self.cs = capstone.Cs(capstone.CS_ARCH_ARM64, capstone.CS_MODE_ARM)
        return self.cs

    def effects(self, insn):
        """The engine's effects of one instruction word (a64.effect's kinds)."""
        kind, a, b, c = a64.effect(insn)
        if kind == a64.ADJ_SP:
            return ((D.SP_ADD, a, None),)
        if kind == a64.STORE or kind == a64.LOAD:
            regs, off, wb = a, b, c
            post = wb[1] if isinstance(wb, tuple) else 0
            pre = 0 if isinstance(wb, tuple) else wb
            savable = self.savable
            if kind == a64.STORE:
                moves = tuple((D.SAVE_SP, r, off + 8 * j) for j, r in enumerate(regs) if r in savable)
            else:
                moves = tuple((D.RESTORE, r, None) for r in regs if r in savable)
            return (((D.SP_ADD, pre, None),) if pre else ()) + moves + \
                (((D.SP_ADD, post, None),) if post else ())
        if kind == a64.SET_FP:
            return ((D.FP_FROM_SP, a, None),)
        if kind == a64.SP_FROM_FP:
            return ((D.SP_FROM_FP, a, None),)
        if kind == a64.SIGN:
            return ((D.RA_SIGNED, None, None),)
        if kind == a64.AUTH:
            return ((D.RA_PLAIN, None, None),)
        if kind == a64.WRITES_SP:
            return ((D.SP_UNKNOWN, None, None),)
        if kind == a64.WRITES_FP:
            return ((D.FP_UNKNOWN, None, None),)
        return ()                       # OTHER, HINT, BRANCH, RETURN, WRITES_LR

    def decode(self, data, addr, known):
        """The engine's (address, Insn) of the code ``data`` at ``addr``, linearly (those in
        ``known`` as they are)."""
        by_word = self.by_word
        if len(by_word) > 200_000:
            by_word.clear()
        for a, _size, mn, ops in self.decoder().disasm_lite(data, addr):
            ins = known.get(a)
            if ins is None:
                w = a64.word(data, a - addr)
                eff = by_word.get(w)
                if eff is None:
                    eff = by_word[w] = self.effects(w)
                flow, target = flow_of(mn, ops)
                ins = 4, eff, flow, target, mn == "nop"
            yield a, ins


_A64 = A64()
ENTRY = _A64.entry
decoder = _A64.decoder


def analyze(read, start, end=None, follow=None, noreturn=None, hi=None):
    """Analyse the function entered at ``start``; return its FunctionAnalysis (see
    arch/dataflow.InstructionSet.analyze for the arguments).  Raises AnalysisError."""
    return _A64.analyze(read, start, end, follow, noreturn, hi)
