"""The default FrameSteppers, one module each, in the spec's default order."""
from .framefunc import FrameFuncStepper
from .debug import DebugStepper
from .bottom import BottomOfStackStepper


def default_steppers(walker):
    """New instances of swk's default steppers for ``walker`` (spec: defaults table)."""
    return [FrameFuncStepper(walker), DebugStepper(walker), BottomOfStackStepper(walker)]


__all__ = ["FrameFuncStepper", "DebugStepper", "BottomOfStackStepper", "default_steppers"]
