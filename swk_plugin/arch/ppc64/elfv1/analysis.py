"""ELFv1's stack heights without CFI: the Power decoder of ../analysis.py on big-endian words."""
from .. import analysis as _analysis
from ..analysis import MAX_CODE, NOT_REACHED, AnalysisError, FunctionAnalysis, StackHeight  # noqa: F401 (the kit's)
from ..ppc import BIG


def analyze(read, start, end=None, follow=None, noreturn=None, hi=None):
    """Analyse the function entered at ``start`` (see ../analysis.analyze)."""
    return _analysis.analyze(read, start, end, follow, noreturn, hi, BIG)
