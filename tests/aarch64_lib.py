"""AArch64 under qemu-user: the corpus cross-built, run under qemu's gdb stub, walked by
gdb-multiarch and LLDB, and dumped as qemu's own core files (issue 15).

The machinery is tests/cross_lib.py's, for its AARCH64 target (``qemu-aarch64 -cpu
max,sve=off -L /usr/aarch64-linux-gnu -g PORT``); this module binds it to that target under
the names test_aarch64*.py and aarch64_cases.py use, and keeps what only AArch64 has:
``-mbranch-protection=pac-ret+leaf`` builds, the bottoms of the cross libc's stacks, and
where DWARF keeps a variable in a vector register.

``-cpu max`` has pointer authentication (the corpus is also built with
``-mbranch-protection=pac-ret+leaf``); SVE is off because GDB 13 misreads signal frames
with SVE on.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Sequence

import cross_lib as C
from cross_lib import (BACKTRACE_LIMIT, CORE_NOW, GDB, GUEST_ENV, HOOKED, LLDB_BEGIN, LLDB_BT,  # noqa: F401
                       LLDB_END, NOCFI, O0, O2, OG, PC0_TAG, GdbSession, _segment, abort_command, chains,
                       compare_frames, format_swk, free_port, gdb_commands_session, gdb_session,
                       gdb_stop_cmds, is_known_chain, json_dump, known_chain_errors, lldb_session,
                       lldb_stop_cmds, load_bias, parse_lldb_bt, parse_pc0, right_prefix)

TARGET = C.AARCH64
CROSS = TARGET.compilers
SYSROOT = TARGET.sysroot
QEMU = TARGET.qemu
QEMU_CPU = TARGET.qemu_cpu
PACKAGES = TARGET.packages

#: Signed return addresses (AArch64's own flag).
PAC = ("-mbranch-protection=pac-ret+leaf",)


def need_machine() -> None:
    """The cross compilers, qemu-user, gdb-multiarch and the cross libc, or a skip (under
    CI a failure) naming the package."""
    C.need_machine(TARGET)


def build(srcs: Sequence[str], name: str, cflags: Sequence[str], ldflags: Sequence[str] = (),
          post: Sequence = ()) -> Path:
    return C.build(TARGET, srcs, name, cflags, ldflags, post)


# --------------------------------------------------------------------------
# cases
# --------------------------------------------------------------------------

#: The bottom of a main thread: the cross libc has no symbol for __libc_start_call_main.
LIBC_START = [None, "__libc_start_main", "_start"]
#: The bottom of a pthread: start_thread and thread_start have no symbols either.
THREAD_START = [None, None]


@dataclasses.dataclass(frozen=True)
class A64Case(C.CrossCase):
    """A corpus program cross-built for AArch64 (cross_lib.CrossCase with AArch64 its target)."""
    target: C.CrossTarget | None = TARGET


class Qemu(C.Qemu):
    """qemu-aarch64 running ``exe`` under its gdb stub (cross_lib.Qemu for AArch64)."""

    def __init__(self, exe: Path, args: Sequence[str] = (), stub: bool = True):
        super().__init__(TARGET, exe, args, stub)


def gdb_argv(exe: Path, port: int, commands: Sequence[str]) -> list[str]:
    return C.gdb_argv(TARGET, exe, port, commands)


def swk_cli(core: Path, exe: Path, extra: Sequence[str] = (), sysroot: bool = True) -> tuple[list | None, str, int]:
    """``python -m swk_plugin bt --core CORE --exe EXE [--sysroot SYSROOT] --json --all``."""
    return C.swk_cli(TARGET, core, exe, extra, sysroot)


# --------------------------------------------------------------------------
# where DWARF puts a variable (for values in vector registers, issue 16)
# --------------------------------------------------------------------------

#: AADWARF64: v0-v31 are DWARF registers 64-95.
VECTOR_DWARF = range(64, 96)


def _needs_vector(ops, regs=None) -> bool:
    regs = VECTOR_DWARF if regs is None else regs
    for op in ops:
        name = op.op_name
        if name in ("DW_OP_regx", "DW_OP_bregx") and op.args and op.args[0] in regs:
            return True
        for a in op.args:
            if isinstance(a, list) and _needs_vector(a, regs):
                return True
    return False


def vector_located(exe: Path, addr: int, function: str, var: str, regs=None) -> bool:
    """Whether the DWARF of ``exe`` locates ``var`` of ``function`` at the unbiased ``addr`` in
    a vector register (v0-v31; ``regs``: other DWARF numbers, e.g. Power's f0-f31), directly or
    through an entry value: read with pyelftools, independently of swk.  Such a value is one a
    core without FP notes (qemu's) does not hold."""
    from elftools.dwarf.dwarf_expr import DWARFExprParser
    from elftools.dwarf.locationlists import LocationEntry, LocationExpr, LocationParser
    from elftools.elf.elffile import ELFFile
    short = function.split("(")[0].split("::")[-1]
    with open(exe, "rb") as fh:
        dwarf = ELFFile(fh).get_dwarf_info()
        locparser = LocationParser(dwarf.location_lists())
        for cu in dwarf.iter_CUs():
            expr_parser = DWARFExprParser(cu.structs)
            for die in cu.iter_DIEs():
                if die.tag not in ("DW_TAG_formal_parameter", "DW_TAG_variable"):
                    continue
                if _die_name(die) != var or "DW_AT_location" not in die.attributes:
                    continue
                scope = die.get_parent()
                while scope is not None and scope.tag not in ("DW_TAG_subprogram", "DW_TAG_inlined_subroutine"):
                    scope = scope.get_parent()
                if scope is None or (_die_name(scope) or "").split("<")[0] != short.split("<")[0]:
                    continue
                if not _covers(dwarf, cu, scope, addr):
                    continue
                loc = locparser.parse_from_attribute(die.attributes["DW_AT_location"], cu["version"], die)
                if isinstance(loc, LocationExpr):
                    if _needs_vector(expr_parser.parse_expr(loc.loc_expr), regs):
                        return True
                    continue
                base = cu.get_top_DIE().attributes.get("DW_AT_low_pc")
                base = base.value if base is not None else 0
                for e in loc:
                    if isinstance(e, LocationEntry):
                        lo, hi = (e.begin_offset, e.end_offset) if getattr(e, "is_absolute", False) else \
                            (base + e.begin_offset, base + e.end_offset)
                        if lo <= addr < hi and _needs_vector(expr_parser.parse_expr(e.loc_expr), regs):
                            return True
                    elif hasattr(e, "base_address"):
                        base = e.base_address
    return False


def _die_name(die):
    seen = 0
    while die is not None and seen < 8:
        if "DW_AT_name" in die.attributes:
            return die.attributes["DW_AT_name"].value.decode()
        ref = die.attributes.get("DW_AT_abstract_origin") or die.attributes.get("DW_AT_specification")
        die = die.get_DIE_from_attribute(ref.name) if ref is not None else None
        seen += 1
    return None


def _covers(dwarf, cu, die, addr) -> bool:
    attrs = die.attributes
    if "DW_AT_low_pc" in attrs:
        lo = attrs["DW_AT_low_pc"].value
        hi = attrs.get("DW_AT_high_pc")
        if hi is None:
            return lo == addr
        hi = hi.value if hi.form == "DW_FORM_addr" else lo + hi.value
        return lo <= addr < hi
    if "DW_AT_ranges" in attrs:
        rl = dwarf.range_lists()
        if rl is None:
            return False
        base = cu.get_top_DIE().attributes.get("DW_AT_low_pc")
        base = base.value if base is not None else 0
        for r in rl.get_range_list_at_offset(attrs["DW_AT_ranges"].value, cu=cu):
            if hasattr(r, "begin_offset"):
                lo, hi = (r.begin_offset, r.end_offset) if getattr(r, "is_absolute", False) else \
                    (base + r.begin_offset, base + r.end_offset)
                if lo <= addr < hi:
                    return True
            elif hasattr(r, "base_address"):
                base = r.base_address
    return False
