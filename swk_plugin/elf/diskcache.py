"""What swk learnt from a file, kept on disk by its build-id for the next process.

Two kinds of thing, in one folder per build-id:

* inflated debug sections: distributions compress their debug files (libc6-dbg's .debug_info
  is 2.3 MB of zlib that inflates to 5.8), zlib cannot start in the middle of a stream, and a
  first walk spends most of its time inflating.  A section inflated whole is written once; a
  later reader of the same file (build-id, section offset and both sizes) reads the bytes
  instead.  GDB keeps its own index cache the same way (`set index-cache on`).
* small facts derived from a file's DWARF at some cost (CPython's struct layout from
  python3.11-dbg: 0.6 s), as JSON, named by what they are and the version of the code that
  derived them; and blobs (what a DWARF unit yields: dwarf/unitcache.py), checked by a CRC-32.

Where: $SWK_CACHE_DIR, else $XDG_CACHE_HOME/swk, else ~/.cache/swk; SWK_CACHE_DIR=off turns it
off.  At most MAX_BYTES in all: the files used least recently go first.  Files are written
whole under a temporary name and renamed, so a reader never sees half of one; a section of the
wrong size or a fact that does not parse is not used (and is removed).  Sections under MIN_SIZE
are not kept: inflating them costs less than a file.  Nothing here ever raises.
"""
import mmap
import os
import time
from ..cache import LazyPattern
from .cachepath import cache_dir, cache_path, section_leaf as _section_leaf

MAX_BYTES = 2 << 30
MIN_SIZE = 16 << 10
#: prune() runs at a process's first write, and again only after this much more was written:
#: a walk may keep a dozen small blobs, and a prune reads the whole cache's directory.
PRUNE_EVERY = 64 << 20
#: A temporary file older than this is a writer's that died (the CLI ends with os._exit).
STALE_TMP = 600

#: What prune() may remove: only files named as this module names them, in folders named by a
#: build-id (SWK_CACHE_DIR may name a folder that holds other things).
_BUILD_ID = LazyPattern(r"^[0-9a-f]{8,128}$")
_OURS = LazyPattern(r"^(?:\.tmp-.*|[A-Za-z0-9_.]+-[0-9a-f]+-[0-9a-f]+-[0-9a-f]+|[A-Za-z0-9_.-]+\.(?:json|blob))$")


def _path(build_id, leaf):
    return cache_path(build_id, leaf)


# --- inflated sections ------------------------------------------------------------------------
class MappedSection(mmap.mmap):
    """A kept section mapped, not read: a walk touches a few pages of libc's 6 MB of
    .debug_info.  Reads as the section's bytes do (indexing, slices, find, index, ==).
    Kept files are replaced by rename, never rewritten in place, so a mapping stays whole."""

    def __eq__(self, other):
        if isinstance(other, (bytes, bytearray, memoryview, mmap.mmap)):
            return self[:] == bytes(other[:])
        return NotImplemented

    __hash__ = None

    def index(self, sub, start=0, end=None):
        i = self.find(sub, start, len(self) if end is None else end)
        if i < 0:
            raise ValueError("subsection not found")
        return i


def load(build_id, name, offset, csize, usize):
    """The inflated bytes kept for this section, or None."""
    if usize < MIN_SIZE:
        return None
    path = _path(build_id, _section_leaf(name, offset, csize, usize))
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size != usize:
                _remove(path)
                return None
            data = MappedSection(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    _touch(path)
    return data


def store(build_id, name, offset, csize, data):
    """Keep ``data`` (the section inflated whole) for the next reader."""
    if len(data) < MIN_SIZE:
        return False
    return _write(_path(build_id, _section_leaf(name, offset, csize, len(data))), data)


# --- facts ------------------------------------------------------------------------------------
def load_fact(build_id, name):
    """The JSON value kept as ``name`` for this build-id, or None."""
    path = _path(build_id, name + ".json")
    data = _read(path, 1 << 24)
    if data is None:
        return None
    import json   # here and below: the command line imports nothing it may not need
    try:
        value = json.loads(data)
    except ValueError:
        _remove(path)
        return None
    _touch(path)
    return value


def store_fact(build_id, name, value):
    """Keep a JSON-able ``value`` as ``name`` for this build-id."""
    import json
    try:
        data = json.dumps(value, sort_keys=True).encode()
    except (TypeError, ValueError):
        return False
    return _write(_path(build_id, name + ".json"), data)


# --- blobs ------------------------------------------------------------------------------------
_BLOB = b"SWKB"
_CODE_TAGS = {}


def code_tag(*sources):
    """A CRC-32 of the source files that derive what is kept (hex): what another version of
    swk derived is named otherwise, and never read."""
    tag = _CODE_TAGS.get(sources)
    if tag is None:
        import zlib
        crc = 0
        for path in sources:
            try:
                with open(path, "rb") as f:
                    crc = zlib.crc32(f.read(), crc)
            except OSError:
                return "unknown"
        tag = _CODE_TAGS[sources] = f"{crc:08x}"
    return tag


def load_blob(build_id, name):
    """The bytes kept as ``name`` for this build-id (their checksum verified), or None."""
    import zlib
    path = _path(build_id, name + ".blob")
    data = _read(path, 1 << 30)
    if data is None:
        return None
    if len(data) < 8 or data[:4] != _BLOB or int.from_bytes(data[4:8], "little") != zlib.crc32(data[8:]):
        _remove(path)
        return None
    _touch(path)
    return data[8:]


def store_blob(build_id, name, payload):
    """Keep ``payload`` (bytes) as ``name`` for this build-id, with its checksum."""
    import zlib
    return _write(_path(build_id, name + ".blob"), _BLOB + zlib.crc32(payload).to_bytes(4, "little") + payload)


# --- files ------------------------------------------------------------------------------------
def _read(path, most):
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            return f.read(most)
    except OSError:
        return None


def _touch(path):
    try:
        os.utime(path)          # used now: pruned last
    except OSError:
        pass


_written = [0]      # bytes still to write before the next prune (below 0: prune now)


def _write(path, data):
    if path is None or os.path.exists(path):
        return False
    import tempfile
    folder = os.path.dirname(path)
    tmp = None
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        tmp = None
        _written[0] -= len(data)
        if _written[0] < 0:
            _written[0] = PRUNE_EVERY
            prune(os.path.dirname(folder))
        return True
    except OSError:
        return False
    finally:
        if tmp is not None:
            _remove(tmp)


def prune(root=None, max_bytes=None):
    """Remove the least recently used files while the cache holds more than ``max_bytes``,
    and temporary files of writers that died."""
    root = root or cache_dir()
    if root is None:
        return
    limit = MAX_BYTES if max_bytes is None else max_bytes
    files, total, now = [], 0, time.time()
    try:
        folders = [e.path for e in os.scandir(root)
                   if _BUILD_ID.match(e.name) and e.is_dir(follow_symlinks=False)]
    except OSError:
        return
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for e in entries:
            if not _OURS.match(e.name):
                continue
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if e.name.startswith(".tmp-"):
                if now - st.st_mtime > STALE_TMP:
                    _remove(e.path)
                continue
            files.append((st.st_mtime, st.st_size, e.path))
            total += st.st_size
    files.sort()
    for _mtime, size, path in files:
        if total <= limit:
            break
        _remove(path)
        total -= size


def _remove(path):
    try:
        os.unlink(path)
    except OSError:
        pass
