"""The standard i386 frame: ``[endbr32] push %ebp; mov %esp,%ebp``, as unwind rules.

The same rules as x86-64's (arch/x86_64/prologue.py) with 4-byte slots: in the body
the CFA is %ebp + 8, the return address at CFA-4 and the caller's %ebp at CFA-8;
%ebx, %esi and %edi pushed right after the prologue sit just below it.
"""
from ...rule import UnwindRule
from ..x86_64.prologue import RET, READ_SIZE, FrameShape, Prologue  # noqa: F401 (re-exported)
from . import registers as R

ENDBR32 = b"\xf3\x0f\x1e\xfb"
PUSH_EBP = b"\x55"
#: mov %esp,%ebp in both encodings (89 /r and 8b /r).
MOV_ESP_EBP = (b"\x89\xe5", b"\x8b\xec")
#: push %ebx, %ebp, %esi, %edi -> DWARF number.
_PUSH = {0x53: 3, 0x55: 5, 0x56: 6, 0x57: 7}

SHAPE = FrameShape(R, ENDBR32, PUSH_EBP, MOV_ESP_EBP, _PUSH)
AT_ENTRY, AFTER_PUSH, AT_RET = SHAPE.at_entry, SHAPE.after_push, SHAPE.at_ret


def parse_prologue(code, start):
    """A Prologue if ``code`` (bytes at ``start``) opens a standard frame, else None."""
    return SHAPE.parse(code, start)


def is_return(code):
    """Whether ``code`` (bytes at a pc) starts with a return instruction."""
    return bool(code) and code[0] in RET


#: The body of a standard frame where the code cannot be read (x86-64's, 4-byte slots).
frame_record = UnwindRule.at_cfa(R.fp, 2 * R.ptr_size, R.ra, -R.ptr_size, {R.fp: -2 * R.ptr_size})
