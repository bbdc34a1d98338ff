"""Which compilation unit holds an address: .debug_aranges, completed by the units' own
DW_AT_low_pc/high_pc/ranges for units that aranges leave out, and last by the functions of
units with no pc attributes of their own (GDB indexes every function's range, so a unit
whose top DIE says nothing still holds its functions' code) (a mixin of DwarfInfo).  A
skeleton unit's code is its split unit's (dwo.py): that is the unit given."""
import bisect
import struct
from . import unitcache
from .constants import TAG_partial_unit
from .units import DwarfError, uint, uleb

#: DW_AT_low_pc, DW_AT_high_pc, DW_AT_ranges
_PC_ATTRS = frozenset((0x11, 0x12, 0x55))
TAG_subprogram = 0x2e


class UnitMap:
    """Finding a unit by address: ``cu_for(addr)``."""

    def _aranges(self):
        """(entries, covered unit offsets) from .debug_aranges ([] and empty if none)."""
        entries = []
        covered = set()
        ar = self.secs.get(".debug_aranges")
        if ar is not None:
            try:
                self._parse_aranges(ar, entries, covered)
            except (IndexError, struct.error, ValueError, DwarfError):
                entries = []
                covered = set()
        return entries, covered

    def _build_amap(self):
        entries, _covered = self._aranges()
        self._amap = self._index(entries)

    def _build_map(self):
        entries, covered = self._aranges()
        info = self.secs.get(".debug_info")
        if info is not None:
            off = 0
            n = len(info)
            while off + 11 <= n:
                try:
                    length = uint(info, off, 4, self.little)
                    if length == 0xFFFFFFFF:
                        end = off + 12 + uint(info, off + 4, 8, self.little)
                    else:
                        end = off + 4 + length
                    if end <= off or end > n:
                        break
                    if off not in covered:
                        top = self._top_die(info, off)
                        if top is None or any(at in _PC_ATTRS for at, _form, _imp in top[1]):
                            cu = self.unit_at(off)
                            if cu.unit_type in (1, 3, 4) and cu.ranges:
                                for lo, hi in cu.ranges:
                                    entries.append((lo, hi, off))
                        elif top[0] != TAG_partial_unit:
                            # (a partial unit, dwz's, is read only where a unit imports it,
                            # as GDB reads it: it holds no function with code of its own)
                            self._pcless.append(off)
                    off = end
                except (IndexError, struct.error, ValueError, DwarfError):
                    break
        self._map = self._index(entries)

    def _top_die(self, info, off):
        """(tag, attribute specs) of the top DIE of the unit at ``off``, by its abbreviation
        alone (None for a unit already read, or unreadable): whether it has pc attributes
        says whether the unit can have code, and most units .debug_aranges leaves out have
        none (an LTO program's early-debug units: 180 of python3.11's) and need not be read."""
        if off in self._cus:
            return None
        try:
            cu = self._read_unit_header(info, off)
            code, _pos = uleb(info, cu.die_off)
            tag, _children, specs = self._abbrevs(cu.abbrev_off)[code]
        except (IndexError, KeyError, struct.error, ValueError, DwarfError):
            return None
        return tag, specs

    @staticmethod
    def _index(entries):
        entries.sort()
        los = [e[0] for e in entries]
        his = [e[1] for e in entries]
        pmax = []
        m = -1
        for h in his:
            if h > m:
                m = h
            pmax.append(m)
        return (los, his, pmax, [e[2] for e in entries])

    def _parse_aranges(self, ar, entries, covered):
        little = self.little
        pos = 0
        n = len(ar)
        while pos + 12 <= n:
            start = pos
            length = uint(ar, pos, 4, little)
            pos += 4
            offsz = 4
            if length == 0xFFFFFFFF:
                length = uint(ar, pos, 8, little)
                pos += 8
                offsz = 8
            end = pos + length
            if end > n or length == 0:
                break
            pos += 2                        # version
            cu_off = uint(ar, pos, offsz, little)
            pos += offsz
            asz = ar[pos]
            seg = ar[pos + 1]
            pos += 2
            if asz not in (2, 4, 8) or seg:
                pos = end
                continue
            tup = 2 * asz
            rem = (pos - start) % tup
            if rem:
                pos += tup - rem
            count = (end - pos) // tup
            fmt = ("<" if little else ">") + {2: "HH", 4: "II", 8: "QQ"}[asz]
            for lo, ln in struct.iter_unpack(fmt, ar[pos:pos + count * tup]):
                # (0, 0) ends a set, but GDB reads on to the set's length (linkers leave (0, 0)
                # pairs inside a set with --gc-sections); a range at 0 is code a COMDAT dropped
                if lo and ln:
                    entries.append((lo, lo + ln, cu_off))
            covered.add(cu_off)
            pos = end

    def cu_for(self, addr):
        """The unit whose ranges hold ``addr``: from .debug_aranges when it names one (so
        only that unit is read), else from every unit's own ranges (the whole section); for
        a skeleton unit, its split unit when its .dwo is found."""
        with self._lock:
            if self._amap is None:
                kept = unitcache.load_map(self, "amap")
                if kept is not None:
                    self._amap = kept[0]
                else:
                    self._build_amap()
                    if len(self._amap[0]) >= unitcache.MIN_ARANGES:
                        unitcache.store_map(self, "amap", self._amap, None)
        cu = self._find_cu(self._amap, addr)
        if cu is not None:
            return cu
        with self._lock:
            if self._map is None:
                kept = unitcache.load_map(self, "map")
                if kept is not None:
                    self._map, self._pcless = kept
                else:
                    self._build_map()
                    unitcache.store_map(self, "map", self._map, self._pcless)
        cu = self._find_cu(self._map, addr)
        if cu is not None or not self._pcless:
            return cu
        with self._lock:
            if self._fmap is None:
                kept = unitcache.load_map(self, "fmap")
                if kept is not None:
                    self._fmap = kept[0]
                else:
                    self._build_fmap()
                    unitcache.store_map(self, "fmap", self._fmap, None)
        return self._find_cu(self._fmap, addr)

    def _build_fmap(self):
        """The map of last resort: the functions of units whose top DIE has no pc attributes,
        read only where their abbreviations can describe a function with code (an LTO
        program's early-debug units cannot: they are passed over unread)."""
        entries = []
        for off in self._pcless:
            try:
                cu = self.code_unit(self.unit_at(off))
                if cu.unit_type not in (1, 3, 4, 5) or not any(
                        tag == TAG_subprogram and any(at in _PC_ATTRS for at, _f, _i in specs)
                        for tag, _children, specs in cu.owner._abbrevs(cu.abbrev_off).entries()):
                    continue
                los, his, _offs, _pmax = self.funcs_for(cu)
                entries += [(lo, hi, off) for lo, hi in zip(los, his) if hi > lo]
            except (IndexError, KeyError, struct.error, ValueError, DwarfError):
                continue
        self._fmap = self._index(entries)

    def _find_cu(self, index, addr):
        los, his, pmax, offs = index
        i = bisect.bisect_right(los, addr) - 1
        while i >= 0 and pmax[i] > addr:
            if his[i] > addr:
                try:
                    return self.code_unit(self.unit_at(offs[i]))
                except DwarfError:
                    return None
            i -= 1
        return None

    # --- line programs ---------------------------------------------------------------------------
