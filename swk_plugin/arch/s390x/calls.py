"""s390x calls: the branches that link r14, ending at a return address.

A call leaves the address after it in r14 (the ABI's return-address register):

* ``brasl %r14,target`` (6 bytes): pc-relative, ±4 GiB, what GCC emits for every direct
  call (``func@PLT`` across modules); its target is known;
* ``bras %r14,target`` (4 bytes): pc-relative, ±64 KiB;
* ``basr %r14,%rN`` (2 bytes): through a register (``basr %r14,%r0`` does not branch);
  ``bas %r14,d(x,b)`` (4 bytes), through an address, and ``balr`` are older forms.

Instructions are 2, 4 or 6 bytes long, so the bytes before a return address may end any
of those calls: ``calls_ending_at`` tries each length, and ``return_sites`` decodes a whole
function from its start (every boundary known).  A branch that links another register
(``bras %r1,...`` over a literal pool) never leaves its return address to a caller: not a
call here.

PLT (the ABI's "Procedure Linkage Table"): a 32-byte PLT0, then 32-byte entries
``larl %r1,slot; lg %r1,0(%r1); br %r1; basr %r1,%r0; lgf %r1,12(%r1); jg PLT0; .long``
over .got.plt slots filled by R_390_JMP_SLOT (11).
"""
from ..callsite import CallSite
from . import zarch as Z

MAX_CALL_LEN = 6
_MASK = (1 << 64) - 1


def decode_call(code, addr=0):
    """The call at the start of ``code`` (bytes at ``addr``), or None."""
    ins = Z.decode(code)
    if ins is None or not Z.is_call(ins):
        return None
    target = (addr + ins.imm) & _MASK if ins.op in (Z.BRASL, Z.BRAS) else None
    return CallSite(addr, ins.size, target, None)


def calls_ending_at(code, end):
    """The calls that may end exactly at ``end`` (``code``: the bytes just before it), one per
    length whose bytes read as a call of that length (without the function's start the
    boundary is not known)."""
    out = []
    for size in (6, 4, 2):
        if len(code) >= size and Z.length(code, len(code) - size) == size:
            call = decode_call(code[len(code) - size:], end - size)
            if call is not None:
                out.append(call)
    return out


def return_sites(code, start):
    """({return address: address of its call}, end of the decoded part) for a whole function
    at ``start``, decoded instruction by instruction from there."""
    sites = {}
    end = start
    for addr, ins in Z.insns(code, start):
        end = addr + ins.size
        if Z.is_call(ins):
            sites[end] = addr
    return sites, end


# --- PLT entries ----------------------------------------------------------------------------------
PLT0_SIZE = 32
PLT_ENTRY_SIZE = 32
PLT_GOT_ENTRY_SIZE = 32
#: R_390_JMP_SLOT (11): s390x has no .plt.got.
PLT_RELOCATIONS = frozenset({11})
PLT_STUB_SIZE = 14
_R1 = 1


def plt_slot(code, addr, got_base=None):
    """The GOT slot a PLT entry at ``addr`` loads its target from, or None if ``code`` is not
    one: ``larl %r1,slot; lg %r1,0(%r1); br %r1``."""
    a, b = Z.decode(code, 0), Z.decode(code, 6)
    c = Z.decode(code, 12)
    if a is None or b is None or c is None:
        return None
    if (a.op, a.r1) != (Z.LARL, _R1) or (b.op, b.r1, b.x, b.b, b.d) != (Z.LG, _R1, 0, _R1, 0) \
            or (c.op, c.imm, c.r2) != (Z.BCR, 15, _R1):
        return None
    return (addr + a.imm) & _MASK


def plt_entry_slot(entry, addr, got_base=None):
    return plt_slot(entry, addr)
