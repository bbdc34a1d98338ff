"""x86-64 (System V psABI): DWARF numbering, GDB names, callee-saved set."""
from . import x86_64_signal
from .base import Architecture


class X86_64(Architecture):
    name = "x86_64"
    ptr_size = 8
    # psABI figure 3.36: DWARF register number mapping.
    dwarf_names = (
        "rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
        "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
        "rip",
    )
    sp = 7
    fp = 6
    ra = 16
    callee_saved = frozenset({3, 6, 12, 13, 14, 15})
    #: General registers as debuggers name them, with their DWARF numbers.
    general = dwarf_names
    #: The Linux signal frame layout and trampolines (SigHandlerStepper).
    signal_frame = x86_64_signal
