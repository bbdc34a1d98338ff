"""Is there an i386 call instruction ending exactly at an address, and where does it go?

The same questions as arch/x86_64/calls.py, whose decoder this shares, in 32-bit
mode: no REX prefixes (40-4f are ``inc``/``dec``, so ``41 ff d0`` is ``inc %ecx;
call *%eax``, not ``call *%r8``), ``ff 15 disp32`` / ``ff 14 25 disp32`` name an
absolute memory word (there is no rip-relative addressing), and a segment prefix
is common: glibc enters the kernel through ``call *%gs:0x10`` (``65 ff 15 10 00 00
00``), the vDSO's ``__kernel_vsyscall``.  The longest call is 8 bytes.

PLT entries (the i386 psABI): ``jmp *slot`` (``ff 25 abs32``) in non-PIC code,
``jmp *disp(%ebx)`` (``ff a3 disp32``: %ebx holds the GOT's address, .got.plt) in
PIC code, both after an ``endbr32`` in IBT PLTs (.plt.sec).
"""
from ..callsite import CallSite
from ..x86_64.calls import calls_ending_at_in_mode, confirm_call as _confirm, \
    decode_call_in_mode, return_sites as _return_sites

__all__ = ["CallSite", "MAX_CALL_LEN", "decode_call", "calls_ending_at", "confirm_call", "return_sites",
           "plt_entry_slot", "plt_slot"]

BITS = 32
MAX_CALL_LEN = 8


def decode_call(code, addr=0):
    """The call instruction at the start of ``code`` (bytes at ``addr``), or None."""
    return decode_call_in_mode(code, addr, BITS)


def calls_ending_at(code, end):
    """Every call instruction that could end exactly at ``end`` (``code``: the bytes before it)."""
    return calls_ending_at_in_mode(code, end, BITS, MAX_CALL_LEN)


def confirm_call(code, addr=0):
    return _confirm(code, addr, BITS)


def return_sites(code, start):
    return _return_sites(code, start, BITS)


# --- PLT stubs -----------------------------------------------------------------------------

PLT0_SIZE = 16
PLT_ENTRY_SIZE = 16
PLT_GOT_ENTRY_SIZE = 8
#: R_386_GLOB_DAT (6) and R_386_JUMP_SLOT (7).
PLT_RELOCATIONS = frozenset({6, 7})
ENDBR32 = b"\xf3\x0f\x1e\xfb"
PLT_STUB_SIZE = 10


def _slot(code, i, addr, got_base):
    if code[i:i + 2] == b"\xff\x25" and len(code) >= i + 6:            # jmp *abs32
        return int.from_bytes(code[i + 2:i + 6], "little")
    if code[i:i + 2] == b"\xff\xa3" and len(code) >= i + 6:            # jmp *disp32(%ebx)
        base = got_base() if callable(got_base) else got_base
        if base is None:
            return None
        return (base + int.from_bytes(code[i + 2:i + 6], "little", signed=True)) & 0xFFFFFFFF
    return None


def plt_entry_slot(entry, addr, got_base=None):
    """The GOT slot a PLT entry (bytes ``entry`` at ``addr``) jumps through, or None;
    ``got_base``: the address of .got.plt (what %ebx holds in PIC code)."""
    for pattern in (b"\xff\x25", b"\xff\xa3"):
        k = entry.find(pattern)
        if k >= 0:
            return _slot(entry, k, addr, got_base)
    return None


def plt_slot(code, addr, got_base=None):
    """The GOT word a PLT stub at ``addr`` jumps through ([endbr32] jmp *slot or
    jmp *disp(%ebx)), or None if ``code`` (bytes at addr) is not one.  ``got_base``:
    the GOT's run-time address (or a function giving it), needed for PIC stubs."""
    i = 4 if code.startswith(ENDBR32) else 0
    return _slot(code, i, addr, got_base)
