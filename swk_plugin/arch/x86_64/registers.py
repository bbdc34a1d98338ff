"""x86-64 registers (System V psABI, figure 3.36: DWARF register number mapping)."""

#: DWARF register names indexed by DWARF number; also GDB's and LLDB's names.
DWARF_NAMES = (
    "rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
    "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
    "rip",
)
sp = 7
fp = 6
ra = 16
pc = 16
ptr_size = 8
#: rbx, rbp, r12-r15: a callee must preserve them.
CALLEE_SAVED = frozenset({3, 6, 12, 13, 14, 15})
#: DWARF number of %rflags, which the general table does not name.
RFLAGS = 49


def reg_size(regno):
    """Bytes of a register by DWARF number: xmm0-15 (17-32), st0-7 (33-40), else 8."""
    if 17 <= regno <= 32:
        return 16
    if 33 <= regno <= 40:
        return 10
    return 8
