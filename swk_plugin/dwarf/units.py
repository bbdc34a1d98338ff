"""DWARF units and the low-level readers every .debug_* reader shares.

A Unit is one compilation (or partial, skeleton or split) unit's header and the
attributes of its top DIE that the readers need; the readers here decode
LEB128s, strings and the fixed-size attribute forms.
"""


class DwarfError(Exception):
    pass


class _All:
    """A set that holds every attribute."""
    def __contains__(self, _x):
        return True


ALL_ATTRS = _All()


# --- low-level readers ---------------------------------------------------------------------

def uleb(data, pos):
    result = 0
    shift = 0
    while True:
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7


def sleb(data, pos):
    result = 0
    shift = 0
    while True:
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            if b & 0x40:
                result -= 1 << shift
            return result, pos


def cstr(data, pos):
    end = data.index(b"\0", pos)
    return data[pos:end], end + 1


def uint(data, pos, size, little=True):
    return int.from_bytes(data[pos:pos + size], "little" if little else "big")


# fixed sizes of forms that do not depend on the unit (None: variable or unit-dependent)
FIXED_SIZES = {0x0b: 1, 0x05: 2, 0x06: 4, 0x07: 8, 0x0c: 1, 0x11: 1, 0x12: 2, 0x13: 4, 0x14: 8,
          0x19: 0, 0x1c: 4, 0x1e: 16, 0x20: 8, 0x21: 0, 0x24: 8, 0x25: 1, 0x26: 2, 0x27: 3,
          0x28: 4, 0x29: 1, 0x2a: 2, 0x2b: 3, 0x2c: 4}


class AbbrevTable(dict):
    """A unit's abbreviations, {code: (tag, has_children, ((attribute, form, implicit), ...))},
    decoded as far as the codes asked for so far: a unit read for its top DIE or for one
    function uses a few of the hundreds GCC writes per unit (``table[code]``; ``get`` too)."""
    __slots__ = ("_data", "_pos")

    def __init__(self, data, pos):
        super().__init__()
        self._data = data
        self._pos = pos           # where the next undecoded entry starts; None: all decoded

    def __missing__(self, code):
        data = self._data
        pos = self._pos
        n = len(data)
        while pos is not None and pos < n:
            c = data[pos]                       # LEB128s: most are one byte
            if c < 0x80:
                pos += 1
            else:
                c, pos = uleb(data, pos)
            if c == 0:
                pos = None
                break
            tag = data[pos]
            if tag < 0x80:
                pos += 1
            else:
                tag, pos = uleb(data, pos)
            children = data[pos]
            pos += 1
            specs = []
            while True:
                at = data[pos]
                if at < 0x80:
                    pos += 1
                else:
                    at, pos = uleb(data, pos)
                form = data[pos]
                if form < 0x80:
                    pos += 1
                else:
                    form, pos = uleb(data, pos)
                if at == 0 and form == 0:
                    break
                implicit = None
                if form == 0x21:
                    implicit, pos = sleb(data, pos)
                specs.append((at, form, implicit))
            self.setdefault(c, (tag, bool(children), tuple(specs)))
            if c == code:
                self._pos = pos
                return dict.__getitem__(self, c)
        self._pos = None
        raise KeyError(code)

    def get(self, code, default=None):
        try:
            return self[code]
        except KeyError:
            return default

    def entries(self):
        """Every abbreviation (decoding the rest of the table)."""
        if self._pos is not None:
            self.get(-1)
        return self.values()


class Unit:
    __slots__ = ("offset", "end", "version", "unit_type", "addr_size", "offsz", "abbrev_off",
                 "die_off", "name", "comp_dir", "stmt_list", "low_pc", "ranges", "language",
                 "str_offsets_base", "addr_base", "rnglists_base", "lowpc", "_lines", "_funcs",
                 "_abbrevs", "_scopes", "_parents", "_names", "owner", "_plans", "_line_head",
                 "dwo_name", "dwo_id", "gnu_ranges_base", "skeleton", "split", "_column_rows", "_kids")

    def __init__(self):
        self.name = None
        self.comp_dir = None
        self.stmt_list = None
        self.low_pc = None
        self.ranges = None
        self.language = None
        self.str_offsets_base = None
        self.addr_base = None
        self.rnglists_base = None
        self.lowpc = 0
        self._lines = None
        self._funcs = None
        self._column_rows = None      # linerows.py: every row with its column, when LLDB's format asks
        self._kids = None          # unitcache.Kids: DIEs' children as read, kept on disk
        self._abbrevs = None
        self._scopes = None
        self._parents = None
        self._names = None
        self._plans = None         # abbreviation code -> how to skip such a DIE (info._skip_plan)
        self._line_head = None     # its line program's header (lineprog.py)
        #: the DwarfInfo that read the unit (a supplementary file's units are its own, and
        #: so are a .dwo file's)
        self.owner = None
        #: split DWARF: a skeleton unit's DW_AT_dwo_name / DW_AT_GNU_dwo_name and the dwo_id
        #: it and its split unit share (DWARF 5's header field, DWARF 4's DW_AT_GNU_dwo_id)
        self.dwo_name = None
        self.dwo_id = None
        #: DW_AT_GNU_ranges_base: what a DWARF 4 split unit's DW_AT_ranges offsets are from
        self.gnu_ranges_base = 0
        #: a split unit's skeleton; a skeleton's split unit (None: not looked for yet, False:
        #: none found, GDB's "Could not find DWO CU")
        self.skeleton = None
        self.split = None

    @property
    def byteorder(self):
        """The byte order of the unit's file: its DwarfInfo's (what its expressions'
        operands and its location lists are read in)."""
        return self.owner.byteorder
