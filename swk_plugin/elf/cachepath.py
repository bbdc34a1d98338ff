"""Where the disk cache (diskcache.py) keeps a file's inflated sections: the names alone, with
nothing but ``os``, for elf/ahead.py, which asks before swk is imported whether a section it
could inflate is kept there already."""
import os

_OFF = ("off", "0", "none", "no")
_SAFE_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def cache_dir():
    """The cache's directory (not made yet), or None when it is off."""
    env = os.environ.get("SWK_CACHE_DIR")
    if env is not None:
        return None if env.strip().lower() in _OFF or not env.strip() else env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "swk")


def safe(name):
    """``name`` with every character but letters, digits, "_", "." and "-" made "_"."""
    return "".join(c if c in _SAFE_CHARS else "_" for c in name)


def cache_path(build_id, leaf):
    """The path of ``leaf`` in the folder of ``build_id``, or None (cache off, no build-id)."""
    root = cache_dir()
    if root is None or not build_id:
        return None
    return os.path.join(root, safe(build_id), safe(leaf))


def section_leaf(name, offset, csize, usize):
    """The file name of an inflated section: its name, file offset and both sizes."""
    return f"{name.lstrip('.')}-{offset:x}-{csize:x}-{usize:x}"


def kept_size(build_id, name, offset, csize, usize):
    """The size of the file keeping that section inflated, or None where there is none."""
    path = cache_path(build_id, section_leaf(name, offset, csize, usize))
    try:
        return os.stat(path).st_size if path else None
    except OSError:
        return None
