"""Power-64 registers: DWARF numbers (the 64-bit ELF ABI's numbering, as GCC writes it in
.debug_info and .debug_frame), sizes, and the names GDB and LLDB give them.

    0-31      r0-r31 (r1 the stack pointer, r2 the TOC pointer, r13 the thread pointer)
    32-63     f0-f31
    64        cr
    101       xer
    108       lr: the return-address column
    109       ctr
    1124-1155 vr0-vr31

GCC writes .eh_frame in its older internal numbering (lr 65, ctr 66, cr0-cr7 68-75,
xer 76, vr0-vr31 77-108) and a return column of 65 in .debug_frame too: both are
renumbered as the CFI is read (``CFI_RENUMBER``), as GDB's rs6000_adjust_frame_regnum
does, so everything above the CFI reader sees one numbering.

The pc (nip) has no DWARF number: swk keeps it in column 66, which the standard
numbering leaves unused (66 is only .eh_frame's ctr, renumbered to 109 on reading).
"""

ptr_size = 8
sp = 1
toc = 2
tp = 13
fp = 31                 # GCC's frame pointer, when a function keeps one
F0 = 32
NUM_F = 32
cr = 64
pc = 66
xer = 101
lr = 108
ctr = 109
VR0 = 1124
NUM_VR = 32
ra = lr

_NUMBER = {**{f"r{i}": i for i in range(32)}, "pc": pc, "lr": lr, "ctr": ctr, "cr": cr, "xer": xer}
#: r0..r31, pc, lr, ctr, cr, xer by DWARF number: the general registers every back-end reads.
GENERAL = tuple(next((n for n, r in _NUMBER.items() if r == i), None) for i in range(ctr + 1))
#: DWARF register names indexed by DWARF number (None where unused; the vector registers,
#: numbered from 1124, are named by FP_REGISTERS).
DWARF_NAMES = tuple(f"f{i - F0}" if F0 <= i < F0 + NUM_F else name for i, name in enumerate(GENERAL))
#: GDB's names (its rs6000 target description: r0..r31, pc, msr, cr, lr, ctr, xer, f0..f31).
GDB_NAMES = {i: n for i, n in enumerate(DWARF_NAMES) if n}
#: LLDB's names are GDB's for these registers.
LLDB_NAMES = dict(GDB_NAMES)

#: The standard numbers of the condition register's eight fields (a function saves the ones it
#: uses as one 32-bit word: no debugger shows them one by one).
CR0 = 86
#: .eh_frame's (GCC's internal) numbers for the registers it numbers differently: lr, ctr,
#: cr0-cr7, xer, vr0-vr31.
EH_FRAME_NUMBERS = {65: lr, 66: ctr, 76: xer, **{68 + i: CR0 + i for i in range(8)},
                    **{77 + i: VR0 + i for i in range(NUM_VR)}}
#: The renumbering of each CFI section (GCC writes a return column of 65 in .debug_frame too).
CFI_RENUMBER = {True: EH_FRAME_NUMBERS, False: {65: lr}}

#: ELFv2 ABI 2.2.1.1 (and the ELFv1 ABI): r14-r31 (and f14-f31, vr20-vr31, cr2-cr4, which no
#: back-end reads as a general register) are preserved across calls.  r2, the TOC, is kept
#: too: GDB's CFI unwinder leaves it unchanged in a caller unless a rule says otherwise (a
#: call through a PLT stub saves it in its caller's frame and restores it after).
CALLEE_SAVED = frozenset(range(14, 32)) | {toc}
#: The ABI's volatile registers a caller cannot get back: r0, r3-r12, f0-f13.
VOLATILE = frozenset({0, *range(3, 13), *range(F0, F0 + 14)})


def reg_size(regno):
    """Bytes of a register by DWARF number: vr0-vr31 16, everything else 8."""
    return 16 if VR0 <= regno < VR0 + NUM_VR else 8


#: The floating-point and vector registers, by DWARF number: (bytes, debugger names).
FP_REGISTERS = {**{F0 + i: (8, (f"f{i}",)) for i in range(NUM_F)},
                **{VR0 + i: (16, (f"vr{i}",)) for i in range(NUM_VR)}}
#: r13, the thread pointer (TLS variant 1: the TCB ends 0x7000 below it).
THREAD_POINTER = "r13"
