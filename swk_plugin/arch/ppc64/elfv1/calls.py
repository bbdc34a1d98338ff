"""ELFv1's calls: ppc64le's decoders (../calls.py) reading big-endian words.

The one fact of its own: a cross-module call's linker stub saves the caller's TOC at
r1+40 (ELFv1's frame header: back chain, cr, lr, two reserved doublewords, then the TOC),
restored by the ``ld r2,40(r1)`` at the return address.
"""
from .. import calls as _calls
from ..calls import (MAX_CALL_LEN, PLT0_SIZE, PLT_ENTRY_SIZE, PLT_GOT_ENTRY_SIZE,  # noqa: F401 (the kit's)
                     PLT_RELOCATIONS, PLT_STUB_SIZE, plt_entry_slot, plt_slot)
from ..ppc import BIG

TOC_SAVE = 40


def decode_call(code, addr=0):
    return _calls.decode_call(code, addr, BIG)


def calls_ending_at(code, end):
    return _calls.calls_ending_at(code, end, BIG)


def confirm_call(code, addr=0):
    return _calls.confirm_call(code, addr, BIG)


def return_sites(code, start):
    return _calls.return_sites(code, start, BIG)
