"""Why a DWARF expression could not be evaluated, one class per reason.

Callers tell failures apart by class, never by message (CFI turns any of them into a
RuleError; the locals turn an unavailable register or entry value into <optimized out>
and show the rest as GDB's ``<error: ...>``).  The message is the one line a user
sees: GDB 13's words (dwarf2/expr.c, valarith.c) wherever GDB has a message for the
same failure, since swk's output is compared with GDB's line for line.

Memory that cannot be read is not here: it is errors.MemoryReadError, which every
memory reader in swk raises and every caller already handles.
"""
from ..errors import SwkError

__all__ = ["ExprError", "StackUnderflow", "UnhandledOpcode", "MalformedExpression", "TypeMismatch",
           "DivisionByZero", "LoopDetected", "StepLimit", "Unavailable", "RegisterUnavailable",
           "EntryValueUnavailable", "ContextUnavailable"]


class ExprError(SwkError):
    """A DWARF expression that cannot be evaluated; str() is the line a user sees."""


class StackUnderflow(ExprError):
    """An operation asked for more stack entries than there are (GDB's fetch/pop/swap/rot)."""

    @classmethod
    def fetching(cls, position, depth):
        return cls(f"Asked for position {position} of stack, stack only has {depth} elements on it.")

    @classmethod
    def popping(cls):
        return cls("dwarf expression stack underflow")

    @classmethod
    def needing(cls, name, need, depth):
        return cls(f"Not enough elements for {name}.  Need {need}, have {depth}.")


class UnhandledOpcode(ExprError):
    """An opcode GDB 13 does not evaluate (DW_OP_xderef*, DW_OP_call_ref, vendor codes)."""

    def __init__(self, op):
        super().__init__(f"Unhandled dwarf expression opcode 0x{op:x}")
        self.op = op


class MalformedExpression(ExprError):
    """Bytes that are no valid expression: a truncated operand, a jump outside it, a
    register location followed by more than a piece."""


class TypeMismatch(ExprError):
    """Typed stack values an operation cannot combine (different base types, a float
    where an integer is needed, a constant or reinterpretation of the wrong size)."""


class DivisionByZero(ExprError):
    """DW_OP_div of integers by zero (DW_OP_mod by zero is the dividend, as in GDB)."""

    def __init__(self):
        super().__init__("Division by zero")


class LoopDetected(ExprError):
    """Expressions nested deeper than GDB evaluates (its m_max_recursion_depth: a chain of
    DW_OP_entry_value through call sites, each evaluating the next)."""

    def __init__(self, depth):
        super().__init__(f"DWARF-2 expression error: Loop detected ({depth}).")
        self.depth = depth


class StepLimit(ExprError):
    """More jumps back than any real expression makes: a branch looping for ever (GDB
    waits for Ctrl-C; a backtrace cannot)."""

    def __init__(self, steps):
        super().__init__(f"expression exceeds {steps} steps back (a loop?)")


class Unavailable(ExprError):
    """Something the expression reads that the frame cannot supply (its hook missing, or
    answering None)."""


class RegisterUnavailable(Unavailable):
    """A register the frame has no value for (not recovered, lost by a step)."""

    def __init__(self, regno):
        super().__init__(f"register {regno} is unavailable")
        self.regno = regno


class EntryValueUnavailable(Unavailable):
    """DW_OP_entry_value / DW_OP_GNU_parameter_ref that no call site resolves (GDB's
    NO_ENTRY_VALUE_ERROR: the value is optimized out)."""


class ContextUnavailable(Unavailable):
    """An operation needing what this evaluation was not given: a frame's registers, its
    frame base or CFA, the object's address, .debug_addr, thread-local storage."""
