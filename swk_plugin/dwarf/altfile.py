"""The supplementary DWARF file of a dwz-compressed debug file (Debian's and Fedora's -dbg
packages): the types and abstract DIEs several files share, moved to one file that
.gnu_debugaltlink (or DWARF 5's .debug_sup) names.  Its DIEs are reached from the main
file by DW_FORM_GNU_ref_alt / DW_FORM_ref_sup, its strings by DW_FORM_GNU_strp_alt /
DW_FORM_strp_sup.

The supplementary file's .debug_info is read at offsets moved up by ALT_BASE, so that a
DIE offset names one DIE whichever file it is in (the readers' caches are keyed by offset).
"""
import os
import threading

from ..elf.module import ElfModule
from ..errors import BadFileError

#: Where the supplementary file's .debug_info offsets start.
ALT_BASE = 1 << 40
#: The section name strings of the supplementary file are read from.
ALT_STR = ".debug_str@alt"

_lock = threading.Lock()
_opened = {}          # path -> DwarfInfo of that supplementary file (shared by every user)


class Shifted:
    """Bytes read at offsets moved up by ``base`` (what the DIE readers do to .debug_info)."""
    __slots__ = ("data", "base")

    def __init__(self, data, base):
        self.data, self.base = data, base

    def __len__(self):
        return self.base + len(self.data)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self.data[i.start - self.base:i.stop - self.base]
        return self.data[i - self.base]

    def index(self, sub, start=0):
        return self.data.index(sub, start - self.base) + self.base

    def find(self, sub, start=0):
        k = self.data.find(sub, start - self.base)
        return k + self.base if k >= 0 else -1


class ShiftedSections:
    """A DebugSections whose .debug_info is Shifted by ``base``."""

    def __init__(self, secs, base):
        self._secs, self.base = secs, base
        self.little, self.is64 = secs.little, secs.is64

    def _wrap(self, name, data):
        return Shifted(data, self.base) if name == ".debug_info" and data is not None else data

    def has(self, name):
        return self._secs.has(name)

    def get(self, name):
        return self._wrap(name, self._secs.get(name))

    def view(self, name):
        return self._wrap(name, self._secs.view(name))

    def upto(self, name, end):
        if name == ".debug_info":
            end = max(0, end - self.base)
        return self._wrap(name, self._secs.upto(name, end))


def alt_link(secs):
    """The supplementary file's path as the debug file names it, or None."""
    link = secs.get(".gnu_debugaltlink")
    if link:
        k = bytes(link).find(b"\0")
        return bytes(link[:k if k >= 0 else len(link)]).decode("utf-8", "replace") or None
    sup = secs.get(".debug_sup")          # DWARF 5: version, is_supplementary, filename, ...
    if sup and len(sup) > 3 and not sup[2]:
        raw = bytes(sup[3:])
        k = raw.find(b"\0")
        return raw[:k if k >= 0 else len(raw)].decode("utf-8", "replace") or None
    return None


def open_alt(dwarf, make):
    """The DwarfInfo of ``dwarf``'s supplementary file (``make(module, base)`` builds one),
    or None when it names none or the file cannot be read."""
    name = alt_link(dwarf.secs)
    if not name:
        return None
    path = name
    if not os.path.isabs(path):
        here = getattr(dwarf.module, "path", None)
        if not here:
            return None
        path = os.path.join(os.path.dirname(here), path)
    path = os.path.normpath(path)
    with _lock:
        hit = _opened.get(path)
        if hit is None and path not in _opened:
            try:
                hit = make(ElfModule(path=path), ALT_BASE) if os.path.isfile(path) else None
            except (BadFileError, OSError, ValueError):
                hit = None
            _opened[path] = hit
    return hit
