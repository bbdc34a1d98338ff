"""Pointer authentication (ARMv8.3 PAC): return addresses signed by ``paciasp``.

Code built with ``-mbranch-protection=pac-ret[+leaf]`` signs the link register on
entry (``paciasp``: a PAC computed from the address, sp and a per-process key is put
in the pointer's unused upper bits) and authenticates it before returning
(``autiasp``).  A return address saved on the stack, or still in x30 between the
two, therefore carries the PAC in bits the address does not use; the CFI says so
with ``DW_CFA_AARCH64_negate_ra_state`` (the UnwindRule's ``ra_signed``).

Stripping clears those bits.  Which bits they are comes from the target: the
kernel's ``NT_ARM_PAC_MASK`` (a core's note, ptrace's regset), GDB's
``pauth_cmask`` register, LLDB's code address mask; without any, every bit above
the user address width (48 bits: Linux's default VA size, and qemu's) is PAC.  As
GDB does, a pointer with bit 55 set is a kernel (TTBR1) address, whose PAC bits
are set instead of cleared.
"""

#: Linux's default user virtual address width (CONFIG_ARM64_VA_BITS_48; qemu-user too).
VA_BITS = 48
_ALL = (1 << 64) - 1
#: The PAC bits of a user code pointer when the target does not say: all above VA_BITS.
DEFAULT_MASK = _ALL & ~((1 << VA_BITS) - 1)
_BIT55 = 1 << 55

#: GDB's names of the masks (GDB 12+ on a target with the pauth feature).
GDB_MASK_REGISTERS = ("pauth_cmask", "pauth_dmask")
#: LLDB's names of the masks (lldb-server on a Linux target with PAC).
LLDB_MASK_REGISTERS = ("code_mask", "data_mask")


def strip(addr, mask=None):
    """``addr`` without its PAC: the bits of ``mask`` (the target's code mask, else
    DEFAULT_MASK) cleared, or set for a kernel address (bit 55)."""
    if not mask:
        mask = DEFAULT_MASK
    if addr & _BIT55:
        return addr | mask
    return addr & ~mask & _ALL


def usable_mask(mask):
    """A target's code mask if it names PAC bits (some between bit 32 and bit 55), else None.

    LLDB reports the top byte alone (``0xff00000000000000``: TBI) when it knows nothing
    about PAC; such a mask strips nothing a PAC occupies.
    """
    if not mask:
        return None
    mask &= _ALL
    if not mask & ((1 << 56) - 1) & ~((1 << 32) - 1):
        return None
    return mask


def mask_from_note(desc):
    """The code (instruction) mask of an NT_ARM_PAC_MASK note (struct user_pac_mask
    { u64 data_mask; u64 insn_mask; }), or None."""
    if len(desc) < 16:
        return None
    return usable_mask(int.from_bytes(desc[8:16], "little"))
