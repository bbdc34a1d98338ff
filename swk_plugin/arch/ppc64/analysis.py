"""Stack heights of Power-64 code without CFI: not analysed yet (issue 26).  Such code is
walked by the back chain (prologue.py) and, where that fails, the stack scanner; the
analysis stepper declines with this module's reason."""
from ..heights import AnalysisError

MAX_CODE = 1 << 16


def analyze(read, start, end=None, follow=None, noreturn=None, hi=None):
    raise AnalysisError("no stack-height analysis of Power code yet")
