"""Perf maps: the text file ``/tmp/perf-PID.map`` a JIT appends a line to for each piece of
code it makes (perf's tools/perf/Documentation/jit-interface.txt): ``START SIZE name``,
START and SIZE in hex (with or without 0x), the name the rest of the line.

A map only grows, and code is moved or freed and its addresses reused, so a later line
wins over an earlier one where their ranges overlap (what perf itself shows for a sample
taken after the later line was written).  A map is shared while the file is unchanged
(path, mtime, size), like an ElfModule; a map that grew is read from where it was left.
"""
import bisect
import heapq
import os

from .appended import AppendedFiles

#: The source a perf map's names are reported with (JSON's "name_source").
SOURCE = "perf-map"


class PerfMapEntry:
    """One line: [start, start + size) is ``name``; ``line`` its place in the file (later wins)."""
    __slots__ = ("start", "size", "name", "line")

    def __init__(self, start, size, name, line):
        self.start, self.size, self.name, self.line = start, size, name, line

    @property
    def end(self):
        return self.start + self.size

    def __repr__(self):
        return f"<PerfMapEntry {self.name!r} 0x{self.start:x}+0x{self.size:x}>"


def parse_lines(text, first_line=0):
    """PerfMapEntry for each well-formed line of ``text`` (others are skipped: a runtime
    killed mid-write leaves half a line)."""
    out = []
    for i, line in enumerate(text.splitlines(), first_line):
        parts = line.split(None, 2)
        if len(parts) < 3:
            continue
        try:
            start, size = int(parts[0], 16), int(parts[1], 16)
        except ValueError:
            continue
        if size > 0:
            out.append(PerfMapEntry(start, size, parts[2].rstrip(), i))
    return out


def paint(entries):
    """Disjoint (start, end, entry) spans, sorted: at each address the latest entry covering
    it.  A sweep over the entries' edges with the latest open entry on top of a heap."""
    edges = sorted({e.start for e in entries} | {e.end for e in entries})
    by_start = sorted(entries, key=lambda e: e.start)
    spans, heap, k = [], [], 0
    for lo, hi in zip(edges, edges[1:]):
        while k < len(by_start) and by_start[k].start <= lo:
            heapq.heappush(heap, (-by_start[k].line, by_start[k]))
            k += 1
        while heap and heap[0][1].end <= lo:
            heapq.heappop(heap)
        if not heap:
            continue
        top = heap[0][1]
        if spans and spans[-1][2] is top and spans[-1][1] == lo:
            spans[-1] = (spans[-1][0], hi, top)
        else:
            spans.append((lo, hi, top))
    return spans


class PerfMap:
    """One perf map file, parsed: ``lookup(addr)`` is the entry that names ``addr``."""

    def __init__(self, path, entries=(), offset=0, lines=0, tail=b""):
        self.path = path
        self.entries = list(entries)
        self.offset = offset            # bytes read so far (to the last complete line)
        self.lines = lines
        self.tail = tail                # the bytes before ``offset``: the file is still the one read
        self._spans = None
        self._starts = None

    @classmethod
    def read(cls, path, previous=None):
        """The map at ``path``; from ``previous``'s end when the file only grew since."""
        with open(path, "rb") as f:
            if previous is not None:
                f.seek(previous.offset - len(previous.tail))
                if f.read(len(previous.tail)) != previous.tail:     # rewritten (jcmd's maps are)
                    previous = None
                    f.seek(0)
            data = f.read()
        done = data.rfind(b"\n") + 1        # a line still being written waits for the next read
        base = previous if previous is not None else cls(path)
        text = data[:done].decode("utf-8", "replace")
        new = parse_lines(text, base.lines)
        tail = (base.tail + data[:done])[-64:]
        return cls(path, base.entries + new, base.offset + done, base.lines + text.count("\n"), tail)

    def _index(self):
        if self._spans is None:
            self._spans = paint(self.entries)
            self._starts = [s[0] for s in self._spans]
        return self._spans, self._starts

    def lookup(self, addr):
        """The PerfMapEntry covering ``addr`` (the latest where several do), or None."""
        spans, starts = self._index()
        i = bisect.bisect_right(starts, addr) - 1
        if i >= 0 and addr < spans[i][1]:
            return spans[i][2]
        return None

    def __len__(self):
        return len(self.entries)


#: A perf map is only appended to: a stop reads the lines written since the last.
_MAPS = AppendedFiles(64, PerfMap.read)


def open_perf_map(path):
    """The PerfMap at ``path`` as the file is now, or None when there is none."""
    return _MAPS.open(path)


def default_path(pid):
    """Where a runtime writes process ``pid``'s map (perf's convention: /tmp)."""
    return f"/tmp/perf-{pid}.map" if pid else None


def stale(path, pid):
    """Whether the map at ``path`` was last written before the process now called ``pid``
    started: a JIT's map stays in /tmp after it exits, and its PID comes round again to a
    process that wrote none (its names would be another program's).  False where either
    time cannot be read (a core's process is gone: its map is taken as it is)."""
    try:
        mtime = os.stat(path).st_mtime
        with open(f"/proc/{pid}/stat") as f:
            start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])    # field 22, starttime
        with open("/proc/stat") as f:
            boot = next(int(line.split()[1]) for line in f if line.startswith("btime "))
        started = boot + start_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return False
    return mtime < started - 2          # /proc/stat's boot time is in whole seconds
