"""RISC-V 64 registers: DWARF numbers (the RISC-V ELF psABI's "DWARF Register Numbers"),
sizes, and the names GDB and LLDB give them.

    0-31   x0-x31 (x1 ra: the return-address column; x2 sp; x4 tp, the thread pointer;
           x8 s0/fp, the frame pointer when a function keeps one)
    32-63  f0-f31 (64-bit with the D extension: Debian's riscv64 is rv64gc, LP64D)
    64     the psABI's "Alternate Frame Return Column": swk's pc column

The pc has no DWARF number of its own.  swk keeps it in column 64, the one the psABI
reserves as the alternate return column, which libgcc's unwinder already uses for the
pc of a frame a signal interrupted (its riscv linux-unwind.h) and no compiler's CFI of
ordinary code names: a frame's pc and the return address its callee finds in ra are
different registers, as on AArch64.
"""

ptr_size = 8
ra = 1
sp = 2
gp = 3
tp = 4
fp = 8                  # s0
F0 = 32
NUM_F = 32
pc = 64

#: GDB's names of x0-x31 (riscv-tdep.c's riscv_xreg_feature: the ABI names, x8 "fp" first,
#: "s0" and "x8" its aliases), and pc.
X_NAMES = ("zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "fp", "s1",
           *(f"a{i}" for i in range(8)), *(f"s{i}" for i in range(2, 12)), *(f"t{i}" for i in range(3, 7)))
#: GDB's names of f0-f31 (riscv_freg_feature: the ABI names).
F_NAMES = (*(f"ft{i}" for i in range(8)), "fs0", "fs1", *(f"fa{i}" for i in range(8)),
           *(f"fs{i}" for i in range(2, 12)), *(f"ft{i}" for i in range(8, 12)))

#: x0..x31 then pc by DWARF number: the general registers every back-end reads (x0, always
#: zero, included: GDB and LLDB both show it).
GENERAL = (*X_NAMES, *([None] * NUM_F), "pc")
#: DWARF register names indexed by DWARF number: GDB's (its unwinder hook reads registers
#: by these names, and x8's is "fp").
DWARF_NAMES = (*X_NAMES, *F_NAMES, "pc")
#: GDB's names by DWARF number.
GDB_NAMES = {i: n for i, n in enumerate(DWARF_NAMES)}
#: LLDB 22's primary names (RegisterInfos_riscv64.h: x0-x31 as "zero", "ra", ..., x8 "fp";
#: f0-f31 as "f0".."f31" with the ABI names as alternates).
LLDB_NAMES = {**GDB_NAMES, **{F0 + i: f"f{i}" for i in range(NUM_F)}}

#: psABI "Integer Register Convention": s0-s11 (x8, x9, x18-x27) and sp are preserved
#: across calls (fs0-fs11 too, which no back-end reads as a general register).
CALLEE_SAVED = frozenset({8, 9, *range(18, 28)})
CALLEE_SAVED_F = frozenset({F0 + 8, F0 + 9, *range(F0 + 18, F0 + 28)})


def reg_size(regno):
    """Bytes of a register by DWARF number: all 8 (x registers, D-extension f registers, pc)."""
    return 8


#: The floating-point registers, by DWARF number: (bytes, debugger names: GDB's ABI name,
#: then the architectural name LLDB reads first).
FP_REGISTERS = {F0 + i: (8, (F_NAMES[i], f"f{i}")) for i in range(NUM_F)}
#: tp (x4), the thread pointer (TLS variant 1: struct pthread just below it, the static TLS
#: blocks from it upwards).
THREAD_POINTER = "tp"
