"""Function entries in x32 code without symbols or CFI: x86-64's scanner (64-bit mode) with
x32's frame set-up, ``push %rbp; mov %esp,%ebp``, besides x86-64's."""
from ..x86_64 import analysis
from ..x86_64.scan import _ENDBR64, _PROLOGUE_STARTS, CALL_LOOKBACK, MAX_SEARCH_CANDIDATES, Scanner  # noqa: F401

X32 = Scanner(analysis.X86_64, _PROLOGUE_STARTS + (b"\x89\xe5",), _ENDBR64, CALL_LOOKBACK,
              (b"\x55\x89\xe5", b"\x55\x48\x89\xe5"))
split_gap = X32.split_gap
search_entries = X32.search_entries
after_call = X32.after_call
