"""Inflated debug sections kept on disk, by build-id, for the next process that reads them.

Distributions compress their debug files (libc6-dbg's .debug_info is 6 MB of zlib that
inflates to 20), and zlib cannot start in the middle of a stream: the first walk of a
process spends most of its time inflating libc's and the program's DWARF, and so does every
later `swk bt --pid`, GDB session and core.  A section inflated whole is written here once;
a later reader of the same file (the same build-id, section offset and sizes) reads the
bytes instead of inflating them.  GDB keeps its own index cache the same way
(`set index-cache on`).

Where: $SWK_CACHE_DIR, else $XDG_CACHE_HOME/swk/inflated, else ~/.cache/swk/inflated;
SWK_CACHE_DIR=off turns it off.  At most MAX_BYTES in all: the files used least recently
are removed first.  Files are written whole under a temporary name and renamed, so a
reader never sees half of one; a file of the wrong size is not used (and is removed).
Sections under MIN_SIZE are not kept: inflating them costs less than a file.
"""
import os
import re
import tempfile
import time

MAX_BYTES = 2 << 30
MIN_SIZE = 256 << 10
#: A temporary file older than this is a writer's that died (the CLI ends with os._exit).
STALE_TMP = 600

_OFF = ("off", "0", "none", "no")
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


def cache_dir():
    """The cache's directory (not made yet), or None when it is off."""
    env = os.environ.get("SWK_CACHE_DIR")
    if env is not None:
        return None if env.strip().lower() in _OFF or not env.strip() else env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "swk", "inflated")


def _path(build_id, name, offset, csize, usize):
    root = cache_dir()
    if root is None or not build_id:
        return None
    return os.path.join(root, _SAFE.sub("_", build_id),
                        f"{_SAFE.sub('_', name.lstrip('.'))}-{offset:x}-{csize:x}-{usize:x}")


def load(build_id, name, offset, csize, usize):
    """The inflated bytes kept for this section, or None."""
    if usize < MIN_SIZE:
        return None
    path = _path(build_id, name, offset, csize, usize)
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            data = f.read(usize + 1)
    except OSError:
        return None
    if len(data) != usize:
        _remove(path)
        return None
    try:
        os.utime(path)          # used now: pruned last
    except OSError:
        pass
    return data


def store(build_id, name, offset, csize, data):
    """Keep ``data`` (the section inflated whole) for the next reader; never an error."""
    usize = len(data)
    if usize < MIN_SIZE:
        return False
    path = _path(build_id, name, offset, csize, usize)
    if path is None or os.path.exists(path):
        return False
    folder = os.path.dirname(path)
    tmp = None
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        tmp = None
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
        folders = [e.path for e in os.scandir(root) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for e in entries:
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
