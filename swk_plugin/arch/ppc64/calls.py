"""Power-64 calls: the branch-and-link instructions ending at a return address.

Every instruction is one 4-byte word.  A call sets lr to the next word:

* ``bl target`` (I-form, primary opcode 18, AA=0, LK=1): a pc-relative 26-bit
  displacement; its target is known.  Code calls another module through a linker stub,
  which saves the caller's TOC in the caller's frame, and restores it after the call
  (``bl stub; ld r2,TOC_SAVE(r1)``): the return address is the ``ld``.  TOC_SAVE is 24
  under ELFv2, 40 under ELFv1 (whose frame header has two more doublewords before it,
  reserved for the compiler and the linker).
* ``bctrl`` (0x4e800421) and ``blrl`` (0x4e800021): through ctr or lr, target unknown.
* ``bcl``/``bcctrl`` conditional forms are left out: GCC uses ``bcl 20,31,$+4`` only
  to read the pc, never to call, and a return site made of them would be noise.

PLT stubs: the linker's stubs (both ABIs) load their target relative to the TOC (r2),
which a walk does not know in every frame: not decoded (no ``NAME@plt`` symbols, as the
symbol tables have none either).

``order``: the byte order of the code's words (ppc.py).
"""
from ..callsite import CallSite
from .ppc import LITTLE, word

MAX_CALL_LEN = 4
_MASK = (1 << 64) - 1
BCTRL = 0x4e800421
BLRL = 0x4e800021
#: ELFv2's TOC save slot in a frame's header (r1+24; ELFv1's is r1+40: elfv1/calls.py).
TOC_SAVE = 24


def is_bl(insn):
    return insn & 0xfc000003 == 0x48000001


def is_indirect_call(insn):
    return insn in (BCTRL, BLRL)


def bl_target(insn, addr):
    imm = insn & 0x03fffffc
    if imm & 0x02000000:
        imm -= 0x04000000
    return (addr + imm) & _MASK


def decode_call(code, addr=0, order=LITTLE):
    """The call instruction at the start of ``code`` (bytes at ``addr``), or None."""
    if len(code) < 4 or addr % 4:
        return None
    insn = word(code, 0, order)
    if is_bl(insn):
        return CallSite(addr, 4, bl_target(insn, addr), None)
    if is_indirect_call(insn):
        return CallSite(addr, 4, None, None)
    return None


def calls_ending_at(code, end, order=LITTLE):
    """The call instruction ending exactly at ``end`` (``code``: the bytes just before it), as a
    list of none or one."""
    if len(code) < 4 or end % 4:
        return []
    call = decode_call(code[-4:], end - 4, order)
    return [call] if call is not None else []


def confirm_call(code, addr=0, order=LITTLE):
    return len(code) == 4 and decode_call(code, addr, order) is not None


def return_sites(code, start, order=LITTLE):
    """({return address: address of its call}, end of the decoded part) for a whole function
    at ``start``: every aligned word is an instruction."""
    sites = {}
    n = len(code) // 4 * 4
    for i in range(0, n, 4):
        insn = word(code, i, order)
        if is_bl(insn) or is_indirect_call(insn):
            sites[start + i + 4] = start + i
    return sites, start + n


# --- PLT stubs: none decoded (see above) ------------------------------------------------------
PLT0_SIZE = 0
PLT_ENTRY_SIZE = 16
PLT_GOT_ENTRY_SIZE = 8
PLT_RELOCATIONS = frozenset()
PLT_STUB_SIZE = 16


def plt_slot(code, addr, got_base=None):
    return None


def plt_entry_slot(entry, addr, got_base=None):
    return None
