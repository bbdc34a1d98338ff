"""BottomOfStackStepper: recognises where stacks end (spec: BottomOfStackStepper).

Tried last: other steppers get the first word, so a thread start routine
with CFI still shows the frames GDB shows below it (start_thread, clone3).
"""
from ..stepper import FrameStepper, Gcf, PRIORITY_BOTTOM

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
        return Gcf.NOT_ME, "not a known bottom-of-stack function"
