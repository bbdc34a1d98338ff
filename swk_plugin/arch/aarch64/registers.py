"""AArch64 registers: DWARF numbers ("DWARF for the Arm 64-bit Architecture", AADWARF64 4.1),
sizes, and the names GDB and LLDB give them.

    0-30   x0-x30 (x29 the frame pointer, x30 the link register: the return-address column)
    31     sp
    32     pc (not the return-address column: a frame's pc and the return address its callee
           finds in x30 are different registers)
    34     RA_SIGN_STATE (the CFI's pointer-authentication state)
    64-95  v0-v31 (128-bit SIMD and floating-point registers; d0-d31 are their low halves)
"""

ptr_size = 8
fp = 29
ra = 30
sp = 31
pc = 32
RA_SIGN_STATE = 34
V0 = 64
NUM_V = 32

#: x0..x30, sp, pc: the general registers every back-end reads.
GENERAL = tuple(f"x{i}" for i in range(31)) + ("sp", "pc")


def _dwarf_names():
    names = [None] * (V0 + NUM_V)
    names[:len(GENERAL)] = GENERAL
    names[RA_SIGN_STATE] = "ra_sign_state"
    for i in range(NUM_V):
        names[V0 + i] = f"v{i}"
    return tuple(names)


#: DWARF register names indexed by DWARF number (None where unused).
DWARF_NAMES = _dwarf_names()

#: GDB's register names by DWARF number (its aarch64 target description: x0..x30, sp, pc,
#: v0..v31, whose double views are d0..d31).
GDB_NAMES = {i: n for i, n in enumerate(DWARF_NAMES) if n and i != RA_SIGN_STATE}
#: LLDB's primary names: x29 and x30 are "fp" and "lr" (LLDB accepts x29 and x30 too).
LLDB_NAMES = {**GDB_NAMES, fp: "fp", ra: "lr"}
#: The low 64 bits of each vector register as GDB names them (a double lives there).
GDB_D_NAMES = {V0 + i: f"d{i}" for i in range(NUM_V)}

#: AAPCS64 6.1.1: x19-x28 and the frame pointer x29 must be preserved by a callee (and the
#: low halves of v8-v15, which no back-end reads yet).
CALLEE_SAVED = frozenset(range(19, 30))
CALLEE_SAVED_V = frozenset(range(V0 + 8, V0 + 16))


def reg_size(regno):
    """Bytes of a register by DWARF number: v0-v31 16, everything else 8."""
    if V0 <= regno < V0 + NUM_V:
        return 16
    return 8


#: The floating-point and vector registers, by DWARF number: (bytes, debugger names).
FP_REGISTERS = {V0 + i: (16, (f"v{i}",)) for i in range(NUM_V)}
#: TPIDR_EL0, the thread pointer (TLS variant 1: the TCB at it, static TLS blocks above).
THREAD_POINTER = "tpidr"
