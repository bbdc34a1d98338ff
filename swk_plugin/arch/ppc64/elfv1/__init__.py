"""Power-64, big-endian (the 64-bit ELF ABI v1, Linux): ppc64le's facts where the ABIs agree,
and what ELFv1 changes.

The same: the DWARF numbers (and GCC's .eh_frame renumbering), pt_regs and the core's
notes, the back chain, lr saved at 16 in the caller's frame, the signal frames, TLS.

ELFv1's own:

* every word big-endian: the instruction words every kit here decodes (each module here is
  ppc64le's with ``order`` BIG: ../ppc.py), the register sets, the trampolines' patterns;
* the TOC save slot at r1+40 (calls.py), not 24: the frame header keeps two reserved
  doublewords before it;
* no global and local entry points: a function is entered at its code's first word;
* function descriptors: a function symbol's value is the address of its descriptor in
  .opd ({entry, TOC, environment}), not of its code.  ``function_descriptors`` names the
  section, and elf/symbols.py puts such a symbol at its code (as GDB's minimal symbols
  and BFD's synthetic ones do), so pcs name their functions and entries compare with pcs.
"""
from ...base import lazy_module
from .. import Ppc64le, regsets
from . import calls, prologue, signal


class Ppc64(Ppc64le):
    name = "ppc64"
    #: uname's and LLDB's triple's names (GDB's ``powerpc:common64`` is ppc64le's too: the
    #: GDB back-end asks for the target's byte order along with it).
    aliases = ("powerpc64",)
    byteorder = "big"
    sysroots = ("/usr/powerpc64-linux-gnu",)
    #: Debian's ppc64: IBM's double-double, as ppc64el's.
    long_double_format = "ibm128"
    #: None: capstone would need CS_MODE_64 | CS_MODE_BIG_ENDIAN, and the kits decode words themselves.
    capstone_mode = None
    signal_frame = signal
    calls = calls
    prologue = prologue
    analysis = lazy_module(__name__ + ".analysis")
    scan = lazy_module(__name__ + ".scan")
    regsets = regsets.regset_view("big")
    function_descriptors = ".opd"
