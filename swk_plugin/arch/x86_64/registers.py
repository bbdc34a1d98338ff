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


#: The floating-point and vector registers, by DWARF number: (bytes, the names a debugger
#: may give it, widest first).  DWARF's xmm numbers mean the whole ymm register where the
#: CPU has AVX (as GDB's amd64_dwarf_reg_to_regnum maps them), so a __m256 reads whole
#: and a double its low 8 bytes either way.  st0-st7 are x87 stack slots (ST(i), from the
#: top), 10 bytes each.
FP_REGISTERS = {
    **{17 + i: (32, (f"ymm{i}", f"xmm{i}")) for i in range(16)},
    **{33 + i: (10, (f"st{i}",)) for i in range(8)},
}
#: The x87 registers: a value of another floating type in one is converted (x87.py).
X87 = frozenset(range(33, 41))
#: Where Linux puts the x87/SSE/AVX state (regsets.py, signal.py): xmm and ymm DWARF numbers.
XMM = tuple(range(17, 33))
ST = tuple(range(33, 41))
#: %fs_base: the thread pointer (TLS variant II: a module's static TLS block ends there).
THREAD_POINTER = "fs_base"


def reg_size(regno):
    """Bytes of a register by DWARF number: xmm0-15 (17-32), st0-7 (33-40), else 8."""
    if 17 <= regno <= 32:
        return 16
    if 33 <= regno <= 40:
        return 10
    return 8
