"""Stack-height analysis of i386 machine code: arch/x86_64/analysis.py's dataflow in
capstone's 32-bit mode, with 4-byte slots, %esp and %ebp, and the i386 callee-saved
registers %ebx, %ebp, %esi and %edi.

What 32-bit code adds is handled there too: PIC code finds its own address with
``call __x86.get_pc_thunk.bx`` (an ordinary call that returns) or with ``call 1f; 1:
pop %ebx`` (a call to the next instruction: only a push), and ``pushal``/``popal``
move the stack by 32 bytes.
"""
from ..heights import NOT_REACHED, AnalysisError, FunctionAnalysis, StackHeight  # noqa: F401 (re-exported)
from ..x86_64.analysis import MAX_CODE, Isa  # noqa: F401 (MAX_CODE: re-exported)
from . import registers

I386 = Isa(registers, "CS_MODE_32", "esp", "ebp", ("ebx", "ebp", "esi", "edi"))
CALLEE_SAVED = I386.callee_saved
ENTRY = I386.entry
classify = I386.classify
classify_memo = I386.classify_memo
transfer = I386.transfer
decoder = I386.decoder
decode_run = I386.decode_run
analyze = I386.analyze
is_padding = I386.is_padding
