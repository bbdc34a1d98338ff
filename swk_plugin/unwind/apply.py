"""Applying an UnwindRule: the one place a caller frame is made from a callee.

``apply_rule`` works on registers alone (a callee's {regno: value} and a
memory reader in, the caller's registers out); ``caller_by_rule`` wraps it
for a walk: the caller Frame, with every recovered register and where it was
found, plus what the step learned about the callee (its CFA, whether it is a
signal trampoline) for the walker to record once it accepts the caller.
"""
from ..dwarf.expr import ExprError, evaluate
from ..errors import RuleError, SwkError, read_exact
from ..frame import ADDRESS, UNKNOWN_LOCATION, Frame, FrameKind, Location
from ..rule import (EXPRESSION, OFFSET, REGISTER, SAME_VALUE, UNDEFINED, VAL_EXPRESSION, VAL_OFFSET)
from .cfi import cfi_rule_at
from .modules import module_at


class UnwindResult:
    """The caller's registers as recovered by one rule.

    locations: where a recovered register was saved: ('addr', a) in memory, or
    ('reg', r) in the callee's register r (also for same-value and carried-over
    registers).  Registers computed by VAL_* rules, and the CFA-derived stack
    pointer, have no location.
    """
    __slots__ = ("cfa", "regs", "locations", "ra", "ra_undefined", "undefined")

    def __init__(self, cfa, regs, locations, ra, ra_undefined, undefined=frozenset()):
        self.cfa, self.regs, self.locations = cfa, regs, locations
        self.ra, self.ra_undefined = ra, ra_undefined
        #: registers the rule marks undefined (DW_CFA_undefined): lost in the caller
        self.undefined = undefined

    def __repr__(self):
        ra = "undefined" if self.ra_undefined else (None if self.ra is None else hex(self.ra))
        return f"UnwindResult(cfa=0x{self.cfa:x}, ra={ra}, regs={{{len(self.regs)}}})"


def apply_rule(rule, regs, read_mem, arch, strip=None):
    """Recover the caller's registers from the callee's ``regs`` by ``rule``.

    A return address the rule says is signed (``rule.ra_signed``) has its
    pointer-authentication code stripped (``strip(addr)``, default the
    architecture's own with its default mask) before it is the caller's pc
    (``UnwindResult.ra``); the RA column's register keeps the value as saved.

    ``arch`` gives the pointer size, the sp, fp and pc registers and the
    callee-saved set.  Registers the rule has no rule for keep the callee's
    value only if they are callee-saved (or the frame pointer); the
    return-address column also does when it is a real register (AArch64's
    x30), never when it is the pc itself.  Memory errors propagate as
    MemoryReadError; an unknown CFA register or a failing CFA / return-address
    expression raises RuleError.  Failures computing other registers just leave
    them unrecovered.
    """
    ptr_size, order = arch.ptr_size, arch.byteorder
    mask = (1 << (ptr_size * 8)) - 1

    def load(addr):
        return int.from_bytes(read_exact(read_mem, addr, ptr_size), order)

    def run(expr, initial, what):
        return _run(expr, initial, what, regs, read_mem, ptr_size, order)

    cfa = rule_cfa(rule, regs, read_mem, arch)

    ra_reg = rule.ra_reg
    out = {}
    locs = {}
    for r, rr in rule.regs.items():
        kind = rr.kind
        try:
            if kind == OFFSET:
                a = (cfa + rr.arg) & mask
                out[r] = load(a)
                locs[r] = ("addr", a)
            elif kind == VAL_OFFSET:
                out[r] = (cfa + rr.arg) & mask
            elif kind == REGISTER:
                v = regs.get(rr.arg)
                if v is not None:
                    out[r] = v
                    locs[r] = ("reg", rr.arg)
            elif kind == SAME_VALUE:
                v = regs.get(r)
                if v is not None:
                    out[r] = v
                    locs[r] = ("reg", r)
            elif kind == EXPRESSION:
                a = run(rr.arg, (cfa,), f"rule for register {r}") & mask
                out[r] = load(a)
                locs[r] = ("addr", a)
            elif kind == VAL_EXPRESSION:
                out[r] = run(rr.arg, (cfa,), f"rule for register {r}") & mask
            # UNDEFINED and ARCHITECTURAL: not recovered.
        except RuleError:
            if r == ra_reg:
                raise
    rules = rule.regs
    for r in arch.callee_saved:
        if r not in rules and regs.get(r) is not None:
            out[r] = regs[r]
            locs[r] = ("reg", r)
    fp_reg, sp_reg = arch.fp, arch.sp
    if fp_reg is not None and fp_reg not in rules and regs.get(fp_reg) is not None:
        out[fp_reg] = regs[fp_reg]
        locs[fp_reg] = ("reg", fp_reg)
    if sp_reg not in rules:
        out[sp_reg] = (cfa - arch.sp_below_cfa) & mask
        locs.pop(sp_reg, None)

    ra_rule = rules.get(ra_reg)
    if ra_rule is None and ra_reg != arch.pc and ra_reg not in out and regs.get(ra_reg) is not None:
        out[ra_reg] = regs[ra_reg]
        locs[ra_reg] = ("reg", ra_reg)
    ra = out.get(ra_reg)
    ra_undefined = ra is None and (ra_rule is None or ra_rule.kind == UNDEFINED)
    if ra is not None and rule.ra_signed:
        ra = strip(ra) if strip is not None else arch.strip_pointer_auth(ra)
    undefined = frozenset(r for r, rr in rules.items() if rr.kind == UNDEFINED and r not in (ra_reg, sp_reg))
    return UnwindResult(cfa, out, locs, ra, ra_undefined, undefined)


def _run(expr, initial, what, regs, read_mem, ptr_size, byteorder):
    try:
        res = evaluate(expr, read_reg=regs.get, read_mem=read_mem, ptr_size=ptr_size, initial_stack=initial,
                       byteorder=byteorder)
    except ExprError as exc:
        raise RuleError(f"{what}: {exc}") from None
    if res.kind not in ("memory", "value"):
        raise RuleError(f"{what}: expression yields a {res.kind} location, not an address")
    return res.value


def rule_cfa(rule, regs, read_mem, arch):
    """The CFA ``rule`` gives with the frame's ``regs``; RuleError where it cannot."""
    crule = rule.cfa
    if crule.expr is not None:
        return _run(crule.expr, (), "CFA expression", regs, read_mem, arch.ptr_size, arch.byteorder)
    base = regs.get(crule.reg)
    if base is None:
        if crule.reg is None:
            raise RuleError("CFA rule has no register")
        raise RuleError(f"CFA is based on register {crule.reg}, whose value is unknown")
    return (base + crule.offset) & ((1 << (8 * arch.ptr_size)) - 1)


def frame_cfa(frame, ps):
    """The frame's CFA: the one its caller's step found, else what the CFI at its pc says
    of its registers (GDB's DW_OP_call_frame_cfa in the outermost frame, which no step
    went past), else None."""
    if frame.cfa is not None:
        return frame.cfa
    lib, mod = module_at(ps, frame.lookup_pc)
    if mod is None:
        return None
    rule = cfi_rule_at(mod, frame.lookup_pc - lib.base)
    if rule is None:
        return None
    try:
        return rule_cfa(rule, callee_registers(frame, ps.arch), ps.read_memory, ps.arch)
    except (RuleError, SwkError):
        return None


def _location(loc):
    if loc is None:
        return Location()
    kind, val = loc
    return Location(ADDRESS, val) if kind == "addr" else Location.register(val)


def callee_registers(frame, arch):
    """The registers a rule is applied to: the frame's own, with its sp (and fp, pc)
    filled in from the frame where a hand-made frame's register set lacks them."""
    regs = frame.regs
    if regs.get(arch.sp) != frame.sp or (arch.fp not in regs and frame.fp) or arch.pc not in regs:
        regs = dict(regs)
        regs[arch.sp] = frame.sp
        if arch.fp not in regs and frame.fp:
            regs[arch.fp] = frame.fp
        regs.setdefault(arch.pc, frame.ra)
    return regs


class _Plan:
    """A rule compiled for one architecture: the common shape (CFA = register + offset,
    every rule "saved at CFA + n") applied without the general interpreter."""
    __slots__ = ("cfa_reg", "cfa_offset", "offsets", "carried", "carried_regs", "sets_sp", "ra_reg", "ra_carried",
                 "ra_loc")

    def __init__(self, rule, arch):
        rules = rule.regs
        self.cfa_reg, self.cfa_offset = rule.cfa.reg, rule.cfa.offset
        self.offsets = tuple((r, rr.arg) for r, rr in rules.items())
        carried = [r for r in arch.callee_saved if r not in rules]
        if arch.fp is not None and arch.fp not in rules and arch.fp not in carried:
            carried.append(arch.fp)
        self.carried = tuple((r, Location.register(r)) for r in sorted(carried))
        self.carried_regs = tuple(r for r, _loc in self.carried)
        self.sets_sp = arch.sp in rules
        self.ra_reg = rule.ra_reg
        # an RA column that is a real register (AArch64's x30) keeps its value without a rule
        self.ra_carried = rule.ra_reg not in rules and rule.ra_reg != arch.pc and rule.ra_reg not in carried
        self.ra_loc = Location.register(rule.ra_reg)


def compile_rule(rule, arch):
    """The rule's _Plan for ``arch`` (kept on the rule), or None where only the general
    interpreter will do (expressions, register-to-register rules, undefined columns)."""
    plan = rule.plan
    if plan is not None and plan[0] == arch.name:
        return plan[1]
    simple = rule.cfa.expr is None and rule.cfa.reg is not None and \
        all(rr.kind == OFFSET for rr in rule.regs.values())
    compiled = _Plan(rule, arch) if simple else None
    rule.plan = (arch.name, compiled)
    return compiled


def caller_by_rule(callee, rule, ps):
    """(caller Frame, CFA) for ``callee`` by ``rule``; the caller is None when the rule
    marks the callee outermost (its return address undefined).

    The caller carries what the step found about the callee — ``callee_cfa`` and,
    for a signal trampoline, ``callee_kind`` — for the walker to record when it
    accepts the caller; ``callee`` itself is not changed.  Raises MemoryReadError
    and RuleError.
    """
    arch = ps.arch
    plan = compile_rule(rule, arch)
    if plan is not None:
        return _caller_by_plan(callee, rule, plan, ps, arch)
    regs = callee_registers(callee, arch)
    if callee.more_regs is not None:
        regs = _with_parked(rule, regs, callee.more_regs, arch)
    res = apply_rule(rule, regs, ps.read_memory, arch, ps.strip_return_address)
    if res.ra_undefined or res.ra is None:
        return None, res.cfa
    regs = res.regs
    sp = regs.get(arch.sp, (res.cfa - arch.sp_below_cfa) & arch.address_mask)
    regs[arch.sp] = sp
    regs[arch.pc] = res.ra
    locs = {reg: _location(loc) for reg, loc in res.locations.items()}
    caller = _caller(callee, rule, res.ra, sp, regs, locs, res.cfa, arch)
    if res.undefined:
        caller.lost = res.undefined
    return caller, res.cfa


def _with_parked(rule, regs, more_regs, arch):
    """``regs`` with the registers beyond the frame's set that a rule takes a caller's
    register from (a leaf parks r11 or r15 in an FPR on s390x: ``ldgr %f0,%r11``), read from
    ``more_regs``: a thread's register set holds only its general registers until one is asked for."""
    wanted = [rr.arg for rr in rule.regs.values() if rr.kind == REGISTER and rr.arg not in regs]
    if not wanted:
        return regs
    regs = dict(regs)
    for regno in wanted:
        value = more_regs(regno)
        if value is not None:
            regs[regno] = value & arch.address_mask
    return regs


def thread_register_source(ps, thread):
    """``more_regs`` of a thread's innermost frame: its floating-point registers as integers
    of their first register-sized bytes (the 64-bit word ``ldgr`` put there)."""
    arch = ps.arch

    def more_regs(regno):
        if regno not in arch.fp_registers:
            return None
        try:
            return arch.fp_register_word(regno, ps.get_fpreg_value(regno, thread))
        except SwkError:
            return None
    return more_regs


def _caller_by_plan(callee, rule, plan, ps, arch):
    regs = callee.regs
    base = regs.get(plan.cfa_reg)
    if base is None:
        regs = callee_registers(callee, arch)
        base = regs.get(plan.cfa_reg)
        if base is None:
            raise RuleError(f"CFA is based on register {plan.cfa_reg}, whose value is unknown")
    mask = arch.address_mask
    cfa = (base + plan.cfa_offset) & mask
    read_pointer = ps.read_pointer
    out = {}
    for r, off in plan.offsets:
        out[r] = read_pointer((cfa + off) & mask)
    for r in plan.carried_regs:
        v = regs.get(r)
        if v is not None:
            out[r] = v
    ra_reg = plan.ra_reg
    if plan.ra_carried:
        v = regs.get(ra_reg)
        if v is not None:
            out[ra_reg] = v
    ra = out.get(ra_reg)
    if ra is None:
        return None, cfa
    if rule.ra_signed:
        ra = ps.strip_return_address(ra)
    sp_reg = arch.sp
    sp = out[sp_reg] if plan.sets_sp else (cfa - arch.sp_below_cfa) & mask
    out[sp_reg] = sp
    out[arch.pc] = ra
    caller = Frame(ra, sp, out.get(arch.fp, 0), callee.walker, out, copy=False)
    caller.locations_later(_plan_locations, plan, cfa, mask, out, arch)
    caller.rule = rule
    caller.callee_cfa = cfa
    if rule.signal_frame:
        caller.callee_kind = FrameKind.SIGNAL
        caller.non_call = True
    return caller, cfa


def _plan_locations(plan, cfa, mask, regs, arch):
    """Where _caller_by_plan found each register, made only when a caller asks: saved at
    CFA + n, or kept in the callee's register (those it carried over)."""
    locs = {r: Location(ADDRESS, (cfa + off) & mask) for r, off in plan.offsets}
    for r, loc in plan.carried:
        if r in regs and r not in locs:
            locs[r] = loc
    if plan.ra_carried and plan.ra_reg in regs and plan.ra_reg not in locs:
        locs[plan.ra_reg] = plan.ra_loc
    return (locs, locs.get(plan.ra_reg, UNKNOWN_LOCATION), locs.get(arch.sp, UNKNOWN_LOCATION),
            locs.get(arch.fp, UNKNOWN_LOCATION))


def _caller(callee, rule, ra, sp, regs, locs, cfa, arch):
    caller = Frame(ra, sp, regs.get(arch.fp, 0), callee.walker, regs, reg_locations=locs, copy=False)
    caller.ra_location = locs.get(rule.ra_reg, UNKNOWN_LOCATION)
    caller.fp_location = locs.get(arch.fp, UNKNOWN_LOCATION)
    caller.sp_location = locs.get(arch.sp, UNKNOWN_LOCATION)
    caller.rule = rule
    caller.callee_cfa = cfa
    if rule.signal_frame:
        caller.callee_kind = FrameKind.SIGNAL
        caller.non_call = True            # interrupted at its pc: looked up there, not at pc-1
    return caller


__all__ = ["UnwindResult", "apply_rule", "callee_registers", "caller_by_rule", "compile_rule", "frame_cfa",
           "rule_cfa", "thread_register_source", "UNDEFINED"]
