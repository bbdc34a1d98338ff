"""Function entries in Power-64 code that has neither symbols nor CFI, and return addresses.

``split_gap``, ``search_entries`` and ``after_call`` for swk_plugin.analysis.bounds,
decoded from raw words (every 4-aligned word is an instruction).  An entry looks like
ELFv2's global entry (``addis r2,r12,…``) or a prologue's ``mflr r0`` / ``stdu r1``.

``scan_cfa``: a return address found on the stack lies in an lr save slot, 16 bytes
above the caller's r1, which is the callee's CFA (and holds the back chain).

``order``: the byte order of the code's words (ppc.py).  ELFv1's code has no global entry:
its entries are the prologues'.
"""
from .. import entries
from ..dataflow import CALL, COND, FALL, JUMP, STOP
from ..entries import MAX_SEARCH_CANDIDATES  # noqa: F401 (re-exported)
from . import ppc
from .ppc import LITTLE

ENTRY_ALIGN = 4
CALL_LOOKBACK = 4
LR_SAVE = 16


_FLOWS = {None: FALL, ppc.CALL: CALL, ppc.JUMP: JUMP, ppc.COND: COND, ppc.STOP: STOP}


def _insns(code, lo, order):
    """The engine's (address, size, flow, target, padding) of every aligned word."""
    for i, insn in enumerate(ppc.words(code, order)):
        flow, tgt = ppc.branch(insn, lo + 4 * i)
        yield lo + 4 * i, 4, _FLOWS[flow], tgt, ppc.is_padding(insn)


def split_gap(code, lo, order=LITTLE):
    """Function starts in the CFI-less code ``code`` found at ``lo``, sorted (arch/entries.py):
    the first non-padding word, every direct call target, and the code after a blr/b and its
    padding unless a branch between other code crosses that point."""
    return entries.split_points(_insns(code, lo, order), lo, lo + len(code) // 4 * 4)


def looks_like_entry(insn):
    return insn & 0xffff0000 == 0x3c4c0000 or insn == ppc.MFLR_R0 or ppc.stdu_r1(insn) is not None


def _ends_code(insn):
    flow, _t = ppc.branch(insn, 0)
    return ppc.is_padding(insn) or flow in (ppc.STOP, ppc.JUMP)


def search_entries(code, lo, pc, exact=True, region_start=None, order=LITTLE):
    """Likely entries at or before pc in ``code`` (the bytes at lo..), nearest first."""
    return entries.search_back(lo, pc - lo, 4, lambda i: looks_like_entry(ppc.word(code, i, order)),
                               lambda i: _ends_code(ppc.word(code, i - 4, order)), region_start)


def after_call(code, order=LITTLE):
    """Whether ``code`` (the CALL_LOOKBACK bytes before an address) ends with a call."""
    if len(code) < 4:
        return False
    return ppc.branch(ppc.word(code, len(code) - 4, order), 0)[0] == ppc.CALL


def scan_cfa(slot, read_pointer, ptr_size=8):
    """The callee's CFA when its return address was found at ``slot``: the caller's r1,
    16 below the slot (the lr save slot of the caller's frame)."""
    return slot - LR_SAVE
