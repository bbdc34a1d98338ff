"""s390x registers: DWARF numbers (the s390x ELF ABI supplement's "DWARF Register Number
Mapping", as GDB 13's s390_dwarf_regmap reads them), sizes, and the names GDB and LLDB give.

    0-15   r0-r15 (r14 the return address: the return-address column of GCC's CFI; r15 the
           stack pointer; r11 GCC's frame pointer where a function keeps one)
    16-31  f0, f2, f4, f6, f1, f3, f5, f7, f8, f10, f12, f14, f9, f11, f13, f15: the
           floating-point registers in the ABI's own order (its argument registers first)
    32-47  cr0-cr15 (control registers: never in a user's program)
    48-63  a0-a15 (access registers: a0:a1 is the thread pointer)
    64, 65 the PSW's mask and address: 65 is the pc (GDB's pswa, whose value its ``pc`` is)

The stack frame (the ABI's "Stack Frame"): a caller leaves 160 bytes at its r15 for its
callee's register save area, so a function's CFA is its r15 + 160 at entry, and a
caller's r15 is the CFA - 160 (``SAVE_AREA``).  A function saves r6-r15 there at
r15 + 8n (``stmg %r6,%r15,48(%r15)``: r14 at CFA - 48, r15 at CFA - 40); the back chain
at 0(r15) exists only in code built with -mbackchain.  r6-r13, r15 and f8-f15 are
preserved across calls (GDB's s390_register_call_saved: a0 and a1 too).
"""

ptr_size = 8
fp = 11                 # GCC's frame pointer, where a function keeps one
ra = 14
sp = 15
F0 = 16
NUM_F = 16
A0 = 48
pswm = 64
pc = 65                 # the PSW address
#: The register save area a caller provides below its r15: CFA = r15 + SAVE_AREA at entry.
SAVE_AREA = 160

#: The architectural FPR held by each DWARF number 16-31 (the ABI's order).
F_ORDER = (0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15)
#: DWARF number of each architectural FPR fN.
F_DWARF = {n: F0 + i for i, n in enumerate(F_ORDER)}

R_NAMES = tuple(f"r{i}" for i in range(16))
#: r0..r15, then the pc by DWARF number: the general registers every back-end reads.  The pc
#: is GDB's ``pc`` (its pseudo-register of pswa): a Python unwinder gives GDB a caller's pc
#: only under that name (s390_unwind_pc reads it).
GENERAL = (*R_NAMES, *([None] * (pc - 16)), "pc")
#: DWARF register names indexed by DWARF number (GDB's: r0-r15, f0-f15, acr0-acr15, pswm, pc).
DWARF_NAMES = (*R_NAMES, *(f"f{n}" for n in F_ORDER), *([None] * 16), *(f"acr{i}" for i in range(16)), "pswm", "pc")
#: GDB's names by DWARF number (s390_dwarf_regmap; 65 is its pswa, read as ``pc``).
GDB_NAMES = {i: n for i, n in enumerate(DWARF_NAMES) if n}
#: LLDB's names (RegisterInfos_s390x.h): the same, the PSW address as ``pswa``.
LLDB_NAMES = {**GDB_NAMES, pc: "pswa"}

#: r6-r13 and r15, by the ABI (r14 is the return address, not a preserved register); the
#: floating-point ones, f8-f15, no back-end reads as general registers.
CALLEE_SAVED = frozenset({*range(6, 14), sp})
CALLEE_SAVED_F = frozenset(F_DWARF[n] for n in range(8, 16))
#: What GDB 13's DWARF unwinder takes as undefined in a caller where the CFI says nothing
#: (s390_dwarf2_frame_init_reg: all but the call-saved r6-r15, f8-f15, a0, a1 and the PSW
#: address): r0-r5, f0-f7, a2-a15, the PSW mask.
CALL_CLOBBERED = frozenset({*range(6), *(F_DWARF[n] for n in range(8)), *range(A0 + 2, A0 + 16), pswm})


def reg_size(regno):
    """Bytes of a register by DWARF number: 8 (general, floating-point, PSW words), 4 for an
    access register."""
    return 4 if A0 <= regno < A0 + 16 else 8


#: The floating-point registers by DWARF number: (bytes, debugger names).
FP_REGISTERS = {F0 + i: (8, (f"f{n}",)) for i, n in enumerate(F_ORDER)}
#: The thread pointer: access registers a0:a1 (high word in a0), which NT_PRSTATUS holds in
#: one 8-byte slot of its own (regsets.py); GDB shows them as acr0 and acr1
#: (Architecture.thread_pointer_words).
THREAD_POINTER = "acr0_1"
