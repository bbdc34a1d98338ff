"""UnwindRule: how to find a frame's caller at one pc, whoever worked it out.

CFI rows, a standard frame-pointer prologue, the stack-height analysis of code
without CFI, the kernel's signal-frame layout and the stack scanner all answer
one question — where is the CFA, where is the return address, where did the
function save each register it must preserve — so they all answer with this
type (framehop's ``UnwindRule``, in DWARF CFI's general terms so a CFI row
needs no translation).  ``swk_plugin.unwind.apply`` is the one place that
turns a rule and a frame into its caller.

Registers are DWARF numbers; what they mean is the architecture's business.
This module imports nothing, so every layer may use it.
"""

# Register rule kinds (DWARF 5, 6.4.1).
UNDEFINED = "undefined"
SAME_VALUE = "same_value"
OFFSET = "offset"              # saved at CFA + arg
VAL_OFFSET = "val_offset"      # the value is CFA + arg
REGISTER = "register"          # saved in register arg
EXPRESSION = "expression"      # saved at the address a DWARF expression computes (CFA pushed first)
VAL_EXPRESSION = "val_expression"
ARCHITECTURAL = "architectural"


class CfaRule:
    """CFA = register + offset, or the value of a DWARF expression (expr not None)."""
    __slots__ = ("reg", "offset", "expr")

    def __init__(self, reg, offset, expr=None):
        self.reg, self.offset, self.expr = reg, offset, expr

    def __eq__(self, other):
        return isinstance(other, CfaRule) and \
            (self.reg, self.offset, self.expr) == (other.reg, other.offset, other.expr)

    def __hash__(self):
        return hash((self.reg, self.offset, self.expr))

    def __repr__(self):
        if self.expr is not None:
            return f"CfaRule(expr={self.expr.hex()})"
        return f"CfaRule(r{self.reg}{self.offset:+d})"


class RegRule:
    """How to recover one register of the caller; ``arg`` depends on ``kind``."""
    __slots__ = ("kind", "arg")

    def __init__(self, kind, arg=None):
        self.kind, self.arg = kind, arg

    def __eq__(self, other):
        return isinstance(other, RegRule) and self.kind == other.kind and self.arg == other.arg

    def __hash__(self):
        return hash((self.kind, self.arg))

    def __repr__(self):
        arg = self.arg.hex() if isinstance(self.arg, (bytes, bytearray)) else self.arg
        return f"RegRule({self.kind}, {arg})"


RULE_UNDEFINED = RegRule(UNDEFINED)
RULE_SAME = RegRule(SAME_VALUE)


class UnwindRule:
    """The CFA, and where the caller's registers are, at one pc.

    ``regs`` maps a DWARF register to its RegRule; the return address is the
    rule of column ``ra_reg`` (x86's rip column, AArch64's x30: there a rule may
    leave it in the register itself).  Registers without a rule that the ABI
    says a callee preserves keep the callee's values.  ``ra_signed``: the
    return address carries a pointer-authentication code the architecture
    strips before it is a pc (AArch64's RA_SIGN_STATE, toggled by the CFI's
    DW_CFA_AARCH64_negate_ra_state, opcode 0x2d).  ``signal_frame``: this
    frame is a signal trampoline, so its caller was interrupted, not calling
    (looked up at its pc, not pc-1).  ``address``: where the rule starts to
    hold, when its producer knows (a CFI row's start).  Rules are shared
    between pcs and frames: never change one after it is made.
    """
    __slots__ = ("address", "cfa", "regs", "signal_frame", "ra_reg", "ra_signed", "plan")

    def __init__(self, address, cfa, regs, signal_frame=False, ra_reg=None, ra_signed=False):
        self.address, self.cfa, self.regs = address, cfa, regs
        self.signal_frame, self.ra_reg = signal_frame, ra_reg
        self.ra_signed = ra_signed
        #: (architecture name, compiled form) once swk_plugin.unwind.apply has compiled it.
        self.plan = None

    @classmethod
    def at_cfa(cls, cfa_reg, cfa_offset, ra_reg, ra_offset, saved=(), signal_frame=False, ra_signed=False):
        """The common shape: CFA = reg + offset, the return address and each saved
        register (``saved``: {regno: offset}) in memory at CFA + offset (``ra_offset``
        None: the return address stays in its register unless ``saved`` names it)."""
        regs = {r: RegRule(OFFSET, off) for r, off in dict(saved).items()}
        if ra_offset is not None:
            regs[ra_reg] = RegRule(OFFSET, ra_offset)
        return cls(None, CfaRule(cfa_reg, cfa_offset), regs, signal_frame, ra_reg, ra_signed)

    def saved_offsets(self):
        """{regno: offset from the CFA} of the registers saved in memory at a fixed place."""
        return {r: rr.arg for r, rr in self.regs.items() if rr.kind == OFFSET}

    def __eq__(self, other):
        return isinstance(other, UnwindRule) and \
            (self.cfa, self.regs, self.signal_frame, self.ra_reg, self.ra_signed) == \
            (other.cfa, other.regs, other.signal_frame, other.ra_reg, other.ra_signed)

    def __hash__(self):
        return hash((self.cfa, tuple(sorted(self.regs.items())), self.signal_frame, self.ra_reg, self.ra_signed))

    def __repr__(self):
        regs = ", ".join(f"r{r}={v!r}" for r, v in sorted(self.regs.items()))
        at = f"0x{self.address:x}, " if self.address is not None else ""
        sig = ", signal" if self.signal_frame else ""
        if self.ra_signed:
            sig += ", ra signed"
        return f"UnwindRule({at}{self.cfa!r}, {{{regs}}}{sig})"
