"""Function entries in i386 code that has neither symbols nor CFI: arch/x86_64/scan.py's
scanner in 32-bit mode, with i386's entry bytes (``push %ebp/%ebx/%esi/%edi``, ``sub
$imm,%esp``, ``mov %esp,%ebp``, after an optional ``endbr32``)."""
from ..x86_64.scan import MAX_SEARCH_CANDIDATES, ENTRY_ALIGN, Scanner  # noqa: F401 (re-exported)
from . import analysis

_PROLOGUE_STARTS = (
    b"\x55", b"\x53", b"\x56", b"\x57",        # push ebp/ebx/esi/edi
    b"\x83\xec", b"\x81\xec",                  # sub $imm,%esp
    b"\x89\xe5", b"\x8b\xec",                  # mov %esp,%ebp
)
_ENDBR32 = b"\xf3\x0f\x1e\xfb"
#: The longest call instruction (a prefix, ModRM, SIB, disp32): bytes after_call needs.
CALL_LOOKBACK = 8

#: push %ebp; mov %esp,%ebp (both encodings of the mov).
_FRAME_SETUPS = (b"\x55\x89\xe5", b"\x55\x8b\xec")

I386 = Scanner(analysis.I386, _PROLOGUE_STARTS, _ENDBR32, CALL_LOOKBACK, _FRAME_SETUPS)
split_gap = I386.split_gap
search_entries = I386.search_entries
after_call = I386.after_call
