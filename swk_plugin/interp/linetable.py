"""co_linetable: the line a code object's instruction belongs to, as PyCode_Addr2Line says.

A frame records where it is as an instruction offset; the line comes from the code object's
co_linetable, which CPython reads itself for tracebacks.  Two formats:

- 3.10 (PEP 626): pairs of bytes (bytecode bytes covered, signed line delta; -128: no line),
  from co_firstlineno.  A pair covering no bytes only moves the line on.
- 3.11+ (PEP 657's location table): entries whose first byte has bit 7 set, the code in
  bits 3-6 and the number of code units covered, minus one, in bits 0-2.  Code 15: no
  location; 14: the long form (signed varint line delta, then end line, columns); 13: no
  columns (signed varint line delta); 10-12: one line, delta code-10, two column bytes;
  0-9: the same line, one column byte.  Varints are 6-bit chunks, least significant first,
  bit 6 set while more follow; a signed varint keeps its sign in bit 0.

Both are decoded into ranges [start, end) of bytecode bytes and their line (None: none),
which tests/test_python_layouts.py holds against each interpreter's own co_lines().
"""
import bisect


def _varint(table, i):
    b = table[i]
    i += 1
    value, shift = b & 63, 0
    while b & 64:
        b = table[i]
        i += 1
        shift += 6
        value |= (b & 63) << shift
    return value, i


def _svarint(table, i):
    value, i = _varint(table, i)
    return (-(value >> 1) if value & 1 else value >> 1), i


def ranges_310(table, firstlineno):
    """[(start, end, line)] of a 3.10 co_linetable, in bytecode bytes; empty ranges left out."""
    out = []
    line, end = firstlineno, 0
    for i in range(0, len(table) - 1, 2):
        start, end = end, end + table[i]
        delta = table[i + 1] - 256 if table[i + 1] >= 128 else table[i + 1]
        if delta == -128:
            ar_line = None
        else:
            line += delta
            ar_line = line
        if end > start:
            out.append((start, end, ar_line))
    return out


#: Location table codes (Include/cpython/code.h's _PyCodeLocationInfoKind).
NO_LOCATION, LONG, NO_COLUMNS, ONE_LINE0 = 15, 14, 13, 10


def ranges_311(table, firstlineno, unit=2):
    """[(start, end, line)] of a 3.11+ location table, in bytecode bytes (``unit`` per code unit)."""
    out = []
    line, addr, i, n = firstlineno, 0, 0, len(table)
    while i < n:
        first = table[i]
        code, units = (first >> 3) & 15, (first & 7) + 1
        if code == NO_LOCATION:
            ar_line = None
        else:
            if code in (LONG, NO_COLUMNS):
                delta, _ = _svarint(table, i + 1)
            elif code >= ONE_LINE0:
                delta = code - ONE_LINE0
            else:
                delta = 0
            line += delta
            ar_line = line
        out.append((addr * unit, (addr + units) * unit, ar_line))
        addr += units
        i += 1
        while i < n and not table[i] & 128:      # the entry's other bytes
            i += 1
    return out


class LineTable:
    """A code object's ranges, looked up by bytecode byte offset (PyCode_Addr2Line)."""
    __slots__ = ("firstlineno", "starts", "ranges")

    def __init__(self, ranges, firstlineno):
        self.firstlineno = firstlineno
        self.ranges = ranges
        self.starts = [r[0] for r in ranges]

    @classmethod
    def of(cls, table, firstlineno, version):
        """The LineTable of co_linetable ``table`` of a code object of CPython ``version``."""
        ranges = ranges_310(table, firstlineno) if tuple(version[:2]) < (3, 11) else ranges_311(table, firstlineno)
        return cls(ranges, firstlineno)

    def line_at(self, addr):
        """The line of the instruction at byte ``addr`` (co_firstlineno for a negative one, as
        CPython gives a frame that has not started); None where the table gives none."""
        if addr < 0:
            return self.firstlineno
        k = bisect.bisect_right(self.starts, addr) - 1
        if k >= 0 and addr < self.ranges[k][1]:
            return self.ranges[k][2]
        return None
