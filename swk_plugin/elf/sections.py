"""ELF sections' bytes, inflated when compressed.

Debug sections may be compressed two ways: SHF_COMPRESSED with an Elf_Chdr
(zlib or zstd; ``objcopy --compress-debug-sections``, ``gcc -gz``) and GNU's
older ``.zdebug_*`` sections (a "ZLIB" header).  ``inflate_section`` serves
every section read (ElfModule.section(...).data, the CFI readers);
``DebugSections`` serves the DWARF readers and inflates .debug_info only as
far as the units asked for have needed; ``prefetch`` inflates sections a walk will
need in a background thread while the walk goes on.  A section inflated whole is kept on
disk by build-id for the next process (diskcache.py).
"""
import os
import struct
import threading
import zlib

from ..errors import BadFileError
from . import ahead, diskcache

SHF_COMPRESSED = 0x800
#: Inflated bytes below which prefetch() starts no thread.
PREFETCH_MIN = 1 << 20
ELFCOMPRESS_ZLIB, ELFCOMPRESS_ZSTD = 1, 2


def inflate_section(raw, little=True, is64=True):
    """The bytes of an SHF_COMPRESSED section given its raw contents (Elf_Chdr first);
    BadFileError when it cannot be inflated."""
    try:
        data = _inflate(raw, little, is64)
    except (zlib.error, struct.error, ValueError) as exc:
        raise BadFileError(f"cannot inflate a compressed section ({exc})") from None
    if data is None:
        raise BadFileError("compressed section in a format swk cannot inflate (zstd without a zstd module)")
    return data


def inflate_gnu(raw):
    """The bytes of a GNU .zdebug_* section ("ZLIB", 8-byte big-endian size, zlib data)."""
    if raw[:4] != b"ZLIB":
        return raw
    try:
        return zlib.decompress(raw[12:])
    except zlib.error as exc:
        raise BadFileError(f"cannot inflate a .zdebug section ({exc})") from None


def _inflate(raw, little, is64):
    e = "<" if little else ">"
    if is64:
        ch_type, _res, size, _align = struct.unpack_from(e + "IIQQ", raw, 0)
        body = raw[24:]
    else:
        ch_type, size, _align = struct.unpack_from(e + "III", raw, 0)
        body = raw[12:]
    if ch_type == ELFCOMPRESS_ZLIB:
        return zlib.decompress(body)
    if ch_type == ELFCOMPRESS_ZSTD:
        try:
            import zstandard  # optional: not a dependency
            return zstandard.ZstdDecompressor().decompress(body, max_output_size=size)
        except ImportError:
            try:
                from compression import zstd  # Python >= 3.14
                return zstd.decompress(body)
            except ImportError:
                return None
    return None


class Inflating:
    """A zlib-compressed section inflated as far as its readers have needed so far."""
    __slots__ = ("_d", "_tail", "data", "size", "done")

    def __init__(self, raw, skip, size):
        self._d = zlib.decompressobj()
        self._tail = memoryview(raw)[skip:]
        self.data = b""
        self.size = size          # what the header promises (a hint only)
        self.done = False

    def upto(self, end):
        data = self.data
        if end <= len(data) or self.done:
            return data
        want = max(end, 2 * len(data), 1 << 16)
        parts = [data]
        have = len(data)
        d = self._d
        while have < want:
            out = d.decompress(self._tail, want - have)
            self._tail = d.unconsumed_tail
            if out:
                parts.append(out)
                have += len(out)
            if d.eof or not self._tail:
                self.done = True
                break
        self.data = b"".join(parts)
        return self.data

    def whole(self):
        data = self.upto(1 << 62)
        if not self._d.eof:
            raise zlib.error("truncated compressed section")
        return data


class DebugSections:
    """A module's debug sections, inflated on first use (and .debug_info only as far as
    the units asked for)."""

    def __init__(self, module):
        self.module = module
        self.little = module.little_endian
        self.is64 = module.elfclass == 64
        self._hdrs = {}
        for name, sh_type, flags, _addr, size, offset, _link, _entsize in module.section_headers():
            if name and name not in self._hdrs:
                self._hdrs[name] = (sh_type, flags, offset, size)
        self._cache = {}
        self._lazy = {}
        self._prefetching = False
        self._disk_tried = set()
        self._real = None
        #: sections taken from the on-disk cache, and sections written to it (for -v and tests)
        self.from_disk, self.to_disk = [], []

    def prefetch(self, names, max_size=64 << 20):
        """Inflate the zlib-compressed ones of ``names`` (up to ``max_size`` bytes each) whole,
        in that order, in a background thread: each in one zlib call, which holds no lock
        and not the GIL, so the readers go on meanwhile (inflating what they need
        themselves until it is done).  The file is read here, in the calling thread."""
        if self._prefetching:
            return
        self._prefetching = True
        todo = []
        for name in names:
            if name in self._cache or self._disk(name) or self._ahead_key(name) is not None:
                continue
            job = self._compressed(name)
            if job is not None and job[2] <= max_size:
                todo.append((name, *job))
        # a thread costs its start (a switch of the GIL: milliseconds inside a debugger), more
        # than inflating a few small sections when they are read
        if sum(job[3] for job in todo) >= PREFETCH_MIN:
            threading.Thread(target=self._inflate_all, args=(todo,), daemon=True,
                             name="swk-inflate").start()

    def _inflate_all(self, todo):
        for name, raw, skip, size in todo:
            if name in self._cache:
                continue
            try:
                data = zlib.decompress(memoryview(raw)[skip:], bufsize=max(size, 1))
            except (zlib.error, ValueError, MemoryError):
                continue
            self._cache.setdefault(name, data)    # readers take it from here on
            self._lazy.pop(name, None)
            self._keep(name, data)

    # --- the on-disk cache (diskcache.py) ------------------------------------------------------
    def _disk_key(self, name):
        """(build-id, section, file offset, compressed size, inflated size) of a compressed
        section, or None (not compressed with zlib, no build-id, unreadable)."""
        try:
            build_id = self.module.build_id
            if not build_id:
                return None
            h = self._hdrs.get(name)
            if h is not None and h[0] != "SHT_NOBITS" and h[3] > 0:
                hsz = 24 if self.is64 else 12
                if not h[1] & SHF_COMPRESSED or h[3] <= hsz:
                    return None
                raw = self.module.read_file(h[2], hsz)
                e = "<" if self.little else ">"
                if self.is64:
                    ch_type, _res, size, _align = struct.unpack_from(e + "IIQQ", raw, 0)
                else:
                    ch_type, size, _align = struct.unpack_from(e + "III", raw, 0)
                return (build_id, name, h[2], h[3], size) if ch_type == ELFCOMPRESS_ZLIB else None
            if name.startswith(".debug_"):
                zname = ".zdebug_" + name[7:]
                z = self._hdrs.get(zname)
                if z is not None and z[0] != "SHT_NOBITS" and z[3] > 12:
                    raw = self.module.read_file(z[2], 12)
                    if raw[:4] == b"ZLIB":
                        return build_id, zname, z[2], z[3], int.from_bytes(raw[4:12], "big")
        except (BadFileError, struct.error, ValueError, OSError, AttributeError):
            return None
        return None

    def _disk(self, name):
        """Whether the section is now in hand from the on-disk cache (looked for once)."""
        if name in self._cache:
            return True
        if name in self._disk_tried:
            return False
        self._disk_tried.add(name)
        key = self._disk_key(name)
        data = diskcache.load(*key) if key is not None else None
        if data is None:
            return False
        self._cache[name] = data
        self._lazy.pop(name, None)
        self.from_disk.append(name)
        return True

    def _ahead_key(self, name):
        """(real path, file offset, compressed size) of a section elf/ahead.py is inflating
        (or has inflated) for this file, else None."""
        h = self._hdrs.get(name)
        if h is None or not h[1] & SHF_COMPRESSED:
            return None
        path = self._real
        if path is None:
            path = self._real = os.path.realpath(self.module.path) if self.module.path else ""
        key = (path, h[2], h[3])
        return key if ahead.pending(*key) else None

    def _ahead(self, name):
        """Whether the section is now in hand from the inflating begun at start-up."""
        key = self._ahead_key(name)
        data = ahead.take(*key) if key is not None else None
        if data is None:
            return False
        self._cache[name] = data
        self._lazy.pop(name, None)
        self._keep(name, data)
        return True

    def _keep(self, name, data):
        """Write a section just inflated whole to the on-disk cache."""
        if data is None or len(data) < diskcache.MIN_SIZE:
            return
        key = self._disk_key(name)
        if key is not None and key[4] == len(data) and diskcache.store(key[0], key[1], key[2], key[3], data):
            self.to_disk.append(name)

    def _compressed(self, name):
        """(raw bytes, where its zlib stream starts, its size) of a zlib-compressed section,
        else None."""
        h = self._hdrs.get(name)
        try:
            if h is not None and h[0] != "SHT_NOBITS" and h[3] > 0:
                hsz = 24 if self.is64 else 12
                if not h[1] & SHF_COMPRESSED or h[3] <= hsz:
                    return None
                raw = self.module.read_file(h[2], h[3])
                e = "<" if self.little else ">"
                if self.is64:
                    ch_type, _res, size, _align = struct.unpack_from(e + "IIQQ", raw, 0)
                else:
                    ch_type, size, _align = struct.unpack_from(e + "III", raw, 0)
                return (raw, hsz, size) if ch_type == ELFCOMPRESS_ZLIB else None
            if name.startswith(".debug_"):
                z = self._hdrs.get(".zdebug_" + name[7:])
                if z is not None and z[0] != "SHT_NOBITS" and z[3] > 12:
                    raw = self.module.read_file(z[2], z[3])
                    if raw[:4] == b"ZLIB":
                        return raw, 12, int.from_bytes(raw[4:12], "big")
        except (BadFileError, struct.error, ValueError, OSError):
            return None
        return None

    def has(self, name):
        h = self._hdrs.get(name)
        if h is not None and h[0] != "SHT_NOBITS" and h[3] > 0:
            return True
        z = self._hdrs.get(".zdebug_" + name[7:]) if name.startswith(".debug_") else None
        return z is not None and z[0] != "SHT_NOBITS" and z[3] > 0

    def get(self, name):
        """The whole section (None if absent or unreadable)."""
        if name in self._cache or self._disk(name) or self._ahead(name):
            return self._cache[name]
        lazy = self._lazy.pop(name, None)
        data = None
        try:
            data = lazy.whole() if lazy is not None else self._load(name)
        except (BadFileError, zlib.error, ValueError, OSError, struct.error):
            data = None
        self._cache[name] = data
        self._keep(name, data)
        return data

    def upto(self, name, end):
        """The section's first ``end`` bytes at least (all of it if shorter), inflating a
        zlib-compressed section only that far: one unit of libc's 6 MB .debug_info costs
        a fraction of inflating it all (~30 ms)."""
        if name in self._cache or self._disk(name) or self._ahead(name):
            return self._cache[name]
        lazy = self._lazy.get(name)
        if lazy is None:
            lazy = self._lazy_for(name)
            if lazy is None:
                return self.get(name)
            if lazy.size < PREFETCH_MIN:      # small: inflated whole at once, and so kept on disk
                self._lazy[name] = lazy
                return self.get(name)
            self._lazy[name] = lazy
        try:
            data = lazy.upto(end)
            if lazy.done and self._lazy.pop(name, None) is not None:   # inflated whole by now
                self._cache[name] = lazy.whole()
                self._keep(name, self._cache[name])
                return self._cache[name]
            return data
        except (zlib.error, ValueError):
            self._lazy.pop(name, None)
            self._cache[name] = None
            return None

    def view(self, name):
        """What has been inflated of the section so far (readers of a unit that upto()
        brought in); the whole section when nothing partial is under way, or once the
        prefetching thread has inflated it."""
        if name in self._cache:
            return self._cache[name]
        lazy = self._lazy.get(name)
        if lazy is not None:
            return lazy.data
        return self.get(name)

    def _lazy_for(self, name):
        h = self._hdrs.get(name)
        try:
            if h is not None and h[0] != "SHT_NOBITS" and h[3] > 0:
                if not h[1] & SHF_COMPRESSED:
                    return None
                e = "<" if self.little else ">"
                hsz = 24 if self.is64 else 12
                if h[3] <= hsz:
                    return None
                raw = self.module.read_file(h[2], h[3])
                if self.is64:
                    ch_type, _res, size, _align = struct.unpack_from(e + "IIQQ", raw, 0)
                else:
                    ch_type, size, _align = struct.unpack_from(e + "III", raw, 0)
                return Inflating(raw, hsz, size) if ch_type == 1 else None
            if name.startswith(".debug_"):
                z = self._hdrs.get(".zdebug_" + name[7:])
                if z is not None and z[0] != "SHT_NOBITS" and z[3] > 12:
                    raw = self.module.read_file(z[2], z[3])
                    if raw[:4] == b"ZLIB":
                        return Inflating(raw, 12, int.from_bytes(raw[4:12], "big"))
        except (BadFileError, struct.error, ValueError, OSError):
            return None
        return None

    def _load(self, name):
        h = self._hdrs.get(name)
        if h is not None and h[0] != "SHT_NOBITS" and h[3] > 0:
            raw = self.module.read_file(h[2], h[3])
            if h[1] & SHF_COMPRESSED:
                return self._inflate(raw)
            return raw
        if name.startswith(".debug_"):
            z = self._hdrs.get(".zdebug_" + name[7:])
            if z is not None and z[0] != "SHT_NOBITS" and z[3] > 12:
                raw = self.module.read_file(z[2], z[3])
                if raw[:4] == b"ZLIB":
                    return zlib.decompress(raw[12:])
                return raw
        return None

    def _inflate(self, raw):
        return _inflate(raw, self.little, self.is64)


def debug_sections(module):
    """The module's DebugSections, made once (its inflated sections are shared)."""
    return module.cache.value("debug-sections", lambda: DebugSections(module))
