"""Small helpers over lines.py's _Dwarf reader: attribute lookups that follow
DW_AT_abstract_origin / DW_AT_specification the way GDB's dwarf2_attr does."""
from .dwarfconst import AT_abstract_origin, AT_specification

_SIGNED_FORMS = frozenset((0x0d, 0x21))           # sdata, implicit_const


def ref(v):
    """A DIE reference attribute value as a .debug_info offset (None for refs we cannot follow)."""
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def node_at(d, cu, off):
    """The DIE at ``off`` as a DieNode (its children read only if asked for), or None; the
    reader keeps it per offset (abstract origins are asked for again and again)."""
    return d.die_node(cu, off)


def chain_attr(d, node, at, depth=16):
    """(node holding it, (form, value)) for attribute ``at`` of ``node`` or of the DIEs its
    DW_AT_abstract_origin / DW_AT_specification name (dwarf2_attr), else None."""
    cur = node
    for _ in range(depth):
        a = cur.attrs.get(at)
        if a is not None:
            return cur, a
        nxt = cur.attrs.get(AT_abstract_origin) or cur.attrs.get(AT_specification)
        if nxt is None or ref(nxt[1]) is None:
            return None
        cur = node_at(d, cur.cu, nxt[1])
        if cur is None:
            return None
    return None


def chain_value(d, node, at):
    r = chain_attr(d, node, at)
    return r[1][1] if r is not None else None


def chain_string(d, node, at):
    r = chain_attr(d, node, at)
    if r is None:
        return None
    return d.string(r[0].cu, r[1][1])


def const_int(form, v, signed=False):
    """An integer constant attribute; data forms are unsigned unless told otherwise."""
    if not isinstance(v, int) or isinstance(v, bool):
        if isinstance(v, bool):
            return int(v)
        return None
    if form in _SIGNED_FORMS:
        return v
    if signed:
        size = {0x0b: 1, 0x05: 2, 0x06: 4, 0x07: 8}.get(form)
        if size and v >> (size * 8 - 1):
            return v - (1 << (size * 8))
    return v


def flag(d, node, at):
    return bool(chain_value(d, node, at))
