"""The AArch64 frame record as unwind rules: a function that stores {x29, x30} and points x29
at them keeps a standard frame (AAPCS64 6.2.3), whatever else it does with sp.

Prologue shapes GCC and clang emit (each optionally after ``paciasp``/``pacibsp``
or ``bti c``, and with other instructions scheduled in between)::

    stp x29, x30, [sp, #-N]!     mov x29, sp                    record at the bottom
    sub sp, sp, #N               stp x29, x30, [sp, #M]   add x29, sp, #M
    stp x29, x30, [sp, #-16]!    mov x29, sp   sub sp, sp, #N   (large frames)

then stores of callee-saved registers (``stp x19, x20, [sp, #16]``...).  In the body
CFA = x29 + K (K: how far the record is below the entry sp), x29 is at CFA - K and
x30 at CFA - K + 8.  A top frame may be stopped inside the prologue (its return
address still in x30, signed after ``paciasp``) or in the epilogue: ``is_return``
reads the code from the pc up to the ``ret`` and says exactly where the frame is
then (``ldp x29, x30, [sp], #N``, ``add sp, sp, #N``, ``autiasp`` ahead or done).
"""
from ...rule import OFFSET, CfaRule, RegRule, UnwindRule
from . import a64
from . import registers as R

#: Bytes to read at a function's entry to parse its prologue (16 instructions).
READ_SIZE = 64
#: Bytes FrameFuncStepper reads at a top frame's pc for ``is_return`` (8 instructions).
EPILOGUE_READ = 32
_SAVABLE = R.CALLEE_SAVED | {R.ra}


def _rule(cfa_reg, cfa_off, saved, signed):
    """CFA = cfa_reg + cfa_off; ``saved`` {regno: offset from the CFA}; x30 in its register
    unless saved; ``signed``: the return address carries a PAC."""
    regs = {r: RegRule(OFFSET, off) for r, off in saved.items()}
    return UnwindRule(None, CfaRule(cfa_reg, cfa_off), regs, False, R.ra, ra_signed=signed)


class Epilogue:
    """Where a frame stopped on its way out is: CFA = base + off, the registers still saved
    ({regno: offset from the CFA}), and whether x30 is signed."""
    __slots__ = ("rule",)

    def __init__(self, rule):
        self.rule = rule


class Prologue:
    """Where the standard frame is set up in one function."""
    __slots__ = ("start", "body_at", "k", "saved", "signed", "rows", "body", "end")

    def __init__(self, start, body_at, k, saved, signed, rows):
        self.start = start
        self.body_at = body_at      # first address where x29 locates the frame record
        self.k = k                  # CFA - x29
        self.saved = saved          # {regno: offset from the CFA} in the body
        self.signed = signed
        self.rows = rows            # {address: UnwindRule} of the instructions parsed
        self.end = max(rows) + 4    # the body rule holds from here on
        self.body = _rule(R.fp, k, saved, signed)

    def rule_at(self, pc, exact, at_ret=None):
        """The UnwindRule at ``pc``: ``exact`` for a frame stopped there (the top frame or one a
        signal interrupted), else pc is inside a call; ``at_ret``: ``is_return``'s Epilogue."""
        if exact:
            if isinstance(at_ret, Epilogue):
                return at_ret.rule
            row = self.rows.get(pc)
            if row is not None:
                return row
        elif pc < self.end:
            row = self.rows.get(pc & -4)            # a call inside the prologue's window
            if row is not None:
                return row
        return self.body

    def __repr__(self):
        return f"<Prologue 0x{self.start:x} body 0x{self.body_at:x} cfa=x29+{self.k} saved {self.saved}>"


def parse_prologue(code, start):
    """A Prologue if ``code`` (bytes at ``start``) builds a frame record, else None."""
    h = 0                       # CFA - sp
    fpk = None                  # CFA - x29
    saved = {}
    signed = False
    rows = {}
    body_at = None
    n = len(code) // 4
    for i in range(n):
        addr = start + 4 * i
        insn = a64.word(code, 4 * i)
        # the rule before this instruction runs: sp-based until x29 is the frame base, then
        # x29-based with the registers saved so far (more may be stored after the record)
        rows[addr] = _rule(R.sp, h, saved, signed) if body_at is None else _rule(R.fp, fpk, saved, signed)
        kind, a, b, c = a64.effect(insn)
        if kind == a64.SIGN:
            if body_at is not None:
                break
            signed = True
        elif kind == a64.HINT:
            pass
        elif kind == a64.ADJ_SP:
            h -= a
            if h < 0:
                return None
        elif kind == a64.STORE:
            regs, off, wb = a, b, c
            if isinstance(wb, tuple):
                return None if body_at is None else _finish(start, body_at, fpk, saved, signed, rows)
            h -= wb
            for j, r in enumerate(regs):
                if r in _SAVABLE and r not in saved:
                    saved[r] = off + 8 * j - h
        elif kind == a64.SET_FP:
            if body_at is not None:
                break
            fpk = h - a
            if saved.get(R.fp) != -fpk or saved.get(R.ra) != -fpk + 8:
                return None             # x29 does not point at the frame record
            body_at = addr + 4
        elif kind in (a64.OTHER,):
            pass
        else:
            break                       # a branch, a load, another write of sp/x29/x30
    if body_at is None:
        return None
    return _finish(start, body_at, fpk, saved, signed, rows)


def _finish(start, body_at, fpk, saved, signed, rows):
    # rows up to the last instruction the prologue parse followed; the body rule after them
    last = max(rows)
    rows = {a: r for a, r in rows.items() if a < body_at or a <= last}
    return Prologue(start, body_at, fpk, dict(saved), signed, rows)


def is_return(code):
    """An Epilogue when the code at a pc (``code``: up to EPILOGUE_READ bytes) runs straight
    to the function's ``ret`` through restores and sp adjustments only, else None."""
    return epilogue_at(code, None, None)


def epilogue_at(code, pc, bounds):
    """is_return, and also for an epilogue ending in a tail call: ``b`` to a target outside
    the function's ``bounds`` (start, end), or ``br`` once the frame record is restored
    (GCC's sibling calls).  ``pc``: the address of ``code``."""
    delta = 0                   # sp at ret - sp at pc
    from_fp = None              # after ``mov sp, x29``: sp at ret - x29
    restored = {}               # regno -> offset from sp at pc (or from x29) where it is loaded
    auth = False
    for i in range(len(code) // 4):
        insn = a64.word(code, 4 * i)
        kind, a, b, c = a64.effect(insn)
        if kind == a64.BRANCH and pc is not None and _tail_call(insn, pc + 4 * i, bounds, restored):
            kind, a = a64.RETURN, False
        if kind == a64.RETURN:
            signed = auth or a
            if from_fp is not None:
                cfa = CfaRule(R.fp, from_fp)
                saved = {r: off - from_fp for r, off in restored.items()}
            else:
                cfa = CfaRule(R.sp, delta)
                saved = {r: off - delta for r, off in restored.items()}
            regs = {r: RegRule(OFFSET, off) for r, off in saved.items()}
            return Epilogue(UnwindRule(None, cfa, regs, False, R.ra, ra_signed=signed))
        if kind == a64.AUTH:
            auth = True
        elif kind == a64.HINT or kind == a64.OTHER:
            continue
        elif kind == a64.ADJ_SP:
            if from_fp is not None:
                from_fp += a
            else:
                delta += a
        elif kind == a64.SP_FROM_FP:
            if from_fp is not None or restored:
                return None
            from_fp = a
        elif kind == a64.LOAD:
            regs, off, wb = a, b, c
            post = isinstance(wb, tuple)
            if not post:
                delta_wb = wb
                if from_fp is not None:
                    from_fp += delta_wb
                else:
                    delta += delta_wb
            base = from_fp if from_fp is not None else delta
            for j, r in enumerate(regs):
                if r in _SAVABLE and r not in restored:
                    restored[r] = base + off + 8 * j
            if post:
                if from_fp is not None:
                    from_fp += wb[1]
                else:
                    delta += wb[1]
        else:
            return None                 # a branch, a store, another write of sp/x29/x30
    return None


def _tail_call(insn, addr, bounds, restored):
    """Whether the branch at ``addr`` leaves the function for good (a sibling call)."""
    flow, target = a64.branch(insn, addr)
    if flow == a64.JUMP:
        return bounds is not None and bounds[1] is not None and not bounds[0] <= target < bounds[1]
    return flow == a64.IJUMP and R.ra in restored


#: The frame record {x29, x30} that x29 points at, followed where the code cannot be read at
#: all (eu-stack's fallback): the caller's x29 and x30 from it; the caller's sp is taken just
#: above the record (GCC keeps the record at the bottom of a frame with locals, so this is a
#: lower bound: only frames found the same way build on it).
frame_record = UnwindRule(None, CfaRule(R.fp, 16), {R.fp: RegRule(OFFSET, -16), R.ra: RegRule(OFFSET, -8)},
                          False, R.ra)
