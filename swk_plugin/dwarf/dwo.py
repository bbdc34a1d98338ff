"""Split DWARF (gcc/clang -gsplit-dwarf; DWARF 5 section 3.1.3 and its GNU forerunner for
DWARF 4): a skeleton unit in the program names, by DW_AT_dwo_name / DW_AT_GNU_dwo_name and
DW_AT_comp_dir, the .dwo file whose split unit holds the functions, scopes, variables and
call sites; the two share a dwo_id.  A .dwp package (``PROGRAM.dwp``, made by ``dwp``)
holds many .dwo files' units, found by dwo_id through its .debug_cu_index.

Each split unit is read by a DwarfInfo of its own whose .debug_info offsets are moved up
by a base, as the supplementary file's are (altfile.py): one offset names one DIE whichever
file it is in, so the readers and their caches need not know which file a DIE came from.
That DwarfInfo sees the sections the split unit's attributes refer to: the .dwo's own
(.debug_abbrev.dwo, .debug_str.dwo, .debug_str_offsets.dwo, .debug_loclists.dwo / DWARF 4's
.debug_loc.dwo, .debug_rnglists.dwo; in a package, the unit's contribution to each) under
the names the readers use, and the program's .debug_addr, .debug_line, .debug_line_str and
(DWARF 4) .debug_ranges.  The skeleton's addr_base, ranges base, stmt_list, low_pc, ranges
and comp_dir are the split unit's (GDB's read_cutu_die_from_dwo copies them over).

Files are looked for as GDB 13 does (read.c's open_and_init_dwp_file, open_dwo_file): the
package first, and when there is one no .dwo is opened; a .dwo at DW_AT_comp_dir joined to
its name, else by its name beside the program, in the working directory, in the debug
directories.  A unit whose file is missing, or whose dwo_id differs, stays the skeleton: no
functions, no variables (GDB warns "Could not find DWO CU" once; swk's lines say nothing).
"""
import os
import struct
import threading

from ..elf.debugfile import DEFAULT_DEBUG_DIRS
from ..elf.module import ElfModule
from ..elf.sections import debug_sections
from ..errors import BadFileError
from .altfile import Shifted
from .units import DwarfError, uleb

#: Where the split units' .debug_info offsets start, one file's (or one package unit's)
#: every SPLIT_STRIDE: above the supplementary file's (altfile.ALT_BASE).
SPLIT_BASE = 1 << 44
SPLIT_STRIDE = 1 << 36

#: The sections a split unit's readers ask for by their usual names that are the .dwo's.
#: The others (.debug_addr, .debug_line, .debug_line_str, .debug_ranges) are the program's.
DWO_SECTIONS = {".debug_info": ".debug_info.dwo", ".debug_abbrev": ".debug_abbrev.dwo",
                ".debug_str": ".debug_str.dwo", ".debug_str_offsets": ".debug_str_offsets.dwo",
                ".debug_loc": ".debug_loc.dwo", ".debug_loclists": ".debug_loclists.dwo",
                ".debug_rnglists": ".debug_rnglists.dwo", ".debug_macro": ".debug_macro.dwo"}

#: .debug_cu_index column ids (DW_SECT_*) -> the reader's section name: the GNU
#: pre-standard package (version 2, DWARF 4 units) and DWARF 5's (version 5).
_SECT_V2 = {1: ".debug_info", 3: ".debug_abbrev", 4: ".debug_line", 5: ".debug_loc",
            6: ".debug_str_offsets", 7: ".debug_macinfo", 8: ".debug_macro"}
_SECT_V5 = {1: ".debug_info", 3: ".debug_abbrev", 4: ".debug_line", 5: ".debug_loclists",
            6: ".debug_str_offsets", 7: ".debug_macro", 8: ".debug_rnglists"}


class DwoSections:
    """The sections one split unit's DwarfInfo reads (see the module docstring): the .dwo's
    (a package unit's contributions cut out of them), .debug_info moved up by ``base``, and
    the skeleton file's for the rest."""

    def __init__(self, dwo_secs, program_secs, base, contributions=None):
        self._dwo, self._prog, self.base = dwo_secs, program_secs, base
        self._contrib = contributions
        self._cuts = {}
        self.little, self.is64 = dwo_secs.little, dwo_secs.is64

    def _dwo_data(self, name):
        if name in self._cuts:
            return self._cuts[name]
        data = self._dwo.get(DWO_SECTIONS[name])
        if data is not None and self._contrib is not None and name != ".debug_str":
            where = self._contrib.get(name)
            data = None if where is None else bytes(data[where[0]:where[0] + where[1]])
        if data is not None and name == ".debug_info":
            data = Shifted(data, self.base)
        self._cuts[name] = data
        return data

    def has(self, name):
        if name in DWO_SECTIONS:
            return self._dwo_data(name) is not None
        return self._prog.has(name)

    def get(self, name):
        return self._dwo_data(name) if name in DWO_SECTIONS else self._prog.get(name)

    def view(self, name):
        return self._dwo_data(name) if name in DWO_SECTIONS else self._prog.view(name)

    def upto(self, name, end):
        return self._dwo_data(name) if name in DWO_SECTIONS else self._prog.upto(name, end)


class PackageIndex:
    """A .dwp package's .debug_cu_index: each unit's contribution to each section, by dwo_id."""

    def __init__(self, data, little):
        order = "little" if little else "big"
        u32 = lambda p: int.from_bytes(data[p:p + 4], order)     # noqa: E731
        version = u32(0)
        if version not in (2, 5):
            version = int.from_bytes(data[0:2], order)   # DWARF 5: a 2-byte version, 2 of padding
        if version not in (2, 5):
            raise DwarfError(f"package index version {version}")
        self.columns_of = _SECT_V5 if version == 5 else _SECT_V2
        self.ncols, self.nunits, self.nslots = u32(4), u32(8), u32(12)
        if self.nslots & (self.nslots - 1):
            raise DwarfError("package index: slots not a power of 2")
        self._data, self._order, self._u32 = data, order, u32
        self._sigs = 16
        self._rows = self._sigs + 8 * self.nslots
        ids_at = self._rows + 4 * self.nslots
        self._ids = [u32(ids_at + 4 * i) for i in range(self.ncols)]
        self._offs = ids_at + 4 * self.ncols
        self._sizes = self._offs + 4 * self.nunits * self.ncols
        if self._sizes + 4 * self.nunits * self.ncols > len(data):
            raise DwarfError("package index truncated")

    def contributions(self, dwo_id):
        """{section name: (offset, size)} of the unit with ``dwo_id``, or None (the hash
        table's open addressing, DWARF 5 section 7.3.5.3)."""
        mask = self.nslots - 1
        h = dwo_id & mask
        h2 = ((dwo_id >> 32) & mask) | 1
        for _ in range(self.nslots):
            sig = int.from_bytes(self._data[self._sigs + 8 * h:self._sigs + 8 * h + 8], self._order)
            if sig == dwo_id:
                row = self._u32(self._rows + 4 * h)
                if not 1 <= row <= self.nunits:
                    return None
                out = {}
                for col, sect in enumerate(self._ids):
                    name = self.columns_of.get(sect)
                    k = 4 * ((row - 1) * self.ncols + col)
                    if name is not None:
                        out[name] = (self._u32(self._offs + k), self._u32(self._sizes + k))
                return out
            if sig == 0:
                return None
            h = (h + h2) & mask
        return None


def _join(a, b):
    return b if os.path.isabs(b) or not a else os.path.join(a, b)


def dwo_candidates(name, comp_dir, objfile_dir, debug_dirs=DEFAULT_DEBUG_DIRS):
    """Where GDB's open_dwo_file looks for ``name``, in its order: an absolute name only
    there; else comp_dir joined to it (where relative, searched beside the program, in the
    working directory and in the debug directories); then the name itself so searched."""
    if os.path.isabs(name):
        return [name]
    out = []

    def searched(rel):
        return [_join(objfile_dir, rel), rel, *(_join(d, rel) for d in debug_dirs)]

    if comp_dir:
        p = _join(comp_dir, name)
        out += [p] if os.path.isabs(p) else searched(p)
    if debug_dirs:
        out += searched(name)
    return list(dict.fromkeys(out))


def dwp_candidates(objfile, program=None, debug_dirs=DEFAULT_DEBUG_DIRS):
    """Where GDB's open_and_init_dwp_file looks for the package of ``objfile`` (the file with
    the DWARF; ``program`` when that is a separate debug file): ``PROGRAM.dwp`` beside
    ``objfile``, the same after resolving links, then by its base name beside ``objfile``
    and in the debug directories."""
    if not objfile:
        return []
    base = os.path.basename(program or objfile) + ".dwp"
    here = os.path.dirname(objfile)
    first = os.path.join(here, base) if program else objfile + ".dwp"
    out = [first, os.path.realpath(objfile) + ".dwp", os.path.join(here, base)]
    out += [os.path.join(d, base) for d in debug_dirs]
    return list(dict.fromkeys(out))


class SplitUnits:
    """The split units of one program's DwarfInfo: its package or .dwo files, opened once
    each, and the DwarfInfo that reads each split unit at its base."""

    def __init__(self, dwarf, make):
        self._dwarf, self._make = dwarf, make
        self._lock = threading.RLock()
        self._dwp = None
        self._dwp_read = False
        self._files = {}         # .dwo path -> its DwarfInfo (None: unreadable)
        self._at = {}            # base -> DwarfInfo
        self._next = SPLIT_BASE
        #: (dwo name, dwo_id) of each skeleton whose split unit was not found (GDB's warning)
        self.missing = []

    def info_at(self, off):
        """The DwarfInfo of the split unit (or .dwo file) whose offsets hold ``off``, or None."""
        return self._at.get(SPLIT_BASE + (off - SPLIT_BASE) // SPLIT_STRIDE * SPLIT_STRIDE)

    def split_of(self, skel):
        """The split unit of skeleton ``skel`` with the skeleton's attributes applied, or None."""
        if skel.split is not None:
            return skel.split or None
        with self._lock:
            if skel.split is None:
                try:
                    cu = self._find(skel)
                except (BadFileError, OSError, IndexError, KeyError, ValueError, struct.error, DwarfError):
                    cu = None
                if cu is None:
                    self.missing.append((skel.dwo_name, skel.dwo_id))
                skel.split = cu if cu is not None else False
            return skel.split or None

    def _base(self):
        b = self._next
        self._next += SPLIT_STRIDE
        return b

    def _find(self, skel):
        dwp = self._package()
        if dwp is not None:                    # a package: the .dwo files are not looked at
            module, index = dwp
            contrib = index.contributions(skel.dwo_id)
            if contrib is None or ".debug_info" not in contrib:
                return None
            base = self._base()
            d = self._make(module, base, DwoSections(debug_sections(module), self._dwarf.secs, base, contrib))
            self._at[base] = d
            cu = d.unit_at(base)
        else:
            d = self._dwo_file(skel)
            cu = _unit_with_id(d, skel.dwo_id) if d is not None else None
        if cu is None or cu.dwo_id != skel.dwo_id:
            return None
        _adopt(cu, skel)
        return cu

    def _package(self):
        if not self._dwp_read:
            self._dwp_read = True
            d = self._dwarf
            for path in dwp_candidates(getattr(d.module, "path", None), d.program):
                if not os.path.isfile(path):
                    continue
                try:
                    module = ElfModule(path=path)
                    secs = debug_sections(module)
                    data = secs.get(".debug_cu_index")
                    if data is None:
                        continue
                    self._dwp = (module, PackageIndex(data, secs.little))
                except (BadFileError, OSError, ValueError, IndexError, DwarfError):
                    continue
                break
        return self._dwp

    def _dwo_file(self, skel):
        if not skel.dwo_name:
            return None
        here = getattr(self._dwarf.module, "path", None)
        for path in dwo_candidates(skel.dwo_name, skel.comp_dir, os.path.dirname(here) if here else ""):
            if not os.path.isfile(path):
                continue
            key = os.path.realpath(path)
            if key not in self._files:
                try:
                    module = ElfModule(path=path)
                    base = self._base()
                    d = self._make(module, base, DwoSections(debug_sections(module), self._dwarf.secs, base))
                    self._at[base] = d
                except (BadFileError, OSError, ValueError):
                    d = None
                self._files[key] = d
            return self._files[key]            # GDB opens the first file found, and no other
        return None


def _unit_with_id(d, dwo_id):
    """The split compilation unit of .dwo file ``d`` whose dwo_id is ``dwo_id``, or None."""
    info = d.secs.get(".debug_info")
    if info is None:
        return None
    off, end = d.info_base, len(info)
    while off + 11 <= end:
        cu = d.unit_at(off)
        if cu.dwo_id == dwo_id and cu.unit_type in (1, 5):
            return cu
        if cu.end <= off:
            break
        off = cu.end
    return None


def _adopt(cu, skel):
    """Give split unit ``cu`` what its skeleton holds for it (read_cutu_die_from_dwo)."""
    cu.skeleton = skel
    cu.addr_base = skel.addr_base
    cu.gnu_ranges_base = skel.gnu_ranges_base
    cu.stmt_list = skel.stmt_list
    cu.low_pc, cu.ranges, cu.lowpc = skel.low_pc, skel.ranges, skel.lowpc
    if cu.comp_dir is None:
        cu.comp_dir = skel.comp_dir
    if cu.name is None:
        cu.name = skel.name


def dwo_location_expr(d, cu, offset, addr, func_entry=None):
    """The expression of a DWARF 4 split unit's location list (in .debug_loc.dwo, at
    ``offset``) that applies at unbiased ``addr``, or None: GDB's
    decode_debug_loc_dwo_addresses.  Its entries (DW_LLE_GNU_*) give addresses by
    .debug_addr index, already absolute: no base address is added."""
    sec = d.unit_sections(cu).get(".debug_loc")
    if sec is None or not isinstance(offset, int):
        return None
    order = d.byteorder
    pos, n = offset, len(sec)
    while pos < n:
        kind = sec[pos]
        pos += 1
        if kind == 0:                                   # DW_LLE_GNU_end_of_list_entry
            return None
        if kind == 1:                                   # DW_LLE_GNU_base_address_selection_entry
            _i, pos = uleb(sec, pos)
            continue
        if kind == 2:                                   # DW_LLE_GNU_start_end_entry
            a, pos = uleb(sec, pos)
            b, pos = uleb(sec, pos)
            lo, hi = d.address(cu, ("addrx", a)), d.address(cu, ("addrx", b))
        elif kind == 3:                                 # DW_LLE_GNU_start_length_entry
            a, pos = uleb(sec, pos)
            lo = d.address(cu, ("addrx", a))
            hi = lo + int.from_bytes(sec[pos:pos + 4], order) if lo is not None else None
            pos += 4
        else:                                           # GDB: "Corrupted DWARF expression"
            return None
        ln = int.from_bytes(sec[pos:pos + 2], order)
        pos += 2
        expr = sec[pos:pos + ln]
        pos += ln
        if lo is None or hi is None:
            continue
        if lo == hi == addr and func_entry is not None and addr == func_entry:
            return expr
        if lo <= addr < hi:
            return expr
    return None


def is_skeleton(cu):
    """Whether ``cu`` is a skeleton unit: DWARF 5's DW_UT_skeleton, or a DWARF 4 unit that
    names a .dwo (DW_AT_GNU_dwo_name) and a dwo_id."""
    return cu.dwo_id is not None and cu.skeleton is None and (cu.unit_type == 4 or cu.dwo_name is not None)


__all__ = ["SPLIT_BASE", "SPLIT_STRIDE", "DwoSections", "PackageIndex", "SplitUnits", "dwo_candidates", "dwo_location_expr",
           "dwp_candidates", "is_skeleton"]
