"""ELFv1's frames: ppc64le's back chain and lr save slot (../prologue.py), the same in both
ABIs, read from big-endian words."""
from .. import prologue as _prologue
from ..prologue import EPILOGUE_READ, READ_SIZE  # noqa: F401 (the kit's)
from ..ppc import BIG


def parse_prologue(code, start):
    return _prologue.parse_prologue(code, start, BIG)


def is_return(code):
    return _prologue.is_return(code, BIG)


def epilogue_at(code, pc, bounds):
    return _prologue.epilogue_at(code, pc, bounds, BIG)
