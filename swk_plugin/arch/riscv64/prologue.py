"""The RISC-V standard frame as unwind rules: a function that saves s0 and points it at its
CFA (GCC's frame pointer: -O0, or -fno-omit-frame-pointer) keeps a standard frame, whatever
else it does with sp.

GCC's prologue (compressed forms where they fit; large frames move sp again after)::

    addi sp,sp,-N;  sd ra,N-8(sp);  sd s0,N-16(sp);  [sd s1.. ];  addi s0,sp,N

so in the body CFA = s0, the frame record {ra, s0} is at s0-8 and s0-16.  A leaf saves
no ra: its s0 is at s0-8 and its caller is still in ra.  A top frame may be stopped
inside the prologue (sp-based rows, per instruction) or in the epilogue
(``ld ra; ld s0; addi sp,sp,N; ret``, the loads maybe scheduled between other
instructions, or ``addi sp,s0,-K`` first after alloca): ``epilogue_at`` reads the code
from the pc to the ``ret`` (or a tail call) and says where the frame is.
"""
from ...rule import OFFSET, CfaRule, RegRule, UnwindRule
from . import registers as R
from . import rv

#: Bytes to read at a function's entry to parse its prologue (up to 32 compressed insns).
READ_SIZE = 64
#: Bytes FrameFuncStepper reads at a top frame's pc for ``epilogue_at``.
EPILOGUE_READ = 64
_SAVABLE = R.CALLEE_SAVED | {R.ra}


def _rule(cfa_reg, cfa_off, saved):
    """CFA = cfa_reg + cfa_off; ``saved`` {regno: offset from the CFA}; ra in its register
    unless saved."""
    regs = {r: RegRule(OFFSET, off) for r, off in saved.items()}
    return UnwindRule(None, CfaRule(cfa_reg, cfa_off), regs, False, R.ra)


class Epilogue:
    """Where a frame stopped on its way out is."""
    __slots__ = ("rule",)

    def __init__(self, rule):
        self.rule = rule


class Prologue:
    """Where the standard frame is set up in one function."""
    __slots__ = ("start", "body_at", "k", "saved", "rows", "end", "body")

    def __init__(self, start, body_at, k, saved, rows, end):
        self.start, self.body_at = start, body_at
        self.k = k                  # CFA - s0
        self.saved = saved          # {regno: offset from the CFA} in the body
        self.rows = rows            # {address: UnwindRule} of the instructions parsed
        self.end = end              # the body rule holds from here on
        self.body = _rule(R.fp, k, saved)

    def rule_at(self, pc, exact, at_ret=None):
        """The UnwindRule at ``pc``: ``exact`` for a frame stopped there (the top frame or one a
        signal interrupted), else pc is inside a call; ``at_ret``: ``epilogue_at``'s Epilogue."""
        if exact:
            if isinstance(at_ret, Epilogue):
                return at_ret.rule
            row = self.rows.get(pc)
            if row is not None:
                return row
        return self.body

    def __repr__(self):
        return f"<Prologue 0x{self.start:x} body 0x{self.body_at:x} cfa=s0+{self.k} saved {self.saved}>"


def _constant(consts, ins):
    """What ``lui``/``li``/``addi rd,rd,k`` leaves in rd, if known (large frames' sizes)."""
    if ins.op == rv.LUI:
        return ins.imm
    if ins.op == rv.ADDI and ins.rs1 == rv.ZERO:
        return ins.imm
    if ins.op == rv.ADDI and ins.rs1 in consts:
        return consts[ins.rs1] + ins.imm
    return None


def sp_delta(ins, consts):
    """How far ``ins`` moves sp (``addi sp,sp,k``; ``add``/``sub sp,sp,tN`` of a known
    constant), 0 if it does not write sp, None where it writes sp some other way."""
    if ins.writes != R.sp:
        return 0
    if ins.op == rv.ADDI and ins.rs1 == R.sp:
        return ins.imm
    if ins.op in (rv.ADD, rv.SUB) and ins.rs1 == R.sp and ins.rs2 in consts:
        return consts[ins.rs2] if ins.op == rv.ADD else -consts[ins.rs2]
    return None


def parse_prologue(code, start):
    """A Prologue if ``code`` (bytes at ``start``) saves s0 and points it at the frame record
    {ra, s0} (s0 - 8, s0 - 16; s0 alone at s0 - 8 in a leaf), else None."""
    h = 0                       # CFA - sp
    k = None                    # CFA - s0 once s0 is the frame base
    saved = {}
    rows = {}
    consts = {}
    body_at = None
    end = start
    for addr, ins in rv.insns(code, start):
        rows[addr] = _rule(R.sp, h, saved) if k is None else _rule(R.fp, k, saved)
        end = addr
        w = ins.writes
        if ins.op == rv.SD and (ins.rs1 == R.sp or ins.rs1 == R.fp and k is not None):
            if ins.rs2 in _SAVABLE and ins.rs2 not in saved:
                saved[ins.rs2] = ins.imm - (h if ins.rs1 == R.sp else k)
        elif w == R.fp:
            if k is not None or ins.op != rv.ADDI or ins.rs1 != R.sp or R.fp not in saved:
                break           # s0 written before it is saved, or not from sp
            k = h - ins.imm
            body_at = addr + ins.size
        elif w == R.sp:
            d = sp_delta(ins, consts)
            if d is None or (k is None and d > 0):
                break
            h -= d
        elif w == R.ra or w in _SAVABLE and w not in saved or rv.flow(ins, addr)[0] is not None \
                or ins.op == rv.ECALL:
            break               # a call, branch or return, or a register to save clobbered
        elif w is not None:
            c = _constant(consts, ins)
            consts.pop(w, None)
            if c is not None:
                consts[w] = c
        end = addr + ins.size
    if body_at is None:
        return None
    ra_saved = R.ra in saved
    if k < 0 or saved[R.fp] + k != (-16 if ra_saved else -8) or (ra_saved and saved[R.ra] + k != -8):
        return None             # s0 is not GCC's frame pointer
    rows = {a: r for a, r in rows.items() if a < end}
    return Prologue(start, body_at, k, dict(saved), rows, end)


def is_return(code):
    return epilogue_at(code, None, None)


def epilogue_at(code, pc, bounds):
    """An Epilogue when the code at ``pc`` runs straight to ``ret`` (or to a tail call out of
    the function's ``bounds``) through register restores, sp adjustments and arithmetic on
    other registers only, else None."""
    delta = 0                   # sp at ret - sp at pc
    from_fp = None              # after ``addi sp,s0,k``: sp at ret - s0
    restored = {}               # regno -> where it is loaded, from sp at pc (or from s0)
    consts = {}
    i = 0
    for addr, ins in rv.insns(code, pc or 0):
        i += 1
        f, target = rv.flow(ins, addr)
        if f == rv.STOP and rv.is_return(ins) or \
                f == rv.JUMP and pc is not None and bounds is not None and bounds[1] is not None \
                and not bounds[0] <= target < bounds[1] or \
                f == rv.IJUMP and ins.rs1 != R.ra and R.ra in restored:
            base, off = (R.fp, from_fp) if from_fp is not None else (R.sp, delta)
            return Epilogue(_rule(base, off, {r: o - off for r, o in restored.items()}))
        if f is not None or ins.op == rv.ECALL:
            return None
        if ins.op == rv.LD and ins.rs1 == R.sp:
            if ins.rd in _SAVABLE and ins.rd not in restored:
                restored[ins.rd] = (from_fp if from_fp is not None else delta) + ins.imm
                continue
            if ins.rd in _SAVABLE or ins.rd == R.sp:
                return None
            continue
        if ins.writes == R.sp:
            if ins.op == rv.ADDI and ins.rs1 == R.fp and from_fp is None and not restored:
                from_fp = ins.imm
                continue
            d = sp_delta(ins, consts)
            if d is None:
                return None
            if from_fp is not None:
                from_fp += d
            else:
                delta += d
            continue
        if ins.writes in (R.fp, R.ra) or ins.writes in _SAVABLE:
            return None         # a callee-saved register written another way: not an epilogue
        if ins.writes is not None:
            c = _constant(consts, ins)
            consts.pop(ins.writes, None)
            if c is not None:
                consts[ins.writes] = c
    return None
