"""A unit's function ranges, line tables and DIEs read kept on disk by its file's build-id.

The first walk through a big program spends most of its DWARF time in three kinds of reading
in each unit its stack touches: the scan for function ranges (with the scopes that name them),
the run of the unit's line program, and the DIEs of its functions' scopes and call sites (read
child by child, dies.py).  Both depend on the file's bytes alone, so what one process
derived the next one reads back (elf/diskcache.py: marshal, checked by a CRC-32), named by the
unit's offset, the file's size (a stripped copy shares its program's build-id) and a CRC of
the code that derived it.  Only a file's own units are kept: a split unit's or a supplementary
file's are derived with another file's bytes.  Nothing here raises: what cannot be read back
is derived again.  DIEs' children are kept as read: what a walk reads of a unit is added to
what earlier walks kept (``flush``, at the end of a command).
"""
import marshal
import os

from ..elf import diskcache

_HERE = os.path.dirname(os.path.abspath(__file__))
#: the code that derives what is kept: another version of any of it names its blobs otherwise
_SOURCES = tuple(os.path.join(_HERE, name) for name in (
    "info.py", "lineprog.py", "units.py", "constants.py", "aranges.py", "dies.py", "unitcache.py"))
#: Smaller units are derived again: reading a file back costs more than their scan.
MIN_UNIT = 1 << 10      # bytes of .debug_info a unit's scan passes over
MIN_ROWS = 50           # line rows
MIN_ARANGES = 1000      # ranges in .debug_aranges


def _name(d, cu, kind):
    """(build-id, blob name) for ``kind`` of ``cu`` (of the whole file without one), or None
    when it is not kept."""
    if d.info_base or d.dwo:
        return None
    if cu is not None and (cu.skeleton is not None or (cu.owner is not None and cu.owner is not d)):
        return None
    module = d.module
    build_id = getattr(module, "build_id", None)
    if not build_id or diskcache.cache_dir() is None:
        return None
    name = f"{kind}-{diskcache.code_tag(*_SOURCES)}-{getattr(module, 'file_size', 0):x}"
    return build_id, name if cu is None else f"{name}-{cu.offset:x}"


def _load(d, cu, kind):
    key = _name(d, cu, kind)
    blob = diskcache.load_blob(*key) if key is not None else None
    if blob is None:
        return None
    try:
        return marshal.loads(blob)
    except (ValueError, EOFError, TypeError):
        return None


def _store(d, cu, kind, value):
    key = _name(d, cu, kind)
    if key is None:
        return
    try:
        diskcache.store_blob(key[0], key[1], marshal.dumps(value))
    except ValueError:
        pass


def load_funcs(d, cu):
    """(funcs, scopes) kept for ``cu`` (DwarfInfo._scan_funcs's result and the scopes it
    records), or None."""
    kept = _load(d, cu, "funcs")
    if (isinstance(kept, tuple) and len(kept) == 2 and isinstance(kept[0], tuple)
            and len(kept[0]) == 4 and isinstance(kept[1], dict)):
        return kept
    return None


def store_funcs(d, cu, funcs, scopes):
    if scopes is not None and cu.end - cu.offset >= MIN_UNIT:
        _store(d, cu, "funcs", (funcs, scopes))


def load_lines(d, cu, make):
    """``cu``'s line tables kept (made into Subfiles by ``make(name)``), or None."""
    kept = _load(d, cu, "lines")
    if not isinstance(kept, list):
        return None
    out = []
    try:
        for name, symtab, pcs, lines, stmts in kept:
            sf = make(name)
            sf.symtab, sf.pcs, sf.lines, sf.stmts = symtab, pcs, lines, stmts
            out.append(sf)
    except (TypeError, ValueError):
        return None
    return out


def store_lines(d, cu, subfiles):
    if sum(len(sf.pcs) for sf in subfiles) >= MIN_ROWS:
        _store(d, cu, "lines", [(sf.name, sf.symtab, sf.pcs, sf.lines, sf.stmts) for sf in subfiles])


def load_map(d, kind):
    """A map from addresses to units (aranges.UnitMap's ``kind``: "amap" from .debug_aranges,
    "map" with the units left out of it, or "fmap") kept for the file, or None."""
    kept = _load(d, None, kind)
    if isinstance(kept, tuple) and len(kept) == 2 and isinstance(kept[0], tuple) and len(kept[0]) == 4:
        return kept
    return None


def store_map(d, kind, index, extra):
    """Keep a map: building one reads every unit's header (and "fmap" the functions of
    every unit without pc attributes), as much work as a file has units."""
    _store(d, None, kind, (index, extra))


# --- DIEs' children (dies.py) -------------------------------------------------------------------
class Kids:
    """A unit's DIEs as read, those kept by earlier processes and those read since:
    "nodes", DIEs read alone (``die_node``: {offset: (tag, attrs, where its children start or
    None)}); "kids", DIEs' children ({parent offset: ((offset, tag, attrs, where its own
    children start or None), ...)}); "trees", whole subtrees (``die_tree``: {offset: (tag,
    attrs, (subtree, ...))}); "attrs", a function's attributes for its name ({offset: (tag,
    attrs)})."""
    __slots__ = ("kept", "new")

    def __init__(self, kept):
        self.kept = kept
        self.new = {kind: {} for kind in KINDS}

    def get(self, kind, key):
        got = self.kept[kind].get(key)
        return got if got is not None else self.new[kind].get(key)


KINDS = ("nodes", "kids", "trees", "attrs")
_DIRTY = []          # (DwarfInfo, unit) whose Kids gained entries since the last flush


def kids(d, cu):
    """The unit's Kids (loaded once: None when its DIEs are not kept)."""
    k = cu._kids
    if k is None:
        if _name(d, cu, "dies") is None:
            k = cu._kids = False
        else:
            kept = _load(d, cu, "dies")
            if not (isinstance(kept, dict) and all(isinstance(kept.get(kind), dict) for kind in KINDS)):
                kept = {kind: {} for kind in KINDS}
            k = cu._kids = Kids(kept)
    return k or None


def note(d, cu, kind, key, value):
    """Add what was just read of the unit (``kind``: one of KINDS) to what is kept."""
    k = kids(d, cu)
    if k is not None:
        with d._lock:             # flush() merges under it (an RLock: readers may hold it)
            if not any(k.new.values()):
                _DIRTY.append((d, cu))
            k.new[kind][key] = value


def flush():
    """Keep what this command read of units' DIEs, each unit's file written again with what
    it held and what was added."""
    while _DIRTY:
        d, cu = _DIRTY.pop()
        k = cu._kids
        with d._lock:             # the unit's readers add to k.new under it
            if not k or not any(k.new.values()):
                continue
            merged = {kind: {**k.kept[kind], **k.new[kind]} for kind in KINDS}
            k.kept, k.new = merged, {kind: {} for kind in KINDS}
        _store(d, cu, "dies", merged)
