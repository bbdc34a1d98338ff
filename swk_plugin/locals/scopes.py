"""Functions, inline scopes and the variables GDB lists for them.

GDB's ``info locals`` order is an artifact of how it builds blocks (dwarf2/read.c +
buildsym.c), so this module rebuilds GDB's block tree for a function, once, the same way:

* a DW_TAG_subprogram / DW_TAG_inlined_subroutine with pc bounds makes a *function block*;
  its symbols keep DIE order (a linear dictionary);
* a DW_TAG_lexical_block with pc bounds makes a *lexical block* if it ends up with any
  symbol; its symbols sit in a hashed dictionary of ``n // 5 + 1`` buckets and are listed
  bucket by bucket (DIE order within a bucket) -- which is the order ``info locals`` shows;
* a lexical block *without* pc attributes adds its children to the enclosing block;
  one with invalid bounds (and an inlined subroutine without bounds) is dropped whole;
* children of the DW_AT_abstract_origin that no concrete child refers to are added after
  the concrete ones (inherit_abstract_dies), which is how optimized-out parameters and
  locals of inlined and cloned functions still show up.

Every symbol counts for the bucket number (typedefs, struct tags, labels, enumerators,
extern declarations), even those ``info locals`` does not print.
"""
import threading

from ..arch import UnsupportedArchitecture, from_elf_machine
from ..dwarf.lines import module_lines
from . import dies
from .types import TypeReader
from .dwarfconst import *  # noqa: F401,F403

__all__ = ["Function", "Scope", "Variable", "function_at", "scopes_at", "frame_variables",
           "engine_for"]

_BLOCK_TAGS = (TAG_lexical_block, TAG_try_block, TAG_catch_block)
_TYPE_SYM_TAGS = (TAG_typedef, TAG_base_type, TAG_subrange_type, TAG_generic_subrange)
_AGG_TAGS = (TAG_structure_type, TAG_class_type, TAG_union_type)
_CONST_BYTES_FORMS = frozenset((0x09, 0x0a, 0x03, 0x04, 0x18, 0x08, 0x0e, 0x1e, 0x1a, 0x1f,
                                0x25, 0x26, 0x27, 0x28))


# --- GDB's symbol hashing (dictionary.c / cp-support.c) -------------------------------------

def _hash_next(h, c):
    if 65 <= c <= 90:
        c += 32
    return (h * 67 + c - 113) & 0xFFFFFFFF


def _hash_iw(s):
    """msymbol_hash_iw: hash ignoring spaces, up to a '('."""
    h = 0
    for ch in s.encode("utf-8", "replace"):
        if ch == 0x28:
            break
        if ch == 0x20:
            continue
        h = _hash_next(h, ch)
    return h


def _hash_c(s0):
    """default_search_name_hash (GDB's dict_hash), for C symbols."""
    s = s0.encode("utf-8", "replace")
    i = 0
    if s[:1] == b"_":
        if s.startswith(b"_ada_"):
            i = 5
        else:
            return _hash_iw(s0)
    h = 0
    n = len(s)
    while i < n:
        c = s[i]
        if c in (0x24, 0x2E, 0x58):                 # '$' '.' 'X'
            if i == 0:
                return _hash_iw(s0)
            return h
        if c in (0x20, 0x28):
            return _hash_iw(s0)
        if c == 0x5F and i + 1 < n and s[i + 1] == 0x5F and i != 0:
            c2 = s[i + 2] if i + 2 < n else 0
            if (c2 < 0x61 or c2 > 0x7A) and c2 != 0x4F:
                return h
            h = 0
            i += 2
            continue
        if c == 0x54 and s[i:] == b"TKB":
            return h
        h = _hash_next(h, c)
        i += 1
    return h


def _hash_cplus(s):
    """cp_search_name_hash, for C++ symbols."""
    if s.startswith("::"):
        s = s[2:]
    depth = 0
    last = -1
    for i, ch in enumerate(s):             # cp_entire_prefix_len, roughly: the last top-level "::"
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif ch == ":" and depth == 0 and s[i:i + 2] == "::":
            last = i
    if last >= 0:
        s = s[last + 2:]
    h = 0
    b = s.encode("utf-8", "replace")
    i = 0
    while i < len(b):
        c = b[i]
        if c == 0x20:
            i += 1
            continue
        if c == 0x28:
            break
        if c == 0x5B and b[i + 1:i + 5] == b"abi:" and b[i + 5:i + 6] != b":":
            break
        h = _hash_next(h, c)
        i += 1
    return h


# --- the public objects -------------------------------------------------------------------

class Function:
    """The DW_TAG_subprogram holding an address (spec: getFunctionForFrame).

    ``name`` is what GDB's bt shows; ``low``/``high`` span its ``ranges`` (unbiased);
    ``die`` is the DIE's .debug_info offset; ``frame_base`` the DW_AT_frame_base
    attribute as (form, value) or None.
    """
    __slots__ = ("engine", "module", "cu", "die", "name", "ranges", "low", "high", "entry_pc",
                 "frame_base", "block", "_lock", "_call_sites")

    def __init__(self, engine, cu, off, name, ranges):
        self.engine = engine
        self.module = engine.module
        self.cu = cu
        self.die = off
        self.name = name
        self.ranges = ranges
        self.low = min(lo for lo, _ in ranges)
        self.high = max(hi for _, hi in ranges)
        self.entry_pc = ranges[0][0] if ranges else self.low
        self.frame_base = None
        self.block = None
        self._lock = threading.Lock()
        self._call_sites = None

    def contains(self, addr):
        return any(lo <= addr < hi for lo, hi in self.ranges)

    def __repr__(self):
        return f"<Function {self.name} 0x{self.low:x}-0x{self.high:x}>"


class Scope:
    """One level of the inline chain at an address: an inlined subroutine, or the function.

    For an inline scope ``call_file``/``call_line`` say where it was called from, i.e. the
    line GDB shows for the frame just outside it.
    """
    __slots__ = ("kind", "name", "call_file", "call_line", "call_column", "function", "block", "die", "ranges")

    def __init__(self, kind, name, function, block):
        self.kind = kind
        self.name = name
        self.function = function
        self.block = block
        self.die = block.node.offset
        self.ranges = block.ranges
        self.call_file = None
        self.call_line = None
        self.call_column = None

    def __repr__(self):
        return f"<Scope {self.kind} {self.name}>"


class Variable:
    """A parameter or local variable GDB would list; ``die`` is the DIE the symbol came from
    (a concrete DIE, or the abstract origin's for variables only the origin describes)."""
    __slots__ = ("name", "is_param", "die", "scope", "node", "loc_class", "block", "_type")

    def __init__(self, name, is_param, node, scope, loc_class, block=None):
        self.name = name
        self.is_param = is_param
        self.node = node
        self.die = node.offset
        self.scope = scope
        self.loc_class = loc_class     # "computed" | "optimized_out" | "const" | "enumerator"
        self.block = block             # the (GDB) block declaring it
        self._type = None

    def in_scope(self, addr):
        """Whether unbiased ``addr`` lies in the block that declares the variable (the
        spec's EOUTOFSCOPE test): its lexical block, inline body or function."""
        b = self.block if self.block is not None else self.scope.block
        return b.contains(addr)

    @property
    def tag(self):
        """The DWARF tag of the symbol's DIE (variable, formal_parameter, enumerator, label)."""
        return self.node.tag

    @property
    def type(self):
        if self._type is None:
            eng = self.scope.function.engine
            if self.loc_class == "enumerator":
                self._type = eng.types.type_at(self.node.cu, self.node.parent.offset) \
                    if self.node.parent is not None else eng.types.type_of(self.node)
            else:
                self._type = eng.types.type_of(self.node)
        return self._type

    def __repr__(self):
        return f"<Variable {'arg' if self.is_param else 'local'} {self.name}>"


# --- GDB's blocks ----------------------------------------------------------------------------

class _Sym:
    __slots__ = ("name", "node", "cat", "loc_class")

    def __init__(self, name, node, cat, loc_class=None):
        self.name = name
        self.node = node
        self.cat = cat               # "arg" | "local" | "other"
        self.loc_class = loc_class


class _Block:
    """One of GDB's blocks, filled (its symbols, its blocks) only when first asked for: a
    walk needs the blocks on the way to its pcs, not the hundreds of inlined calls and
    lexical blocks a big function holds (``_PyEval_EvalFrameDefault``: 1,100 and 480).

    A lexical block GDB keeps only when it ends up with a symbol (else its blocks take its
    place in its parent) stays *undecided* in its parent's list until a walk's pc lies in
    its extent, or until someone asks for every block (``children``); ``child_at`` passes
    over one whose extent misses the pc, as its blocks lie within it (GDB clamps an inner
    block that does not to its outer one)."""
    __slots__ = ("kind", "node", "ranges", "_syms", "_children", "parent", "cplus", "_order",
                 "_fill", "_busy", "undecided", "lock")

    def __init__(self, kind, node, ranges, parent, lock):
        self.kind = kind             # "function" | "inline" | "lexical"
        self.node = node
        self.ranges = ranges
        self._syms = []
        self._children = []
        self.parent = parent
        self.cplus = node.cu.language in LANG_CPP
        self._order = None
        self._fill = None            # the _BlockBuilder that fills it, until it has
        self._busy = False
        self.undecided = False       # a lexical block not yet known to be kept (see above)
        self.lock = lock             # its function's engine's: one block is filled at a time

    @property
    def syms(self):
        if self._fill is not None:
            self._filled()
        return self._syms

    @property
    def children(self):
        """Every block of this one, in GDB's order (undecided ones decided)."""
        kids = self.children_read()
        if any(c.undecided for c in kids):
            with self.lock:
                i = 0
                while i < len(kids):
                    if kids[i].undecided:
                        self._decide(i)
                    else:
                        i += 1
        return kids

    def children_read(self):
        """The block's list of blocks with undecided lexical blocks left in it."""
        if self._fill is not None:
            self._filled()
        return self._children

    def child_at(self, addr, inline=True):
        """The first of the block's blocks (GDB's order) holding ``addr``; only lexical
        blocks if not ``inline``; None if none does."""
        kids = self.children_read()
        i = 0
        while i < len(kids):
            c = kids[i]
            if c.undecided:
                if c.in_hull(addr):
                    with self.lock:
                        if c.undecided and i < len(kids) and kids[i] is c:
                            self._decide(i)
                    continue
                i += 1
                continue
            if (inline or c.kind != "inline") and c.contains(addr):
                return c
            i += 1
        return None

    def in_hull(self, addr):
        """Whether ``addr`` lies between the block's lowest and highest address."""
        return min(lo for lo, _hi in self.ranges) <= addr < max(hi for _lo, hi in self.ranges)

    def _decide(self, i):
        """Keep undecided block ``i`` if it has a symbol, else put its blocks in its place."""
        c = self._children[i]
        c.undecided = False
        if c._fill is not None:
            c._filled()
        if not c._syms:
            for g in c._children:                            # no block: its blocks move up
                g.parent = self
            self._children[i:i + 1] = c._children

    def _filled(self):
        builder = self._fill
        if builder is None:
            return
        with self.lock:              # another thread filling it: wait for it
            if self._fill is None or self._busy:
                return               # this thread is filling it (its own lists, as they grow)
            self._busy = True
            try:
                builder.fill(self)
            except Exception:        # malformed DWARF: the symbols and blocks read before it
                pass
            finally:
                self._fill = None
                self._busy = False

    def contains(self, addr):
        for lo, hi in self.ranges:
            if lo <= addr < hi:
                return True
        return False

    def ordered(self):
        """The block's symbols in GDB's dictionary iteration order."""
        if self._order is None:
            if self.kind != "lexical":
                self._order = list(self.syms)
            else:
                nb = len(self.syms) // 5 + 1
                h = _hash_cplus if self.cplus else _hash_c
                self._order = sorted(self.syms, key=lambda s: h(s.name) % nb)
        return self._order


class _BlockBuilder:
    """read_func_scope / read_lexical_block_scope / inherit_abstract_dies, for one function."""

    def __init__(self, engine):
        self.e = engine
        self.d = engine.d

    def bounds(self, node):
        """None: no pc attributes; []: invalid; else the ranges (dwarf2_get_pc_bounds)."""
        a = node.attrs
        if AT_ranges not in a and not (AT_low_pc in a and AT_high_pc in a):
            return None
        return [r for r in self.d.die_ranges(node.cu, a) if r[0] != 0]   # 0: a dropped range

    def func_block(self, node, parent, kind):
        ranges = self.bounds(node)
        if not ranges:
            return None
        blk = _Block(kind, node, ranges, parent, self.e._lock)
        blk._fill = self              # filled when its symbols or blocks are asked for
        if kind == "function":
            blk._filled()
        return blk

    def fill(self, blk):
        """The block's symbols and blocks, from its DIE's children and its abstract origin's."""
        node = blk.node
        syms = blk._syms
        in_func = blk.kind != "lexical"
        if blk.kind == "inline":
            # the inlined function's own symbol lands in its block (list_in_scope after push)
            syms.append(_Sym(self._name(node) or "", node, "other"))
        self.children(node, blk, syms, in_func)
        self.inherit(node, blk, syms, in_func)

    def lexical_block(self, node, parent, syms, in_func):
        ranges = self.bounds(node)
        if ranges is None:
            self.children(node, parent, syms, in_func)      # no pc: flatten into the parent
            return
        if not ranges:
            return
        blk = _Block("lexical", node, ranges, parent, self.e._lock)
        blk._fill = self
        blk.undecided = True          # kept if it has a symbol: decided when a pc needs it
        parent._children.append(blk)

    def children(self, node, blk, syms, in_func):
        for c in node.children:
            self.process(c, blk, syms, in_func)

    def process(self, c, blk, syms, in_func):
        tag = c.tag
        if tag == TAG_inlined_subroutine:
            sub = self.func_block(c, blk, "inline")
            if sub is not None:
                blk._children.append(sub)
        elif tag in _BLOCK_TAGS:
            self.lexical_block(c, blk, syms, in_func)
        elif tag == TAG_variable:
            self.variable(c, syms)
        elif tag == TAG_formal_parameter:
            nm = self._name(c)
            if nm is not None:
                syms.append(_Sym(nm, c, "arg" if in_func else "local", self._loc_class(c)))
        elif tag == TAG_enumeration_type:
            for e in c.children:
                if e.tag == TAG_enumerator:
                    nm = self._name(e)
                    if nm is not None:
                        syms.append(_Sym(nm, e, "local", "enumerator"))
                else:
                    self.process(e, blk, syms, in_func)
            nm = self._name(c)
            if nm is not None:
                syms.append(_Sym(nm, c, "other"))
        elif tag in _AGG_TAGS:
            a = c.attrs
            if AT_byte_size in a or not a.get(AT_declaration, (0, False))[1] or AT_signature in a:
                nm = self._name(c)
                if nm is not None:
                    syms.append(_Sym(nm, c, "other"))
            for m in c.children:
                if m.tag not in (TAG_member, TAG_variable, TAG_inheritance, TAG_subprogram,
                                 TAG_template_type_param, TAG_template_value_param):
                    self.process(m, blk, syms, in_func)
        elif tag in _TYPE_SYM_TAGS:
            nm = self._name(c)
            if nm is not None:
                syms.append(_Sym(nm, c, "other"))
        elif tag == TAG_label:
            nm = self._name(c)
            if nm is not None:
                # a label without an address is LOC_OPTIMIZED_OUT, which info locals lists
                if AT_low_pc in c.attrs:
                    syms.append(_Sym(nm, c, "other"))
                else:
                    syms.append(_Sym(nm, c, "local", "optimized_out"))
        # subprograms (nested functions / declarations), call sites, types without
        # symbols, imported modules: nothing in this block

    def variable(self, c, syms):
        d = self.d
        nm = self._name(c)
        if nm is None:
            return
        external = dies.flag(d, c, AT_external)
        cv = dies.chain_attr(d, c, AT_const_value)
        if cv is not None:
            if not external:
                # block / string / data16 constants are LOC_CONST_BYTES: info locals skips them
                form = cv[1][0]
                listed = form not in _CONST_BYTES_FORMS and not isinstance(cv[1][1], (bytes, tuple))
                syms.append(_Sym(nm, c, "local" if listed else "other", "const"))
            return
        loc = dies.chain_attr(d, c, AT_location)
        if loc is not None:
            form, v = loc[1]
            # inside a function even DW_AT_external variables stay in the block's list
            if isinstance(v, (bytes, bytearray)):
                if len(v) == 0:
                    syms.append(_Sym(nm, c, "local", "optimized_out"))
                    return
                asz = c.cu.addr_size
                if v[0] == 0x03 and len(v) == 1 + asz and not any(v[1:]):   # DW_OP_addr 0
                    return                                    # a static the linker dropped
            syms.append(_Sym(nm, c, "local", "computed"))
            return
        if external and dies.chain_attr(d, c, AT_type) is not None:
            syms.append(_Sym(nm, c, "other"))                 # LOC_UNRESOLVED: not listed
            return
        decl = dies.flag(d, c, AT_declaration) and dies.chain_attr(d, c, AT_specification) is None
        if not decl:
            syms.append(_Sym(nm, c, "local", "optimized_out"))

    def _loc_class(self, c):
        d = self.d
        if dies.chain_attr(d, c, AT_const_value) is not None:
            return "const"
        loc = dies.chain_attr(d, c, AT_location)
        if loc is None:
            return "optimized_out"
        v = loc[1][1]
        if isinstance(v, (bytes, bytearray)) and len(v) == 0:
            return "optimized_out"
        return "computed"

    def _name(self, node):
        return dies.chain_string(self.d, node, AT_name)

    def inherit(self, node, blk, syms, in_func):
        a = node.attrs.get(AT_abstract_origin)
        if a is None or dies.ref(a[1]) is None:
            return
        origin = self.e.tree(node.cu, a[1])
        if origin is None:
            return
        kids = node.children
        okids = origin.children
        iso = len(kids) == len(okids) and all(k.tag == o.tag for k, o in zip(kids, okids))
        origin_offs = {o.offset for o in okids}
        referenced = set()
        for i, ch in enumerate(kids):
            if ch.tag in (TAG_call_site, TAG_GNU_call_site):
                continue
            target = ch
            hops = 0
            while hops < 8:
                ao = target.attrs.get(AT_abstract_origin)
                if ao is None or dies.ref(ao[1]) is None:
                    break
                nxt = dies.node_at(self.d, target.cu, ao[1])
                if nxt is None:
                    break
                target = nxt
                hops += 1
            if target is ch and iso and ch.tag == TAG_lexical_block:
                target = okids[i]
            if target is not ch and target.offset in origin_offs:
                referenced.add(target.offset)
        for o in okids:
            if o.offset not in referenced:
                self.process(o, blk, syms, in_func)


# --- the per-module engine ------------------------------------------------------------------

def _long_double_format(module):
    """The long double format of the module's architecture, found by its ELF machine, class
    and byte order (ppc64 is not ppc64le); where swk knows no such architecture, that of
    one of the machine's (a format is the machine's ABI's, whatever the byte order); x87
    where the machine is unknown."""
    for shape in ((module.elfclass, module.byteorder), (None, None)):
        try:
            return from_elf_machine(module.machine, *shape).long_double_format
        except (UnsupportedArchitecture, AttributeError):
            continue
    return "x87"


class _Engine:
    """Everything the locals engine caches for one module."""

    def __init__(self, module, lines):
        self.module = module
        self.lines = lines
        self.d = lines.dwarf
        self.types = TypeReader(self.d, lines, _long_double_format(module))
        self._funcs = {}
        self._heads = {}            # DIE offset -> Function without its scope tree (function_head_at)
        self._fn_at = {}            # address -> Function (a walk asks for the same pcs again)
        self._scopes_memo = {}      # address -> [Scope]
        self._lock = threading.RLock()

    def tree(self, cu, off):
        """The DIE at ``off``, its subtree read as far as it is walked (dwarf/dies.die_node)."""
        return self.d.die_node(cu, off)

    def function_at(self, addr):
        """The Function holding unbiased addr; remembered per address (a walk asks for the
        same return addresses again and again)."""
        memo = self._fn_at
        fn = memo.get(addr, memo)
        if fn is memo:
            if len(memo) > 65536:
                memo.clear()
            fn = memo[addr] = self._function_at(addr)
        return fn

    def _function_at(self, addr):
        d = self.d
        try:
            cu = d.cu_for(addr)
        except Exception:
            cu = None
        if cu is None:
            return None
        best = d.function_die_at(cu, addr)
        if best is None:
            return None
        return self.function(cu, best)

    def function_head_at(self, addr):
        """The Function holding unbiased addr with its bounds, name and call sites only (no
        scope tree, fn.block None) unless the whole one is made already: a tail-call search
        visits functions no frame of the stack is in, and needs no more of them."""
        d = self.d
        try:
            cu = d.cu_for(addr)
            off = d.function_die_at(cu, addr) if cu is not None else None
        except Exception:
            return None
        if off is None:
            return None
        fn = self._funcs.get(off) or self._heads.get(off)
        if fn is None:
            node = self.tree(cu, off)
            ranges = _BlockBuilder(self).bounds(node) if node is not None else None
            if not ranges:
                return None
            fn = self._heads[off] = Function(self, node.cu, off, self.lines.func_name_of(node.cu, off), ranges)
        return fn

    def function(self, cu, off):
        fn = self._funcs.get(off)
        if fn is not None:
            return fn
        with self._lock:
            fn = self._funcs.get(off)
            if fn is not None:
                return fn
            node = self.tree(cu, off)
            if node is None:
                return None
            builder = _BlockBuilder(self)
            ranges = builder.bounds(node)
            if not ranges:
                return None
            fn = Function(self, node.cu, off, self.lines.func_name_of(node.cu, off), ranges)
            fb = dies.chain_attr(self.d, node, AT_frame_base)
            fn.frame_base = fb[1] if fb is not None else None
            # BLOCK_ENTRY_PC: the start of a contiguous function, else of its first range
            fn.entry_pc = ranges[0][0]
            fn.block = builder.func_block(node, None, "function")
            self._funcs[off] = fn
            return fn

    def scopes_at(self, addr):
        memo = self._scopes_memo
        found = memo.get(addr)
        if found is None:
            if len(memo) > 65536:
                memo.clear()
            found = memo[addr] = self._scopes_at(addr)
        return list(found)

    def _scopes_at(self, addr):
        fn = self.function_at(addr)
        if fn is None or fn.block is None:
            return []
        path = [fn.block]
        b = fn.block
        while True:
            nxt = b.child_at(addr)
            if nxt is None:
                break
            path.append(nxt)
            b = nxt
        out = []
        for blk in reversed(path):
            if blk.kind == "function":
                out.append(Scope("function", fn.name, fn, blk))
            elif blk.kind == "inline":
                sc = Scope("inline", self.lines.func_name_of(blk.node.cu, blk.node.offset), fn, blk)
                cf = blk.node.attrs.get(AT_call_file)
                if cf is not None and isinstance(cf[1], int):
                    sc.call_file = self.d.file_name(blk.node.cu, cf[1])
                cl = blk.node.attrs.get(AT_call_line)
                if cl is not None and isinstance(cl[1], int):
                    sc.call_line = cl[1]
                cc = blk.node.attrs.get(AT_call_column)
                if cc is not None and isinstance(cc[1], int):
                    sc.call_column = cc[1]           # LLDB's frame lines end in it (GDB's do not)
                out.append(sc)
        return out

    def frame_variables(self, scope, addr):
        path = [scope.block]
        b = scope.block
        while True:
            nxt = b.child_at(addr, inline=False)
            if nxt is None:
                break
            path.append(nxt)
            b = nxt
        args = [Variable(s.name, True, s.node, scope, s.loc_class, scope.block)
                for s in scope.block.ordered() if s.cat == "arg"]
        locs = []
        for blk in reversed(path):
            for s in blk.ordered():
                if s.cat == "local":
                    locs.append(Variable(s.name, False, s.node, scope, s.loc_class, blk))
        return args, locs


def engine_for(module):
    """The module's locals engine (built once, kept in the module's cache; None without DWARF)."""
    return module.cache.value("locals-engine", lambda: _new_engine(module))


def _new_engine(module):
    lines = module_lines(module)
    return _Engine(module, lines) if lines is not None and lines.dwarf is not None else None


def function_at(module, addr):
    """The DW_TAG_subprogram containing unbiased ``addr`` (spec: getFunctionForFrame), or None."""
    eng = engine_for(module)
    if eng is None:
        return None
    try:
        return eng.function_at(addr)
    except Exception:
        return None


def unit_at(module, addr):
    """Whether a compilation unit of the module's DWARF covers unbiased ``addr`` (GDB then
    has a symbol table there, function or not: "No locals." rather than "No symbol
    table info available.")."""
    eng = engine_for(module)
    if eng is None:
        return False
    try:
        return eng.d.cu_for(addr) is not None
    except Exception:
        return False


def scopes_at(module, addr):
    """Innermost first: the inlined subroutines containing unbiased ``addr``, then the function."""
    eng = engine_for(module)
    if eng is None:
        return []
    try:
        return eng.scopes_at(addr)
    except Exception:
        return []


def frame_variables(scope, addr):
    """(args, locals) of ``scope`` at unbiased ``addr``, in the order ``info args`` and
    ``info locals`` print them.  A Function stands for its own (outermost) scope."""
    if isinstance(scope, Function):
        fn = scope
        if fn.block is None:
            return [], []
        scope = Scope("function", fn.name, fn, fn.block)
    return scope.function.engine.frame_variables(scope, addr)
