"""Finding a module's separate debug file, in GDB's order.

1. By build-id: ``<debug_dir>/.build-id/xx/yyyy.debug`` (xx = first byte in hex).
2. By .gnu_debuglink name: ``<dir of file>/<name>``, ``<dir>/.debug/<name>``,
   ``<debug_dir>/<dir>/<name>`` (and, for a file inside the sysroot, its path
   relative to the sysroot under ``<debug_dir>`` and ``<sysroot><debug_dir>``).

A candidate is accepted when its build-id equals the module's (both have one),
else, for a debuglink candidate, when the CRC32 of the whole file matches the
one recorded in .gnu_debuglink.  The module itself is never returned.
"""
import os
import threading
import zlib

from ..errors import BadFileError
from .module import ElfModule

__all__ = ["find_debug_file", "attach_debug_file", "file_crc32", "DEFAULT_DEBUG_DIRS"]

DEFAULT_DEBUG_DIRS = ("/usr/lib/debug",)
_attach_lock = threading.Lock()
_crc_cache = {}


def file_crc32(path, chunk=1 << 20):
    """zlib CRC32 of a whole file (GDB's gnu_debuglink_crc32), streamed; cached by (path, size, mtime)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = (path, st.st_size, st.st_mtime_ns, st.st_ino)
    crc = _crc_cache.get(key)
    if crc is not None:
        return crc
    crc = 0
    try:
        with open(path, "rb") as f:
            while True:
                b = f.read(chunk)
                if not b:
                    break
                crc = zlib.crc32(b, crc)
    except OSError:
        return None
    crc &= 0xFFFFFFFF
    _crc_cache[key] = crc
    return crc


def _same_file(a, b):
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def _join(*parts):
    """Concatenate path pieces the way GDB splices them (no duplicate slashes)."""
    out = ""
    for p in parts:
        if not p:
            continue
        if not out:
            out = p
        else:
            out = out.rstrip("/") + "/" + p.lstrip("/")
    return out


def _open_candidate(path):
    try:
        if not os.path.isfile(path):
            return None
        return ElfModule(path=path)
    except (BadFileError, OSError, ValueError):
        return None


def _module_path(module):
    path = getattr(module, "path", None)
    if not path:
        return None
    return os.path.abspath(path)


def _build_id_candidates(build_id, debug_dirs, sysroot):
    if not build_id or len(build_id) < 4:
        return []
    bid = build_id.lower()
    rel = f".build-id/{bid[:2]}/{bid[2:]}.debug"
    out = []
    for d in debug_dirs:
        out.append(_join(d, rel))
        if sysroot:
            out.append(_join(sysroot, d, rel))
    return out


def _debuglink_candidates(module, link_name, debug_dirs, sysroot):
    path = _module_path(module)
    if not path:
        return []
    dirs = []
    d = os.path.dirname(path)
    dirs.append(d)
    try:
        real = os.path.dirname(os.path.realpath(path))
        if real != d:
            dirs.append(real)
    except OSError:
        pass
    out = []
    for d in dirs:
        out.append(_join(d, link_name))
        out.append(_join(d, ".debug", link_name))
    sysroot_abs = os.path.abspath(sysroot) if sysroot else None
    for dbg in debug_dirs:
        for d in dirs:
            base = None
            if sysroot_abs and (d == sysroot_abs or d.startswith(sysroot_abs.rstrip("/") + "/")):
                base = d[len(sysroot_abs.rstrip("/")):] or "/"
            out.append(_join(dbg, d, link_name))
            if base is not None:
                out.append(_join(dbg, base, link_name))
                out.append(_join(sysroot, dbg, base, link_name))
            elif sysroot:
                # the module's path is the target's: the debug tree lives in the sysroot too
                out.append(_join(sysroot, dbg, d, link_name))
                out.append(_join(sysroot, d, link_name))
                out.append(_join(sysroot, d, ".debug", link_name))
    return out


def _dedupe(paths):
    seen = set()
    out = []
    for p in paths:
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out


def find_debug_file(module, sysroot=None, debug_dirs=DEFAULT_DEBUG_DIRS):
    """The module's separate debug file as an ElfModule, or None."""
    if isinstance(debug_dirs, str):
        debug_dirs = [debug_dirs]
    debug_dirs = [d for d in (debug_dirs or ()) if d]
    mpath = _module_path(module)
    try:
        bid = module.build_id
    except Exception:
        bid = None

    def is_self(cand_path):
        return mpath is not None and _same_file(cand_path, mpath)

    for cand in _dedupe(_build_id_candidates(bid, debug_dirs, sysroot)):
        if is_self(cand):
            continue
        m = _open_candidate(cand)
        if m is None:
            continue
        try:
            ok = m.build_id is not None and m.build_id.lower() == bid.lower()
        except Exception:
            ok = False
        if ok:
            return m
        m.close()

    try:
        link = module.debuglink
    except Exception:
        link = None
    if not link or not link[0]:
        return None
    name, crc = link
    for cand in _dedupe(_debuglink_candidates(module, name, debug_dirs, sysroot)):
        if not os.path.isfile(cand) or is_self(cand):
            continue
        m = _open_candidate(cand)
        if m is None:
            continue
        try:
            cbid = m.build_id
        except Exception:
            cbid = None
        if bid and cbid:
            ok = bid.lower() == cbid.lower()
        else:
            ok = crc is not None and file_crc32(cand) == crc
        if ok:
            return m
        m.close()
    return None


def attach_debug_file(module, **kw):
    """Resolve the module's debug file once (stored in ``module.debug_file``) and return it."""
    if getattr(module, "_debug_file_resolved", False) or getattr(module, "debug_file", None) is not None:
        module._debug_file_resolved = True
        return module.debug_file
    with _attach_lock:
        if getattr(module, "_debug_file_resolved", False):
            return module.debug_file
        try:
            dbg = find_debug_file(module, **kw)
        except Exception:
            dbg = None
        module.debug_file = dbg
        module._debug_file_resolved = True
    return dbg
