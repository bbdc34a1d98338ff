"""BottomOfStackStepper: recognises where stacks end (spec: BottomOfStackStepper).

Tried last: other steppers get the first word, so a thread start routine
with CFI still shows the frames GDB shows below it (start_thread, clone3).
"""
from ..stepper import FrameStepper, Gcf, PRIORITY_BOTTOM
from ..unwind.modules import function_at

#: Functions no frame is found below: process start and thread start.
BOTTOM_FUNCTIONS = frozenset({
    "_start", "__start", "_dl_start_user", "_dl_start",
    "clone", "__clone", "clone3", "__clone3", "__clone_internal",
    "start_thread", "__libc_start_main", "__libc_start_main_impl",
})


class BottomOfStackStepper(FrameStepper):
    name = "BottomOfStackStepper"
    priority = PRIORITY_BOTTOM
    trust = "bottom"

    def get_caller_frame(self, frame):
        if frame.ra == 0:
            return Gcf.STACKBOTTOM, "bottom of the stack (the return address is zero)"
        name = frame.name
        if name is not None:
            base = name.split("(", 1)[0].split("@", 1)[0]
            if base in BOTTOM_FUNCTIONS:
                return Gcf.STACKBOTTOM, f"bottom of the stack ({base})"
        if self._at_entry_point(frame):
            return Gcf.STACKBOTTOM, "bottom of the stack (the program's entry point)"
        if frame.fp == 0 and self.process_state.arch.zero_fp_is_outermost:
            # asked last: no other stepper found a caller, and the ABI's outermost mark is there
            return Gcf.STACKBOTTOM, "bottom of the stack (no caller found, and the frame pointer is zero)"
        return Gcf.NOT_ME, "not a known bottom-of-stack function"

    def _at_entry_point(self, frame):
        """Whether the frame's function starts at the executable's entry point: GDB's
        inside_entry_func, where its bt ends (``backtrace past-entry off``) whatever the
        function is called (a hand-written _start without CFI)."""
        ps = self.process_state
        libs = ps.library_state
        aout = libs.get_aout() if libs is not None else None
        entry = getattr(getattr(aout, "module", None), "entry", None)
        if not entry:
            return False
        bounds = function_at(ps, frame.lookup_pc)
        return bounds is not None and bounds[0] == entry + aout.base
