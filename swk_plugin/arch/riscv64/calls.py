"""RISC-V 64 calls: the jumps that link ra, ending at a return address.

A call leaves the address after it in ra (the psABI's link register):

* ``jal ra, target`` (4 bytes): a pc-relative ±1 MiB call; its target is known;
* ``jalr ra, off(rs1)`` (4 bytes): through a register.  The linker's ``call`` out of
  ``jal``'s range is ``auipc ra, hi; jalr ra, lo(ra)``: its target is known too;
* ``c.jalr rs1`` (2 bytes): through a register.  (RV64C has no ``c.jal``: that encoding is
  ``c.addiw`` here.)

Code mixes 2- and 4-byte instructions, so the bytes before a return address may end in
either: ``calls_ending_at`` tries both, and ``return_sites`` decodes a whole function from
its start (every boundary known).  ``jal t0`` (the alternate link register: millicode
such as ``__riscv_save_N``) returns through t0 and never leaves its return address on the
stack: not a call here.

PLT (psABI "Procedure Linkage Table"): a 32-byte header, then 16-byte entries
``auipc t3, hi(slot); ld t3, lo(slot)(t3); jalr t1, t3; nop`` over .got.plt slots filled
by R_RISCV_JUMP_SLOT (5).
"""
from ..callsite import CallSite
from . import rv

MAX_CALL_LEN = 4
_MASK = (1 << 64) - 1


def _auipc_target(code, i, jalr):
    """The target of ``jalr ra, lo(ra)`` preceded by ``auipc ra, hi`` at code[i-4:i], else None."""
    if i < 4 or jalr.rs1 != rv.RA:
        return None
    prev = rv.decode(code, i - 4)
    if prev is None or prev.size != 4 or prev.op != rv.AUIPC or prev.rd != rv.RA:
        return None
    return prev.imm + jalr.imm          # relative to the auipc's address


def decode_call(code, addr=0, i=0):
    """The call at ``code[i:]`` (at ``addr``), or None."""
    ins = rv.decode(code, i)
    if ins is None or not rv.is_call(ins):
        return None
    if ins.op == rv.JAL:
        return CallSite(addr, 4, (addr + ins.imm) & _MASK, None)
    rel = _auipc_target(code, i, ins) if ins.size == 4 else None
    return CallSite(addr, ins.size, (addr - 4 + rel) & _MASK if rel is not None else None, None)


def calls_ending_at(code, end):
    """The calls that may end exactly at ``end`` (``code``: the bytes just before it): a
    4-byte one and a 2-byte one, where the bytes read as such (without the function's start
    the boundary between them is not known)."""
    out = []
    for size in (4, 2):
        if len(code) >= size and rv.length(code, len(code) - size) == size:
            call = decode_call(code, end - size, len(code) - size)
            if call is not None:
                out.append(call)
    return out


def return_sites(code, start):
    """({return address: address of its call}, end of the decoded part) for a whole function
    at ``start``, decoded instruction by instruction from there."""
    sites = {}
    end = start
    for addr, ins in rv.insns(code, start):
        end = addr + ins.size
        if rv.is_call(ins):
            sites[end] = addr
    return sites, end


# --- PLT entries ----------------------------------------------------------------------------------
PLT0_SIZE = 32
PLT_ENTRY_SIZE = 16
PLT_GOT_ENTRY_SIZE = 16
#: R_RISCV_JUMP_SLOT (5): RISC-V has no .plt.got (a GOT word of R_RISCV_64 is data).
PLT_RELOCATIONS = frozenset({5})
PLT_STUB_SIZE = 12
T1, T3 = 6, 28


def plt_slot(code, addr, got_base=None):
    """The GOT slot a PLT entry at ``addr`` loads its target from, or None if ``code`` is not
    one: ``auipc t3, hi; ld t3, lo(t3); jalr t1, t3``."""
    a, b, c = rv.decode(code, 0), rv.decode(code, 4), rv.decode(code, 8)
    if a is None or b is None or c is None or a.size != 4 or b.size != 4:
        return None
    if (a.op, a.rd) != (rv.AUIPC, T3) or (b.op, b.rd, b.rs1) != (rv.LD, T3, T3) \
            or (c.op, c.rd, c.rs1) != (rv.JALR, T1, T3):
        return None
    return (addr + a.imm + b.imm) & _MASK


def plt_entry_slot(entry, addr, got_base=None):
    return plt_slot(entry, addr)
