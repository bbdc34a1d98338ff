"""Call frame information (.eh_frame / .debug_frame): CFA instructions to UnwindRules.

A walk asks about a handful of pcs, so nothing is parsed up front: an FDE is
found through .eh_frame_hdr's sorted table (or, without one, through a one-time
scan of entry headers only), then just that FDE and its CIE are decoded.  Rows
are computed once per FDE and cached.

Terms follow the DWARF 5 spec, section 6.4: a CIE holds what FDEs share, an FDE
covers one address range, executing its instructions yields a table of Rows,
each giving a rule for the CFA and for every register column.  A Row is an
UnwindRule (swk_plugin.rule); swk_plugin.unwind.apply applies it.
"""
import struct
from bisect import bisect_right

from ..errors import SwkError
from ..rule import (ARCHITECTURAL, EXPRESSION, OFFSET, REGISTER, RULE_SAME, RULE_UNDEFINED, SAME_VALUE,
                    UNDEFINED, VAL_EXPRESSION, VAL_OFFSET, CfaRule, RegRule, UnwindRule)
from .encoding import (DW_EH_PE_absptr, DW_EH_PE_datarel, DW_EH_PE_indirect,
                       DW_EH_PE_omit, DW_EH_PE_pcrel, DecodeError, decode_pointer, fixed_size,
                       read_format, read_uint, sleb128, struct_for, uleb128)

__all__ = [
    "CfiError", "CfiTable", "Cie", "Fde", "Row", "CfaRule", "RegRule",
    "UNDEFINED", "SAME_VALUE", "OFFSET", "VAL_OFFSET", "REGISTER", "EXPRESSION", "VAL_EXPRESSION",
    "ARCHITECTURAL",
]


class CfiError(SwkError):
    """Malformed or unusable call frame information; message is one clear line."""


#: {byte order: (4-byte, 8-byte) unsigned structs} for entry headers.
_LENGTHS = {"little": (struct.Struct("<I"), struct.Struct("<Q")),
            "big": (struct.Struct(">I"), struct.Struct(">Q"))}

#: Deepest DW_CFA_remember_state nesting we accept (real code uses one or two).
MAX_STATE_DEPTH = 64

#: A CFI row is an UnwindRule: the rules that hold from its ``address`` to the next row.
Row = UnwindRule


class Cie:
    """Common Information Entry: what a group of FDEs share."""
    __slots__ = ("offset", "version", "augmentation", "code_align", "data_align", "ra_reg",
                 "initial_instructions", "fde_encoding", "lsda_encoding", "personality",
                 "personality_encoding", "signal_frame", "address_size", "segment_size",
                 "has_augmentation_data", "_initial")

    def __repr__(self):
        return f"<Cie 0x{self.offset:x} v{self.version} {self.augmentation!r}>"


class Fde:
    """Frame Description Entry: the CFI of one address range [pc_begin, pc_end).

    lsda is the LSDA pointer from the augmentation data (the address of the
    pointer slot when cie.lsda_encoding has DW_EH_PE_indirect), or None.
    """
    __slots__ = ("offset", "cie", "pc_begin", "pc_end", "instructions", "lsda",
                 "_ins_addr", "_starts", "_rows")

    @property
    def signal_frame(self):
        return self.cie.signal_frame

    def __repr__(self):
        return f"<Fde 0x{self.offset:x} [0x{self.pc_begin:x}, 0x{self.pc_end:x})>"


class CfiTable:
    """The CFI of one ELF section, searched by pc (unbiased addresses), its words in the
    byte order of the file it comes from (``byteorder``: ElfModule.byteorder)."""

    def __init__(self, data, addr, ptr_size, is_eh, renumber=None, byteorder="little"):
        self.data = bytes(data)
        self.byteorder = byteorder
        self._u32, self._u64 = _LENGTHS[byteorder]
        #: {column as written: the architecture's DWARF number} where a producer numbers some
        #: registers its own way (GCC's .eh_frame on Power); applied to every row.
        self.renumber = renumber or None
        self.addr = addr
        self.ptr_size = ptr_size
        self.is_eh = is_eh
        self.section = ".eh_frame" if is_eh else ".debug_frame"
        #: Base for DW_EH_PE_datarel / textrel inside .eh_frame (GOT / text start); rarely used.
        self.data_base = None
        self.text_base = None
        self._cies = {}
        self._fdes = {}
        self._last = None
        self._hdr = None        # (struct, table_offset, entry_size, count, hdr_data, hdr_addr, enc)
        self._index = None      # (starts, ends, offsets), sorted by start
        self._index_error = None
        # Counters, so tests and benchmarks can see how much work a lookup did.
        self.cies_parsed = 0
        self.fdes_parsed = 0
        self.rows_computed = 0

    # --- construction ---------------------------------------------------------------------
    @classmethod
    def from_eh_frame(cls, data, addr, hdr_data=None, hdr_addr=None, ptr_size=8, renumber=None,
                      byteorder="little"):
        self = cls(data, addr, ptr_size, True, renumber, byteorder)
        if hdr_data is not None and hdr_addr is not None:
            self._hdr = self._read_hdr(bytes(hdr_data), hdr_addr)
        return self

    @classmethod
    def from_debug_frame(cls, data, addr=0, ptr_size=8, renumber=None, byteorder="little"):
        return cls(data, addr, ptr_size, False, renumber, byteorder)

    def __repr__(self):
        how = "hdr" if self._hdr else "scan"
        return f"<CfiTable {self.section} 0x{self.addr:x} ({len(self.data)} bytes, {how})>"

    def _read_hdr(self, hdr, hdr_addr):
        """Decode .eh_frame_hdr; None when it has no usable search table."""
        ps, order = self.ptr_size, self.byteorder
        if len(hdr) < 4 or hdr[0] != 1:
            return None
        ptr_enc, count_enc, table_enc = hdr[1], hdr[2], hdr[3]
        try:
            _ptr, pos = decode_pointer(hdr, 4, ptr_enc, ps, order, addr=hdr_addr, data_base=hdr_addr)
            if count_enc == DW_EH_PE_omit or table_enc == DW_EH_PE_omit:
                return None
            count, pos = decode_pointer(hdr, pos, count_enc, ps, order, addr=hdr_addr, data_base=hdr_addr)
        except DecodeError:
            return None
        if table_enc & DW_EH_PE_indirect:
            return None
        st = struct_for(table_enc, ps, order)
        if st is None or not count:
            return None
        size = st.size
        if pos + 2 * size * count > len(hdr):
            return None
        return (st, pos, size, count, hdr, hdr_addr, table_enc)

    # --- low-level entry decoding -------------------------------------------------------------
    def _where(self, off):
        return f"{self.section} entry at offset 0x{off:x}"

    def _entry(self, off):
        """(id_pos, end, id_size, cie_id) of the entry at ``off``, or None for a zero terminator."""
        data = self.data
        n = len(data)
        if off < 0 or off + 4 > n:
            raise CfiError(f"{self._where(off)}: truncated entry header")
        length = self._u32.unpack_from(data, off)[0]
        pos = off + 4
        id_size = 4
        if length == 0xFFFFFFFF:
            if pos + 8 > n:
                raise CfiError(f"{self._where(off)}: truncated 64-bit entry header")
            length = self._u64.unpack_from(data, pos)[0]
            pos += 8
            if not self.is_eh:
                id_size = 8         # .eh_frame keeps a 4-byte CIE pointer even in 64-bit DWARF
        elif length >= 0xFFFFFFF0:
            raise CfiError(f"{self._where(off)}: reserved length 0x{length:x}")
        if length == 0:
            return None
        end = pos + length
        if end > n:
            raise CfiError(f"{self._where(off)}: length {length} runs past the section end ({n} bytes)")
        if pos + id_size > end:
            raise CfiError(f"{self._where(off)}: too short for its CIE id")
        cie_id = int.from_bytes(data[pos:pos + id_size], self.byteorder)
        return pos, end, id_size, cie_id

    def _is_cie(self, cie_id, id_size):
        if self.is_eh:
            return cie_id == 0
        return cie_id == (0xFFFFFFFF if id_size == 4 else 0xFFFFFFFFFFFFFFFF)

    def _cie_offset(self, off, id_pos, cie_id):
        cie_off = id_pos - cie_id if self.is_eh else cie_id
        if not 0 <= cie_off < len(self.data) or cie_off == off:
            raise CfiError(f"{self._where(off)}: CIE pointer 0x{cie_id:x} is out of range")
        return cie_off

    def cie_at(self, off):
        """The CIE at section offset ``off`` (parsed once, then cached)."""
        cie = self._cies.get(off)
        if cie is None:
            try:
                cie = self._parse_cie(off)
            except DecodeError as exc:
                raise CfiError(f"{self._where(off)}: malformed CIE ({exc})") from None
            self._cies[off] = cie
        return cie

    def _parse_cie(self, off):
        ent = self._entry(off)
        if ent is None:
            raise CfiError(f"{self._where(off)}: CIE pointer leads to a zero terminator")
        id_pos, end, id_size, cie_id = ent
        if not self._is_cie(cie_id, id_size):
            raise CfiError(f"{self._where(off)}: expected a CIE, found an FDE")
        self.cies_parsed += 1
        buf = memoryview(self.data)[:end]
        pos = id_pos + id_size
        ps, order = self.ptr_size, self.byteorder
        cie = Cie()
        cie.offset = off
        version, pos = read_uint(buf, pos, 1, order)
        if version not in (1, 3, 4):
            raise CfiError(f"{self._where(off)}: unsupported CIE version {version}")
        cie.version = version
        nul = self.data.find(b"\0", pos, end)
        if nul < 0:
            raise CfiError(f"{self._where(off)}: unterminated augmentation string")
        aug = self.data[pos:nul].decode("latin-1")
        pos = nul + 1
        cie.augmentation = aug
        if aug.startswith("eh"):        # old GCC: a pointer-sized eh_data word follows
            pos += ps
            aug = aug[2:]
        cie.address_size = ps
        cie.segment_size = 0
        if version >= 4:
            cie.address_size, pos = read_uint(buf, pos, 1, order)
            cie.segment_size, pos = read_uint(buf, pos, 1, order)
            if cie.address_size not in (2, 4, 8):
                raise CfiError(f"{self._where(off)}: unsupported address size {cie.address_size}")
        cie.code_align, pos = uleb128(buf, pos)
        cie.data_align, pos = sleb128(buf, pos)
        if version == 1:
            cie.ra_reg, pos = read_uint(buf, pos, 1, order)
        else:
            cie.ra_reg, pos = uleb128(buf, pos)
        cie.fde_encoding = DW_EH_PE_absptr
        cie.lsda_encoding = DW_EH_PE_omit
        cie.personality = None
        cie.personality_encoding = DW_EH_PE_omit
        cie.signal_frame = False
        cie.has_augmentation_data = False
        if aug.startswith("z"):
            cie.has_augmentation_data = True
            alen, pos = uleb128(buf, pos)
            aend = pos + alen
            if aend > end:
                raise CfiError(f"{self._where(off)}: augmentation data runs past the entry")
            for ch in aug[1:]:
                if ch == "R":
                    cie.fde_encoding, pos = read_uint(buf, pos, 1, order)
                elif ch == "P":
                    enc, pos = read_uint(buf, pos, 1, order)
                    cie.personality_encoding = enc
                    # An indirect personality stays the address of its pointer slot.
                    cie.personality, pos = decode_pointer(
                        buf, pos, enc & ~DW_EH_PE_indirect, ps, order, addr=self.addr,
                        data_base=self.data_base, text_base=self.text_base)
                elif ch == "L":
                    cie.lsda_encoding, pos = read_uint(buf, pos, 1, order)
                elif ch == "S":
                    cie.signal_frame = True
                elif ch in "BG":        # AArch64 BTI / MTE markers: no data
                    pass
                else:
                    break               # unknown: the z length lets us skip the rest
                if pos > aend:
                    raise CfiError(f"{self._where(off)}: augmentation data overruns its length")
            pos = aend
        elif aug:
            raise CfiError(f"{self._where(off)}: unsupported CIE augmentation {cie.augmentation!r}")
        if cie.fde_encoding != DW_EH_PE_omit:
            fixed_size(cie.fde_encoding, ps)      # reject unknown formats now, with this CIE named
        if pos > end:
            raise CfiError(f"{self._where(off)}: CIE fields run past the entry")
        cie.initial_instructions = self.data[pos:end]
        cie._initial = None
        return cie

    def _fde_range(self, buf, pos, cie, off):
        """Decode an FDE's initial location and range at ``pos``: (pc_begin, pc_end, pos)."""
        if self.is_eh:
            enc = cie.fde_encoding
            if enc & DW_EH_PE_indirect:
                raise CfiError(f"{self._where(off)}: indirect FDE address encoding is not supported")
            if enc == DW_EH_PE_omit:
                raise CfiError(f"{self._where(off)}: CIE omits the FDE address encoding")
            ps = self.ptr_size
            begin, pos = decode_pointer(buf, pos, enc, ps, self.byteorder, addr=self.addr,
                                        data_base=self.data_base, text_base=self.text_base)
            rng, pos = read_format(buf, pos, enc, ps, self.byteorder)
        else:
            pos += cie.segment_size
            size = cie.address_size
            begin, pos = read_uint(buf, pos, size, self.byteorder)
            rng, pos = read_uint(buf, pos, size, self.byteorder)
        mask = (1 << (self.ptr_size * 8)) - 1
        return begin, (begin + (rng & mask)), pos

    def fde_at(self, off):
        """The FDE at section offset ``off`` (parsed once, then cached)."""
        fde = self._fdes.get(off)
        if fde is None:
            try:
                fde = self._parse_fde(off)
            except DecodeError as exc:
                raise CfiError(f"{self._where(off)}: malformed FDE ({exc})") from None
            self._fdes[off] = fde
        return fde

    def _parse_fde(self, off):
        ent = self._entry(off)
        if ent is None:
            raise CfiError(f"{self._where(off)}: expected an FDE, found a zero terminator")
        id_pos, end, id_size, cie_id = ent
        if self._is_cie(cie_id, id_size):
            raise CfiError(f"{self._where(off)}: expected an FDE, found a CIE")
        cie = self.cie_at(self._cie_offset(off, id_pos, cie_id))
        self.fdes_parsed += 1
        buf = memoryview(self.data)[:end]
        fde = Fde()
        fde.offset = off
        fde.cie = cie
        fde.pc_begin, fde.pc_end, pos = self._fde_range(buf, id_pos + id_size, cie, off)
        fde.lsda = None
        if cie.has_augmentation_data:
            alen, pos = uleb128(buf, pos)
            aend = pos + alen
            if aend > end:
                raise CfiError(f"{self._where(off)}: augmentation data runs past the entry")
            if "L" in cie.augmentation and cie.lsda_encoding != DW_EH_PE_omit:
                enc = cie.lsda_encoding
                fde.lsda, _ = decode_pointer(
                    buf[:aend], pos, enc & ~DW_EH_PE_indirect, self.ptr_size, self.byteorder, addr=self.addr,
                    data_base=self.data_base, text_base=self.text_base, func_base=fde.pc_begin)
            pos = aend
        fde.instructions = self.data[pos:end]
        fde._ins_addr = self.addr + pos
        fde._starts = None
        fde._rows = None
        return fde

    # --- lookup -------------------------------------------------------------------------------
    def find_fde(self, pc):
        """The FDE with pc_begin <= pc < pc_end, or None."""
        last = self._last
        if last is not None and last.pc_begin <= pc < last.pc_end:
            return last
        if self._hdr is not None:
            fde = self._find_in_hdr(pc)
        else:
            fde = self._find_in_index(pc)
        if fde is not None:
            self._last = fde
        return fde

    def _find_in_hdr(self, pc):
        st, table, size, count, hdr, hdr_addr, enc = self._hdr
        unpack = st.unpack_from
        app = enc & 0x70
        mask = (1 << (self.ptr_size * 8)) - 1

        def value(field_off):
            v = unpack(hdr, field_off)[0]
            if app == DW_EH_PE_datarel:
                v += hdr_addr
            elif app == DW_EH_PE_pcrel:
                v += hdr_addr + field_off
            elif app:
                raise CfiError(f".eh_frame_hdr: unsupported table encoding 0x{enc:02x}")
            return v & mask

        step = 2 * size
        lo, hi = 0, count
        while lo < hi:
            mid = (lo + hi) >> 1
            if value(table + mid * step) <= pc:
                lo = mid + 1
            else:
                hi = mid
        # Step back over zero-length or overlapping neighbours, a few at most.
        for i in range(lo - 1, max(lo - 5, -1), -1):
            fde_off = value(table + i * step + size) - self.addr
            if not 0 <= fde_off < len(self.data):
                raise CfiError(f".eh_frame_hdr: table entry {i} points outside .eh_frame")
            fde = self.fde_at(fde_off)
            if fde.pc_begin <= pc < fde.pc_end:
                return fde
        return None

    def _build_index(self):
        """Scan entry headers once (no instructions decoded) into sorted arrays.

        A malformed entry stops the scan: the FDEs before it stay usable, and
        lookups the index cannot answer re-raise that error (without rescanning).
        """
        data = self.data
        n = len(data)
        entries = []
        off = 0
        self._index_error = None
        try:
            while off < n:
                ent = self._entry(off)
                if ent is None:
                    if self.is_eh:
                        break           # .eh_frame's zero terminator ends the section
                    off += 4
                    continue
                id_pos, end, id_size, cie_id = ent
                if not self._is_cie(cie_id, id_size):
                    cie = self.cie_at(self._cie_offset(off, id_pos, cie_id))
                    buf = memoryview(data)[:end]
                    try:
                        begin, pc_end, _ = self._fde_range(buf, id_pos + id_size, cie, off)
                    except DecodeError as exc:
                        raise CfiError(f"{self._where(off)}: malformed FDE ({exc})") from None
                    if pc_end > begin:
                        entries.append((begin, pc_end, off))
                off = end
        except CfiError as exc:
            self._index_error = exc
        entries.sort()
        self._index = ([e[0] for e in entries], [e[1] for e in entries], [e[2] for e in entries])

    def _find_in_index(self, pc):
        if self._index is None:
            self._build_index()
        starts, ends, offsets = self._index
        i = bisect_right(starts, pc) - 1
        for j in range(i, max(i - 5, -1), -1):
            if pc < ends[j]:
                return self.fde_at(offsets[j])
        if self._index_error is not None:
            raise CfiError(str(self._index_error))
        return None

    def iter_fdes(self):
        """Every FDE in address order (parses them all: for tools and tests, not walks)."""
        if self._hdr is not None:
            st, table, size, count, hdr, hdr_addr, enc = self._hdr
            seen = set()
            for i in range(count):
                v = st.unpack_from(hdr, table + i * 2 * size + size)[0]
                if enc & 0x70 == DW_EH_PE_datarel:
                    v += hdr_addr
                elif enc & 0x70 == DW_EH_PE_pcrel:
                    v += hdr_addr + table + i * 2 * size + size
                off = (v & ((1 << (self.ptr_size * 8)) - 1)) - self.addr
                if off not in seen:
                    seen.add(off)
                    yield self.fde_at(off)
            return
        if self._index is None:
            self._build_index()
        for off in self._index[2]:
            yield self.fde_at(off)
        if self._index_error is not None:
            raise CfiError(str(self._index_error))

    def row_at(self, pc):
        """The CFI row in effect at ``pc``, or None when no FDE covers it."""
        fde = self.find_fde(pc)
        if fde is None:
            return None
        starts = fde._starts
        if starts is None:
            self.rows(fde)
            starts = fde._starts
        i = bisect_right(starts, pc) - 1
        return fde._rows[i] if i >= 0 else None

    # --- CFA instructions ---------------------------------------------------------------------
    def rows(self, fde):
        """All rows of ``fde`` (computed on first use, then cached on the FDE)."""
        if fde._rows is None:
            cie = fde.cie
            if cie._initial is None:
                cfa, regs, _, signed = self._execute(cie.initial_instructions, cie, None, None, None,
                                                     CfaRule(None, 0), {}, None, "CIE", cie.offset)
                cie._initial = (cfa, regs, signed)
            cfa, regs, signed = cie._initial
            _, _, rows, _ = self._execute(fde.instructions, cie, fde.pc_begin, fde.pc_end,
                                          fde._ins_addr, cfa, dict(regs), regs, "FDE", fde.offset, signed)
            if self.renumber:
                rows = [self._renumbered(r) for r in rows]
            fde._rows = rows
            fde._starts = [r.address for r in rows]
            self.rows_computed += 1
        return fde._rows

    def _execute(self, ins, cie, loc, pc_end, ins_addr, cfa, regs, initial, what, off, signed=False):
        """Run CFA instructions; returns the final (cfa, regs), for an FDE its rows, and the
        final return-address signing state."""
        try:
            return self._run(ins, cie, loc, pc_end, ins_addr, cfa, regs, initial, signed)
        except DecodeError as exc:
            raise CfiError(f"{self._where(off)}: truncated {what} instructions ({exc})") from None
        except CfiError as exc:
            raise CfiError(f"{self._where(off)}: {exc}") from None

    def _run(self, ins, cie, loc, pc_end, ins_addr, cfa, regs, initial, signed=False):
        # ``signed``: the return-address signing state (AArch64's RA_SIGN_STATE pseudo-register,
        # flipped by opcode 0x2d; remembered and restored with the rest of the row).  Each row
        # carries it as UnwindRule.ra_signed; the architecture decides what it means.
        code_align = cie.code_align
        data_align = cie.data_align
        order = self.byteorder
        sig, ra_reg = cie.signal_frame, cie.ra_reg
        emit = loc is not None
        rows = []
        stack = []
        n = len(ins)
        pos = 0
        new_loc = None
        while pos < n:
            op = ins[pos]
            pos += 1
            high = op & 0xC0
            if high:
                low = op & 0x3F
                if high == 0x40:                                # advance_loc
                    new_loc = loc + low * code_align if emit else None
                elif high == 0x80:                              # offset
                    v, pos = uleb128(ins, pos)
                    regs[low] = RegRule(OFFSET, v * data_align)
                    continue
                else:                                           # restore
                    self._restore(regs, initial, low)
                    continue
            elif op == 0x00:                                    # nop
                continue
            elif op == 0x0E:                                    # def_cfa_offset
                v, pos = uleb128(ins, pos)
                cfa = CfaRule(cfa.reg, v)
                continue
            elif op == 0x0D:                                    # def_cfa_register
                r, pos = uleb128(ins, pos)
                cfa = CfaRule(r, cfa.offset if cfa.expr is None else 0)
                continue
            elif op == 0x0C:                                    # def_cfa
                r, pos = uleb128(ins, pos)
                v, pos = uleb128(ins, pos)
                cfa = CfaRule(r, v)
                continue
            elif 0x02 <= op <= 0x04:                            # advance_loc1/2/4
                size = 1 << (op - 2)
                if pos + size > n:
                    raise DecodeError(f"DW_CFA_advance_loc{size} operand")
                delta = int.from_bytes(ins[pos:pos + size], order)
                pos += size
                new_loc = loc + delta * code_align if emit else None
            elif op == 0x0A:                                    # remember_state
                if len(stack) >= MAX_STATE_DEPTH:
                    raise CfiError(f"DW_CFA_remember_state nested deeper than {MAX_STATE_DEPTH}")
                stack.append((cfa, dict(regs), signed))
                continue
            elif op == 0x0B:                                    # restore_state
                if not stack:
                    raise CfiError("DW_CFA_restore_state without a matching remember_state")
                cfa, regs, signed = stack.pop()
                continue
            elif op == 0x05:                                    # offset_extended
                r, pos = uleb128(ins, pos)
                v, pos = uleb128(ins, pos)
                regs[r] = RegRule(OFFSET, v * data_align)
                continue
            elif op == 0x11:                                    # offset_extended_sf
                r, pos = uleb128(ins, pos)
                v, pos = sleb128(ins, pos)
                regs[r] = RegRule(OFFSET, v * data_align)
                continue
            elif op == 0x2F:                                    # GNU_negative_offset_extended
                r, pos = uleb128(ins, pos)
                v, pos = uleb128(ins, pos)
                regs[r] = RegRule(OFFSET, -v * data_align)
                continue
            elif op == 0x06:                                    # restore_extended
                r, pos = uleb128(ins, pos)
                self._restore(regs, initial, r)
                continue
            elif op == 0x07:                                    # undefined
                r, pos = uleb128(ins, pos)
                regs[r] = RULE_UNDEFINED
                continue
            elif op == 0x08:                                    # same_value
                r, pos = uleb128(ins, pos)
                regs[r] = RULE_SAME
                continue
            elif op == 0x09:                                    # register
                r, pos = uleb128(ins, pos)
                r2, pos = uleb128(ins, pos)
                regs[r] = RegRule(REGISTER, r2)
                continue
            elif op == 0x12:                                    # def_cfa_sf
                r, pos = uleb128(ins, pos)
                v, pos = sleb128(ins, pos)
                cfa = CfaRule(r, v * data_align)
                continue
            elif op == 0x13:                                    # def_cfa_offset_sf
                v, pos = sleb128(ins, pos)
                cfa = CfaRule(cfa.reg, v * data_align)
                continue
            elif op == 0x0F:                                    # def_cfa_expression
                size, pos = uleb128(ins, pos)
                if pos + size > n:
                    raise DecodeError("DW_CFA_def_cfa_expression block")
                cfa = CfaRule(None, 0, bytes(ins[pos:pos + size]))
                pos += size
                continue
            elif op == 0x10 or op == 0x16:                      # expression, val_expression
                r, pos = uleb128(ins, pos)
                size, pos = uleb128(ins, pos)
                if pos + size > n:
                    raise DecodeError("DW_CFA_expression block")
                regs[r] = RegRule(EXPRESSION if op == 0x10 else VAL_EXPRESSION,
                                  bytes(ins[pos:pos + size]))
                pos += size
                continue
            elif op == 0x14:                                    # val_offset
                r, pos = uleb128(ins, pos)
                v, pos = uleb128(ins, pos)
                regs[r] = RegRule(VAL_OFFSET, v * data_align)
                continue
            elif op == 0x15:                                    # val_offset_sf
                r, pos = uleb128(ins, pos)
                v, pos = sleb128(ins, pos)
                regs[r] = RegRule(VAL_OFFSET, v * data_align)
                continue
            elif op == 0x2E:                                    # GNU_args_size: only for landing pads
                _, pos = uleb128(ins, pos)
                continue
            elif op == 0x2D:                                    # AARCH64_negate_ra_state (SPARC's
                signed = not signed                             # GNU_window_save: no SPARC here)
                continue
            elif op == 0x01:                                    # set_loc
                if self.is_eh:
                    target, pos = decode_pointer(ins, pos, cie.fde_encoding, self.ptr_size, order,
                                                 addr=ins_addr, data_base=self.data_base,
                                                 text_base=self.text_base)
                else:
                    pos += cie.segment_size
                    target, pos = read_uint(ins, pos, cie.address_size, order)
                if not emit:
                    continue
                if target < loc:
                    raise CfiError(f"DW_CFA_set_loc moves backwards (0x{target:x} < 0x{loc:x})")
                new_loc = target
            elif op == 0x1D:                                    # MIPS_advance_loc8
                if pos + 8 > n:
                    raise DecodeError("DW_CFA_MIPS_advance_loc8 operand")
                delta = int.from_bytes(ins[pos:pos + 8], order)
                pos += 8
                new_loc = loc + delta * code_align if emit else None
            else:
                raise CfiError(f"unknown CFA instruction 0x{op:02x} at offset {pos - 1}")
            # Only location-advancing instructions reach here.
            if not emit or new_loc <= loc:
                continue
            if loc < pc_end:
                rows.append(Row(loc, cfa, dict(regs), sig, ra_reg, signed))
            loc = new_loc
            if loc >= pc_end:
                return cfa, regs, rows, signed
        if emit and loc < pc_end:
            rows.append(Row(loc, cfa, dict(regs), sig, ra_reg, signed))
        return cfa, regs, rows, signed

    def _renumbered(self, row):
        """``row`` in the architecture's numbering (columns, the CFA's register, the return
        column, a register rule's other register)."""
        m = self.renumber
        regs = {m.get(r, r): (RegRule(REGISTER, m.get(rr.arg, rr.arg)) if rr.kind == REGISTER else rr)
                for r, rr in row.regs.items()}
        cfa = row.cfa if row.cfa.reg is None else CfaRule(m.get(row.cfa.reg, row.cfa.reg), row.cfa.offset)
        return Row(row.address, cfa, regs, row.signal_frame, m.get(row.ra_reg, row.ra_reg), row.ra_signed)

    @staticmethod
    def _restore(regs, initial, r):
        rule = initial.get(r) if initial is not None else None
        if rule is None:
            regs.pop(r, None)
        else:
            regs[r] = rule
