"""The standard x86-64 frame: ``[endbr64] push %rbp; mov %rsp,%rbp``, as unwind rules.

A function that opens with it keeps %rbp as its frame base, so the frame
record (saved %rbp, return address) is at %rbp.  Where the function is
stopped decides the rule: before the push, between push and mov, in the body,
or on its ``ret`` (the epilogue has undone the frame).  Registers pushed right
after the prologue sit just below the saved %rbp, so callers get their true
values too.
"""
from ...rule import UnwindRule
from . import registers as R

ENDBR64 = b"\xf3\x0f\x1e\xfa"
PUSH_RBP = b"\x55"
MOV_RSP_RBP = (b"\x48\x89\xe5", b"\x48\x8b\xec")
#: push %reg encodings -> DWARF number.
_PUSH = {0x53: 3, 0x55: 6}
_PUSH_REX = {0x54: 12, 0x55: 13, 0x56: 14, 0x57: 15}
#: ret, ret $imm16.
RET = (0xc3, 0xc2)
#: Bytes to read at a function's entry to parse its prologue.
READ_SIZE = 32
_P = R.ptr_size

#: Rules that do not depend on the function: nothing pushed yet, %rbp pushed but not
#: yet the frame base, and at the final ret.
AT_ENTRY = UnwindRule.at_cfa(R.sp, _P, R.ra, -_P)
AFTER_PUSH = UnwindRule.at_cfa(R.sp, 2 * _P, R.ra, -_P, {R.fp: -2 * _P})
AT_RET = AT_ENTRY


class Prologue:
    """Where the standard frame is set up in one function."""
    __slots__ = ("start", "push_at", "mov_at", "body_at", "saved", "body")

    def __init__(self, start, push_at, mov_at, body_at, saved):
        self.start = start          # function entry
        self.push_at = push_at      # address of push %rbp
        self.mov_at = mov_at        # address of mov %rsp,%rbp
        self.body_at = body_at      # first address with %rbp = frame base
        self.saved = saved          # [(dwarf regno, offset from %rbp)]
        # In the body: CFA = rbp + 16, the return address and saved rbp just below it.
        cfa_from_fp = 2 * _P
        pushed = {reg: off - cfa_from_fp for reg, off in saved}
        pushed[R.fp] = -2 * _P
        self.body = UnwindRule.at_cfa(R.fp, cfa_from_fp, R.ra, -_P, pushed)

    def rule_at(self, pc, exact, at_ret=False):
        """The UnwindRule at ``pc``: ``exact`` for a frame stopped there (the top frame or
        one a signal interrupted), else pc is inside a call; ``at_ret``: pc is a ret."""
        if exact:
            if pc <= self.push_at:
                return AT_ENTRY
            if pc <= self.mov_at:
                return AFTER_PUSH
            if at_ret:
                return AT_RET
        return self.body

    def __repr__(self):
        return f"<Prologue 0x{self.start:x} body 0x{self.body_at:x} saved {self.saved}>"


def parse_prologue(code, start):
    """A Prologue if ``code`` (bytes at ``start``) opens a standard frame, else None."""
    i = 0
    if code.startswith(ENDBR64):
        i = 4
    if code[i:i + 1] != PUSH_RBP:
        return None
    push_at = start + i
    i += 1
    if code[i:i + 3] not in MOV_RSP_RBP:
        return None
    mov_at = start + i
    i += 3
    body_at = start + i
    saved = []
    off = 0
    while i < len(code):
        b = code[i]
        if b in _PUSH and b != 0x55:
            off -= _P
            saved.append((_PUSH[b], off))
            i += 1
        elif b == 0x41 and i + 1 < len(code) and code[i + 1] in _PUSH_REX:
            off -= _P
            saved.append((_PUSH_REX[code[i + 1]], off))
            i += 2
        else:
            break
    return Prologue(start, push_at, mov_at, body_at, saved)


def is_return(code):
    """Whether ``code`` (bytes at a pc) starts with a return instruction."""
    return bool(code) and code[0] in RET
