"""LLDB 22's own bt shows Python frames: the frame provider (provider.py) puts after each
_PyEval_EvalFrameDefault frame the Python frames its call was running (swk_plugin/interp),
as `swk-bt -py` and GDB's frame filter do, each a ScriptedFrame named
``[Python] Handler.parse (/srv/server.py:9)``.

A Python frame has no machine state of its own: it is given no pc (LLDB would name it after
the symbol there, not by the name given) and no registers (LLDB 22.1 crashes on a
ScriptedFrame's register context: provider.JitNamedFrame).  Which Python frames follow which
native frame is interp.merge's answer for swk's whole walk of the thread (the display
layer's shown levels, so the same as swk-bt -py's), kept per walk frame.
"""
from ...display import INLINE, shown_frames
from ...frame import FrameKind
from ...interp.cpython import find_runtime, is_eval_function, python_stack
from ...interp.merge import NATIVE, interleave
from ...pyframes import python_label

try:
    from lldb.plugins.scripted_process import ScriptedFrame
except ImportError:  # LLDB < 22
    ScriptedFrame = object


class PythonFrame(ScriptedFrame):
    """One Python frame among LLDB's: its name carries its function, file and line."""

    def __init__(self, frame, placed=True):   # not ScriptedFrame.__init__: its SB calls are not needed
        self.idx = 0
        self.py, self.placed = frame, placed
        self.name = python_label(frame, placed)

    def get_id(self):
        return self.idx

    def get_pc(self):
        return 0

    def get_function_name(self):
        return self.name

    def get_display_function_name(self):
        return self.name

    def is_artificial(self):
        return False

    def is_inlined(self):
        return False

    def get_register_info(self):
        return None

    def get_register_context(self):
        return None


def python_runs(ps, walk):
    """({walk index: [PythonFrame]} to follow that walk frame, [PythonFrame] before every
    native frame) of a thread's whole walk; None where the thread runs no Python swk reads."""
    rt = find_runtime(ps)
    if rt is None or rt.layout is None:
        return None
    stack = python_stack(ps, walk.thread)
    if stack is None or not stack.groups:
        return None
    shown = shown_frames(walk)
    is_eval = [sf.kind not in (INLINE, FrameKind.TAILCALL) and is_eval_function(sf.frame.name) for sf in shown]
    position = {id(f): k for k, f in enumerate(walk)}
    after, before, at = {}, [], None
    for item in interleave(is_eval, stack.groups, walk.complete):
        if item.kind == NATIVE:
            at = position.get(id(shown[item.index].frame), at)    # a tail-call level: its caller's
        elif at is None:
            before.append(PythonFrame(item.frame, item.placed))
        else:
            after.setdefault(at, []).append(PythonFrame(item.frame, item.placed))
    return after, before
