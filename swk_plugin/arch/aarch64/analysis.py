"""Stack-height analysis of A64 machine code without CFI.

``analyze`` decodes a function with capstone (ARM64), follows control flow from
its entry and runs a forward dataflow over every path.  The state at each
instruction:

* ``h``: CFA - sp (0 at entry: a call leaves the return address in x30, not on
  the stack);
* ``fp``: CFA - x29 once ``mov x29, sp`` / ``add x29, sp, #n`` makes x29 a frame
  base (after ``and sp, ...`` or a variable ``sub sp, sp, xN`` only x29 still
  locates the CFA);
* ``saved``: where each callee-saved register (x19-x29) and x30 holding the
  caller's value was stored, as an offset from the CFA (``stp x29, x30, [sp,
  #-N]!``, ``stp x19, x20, [sp, #16]``, ``str x30, [sp, #-16]!``);
* ``signed``: the return address carries a PAC (after ``paciasp``, before
  ``autiasp``).

Until x30 is saved the return address is in x30 itself: the rule then leaves it
there (a leaf, or a function stopped before its prologue stored it).  Stack
effects are decoded from the instruction words (a64.effect); capstone gives
instruction boundaries, validity and control flow.  At joins, disagreeing
heights become unknown and only saves made on every path survive.
"""
from ...rule import OFFSET, CfaRule, RegRule, UnwindRule
from ..heights import NOT_REACHED, AnalysisError, FunctionAnalysis, StackHeight  # noqa: F401 (re-exported)
from . import a64
from . import registers as R

MAX_CODE = 64 * 1024
MAX_INSNS = 20_000
MAX_VISITS = 200_000
CHUNK = 256
MAX_HEIGHT = 1 << 28

FALL, JUMP, COND, CALL, STOP, IJUMP = range(6)
_SAVABLE = R.CALLEE_SAVED | {R.ra}
_STOPS = frozenset({"ret", "retaa", "retab", "eret", "eretaa", "eretab", "brk", "udf", "hlt", "hvc", "smc"})
_CALLS_IND = frozenset({"blr", "blraa", "blrab", "blraaz", "blrabz"})
_JUMPS_IND = frozenset({"br", "braa", "brab", "braaz", "brabz"})
_CONDS = frozenset({"cbz", "cbnz", "tbz", "tbnz"})

ENTRY = (0, None, frozenset(), False)
_CS = None


def decoder():
    global _CS
    if _CS is None:
        import capstone   # imported on first use: most walks never need it
        _CS = capstone.Cs(capstone.CS_ARCH_ARM64, capstone.CS_MODE_ARM)
    return _CS


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


def _with_save(saved, reg, off):
    for r, o in saved:
        if r == reg or o == off:
            return saved            # the first save of a register is the caller's value
    return saved | {(reg, off)}


def _drop_below(saved, h):
    if any(off < -h for _r, off in saved):
        return frozenset(p for p in saved if p[1] >= -h)
    return saved


def _drop(saved, regs):
    if any(r in regs for r, _o in saved):
        return frozenset(p for p in saved if p[0] not in regs)
    return saved


def transfer(state, eff):
    """The state after an instruction with stack effect ``eff`` (a64.effect's answer)."""
    h, fp, saved, signed = state
    kind, a, b, c = eff
    if kind == a64.OTHER or kind == a64.HINT or kind == a64.BRANCH or kind == a64.RETURN:
        return state
    if kind == a64.SIGN:
        signed = True
    elif kind == a64.AUTH:
        signed = False
    elif kind == a64.ADJ_SP:
        if h is not None:
            h -= a
            if a > 0:
                saved = _drop_below(saved, h) if h >= 0 else saved
    elif kind == a64.SET_FP:
        fp = None if h is None else h - a
    elif kind == a64.SP_FROM_FP:
        h = None if fp is None else fp - a
        if h is not None:
            saved = _drop_below(saved, h)
    elif kind == a64.STORE:
        regs, off, wb = a, b, c
        post = isinstance(wb, tuple)
        if h is not None:
            if not post:
                h -= wb
            for j, r in enumerate(regs):
                if r in _SAVABLE:
                    saved = _with_save(saved, r, off + 8 * j - h)
            if post:
                h -= wb[1]
    elif kind == a64.LOAD:
        regs, off, wb = a, b, c
        post = isinstance(wb, tuple)
        if R.fp in regs:
            fp = None
        saved = _drop(saved, regs)
        if h is not None:
            h -= wb[1] if post else wb
            saved = _drop_below(saved, h)
    elif kind == a64.WRITES_SP:
        h = None
    elif kind == a64.WRITES_FP:
        fp = None
    if h is not None and not 0 <= h <= MAX_HEIGHT:
        h = None
    return h, fp, saved, signed


def merge(a, b):
    if a == b:
        return a
    return (a[0] if a[0] == b[0] else None, a[1] if a[1] == b[1] else None, a[2] & b[2], a[3] or b[3])


_HEIGHTS = {}


def height(state):
    """The StackHeight of a state (None when neither sp nor x29 locates the CFA), shared."""
    got = _HEIGHTS.get(state)
    if got is not None or state in _HEIGHTS:
        return got
    h, fp, saved, signed = state
    if h is None and fp is None:
        got = None
    else:
        saved_d = {r: o for r, o in saved}
        base, off = (R.sp, h) if h is not None else (R.fp, fp)
        regs = {r: RegRule(OFFSET, o) for r, o in saved_d.items()}
        rule = UnwindRule(None, CfaRule(base, off), regs, False, R.ra, ra_signed=signed)
        got = StackHeight(h, fp, saved_d, rule)
    if len(_HEIGHTS) > 100_000:
        _HEIGHTS.clear()
    _HEIGHTS[state] = got
    return got


def analyze(read, start, end=None, follow=None, noreturn=None, hi=None):
    """Analyse the function entered at ``start``; return its FunctionAnalysis (see
    arch/x86_64/analysis.analyze for the arguments).  Raises AnalysisError."""
    limit = end if end is not None else (hi if hi is not None else start + MAX_CODE)
    if limit - start > MAX_CODE:
        if end is not None:
            raise AnalysisError(f"function of {limit - start} bytes is too large to analyse")
        limit = start + MAX_CODE
    if start % 4:
        raise AnalysisError(f"entry 0x{start:x} is not 4-aligned")
    if not read(start, 4):
        raise AnalysisError(f"code at 0x{start:x} is unreadable")
    flow = _Dataflow(read, start, limit, follow, noreturn)
    flow.run()
    if end is not None:
        flow.sweep(end)
    return flow.result(start, end)


class _Dataflow:
    def __init__(self, read, start, limit, follow, noreturn):
        self.read, self.start = read, start
        self.ranges = [(start, limit)]
        self.follow, self.noreturn = follow, noreturn
        self.insns = {}                 # address -> (eff, flow, target)
        self.refused = set()
        self.returns = {}
        self.instate = {start: ENTRY}
        self.work = [start]
        self.ijumps = []
        self.visits = 0

    def range_end(self, a):
        for lo, rhi in self.ranges:
            if lo <= a < rhi:
                return rhi
        return None

    def in_range(self, t):
        if t is None:
            return False
        if self.range_end(t) is not None:
            return True
        if self.follow is None or t in self.refused:
            return False
        extra = self.follow(t)
        if extra is None or not extra[0] <= t < extra[1] or \
                sum(r[1] - r[0] for r in self.ranges) + extra[1] - extra[0] > 2 * MAX_CODE:
            self.refused.add(t)
            return False
        self.ranges.append(extra)
        return True

    def decode(self, a):
        rhi = self.range_end(a)
        if rhi is None:
            return None
        data = self.read(a, min(CHUNK, rhi - a))
        if not data:
            return None
        insns = self.insns
        first = None
        for addr, size, mn, ops in decoder().disasm_lite(data, a):
            if addr in insns:
                break
            off = addr - a
            ins = insns[addr] = (a64.effect(a64.word(data, off)),) + flow_of(mn, ops)
            if first is None:
                first = ins
            if ins[1] in (JUMP, STOP, IJUMP):
                break
        if len(insns) > MAX_INSNS:
            raise AnalysisError(f"more than {MAX_INSNS} instructions")
        return first

    def call_returns(self, t):
        if t is None or self.noreturn is None:
            return True
        r = self.returns.get(t)
        if r is None:
            r = self.returns[t] = not self.noreturn(t)
        return r

    def run(self):
        instate, insns, work = self.instate, self.insns, self.work
        while work:
            a = work.pop()
            st = instate[a]
            while True:
                self.visits += 1
                if self.visits > MAX_VISITS:
                    raise AnalysisError(f"more than {MAX_VISITS} instruction visits")
                ins = insns.get(a)
                if ins is None:
                    ins = self.decode(a)
                    if ins is None:
                        break
                eff, flow, tgt = ins
                out = transfer(st, eff)
                if flow != FALL:
                    if flow == CALL:
                        if not self.call_returns(tgt):
                            break
                    elif flow == COND:
                        if self.in_range(tgt):
                            self.propagate(tgt, out)
                    elif flow == JUMP:
                        if self.in_range(tgt):
                            self.propagate(tgt, out)
                        break
                    elif flow == IJUMP:
                        self.ijumps.append(out)
                        break
                    else:
                        break
                nxt = a + 4
                if self.range_end(nxt) is None:
                    break
                old = instate.get(nxt)
                if old is not None:
                    new = merge(old, out)
                    if new == old:
                        break
                    out = new
                instate[nxt] = out
                a, st = nxt, out

    def propagate(self, t, state):
        old = self.instate.get(t)
        if old is None:
            self.instate[t] = state
        else:
            new = merge(old, state)
            if new == old:
                return
            self.instate[t] = new
        self.work.append(t)

    def sweep(self, end):
        """Case blocks reached only through a jump table get the indirect jumps' state, then
        padding after reached code gets the state before it (see the x86-64 analysis)."""
        instate = self.instate
        tables = [s for s in self.ijumps if s != ENTRY] or self.ijumps
        data = self.read(self.start, end - self.start)
        lines = list(decoder().disasm_lite(data, self.start)) if data else []
        if tables:
            seed = tables[0]
            for s in tables[1:]:
                seed = merge(seed, s)
            if seed[0] is not None or seed[1] is not None:
                for _round in range(16):
                    seeds = []
                    starts_run = True
                    for a, _size, mn, ops in lines:
                        if a in instate or mn == "nop":
                            starts_run = True
                            continue
                        if starts_run:
                            seeds.append(a)
                        starts_run = flow_of(mn, ops)[0] in (JUMP, STOP, IJUMP)
                    if not seeds:
                        break
                    for a in seeds:
                        instate[a] = seed
                        self.work.append(a)
                    self.run()
        prev = None
        for a, _size, mn, ops in lines:
            if a in instate:
                prev = instate[a]
            elif prev is not None and mn == "nop":
                instate[a] = prev
                self.insns[a] = ((a64.HINT, None, None, None), FALL, None)
            else:
                prev = None

    def result(self, start, end):
        insns, instate = self.insns, self.instate
        addrs = sorted(a for a in instate if a in insns)
        rules = [height(instate[a]) for a in addrs]
        calls = {a for a in addrs if insns[a][1] == CALL}
        return FunctionAnalysis(start, end, addrs, [4] * len(addrs), rules, calls, self.ranges[1:])
