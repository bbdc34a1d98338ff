"""Interpreters' own frames beside the native ones (issue 28): CPython's Python frames.

cpython.py finds the interpreter (_PyRuntime), the thread's PyThreadState and its chain of
frames, read from memory with layouts.py's offsets (or 3.13's _Py_DebugOffsets,
debugoffsets.py); objects.py reads the str and bytes objects a code object holds;
linetable.py turns a frame's instruction into its line (co_linetable, PEP 626 and PEP 657);
merge.py places each evaluator call's Python frames after its _PyEval_EvalFrameDefault
frame; gil.py says which thread holds the GIL and what the others do about it; scan.py finds
_PyRuntime in a stripped interpreter's writable data by its shape.  What swk-bt -py and
swk bt --py print is the display layer's (pyframes.py).
"""
