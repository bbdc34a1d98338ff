"""ELFv1's signal frames: ppc64le's (../signal.py: the kernel's and qemu-user's rt_sigframe,
the same layout and offsets in both ABIs, measured under qemu-ppc64 too), their
trampolines' words big-endian."""
from .. import signal as _signal
from ..ppc import BIG
from ..signal import (KERNEL, KERNEL_POPPED, QEMU, SC_GREGS_SIZE, SC_OFFSETS, SLOT,  # noqa: F401 (the kit's)
                      TRAMPOLINE_NAMES, UC_MCONTEXT, fp_registers, rule_at)

TRAMPOLINES = _signal.trampolines(BIG)


def frame_kind(code_at, pc, exact, name=None):
    return _signal.frame_kind(code_at, pc, exact, name, BIG)


def trampoline_start(code_at, pc, exact):
    return _signal.trampoline_start(code_at, pc, exact, BIG)


def is_trampoline_code(code):
    return _signal.is_trampoline_code(code, BIG)


def gdb_knows(code):
    return _signal.gdb_knows(code, BIG)
