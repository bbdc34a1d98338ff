"""One call instruction, as every architecture's ``calls`` kit reports it.

The stack scanner asks each architecture the same question of a candidate return address
(which call ends there, and where does it go?), so the answer has one shape whatever
decoded it: x86's variable-length calls, A64's fixed words.
"""
from collections import namedtuple


class CallSite(namedtuple("CallSite", "addr length target slot")):
    """One call instruction: where it starts (``addr``: its first byte, prefixes included),
    how long it is, and where it goes if known: ``target``, a direct call's callee;
    ``slot``, the memory word an indirect call through a fixed address reads (x86's
    ``call *slot``).  Both None when unknown (a call through a register)."""
    __slots__ = ()

    @property
    def end(self):
        """The return address this call leaves (pushed, or in the link register)."""
        return self.addr + self.length

    @property
    def direct(self):
        return self.target is not None
