"""jitdump files (perf's tools/perf/Documentation/jitdump-specification.txt): the binary log a
JIT appends a record to for each piece of code it makes (Node's --perf-prof), with the code's
name and, with Node's --perf-prof-unwinding-info, its .eh_frame.  The runtime maps the file
into its own memory so that perf sees it (the "mmap marker"): swk finds it the same way, among
the process's mappings, live or in a core.

Records: a header (magic "JiTD", version, total_size, elf_mach, pad1, pid, timestamp, flags),
then records of (id, total_size, timestamp) and their bodies: JIT_CODE_LOAD (pid, tid, vma,
code_addr, code_size, code_index, name, code), JIT_CODE_MOVE (pid, tid, vma, old_code_addr,
new_code_addr, code_size, code_index), JIT_CODE_DEBUG_INFO, JIT_CODE_CLOSE and
JIT_CODE_UNWINDING_INFO (unwinding_size, eh_frame_hdr_size, mapped_size, then .eh_frame and
.eh_frame_hdr), which belongs to the JIT_CODE_LOAD after it.  As perf inject lays such code out
(its genelf.c), the .eh_frame follows the code at the next 8-byte boundary, and the header it.

A code load with unwinding data is given to the CFI stepper as a small ELF image (elfimage.py)
holding its symbol and its .eh_frame at their addresses, made the first time a walk needs it.
"""
import bisect
import struct

from ..procstate import Library
from .appended import AppendedFiles
from .elfimage import code_image
from .perfmap import paint
from ..cache import LazyPattern

JITHEADER_MAGIC = 0x4A695444
JIT_CODE_LOAD, JIT_CODE_MOVE, JIT_CODE_DEBUG_INFO, JIT_CODE_CLOSE, JIT_CODE_UNWINDING_INFO = range(5)
#: The source a jitdump's names are reported with (JSON's "name_source").
SOURCE = "jitdump"
#: How a runtime names the file it maps (perf's jit_detect: jit-PID.dump).
FILE_NAME = LazyPattern(r"(?:^|/)jit-\d+\.dump$")
MAX_RECORD = 256 << 20


class JitCodeLoad:
    """One piece of code (a JIT_CODE_LOAD, or where a JIT_CODE_MOVE put it): ``name`` at
    [start, start + size), its unwinding data (eh_frame, eh_frame_hdr) or None; ``line`` is its
    place among the records (a later one wins where code overlaps)."""
    __slots__ = ("name", "start", "size", "code_index", "unwinding", "line", "_module", "_library")

    def __init__(self, name, start, size, code_index, unwinding, line):
        self.name, self.start, self.size, self.code_index = name, start, size, code_index
        self.unwinding, self.line = unwinding, line
        self._module = None
        self._library = None

    @property
    def end(self):
        return self.start + self.size

    def module(self, machine, elfclass, byteorder):
        """An ElfModule of this code's symbol and CFI at their addresses (None without CFI)."""
        if self._module is None and self.unwinding is not None:
            eh_frame, hdr = self.unwinding
            self._module = code_image(self.name, self.start, self.size, eh_frame, hdr, machine, elfclass,
                                      byteorder, f"[jitdump code 0x{self.start:x}]")
        return self._module

    def library(self, arch):
        """A Library standing for this code's ElfModule (base 0), or None without CFI."""
        if self._library is None and self.unwinding is not None:
            mod = self.module(arch.elf_machine, 8 * arch.ptr_size, arch.byteorder)
            label = mod.name
            self._library = Library(label, 0, lambda _lib: mod, name=label, ranges=[(self.start, self.end)])
        return self._library

    def __repr__(self):
        return f"<JitCodeLoad {self.name!r} 0x{self.start:x}+0x{self.size:x}{' cfi' if self.unwinding else ''}>"


class JitDump:
    """One jitdump file, parsed as far as it is complete: ``lookup(addr)`` is the code there."""

    def __init__(self, path):
        self.path = path
        self.loads = []
        self.by_index = {}
        self.offset = 0          # bytes read so far (to the last complete record)
        self.order = "<"
        self.machine = 0
        self.records = 0
        self._pending = None     # a JIT_CODE_UNWINDING_INFO waiting for its code
        self._spans = self._starts = None

    def read_more(self, data):
        """Parse the records in ``data``, the file's bytes from ``offset``; a record not yet
        complete waits for the next read."""
        pos = 0
        if self.offset == 0:
            if len(data) < 40:
                return
            magic = struct.unpack_from("<I", data, 0)[0]
            if magic != JITHEADER_MAGIC:
                if struct.unpack_from(">I", data, 0)[0] != JITHEADER_MAGIC:
                    raise ValueError(f"{self.path}: not a jitdump file")
                self.order = ">"
            _magic, _version, total, self.machine = struct.unpack_from(self.order + "IIII", data, 0)
            pos = max(total, 40)
        o = self.order
        while pos + 16 <= len(data):
            rid, size = struct.unpack_from(o + "II", data, pos)
            if size < 16 or size > MAX_RECORD:
                break                       # damaged: what came before stands
            if pos + size > len(data):
                break
            self._record(rid, data, pos + 16, pos + size)
            pos += size
        self.offset += pos
        self._spans = None

    def _record(self, rid, data, lo, hi):
        o = self.order
        self.records += 1
        if rid == JIT_CODE_LOAD and hi - lo >= 40:
            _pid, _tid, _vma, addr, size, index = struct.unpack_from(o + "IIQQQQ", data, lo)
            end = data.find(b"\0", lo + 40, hi)
            name = data[lo + 40:end if end >= 0 else hi].decode("utf-8", "replace")
            load = JitCodeLoad(name, addr, size, index, self._pending, self.records)
            self._pending = None
            self._add(load)
        elif rid == JIT_CODE_MOVE and hi - lo >= 48:
            _pid, _tid, _vma, _old, new, size, index = struct.unpack_from(o + "IIQQQQQ", data, lo)
            was = self.by_index.get(index)
            if was is not None:
                self._add(JitCodeLoad(was.name, new, size, index, None, self.records))
        elif rid == JIT_CODE_UNWINDING_INFO and hi - lo >= 24:
            usize, hsize, _mapped = struct.unpack_from(o + "QQQ", data, lo)
            body = data[lo + 24:lo + 24 + usize]
            if usize > hsize and len(body) == usize:
                self._pending = (body[:usize - hsize], body[usize - hsize:])
            else:
                self._pending = None        # a header alone: no CFI for that code

    def _add(self, load):
        if load.size:
            self.loads.append(load)
            self.by_index[load.code_index] = load

    def lookup(self, addr):
        """The JitCodeLoad at ``addr`` (the latest where several cover it), or None."""
        if self._spans is None:
            self._spans = paint(self.loads)
            self._starts = [s[0] for s in self._spans]
        i = bisect.bisect_right(self._starts, addr) - 1
        if i >= 0 and addr < self._spans[i][1]:
            return self._spans[i][2]
        return None


def _read_jitdump(path, previous):
    dump = previous if previous is not None else JitDump(path)
    with open(path, "rb") as f:
        magic = f.read(4)
        if dump.offset == 0 and len(magic) == 4 and JITHEADER_MAGIC not in struct.unpack("<I", magic) + \
                struct.unpack(">I", magic):
            raise ValueError(f"{path}: not a jitdump file")     # not read further (--jitdump CORE)
        f.seek(dump.offset)
        dump.read_more(f.read())
    return dump


#: A jitdump is only appended to: a stop reads the records written since the last.
_DUMPS = AppendedFiles(16, _read_jitdump)


def open_jitdump(path):
    """The JitDump at ``path`` as the file is now, or None."""
    return _DUMPS.open(path)


def marker_path(ps):
    """The jitdump file the process maps (its marker for perf), or None."""
    for region in ps.memory_regions() or ():
        if region.name and FILE_NAME.search(region.name):
            return region.name
    return None


def current_jitdump(ps):
    """The JitDump of the file the process maps, as it is at this stop, or None."""
    def build():
        path = marker_path(ps)
        return open_jitdump(path) if path is not None else None
    return ps.cache.value("jitdump", build)
