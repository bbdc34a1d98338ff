"""The default FrameSteppers, one module each, in the spec's default order."""
from .framefunc import FrameFuncStepper
from .sighandler import SigHandlerStepper
from .debug import DebugStepper
from .analysis import AnalysisStepper
from .wanderer import StepperWanderer
from .bottom import BottomOfStackStepper


def default_steppers(walker):
    """New instances of swk's default steppers for ``walker`` (spec: defaults table)."""
    return [FrameFuncStepper(walker), SigHandlerStepper(walker), DebugStepper(walker),
            AnalysisStepper(walker), StepperWanderer(walker), BottomOfStackStepper(walker)]


__all__ = ["FrameFuncStepper", "SigHandlerStepper", "DebugStepper", "AnalysisStepper",
           "StepperWanderer", "BottomOfStackStepper", "default_steppers"]
