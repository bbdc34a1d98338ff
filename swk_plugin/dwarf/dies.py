"""Questions about DIEs and their trees (a mixin of DwarfInfo): a DIE's attributes, its
children, its parents, a whole subtree as DieNodes, and the unit an offset is in.

A big function's tree is thousands of DIEs (``_PyEval_EvalFrameDefault``'s: 35,000 with
its inlined calls) of which a walk needs the few on the way to one pc, so ``die_node``
reads a DIE and leaves its children unread until asked for; each child's own subtree is
passed over by its DW_AT_sibling (or a skip of its attributes' sizes), not decoded."""
import bisect
import struct

from . import unitcache
from .constants import AT_sibling, DIE_ATTRS_FUNC
from .units import ALL_ATTRS, DwarfError, uint, uleb


class DieNode:
    """One DIE: offset, tag, {attribute: (form, value)}, children, parent.  The children of
    a node ``die_node`` made are read the first time they are asked for."""
    __slots__ = ("offset", "tag", "attrs", "cu", "_kids", "parent", "_more")

    def __init__(self, offset, tag, attrs, cu):
        self.offset = offset
        self.tag = tag
        self.attrs = attrs
        self.cu = cu
        self._kids = []
        self.parent = None
        self._more = None        # (DwarfInfo, position after its attributes): children unread

    @property
    def children(self):
        if self._more is not None:
            self._read_kids()
        return self._kids

    def _read_kids(self):
        more = self._more
        if more is None:
            return
        owner = more[0]
        with owner._lock:
            if self._more is not None:
                self._kids = owner._children_nodes(self, more[1])
                self._more = None

    def __repr__(self):
        return f"<DieNode 0x{self.offset:x} tag 0x{self.tag:x}>"


def _kept_tree(node):
    """A DieNode tree as kept: (tag, attrs, ((offset, subtree), ...))."""
    return node.tag, node.attrs, tuple((k.offset, _kept_tree(k)) for k in node._kids)


def _node_of(kept, off, cu, parent):
    tag, attrs, kids = kept
    node = DieNode(off, tag, attrs, cu)
    node.parent = parent
    node._kids = [_node_of(k, koff, cu, node) for koff, k in kids]
    return node


class DieQueries:
    """DIE lookups by offset for the locals engine and the name printer."""

    def die_attrs(self, cu, off, wanted=DIE_ATTRS_FUNC):
        """(tag, attrs) of the DIE at .debug_info offset ``off`` in the same unit, or None."""
        other = self.routed(cu, off)
        if other is not None:
            return other[0].die_attrs(other[1], off, wanted)
        target = cu
        if not (cu.offset <= off < cu.end):
            target = self._unit_containing(off)
            if target is None:
                return None
        kept = unitcache.kids(self, target) if wanted is DIE_ATTRS_FUNC else None
        got = kept.get("attrs", off) if kept is not None else None
        if got is None:
            info = self.secs.view(".debug_info")
            die, _p = self._read_die(info, off, target, wanted)
            if die is None:
                return None
            got = (die[0], die[2])
            if kept is not None:
                unitcache.note(self, target, "attrs", off, got)
        return target, got[0], got[1]

    def die_full(self, cu, off):
        """(unit, tag, attrs, has_children, end of attributes) of any DIE, every attribute read."""
        other = self.routed(cu, off)
        if other is not None:
            return other[0].die_full(other[1], off)
        target = cu
        if not (cu.offset <= off < cu.end):
            target = self._unit_containing(off)
            if target is None:
                return None
        info = self.secs.view(".debug_info")
        die, pos = self._read_die(info, off, target, ALL_ATTRS)
        if die is None:
            return None
        return target, die[0], die[2], die[1], pos

    def children(self, cu, off):
        """Offsets of the direct children of the DIE at ``off`` (same unit)."""
        other = self.routed(cu, off)
        if other is not None:
            return other[0].children(other[1], off)
        r = self.die_full(cu, off)
        if r is None or not r[3]:
            return []
        info = self.secs.view(".debug_info")
        tcu = r[0]
        plans = self._plans_of(tcu)
        out = []
        pos = r[4]
        depth = 0
        while pos < tcu.end:
            start = pos
            code, pos = uleb(info, pos)
            if code == 0:
                if depth == 0:
                    break
                depth -= 1
                continue
            ab = tcu._abbrevs.get(code)
            if ab is None:
                break
            if depth == 0:
                out.append(start)
            pos = self._skip_die(info, pos, tcu, code, plans)
            if ab[1]:
                depth += 1
        return out

    def parents(self, cu):
        """{DIE offset: parent DIE offset} for the whole unit (built on first use)."""
        if cu.owner is not None and cu.owner is not self:
            return cu.owner.parents(cu)
        if cu._parents is None:
            with self._lock:
                if cu._parents is None:
                    info = self.secs.view(".debug_info")
                    plans = self._plans_of(cu)
                    par = {}
                    stack = []
                    pos = cu.die_off
                    try:
                        while pos < cu.end:
                            start = pos
                            code, pos = uleb(info, pos)
                            if code == 0:
                                if stack:
                                    stack.pop()
                                if not stack:
                                    break
                                continue
                            ab = cu._abbrevs[code]
                            par[start] = stack[-1] if stack else None
                            pos = self._skip_die(info, pos, cu, code, plans)
                            if ab[1]:
                                stack.append(start)
                    except (IndexError, KeyError, ValueError, DwarfError):
                        pass
                    cu._parents = par
        return cu._parents

    def _unit_containing(self, off):
        """The unit holding ``off``: found by bisection among the unit headers read so far
        (a chain from the section's start, extended only as far as ``off``)."""
        starts = self._chain
        i = bisect.bisect_right(starts, off) - 1
        if i >= 0 and off < self._chain_ends[i]:
            return self.unit_at(starts[i])
        p = self._chain_ends[-1] if starts else self.info_base
        while p <= off:
            info = self.secs.upto(".debug_info", p + 12)   # inflate only as far as off's unit
            if info is None or p + 11 > len(info):
                break
            length = uint(info, p, 4, self.little)
            e = p + 12 + uint(info, p + 4, 8, self.little) if length == 0xFFFFFFFF else p + 4 + length
            if e <= p:
                return None
            starts.append(p)
            self._chain_ends.append(e)
            if p <= off < e:
                return self.unit_at(p)
            p = e
        return None

    # --- whole DIE trees and unit helpers (for swk_plugin.locals) ------------------------------
    def unit_of(self, off):
        """The unit holding .debug_info offset ``off`` (of this file or its supplementary
        file), or None."""
        other = self.routed(None, off)
        if other is not None:
            return other[1]
        try:
            return self._unit_containing(off)
        except (IndexError, struct.error, ValueError, DwarfError):
            return None

    def die_tree(self, cu, off):
        """The DIE at ``off`` with all its descendants, every attribute read, in one pass:
        a DieNode tree (None on malformed DWARF).  Functions and aggregates are small, so
        reading them whole is cheaper than a seek per child."""
        other = self.routed(cu, off)
        if other is not None:
            return other[0].die_tree(other[1], off)
        target = cu if cu is not None and cu.offset <= off < cu.end else self.unit_of(off)
        if target is None:
            return None
        kept = unitcache.kids(self, target)
        got = kept.get("trees", off) if kept is not None else None
        if got is not None:
            return _node_of(got, off, target, None)
        root = self._read_tree(target, off)
        if root is not None and kept is not None:
            unitcache.note(self, target, "trees", off, _kept_tree(root))
        return root

    def _read_tree(self, target, off):
        info = self.secs.view(".debug_info")
        if info is None:
            return None
        try:
            if target._abbrevs is None:
                target._abbrevs = self._abbrevs(target.abbrev_off)
            root = None
            stack = []
            pos = off
            end = target.end
            read_die = self._read_die
            while pos < end:
                start = pos
                die, pos = read_die(info, pos, target, ALL_ATTRS)
                if die is None:
                    if not stack:
                        break
                    stack.pop()
                    if not stack:
                        break
                    continue
                tag, has_children, attrs = die
                node = DieNode(start, tag, attrs, target)
                if stack:
                    node.parent = stack[-1]
                    stack[-1].children.append(node)
                else:
                    root = node
                if has_children:
                    stack.append(node)
                elif not stack:
                    break
            return root
        except (IndexError, KeyError, struct.error, ValueError, DwarfError):
            return None

    def die_node(self, cu, off):
        """The DIE at ``off`` as a DieNode whose children are read when first asked for (and
        theirs in turn): what a walk needs of a big function is the way to one pc, not the
        whole tree.  Kept per offset; None on malformed DWARF."""
        node = self._nodes.get(off)
        if node is not None:
            return node
        other = self.routed(cu, off)
        if other is not None:
            node = other[0].die_node(other[1], off)
        else:
            target = cu if cu is not None and cu.offset <= off < cu.end else self.unit_of(off)
            if target is None:
                return None
            kept = unitcache.kids(self, target)
            got = kept.get("nodes", off) if kept is not None else None
            if got is None:
                info = self.secs.view(".debug_info")
                if info is None:
                    return None
                try:
                    die, pos = self._read_die(info, off, target, ALL_ATTRS)
                except (IndexError, KeyError, struct.error, ValueError, DwarfError):
                    return None
                if die is None:
                    return None
                got = (die[0], die[2], pos if die[1] else None)
                if kept is not None:
                    unitcache.note(self, target, "nodes", off, got)
            node = DieNode(off, got[0], got[1], target)
            if got[2] is not None:
                node._more = (self, got[2])
        if node is not None:
            if len(self._nodes) >= 65536:
                self._nodes.clear()
            self._nodes[off] = node
        return node

    def _children_nodes(self, parent, pos):
        """The direct children of ``parent`` (its attributes end at ``pos``), each with its
        own children unread; on malformed DWARF those read before the fault."""
        cu = parent.cu
        kept = unitcache.kids(self, cu)
        entries = kept.get("kids", parent.offset) if kept is not None else None
        if entries is None:
            entries = tuple(self._read_children(parent, pos))
            if kept is not None:
                unitcache.note(self, cu, "kids", parent.offset, entries)
        out = []
        for start, tag, attrs, more in entries:
            node = DieNode(start, tag, attrs, cu)
            node.parent = parent
            if more is not None:
                node._more = (self, more)
            out.append(node)
        return out

    def _read_children(self, parent, pos):
        """[(offset, tag, attrs, where its children start or None)] of ``parent``'s children."""
        cu = parent.cu
        info = self.secs.view(".debug_info")
        out = []
        if info is None:
            return out
        end = cu.end
        read_die = self._read_die
        try:
            while pos < end:
                start = pos
                die, pos = read_die(info, pos, cu, ALL_ATTRS)
                if die is None:
                    break
                tag, has_children, attrs = die
                out.append((start, tag, attrs, pos if has_children else None))
                if has_children:
                    pos = self._past_children(info, pos, cu, attrs)
        except (IndexError, KeyError, struct.error, ValueError, DwarfError):
            pass
        return out

    def _past_children(self, info, pos, cu, attrs):
        """Where the DIE after the one whose children start at ``pos`` begins: its
        DW_AT_sibling when that points past ``pos`` within the unit, else the end of its
        children found by skipping their attributes (no value is decoded)."""
        sib = attrs.get(AT_sibling)
        if sib is not None and isinstance(sib[1], int) and pos < sib[1] <= cu.end:
            return sib[1]
        plans = self._plans_of(cu)
        abbrevs = cu._abbrevs
        end = cu.end
        depth = 1
        n = 0
        while True:
            code, pos = uleb(info, pos)
            if code == 0:
                depth -= 1
                if depth == 0:
                    break
                continue
            n += 1
            if abbrevs[code][1]:
                sib = self._sibling(info, pos, cu, code, plans)
                if sib is not None and pos < sib <= end:
                    pos = sib
                    continue
                depth += 1
            pos = self._skip_die(info, pos, cu, code, plans)
        self.counts["dies_skipped"] += n
        return pos

    def die_ranges(self, cu, attrs):
        """[(lo, hi)] of a DIE from its DW_AT_low_pc/high_pc or DW_AT_ranges ([] if empty)."""
        if cu.owner is not None and cu.owner is not self:
            return cu.owner.die_ranges(cu, attrs)
        return self._die_ranges(cu, attrs)

    def unit_attrs(self, cu):
        """Every attribute of the unit's own DIE (DW_AT_loclists_base and the like)."""
        r = self.die_full(cu, cu.die_off)
        return r[2] if r is not None else {}
