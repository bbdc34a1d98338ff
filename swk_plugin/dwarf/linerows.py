"""A unit's line program as LLDB reads it: every row with its column, no row dropped.

swk's line tables (lineprog.py) are built by GDB's rules, which keep no column and merge or drop
rows GDB does not want.  LLDB's frame lines end in the column of the row that holds the pc
(`at demo.c:13:52`), so for the frames only swk finds, drawn in LLDB's frame-format, the unit's
program is run once more keeping every row's (address, line, column), kept per unit.  Only
those frames ask: a walk in GDB never reads this.
"""
import bisect
import struct

from .lineprog import _reader
from .units import DwarfError, sleb, uint, uleb


def row_at(d, cu, addr):
    """(line, column) of the row whose range holds the unbiased ``addr`` in ``cu``'s line
    program (the last row at or before it in its sequence), or None."""
    reader = _reader(cu) or d
    rows = _rows(reader, cu)
    if not rows:
        return None
    addrs, entries = rows
    i = bisect.bisect_right(addrs, addr) - 1
    if i < 0:
        return None
    end_seq, line, column = entries[i]
    return None if end_seq or not line else (line, column)


def _rows(d, cu):
    got = cu._column_rows
    if got is None:
        try:
            got = _decode(d, cu)
        except (IndexError, struct.error, ValueError, DwarfError, UnicodeError):
            got = ()
        cu._column_rows = got
    return got


def _decode(d, cu):
    """([address], [(end_sequence, line, column)]) of every row, sorted by address (sequences
    in address order; a sequence's end row closes its range)."""
    if cu.stmt_list is None:
        return ()
    data = d._line_data(cu.stmt_list)
    if data is None or cu.stmt_list >= len(data):
        return ()
    h = d._line_header(data, cu.stmt_list, cu)
    little = d.little
    min_inst, max_ops = h["min_inst"], h["max_ops"] or 1
    line_base, line_range = h["line_base"], h["line_range"] or 1
    opcode_base, std_lens = h["opcode_base"], h["std_lens"]
    pos, end = h["prog"], h["end"]
    sequences, seq = [], []
    address = op_index = column = 0
    line = 1

    def advance(n):
        nonlocal address, op_index
        address += ((op_index + n) // max_ops) * min_inst
        op_index = (op_index + n) % max_ops

    while pos < end:
        op = data[pos]
        pos += 1
        if op >= opcode_base:
            adj = op - opcode_base
            advance(adj // line_range)
            line += line_base + adj % line_range
            seq.append((address, False, line, column))
        elif op == 0:
            n, pos = uleb(data, pos)
            nxt = pos + n
            sub = data[pos] if n else 0
            if sub == 1:                                   # end_sequence
                seq.append((address, True, line, column))
                sequences.append(seq)
                seq, address, op_index, line, column = [], 0, 0, 1, 0
            elif sub == 2:                                 # set_address
                address, op_index = uint(data, pos + 1, n - 1, little), 0
            pos = nxt
        elif op == 1:                                      # copy
            seq.append((address, False, line, column))
        elif op == 2:
            n, pos = uleb(data, pos)
            advance(n)
        elif op == 3:
            n, pos = sleb(data, pos)
            line += n
        elif op == 5:
            column, pos = uleb(data, pos)
        elif op == 8:                                      # const_add_pc
            advance((255 - opcode_base) // line_range)
        elif op == 9:                                      # fixed_advance_pc
            address += uint(data, pos, 2, little)
            op_index = 0
            pos += 2
        else:                                              # file, stmt, isa ...: no row, no column
            for _ in range(std_lens[op - 1] if op - 1 < len(std_lens) else 0):
                _v, pos = uleb(data, pos)
    sequences.sort(key=lambda s: s[0][0] if s else 0)
    addrs, entries = [], []
    for s in sequences:
        for a, end_seq, ln, col in s:
            if addrs and a == addrs[-1] and not end_seq:
                entries[-1] = (end_seq, ln, col)           # rows at one address: the last holds it
                continue
            addrs.append(a)
            entries.append((end_seq, ln, col))
    return addrs, entries
