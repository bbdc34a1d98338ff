"""Compressed DWARF inflating from a process's first milliseconds, before swk is imported.

A first walk of a program blocked in libc waits for libc6-dbg's .debug_info (2.3 MB of zlib,
5.8 MB inflated: 35-55 ms of one processor), and zlib cannot start in the middle of a stream.
`swk bt --pid` can name the files it will read before it imports anything else
(linux/inflateahead.py); this module, with nothing but the standard library's built-in parts,
reads their section headers, finds each one's debug file by build-id, and starts a thread a
file inflating its zlib-compressed DWARF, about 15 ms sooner than swk's own readers could.

Nothing here decides what a reader reads: elf/sections.py asks ``take(path, offset, size)`` for
the bytes of a section it was about to inflate itself, and gets them only where a job was
started for that very file, file offset and compressed size and inflated to the size its header
promised; it waits for a job under way (started long before the reader came, it is further on
than a reader starting at the section's first byte).  A file that cannot be read, or anything
unexpected, starts no job: the readers then do what they always did.
"""
import os
import struct
import zlib
import _thread

from .cachepath import kept_size

#: The sections a walk's DWARF readers read (dwarf/lines.py's prefetch list), in the order a
#: first walk needs them: a unit's abbreviations with its DIEs, then names, ranges, lines and
#: the arguments' locations (a reader waits for its section's turn).
SECTIONS = (b".debug_abbrev", b".debug_info", b".debug_str", b".debug_line_str", b".debug_str_offsets",
            b".debug_addr", b".debug_rnglists", b".debug_ranges", b".debug_line", b".debug_loclists",
            b".debug_loc")
DEBUG_DIR = "/usr/lib/debug"
SHF_COMPRESSED = 0x800
SHT_NOTE, SHT_NOBITS = 7, 8
#: Sections below this are left to the readers (inflating them costs less than waiting), and
#: sections inflating to more than MAX_SIZE too (a reader inflates one only as far as it needs).
MIN_RAW = 16 << 10
MAX_SIZE = 64 << 20
#: At most this much inflated ahead in all: a process mapping many libraries with their debug
#: packages installed would otherwise hold all their DWARF, most of it never read.
TOTAL_MAX = 256 << 20

_JOBS = {}        # (real path, file offset, compressed size) -> _Job
_OWNER = [0]      # the process whose thread inflates them (a forked worker has no such thread)
_STARTED = [0]    # bytes to be inflated by the jobs started so far


class _Job:
    """One section inflating: ``done`` is released when ``data`` is set (bytes, or None)."""
    __slots__ = ("raw", "skip", "size", "data", "done")

    def __init__(self, raw, skip, size):
        self.raw, self.skip, self.size = raw, skip, size
        self.data = None
        self.done = _thread.allocate_lock()
        self.done.acquire()


def start(paths):
    """Start inflating the compressed DWARF of ``paths`` (or of their debug files), a thread
    for each file (a walk that needs libc first does not wait behind the program's own); a
    path that is not an ELF file, or has none, is passed over."""
    _OWNER[0] = os.getpid()
    for path in paths:
        try:
            jobs = _jobs_of(path)
        except (OSError, struct.error, ValueError, IndexError):
            continue
        if not jobs:
            continue
        try:
            _thread.start_new_thread(_run, (jobs,))
        except RuntimeError:   # no thread: nothing will be inflated, so nothing is waited for
            for key in [k for k, job in _JOBS.items() if job in jobs]:
                del _JOBS[key]
            return


def take(path, offset, size):
    """The inflated bytes of the section at file ``offset`` of ``path`` (``size`` bytes
    compressed), waiting for them if they are being inflated; None where no job was
    started for it or it failed."""
    job = _JOBS.pop((path, offset, size), None)
    if job is None:
        return None
    # a forked worker has the lock as it was at the fork, and no thread to release it
    if not job.done.acquire(os.getpid() == _OWNER[0]):
        return None
    return job.data


def pending(path, offset, size):
    """Whether a job was started for that section and not yet taken."""
    return (path, offset, size) in _JOBS


def _run(jobs):
    for job in jobs:
        try:
            data = zlib.decompress(memoryview(job.raw)[job.skip:], bufsize=max(job.size, 1))
            job.data = data if len(data) == job.size else None
        except (zlib.error, ValueError, MemoryError):
            job.data = None
        finally:
            job.raw = None
            job.done.release()


def _jobs_of(path):
    """Jobs for the file's own compressed DWARF, else for its build-id debug file's."""
    real = os.path.realpath(path)
    with open(real, "rb") as f:
        fd = f.fileno()
        shdrs, fmt = _section_headers(fd)
        build_id = _build_id(fd, shdrs, fmt)
        hexid = build_id.hex() if build_id else None
        if _has_dwarf(shdrs):
            return _compressed(real, fd, shdrs, fmt, hexid)
    if not hexid or len(hexid) < 4:
        return []
    debug = os.path.join(DEBUG_DIR, ".build-id", hexid[:2], hexid[2:] + ".debug")
    try:
        with open(debug, "rb") as f:
            fd = f.fileno()
            shdrs, fmt = _section_headers(fd)
            return _compressed(os.path.realpath(debug), fd, shdrs, fmt, hexid)
    except (OSError, struct.error, ValueError, IndexError):
        return []


def _has_dwarf(shdrs):
    h = shdrs.get(b".debug_info")
    return h is not None and h[0] != SHT_NOBITS and h[3] > 0


def _section_headers(fd):
    """({name: (type, flags, offset, size)}, (byte-order character, is64))."""
    ident = os.pread(fd, 64, 0)
    if ident[:4] != b"\x7fELF" or ident[4] not in (1, 2) or ident[5] not in (1, 2):
        raise ValueError("not ELF")
    is64, e = ident[4] == 2, "<" if ident[5] == 1 else ">"
    if is64:
        shoff, = struct.unpack_from(e + "Q", ident, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", ident, 0x3A)
        rec = e + "IIQQQQIIQQ"
    else:
        shoff, = struct.unpack_from(e + "I", ident, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", ident, 0x2E)
        rec = e + "IIIIIIIIII"
    if not shoff or not shnum or shentsize < struct.calcsize(rec) or shnum > 4096:
        raise ValueError("no section headers")
    table = os.pread(fd, shentsize * shnum, shoff)
    rows = [struct.unpack_from(rec, table, i * shentsize) for i in range(shnum)]
    # (sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size, ...)
    strtab = rows[shstrndx]
    names = os.pread(fd, min(strtab[5], 1 << 20), strtab[4])
    out = {}
    for r in rows:
        end = names.find(b"\0", r[0])
        out.setdefault(names[r[0]:end if end >= 0 else len(names)], (r[1], r[2], r[4], r[5]))
    return out, (e, is64)


def _compressed(real, fd, shdrs, fmt, build_id):
    """Jobs for the zlib-compressed (SHF_COMPRESSED) DWARF sections of an open file that the
    disk cache does not keep inflated already."""
    e, is64 = fmt
    hsz = 24 if is64 else 12
    jobs = []
    for name in SECTIONS:
        h = shdrs.get(name)
        if h is None or h[0] == SHT_NOBITS or not h[1] & SHF_COMPRESSED or h[3] < MIN_RAW:
            continue
        head = os.pread(fd, hsz, h[2])
        if is64:
            ch_type, _res, size, _align = struct.unpack_from(e + "IIQQ", head, 0)
        else:
            ch_type, size, _align = struct.unpack_from(e + "III", head, 0)
        if ch_type != 1 or size > MAX_SIZE or (real, h[2], h[3]) in _JOBS:
            continue
        if _STARTED[0] + size > TOTAL_MAX:
            break
        if kept_size(build_id, name.decode(), h[2], h[3], size) == size:
            continue          # the readers map it from the disk cache
        raw = os.pread(fd, h[3], h[2])
        if len(raw) != h[3]:
            continue
        job = _JOBS[(real, h[2], h[3])] = _Job(raw, hsz, size)
        jobs.append(job)
        _STARTED[0] += size
    return jobs


def _build_id(fd, shdrs, fmt):
    """The file's GNU build-id note, or None."""
    h = shdrs.get(b".note.gnu.build-id")
    if h is None or h[0] != SHT_NOTE or h[3] > 4096:
        return None
    data = os.pread(fd, h[3], h[2])
    pos = 0
    while pos + 12 <= len(data):
        namesz, descsz, ntype = struct.unpack_from(fmt[0] + "III", data, pos)
        name_end = pos + 12 + ((namesz + 3) & ~3)
        if ntype == 3 and data[pos + 12:pos + 12 + namesz].rstrip(b"\0") == b"GNU":
            return data[name_end:name_end + descsz]
        pos = name_end + ((descsz + 3) & ~3)
    return None
