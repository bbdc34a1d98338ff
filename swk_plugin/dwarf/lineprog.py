"""DWARF line-number programs (DWARF 2-5), decoded into GDB's per-source-file tables
(a mixin of DwarfInfo).

A unit's program is decoded once into Subfiles built with GDB's rules: end
markers on file switches, dropped line-0 rows, non-statement rows yielding to
statement rows at one address.  File names are those GDB prints after "at":
the unit's DW_AT_name for the primary source file, else the table's directory
joined to its file name.
"""
import struct

from . import unitcache
from .units import DwarfError, Unit, cstr, sleb, uint, uleb


class Subfile:
    __slots__ = ("name", "symtab", "pcs", "lines", "stmts")

    def __init__(self, name):
        self.name = name
        self.symtab = None       # the name of the symtab GDB gives it (what "at FILE:LINE" shows)
        self.pcs = []
        self.lines = []
        self.stmts = []


def _is_abs(p):
    return p.startswith("/")


def _path_join(a, b):
    if not a:
        return b
    if a.endswith("/"):
        return a + b
    return a + "/" + b


def _reader(cu):
    """The DwarfInfo that reads ``cu``'s line program: the one of the file holding it (a split
    unit's is in the program, at its skeleton's DW_AT_stmt_list)."""
    return cu.skeleton.owner if cu.skeleton is not None else cu.owner


class LinePrograms:
    """Line tables of units: ``lines_for(cu)`` -> [Subfile], ``file_name(cu, index)``."""

    def lines_for(self, cu):
        reader = _reader(cu)
        if reader is not None and reader is not self:
            return reader.lines_for(cu)
        if cu._lines is None:
            with self._lock:
                if cu._lines is None:
                    lines = unitcache.load_lines(self, cu, Subfile)
                    if lines is None:
                        try:
                            lines = self._decode_lines(cu)
                        except (IndexError, struct.error, ValueError, DwarfError, UnicodeError):
                            lines = []
                        else:
                            unitcache.store_lines(self, cu, lines)
                    cu._lines = lines
        return cu._lines

    def _line_data(self, off):
        """.debug_line inflated at least through the line program at ``off``."""
        data = self.secs.upto(".debug_line", off + 12)
        if data is None or off + 12 > len(data):
            return data
        length = uint(data, off, 4, self.little)
        if length == 0xFFFFFFFF:
            length = 8 + uint(data, off + 4, 8, self.little)
        return self.secs.upto(".debug_line", off + 4 + length)

    def _line_header(self, data, off, cu):
        little = self.little
        pos = off
        length = uint(data, pos, 4, little)
        pos += 4
        offsz = 4
        if length == 0xFFFFFFFF:
            length = uint(data, pos, 8, little)
            pos += 8
            offsz = 8
        end = pos + length
        if end > len(data):
            raise DwarfError("line program past section end")
        version = uint(data, pos, 2, little)
        pos += 2
        if version < 2 or version > 5:
            raise DwarfError(f"line table version {version}")
        addr_size = cu.addr_size
        if version >= 5:
            addr_size = data[pos]
            pos += 2          # address_size, segment_selector_size
        hlen = uint(data, pos, offsz, little)
        pos += offsz
        prog = pos + hlen
        min_inst = data[pos]
        pos += 1
        max_ops = 1
        if version >= 4:
            max_ops = data[pos] or 1
            pos += 1
        default_is_stmt = bool(data[pos])
        line_base = struct.unpack_from("b", data, pos + 1)[0]
        line_range = data[pos + 2]
        opcode_base = data[pos + 3]
        pos += 4
        std_lens = list(data[pos:pos + max(opcode_base - 1, 0)])
        pos += max(opcode_base - 1, 0)
        dirs = []
        files = []         # (name, dir_index)
        if version >= 5:
            lcu = Unit()
            lcu.offset = 0
            lcu.version = 5
            lcu.offsz = offsz
            lcu.addr_size = addr_size
            lcu.str_offsets_base = cu.str_offsets_base

            def entries(pos):
                nfmt = data[pos]
                pos += 1
                fmts = []
                for _ in range(nfmt):
                    ct, pos = uleb(data, pos)
                    fm, pos = uleb(data, pos)
                    fmts.append((ct, fm))
                count, pos = uleb(data, pos)
                out = []
                for _ in range(count):
                    name = None
                    dindex = 0
                    for ct, fm in fmts:
                        v, pos = self._read_form(data, pos, fm, lcu, None)
                        if ct == 1:
                            strx = fm in (0x1a, 0x25, 0x26, 0x27, 0x28)     # the program's, as the skeleton's
                            name = self.string((cu.skeleton or cu) if strx else lcu, v)
                        elif ct == 2 and isinstance(v, int):
                            dindex = v
                    out.append((name or "", dindex))
                return out, pos

            d, pos = entries(pos)
            dirs = [x[0] for x in d]
            files, pos = entries(pos)
        else:
            while True:
                s, pos = cstr(data, pos)
                if not s:
                    break
                dirs.append(s.decode("utf-8", "replace"))
            while True:
                s, pos = cstr(data, pos)
                if not s:
                    break
                di, pos = uleb(data, pos)
                _mt, pos = uleb(data, pos)
                _ln, pos = uleb(data, pos)
                files.append((s.decode("utf-8", "replace"), di))
        return dict(version=version, end=end, prog=prog, min_inst=min_inst, max_ops=max_ops,
                    default_is_stmt=default_is_stmt, line_base=line_base, line_range=line_range,
                    opcode_base=opcode_base, std_lens=std_lens, dirs=dirs, files=files,
                    addr_size=addr_size)

    def _decode_lines(self, cu):
        """[_Subfile] in GDB's filetab order (primary first), each sorted by pc."""
        if cu.stmt_list is None:
            return []
        data = self._line_data(cu.stmt_list)
        if data is None or cu.stmt_list >= len(data):
            return []
        h = self._line_header(data, cu.stmt_list, cu)
        version = h["version"]
        dirs = h["dirs"]
        files = h["files"]
        comp_dir = cu.comp_dir or ""
        little = self.little

        # --- subfiles, named and matched as GDB's start_subfile does
        subfiles = []                       # creation order
        primary = Subfile(cu.name if cu.name is not None else "<unknown>")
        subfiles.append(primary)

        def same(sf_name, name):
            if _is_abs(name) and not _is_abs(sf_name) and comp_dir:
                sf_name = _path_join(comp_dir, sf_name)
            return sf_name == name

        def start_subfile(name):
            for sf in reversed(subfiles):          # GDB walks its list newest first
                if same(sf.name, name):
                    return sf
            sf = Subfile(name)
            subfiles.append(sf)
            return sf

        def file_name(idx):
            """Subfile path for file index idx (as numbered in the line program)."""
            i = idx if version >= 5 else idx - 1
            if i < 0 or i >= len(files):
                return None
            name, di = files[i]
            dj = di if version >= 5 else di - 1
            d = dirs[dj] if 0 <= dj < len(dirs) else None
            if not _is_abs(name) and d is not None:
                name = d + "/" + name
            return name

        file_cache = {}

        def subfile_for(idx):
            sf = file_cache.get(idx)
            if sf is None:
                nm = file_name(idx)
                if nm is None:
                    return None
                sf = start_subfile(nm)
                file_cache[idx] = sf
            return sf

        min_inst = h["min_inst"]
        max_ops = h["max_ops"]
        line_base = h["line_base"]
        line_range = h["line_range"] or 1
        opcode_base = h["opcode_base"]
        std_lens = h["std_lens"]
        default_is_stmt = h["default_is_stmt"]
        asz = h["addr_size"] or cu.addr_size
        lowpc = cu.lowpc
        tomb1 = (1 << (8 * asz)) - 1
        tomb2 = tomb1 - 1
        end = h["end"]
        pos = h["prog"]
        # a special opcode's address advance (one operation per instruction) and line advance
        spec_addr = [0] * 256
        spec_line = [0] * 256
        for op in range(opcode_base, 256):
            adj = op - opcode_base
            spec_addr[op] = (adj // line_range) * min_inst
            spec_line[op] = line_base + adj % line_range
        const_add = (255 - opcode_base) // line_range
        rows = 0

        def record_line_1(sf, ln, stmt, addr):
            if ln == 0:
                pcs = sf.pcs
                last_ln = None
                while pcs:
                    last_ln = sf.lines[-1]
                    if pcs[-1] != addr:
                        break
                    pcs.pop()
                    sf.lines.pop()
                    sf.stmts.pop()
                if last_ln is None or last_ln == 0:
                    return
            sf.pcs.append(addr)
            sf.lines.append(ln)
            sf.stmts.append(stmt)

        while pos < end:
            # --- one sequence: a fresh state machine
            address = 0
            op_index = 0
            line = 1
            is_stmt = default_is_stmt
            discriminator = 0
            last_subfile = None
            last_address = 0
            stmt_at_address = False
            recording = True
            last_line = 0
            nonzero_disc = False
            cur = subfile_for(1)
            end_seq = False

            while pos < end:
                op = data[pos]
                pos += 1
                if op >= opcode_base:                # special opcode: advance, then a row
                    if max_ops == 1:
                        address += spec_addr[op]
                    else:
                        d = (op - opcode_base) // line_range
                        address += ((op_index + d) // max_ops) * min_inst
                        op_index = (op_index + d) % max_ops
                    delta = spec_line[op]
                    line += delta
                    if delta:
                        nonzero_disc = discriminator != 0
                elif op == 1:                        # copy: a row
                    pass
                elif op == 0:
                    ln, pos = uleb(data, pos)
                    ext_end = pos + ln
                    if ln == 0:
                        continue
                    sub = data[pos]
                    pos += 1
                    if sub == 1:                     # end_sequence: record_line(true) -> finish_line
                        end_seq = True
                        recording = True
                        if cur is not None and last_subfile is not None:
                            record_line_1(last_subfile, 0, True, address)
                        pos = ext_end
                        break
                    if sub == 2:                     # set_address
                        sz = ext_end - pos
                        a = uint(data, pos, sz, little) if sz > 0 else 0
                        if (a == 0 and a < lowpc) or a == tomb1 or a == tomb2:
                            recording = False
                        address = a
                        op_index = 0
                    elif sub == 3:                   # define_file (DWARF <= 4)
                        s, p2 = cstr(data, pos)
                        di, p2 = uleb(data, p2)
                        files.append((s.decode("utf-8", "replace"), di))
                    elif sub == 4:                   # set_discriminator
                        discriminator, _p = uleb(data, pos)
                        nonzero_disc = nonzero_disc or discriminator != 0
                    pos = ext_end
                    continue
                else:
                    if op == 5:                      # set_column
                        while data[pos] & 0x80:
                            pos += 1
                        pos += 1
                    elif op == 6:                    # negate_stmt
                        is_stmt = not is_stmt
                    elif op == 3:                    # advance_line
                        a = data[pos]
                        if a < 0x40:
                            pos += 1
                        elif a < 0x80:
                            a -= 0x80
                            pos += 1
                        else:
                            a, pos = sleb(data, pos)
                        line += a
                        if a:
                            nonzero_disc = discriminator != 0
                    elif op == 2:                    # advance_pc
                        a = data[pos]
                        if a < 0x80:
                            pos += 1
                        else:
                            a, pos = uleb(data, pos)
                        if max_ops == 1:
                            address += a * min_inst
                        else:
                            address += ((op_index + a) // max_ops) * min_inst
                            op_index = (op_index + a) % max_ops
                    elif op == 4:                    # set_file
                        file_idx, pos = uleb(data, pos)
                        sf = subfile_for(file_idx)
                        if sf is not None:
                            nonzero_disc = discriminator != 0
                            cur = sf
                        else:
                            cur = None             # rows for an unknown file are not recorded
                    elif op == 8:                    # const_add_pc
                        if max_ops == 1:
                            address += const_add * min_inst
                        else:
                            address += ((op_index + const_add) // max_ops) * min_inst
                            op_index = (op_index + const_add) % max_ops
                    elif op == 9:                    # fixed_advance_pc
                        address += uint(data, pos, 2, little)
                        pos += 2
                        op_index = 0
                    elif op == 7 or op == 10 or op == 11:   # basic_block, prologue/epilogue marks
                        pass
                    elif op == 12:                   # set_isa
                        _c, pos = uleb(data, pos)
                    else:
                        for _ in range(std_lens[op - 1] if op - 1 < len(std_lens) else 0):
                            _c, pos = uleb(data, pos)
                    continue

                # a row: lnp_state_machine::record_line(false)
                if cur is not None and op_index == 0:
                    if cur is last_subfile:          # the usual row: same file as the last one
                        if line != 0 and (line != last_line or not nonzero_disc):
                            if recording:
                                cur.pcs.append(address)
                                cur.lines.append(line)
                                cur.stmts.append(is_stmt)
                                rows += 1
                            last_line = line
                    else:
                        ignore = ((last_address == address and not is_stmt and stmt_at_address)
                                  or line == 0)
                        if not ignore:
                            if recording and last_subfile is not None:
                                record_line_1(last_subfile, 0, True, address)
                            last_subfile = cur
                            if recording:
                                record_line_1(cur, line, is_stmt, address)
                                rows += 1
                            last_line = line
                if last_address != address:
                    stmt_at_address = False
                    last_address = address
                stmt_at_address = stmt_at_address or is_stmt
                discriminator = 0
            if not end_seq and last_subfile is not None:
                end_seq = True
                recording = True
                record_line_1(last_subfile, 0, True, address)
        self.counts["line_programs"] += 1
        self.counts["line_rows"] += rows

        # dwarf_decode_lines: a symtab for every file of the table, in table order
        symtabs = []                       # subfiles owning a symtab, in allocation order
        for k in range(len(files)):
            idx = k if version >= 5 else k + 1
            sf = file_cache.get(idx)
            if sf is None:
                nm = file_name(idx)
                if nm is None:
                    continue
                sf = start_subfile(nm)
                file_cache[idx] = sf
            if sf.symtab is None:
                sf.symtab = sf.name
                symtabs.append(sf)

        # buildsym's watch_main_source_file_lossage: a primary file known under another path
        if not primary.pcs and primary.symtab is None:
            base = primary.name.rsplit("/", 1)[-1]
            matches = [sf for sf in subfiles if sf is not primary
                       and sf.name.rsplit("/", 1)[-1] == base]
            if len(matches) == 1:
                alias = matches[0]
                primary.pcs, primary.lines, primary.stmts = alias.pcs, alias.lines, alias.stmts
                primary.symtab = alias.symtab
                alias.pcs, alias.lines, alias.stmts = [], [], []
                subfiles.remove(alias)
                symtabs = [primary if sf is alias else sf for sf in symtabs]
        for sf in reversed(subfiles):
            if sf.symtab is None:
                sf.symtab = sf.name
                symtabs.append(sf)
        # the primary file's symtab goes first
        order = [primary] + [sf for sf in symtabs if sf is not primary]
        out = []
        for sf in order:
            if not sf.pcs:
                continue
            # stable sort by pc, end markers (line 0) first among equal pcs
            pcs, lns = sf.pcs, sf.lines
            keys = list(zip(pcs, map(bool, lns), range(len(pcs))))
            order = sorted(keys)
            if order != keys:
                stmts = sf.stmts
                sf.pcs = [k[0] for k in order]
                sf.lines = [lns[k[2]] for k in order]
                sf.stmts = [stmts[k[2]] for k in order]
            out.append(sf)
        return out

    # --- functions ---------------------------------------------------------------------------------

    def file_name(self, cu, index):
        """The name GDB gives line-table file ``index`` of the unit (as DW_AT_decl_file /
        DW_AT_call_file number it): the unit's own name for its primary file."""
        reader = _reader(cu)
        if reader is not None and reader is not self:
            return reader.file_name(cu, index)
        h = cu._line_head
        if h is None:
            data = self._line_data(cu.stmt_list) if cu.stmt_list is not None else None
            if data is None:
                return None
            try:
                h = cu._line_head = self._line_header(data, cu.stmt_list, cu)
            except (IndexError, struct.error, ValueError, DwarfError, UnicodeError):
                return None
        version = h["version"]
        files, dirs = h["files"], h["dirs"]
        i = index if version >= 5 else index - 1
        if i < 0 or i >= len(files):
            return None
        name, di = files[i]
        dj = di if version >= 5 else di - 1
        d = dirs[dj] if 0 <= dj < len(dirs) else None
        if not _is_abs(name) and d is not None:
            name = d + "/" + name
        prim = cu.name
        if prim is not None:
            cand = prim
            if _is_abs(name) and not _is_abs(prim) and cu.comp_dir:
                cand = _path_join(cu.comp_dir, prim)
            if cand == name:
                return prim
        return name
