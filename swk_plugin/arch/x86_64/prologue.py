"""The standard x86-64 frame: ``[endbr64] push %rbp; mov %rsp,%rbp``, as unwind rules.

A function that opens with it keeps %rbp as its frame base, so the frame
record (saved %rbp, return address) is at %rbp.  Where the function is
stopped decides the rule: before the push, between push and mov, in the body,
or on its ``ret`` (the epilogue has undone the frame).  Registers pushed right
after the prologue sit just below the saved %rbp, so callers get their true
values too.

``FrameShape`` holds what differs between x86-64 and i386 (arch/i386/prologue.py:
``[endbr32] push %ebp; mov %esp,%ebp``): the registers, the encodings, the slot size.
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


class FrameShape:
    """One instruction set's standard frame: ``regs`` (a registers module: sp, fp, ra,
    ptr_size), the endbr, the push of the frame pointer, its mov encodings, and the
    pushes of callee-saved registers that may follow ({opcode: DWARF number}, and
    {byte after 0x41: DWARF number} for x86-64's REX.B pushes)."""

    def __init__(self, regs, endbr, push_fp, mov_sp_fp, push, push_rex=None):
        self.R, self.endbr, self.push_fp, self.mov_sp_fp = regs, endbr, push_fp, mov_sp_fp
        self.push, self.push_rex = push, push_rex or {}
        p = regs.ptr_size
        #: Rules that do not depend on the function: nothing pushed yet, the frame pointer
        #: pushed but not yet the frame base, and at the final ret.
        self.at_entry = UnwindRule.at_cfa(regs.sp, p, regs.ra, -p)
        self.after_push = UnwindRule.at_cfa(regs.sp, 2 * p, regs.ra, -p, {regs.fp: -2 * p})
        self.at_ret = self.at_entry

    def parse(self, code, start):
        """A Prologue if ``code`` (bytes at ``start``) opens a standard frame, else None."""
        i = len(self.endbr) if code.startswith(self.endbr) else 0
        if code[i:i + 1] != self.push_fp:
            return None
        push_at = start + i
        i += 1
        mov = next((m for m in self.mov_sp_fp if code[i:i + len(m)] == m), None)
        if mov is None:
            return None
        mov_at = start + i
        i += len(mov)
        body_at = start + i
        saved = []
        off = 0
        p = self.R.ptr_size
        fp_op = self.push_fp[0]
        while i < len(code):
            b = code[i]
            if b in self.push and b != fp_op:
                off -= p
                saved.append((self.push[b], off))
                i += 1
            elif b == 0x41 and i + 1 < len(code) and code[i + 1] in self.push_rex:
                off -= p
                saved.append((self.push_rex[code[i + 1]], off))
                i += 2
            else:
                break
        return Prologue(self, start, push_at, mov_at, body_at, saved)


class Prologue:
    """Where the standard frame is set up in one function."""
    __slots__ = ("shape", "start", "push_at", "mov_at", "body_at", "saved", "body")

    def __init__(self, shape, start, push_at, mov_at, body_at, saved):
        self.shape = shape
        self.start = start          # function entry
        self.push_at = push_at      # address of the push of the frame pointer
        self.mov_at = mov_at        # address of the mov making it the frame base
        self.body_at = body_at      # first address with the frame pointer = frame base
        self.saved = saved          # [(dwarf regno, offset from the frame pointer)]
        # In the body: CFA = fp + 2 slots, the return address and saved fp just below it.
        regs, p = shape.R, shape.R.ptr_size
        cfa_from_fp = 2 * p
        pushed = {reg: off - cfa_from_fp for reg, off in saved}
        pushed[regs.fp] = -2 * p
        self.body = UnwindRule.at_cfa(regs.fp, cfa_from_fp, regs.ra, -p, pushed)

    def rule_at(self, pc, exact, at_ret=False):
        """The UnwindRule at ``pc``: ``exact`` for a frame stopped there (the top frame or
        one a signal interrupted), else pc is inside a call; ``at_ret``: pc is a ret."""
        if exact:
            if pc <= self.push_at:
                return self.shape.at_entry
            if pc <= self.mov_at:
                return self.shape.after_push
            if at_ret:
                return self.shape.at_ret
        return self.body

    def __repr__(self):
        return f"<Prologue 0x{self.start:x} body 0x{self.body_at:x} saved {self.saved}>"


SHAPE = FrameShape(R, ENDBR64, PUSH_RBP, MOV_RSP_RBP, _PUSH, _PUSH_REX)
AT_ENTRY, AFTER_PUSH, AT_RET = SHAPE.at_entry, SHAPE.after_push, SHAPE.at_ret


def parse_prologue(code, start):
    """A Prologue if ``code`` (bytes at ``start``) opens a standard frame, else None."""
    return SHAPE.parse(code, start)


def is_return(code):
    """Whether ``code`` (bytes at a pc) starts with a return instruction."""
    return bool(code) and code[0] in RET


#: The body of a standard frame, followed where the code cannot be read at all (a core without
#: its program: GDB's i386 unwinder and eu-stack take the frame pointer then): CFA = fp + 2
#: slots, the caller's fp below the return address.
frame_record = UnwindRule.at_cfa(R.fp, 2 * R.ptr_size, R.ra, -R.ptr_size, {R.fp: -2 * R.ptr_size})
