"""CPython objects read out of the target: str (PyASCIIObject, PyCompactUnicodeObject) and bytes.

What a frame needs of its code object is text (co_qualname, co_filename) and bytes
(co_linetable).  Both are read without running anything in the target: a compact string's
characters follow its header (sizeof(PyASCIIObject) for ASCII, sizeof(PyCompactUnicodeObject)
otherwise), 1, 2 or 4 bytes each by the state's ``kind``; a bytes object's follow ob_sval.
A string that is not compact (3.10 and 3.11's legacy strings, which code objects never hold)
is not read.
"""
from ..errors import MemoryReadError

#: Longest string or bytes object read (a name, a path, a line table): more is not a frame's.
MAX_LENGTH = 1 << 20

_CODECS = {1: "latin-1", 2: "utf-16", 4: "utf-32"}


def read_unicode(ps, addr, layout):
    """The str at ``addr``, or None (NULL, not compact, implausible, unreadable)."""
    if not addr:
        return None
    try:
        length = ps.read_uint(addr + layout.unicode_length, 8)
        state = ps.read_uint(addr + layout.unicode_state, 4)
    except MemoryReadError:
        return None
    if length > MAX_LENGTH or not state & layout.unicode_compact_mask:
        return None
    kind = (state & layout.unicode_kind_mask) // (layout.unicode_kind_mask & -layout.unicode_kind_mask)
    ascii_ = bool(state & layout.unicode_ascii_mask)
    if kind not in _CODECS or (ascii_ and kind != 1):
        return None
    data = addr + (layout.sizeof_ascii if ascii_ else layout.sizeof_compact)
    try:
        raw = ps.read_memory(data, length * kind)
    except MemoryReadError:
        return None
    codec = _CODECS[kind]
    if kind > 1:
        codec += "-le" if ps.arch.byteorder == "little" else "-be"
    return raw.decode(codec, "replace")


def read_bytes(ps, addr, layout):
    """The bytes object's contents at ``addr``, or None."""
    if not addr:
        return None
    try:
        size = ps.read_uint(addr + layout.var_size, 8)
        if size > MAX_LENGTH:
            return None
        return ps.read_memory(addr + layout.bytes_sval, size)
    except MemoryReadError:
        return None
