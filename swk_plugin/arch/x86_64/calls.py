"""Is there an x86-64 call instruction ending exactly at an address, and where does it go?

The stack scanner (StepperWanderer) holds a word that might be a return address.
x86 cannot be decoded backwards, so ``calls_ending_at`` tries every start 2..9
bytes back and keeps each where a call instruction of exactly that length
begins.  That proves only that a valid call *could* end there: the same bytes
may be the tail of a longer instruction (``48 b8 11 22 33 e8 44 55 66 77`` is a
movabs whose immediate ends in a perfectly good ``call rel32``).  Only decoding
from a known instruction boundary settles it: ``return_sites`` sweeps a whole
function with capstone (x86-64 compilers put no data in .text, so a linear
sweep from the entry stays in step).

Encodings accepted — the near calls compilers and assemblers emit:

* ``e8 rel32``: call rel32, 5 bytes; its target is known (``CallSite.target``).
* ``ff /2`` ModRM [SIB] [disp8|disp32]: call r/m64, 2..7 bytes.  ``ff 15
  disp32`` (``call *x@GOTPCREL(%rip)``, -fno-plt) and ``ff 14 25 disp32``
  (``call *abs32``) name the memory word holding the target (``CallSite.slot``).
* before the opcode, one optional REX byte (40-4f: B and X extend the base and
  index, ``41 ff d0`` = ``call *%r8``), and before that at most one of f2
  (bnd), 3e (notrack), 2e, 64/65 (fs/gs: ``slot`` is then unknown).  At most
  9 bytes in all.

Not accepted: 66 (a 16-bit call: AMD and Intel disagree on what it does) and
67 (32-bit addressing) — compilers never emit them, and every byte sequence
accepted is one more way for junk to look like a return site.  ``ff /3`` is
a far call, ``9a`` is invalid in 64-bit mode.
"""
from ..callsite import CallSite

MAX_CALL_LEN = 9
_MASK = (1 << 64) - 1
_LEGACY = frozenset({0xf2, 0x3e, 0x2e, 0x64, 0x65})
_SEGMENT = frozenset({0x64, 0x65})


def decode_call(code, addr=0):
    """The call instruction at the start of ``code`` (bytes at ``addr``), or None.

    Bytes after the instruction are ignored; a truncated one is None.
    """
    return decode_call_in_mode(code, addr, 64)


def decode_call_in_mode(code, addr, bits):
    """decode_call for 64-bit code (``bits`` 64) or 32-bit code (32: i386, where 40-4f
    are inc/dec, not REX prefixes, and ``ff 15 disp32`` is an absolute address, not
    rip-relative)."""
    n = len(code)
    mask = _MASK if bits == 64 else 0xFFFFFFFF
    i = 0
    prefix = 0
    if i < n and code[i] in _LEGACY:
        prefix = code[i]
        i += 1
    rex = 0
    if bits == 64 and i < n and 0x40 <= code[i] <= 0x4f:
        rex = code[i]
        i += 1
    if i >= n:
        return None
    op = code[i]
    i += 1
    if op == 0xe8:
        if n < i + 4:
            return None
        rel = int.from_bytes(code[i:i + 4], "little", signed=True)
        length = i + 4
        return CallSite(addr, length, (addr + length + rel) & mask, None)
    if op != 0xff or i >= n:
        return None
    modrm = code[i]
    i += 1
    if (modrm >> 3) & 7 != 2:
        return None
    mod, rm = modrm >> 6, modrm & 7
    if mod == 3:                                   # call *%reg
        return CallSite(addr, i, None, None)
    rip = absolute = False
    disp_len = 0
    if rm == 4:                                    # SIB follows
        if i >= n:
            return None
        sib = code[i]
        i += 1
        if mod == 0 and sib & 7 == 5:              # no base: disp32 [+ index*scale]
            disp_len = 4
            absolute = (sib >> 3) & 7 == 4 and not rex & 0x2
    elif mod == 0 and rm == 5:                     # rip + disp32 (REX.B does not change it); i386: disp32
        disp_len = 4
        rip = bits == 64
        absolute = bits != 64
    if mod == 1:
        disp_len = 1
    elif mod == 2:
        disp_len = 4
    length = i + disp_len
    if n < length:
        return None
    slot = None
    if (rip or absolute) and prefix not in _SEGMENT:
        disp = int.from_bytes(code[i:length], "little", signed=True)
        slot = (addr + length + disp if rip else disp) & mask
    return CallSite(addr, length, None, slot)


def calls_ending_at(code, end):
    """Every call instruction that could end exactly at ``end``; ``code`` is the bytes just before it.

    Shortest first.  Several can overlap (``e8 11 22 ff d0`` ends both a call rel32
    and ``call *%rax``); a caller that knows an instruction boundary picks one.
    """
    return calls_ending_at_in_mode(code, end, 64)


def calls_ending_at_in_mode(code, end, bits, max_len=MAX_CALL_LEN):
    n = len(code)
    out = []
    for k in range(2, min(n, max_len) + 1):
        call = decode_call_in_mode(code[n - k:], end - k, bits)
        if call is not None and call.length == k:
            out.append(call)
    return out


# --- capstone: decoding from known instruction boundaries -----------------------------------------

_CS = {}


def _capstone(bits=64):
    cs = _CS.get(bits)
    if cs is None:
        import capstone
        cs = _CS[bits] = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64 if bits == 64
                                     else capstone.CS_MODE_32)
    return cs


def _is_call(mnemonic):
    return mnemonic.rsplit(" ", 1)[-1] == "call"    # "call", "bnd call", "notrack call"


def confirm_call(code, addr=0, bits=64):
    """Whether capstone decodes ``code`` (bytes at ``addr``) as exactly one call instruction."""
    for _a, size, mnemonic, _ops in _capstone(bits).disasm_lite(bytes(code), addr, 1):
        return size == len(code) and _is_call(mnemonic)
    return False


def return_sites(code, start, bits=64):
    """Sweep ``code`` (a whole function at ``start``) instruction by instruction.

    Returns ({return address: address of its call}, end of the decoded part):
    decoding stops at the first byte capstone cannot decode, and beyond that
    nothing is known.
    """
    sites = {}
    pos = start
    for a, size, mnemonic, _ops in _capstone(bits).disasm_lite(bytes(code), start):
        pos = a + size
        if _is_call(mnemonic):
            sites[pos] = a
    return sites, pos


# --- PLT stubs -----------------------------------------------------------------------------

#: .plt: a 16-byte PLT0, then 16-byte entries; .plt.got entries are 8 (or entsize) bytes.
PLT0_SIZE = 16
PLT_ENTRY_SIZE = 16
PLT_GOT_ENTRY_SIZE = 8
#: R_X86_64_GLOB_DAT (6) and R_X86_64_JUMP_SLOT (7): relocations that fill a PLT's GOT slot.
PLT_RELOCATIONS = frozenset({6, 7})


def plt_entry_slot(entry, addr, got_base=None):
    """The GOT slot a PLT entry (bytes ``entry`` at ``addr``) jumps through, or None:
    ``jmp *disp32(%rip)`` anywhere in the entry (after endbr64 / bnd)."""
    k = entry.find(b"\xff\x25")
    if k < 0 or k + 6 > len(entry):
        return None
    disp = int.from_bytes(entry[k + 2:k + 6], "little", signed=True)
    return addr + k + 6 + disp

ENDBR64 = b"\xf3\x0f\x1e\xfa"
#: Bytes to read at a PLT stub to decode it.
PLT_STUB_SIZE = 11


def plt_slot(code, addr, got_base=None):
    """The GOT word a PLT stub at ``addr`` jumps through ([endbr64] [bnd] jmp *slot(%rip)),
    or None if ``code`` (bytes at addr) is not one.  (``got_base``: unused, the slot is
    rip-relative; i386's PIC stubs need it.)"""
    i = 4 if code.startswith(ENDBR64) else 0
    if i < len(code) and code[i] == 0xf2:
        i += 1
    if code[i:i + 2] != b"\xff\x25" or len(code) < i + 6:
        return None
    end = addr + i + 6
    return end + int.from_bytes(code[i + 2:i + 6], "little", signed=True)
