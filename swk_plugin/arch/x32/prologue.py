"""The standard x32 frame: x86-64's (arch/x86_64/prologue.py: 8-byte slots, %rbp the frame
base) where the compiler writes the frame base's mov with 32-bit operands, ``push %rbp;
mov %esp,%ebp``, as GCC does for -mx32 — both widths are accepted."""
from ..x86_64.prologue import (_PUSH, _PUSH_REX, ENDBR64, MOV_RSP_RBP, PUSH_RBP, READ_SIZE, RET,  # noqa: F401
                               FrameShape, Prologue)
from ..x86_64 import registers as R

#: mov %esp,%ebp (89 /r, 8b /r) and mov %rsp,%rbp.
MOV_SP_FP = (b"\x89\xe5", b"\x8b\xec") + MOV_RSP_RBP

SHAPE = FrameShape(R, ENDBR64, PUSH_RBP, MOV_SP_FP, _PUSH, _PUSH_REX)


def parse_prologue(code, start):
    """A Prologue if ``code`` (bytes at ``start``) opens a standard frame, else None."""
    return SHAPE.parse(code, start)


def is_return(code):
    """Whether ``code`` (bytes at a pc) starts with a return instruction."""
    return bool(code) and code[0] in RET
