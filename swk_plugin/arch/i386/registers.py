"""i386 registers (System V i386 psABI, "DWARF Register Number Mapping"; Linux).

Every register swk may meet in DWARF, with its size and the names GDB and LLDB
give it: the general registers (what a walk recovers) and the x87, SSE and MMX
registers (where optimised code keeps floating-point values; issue 16 reads
them through the back-ends).
"""
from collections import namedtuple


class Register(namedtuple("Register", "dwarf name size gdb lldb kind", defaults=("general",))):
    """``name``: the psABI's (also GDB's, except where ``gdb`` says); ``size`` in bytes;
    ``gdb``/``lldb``: the debuggers' names for it (None: that debugger has none); ``kind``:
    general, x87, sse, mmx, control or segment."""
    __slots__ = ()


def _table():
    rows = [Register(i, n, 4, n, n) for i, n in enumerate(
        ("eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi", "eip"))]
    rows.append(Register(9, "eflags", 4, "eflags", "eflags", "control"))
    rows += [Register(11 + i, f"st{i}", 10, f"st{i}", f"st{i}", "x87") for i in range(8)]
    rows += [Register(21 + i, f"xmm{i}", 16, f"xmm{i}", f"xmm{i}", "sse") for i in range(8)]
    rows += [Register(29 + i, f"mm{i}", 8, f"mm{i}", f"mm{i}", "mmx") for i in range(8)]
    rows += [Register(37, "fcw", 2, "fctrl", "fctrl", "x87"), Register(38, "fsw", 2, "fstat", "fstat", "x87"),
             Register(39, "mxcsr", 4, "mxcsr", "mxcsr", "sse")]
    rows += [Register(40 + i, n, 2, n, n, "segment") for i, n in enumerate(("es", "cs", "ss", "ds", "fs", "gs"))]
    return tuple(rows)


#: Every register by DWARF number.
REGISTERS = {r.dwarf: r for r in _table()}
#: The general registers indexed by DWARF number: eax 0, ecx 1, edx 2, ebx 3, esp 4, ebp 5,
#: esi 6, edi 7, eip 8.  GDB and LLDB name them so too.
DWARF_NAMES = tuple(REGISTERS[i].name for i in range(9))
sp = 4
fp = 5
ra = 8
pc = 8
ptr_size = 4
#: ebx, ebp, esi, edi: a callee must preserve them.
CALLEE_SAVED = frozenset({3, 5, 6, 7})
#: DWARF number of %eflags.
EFLAGS = 9
#: x87 st0-st7, SSE xmm0-xmm7 (DWARF numbers).
X87 = range(11, 19)
SSE = range(21, 29)


def reg_size(regno):
    """Bytes of a register by DWARF number (4 for anything the table lacks)."""
    r = REGISTERS.get(regno)
    return r.size if r is not None else 4


def gdb_name(regno):
    r = REGISTERS.get(regno)
    return r.gdb if r is not None else None


def lldb_name(regno):
    r = REGISTERS.get(regno)
    return r.lldb if r is not None else None


#: The floating-point and vector registers, by DWARF number: (bytes, debugger names widest
#: first); xmm numbers mean the whole ymm register where the CPU has AVX, as in GDB.
FP_REGISTERS = {
    **{11 + i: (10, (f"st{i}",)) for i in range(8)},
    **{21 + i: (32, (f"ymm{i}", f"xmm{i}")) for i in range(8)},
}
