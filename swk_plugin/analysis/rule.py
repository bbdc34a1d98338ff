"""FrameRule: what the analysis knows at one instruction, in CFI's terms."""

RSP, RBP = 7, 6


class FrameRule:
    """CFA = reg(cfa_reg) + cfa_offset; the return address at CFA + ra_offset;
    callee-saved register r at CFA + saved[r].

    ``sp_offset`` / ``fp_offset`` are CFA - rsp and CFA - rbp wherever each is
    known (both can be, e.g. right after ``mov %rsp,%rbp``).  ``cfa_reg`` picks
    rsp whenever its offset is known: a caller's rsp is exact (it is the
    callee's CFA) while its rbp comes from a stack slot that may have been
    overwritten (a smashed frame record).  rbp is the base only where rsp
    moved in ways the analysis cannot follow (alloca, ``and $-N,%rsp``).
    Rules are shared between instructions: treat them as immutable.
    """
    __slots__ = ("cfa_reg", "cfa_offset", "saved", "ra_offset", "sp_offset", "fp_offset")

    def __init__(self, sp_offset, fp_offset, saved):
        self.sp_offset, self.fp_offset = sp_offset, fp_offset
        if sp_offset is not None:
            self.cfa_reg, self.cfa_offset = RSP, sp_offset
        else:
            self.cfa_reg, self.cfa_offset = RBP, fp_offset
        self.saved = dict(saved)
        self.ra_offset = -8

    def cfa(self, regs):
        """The CFA given the frame's {regno: value}, or None without the base register."""
        base = regs.get(self.cfa_reg)
        return None if base is None else base + self.cfa_offset

    def __eq__(self, other):
        return isinstance(other, FrameRule) and (self.sp_offset, self.fp_offset, self.saved) == \
            (other.sp_offset, other.fp_offset, other.saved)

    def __hash__(self):
        return hash((self.sp_offset, self.fp_offset, tuple(sorted(self.saved.items()))))

    def __repr__(self):
        base = "rbp" if self.cfa_reg == RBP else "rsp"
        saved = " ".join(f"r{r}@cfa{o:+d}" for r, o in sorted(self.saved.items()))
        return f"<FrameRule cfa={base}{self.cfa_offset:+d}{' ' + saved if saved else ''}>"
