"""Function entries in RISC-V code that has neither symbols nor CFI, and return addresses.

``split_gap``, ``search_entries`` and ``after_call`` for swk_plugin.analysis.bounds.  Code
mixes 2- and 4-byte instructions: a gap is decoded linearly from its start (its first
instruction is a boundary); backwards from a pc every halfword may start one, so an entry
candidate is a halfword that decodes as a frame allocation (``addi sp,sp,-N``, 2 or 4
bytes) right after something that ends code (``ret``, ``j``, padding) read either way.

The stack scanner's CFA needs nothing of this architecture's own: GCC and clang save ra
at the top of a frame (CFA - 8), so a return address found at a slot has the callee's
CFA just above it, the interface's default.
"""
from .. import entries
from ..dataflow import CALL, COND, FALL, IJUMP, JUMP, STOP
from ..entries import MAX_SEARCH_CANDIDATES  # noqa: F401 (re-exported)
from . import calls, rv

ENTRY_ALIGN = 2
CALL_LOOKBACK = 4


_FLOWS = {None: FALL, rv.CALL: CALL, rv.JUMP: JUMP, rv.COND: COND, rv.IJUMP: IJUMP, rv.STOP: STOP}


def _insns(code, lo):
    """The engine's (address, size, flow, target, padding) of the code decoded linearly."""
    for a, ins in rv.insns(code, lo):
        raw = int.from_bytes(code[a - lo:a - lo + ins.size], "little")
        flow, tgt = rv.flow(ins, a)
        yield a, ins.size, _FLOWS.get(flow, FALL), tgt, rv.is_padding(ins, raw)


def split_gap(code, lo):
    """Function starts in the CFI-less code ``code`` found at ``lo``, sorted (arch/entries.py):
    the first non-padding instruction, every direct call target, and the code after a ret/j/jr
    and its padding unless a branch between other code crosses that point."""
    return entries.split_points(_insns(code, lo), lo, lo + len(code))


def looks_like_entry(ins):
    """``addi sp,sp,-N`` (c.addi16sp, c.addi, addi): a frame allocated."""
    return ins is not None and ins.op == rv.ADDI and ins.rd == rv.SP and ins.rs1 == rv.SP and ins.imm < 0


def _ends_code(code, i):
    """Whether an instruction ending at ``code[i]`` (2 or 4 bytes) ends a run of code."""
    for size in (2, 4):
        if i >= size and rv.length(code, i - size) == size:
            ins = rv.decode(code, i - size)
            raw = int.from_bytes(code[i - size:i], "little")
            if rv.is_padding(ins, raw) or rv.flow(ins, 0)[0] in (rv.STOP, rv.JUMP, rv.IJUMP):
                return True
    return False


def search_entries(code, lo, pc, exact=True, region_start=None):
    """Likely entries at or before pc in ``code`` (the bytes at lo..), nearest first."""
    return entries.search_back(lo, pc - lo, 2, lambda i: looks_like_entry(rv.decode(code, i)),
                               lambda i: _ends_code(code, i), region_start)


def after_call(code):
    """Whether ``code`` (the CALL_LOOKBACK bytes before an address) ends with a call."""
    return bool(calls.calls_ending_at(code, len(code)))
