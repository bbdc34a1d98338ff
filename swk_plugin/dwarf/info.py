"""The .debug_info of one ELF file, read lazily with struct.

Nothing is read until asked: unit headers as units are needed, abbreviations
per unit, top DIEs for the unit map, function DIEs per unit in one skipping
scan.  Sections come from swk_plugin.elf.sections (inflated when compressed,
.debug_info only as far as needed).  Terms follow the DWARF 5 spec.
The parts of DWARF around the DIEs are mixins: aranges.py (which unit holds
an address), lineprog.py (line-number programs), dies.py (DIE trees).
Split DWARF's skeleton units lead to split units read by DwarfInfos of their own (dwo.py),
as a dwz supplementary file's units are (altfile.py).
"""
import bisect
import struct
import threading

from ..elf.sections import debug_sections
from .altfile import ALT_BASE, ALT_STR, ShiftedSections, open_alt
from .aranges import UnitMap
from .constants import (AT_GNU_addr_base, AT_GNU_dwo_id, AT_GNU_dwo_name, AT_GNU_ranges_base, AT_sibling,
                        AT_addr_base, AT_comp_dir, AT_dwo_name, AT_high_pc, AT_language, AT_low_pc, AT_name,
                        AT_ranges, AT_rnglists_base, AT_stmt_list, AT_str_offsets_base, TAG_subprogram,
                        CPP_LANGS, DIE_ATTRS_FUNC, DIE_ATTRS_TOP, RECORD_TAGS)
from .dies import DieNode, DieQueries
from .dwo import SPLIT_BASE, SplitUnits, is_skeleton
from . import unitcache
from .lineprog import LinePrograms
from .units import FIXED_SIZES, AbbrevTable, DwarfError, Unit, cstr, sleb, uint, uleb



_UNREAD = object()
#: Tags whose subtrees hold no function and no scope a function's name is qualified by (an
#: inlined call's parameters, variables, blocks and calls; a call site's parameters).
_OPAQUE_TAGS = frozenset((0x1d, 0x48, 0x4109))      # inlined_subroutine, call_site, GNU_call_site


class DwarfInfo(UnitMap, LinePrograms, DieQueries):
    """The DWARF of one ELF file."""

    def __init__(self, module, base=0, dwo_sections=None, program=None):
        self.module = module
        #: where this file's .debug_info offsets start (ALT_BASE for a supplementary file, a
        #: base from SPLIT_BASE up for a split unit's .dwo file)
        self.info_base = base
        #: whether this reads split units (a .dwo file's or a package's, through dwo_sections)
        self.dwo = dwo_sections is not None
        #: the program's path when this file is its separate debug file (PROGRAM.dwp is named after it)
        self.program = program
        if self.dwo:
            self.secs = dwo_sections
        else:
            self.secs = ShiftedSections(debug_sections(module), base) if base else debug_sections(module)
        self._alt = _UNREAD
        self._split = None       # SplitUnits, made when a skeleton unit is first met
        self.little = self.secs.little
        #: "little" / "big": the file's byte order, which every reader of its DWARF binds.
        self.byteorder = "little" if self.little else "big"
        self.default_addr_size = 8 if self.secs.is64 else 4
        self._lock = threading.RLock()
        self._cus = {}           # offset -> _CU (headers read so far)
        self._map = None         # (los, his, prefix_max_hi, cu_offsets)
        self._amap = None        # the same from .debug_aranges alone
        self._pcless = []        # units that neither aranges nor their top DIE place (_build_map)
        self._fmap = None        # their functions' ranges, where asked for (aranges._build_fmap)
        self._abbrev_cache = {}
        self._nodes = {}         # offset -> DieNode (die_node)
        self._chain = []         # unit offsets from the section's start, as far as read
        self._chain_ends = []
        #: What has been read, for tests and benchmarks: DIEs decoded, DIEs passed over with
        #: their attributes skipped (a subtree passed by its DW_AT_sibling is not counted),
        #: units whose header and top DIE were read, line programs run and the rows they made.
        self.counts = dict.fromkeys(("dies_read", "dies_skipped", "units_read", "line_programs",
                                     "line_rows"), 0)

    def alt_info(self):
        """The DwarfInfo of the supplementary file (dwz) this file's DIEs refer to, or None."""
        if self._alt is _UNREAD:
            self._alt = None if self.info_base else open_alt(self, DwarfInfo)
        return self._alt

    def split_unit(self, cu):
        """The split unit of skeleton unit ``cu`` (dwo.py), or None when ``cu`` is none or
        its .dwo cannot be found; the one the address -> unit map gives for its code."""
        if not is_skeleton(cu) or self.info_base:
            return None
        if self._split is None:
            with self._lock:
                if self._split is None:
                    self._split = SplitUnits(self, lambda m, b, secs: DwarfInfo(m, b, dwo_sections=secs))
        return self._split.split_of(cu)

    def unit_sections(self, cu):
        """The sections ``cu``'s attributes refer to (its location and range lists): a split
        unit's .dwo's (dwo.DwoSections), else this file's."""
        if cu.owner is not None and cu.owner.dwo:
            return cu.owner.secs
        return self.secs

    def code_unit(self, cu):
        """The unit whose DIEs describe ``cu``'s code: its split unit for a skeleton (when
        found), else ``cu`` itself."""
        if cu is not None and cu.dwo_id is not None:
            return self.split_unit(cu) or cu
        return cu

    def routed(self, cu, off):
        """(the DwarfInfo, unit) that reads the DIE at ``off``: this file's, or for an offset
        of the supplementary file or of a split unit (or a unit of either) that file's;
        None when unreadable."""
        if off >= SPLIT_BASE and not self.info_base:
            d = self._split.info_at(off) if self._split is not None else None
            if d is None:
                return None
            if cu is None or cu.owner is not d or not (cu.offset <= off < cu.end):
                cu = d.unit_of(off)
            return (d, cu) if cu is not None else None
        if off >= ALT_BASE and not self.info_base:
            alt = self.alt_info()
            if alt is None:
                return None
            if cu is None or cu.owner is not alt or not (cu.offset <= off < cu.end):
                cu = alt.unit_of(off)
            return (alt, cu) if cu is not None else None
        if cu is not None and cu.owner is not None and cu.owner is not self:
            return cu.owner, cu
        return None

    # --- units ------------------------------------------------------------------------------
    def unit_at(self, off):
        cu = self._cus.get(off)
        if cu is not None:
            return cu
        info = self.secs.upto(".debug_info", off + 12)
        if info is None:
            raise DwarfError("no .debug_info")
        if off + 12 <= len(info):
            length = uint(info, off, 4, self.little)
            if length == 0xFFFFFFFF:
                length = 8 + uint(info, off + 4, 8, self.little)
            info = self.secs.upto(".debug_info", off + 4 + length)
        cu = self._read_unit_header(info, off)
        self._read_top_die(info, cu)
        self._cus[off] = cu
        self.counts["units_read"] += 1
        return cu

    def _read_unit_header(self, info, off):
        little = self.little
        if off + 11 > len(info):
            raise DwarfError("unit header out of range")
        cu = Unit()
        cu.owner = self
        cu.offset = off
        length = uint(info, off, 4, little)
        pos = off + 4
        offsz = 4
        if length == 0xFFFFFFFF:
            length = uint(info, pos, 8, little)
            pos += 8
            offsz = 8
        elif length >= 0xFFFFFFF0:
            raise DwarfError("bad unit length")
        cu.end = pos + length
        if cu.end > len(info):
            raise DwarfError("unit runs past .debug_info")
        cu.offsz = offsz
        cu.version = version = uint(info, pos, 2, little)
        pos += 2
        if version < 2 or version > 5:
            raise DwarfError(f"DWARF version {version}")
        if version >= 5:
            cu.unit_type = info[pos]
            cu.addr_size = info[pos + 1]
            pos += 2
            cu.abbrev_off = uint(info, pos, offsz, little)
            pos += offsz
            if cu.unit_type in (4, 5):          # skeleton / split_compile: dwo_id
                cu.dwo_id = uint(info, pos, 8, little)
                pos += 8
            elif cu.unit_type in (2, 6):        # type units
                pos += 8 + offsz
        else:
            cu.unit_type = 1
            cu.abbrev_off = uint(info, pos, offsz, little)
            pos += offsz
            cu.addr_size = info[pos]
            pos += 1
        cu.die_off = pos
        if self.dwo:     # a split unit's strings: its .debug_str_offsets.dwo past the header (none in DWARF 4)
            cu.str_offsets_base = 0 if version < 5 else 2 * offsz
        return cu

    def _abbrevs(self, abbrev_off):
        tab = self._abbrev_cache.get(abbrev_off)
        if tab is not None:
            return tab
        data = self.secs.get(".debug_abbrev")
        if data is None:
            raise DwarfError("no .debug_abbrev")
        tab = self._abbrev_cache[abbrev_off] = AbbrevTable(data, abbrev_off)
        return tab

    def _plans_of(self, cu):
        """The unit's skip plans (abbreviation code -> _skip_plan), made as codes are met."""
        plans = cu._plans
        if plans is None:
            plans = cu._plans = {}
        if cu._abbrevs is None:
            cu._abbrevs = self._abbrevs(cu.abbrev_off)
        return plans

    def _read_form(self, data, pos, form, cu, implicit):
        """(value, new pos) of one attribute; strings are returned as ("strp", section, offset)
        or bytes, indexed forms as ("strx", i) / ("addrx", i)."""
        fixed = FIXED_SIZES.get(form)
        little, order = self.little, self.byteorder
        if fixed is not None:
            if form == 0x19:                                   # flag_present
                return True, pos
            if form == 0x21:                                   # implicit_const
                return implicit, pos
            v = int.from_bytes(data[pos:pos + fixed], order)
            if 0x11 <= form <= 0x14:                           # ref1..ref8: unit relative
                v += cu.offset
            elif 0x25 <= form <= 0x28:
                return ("strx", v), pos + fixed
            elif 0x29 <= form <= 0x2c:
                return ("addrx", v), pos + fixed
            elif form == 0x1c or form == 0x24:                 # ref_sup4, ref_sup8
                return ALT_BASE + v, pos + fixed
            return v, pos + fixed
        if form == 0x01:                                       # addr
            return int.from_bytes(data[pos:pos + cu.addr_size], order), pos + cu.addr_size
        if form in (0x0e, 0x1f, 0x1d, 0x1f21):                 # strp, line_strp, strp_sup, GNU_strp_alt
            v = int.from_bytes(data[pos:pos + cu.offsz], order)
            sec = {0x0e: ".debug_str", 0x1f: ".debug_line_str"}.get(form, ALT_STR)
            return ("strp", sec, v), pos + cu.offsz
        if form == 0x08:                                       # string
            return cstr(data, pos)
        if form in (0x17, 0x1f20):                             # sec_offset, GNU_ref_alt
            v = int.from_bytes(data[pos:pos + cu.offsz], order)
            if form == 0x1f20:                                 # a DIE of the supplementary file
                return ALT_BASE + v, pos + cu.offsz
            return v, pos + cu.offsz
        if form == 0x10:                                       # ref_addr
            sz = cu.addr_size if cu.version <= 2 else cu.offsz
            return self.info_base + int.from_bytes(data[pos:pos + sz], order), pos + sz
        if form == 0x0f or form == 0x15 or form in (0x22, 0x23):   # udata, ref_udata, loclistx, rnglistx
            v, pos = uleb(data, pos)
            if form == 0x15:
                v += cu.offset
            elif form == 0x23:
                return ("rnglistx", v), pos
            elif form == 0x22:
                return ("loclistx", v), pos
            return v, pos
        if form == 0x0d:                                       # sdata
            return sleb(data, pos)
        if form in (0x1a, 0x1f02):                             # strx, GNU_str_index
            v, pos = uleb(data, pos)
            return ("strx", v), pos
        if form in (0x1b, 0x1f01):                             # addrx, GNU_addr_index
            v, pos = uleb(data, pos)
            return ("addrx", v), pos
        if form == 0x18 or form == 0x09:                       # exprloc, block
            n, pos = uleb(data, pos)
            return data[pos:pos + n], pos + n
        if form == 0x0a:
            n = data[pos]
            return data[pos + 1:pos + 1 + n], pos + 1 + n
        if form == 0x03:
            n = uint(data, pos, 2, little)
            return data[pos + 2:pos + 2 + n], pos + 2 + n
        if form == 0x04:
            n = uint(data, pos, 4, little)
            return data[pos + 4:pos + 4 + n], pos + 4 + n
        if form == 0x16:                                       # indirect
            f, pos = uleb(data, pos)
            return self._read_form(data, pos, f, cu, implicit)
        raise DwarfError(f"unknown form 0x{form:x}")

    def _read_die(self, info, pos, cu, wanted):
        """(tag, has_children, {attr: (form, value)}, next pos) of the DIE at pos; None for a null entry."""
        code, pos = uleb(info, pos)
        if code == 0:
            return None, pos
        abbrevs = cu._abbrevs
        if abbrevs is None:
            abbrevs = cu._abbrevs = self._abbrevs(cu.abbrev_off)
        try:
            tag, children, specs = abbrevs[code]
        except KeyError:
            raise DwarfError(f"unknown abbrev {code}") from None
        self.counts["dies_read"] += 1
        attrs = {}
        read_form = self._read_form
        for at, form, implicit in specs:
            v, pos = read_form(info, pos, form, cu, implicit)
            if at in wanted:
                attrs[at] = (form, v)
        return (tag, children, attrs), pos

    def _read_top_die(self, info, cu):
        die, _pos = self._read_die(info, cu.die_off, cu, DIE_ATTRS_TOP)
        if die is None:
            return
        _tag, _ch, attrs = die
        get = attrs.get
        for at, slot in ((AT_str_offsets_base, "str_offsets_base"), (AT_addr_base, "addr_base"),
                         (AT_GNU_addr_base, "addr_base"), (AT_rnglists_base, "rnglists_base")):
            if at in attrs and isinstance(attrs[at][1], int):
                setattr(cu, slot, attrs[at][1])
        cu.name = self.string(cu, get(AT_name, (0, None))[1])
        cu.comp_dir = self.string(cu, get(AT_comp_dir, (0, None))[1])
        sl = get(AT_stmt_list)
        if sl is not None and isinstance(sl[1], int):
            cu.stmt_list = sl[1]
        lang = get(AT_language)
        if lang is not None and isinstance(lang[1], int):
            cu.language = lang[1]
        dwo_name = get(AT_dwo_name) or get(AT_GNU_dwo_name)
        if dwo_name is not None:
            cu.dwo_name = self.string(cu, dwo_name[1])
        dwo_id = get(AT_GNU_dwo_id)
        if dwo_id is not None and isinstance(dwo_id[1], int) and cu.dwo_id is None:
            cu.dwo_id = dwo_id[1]
        rb = get(AT_GNU_ranges_base)
        if rb is not None and isinstance(rb[1], int):
            cu.gnu_ranges_base = rb[1]
        cu.ranges = self._die_ranges(cu, attrs, cu_die=True)
        if cu.ranges:
            cu.lowpc = min(lo for lo, _hi in cu.ranges)
        elif cu.low_pc is not None:
            cu.lowpc = cu.low_pc

    # --- attribute values -----------------------------------------------------------------------
    def string(self, cu, v):
        if v is None:
            return None
        if cu is not None and cu.owner is not None and cu.owner is not self:
            return cu.owner.string(cu, v)
        if isinstance(v, bytes):
            return v.decode("utf-8", "replace")
        if isinstance(v, tuple):
            if v[0] == "strp":
                if v[1] == ALT_STR:                             # the supplementary file's
                    alt = self.alt_info()
                    return alt.string(None, ("strp", ".debug_str", v[2])) if alt is not None else None
                if v[1] is None:
                    return None
                sec = self.secs.get(v[1])
                if sec is None or v[2] >= len(sec):
                    return None
                end = sec.find(b"\0", v[2])
                if end < 0:
                    end = len(sec)
                return sec[v[2]:end].decode("utf-8", "replace")
            if v[0] == "strx":
                so = self.secs.get(".debug_str_offsets")
                if so is None:
                    return None
                base = cu.str_offsets_base if cu.str_offsets_base is not None else 8
                p = base + v[1] * cu.offsz
                if p + cu.offsz > len(so):
                    return None
                off = uint(so, p, cu.offsz, self.little)
                return self.string(cu, ("strp", ".debug_str", off))
        return None

    def address(self, cu, v):
        if cu is not None and cu.owner is not None and cu.owner is not self:
            return cu.owner.address(cu, v)
        if isinstance(v, int):
            return v
        if isinstance(v, tuple) and v[0] == "addrx":
            sec = self.secs.get(".debug_addr")
            if sec is None:
                return None
            base = cu.addr_base if cu.addr_base is not None else 8
            p = base + v[1] * cu.addr_size
            if p + cu.addr_size > len(sec):
                return None
            return uint(sec, p, cu.addr_size, self.little)
        return None

    def _die_ranges(self, cu, attrs, cu_die=False):
        """[(lo, hi)] of a DIE from DW_AT_low_pc/high_pc or DW_AT_ranges (empty ranges dropped)."""
        low = attrs.get(AT_low_pc)
        lowv = self.address(cu, low[1]) if low is not None else None
        if cu_die:
            cu.low_pc = lowv
        rng = attrs.get(AT_ranges)
        if rng is not None:
            return self._ranges(cu, rng[0], rng[1], cu_die)
        high = attrs.get(AT_high_pc)
        if lowv is not None and high is not None:
            hform, hv = high
            if hform == 0x01 or (isinstance(hv, tuple) and hv[0] == "addrx"):
                hi = self.address(cu, hv)
            elif isinstance(hv, int):
                hi = lowv + hv
            else:
                hi = None
            if hi is not None and hi > lowv:
                return [(lowv, hi)]
            return []
        return []

    def _ranges(self, cu, form, v, cu_die):
        little = self.little
        asz = cu.addr_size
        out = []
        base = cu.low_pc if cu.low_pc is not None else 0
        if cu.version >= 5:
            sec = self.secs.get(".debug_rnglists")
            if sec is None:
                return out
            if isinstance(v, tuple) and v[0] == "rnglistx":
                rbase = cu.rnglists_base
                if rbase is None:
                    rbase = 12 if cu.offsz == 4 else 20
                p = rbase + v[1] * cu.offsz
                if p + cu.offsz > len(sec):
                    return out
                off = rbase + uint(sec, p, cu.offsz, little)
            elif isinstance(v, int):
                # on a non-CU DIE, a DW_FORM_sec_offset is absolute; so is the CU's
                off = v
            else:
                return out
            pos = off
            n = len(sec)
            while pos < n:
                kind = sec[pos]
                pos += 1
                if kind == 0:                        # end_of_list
                    break
                if kind == 1:                        # base_addressx
                    i, pos = uleb(sec, pos)
                    base = self.address(cu, ("addrx", i)) or 0
                elif kind == 2:                      # startx_endx
                    a, pos = uleb(sec, pos)
                    b, pos = uleb(sec, pos)
                    lo = self.address(cu, ("addrx", a))
                    hi = self.address(cu, ("addrx", b))
                    if lo is not None and hi is not None:
                        out.append((lo, hi))
                elif kind == 3:                      # startx_length
                    a, pos = uleb(sec, pos)
                    ln, pos = uleb(sec, pos)
                    lo = self.address(cu, ("addrx", a))
                    if lo is not None:
                        out.append((lo, lo + ln))
                elif kind == 4:                      # offset_pair
                    a, pos = uleb(sec, pos)
                    b, pos = uleb(sec, pos)
                    out.append((base + a, base + b))
                elif kind == 5:                      # base_address
                    base = uint(sec, pos, asz, little)
                    pos += asz
                elif kind == 6:                      # start_end
                    lo = uint(sec, pos, asz, little)
                    hi = uint(sec, pos + asz, asz, little)
                    pos += 2 * asz
                    out.append((lo, hi))
                elif kind == 7:                      # start_length
                    lo = uint(sec, pos, asz, little)
                    pos += asz
                    ln, pos = uleb(sec, pos)
                    out.append((lo, lo + ln))
                else:
                    break
        else:
            sec = self.secs.get(".debug_ranges")
            if sec is None or not isinstance(v, int):
                return out
            # a DWARF 4 split unit's offsets are from its skeleton's DW_AT_GNU_ranges_base
            pos = v if cu_die else v + cu.gnu_ranges_base
            maxaddr = (1 << (8 * asz)) - 1
            n = len(sec)
            while pos + 2 * asz <= n:
                lo = uint(sec, pos, asz, little)
                hi = uint(sec, pos + asz, asz, little)
                pos += 2 * asz
                if lo == 0 and hi == 0:
                    break
                if lo == maxaddr:
                    base = hi
                    continue
                out.append((base + lo, base + hi))
        return [(lo, hi) for lo, hi in out if hi > lo]

    # --- the address -> CU map -------------------------------------------------------------------

    def function_die_at(self, cu, addr):
        """Offset of the innermost DW_TAG_subprogram of ``cu`` whose ranges hold addr, or None."""
        los, his, offs, pmax = self.funcs_for(cu)
        i = bisect.bisect_right(los, addr) - 1
        while i >= 0 and pmax[i] > addr:   # the containing range with the greatest start
            if his[i] > addr:
                return offs[i]
            i -= 1
        return None

    def funcs_for(self, cu):
        if cu.owner is not None and cu.owner is not self:
            return cu.owner.funcs_for(cu)
        if cu._funcs is None:
            with self._lock:
                if cu._funcs is None:
                    kept = unitcache.load_funcs(self, cu)
                    if kept is not None:
                        cu._scopes = kept[1]
                        cu._funcs = kept[0]
                        return cu._funcs
                    try:
                        funcs = self._scan_funcs(cu)
                    except (IndexError, struct.error, ValueError, DwarfError, UnicodeError):
                        funcs = ([], [], [], [])
                    else:
                        unitcache.store_funcs(self, cu, funcs, cu._scopes)
                    cu._funcs = funcs
        return cu._funcs

    def _skip_plan(self, cu, specs):
        """Attribute specs folded into skip steps: ints are fixed byte counts, other
        entries are forms whose size must be decoded."""
        plan = []
        fixed = 0
        for _at, form, _imp in specs:
            n = FIXED_SIZES.get(form)
            if n is None:
                if form == 0x01:
                    n = cu.addr_size
                elif form in (0x0e, 0x1f, 0x1d, 0x1f21, 0x17, 0x1f20):
                    n = cu.offsz
                elif form == 0x10:
                    n = cu.addr_size if cu.version <= 2 else cu.offsz
            if n is not None:
                fixed += n
                continue
            if fixed:
                plan.append(fixed)
                fixed = 0
            plan.append(("f", form))
        if fixed:
            plan.append(fixed)
        return plan

    def _skip_die(self, info, pos, cu, code, plans):
        plan = plans.get(code)
        if plan is None:
            plan = plans[code] = self._skip_plan(cu, cu._abbrevs[code][2])
        return self._run_plan(info, pos, cu, plan)

    def _run_plan(self, info, pos, cu, plan):
        for step in plan:
            if step.__class__ is int:
                pos += step
                continue
            form = step[1]
            if form in (0x0f, 0x15, 0x22, 0x23, 0x0d, 0x1a, 0x1b, 0x1f01, 0x1f02):
                while info[pos] & 0x80:
                    pos += 1
                pos += 1
            elif form == 0x08:
                pos = info.index(b"\0", pos) + 1
            elif form == 0x18 or form == 0x09:
                n, pos = uleb(info, pos)
                pos += n
            elif form == 0x0a:
                pos += 1 + info[pos]
            elif form == 0x03:
                pos += 2 + uint(info, pos, 2, self.little)
            elif form == 0x04:
                pos += 4 + uint(info, pos, 4, self.little)
            else:                      # indirect and anything unusual: decode it
                _v, pos = self._read_form(info, pos, form, cu, None)
        return pos

    def _sibling(self, info, pos, cu, code, plans):
        """The DW_AT_sibling of the DIE (abbreviation ``code``) whose attributes start at
        ``pos``, read by skipping the attributes before it; None when it has none."""
        sp = plans.get(-code)
        if sp is None:
            sp = False
            specs = cu._abbrevs[code][2]
            for i, (at, form, _imp) in enumerate(specs):
                if at == AT_sibling and (0x11 <= form <= 0x14 or form in (0x10, 0x15)):
                    sp = (self._skip_plan(cu, specs[:i]), form)
                    break
            plans[-code] = sp
        if sp is False:
            return None
        v, _p = self._read_form(info, self._run_plan(info, pos, cu, sp[0]), sp[1], cu, None)
        return v

    def _scan_funcs(self, cu):
        """Walk the unit's DIEs once: function ranges and the scopes needed to name them.
        The subtrees of inlined calls and call sites (most of an optimised function's
        DIEs) hold neither, and are passed over by their DW_AT_sibling."""
        info = self.secs.view(".debug_info")
        funcs = []                    # (lo, hi, die offset)
        scopes = {}                   # die offset -> (tag, attrs, nearest recorded ancestor)
        stack = []                    # recorded-ancestor offsets, one per open DIE with children
        plans = self._plans_of(cu)
        abbrevs = cu._abbrevs
        read_form = self._read_form
        pos = cu.die_off
        end = cu.end
        depth0 = True
        seen = decoded = 0
        # Only C++'s names are qualified by their scopes (names.py): elsewhere only the
        # functions with code are decoded (not the declarations, nor the structs).
        if cu.language in CPP_LANGS or cu.language is None:
            record = RECORD_TAGS
            wanted = None
        else:
            record = (TAG_subprogram,)
            wanted = {}               # abbreviation code -> whether it has pc attributes
        while pos < end:
            die_off = pos
            code, pos = uleb(info, pos)
            if code == 0:
                if stack:
                    stack.pop()
                if not stack:
                    break
                continue
            try:
                tag, children, specs = abbrevs[code]
            except KeyError:
                raise DwarfError(f"unknown abbrev {code}") from None
            seen += 1
            if depth0:
                depth0 = False
                pos = self._skip_die(info, pos, cu, code, plans)
                if not children:
                    break
                stack.append(None)
                continue
            if tag in record and (wanted is None or _has_pc(wanted, code, specs)):
                attrs = {}
                for at, form, implicit in specs:
                    v, pos = read_form(info, pos, form, cu, implicit)
                    if at in DIE_ATTRS_FUNC:
                        attrs[at] = (form, v)
                parent = stack[-1] if stack else None
                scopes[die_off] = (tag, attrs, parent)
                decoded += 1
                if tag == TAG_subprogram:
                    for lo, hi in self._die_ranges(cu, attrs):
                        funcs.append((lo, hi, die_off))
                if children:
                    stack.append(die_off)
            elif children and tag in _OPAQUE_TAGS:
                sib = self._sibling(info, pos, cu, code, plans)
                if sib is not None and pos < sib <= end:
                    pos = sib
                else:
                    pos = self._skip_die(info, pos, cu, code, plans)
                    stack.append(stack[-1] if stack else None)
            else:
                pos = self._skip_die(info, pos, cu, code, plans)
                if children:
                    stack.append(stack[-1] if stack else None)
        self.counts["dies_read"] += decoded
        self.counts["dies_skipped"] += seen - decoded
        cu._scopes = scopes
        funcs.sort()
        pmax = []
        m = -1
        for f in funcs:
            if f[1] > m:
                m = f[1]
            pmax.append(m)
        return ([f[0] for f in funcs], [f[1] for f in funcs], [f[2] for f in funcs], pmax)


def _has_pc(memo, code, specs):
    """Whether DIEs of abbreviation ``code`` have DW_AT_low_pc or DW_AT_ranges (memoised)."""
    v = memo.get(code)
    if v is None:
        v = memo[code] = any(at == AT_low_pc or at == AT_ranges for at, _form, _imp in specs)
    return v


__all__ = ["DwarfInfo", "DieNode", "DwarfError", "Unit"]
