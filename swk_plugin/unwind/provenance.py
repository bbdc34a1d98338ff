"""Register provenance: where each register of a frame came from, and by which rule.

Every step makes a caller from its callee by one UnwindRule (unwind.apply), whoever worked
the rule out: the CFI, a frame-pointer prologue, the stack-height analysis, the signal
frame's layout, the scanner.  The caller keeps that rule (``Frame.rule``), so the origin of
each of its registers is known without re-running anything:

- ``saved``: read from memory at ``at``, where the callee saved it (CFI ``offset`` /
  ``expression``: GDB's `info frame` "Saved registers");
- ``register``: the value of the callee's register ``at`` (``register``);
- ``computed``: computed, not read (``val_offset``, ``val_expression``, and the stack
  pointer the ABI makes the CFA);
- ``same``: unchanged from the callee — because the CFI says so (``same_value``) or, with
  no rule, because the ABI makes the callee preserve it (``by`` is then ``abi``);
- ``undefined``: the rule says the value is lost (DW_CFA_undefined, or the architecture's
  volatile registers as GDB's DWARF unwinder takes them): GDB's ``<not saved>``;
- ``unknown``: nothing says; GDB takes the inner frame's value ("unspecified" is "same
  value" in GDB's DWARF unwinder), and so do swk's variables (locals.frames.register_view);
- ``context``: the thread's own register (the innermost frame).

Rules are written as readelf --debug-dump=frames-interp writes a CFI row (``c-16``,
``v+8``, ``s``, ``u``, a register's name, ``exp``, ``vexp``; the CFA as ``rsp+16`` or
``exp``), so a row can be checked against the toolchain's own reading of it.
"""
from collections import namedtuple

from ..frame import ADDRESS
from ..rule import (EXPRESSION, OFFSET, REGISTER, SAME_VALUE, UNDEFINED, VAL_EXPRESSION, VAL_OFFSET)

SAVED, IN_REGISTER, COMPUTED, SAME = "saved", "register", "computed", "same"
LOST, UNKNOWN, CONTEXT = "undefined", "unknown", "context"


class Origin(namedtuple("Origin", "how rule by at")):
    """One register's provenance: ``how`` (the kinds above), ``rule`` (readelf's notation,
    None without one), ``by`` (what made the rule: the step's trust — ``cfi``,
    ``frame-pointer``, ``analysis``, ``signal``, ``scan`` — or ``abi``), ``at`` (an address
    for ``saved``, a register's name for ``register``)."""
    __slots__ = ()

    def as_json(self):
        out = {"how": self.how}
        if self.rule is not None:
            out["rule"] = self.rule
        if self.by is not None:
            out["by"] = self.by
        if self.at is not None:
            out["at"] = self.at
        return out


def rule_text(rr, arch):
    """A register rule as readelf writes it in a CFI row."""
    kind = rr.kind
    if kind == OFFSET:
        return f"c{rr.arg:+d}"
    if kind == VAL_OFFSET:
        return f"v{rr.arg:+d}"
    if kind == REGISTER:
        return arch.reg_name(rr.arg)
    if kind == SAME_VALUE:
        return "s"
    if kind == UNDEFINED:
        return "u"
    if kind == EXPRESSION:
        return "exp"
    if kind == VAL_EXPRESSION:
        return "vexp"
    return "n/a"                     # architectural: readelf's word for a rule it cannot show


def cfa_text(rule, arch):
    """The rule's CFA as readelf writes it (``rsp+16``, ``exp``)."""
    cfa = rule.cfa
    if cfa.expr is not None:
        return "exp"
    return f"{arch.reg_name(cfa.reg)}{cfa.offset:+d}"


def register_origins(frame, arch):
    """{DWARF regno: Origin} for the general registers of ``frame`` (arch.general), from the
    rule its step applied (``frame.rule``); the innermost frame's are the thread's own.
    Frames no rule made (the top, a tail-call frame) give ``context`` for the registers they
    hold and ``unknown`` for the rest."""
    rule = frame.rule
    regs = frame.regs
    names = [(r, n) for r, n in enumerate(arch.general) if n]
    if rule is None:
        how = CONTEXT if frame.is_top else SAME
        return {r: Origin(how if r in regs else UNKNOWN, None, None, None) for r, _n in names}
    by = frame.trust
    locs = frame.reg_locations
    rules = rule.regs
    out = {}
    for r, _name in names:
        rr = rules.get(r)
        if rr is None and r == arch.pc and rule.ra_reg != arch.pc:
            rr = rules.get(rule.ra_reg)         # the pc is the return-address column's value
        if rr is not None:
            out[r] = _ruled(r, rr, regs, locs, arch, by)
        elif r == arch.pc and r in regs and rule.ra_reg != arch.pc:
            # no rule for the return-address register: the return address is still in it (a leaf's lr)
            out[r] = Origin(IN_REGISTER, None, by, arch.reg_name(rule.ra_reg))
        elif r == arch.sp:
            out[r] = Origin(COMPUTED, "cfa" if not arch.sp_below_cfa else f"cfa-{arch.sp_below_cfa}", by, None)
        elif r in regs and (r in arch.callee_saved or r == arch.fp or r == rule.ra_reg):
            out[r] = Origin(SAME, None, "abi", None)
        else:
            out[r] = Origin(UNKNOWN, None, None, None)
    return out


def _ruled(r, rr, regs, locs, arch, by):
    text = rule_text(rr, arch)
    kind = rr.kind
    if kind == UNDEFINED or r not in regs:
        # a rule that failed (an expression reading what is gone) leaves the value unknown
        return Origin(LOST if kind == UNDEFINED else UNKNOWN, text, by, None)
    if kind in (OFFSET, EXPRESSION):
        loc = locs.get(r)
        return Origin(SAVED, text, by, loc.val if loc is not None and loc.location is ADDRESS else None)
    if kind == REGISTER:
        return Origin(IN_REGISTER, text, by, arch.reg_name(rr.arg))
    if kind == SAME_VALUE:
        return Origin(SAME, text, by, None)
    return Origin(COMPUTED, text, by, None)


def rule_summary(frame, arch):
    """What JSON says of the rule itself: its CFA (readelf's notation) and, for a CFI row,
    where the row starts in its object (``row``, unbiased) — None for a frame no rule made."""
    rule = frame.rule
    if rule is None:
        return None
    out = {"by": frame.trust, "cfa": cfa_text(rule, arch)}
    if rule.address is not None:
        out["row"] = rule.address
    return out


__all__ = ["COMPUTED", "CONTEXT", "IN_REGISTER", "LOST", "Origin", "SAME", "SAVED", "UNKNOWN", "cfa_text",
           "register_origins", "rule_summary", "rule_text"]
