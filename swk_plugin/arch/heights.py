"""What a stack-height analysis of any instruction set reports.

An architecture's analysis (``arch.analysis.analyze``: its decoder feeding
arch/dataflow.py's engine) decodes one function and, for every instruction
reached from its entry, says how far the stack pointer (and the frame pointer,
once it is a frame base) is below the CFA and where each callee-saved register
was saved.  Those facts are a StackHeight; its ``rule`` is the same knowledge
as an UnwindRule, which is all the steppers use.
"""
from bisect import bisect_right

from ..rule import UnwindRule

#: FunctionAnalysis.rule_at's answer for a pc the analysis never reached from the entry.
NOT_REACHED = object()


class AnalysisError(Exception):
    """The function could not be analysed (unreadable, too large)."""


class StackHeight:
    """CFA - sp (``sp_offset``) and CFA - fp (``fp_offset``) wherever each is known, and
    ``saved`` {regno: offset from the CFA}; ``rule`` says the same as an UnwindRule.

    The rule's CFA is sp-based whenever sp's offset is known: a caller's sp is
    exact (it is the callee's CFA) while its fp comes from a stack slot that may
    have been overwritten (a smashed frame record).  fp is the base only where
    sp moved in ways the analysis cannot follow (alloca, ``and $-N,%rsp``).
    Shared between instructions: treat as immutable.
    """
    __slots__ = ("sp_offset", "fp_offset", "saved", "rule")

    def __init__(self, sp_offset, fp_offset, saved, rule):
        self.sp_offset, self.fp_offset = sp_offset, fp_offset
        self.saved = dict(saved)
        self.rule = rule

    @classmethod
    def make(cls, arch, sp_offset, fp_offset, saved, ra_on_stack=True, ra_signed=False):
        """The height of ``arch`` (a registers module: sp, fp, ra, ptr_size).  ``ra_on_stack``:
        a call pushed the return address just below the CFA; otherwise it is in ``arch.ra``
        unless ``saved`` says where that was stored.  ``ra_signed``: it carries a PAC."""
        if sp_offset is not None:
            base, off = arch.sp, sp_offset
        else:
            base, off = arch.fp, fp_offset
        rule = UnwindRule.at_cfa(base, off, arch.ra, -arch.ptr_size if ra_on_stack else None, saved,
                                 ra_signed=ra_signed)
        return cls(sp_offset, fp_offset, saved, rule)

    def __eq__(self, other):
        return isinstance(other, StackHeight) and (self.sp_offset, self.fp_offset, self.saved) == \
            (other.sp_offset, other.fp_offset, other.saved)

    def __hash__(self):
        return hash((self.sp_offset, self.fp_offset, tuple(sorted(self.saved.items()))))

    def __repr__(self):
        base = f"sp{self.sp_offset:+d}" if self.sp_offset is not None else f"fp{self.fp_offset:+d}"
        saved = " ".join(f"r{r}@cfa{o:+d}" for r, o in sorted(self.saved.items()))
        return f"<StackHeight cfa={base}{' ' + saved if saved else ''}>"


class FunctionAnalysis:
    """The heights of one analysed function: one StackHeight (or None: unknown) per
    instruction reached from its entry, in address order."""
    __slots__ = ("start", "end", "addrs", "sizes", "rules", "calls", "generation", "extras")

    def __init__(self, start, end, addrs, sizes, rules, calls, extras=()):
        self.start, self.end = start, end
        self.addrs, self.sizes, self.rules, self.calls = addrs, sizes, rules, calls
        self.extras = tuple(extras)
        self.generation = None

    def __len__(self):
        return len(self.addrs)

    def index_of(self, pc, exact):
        """Index of the instruction at (exact) or holding pc, or -1."""
        i = bisect_right(self.addrs, pc) - 1
        if i < 0:
            return -1
        a = self.addrs[i]
        if a == pc if exact else a + self.sizes[i] > pc:
            return i
        return -1

    def rule_at(self, pc, exact):
        """The StackHeight at ``pc``, None where the height is unknown, NOT_REACHED
        where no path from the entry gets there.  exact=False: pc is a return
        address minus one; the answer is the call's holding it (NOT_REACHED when
        no reached call holds it)."""
        i = self.index_of(pc, exact)
        if i < 0 or (not exact and self.addrs[i] not in self.calls):
            return NOT_REACHED
        return self.rules[i]

    def instructions(self):
        """[(address, size, StackHeight or None)] for tests and tools."""
        return list(zip(self.addrs, self.sizes, self.rules))

    def __repr__(self):
        end = f"0x{self.end:x}" if self.end is not None else "?"
        return f"<FunctionAnalysis 0x{self.start:x}-{end}: {len(self.addrs)} instructions>"
