"""Function entries in s390x code that has neither symbols nor CFI, and return addresses.

``split_gap``, ``search_entries`` and ``after_call`` for swk_plugin.analysis.bounds.  Code
mixes 2-, 4- and 6-byte instructions: a gap is decoded linearly from its start (its first
instruction is a boundary); backwards from a pc every halfword may start one, so an entry
candidate is a halfword that decodes as a frame's first instruction (``stmg ...,%r15,d(%r15)``
saving r14 and r15, ``lay``/``aghi %r15,-N``, a leaf's ``ldgr %fN,%r11``) right after
something that ends code (``br %r14``, a jump, padding) read any of the three ways.

The stack scanner's CFA (``scan_cfa``): a return address found on the stack is r14 as a
callee saved it, in its caller's register save area at the callee's CFA - 48.
"""
from .. import entries
from ..dataflow import CALL, COND, FALL, IJUMP, JUMP, STOP
from ..entries import MAX_SEARCH_CANDIDATES  # noqa: F401 (re-exported)
from . import calls
from . import registers as R
from . import zarch as Z

ENTRY_ALIGN = 2
CALL_LOOKBACK = calls.MAX_CALL_LEN
#: Where a callee saves r14: CFA - 48 (slot 14 of the register save area).
RA_SLOT = 8 * R.ra - R.SAVE_AREA


_FLOWS = {None: FALL, Z.CALL: CALL, Z.JUMP: JUMP, Z.COND: COND, Z.IJUMP: IJUMP, Z.STOP: STOP}


def _insns(code, lo):
    """The engine's (address, size, flow, target, padding) of the code decoded linearly."""
    for a, ins in Z.insns(code, lo):
        raw = int.from_bytes(code[a - lo:a - lo + ins.size], "big")
        flow, tgt = Z.flow(ins, a)
        yield a, ins.size, _FLOWS.get(flow, FALL), tgt, Z.is_padding(ins, raw)


def split_gap(code, lo):
    """Function starts in the CFI-less code ``code`` found at ``lo``, sorted (arch/entries.py):
    the first non-padding instruction, every direct call target, and the code after a return or
    jump and its padding unless a branch between other code crosses that point."""
    return entries.split_points(_insns(code, lo), lo, lo + len(code))


def looks_like_entry(ins):
    """A frame's first instruction: ``stmg %rN,%r15,d(%r15)`` saving r14 and r15 where the ABI
    puts them (d = 8N from the entry r15), ``lay``/``aghi``/``agfi %r15,-N``, or ``ldgr %fN,%r11|%r15``."""
    if ins is None:
        return False
    if ins.op == Z.STMG:
        return ins.r2 == R.sp and ins.b == R.sp and ins.r1 <= R.ra and ins.d == 8 * ins.r1
    if ins.op in (Z.LAY, Z.AGHI, Z.AGFI):
        d = ins.d if ins.op == Z.LAY else ins.imm
        return R.sp in ins.writes and (ins.op != Z.LAY or ins.b == R.sp) and d < 0
    return ins.op == Z.LDGR and ins.r2 in (R.fp, R.sp)


def _ends_code(code, i):
    """Whether an instruction ending at ``code[i]`` (2, 4 or 6 bytes) ends a run of code."""
    for size in (2, 4, 6):
        if i >= size and Z.length(code, i - size) == size:
            ins = Z.decode(code, i - size)
            raw = int.from_bytes(code[i - size:i], "big")
            if Z.is_padding(ins, raw) or Z.flow(ins, 0)[0] in (Z.STOP, Z.JUMP, Z.IJUMP):
                return True
    return False


def search_entries(code, lo, pc, exact=True, region_start=None):
    """Likely entries at or before pc in ``code`` (the bytes at lo..), nearest first."""
    return entries.search_back(lo, pc - lo, 2, lambda i: looks_like_entry(Z.decode(code, i)),
                               lambda i: _ends_code(code, i), region_start)


def after_call(code):
    """Whether ``code`` (the CALL_LOOKBACK bytes before an address) ends with a call."""
    return bool(calls.calls_ending_at(code, len(code)))


def scan_cfa(slot):
    """The callee's CFA when its return address was found at ``slot``: r14's save slot."""
    return slot - RA_SLOT
