"""ELFv1's function entries in raw code and the CFA of a return address found on the stack:
ppc64le's (../scan.py) on big-endian words."""
from .. import scan as _scan
from ..ppc import BIG
from ..scan import CALL_LOOKBACK, ENTRY_ALIGN, LR_SAVE, MAX_SEARCH_CANDIDATES, scan_cfa  # noqa: F401 (the kit's)


def split_gap(code, lo):
    return _scan.split_gap(code, lo, BIG)


def search_entries(code, lo, pc, exact=True, region_start=None):
    return _scan.search_entries(code, lo, pc, exact, region_start, BIG)


def after_call(code):
    return _scan.after_call(code, BIG)
