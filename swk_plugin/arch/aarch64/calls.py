"""Is there an AArch64 call instruction ending exactly at an address, and where does it go?

A64 instructions are 4 bytes and 4-aligned, so the question the stack scanner asks
of a candidate return address ``ra`` has one answer: the word at ``ra - 4``.  Calls:

* ``bl imm26``: its target is known (``CallSite.target``);
* ``blr Xn`` and the pointer-authenticated ``blraa``/``blrab``/``blraaz``/``blrabz``:
  indirect, the target is unknown.

PLT entries (``.plt``: a 32-byte PLT0, then 16-byte entries, optionally after a
``bti c``) are ``adrp x16, PAGE; ldr x17, [x16, #off]; add x16, x16, #off; br x17``:
the GOT slot is PAGE + off.
"""
from ..callsite import CallSite

MAX_CALL_LEN = 4
_MASK = (1 << 64) - 1


def _word(code, i=0):
    return int.from_bytes(code[i:i + 4], "little")


def is_bl(insn):
    return insn & 0xfc000000 == 0x94000000


def is_indirect_call(insn):
    """blr, blraaz, blrabz, blraa, blrab."""
    return (insn & 0xfffffc1f == 0xd63f0000 or insn & 0xfffffc1f in (0xd63f081f, 0xd63f0c1f)
            or insn & 0xfffff800 == 0xd73f0800 or insn & 0xfffff800 == 0xd73f0c00)


def bl_target(insn, addr):
    imm = insn & 0x3ffffff
    if imm & 0x2000000:
        imm -= 0x4000000
    return (addr + 4 * imm) & _MASK


def decode_call(code, addr=0):
    """The call instruction at the start of ``code`` (bytes at ``addr``), or None."""
    if len(code) < 4 or addr % 4:
        return None
    insn = _word(code)
    if is_bl(insn):
        return CallSite(addr, 4, bl_target(insn, addr), None)
    if is_indirect_call(insn):
        return CallSite(addr, 4, None, None)
    return None


def calls_ending_at(code, end):
    """The call instruction ending exactly at ``end`` (``code``: the bytes just before it), as a
    list of none or one."""
    if len(code) < 4 or end % 4:
        return []
    call = decode_call(code[-4:], end - 4)
    return [call] if call is not None else []


def confirm_call(code, addr=0):
    return len(code) == 4 and decode_call(code, addr) is not None


def return_sites(code, start):
    """({return address: address of its call}, end of the decoded part) for a whole function
    at ``start``: every aligned word is an instruction."""
    sites = {}
    n = len(code) // 4 * 4
    for i in range(0, n, 4):
        insn = _word(code, i)
        if is_bl(insn) or is_indirect_call(insn):
            sites[start + i + 4] = start + i
    return sites, start + n


# --- PLT stubs -------------------------------------------------------------------------------

PLT0_SIZE = 32
PLT_ENTRY_SIZE = 16
PLT_GOT_ENTRY_SIZE = 16
#: R_AARCH64_GLOB_DAT (1025), R_AARCH64_JUMP_SLOT (1026).
PLT_RELOCATIONS = frozenset({1025, 1026})
BTI_C = 0xd503245f
#: Bytes to read at a PLT stub to decode it (bti c, adrp, ldr, add, br).
PLT_STUB_SIZE = 20


def _adrp(insn, addr, reg=None):
    """The page an ``adrp`` computes, or None if ``insn`` is not one (into ``reg``)."""
    if insn & 0x9f000000 != 0x90000000 or (reg is not None and insn & 0x1f != reg):
        return None
    imm = ((insn >> 5) & 0x7ffff) << 2 | ((insn >> 29) & 3)
    if imm & (1 << 20):
        imm -= 1 << 21
    return ((addr & ~0xfff) + (imm << 12)) & _MASK


def plt_slot(code, addr, got_base=None):
    """The GOT word a PLT stub at ``addr`` loads its target from, or None if ``code`` (bytes
    at addr) is not one: [bti c] adrp x16, PAGE; ldr x17, [x16, #off].  ``got_base`` (the
    interface's: i386's PIC stubs index from %ebx) is not needed: adrp is pc-relative."""
    i = 4 if len(code) >= 4 and _word(code) == BTI_C else 0
    if len(code) < i + 8:
        return None
    page = _adrp(_word(code, i), addr + i, 16)
    ldr = _word(code, i + 4)
    # ldr x17, [x16, #imm12*8]
    if page is None or ldr & 0xffc003ff != 0xf9400211:
        return None
    return page + ((ldr >> 10) & 0xfff) * 8


def plt_entry_slot(entry, addr, got_base=None):
    """The GOT slot one PLT entry (bytes ``entry`` at ``addr``) jumps through, or None."""
    return plt_slot(entry, addr)
