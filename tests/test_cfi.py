"""CFI reader and CFA interpreter: hand-assembled CIEs/FDEs, opcode by opcode, plus real binaries."""
import subprocess

import pytest

import swk_suite as S

from swk_plugin.dwarf import cfi
from swk_plugin.dwarf.cfi import (ARCHITECTURAL, EXPRESSION, OFFSET, REGISTER, SAME_VALUE, UNDEFINED,
                                  VAL_EXPRESSION, VAL_OFFSET, CfaRule, CfiError, CfiTable, RegRule)
from swk_plugin.arch import X86_64
from swk_plugin.errors import MemoryReadError, RuleError, SwkError
from swk_plugin.unwind.apply import apply_rule

X86 = X86_64()


class _Regs:
    """The register roles apply_rule asks an architecture for (and its byte order)."""
    byteorder = "little"
    sp_below_cfa = 0

    def __init__(self, ptr_size, sp, fp, pc, callee_saved):
        self.ptr_size, self.sp, self.fp, self.pc, self.callee_saved = ptr_size, sp, fp, pc, callee_saved


def unwind_row(row, regs, read_mem, arch=X86):
    """A CFI row applied as every stepper applies a rule (swk_plugin.unwind.apply)."""
    return apply_rule(row, regs, read_mem, arch)

LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"
RSP, RBP, RIP, RBX, RAX = 7, 6, 16, 3, 0


# --- a tiny assembler -------------------------------------------------------------------------------

def uleb(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def sleb(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if (v == 0 and not b & 0x40) or (v == -1 and b & 0x40):
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


def le(v, n):
    return (v & ((1 << (8 * n)) - 1)).to_bytes(n, "little")


def enc_ptr(value, enc, field_addr=0, ptr_size=8, data_base=0, func_base=0):
    """Encode ``value`` as DW_EH_PE ``enc`` would store it at ``field_addr``."""
    app, fmt = enc & 0x70, enc & 0x0F
    pad = b""
    if app == 0x10:
        value -= field_addr
    elif app == 0x30:
        value -= data_base
    elif app == 0x40:
        value -= func_base
    elif app == 0x50:
        pad = b"\0" * ((-field_addr) % ptr_size)
        fmt = 0
    if fmt == 0x00:
        return pad + le(value, ptr_size)
    if fmt == 0x01:
        return uleb(value)
    if fmt == 0x09:
        return sleb(value)
    size = {0x02: 2, 0x03: 4, 0x04: 8, 0x0A: 2, 0x0B: 4, 0x0C: 8}[fmt]
    return le(value, size)


# DW_CFA instruction builders
def advance_loc(d): return bytes([0x40 | d])
def advance_loc1(d): return b"\x02" + le(d, 1)
def advance_loc2(d): return b"\x03" + le(d, 2)
def advance_loc4(d): return b"\x04" + le(d, 4)
def advance_loc8(d): return b"\x1d" + le(d, 8)
def offset(r, off): return bytes([0x80 | r]) + uleb(off)
def restore(r): return bytes([0xC0 | r])
def offset_extended(r, off): return b"\x05" + uleb(r) + uleb(off)
def restore_extended(r): return b"\x06" + uleb(r)
def undefined(r): return b"\x07" + uleb(r)
def same_value(r): return b"\x08" + uleb(r)
def register(r, r2): return b"\x09" + uleb(r) + uleb(r2)
REMEMBER, RESTORE_STATE, NOP = b"\x0a", b"\x0b", b"\x00"
def def_cfa(r, off): return b"\x0c" + uleb(r) + uleb(off)
def def_cfa_register(r): return b"\x0d" + uleb(r)
def def_cfa_offset(off): return b"\x0e" + uleb(off)
def def_cfa_expression(e): return b"\x0f" + uleb(len(e)) + e
def expression(r, e): return b"\x10" + uleb(r) + uleb(len(e)) + e
def offset_extended_sf(r, off): return b"\x11" + uleb(r) + sleb(off)
def def_cfa_sf(r, off): return b"\x12" + uleb(r) + sleb(off)
def def_cfa_offset_sf(off): return b"\x13" + sleb(off)
def val_offset(r, off): return b"\x14" + uleb(r) + uleb(off)
def val_offset_sf(r, off): return b"\x15" + uleb(r) + sleb(off)
def val_expression(r, e): return b"\x16" + uleb(r) + uleb(len(e)) + e
def args_size(n): return b"\x2e" + uleb(n)
def negative_offset_extended(r, off): return b"\x2f" + uleb(r) + uleb(off)
WINDOW_SAVE = b"\x2d"
def breg(r, off): return bytes([0x70 + r]) + sleb(off)
DEREF = b"\x06"

X86_CIE = def_cfa(RSP, 8) + offset(RIP, 1)          # what every x86-64 CIE says


class EhFrame:
    """Builds an .eh_frame section at ``addr``; entries are placed back to back."""

    def __init__(self, addr=0x20000, ptr_size=8):
        self.addr, self.ptr_size = addr, ptr_size
        self.buf = bytearray()
        self.cies = {}

    def _emit(self, body, dwarf64):
        off = len(self.buf)
        if dwarf64:
            self.buf += b"\xff\xff\xff\xff" + le(len(body), 8)
        else:
            self.buf += le(len(body), 4)
        self.buf += body
        return off

    def cie(self, ins=X86_CIE, aug="zR", code_align=1, data_align=-8, ra=RIP, version=1,
            fde_enc=0x1B, personality=None, personality_enc=0x9B, lsda_enc=0x1B, extra=b"",
            dwarf64=False):
        off = len(self.buf)
        hdr = 12 if dwarf64 else 4
        body = bytearray(le(0, 4)) + bytes([version]) + aug.encode() + b"\0"
        if aug.startswith("eh"):
            body += b"\0" * self.ptr_size
        body += uleb(code_align) + sleb(data_align) + (bytes([ra]) if version == 1 else uleb(ra))
        if "z" in aug:
            data = bytearray()
            for ch in aug[aug.index("z") + 1:]:
                here = self.addr + off + hdr + len(body) + 1 + len(data)
                if ch == "R":
                    data.append(fde_enc)
                elif ch == "P":
                    data.append(personality_enc)
                    data += enc_ptr(personality, personality_enc, here + 1, self.ptr_size)
                elif ch == "L":
                    data.append(lsda_enc)
            data += extra
            assert len(data) < 128
            body += uleb(len(data)) + data
        body += ins
        self.cies[off] = (fde_enc if "R" in aug else 0, aug, lsda_enc)
        return self._emit(bytes(body), dwarf64)

    def fde(self, cie_off, begin, end, ins=b"", lsda=None, dwarf64=False, cie_ptr=None):
        enc, aug, lsda_enc = self.cies.get(cie_off, (0x1B, "zR", 0x1B))
        off = len(self.buf)
        hdr = 12 if dwarf64 else 4
        body = bytearray(le(off + hdr - cie_off if cie_ptr is None else cie_ptr, 4))
        body += enc_ptr(begin, enc, self.addr + off + hdr + len(body), self.ptr_size)
        body += enc_ptr(end - begin, enc & 0x0F, 0, self.ptr_size)
        if "z" in aug:
            data = b""
            if "L" in aug and lsda_enc != 0xFF:
                data = enc_ptr(lsda, lsda_enc, self.addr + off + hdr + len(body) + 1, self.ptr_size,
                               func_base=begin)
            body += uleb(len(data)) + data
        body += ins
        return self._emit(bytes(body), dwarf64)

    def terminate(self):
        self.buf += b"\0\0\0\0"

    @property
    def data(self):
        return bytes(self.buf)

    def table(self, **kw):
        return CfiTable.from_eh_frame(self.data, self.addr, ptr_size=self.ptr_size, **kw)


def eh_frame_hdr(hdr_addr, eh_addr, entries, table_enc=0x3B, count_enc=0x03, ptr_enc=0x1B,
                 ptr_size=8):
    """An .eh_frame_hdr with the (pc, fde_address) search table."""
    b = bytearray([1, ptr_enc, count_enc, table_enc])
    b += enc_ptr(eh_addr, ptr_enc, hdr_addr + 4, ptr_size, data_base=hdr_addr)
    if count_enc != 0xFF:
        b += enc_ptr(len(entries), count_enc, hdr_addr + len(b), ptr_size)
    for pc, fde_addr in sorted(entries):
        b += enc_ptr(pc, table_enc, hdr_addr + len(b), ptr_size, data_base=hdr_addr)
        b += enc_ptr(fde_addr, table_enc, hdr_addr + len(b), ptr_size, data_base=hdr_addr)
    return bytes(b)


class DebugFrame:
    """Builds a .debug_frame section (CIE pointers are section offsets, addresses absolute)."""

    def __init__(self):
        self.buf = bytearray()
        self.cies = {}

    def _emit(self, body, dwarf64):
        off = len(self.buf)
        self.buf += (b"\xff\xff\xff\xff" + le(len(body), 8)) if dwarf64 else le(len(body), 4)
        self.buf += body
        return off

    def cie(self, ins=X86_CIE, version=1, code_align=1, data_align=-8, ra=RIP, aug="",
            address_size=8, segment_size=0, dwarf64=False):
        body = bytearray(b"\xff" * (8 if dwarf64 else 4)) + bytes([version]) + aug.encode() + b"\0"
        if version >= 4:
            body += bytes([address_size, segment_size])
        body += uleb(code_align) + sleb(data_align) + (bytes([ra]) if version == 1 else uleb(ra))
        if aug.startswith("z"):
            body += uleb(0)
        body += ins
        off = self._emit(bytes(body), dwarf64)
        self.cies[off] = (address_size if version >= 4 else 8, segment_size, aug)
        return off

    def fde(self, cie_off, begin, end, ins=b"", dwarf64=False):
        asize, ssize, aug = self.cies[cie_off]
        body = bytearray(le(cie_off, 8 if dwarf64 else 4)) + b"\0" * ssize
        body += le(begin, asize) + le(end - begin, asize)
        if aug.startswith("z"):
            body += uleb(0)
        body += ins
        return self._emit(bytes(body), dwarf64)

    def table(self, **kw):
        return CfiTable.from_debug_frame(bytes(self.buf), **kw)


PC = 0x401000
END = 0x401100


def one_fde(ins, cie_ins=X86_CIE, **cie_kw):
    eh = EhFrame()
    c = eh.cie(ins=cie_ins, **cie_kw)
    eh.fde(c, PC, END, ins)
    eh.terminate()
    return eh.table()


def row(ins, at=PC, **kw):
    return one_fde(ins, **kw).row_at(at)


def rows(ins, **kw):
    t = one_fde(ins, **kw)
    return t.rows(t.find_fde(PC))


# --- rows from single instructions -----------------------------------------------------------------

def test_initial_row_comes_from_the_cie():
    r = row(b"")
    assert r.address == PC
    assert r.cfa == CfaRule(RSP, 8)
    assert r.regs == {RIP: RegRule(OFFSET, -8)}
    assert r.ra_reg == RIP and r.signal_frame is False


def test_no_row_outside_the_fde():
    t = one_fde(b"")
    assert t.row_at(PC - 1) is None
    assert t.row_at(END) is None
    assert t.row_at(END - 1).address == PC


@pytest.mark.parametrize("adv", [advance_loc, advance_loc1, advance_loc2, advance_loc4, advance_loc8])
@pytest.mark.parametrize("code_align", [1, 4])
def test_advance_loc_variants(adv, code_align):
    t = one_fde(adv(3) + def_cfa_offset(16) + adv(5) + def_cfa_offset(24), code_align=code_align)
    rs = t.rows(t.find_fde(PC))
    assert [r.address for r in rs] == [PC, PC + 3 * code_align, PC + 8 * code_align]
    assert [r.cfa.offset for r in rs] == [8, 16, 24]
    assert t.row_at(PC + 3 * code_align - 1).cfa.offset == 8
    assert t.row_at(PC + 3 * code_align).cfa.offset == 16
    assert t.row_at(END - 1).cfa.offset == 24


def test_advance_loc_operand_sizes_are_honoured():
    r = rows(advance_loc2(0x80) + def_cfa_offset(16))
    assert [x.address for x in r] == [PC, PC + 0x80]
    r = rows(advance_loc4(0xF0) + def_cfa_offset(16))
    assert [x.address for x in r] == [PC, PC + 0xF0]


def test_advance_past_the_end_stops_decoding():
    # Everything after the FDE's range is irrelevant, even if it would be malformed.
    r = rows(advance_loc2(0x200) + b"\x3f")
    assert [x.address for x in r] == [PC]


def test_zero_advance_makes_no_empty_row():
    r = rows(advance_loc(0) + def_cfa_offset(16))
    assert len(r) == 1 and r[0].cfa.offset == 16


def test_set_loc_pcrel():
    eh = EhFrame()
    c = eh.cie()
    off = len(eh.buf)
    # set_loc's operand sits at: entry + 4 (length) + 4 (cie ptr) + 4 + 4 (begin, range) + 1 (aug len) + 1 (opcode)
    field = eh.addr + off + 4 + 4 + 4 + 4 + 1 + 1
    ins = b"\x01" + enc_ptr(PC + 0x10, 0x1B, field) + def_cfa_offset(16)
    eh.fde(c, PC, END, ins)
    t = eh.table()
    assert [r.address for r in t.rows(t.find_fde(PC))] == [PC, PC + 0x10]
    assert t.row_at(PC + 0x10).cfa.offset == 16


def test_set_loc_absolute_in_debug_frame():
    df = DebugFrame()
    c = df.cie()
    df.fde(c, PC, END, b"\x01" + le(PC + 0x20, 8) + def_cfa_offset(32))
    t = df.table()
    assert t.row_at(PC + 0x1F).cfa.offset == 8
    assert t.row_at(PC + 0x20).cfa.offset == 32


def test_set_loc_backwards_is_an_error():
    df = DebugFrame()
    c = df.cie()
    df.fde(c, PC, END, b"\x01" + le(PC + 0x20, 8) + b"\x01" + le(PC + 0x10, 8))
    with pytest.raises(CfiError, match="backwards"):
        df.table().row_at(PC)


@pytest.mark.parametrize("ins, reg, rule", [
    (offset(RBP, 2), RBP, RegRule(OFFSET, -16)),
    (offset_extended(RBP, 3), RBP, RegRule(OFFSET, -24)),
    (offset_extended(40, 3), 40, RegRule(OFFSET, -24)),
    (offset_extended_sf(RBX, -2), RBX, RegRule(OFFSET, 16)),
    (offset_extended_sf(RBX, 2), RBX, RegRule(OFFSET, -16)),
    (negative_offset_extended(RBX, 2), RBX, RegRule(OFFSET, 16)),
    (val_offset(RBX, 2), RBX, RegRule(VAL_OFFSET, -16)),
    (val_offset_sf(RBX, -3), RBX, RegRule(VAL_OFFSET, 24)),
    (undefined(RIP), RIP, RegRule(UNDEFINED)),
    (same_value(RBX), RBX, RegRule(SAME_VALUE)),
    (register(RBX, 12), RBX, RegRule(REGISTER, 12)),
    (expression(RBX, breg(RSP, 40)), RBX, RegRule(EXPRESSION, breg(RSP, 40))),
    (val_expression(RBX, breg(RSP, 40)), RBX, RegRule(VAL_EXPRESSION, breg(RSP, 40))),
])
def test_register_rule_instructions(ins, reg, rule):
    r = rows(advance_loc(1) + ins)
    assert reg not in r[0].regs or reg == RIP
    assert r[1].regs[reg] == rule
    assert r[1].cfa == CfaRule(RSP, 8)


@pytest.mark.parametrize("ins, cfa", [
    (def_cfa(RBP, 16), CfaRule(RBP, 16)),
    (def_cfa_sf(RBP, -2), CfaRule(RBP, 16)),
    (def_cfa_register(RBP), CfaRule(RBP, 8)),
    (def_cfa_offset(48), CfaRule(RSP, 48)),
    (def_cfa_offset_sf(-6), CfaRule(RSP, 48)),
    (def_cfa_expression(breg(RSP, 160) + DEREF), CfaRule(None, 0, breg(RSP, 160) + DEREF)),
    (def_cfa_expression(breg(RSP, 8)) + def_cfa(RBP, 16), CfaRule(RBP, 16)),
])
def test_cfa_instructions(ins, cfa):
    r = rows(advance_loc(1) + ins)
    assert r[0].cfa == CfaRule(RSP, 8)
    assert r[1].cfa == cfa
    assert r[1].regs == {RIP: RegRule(OFFSET, -8)}


def test_typical_gcc_prologue_rows():
    ins = (advance_loc(1) + def_cfa_offset(16) + offset(RBP, 2) + advance_loc(3) +
           def_cfa_register(RBP) + advance_loc(20) + def_cfa(RSP, 8))
    rs = rows(ins)
    assert [(r.address - PC, r.cfa) for r in rs] == [
        (0, CfaRule(RSP, 8)), (1, CfaRule(RSP, 16)), (4, CfaRule(RBP, 16)), (24, CfaRule(RSP, 8))]
    assert rs[2].regs == {RIP: RegRule(OFFSET, -8), RBP: RegRule(OFFSET, -16)}
    # The rows do not share mutable state.
    assert rs[0].regs == {RIP: RegRule(OFFSET, -8)}


def test_restore_returns_to_the_cie_rule():
    cie_ins = X86_CIE + offset(RBX, 3)
    ins = (advance_loc(1) + offset(RBX, 5) + offset(RBP, 2) + advance_loc(1) + restore(RBX) +
           restore(RBP) + advance_loc(1) + offset(RBX, 6) + restore_extended(RBX) + advance_loc(1) +
           restore_extended(RIP))
    rs = rows(ins, cie_ins=cie_ins)
    assert rs[1].regs[RBX] == RegRule(OFFSET, -40)
    assert rs[2].regs[RBX] == RegRule(OFFSET, -24)
    assert RBP not in rs[2].regs                 # no CIE rule: back to "no rule"
    assert rs[3].regs[RBX] == RegRule(OFFSET, -24)
    assert rs[4].regs[RIP] == RegRule(OFFSET, -8)


def test_remember_and_restore_state():
    ins = (advance_loc(1) + def_cfa_offset(16) + offset(RBX, 2) + REMEMBER +
           advance_loc(1) + def_cfa_offset(8) + same_value(RBX) + undefined(RBP) +
           advance_loc(1) + RESTORE_STATE)
    rs = rows(ins)
    assert rs[2].cfa == CfaRule(RSP, 8) and rs[2].regs[RBX] == RegRule(SAME_VALUE)
    # restore_state brings back the CFA rule too (as GCC's output expects).
    assert rs[3].cfa == CfaRule(RSP, 16)
    assert rs[3].regs == {RIP: RegRule(OFFSET, -8), RBX: RegRule(OFFSET, -16)}


def test_nested_remember_state():
    ins = (def_cfa_offset(16) + REMEMBER + def_cfa_offset(24) + REMEMBER + def_cfa_offset(32) +
           advance_loc(1) + RESTORE_STATE + advance_loc(1) + RESTORE_STATE)
    assert [r.cfa.offset for r in rows(ins)] == [32, 24, 16]


def test_restore_state_without_remember_is_an_error():
    with pytest.raises(CfiError, match="restore_state"):
        row(advance_loc(1) + RESTORE_STATE)


def test_remember_state_depth_is_bounded():
    with pytest.raises(CfiError, match="remember_state"):
        row(REMEMBER * 100)


def test_nop_args_size_and_window_save_do_not_change_rules():
    r = rows(NOP + args_size(16) + WINDOW_SAVE + advance_loc(1) + NOP)
    assert len(r) == 2
    assert r[1].cfa == CfaRule(RSP, 8) and r[1].regs == {RIP: RegRule(OFFSET, -8)}


def test_unknown_opcode_is_an_error():
    with pytest.raises(CfiError, match="unknown CFA instruction 0x3f"):
        row(b"\x3f")


@pytest.mark.parametrize("ins", [
    advance_loc2(1)[:2], advance_loc4(1)[:3], advance_loc8(1)[:5], offset(RBX, 300)[:2],
    def_cfa(RBP, 300)[:3], expression(RBX, breg(RSP, 8) * 4)[:5], def_cfa_expression(b"\x30" * 9)[:4],
    b"\x01\x00",
])
def test_truncated_instructions_are_errors(ins):
    with pytest.raises(CfiError, match="truncated"):
        row(ins)


def test_cie_initial_instructions_may_use_every_rule():
    cie_ins = X86_CIE + same_value(RBX) + val_offset(RBP, 0) + advance_loc(4) + def_cfa_offset(16)
    r = row(b"", cie_ins=cie_ins)
    # An advance in the CIE has no row of its own: the rules just accumulate.
    assert r.cfa == CfaRule(RSP, 16)
    assert r.regs[RBX] == RegRule(SAME_VALUE) and r.regs[RBP] == RegRule(VAL_OFFSET, 0)


def test_rows_are_cached_per_fde():
    t = one_fde(advance_loc(4) + def_cfa_offset(16))
    r1 = t.row_at(PC + 5)
    r2 = t.row_at(PC + 6)
    assert r1 is r2
    assert t.rows_computed == 1 and t.fdes_parsed == 1 and t.cies_parsed == 1


# --- CIE augmentations and pointer encodings -------------------------------------------------------

@pytest.mark.parametrize("enc", [0x00, 0x01, 0x02, 0x03, 0x04, 0x09, 0x0A, 0x0B, 0x0C, 0x10, 0x12,
                                 0x13, 0x14, 0x19, 0x1A, 0x1B, 0x1C, 0x50])
def test_fde_pointer_encodings(enc):
    eh = EhFrame()
    c = eh.cie(fde_enc=enc)
    begin, end = PC, END
    if enc & 0x0F in (0x02, 0x0A):      # 2-byte formats: keep values (or pc deltas) small
        begin = eh.addr + 0x400 if enc & 0x10 else 0x1000
        end = begin + 0x10
    eh.fde(c, begin, end, advance_loc(2) + def_cfa_offset(16))
    eh.terminate()
    t = eh.table()
    f = t.find_fde(begin)
    assert (f.pc_begin, f.pc_end) == (begin, end)
    assert t.row_at(begin + 2).cfa.offset == 16
    assert t.find_fde(end) is None


def test_datarel_and_textrel_need_bases():
    for enc, attr in ((0x33, "data_base"), (0x23, "text_base")):
        eh = EhFrame()
        c = eh.cie(fde_enc=enc)
        base = 0x400000
        body_begin = PC - base
        eh.fde(c, body_begin, body_begin + 0x100)   # stored values are base-relative
        eh.terminate()
        t = eh.table()
        with pytest.raises(CfiError, match="base address"):
            t.find_fde(PC)
        t = eh.table()
        setattr(t, attr, base)
        f = t.find_fde(PC)
        assert (f.pc_begin, f.pc_end) == (PC, PC + 0x100)


def test_personality_lsda_and_signal_augmentations():
    eh = EhFrame()
    c = eh.cie(aug="zPLRS", personality=0x30000, personality_enc=0x9B, lsda_enc=0x1B)
    eh.fde(c, PC, END, lsda=0x50000)
    t = eh.table()
    f = t.find_fde(PC)
    cie = f.cie
    assert cie.augmentation == "zPLRS"
    assert cie.personality_encoding == 0x9B
    assert cie.personality == 0x30000        # indirect: the address of the pointer slot
    assert cie.lsda_encoding == 0x1B and cie.fde_encoding == 0x1B
    assert f.lsda == 0x50000
    assert cie.signal_frame and f.signal_frame and t.row_at(PC).signal_frame


def test_lsda_funcrel_and_absolute_personality():
    eh = EhFrame()
    c = eh.cie(aug="zPLR", personality=0x123456, personality_enc=0x04, lsda_enc=0x43)
    eh.fde(c, PC, END, lsda=PC + 0x40)
    f = eh.table().find_fde(PC)
    assert f.cie.personality == 0x123456
    assert f.lsda == PC + 0x40


def test_omitted_lsda():
    eh = EhFrame()
    c = eh.cie(aug="zLR", lsda_enc=0xFF)
    eh.fde(c, PC, END)
    f = eh.table().find_fde(PC)
    assert f.lsda is None and f.cie.lsda_encoding == 0xFF


def test_unknown_augmentation_after_z_is_skipped():
    eh = EhFrame()
    c = eh.cie(aug="zRX", extra=b"\x99\x99\x99")
    eh.fde(c, PC, END, advance_loc(1) + def_cfa_offset(16))
    t = eh.table()
    assert t.row_at(PC + 1).cfa.offset == 16
    assert t.find_fde(PC).cie.augmentation == "zRX"


def test_aarch64_b_augmentation_has_no_data():
    eh = EhFrame()
    c = eh.cie(aug="zRB")
    eh.fde(c, PC, END)
    assert eh.table().find_fde(PC).pc_end == END


def test_old_gcc_eh_augmentation():
    eh = EhFrame()
    c = eh.cie(aug="eh", fde_enc=0)
    eh.fde(c, PC, END, advance_loc(1) + def_cfa_offset(16))
    t = eh.table()
    assert t.row_at(PC + 1).cfa == CfaRule(RSP, 16)


def test_unknown_augmentation_without_z_is_an_error():
    eh = EhFrame()
    c = eh.cie(aug="xyz")
    eh.fde(c, PC, END)
    with pytest.raises(CfiError, match="augmentation 'xyz'"):
        eh.table().find_fde(PC)


def test_cie_version_3_and_large_ra_column():
    eh = EhFrame()
    c = eh.cie(version=3, ra=300, ins=def_cfa(RSP, 8) + offset_extended(300, 1))
    eh.fde(c, PC, END)
    r = eh.table().row_at(PC)
    assert r.ra_reg == 300 and r.regs[300] == RegRule(OFFSET, -8)


def test_code_and_data_alignment_factors():
    r = rows(advance_loc(3) + offset(RBX, 3) + def_cfa_sf(RSP, 5), code_align=4, data_align=-4)
    assert r[1].address == PC + 12
    assert r[1].regs[RBX] == RegRule(OFFSET, -12)
    assert r[1].cfa == CfaRule(RSP, -20)


def test_dwarf64_entries_in_eh_frame():
    eh = EhFrame()
    c = eh.cie(dwarf64=True)
    eh.fde(c, PC, END, advance_loc(1) + def_cfa_offset(16), dwarf64=True)
    eh.terminate()
    t = eh.table()
    assert t.row_at(PC + 1).cfa.offset == 16


def test_32bit_eh_frame():
    eh = EhFrame(addr=0x8000, ptr_size=4)
    c = eh.cie(fde_enc=0x00, ins=def_cfa(4, 4) + offset(8, 1), data_align=-4, ra=8)
    eh.fde(c, 0x8048000, 0x8048100)
    t = eh.table()
    r = t.row_at(0x80480FF)
    assert r.cfa == CfaRule(4, 4) and r.regs[8] == RegRule(OFFSET, -4)


def test_zero_terminator_ends_the_eh_frame_scan():
    eh = EhFrame()
    c = eh.cie()
    eh.fde(c, PC, END)
    eh.terminate()
    eh.buf += b"garbage that must never be parsed"
    t = eh.table()
    assert t.find_fde(PC) is not None
    assert t.find_fde(0x999999) is None


# --- finding FDEs ----------------------------------------------------------------------------------

def build_many(n=7, gap=0x40, size=0x100, hdr_kw=None, addr=0x20000, hdr_addr=0x10000):
    eh = EhFrame(addr=addr)
    c = eh.cie()
    spans = []
    fdes = []
    pc = PC
    for i in range(n):
        off = eh.fde(c, pc, pc + size, advance_loc(1) + def_cfa_offset(16 + 8 * i))
        spans.append((pc, pc + size))
        fdes.append((pc, eh.addr + off))
        pc += size + gap
    eh.terminate()
    hdr = eh_frame_hdr(hdr_addr, eh.addr, fdes, **(hdr_kw or {}))
    return eh, hdr, spans


@pytest.mark.parametrize("hdr_kw", [
    {}, {"table_enc": 0x04}, {"table_enc": 0x0B}, {"table_enc": 0x33}, {"table_enc": 0x1B},
    {"table_enc": 0x3C}, {"table_enc": 0x03}, {"ptr_enc": 0x03},
])
def test_eh_frame_hdr_binary_search(hdr_kw):
    eh, hdr, spans = build_many(hdr_kw=hdr_kw)
    t = eh.table(hdr_data=hdr, hdr_addr=0x10000)
    assert t._hdr is not None
    for i, (lo, hi) in enumerate(spans):
        for pc in (lo, lo + 1, hi - 1):
            f = t.find_fde(pc)
            assert (f.pc_begin, f.pc_end) == (lo, hi), hex(pc)
        assert t.row_at(lo + 1).cfa.offset == 16 + 8 * i
        assert t.find_fde(hi) is None          # pc_end is exclusive and the gap has no FDE
    assert t.find_fde(spans[0][0] - 1) is None
    assert t.find_fde(spans[-1][1] + 0x1000) is None
    assert t.find_fde(0) is None


def test_hdr_lookup_parses_only_what_it_needs():
    eh, hdr, spans = build_many(n=200)
    t = eh.table(hdr_data=hdr, hdr_addr=0x10000)
    f = t.find_fde(spans[150][0] + 5)
    assert f.pc_begin == spans[150][0]
    assert t.fdes_parsed == 1 and t.cies_parsed == 1
    assert t._index is None


def test_fallback_scan_without_hdr_or_without_table():
    eh, hdr, spans = build_many(hdr_kw={"count_enc": 0xFF})
    for t in (eh.table(), eh.table(hdr_data=hdr, hdr_addr=0x10000),
              eh.table(hdr_data=b"\x02\x1b\x03\x3b", hdr_addr=0x10000)):
        assert t._hdr is None
        for lo, hi in spans:
            assert t.find_fde(lo).pc_begin == lo
            assert t.find_fde(hi - 1).pc_end == hi
            assert t.find_fde(hi) is None
        # The scan reads headers only; FDE objects are made for the lookups alone.
        assert t.fdes_parsed == len(spans)


def test_zero_length_fde_does_not_hide_its_neighbour():
    eh = EhFrame()
    c = eh.cie()
    big = eh.fde(c, 0x1000, 0x1100, def_cfa_offset(16))
    tiny = eh.fde(c, 0x1050, 0x1050)
    eh.terminate()
    hdr = eh_frame_hdr(0x10000, eh.addr, [(0x1000, eh.addr + big), (0x1050, eh.addr + tiny)])
    for t in (eh.table(), eh.table(hdr_data=hdr, hdr_addr=0x10000)):
        assert t.find_fde(0x1080).offset == big
        assert t.row_at(0x1080).cfa.offset == 16


def test_hdr_entry_outside_eh_frame_is_an_error():
    eh, _, spans = build_many(n=2)
    hdr = eh_frame_hdr(0x10000, eh.addr, [(spans[0][0], eh.addr + 0x100000), (spans[1][0], eh.addr)])
    t = eh.table(hdr_data=hdr, hdr_addr=0x10000)
    with pytest.raises(CfiError, match="outside"):
        t.find_fde(spans[0][0])


def test_hdr_table_pointing_at_a_cie_is_an_error():
    eh, _, spans = build_many(n=1)
    hdr = eh_frame_hdr(0x10000, eh.addr, [(spans[0][0], eh.addr)])     # offset 0 is the CIE
    with pytest.raises(CfiError, match="found a CIE"):
        eh.table(hdr_data=hdr, hdr_addr=0x10000).find_fde(spans[0][0])


def test_truncated_hdr_table_falls_back_to_scanning():
    eh, hdr, spans = build_many()
    t = eh.table(hdr_data=hdr[:-5], hdr_addr=0x10000)
    assert t._hdr is None
    assert t.find_fde(spans[3][0]).pc_begin == spans[3][0]


def test_iter_fdes():
    eh, hdr, spans = build_many()
    for t in (eh.table(), eh.table(hdr_data=hdr, hdr_addr=0x10000)):
        assert [(f.pc_begin, f.pc_end) for f in t.iter_fdes()] == spans


# --- .debug_frame ------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", [1, 3, 4])
@pytest.mark.parametrize("dwarf64", [False, True])
def test_debug_frame_versions(version, dwarf64):
    df = DebugFrame()
    c1 = df.cie(version=version, dwarf64=dwarf64, ra=RIP)
    c2 = df.cie(version=version, dwarf64=dwarf64, code_align=4, ins=def_cfa(RSP, 8) + offset(RIP, 1))
    df.fde(c1, 0x2000, 0x2100, advance_loc(4) + def_cfa_offset(16), dwarf64=dwarf64)
    df.fde(c2, 0x1000, 0x1100, advance_loc(4) + def_cfa_offset(32), dwarf64=dwarf64)
    df.fde(c1, 0x3000, 0x3010, dwarf64=dwarf64)
    t = df.table()
    assert t._index is None and t.cies_parsed == 0      # nothing is read until the first lookup
    assert t.row_at(0x2003).cfa.offset == 8
    assert t.row_at(0x2004).cfa.offset == 16
    assert t.row_at(0x100F).cfa.offset == 8
    assert t.row_at(0x1010).cfa.offset == 32            # code alignment 4
    assert t.find_fde(0x300F).pc_begin == 0x3000
    assert t.find_fde(0x3010) is None
    assert t.find_fde(0x1100) is None
    assert t.find_fde(0x2000).cie.version == version


def test_debug_frame_v4_address_and_segment_size():
    df = DebugFrame()
    c = df.cie(version=4, address_size=4, segment_size=2)
    df.fde(c, 0x8048000, 0x8048100, b"\x01" + b"\0\0" + le(0x8048010, 4) + def_cfa_offset(16))
    t = df.table(ptr_size=4)
    f = t.find_fde(0x8048050)
    assert f.cie.address_size == 4 and f.cie.segment_size == 2
    assert t.row_at(0x8048010).cfa.offset == 16


def test_debug_frame_zero_length_padding_is_skipped():
    df = DebugFrame()
    c = df.cie()
    df.buf += b"\0\0\0\0"
    df.fde(c, 0x1000, 0x1100)
    assert df.table().find_fde(0x1000) is not None


def test_debug_frame_with_z_augmentation():
    df = DebugFrame()
    c = df.cie(version=1, aug="z")
    df.fde(c, 0x1000, 0x1100, advance_loc(1) + def_cfa_offset(16))
    assert df.table().row_at(0x1001).cfa.offset == 16


# --- malformed input ---------------------------------------------------------------------------------

def _lookup_all(t):
    for pc in (0, PC, PC + 1, END - 1, 0x1000, 0x2000):
        t.find_fde(pc)
        t.row_at(pc)


def test_truncated_section_header():
    with pytest.raises(CfiError, match="truncated"):
        _lookup_all(CfiTable.from_eh_frame(b"\x10\x00\x00", 0x1000))


@pytest.mark.parametrize("data", [
    le(0x7FFFFFFF, 4) + b"\0" * 16,                           # length past the end
    le(0xFFFFFFF5, 4) + b"\0" * 16,                           # reserved length
    b"\xff\xff\xff\xff" + le(1 << 62, 8) + b"\0" * 16,        # 64-bit, huge
    b"\xff\xff\xff\xff" + le(1, 4),                           # 64-bit, truncated
    le(2, 4) + b"\0\0",                                       # too short for the CIE id
])
def test_bad_lengths(data):
    for t in (CfiTable.from_eh_frame(data, 0x1000), CfiTable.from_debug_frame(data)):
        with pytest.raises(CfiError):
            _lookup_all(t)


@pytest.mark.parametrize("cie_ptr", [0x7FFFFFFF, 0xFFFFFF00, 4, 8])
def test_bad_cie_pointers(cie_ptr):
    # 0x7fffffff / 0xffffff00: outside the section; 4: the FDE itself; 8: the middle of an entry.
    eh = EhFrame()
    eh.cie()
    eh.fde(None, PC, END, cie_ptr=cie_ptr)
    with pytest.raises(CfiError):
        _lookup_all(eh.table())


def test_cie_pointer_to_an_fde():
    eh = EhFrame()
    c = eh.cie()
    f1 = eh.fde(c, PC, END)
    off = len(eh.buf)
    eh.fde(None, 0x1000, 0x1100, cie_ptr=off + 4 - f1)
    with pytest.raises(CfiError, match="found an FDE"):
        _lookup_all(eh.table())


def test_debug_frame_cie_pointer_out_of_range():
    df = DebugFrame()
    c = df.cie()
    df.fde(c, 0x1000, 0x1100)
    df.cies[0x5000] = df.cies[c]
    df.fde(0x5000, 0x2000, 0x2100)
    t = df.table()
    assert t.find_fde(0x1000) is not None
    with pytest.raises(CfiError, match="out of range"):
        t.find_fde(0x2000)


def test_bad_cie_fields():
    for version in (0, 2, 5, 255):
        df = DebugFrame()
        c = df.cie()
        df.buf[8] = version
        df.fde(c, 0x1000, 0x1100)
        with pytest.raises(CfiError, match="version"):
            df.table().find_fde(0x1000)
    # unterminated augmentation string
    data = le(6, 4) + b"\0\0\0\0\x01z"
    with pytest.raises(CfiError):
        CfiTable.from_eh_frame(data + le(12, 4) + le(14, 4) + b"\0" * 8, 0).find_fde(0)
    # augmentation length past the entry
    eh = EhFrame()
    c = eh.cie(aug="zR")
    eh.buf[4 + 4 + 1 + 3 + 1 + 1 + 1] = 0x7F
    eh.fde(c, PC, END)
    with pytest.raises(CfiError):
        eh.table().find_fde(PC)


def test_bad_pointer_encoding():
    eh = EhFrame()
    c = eh.cie(fde_enc=0x0F)
    eh.buf += le(20, 4) + le(len(eh.buf) + 4 - c, 4) + b"\0" * 16
    with pytest.raises(CfiError):
        eh.table().find_fde(PC)
    eh = EhFrame()
    c = eh.cie(fde_enc=0x9B)
    eh.buf += le(20, 4) + le(len(eh.buf) + 4 - c, 4) + b"\0" * 16
    with pytest.raises(CfiError, match="indirect"):
        eh.table().find_fde(PC)


def test_huge_expression_length_in_instructions():
    with pytest.raises(CfiError, match="truncated"):
        row(b"\x10\x03" + uleb(1 << 40) + b"\x70\x00")


def test_random_corruption_raises_only_cfi_error(rng):
    """400 corruptions drawn from the suite's seed (SWK_TEST_SEED): only CfiError, in one line."""
    eh, hdr, spans = build_many(n=5)
    good = eh.data
    with S.hang_guard(300, "400 corrupted CFI tables"):
        _corrupt_and_read(rng, eh, hdr, spans, good)


def _corrupt_and_read(rng, eh, hdr, spans, good):
    for _ in range(400):
        data = bytearray(good)
        for _ in range(rng.randint(1, 6)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        if rng.random() < 0.3:
            data = data[:rng.randrange(len(data))]
        for t in (CfiTable.from_eh_frame(bytes(data), eh.addr),
                  CfiTable.from_eh_frame(bytes(data), eh.addr, hdr, 0x10000),
                  CfiTable.from_debug_frame(bytes(data))):
            try:
                for lo, hi in spans:
                    t.row_at(lo + 1)
                    t.row_at(hi - 1)
            except CfiError as exc:
                assert "\n" not in str(exc)


def test_cfi_error_is_a_swk_error():
    assert issubclass(CfiError, SwkError)


# --- unwind_row ------------------------------------------------------------------------------------

class Memory:
    """A sparse little-endian memory of 8-byte words; unknown addresses are unreadable."""

    def __init__(self, words=None):
        self.words = dict(words or {})
        self.reads = []

    def __call__(self, addr, size):
        self.reads.append((addr, size))
        base = addr & ~7
        if base not in self.words or (addr + size) > base + 8:
            raise MemoryReadError(addr, size)
        return self.words[base].to_bytes(8, "little")[addr - base:addr - base + size]


def mkrow(cfa, regs, ra_reg=RIP, signal=False, address=PC):
    return cfi.Row(address, cfa, regs, signal, ra_reg)


CALLEE = {RAX: 0x11, 1: 0x22, RBX: 0x33, RBP: 0x7000, RSP: 0x6FF0, 12: 0xC, 13: 0xD, 14: 0xE,
          15: 0xF, RIP: 0x401234}


def test_unwind_at_function_entry():
    r = mkrow(CfaRule(RSP, 8), {RIP: RegRule(OFFSET, -8)})
    mem = Memory({0x6FF0: 0x400500})
    res = unwind_row(r, dict(CALLEE), mem)
    assert res.cfa == 0x6FF8
    assert res.ra == 0x400500 and not res.ra_undefined
    assert res.regs[RIP] == 0x400500 and res.locations[RIP] == ("addr", 0x6FF0)
    assert res.regs[RSP] == 0x6FF8 and RSP not in res.locations
    for r_ in (RBX, RBP, 12, 13, 14, 15):           # callee-saved: carried forward
        assert res.regs[r_] == CALLEE[r_] and res.locations[r_] == ("reg", r_)
    assert RAX not in res.regs and 1 not in res.regs  # caller-saved: not recovered


def test_unwind_rbp_frame():
    r = mkrow(CfaRule(RBP, 16), {RIP: RegRule(OFFSET, -8), RBP: RegRule(OFFSET, -16),
                                 RBX: RegRule(OFFSET, -24)})
    mem = Memory({0x7000: 0x7100, 0x7008: 0x400600, 0x6FF8: 0x999})
    res = unwind_row(r, dict(CALLEE), mem)
    assert res.cfa == 0x7010
    assert res.ra == 0x400600
    assert res.regs[RBP] == 0x7100 and res.locations[RBP] == ("addr", 0x7000)
    assert res.regs[RBX] == 0x999 and res.locations[RBX] == ("addr", 0x6FF8)
    assert res.regs[RSP] == 0x7010


def test_unwind_signal_trampoline_expressions():
    # glibc's __restore_rt: the CFA and every register come from the ucontext at rsp.
    sp = 0x5000
    regs_at = {8: 40, 9: 48, RBX: 128, RBP: 120, RAX: 144, RSP: 160, RIP: 168}
    rules = {r: RegRule(EXPRESSION, breg(RSP, off)) for r, off in regs_at.items()}
    r = mkrow(CfaRule(None, 0, breg(RSP, 160) + DEREF), rules, signal=True)
    words = {sp + off: 0x1000 + r_ for r_, off in regs_at.items()}
    words[sp + 160] = 0x8000                     # the interrupted rsp
    words[sp + 168] = 0x401777                   # the interrupted rip
    res = unwind_row(r, {RSP: sp, RIP: 0x3C050}, Memory(words))
    assert res.cfa == 0x8000
    assert res.regs[RSP] == 0x8000 and res.locations[RSP] == ("addr", sp + 160)
    assert res.ra == 0x401777 and res.locations[RIP] == ("addr", sp + 168)
    assert res.regs[RAX] == 0x1000 and res.regs[8] == 0x1008 and res.regs[RBX] == 0x1003


def test_unwind_expression_rules_see_the_cfa_pushed():
    r = mkrow(CfaRule(RSP, 16), {RIP: RegRule(EXPRESSION, b"\x38\x1c"),   # lit8 minus: CFA - 8
                                 RBX: RegRule(VAL_EXPRESSION, b"\x23\x10"),  # CFA + 16
                                 RBP: RegRule(VAL_OFFSET, -16)})
    res = unwind_row(r, {RSP: 0x6000}, Memory({0x6008: 0x400777}))
    assert res.ra == 0x400777 and res.locations[RIP] == ("addr", 0x6008)
    assert res.regs[RBX] == 0x6020 and RBX not in res.locations
    assert res.regs[RBP] == 0x6000


def test_unwind_register_same_value_and_undefined_rules():
    r = mkrow(CfaRule(RSP, 8), {RIP: RegRule(OFFSET, -8), RBX: RegRule(REGISTER, RAX),
                                RAX: RegRule(SAME_VALUE), RBP: RegRule(UNDEFINED),
                                12: RegRule(REGISTER, 99), 2: RegRule(ARCHITECTURAL)})
    res = unwind_row(r, dict(CALLEE), Memory({0x6FF0: 0x400500}))
    assert res.regs[RBX] == CALLEE[RAX] and res.locations[RBX] == ("reg", RAX)
    assert res.regs[RAX] == CALLEE[RAX] and res.locations[RAX] == ("reg", RAX)
    assert RBP not in res.regs            # undefined beats "callee-saved carries over"
    assert 12 not in res.regs             # its source register is unknown
    assert 2 not in res.regs


def test_unwind_return_address_undefined():
    r = mkrow(CfaRule(RSP, 8), {RIP: RegRule(UNDEFINED)})
    res = unwind_row(r, dict(CALLEE), Memory())
    assert res.ra is None and res.ra_undefined
    assert RIP not in res.regs


def test_unwind_return_address_without_rule():
    res = unwind_row(mkrow(CfaRule(RSP, 8), {}), dict(CALLEE), Memory())
    assert res.ra is None and res.ra_undefined
    # On AArch64 the RA column is the link register: with no rule it keeps its value.
    res = unwind_row(mkrow(CfaRule(31, 0), {}, ra_reg=30), {31: 0x9000, 30: 0x400100},
                     Memory(), _Regs(8, sp=31, fp=29, pc=32, callee_saved=frozenset(range(19, 30))))
    assert res.ra == 0x400100 and not res.ra_undefined and res.regs[31] == 0x9000


def test_unwind_stack_pointer_rule_overrides_the_cfa():
    r = mkrow(CfaRule(RSP, 8), {RIP: RegRule(OFFSET, -8), RSP: RegRule(VAL_OFFSET, 8)})
    res = unwind_row(r, dict(CALLEE), Memory({0x6FF0: 1}))
    assert res.regs[RSP] == 0x6FF8 + 8


def test_unwind_unknown_cfa_register():
    with pytest.raises(RuleError, match="register 6"):
        unwind_row(mkrow(CfaRule(RBP, 16), {}), {RSP: 0x1000}, Memory())
    with pytest.raises(RuleError, match="CFA expression"):
        unwind_row(mkrow(CfaRule(None, 0, breg(RBP, 0)), {}), {RSP: 0x1000}, Memory())


def test_unwind_memory_errors_propagate_unchanged():
    err = MemoryReadError(0x6FF0, 8, "gone")

    def bad(addr, size):
        raise err
    r = mkrow(CfaRule(RSP, 8), {RIP: RegRule(OFFSET, -8)})
    with pytest.raises(MemoryReadError) as info:
        unwind_row(r, dict(CALLEE), bad)
    assert info.value is err

    def keyerr(addr, size):
        raise KeyError(addr)
    with pytest.raises(MemoryReadError, match="0x6ff0"):
        unwind_row(r, dict(CALLEE), keyerr)
    with pytest.raises(MemoryReadError):
        unwind_row(mkrow(CfaRule(None, 0, breg(RSP, 0) + DEREF), {}), {RSP: 0x10}, Memory())
    with pytest.raises(MemoryReadError, match="short read"):
        unwind_row(r, dict(CALLEE), lambda a, s: b"\x01")


def test_unwind_failing_rule_for_other_register_only_drops_it():
    r = mkrow(CfaRule(RSP, 8), {RIP: RegRule(OFFSET, -8), RBX: RegRule(EXPRESSION, breg(20, 0))})
    res = unwind_row(r, dict(CALLEE), Memory({0x6FF0: 5}))
    assert res.ra == 5 and RBX not in res.regs


def test_unwind_32bit_wraps():
    r = mkrow(CfaRule(4, 4), {8: RegRule(OFFSET, -4)}, ra_reg=8)

    def mem(addr, size):
        assert (addr, size) == (0xFFFFFFFC, 4) or (addr, size) == (0, 4)
        return b"\x78\x56\x34\x12"
    res = unwind_row(r, {4: 0xFFFFFFFC}, mem, _Regs(4, sp=4, fp=5, pc=8, callee_saved=frozenset({3, 5, 6, 7})))
    assert res.cfa == 0 and res.ra == 0x12345678


# --- real binaries --------------------------------------------------------------------------------------

def _func_symbols(module, names, section=".dynsym"):
    sec = module.elf.get_section_by_name(section)
    if sec is None:
        return {}
    found = {}
    for sym in sec.iter_symbols():
        if sym.name in names and sym["st_info"]["type"] == "STT_FUNC" and sym["st_value"]:
            found[sym.name] = sym["st_value"]
    return found


@pytest.fixture(scope="module")
def libc():
    S.need_path(LIBC, "libc6", "x86-64 glibc")
    from swk_plugin.elf.module import ElfModule
    return ElfModule(LIBC)


def _libc_table(libc, with_hdr=True):
    eh = libc.section(".eh_frame")
    hdr = libc.section(".eh_frame_hdr") if with_hdr else None
    return CfiTable.from_eh_frame(eh.data, eh.addr, hdr.data if hdr else None, hdr.addr if hdr else None)


def test_libc_function_entries(libc):
    names = ["malloc", "free", "printf", "qsort", "getenv", "fopen", "strtol", "abort", "exit", "open"]
    syms = _func_symbols(libc, names)
    assert len(syms) >= 5
    t = _libc_table(libc)
    assert t._hdr is not None
    for name, addr in syms.items():
        f = t.find_fde(addr)
        assert f is not None and f.pc_begin <= addr < f.pc_end, name
        r = t.row_at(addr)
        assert r.cfa == CfaRule(RSP, 8), name
        assert r.regs[RIP] == RegRule(OFFSET, -8), name
        assert not r.signal_frame
    # Each lookup decoded one FDE: nowhere near the thousands in libc (its time: benchmarks/bounds.py).
    assert t.fdes_parsed <= len(syms)
    assert t.cies_parsed <= 3
    assert t.rows_computed <= len(syms)
    # Unwinding through a real row with fake registers.
    r = t.row_at(syms["malloc"])
    res = unwind_row(r, {RSP: 0x7FF0, RIP: syms["malloc"], RBX: 1}, Memory({0x7FF0: 0x401000}))
    assert res.ra == 0x401000 and res.cfa == 0x7FF8 and res.regs[RBX] == 1


def test_libc_scan_agrees_with_hdr(libc):
    with_hdr = _libc_table(libc)
    scan = _libc_table(libc, with_hdr=False)
    fdes = list(with_hdr.iter_fdes())
    assert len(fdes) > 1000
    for f in fdes[::37]:
        for pc in (f.pc_begin, f.pc_end - 1):
            g = scan.find_fde(pc)
            assert g.offset == f.offset or g.pc_begin == f.pc_begin


def test_libc_signal_trampoline(libc):
    t = _libc_table(libc)
    sig = [f for f in t.iter_fdes() if f.signal_frame]
    assert sig, "glibc's __restore_rt has an S-augmented FDE"
    f = sig[0]
    r = _libc_table(libc).row_at(f.pc_begin + 1)
    assert r.signal_frame
    assert r.cfa.expr == breg(RSP, 160) + DEREF
    assert r.regs[RIP] == RegRule(EXPRESSION, breg(RSP, 168))
    assert r.regs[RSP] == RegRule(EXPRESSION, breg(RSP, 160))
    sp = 0x5000
    words = {sp + off: off for off in range(40, 176, 8)}        # the saved gregs
    words.update({sp + 160: 0x9000, sp + 168: 0x401111, sp + 120: 0x9100})
    mem = Memory(words)
    res = unwind_row(r, {RSP: sp, RIP: f.pc_begin + 1}, mem)
    assert res.cfa == 0x9000 and res.ra == 0x401111 and res.regs[RBP] == 0x9100


def _compile(tmp_path, flags, name="prog"):
    S.need_tool("gcc")
    src = tmp_path / f"{name}.c"
    src.write_text(
        "int leaf(int x) { return x * 3; }\n"
        "int __attribute__((noinline)) mid(int x) { int a[8]; for (int i = 0; i < 8; i++) a[i] = leaf(x + i);"
        " return a[x & 7]; }\n"
        "int main(int argc, char **argv) { return mid(argc); }\n")
    out = tmp_path / name
    subprocess.run(["gcc", *flags, "-o", str(out), str(src)], check=True, capture_output=True)
    from swk_plugin.elf.module import ElfModule
    return ElfModule(str(out))


def _compare_with_pyelftools(table, entries, funcs):
    """Every row pyelftools decodes for our functions must match ours."""
    from elftools.dwarf.callframe import FDE as PFde
    checked = 0
    for e in entries:
        if not isinstance(e, PFde):
            continue
        lo = e["initial_location"]
        if not any(lo <= a < lo + e["address_range"] for a in funcs.values()):
            continue
        for prow in e.get_decoded().table:
            ours = table.row_at(prow["pc"])
            assert ours.address == prow["pc"]
            assert (ours.cfa.reg, ours.cfa.offset) == (prow["cfa"].reg, prow["cfa"].offset)
            theirs = {k: (v.type.lower(), v.arg) for k, v in prow.items() if isinstance(k, int)}
            assert {k: (v.kind, v.arg) for k, v in ours.regs.items()} == theirs
            checked += 1
    return checked


def test_debug_frame_of_a_compiled_program(tmp_path):
    m = _compile(tmp_path, ["-g", "-O0", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables"])
    df = m.section(".debug_frame")
    assert df is not None and df.size
    funcs = _func_symbols(m, {"leaf", "mid", "main"}, ".symtab")
    assert len(funcs) == 3
    t = CfiTable.from_debug_frame(df.data, df.addr, ptr_size=m.ptr_size)
    for name, addr in funcs.items():
        f = t.find_fde(addr)
        assert f is not None and f.pc_begin == addr, name
        assert t.row_at(addr).cfa == CfaRule(RSP, 8)
        assert t.row_at(addr).regs == {RIP: RegRule(OFFSET, -8)}
        # -O0 code sets up %rbp as the frame pointer and tears it down before `ret`.
        body = [r for r in t.rows(f) if r.cfa == CfaRule(RBP, 16)]
        assert body and body[0].regs[RBP] == RegRule(OFFSET, -16), name
        assert t.row_at(f.pc_end - 1).cfa == CfaRule(RSP, 8), name
    assert _compare_with_pyelftools(t, m.elf.get_dwarf_info().CFI_entries(), funcs) >= 6


def test_eh_frame_of_a_compiled_program_matches_pyelftools(tmp_path):
    m = _compile(tmp_path, ["-O2", "-fasynchronous-unwind-tables"], "opt")
    eh, hdr = m.section(".eh_frame"), m.section(".eh_frame_hdr")
    t = CfiTable.from_eh_frame(eh.data, eh.addr, hdr.data, hdr.addr, ptr_size=m.ptr_size)
    funcs = _func_symbols(m, {"leaf", "mid", "main"}, ".symtab")
    for addr in funcs.values():
        assert t.row_at(addr).cfa == CfaRule(RSP, 8)
    assert _compare_with_pyelftools(t, m.elf.get_dwarf_info().EH_CFI_entries(), funcs) >= 3


def test_scan_keeps_the_fdes_before_a_malformed_entry():
    eh = EhFrame()
    c = eh.cie()
    eh.fde(c, PC, END)
    eh.buf += le(0x7FFFFFFF, 4) + b"\0" * 8           # claims far more bytes than exist
    t = eh.table()
    assert t.find_fde(PC + 1).pc_begin == PC          # before the damage: still found
    with pytest.raises(CfiError, match="past the section end"):
        t.find_fde(0x999999)                           # might have been in the damaged part
    cies = t.cies_parsed
    with pytest.raises(CfiError):
        t.find_fde(0x999999)
    assert t.cies_parsed == cies and t._index is not None   # no rescan


def test_unwind_treats_none_registers_as_unknown():
    r = mkrow(CfaRule(RSP, 8), {RIP: RegRule(OFFSET, -8), RAX: RegRule(SAME_VALUE),
                                RBX: RegRule(REGISTER, 1)})
    regs = dict(CALLEE)
    regs.update({RAX: None, 1: None, 12: None})
    res = unwind_row(r, regs, Memory({0x6FF0: 7}))
    assert RAX not in res.regs and RBX not in res.regs and 12 not in res.regs
    assert res.ra == 7
    with pytest.raises(RuleError):
        unwind_row(r, {RSP: None}, Memory())
