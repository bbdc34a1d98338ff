"""GDB's own bt shows Python frames: a frame filter that puts after each
_PyEval_EvalFrameDefault frame the Python frames its call was running (swk_plugin/interp),
as `swk-bt -py` does.  GDB numbers frames itself, so a Python frame has no level of its own:
it is printed without one, and without a pc, under its evaluator frame (`    [Python]
Handler.parse () at /srv/server.py:9`).  Enabled only in a process running a CPython swk reads; `bt -no-filters`
is GDB alone, `disable frame-filter global swk-python-frames` turns it off."""
import gdb
from gdb.FrameDecorator import FrameDecorator

from ...errors import SwkError
from .filters import SwkFrameFilter
from .session import SESSION

#: The filter's name in `info frame-filter`.
NAME = "swk-python-frames"
#: Its priority: before swk's JIT names (0), which leave a named frame as it is.
PRIORITY = 10
#: GDB prints no level for a frame it did not unwind: the name is indented under the
#: evaluator frame's, as far as GDB's "#6  " puts names.
INDENT = "    "


class PythonFrameDecorator(FrameDecorator):
    """One Python frame, shown at its evaluator frame (``base``: that frame's decorator)."""

    def __init__(self, base, frame, placed=True):
        super().__init__(base)
        self._py, self._placed = frame, placed

    def function(self):
        mark = "[Python]" if self._placed else "[Python, not placed]"
        return f"{INDENT}{mark} {self._py.name or '??'}"

    def address(self):
        return None

    def filename(self):
        return self._py.filename

    def line(self):
        return self._py.line

    def frame_args(self):
        return None

    def frame_locals(self):
        return None

    def elided(self):
        return None


def _process_state():
    return SESSION.walker_for(gdb.selected_inferior()).process_state


def _complete(frame):
    """Whether ``frame`` is the outermost GDB unwinds (its bt reached the bottom)."""
    try:
        return frame.older() is None and frame.unwind_stop_reason() in (gdb.FRAME_UNWIND_NO_REASON,
                                                                          gdb.FRAME_UNWIND_OUTERMOST)
    except gdb.error:
        return False


class PythonFrameFilter(SwkFrameFilter):
    """Registered in gdb.frame_filters: GDB's frames with the thread's Python frames merged in
    (interp.merge, the evaluator frames counted among GDB's own)."""

    name = NAME
    priority = PRIORITY

    def active(self):
        from ...interp.cpython import find_runtime   # CPython's readers at GDB's first bt, not at load
        rt = find_runtime(_process_state())
        return rt is not None and rt.layout is not None

    def filter(self, frames):
        from ...interp.cpython import is_eval_function, python_stack
        from ...interp.merge import NATIVE, interleave
        decs = list(frames)
        try:
            ps = _process_state()
            stack = python_stack(ps, gdb.selected_thread().ptid[1])
        except (gdb.error, SwkError, RuntimeError):
            stack = None
        if stack is None or not decs:
            yield from decs
            return
        is_eval = []
        for dec in decs:
            frame = dec.inferior_frame()
            is_eval.append(frame.type() == gdb.NORMAL_FRAME and is_eval_function(frame.name()))
        items = interleave(is_eval, stack.groups, _complete(decs[-1].inferior_frame()))
        at = decs[0]
        for item in items:
            if item.kind == NATIVE:
                at = decs[item.index]
                yield at
            else:
                yield PythonFrameDecorator(at, item.frame, item.placed)


def install():
    gdb.frame_filters[NAME] = PythonFrameFilter()
