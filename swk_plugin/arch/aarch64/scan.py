"""Function entries in A64 code that has neither symbols nor CFI, and return addresses.

``split_gap`` (where the functions in a gap between known functions start),
``search_entries`` (aligned addresses before a pc in JIT code that look like an
entry) and ``after_call`` (does a call end at an address) for
swk_plugin.analysis.bounds, decoded from raw words: A64 is fixed-width, so
every 4-aligned word is an instruction boundary.

``scan_cfa`` is the stack scanner's question: a return address was found in a
stack slot, where is the callee's CFA?  On AArch64 the slot is normally the x30
half of a frame record {x29, x30} at the bottom of the callee's frame (AAPCS64;
GCC's layout), so the caller's stack pointer — the callee's CFA — is not just
above the slot: with the caller's own record at the bottom of its frame, it is
where the saved x29 next to the slot points.
"""
from .. import entries
from ..dataflow import CALL, COND, FALL, IJUMP, JUMP, STOP
from ..entries import MAX_SEARCH_CANDIDATES  # noqa: F401 (re-exported)
from . import a64

ENTRY_ALIGN = 4
CALL_LOOKBACK = 4
#: A frame larger than this between a record and its caller's is not believed.
MAX_FRAME = 1 << 20

_FLOWS = {a64.FALL: FALL, a64.JUMP: JUMP, a64.COND: COND, a64.CALL: CALL, a64.STOP: STOP, a64.IJUMP: IJUMP}


def _insns(code, lo):
    """The engine's (address, size, flow, target, padding) of every aligned word."""
    for i in range(0, len(code) // 4 * 4, 4):
        insn = a64.word(code, i)
        flow, tgt = a64.branch(insn, lo + i)
        yield lo + i, 4, _FLOWS.get(flow, FALL), tgt, a64.is_padding(insn)


def split_gap(code, lo):
    """Function starts in the CFI-less code ``code`` found at ``lo``, sorted (arch/entries.py):
    the first non-padding word, every direct call target, and the code after a ret/b/br and its
    padding unless a branch between other code crosses that point."""
    return entries.split_points(_insns(code, lo), lo, lo + len(code) // 4 * 4)


def looks_like_entry(insn):
    """paciasp/pacibsp/bti c, ``stp x29, x30, [sp, #-N]!``, ``sub sp, sp, #N``, ``str x30, [sp, #-N]!``."""
    if insn in a64.PAC_SIGN or insn in a64.BTI:
        return True
    kind, a, b, c = a64.effect(insn)
    if kind == a64.STORE and not isinstance(c, tuple) and c < 0 and a64.LR in a:
        return True
    return kind == a64.ADJ_SP and a < 0


def _ends_code(insn):
    flow, _t = a64.branch(insn, 0)
    return a64.is_padding(insn) or flow in (a64.STOP, a64.JUMP, a64.IJUMP)


def search_entries(code, lo, pc, exact=True, region_start=None):
    """Likely entries at or before pc in ``code`` (the bytes at lo..), nearest first."""
    return entries.search_back(lo, pc - lo, 4, lambda i: looks_like_entry(a64.word(code, i)),
                               lambda i: _ends_code(a64.word(code, i - 4)), region_start)


def after_call(code):
    """Whether ``code`` (the CALL_LOOKBACK bytes before an address) ends with a call."""
    if len(code) < 4:
        return False
    return a64.branch(a64.word(code, len(code) - 4), 0)[0] == a64.CALL


def scan_cfa(slot, read_pointer, ptr_size=8):
    """The callee's CFA when its return address was found at ``slot`` and nothing else
    (CFI, analysis) says where: the x29 saved beside it when that points a little above
    (the caller's frame record at the bottom of the caller's frame: its sp), else the
    slot + one pointer."""
    try:
        fp = read_pointer(slot - ptr_size)
    except Exception:  # unreadable: the plain guess
        return slot + ptr_size
    if fp % 16 == 0 and slot + ptr_size <= fp <= slot + MAX_FRAME:
        return fp
    return slot + ptr_size
