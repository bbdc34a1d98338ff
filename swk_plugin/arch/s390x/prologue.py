"""The s390x standard frame as unwind rules: a frame pointer (r11) or a back chain.

Every function's CFA is its r15 + 160 at entry, and a function that calls saves r14 and
r15 (and the callee-saved registers it uses) in its caller's register save area, r14 at
CFA - 48 and r15 at CFA - 40.  GCC's prologue::

    stmg %r6,%r15,48(%r15)   (or %r11,%r15,88 / %r14,%r15,112: the registers it uses)
    lay  %r15,-N(%r15)       (aghi, agfi)
    lgr  %r11,%r15           (a frame pointer: -O0, -fno-omit-frame-pointer)
    stg  %r1,0(%r15)         (the back chain, -mbackchain: %r1 a copy of the entry r15)

A leaf parks r11 and r15 in call-clobbered floating-point registers instead
(``ldgr %f2,%r11; ldgr %f0,%r15``).  The body's rule is CFA = r11 + N + 160 where r11 is
the frame pointer, CFA = the back chain + 160 where there is one; either holds whatever the
body does to r15 (alloca).  A function with neither has no standard frame: the stack-height
analysis reads it.  A top frame may be stopped inside the prologue (r15-based rows, per
instruction) or in the epilogue (``lmg %r6,%r15,N+48(%r15)`` or ``lgdr %r15,%f0``, then
``br %r14`` or a tail call): ``epilogue_at`` reads the code from the pc to the return.
"""
from ...rule import OFFSET, REGISTER, VAL_OFFSET, CfaRule, RegRule, UnwindRule
from . import registers as R
from . import zarch as Z

#: Bytes to read at a function's entry to parse its prologue.
READ_SIZE = 96
#: Bytes FrameFuncStepper reads at a top frame's pc for ``epilogue_at``.
EPILOGUE_READ = 64
_SAVABLE = R.CALLEE_SAVED | {R.ra}
#: CFA = *(r15) + 160: DW_OP_breg15 0; DW_OP_deref; DW_OP_plus_uconst 160.
BACK_CHAIN = CfaRule(None, 0, bytes((0x70 + R.sp, 0x00, 0x06, 0x23, R.SAVE_AREA & 0x7f | 0x80, R.SAVE_AREA >> 7)))
#: The caller's r15 where no slot holds it: the CFA - 160, by the ABI.
CALLER_SP = RegRule(VAL_OFFSET, -R.SAVE_AREA)


def _rule(cfa, saved, held=None):
    """``saved``: {regno: offset from the CFA}; ``held``: {regno: the FPR's DWARF number it is
    parked in}; r15 the CFA - 160 unless saved, r14 in its register unless saved."""
    regs = {r: RegRule(OFFSET, off) for r, off in saved.items()}
    for r, f in (held or {}).items():
        regs.setdefault(r, RegRule(REGISTER, f))
    regs.setdefault(R.sp, CALLER_SP)
    return UnwindRule(None, cfa, regs, False, R.ra)


def _sp_rule(h, saved, held=None):
    return _rule(CfaRule(R.sp, h), saved, held)


class Epilogue:
    """Where a frame stopped on its way out is."""
    __slots__ = ("rule",)

    def __init__(self, rule):
        self.rule = rule


class Prologue:
    """Where the standard frame is set up in one function."""
    __slots__ = ("start", "body_at", "k", "saved", "held", "rows", "end", "body")

    def __init__(self, start, body_at, k, saved, held, rows, end):
        self.start, self.body_at = start, body_at
        self.k = k                  # CFA - r11; None: the back chain locates the CFA
        self.saved = saved          # {regno: offset from the CFA} in the body
        self.held = held            # {regno: FPR's DWARF number} parked by a leaf
        self.rows = rows            # {address: UnwindRule} of the instructions parsed
        self.end = end              # the body rule holds from here on
        self.body = _rule(CfaRule(R.fp, k) if k is not None else BACK_CHAIN, saved, held)

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
        base = f"r11+{self.k}" if self.k is not None else "back chain"
        return f"<Prologue 0x{self.start:x} body 0x{self.body_at:x} cfa={base} saved {self.saved}>"


def sp_delta(ins, consts=None):
    """How far ``ins`` moves r15 (lay/la/aghi/agfi/slgfi/algfi on r15, agr/sgr of a known
    constant), 0 if it does not write r15, None where it writes r15 some other way."""
    if R.sp not in ins.writes:
        return 0
    op = ins.op
    if op in (Z.LAY, Z.LA) and ins.b == R.sp and ins.x == 0:
        return ins.d
    if op in (Z.AGHI, Z.AGFI, Z.ALGFI):
        return ins.imm
    if op == Z.SLGFI:
        return -ins.imm
    if op in (Z.AGR, Z.SGR) and consts and ins.r2 in consts:
        return consts[ins.r2] if op == Z.AGR else -consts[ins.r2]
    return None


def constant(consts, ins):
    """What ``lghi``/``lgfi`` leave in their register, if known (a large frame's size)."""
    return ins.imm if ins.op in (Z.LGHI, Z.LGFI) else None


def stmg_saves(ins, base_off):
    """{regno: offset from the CFA} of the registers a callee saves that ``stmg`` (or ``stg``)
    stores, its base register ``base_off`` below the CFA."""
    if ins.op == Z.STMG:
        regs = [(ins.r1 + k) & 15 for k in range(((ins.r2 - ins.r1) & 15) + 1)]
    elif ins.op == Z.STG and ins.x == 0:
        regs = [ins.r1]
    else:
        return {}
    return {r: ins.d + 8 * k - base_off for k, r in enumerate(regs) if r in _SAVABLE}


def parse_prologue(code, start):
    """A Prologue if ``code`` (bytes at ``start``) sets up a frame pointer (``lgr %r11,%r15``
    once r11 is saved, in memory or a leaf's FPR) or a back chain (once the frame is
    allocated), else None."""
    h = R.SAVE_AREA             # CFA - r15
    k = None                    # CFA - r11 once r11 is the frame base
    chain = False
    saved, held, rows, consts = {}, {}, {}, {}
    entry_sp = set()            # registers holding the entry r15 (lgr %rN,%r15 before any move)
    body_at = None
    end = start
    for addr, ins in Z.insns(code, start):
        if body_at is not None:
            break
        rows[addr] = _sp_rule(h, saved, held) if k is None else _rule(CfaRule(R.fp, k), saved, held)
        end = addr
        w = ins.writes
        if ins.op in (Z.STMG, Z.STG) and ins.b == R.sp:
            if ins.op == Z.STG and ins.d == 0 and ins.r1 in entry_sp and h > R.SAVE_AREA:
                chain = True
                body_at = addr + ins.size
            else:
                for r, off in stmg_saves(ins, h).items():
                    saved.setdefault(r, off)
        elif ins.op == Z.LDGR:
            if ins.r2 in _SAVABLE and ins.r2 != R.sp and ins.r2 not in saved and ins.r2 not in held:
                held[ins.r2] = R.F_DWARF[ins.r1]
        elif ins.op == Z.STD:
            f = R.F_DWARF[ins.r1]
            if ins.b == R.sp and ins.x == 0 and f in R.CALLEE_SAVED_F:
                saved.setdefault(f, ins.d - h)
        elif ins.op == Z.LD or (ins.op == Z.OTHER and not w):
            pass                # what changes no general register
        elif R.fp in w:
            if ins.op != Z.LGR or ins.r2 != R.sp or k is not None or (R.fp not in saved and R.fp not in held):
                break           # r11 written before it is saved, or not from r15
            k = h
            body_at = addr + ins.size
        elif R.sp in w:
            d = sp_delta(ins, consts)
            if d is None or d > 0:
                break
            h -= d
        elif ins.op == Z.LGR and ins.r2 == R.sp and h == R.SAVE_AREA and not (w & _SAVABLE - saved.keys()):
            entry_sp |= w
        elif w & (_SAVABLE - saved.keys() - held.keys()) or Z.flow(ins, addr)[0] is not None or ins.op == Z.SVC:
            break               # a branch or call, or a register to save clobbered
        else:
            for r in w:
                consts.pop(r, None)
                entry_sp.discard(r)
                c = constant(consts, ins)
                if c is not None:
                    consts[r] = c
        end = addr + ins.size
    if body_at is None:
        return None
    rows = {a: r for a, r in rows.items() if a < body_at}
    return Prologue(start, body_at, k, dict(saved), dict(held), rows, end)


def is_return(code):
    return epilogue_at(code, None, None)


def epilogue_at(code, pc, bounds):
    """An Epilogue when the code at ``pc`` runs straight to ``br %r14`` (or to a tail call out
    of the function's ``bounds``) through register restores (``lmg`` including r15, ``lgdr``
    of a parked register, FPR loads), r15 adjustments and arithmetic on r0-r5 only, else None."""
    delta = 0                   # r15 at the return - r15 at pc, until an lmg reloads it
    cfa = None                  # the CFA rule once an lmg restoring r15 is ahead
    restored = {}
    held = {}
    consts = {}
    for addr, ins in Z.insns(code, pc or 0):
        f, target = Z.flow(ins, addr)
        if f == Z.STOP and Z.is_return(ins) or \
                f == Z.JUMP and pc is not None and bounds is not None and bounds[1] is not None \
                and not bounds[0] <= target < bounds[1]:
            if cfa is None:
                cfa = CfaRule(R.sp, R.SAVE_AREA + delta)
            return Epilogue(_rule(cfa, restored, held))
        if f is not None or ins.op == Z.SVC:
            return None
        w = ins.writes
        if ins.op == Z.LMG and R.sp in w and cfa is None and ins.b in (R.sp, R.fp) and ins.x is None:
            slot15 = ins.d + 8 * ((R.sp - ins.r1) & 15)         # r15's slot from the base
            base_off = slot15 + 40 + (delta if ins.b == R.sp else 0)
            cfa = CfaRule(ins.b, base_off)
            for r in w:
                if r in _SAVABLE:
                    restored.setdefault(r, 8 * (r - R.sp) - 40)
            continue
        if ins.op == Z.LGDR and ins.r1 in _SAVABLE and ins.r1 != R.sp:
            held.setdefault(ins.r1, R.F_DWARF[ins.r2])
            continue
        if cfa is None and R.sp in w:
            d = sp_delta(ins, consts)
            if d is None or d < 0:
                return None
            delta += d
            continue
        if w & (_SAVABLE | {R.ra}):
            return None         # a callee-saved register written another way: not an epilogue
        for r in w:
            consts.pop(r, None)
            c = constant(consts, ins)
            if c is not None:
                consts[r] = c
    return None
