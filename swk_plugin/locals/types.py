"""Types of local variables, read from DWARF and named the way GDB's C type printer names them.

A Type mirrors what GDB builds from a type DIE: a kind ("int", "char", "bool", "float",
"complex", "enum", "ptr", "ref", "rref", "array", "struct", "union", "typedef", "func",
"memberptr", "void"), the qualifiers GDB keeps as instance flags (const, volatile,
restrict, _Atomic), and the parts the value printer needs.  Types are read once per
(module, DIE) and shared.  ``type_name`` prints what ``whatis`` prints.
"""
from ..dwarf.encoding import uleb128
from ..dwarf.typeprint import TypePrinter as _TypePrinter, canon as _canon
from . import dies
from .dwarfconst import *  # noqa: F401,F403  (DW_* numbers)

__all__ = ["Type", "Field", "TypeReader", "type_name", "strip_typedefs"]

_INT_KINDS = frozenset(("int", "char", "bool", "enum"))


def _canon_type(name):
    """GDB's canonical spelling of a DWARF type name ("long int" -> "long"); GDB's
    parser does not know __int128, so such names stay as the compiler wrote them."""
    if "__int128" in name:
        return name
    return _canon(name)


class Field:
    """A struct/union/class member as GDB lists it: base classes first, then data members
    (static ones included; GDB prints them as "static name = value").  ``bitpos`` counts
    as DW_AT_data_bit_offset does: from the first byte's least significant bit on a
    little-endian target, from its most significant bit on a big-endian one."""
    __slots__ = ("name", "type", "bitpos", "bitsize", "is_static", "is_base", "is_virtual",
                 "artificial", "die", "loc_expr", "owner")

    def __init__(self, name, type_, bitpos=0, bitsize=0):
        self.name = name
        self.type = type_
        self.bitpos = bitpos
        self.bitsize = bitsize
        self.is_static = False
        self.is_base = False
        self.is_virtual = False
        self.artificial = False
        self.die = None
        self.loc_expr = None         # virtual bases: DW_AT_data_member_location expression
        self.owner = None            # the struct/class Type holding the field

    def __repr__(self):
        return f"<Field {self.name} @{self.bitpos}:{self.bitsize}>"


class Type:
    """One type; see the module docstring for the kinds."""
    __slots__ = ("kind", "name", "size", "target", "const", "volatile", "restrict", "atomic",
                 "unsigned", "_fields", "_load", "enumerators", "count", "dyn_count", "params", "varargs",
                 "prototyped", "flag_enum", "declared_class", "cplus", "float_format", "vector",
                 "self_type", "die", "stub", "_variants", "__weakref__")

    def __init__(self, kind, name=None, size=0, target=None):
        self.kind = kind
        self.name = name
        self.size = size
        self.target = target
        self.const = self.volatile = self.restrict = self.atomic = False
        self.unsigned = False
        self._fields = None
        self._load = None            # a struct's members, read when first asked for
        self.enumerators = None
        self.count = None            # arrays: number of elements (None: unknown / flexible)
        self.dyn_count = None        # arrays: (kind, cu, value) of a bound read from the frame
        self.params = None
        self.varargs = False
        self.prototyped = False
        self.flag_enum = False
        self.declared_class = False
        self.cplus = False
        self.float_format = None     # "ieee32", "ieee64", "x87", "ieee128"
        self.vector = False
        self.self_type = None
        self.die = None
        self.stub = False
        self._variants = None        # qualified copies made while this type was being read

    def with_cv(self, const=False, volatile=False, restrict=False, atomic=False):
        """A copy with more qualifiers (GDB's make_cv_type)."""
        if (const <= self.const and volatile <= self.volatile and restrict <= self.restrict
                and atomic <= self.atomic):
            return self
        t = Type.__new__(Type)
        for s in Type.__slots__:
            if s != "__weakref__":
                setattr(t, s, getattr(self, s))
        t.const = self.const or const
        t.volatile = self.volatile or volatile
        t.restrict = self.restrict or restrict
        t.atomic = self.atomic or atomic
        t._variants = None
        if self.kind in ("struct", "union", "enum"):
            # a self-referencing aggregate may be qualified before its members are read
            if self._variants is None:
                self._variants = []
            self._variants.append(t)
        return t

    @property
    def fields(self):
        """A struct's or union's members (None for other kinds), read from DWARF when first
        asked for: a frame line needs a pointer's target's kind, not its members (a big
        program's structs reach thousands of others through theirs)."""
        load = self._load
        if load is not None:
            self._load = None
            self._fields = load()
        return self._fields

    @fields.setter
    def fields(self, value):
        self._fields, self._load = value, None

    def _complete(self):
        """Give the qualified copies the members read after they were made."""
        for v in self._variants or ():
            v._fields, v._load, v.enumerators, v.size, v.stub = (self._fields, self._load, self.enumerators,
                                                                  self.size, self.stub)
            v.flag_enum, v.unsigned, v.declared_class = self.flag_enum, self.unsigned, self.declared_class
            v._complete()

    def strip(self):
        """check_typedef: the type under typedefs, keeping the qualifiers."""
        return strip_typedefs(self)

    @property
    def is_scalar(self):
        """GDB's val_print_scalar_type_p: not an aggregate (after typedefs and references)."""
        t = strip_typedefs(self)
        while t.kind in ("ref", "rref"):
            t = strip_typedefs(t.target)
        return t.kind not in ("struct", "union", "array")

    def __repr__(self):
        return f"<Type {type_name(self)!r} {self.kind} size={self.size}>"


def strip_typedefs(t):
    cv = (t.const, t.volatile, t.restrict, t.atomic)
    n = 0
    while t.kind == "typedef" and t.target is not None and n < 64:
        t = t.target
        cv = (cv[0] or t.const, cv[1] or t.volatile, cv[2] or t.restrict, cv[3] or t.atomic)
        n += 1
    if cv != (t.const, t.volatile, t.restrict, t.atomic):
        t = t.with_cv(*cv)
    return t


_VOID = Type("void", "void", 1)


class TypeReader:
    """Reads type DIEs of one module into Types (cached by DIE offset)."""

    def __init__(self, dwarf, lines=None, long_double="x87"):
        self.d = dwarf
        self.lines = lines
        #: The module's architecture's long double format ("x87" or "ieee128").
        self.long_double = long_double
        self._cache = {}
        self._printer = None
        self._sigs = None
        self.addr_size = dwarf.default_addr_size

    # --- entry points ----------------------------------------------------------------------
    def type_of(self, node):
        """The type of a variable/parameter/member DIE (following its abstract origin)."""
        r = dies.chain_attr(self.d, node, AT_type)
        if r is None:
            return _VOID
        return self._ref_type(r[0].cu, r[1], 0)

    def _ref_type(self, cu, attr, depth):
        """The Type a DW_AT_type value names: a DIE offset, or a type-unit signature."""
        form, v = attr
        if form == 0x20:                                   # DW_FORM_ref_sig8
            off = self._signature(v)
        else:
            off = dies.ref(v)
        if off is None:
            return Type("void", "<unknown type>", 0)
        return self.type_at(cu, off, depth + 1)

    def _signature(self, sig):
        """The type DIE of a DWARF 5 type unit (DW_UT_type) with this signature."""
        if self._sigs is None:
            self._sigs = {}
            info = self.d.secs.get(".debug_info")
            order = self.d.byteorder
            pos = 0
            n = len(info) if info is not None else 0
            try:
                while pos + 11 <= n:
                    length = int.from_bytes(info[pos:pos + 4], order)
                    p, offsz = pos + 4, 4
                    if length == 0xFFFFFFFF:
                        length = int.from_bytes(info[p:p + 8], order)
                        p, offsz = p + 8, 8
                    end = p + length
                    version = int.from_bytes(info[p:p + 2], order)
                    if version >= 5 and info[p + 2] in (2, 6):
                        q = p + 4 + offsz
                        sg = int.from_bytes(info[q:q + 8], order)
                        toff = int.from_bytes(info[q + 8:q + 8 + offsz], order)
                        self._sigs[sg] = pos + toff
                    if end <= pos:
                        break
                    pos = end
            except (IndexError, ValueError):
                pass
        return self._sigs.get(sig)

    def type_at(self, cu, off, depth=0):
        t = self._cache.get(off)
        if t is not None:
            return t
        if depth > 60:
            return Type("void", "<recursive type>", 0)
        try:
            t = self._read(cu, off, depth)
        except RecursionError:
            t = Type("void", "<recursive type>", 0)
        return t

    # --- reading -----------------------------------------------------------------------------
    def _cplus(self, cu):
        return cu.language in LANG_CPP

    def _name(self, cu, attrs):
        a = attrs.get(AT_name)
        return self.d.string(cu, a[1]) if a is not None else None

    def _target(self, cu, attrs, depth):
        a = attrs.get(AT_type)
        if a is None:
            return _VOID
        return self._ref_type(cu, a, depth)

    def _qualified(self, cu, off, name, attrs=None):
        """Named C/C++ types: canonicalized like GDB, C++ ones with their scope prefix (taken
        where a DW_AT_specification declares them, as in type units)."""
        if name is None:
            return None
        name = _canon_type(name)
        if self._cplus(cu):
            if self._printer is None:
                self._printer = _TypePrinter(self.d)
            spec = attrs.get(AT_specification) if attrs else None
            where = (cu, spec[1]) if spec is not None and dies.ref(spec[1]) is not None else (cu, off)
            try:
                pre = self._printer.scope_prefix(*where)
            except Exception:
                pre = ""
            if pre:
                name = pre + "::" + name
        return name

    def _read(self, cu, off, depth):
        d = self.d
        node = d.die_tree(cu, off)
        if node is None:
            return Type("void", "<bad type>", 0)
        tcu, tag, attrs = node.cu, node.tag, node.attrs
        cache = self._cache
        sig = attrs.get(AT_signature)
        if sig is not None:                  # a declaration whose definition is in a type unit
            toff = self._signature(sig[1])
            if toff is not None and toff != off:
                t = self.type_at(tcu, toff, depth + 1)
                cache[off] = t
                return t
        bs = attrs.get(AT_byte_size)
        size = bs[1] if bs is not None and isinstance(bs[1], int) else None
        if tag in (TAG_const_type, TAG_volatile_type, TAG_restrict_type, TAG_atomic_type):
            inner = self._target(tcu, attrs, depth)
            t = inner.with_cv(const=tag == TAG_const_type, volatile=tag == TAG_volatile_type,
                              restrict=tag == TAG_restrict_type, atomic=tag == TAG_atomic_type)
            if t is inner:
                t = inner.with_cv()
            cache[off] = t
            return t
        if tag in (TAG_pointer_type, TAG_reference_type, TAG_rvalue_reference_type):
            kind = {TAG_pointer_type: "ptr", TAG_reference_type: "ref",
                    TAG_rvalue_reference_type: "rref"}[tag]
            t = Type(kind, None, size or tcu.addr_size or self.addr_size)
            cache[off] = t                       # before the target: self-referencing structs
            t.target = self._target(tcu, attrs, depth)
            t.cplus = self._cplus(tcu)
            return t
        if tag == TAG_typedef:
            t = Type("typedef", self._qualified(tcu, off, self._name(tcu, attrs), attrs))
            cache[off] = t
            t.target = self._target(tcu, attrs, depth)
            t.size = strip_typedefs(t.target).size if t.target is not None else 0
            t.cplus = self._cplus(tcu)
            return t
        if tag in (TAG_structure_type, TAG_class_type, TAG_union_type):
            t = Type("union" if tag == TAG_union_type else "struct",
                     self._qualified(tcu, off, self._name(tcu, attrs), attrs), size or 0)
            t.declared_class = tag == TAG_class_type
            t.cplus = self._cplus(tcu)
            t.die = (tcu, off)
            cache[off] = t
            decl = bool(attrs.get(AT_declaration, (0, False))[1])
            if decl:
                t.fields = []
            else:
                t._load = self._field_loader(t, node, depth)
            # a declaration only (GDB would look for the definition by name elsewhere)
            t.stub = decl
            t._complete()
            return t
        if tag == TAG_enumeration_type:
            t = Type("enum", self._qualified(tcu, off, self._name(tcu, attrs), attrs), size or 0)
            t.cplus = self._cplus(tcu)
            cache[off] = t
            self._enum(t, node, depth)
            t._complete()
            return t
        if tag == TAG_array_type:
            return self._array(node, off, depth)
        if tag == TAG_subroutine_type:
            t = Type("func", None, 1)
            cache[off] = t
            t.target = self._target(tcu, attrs, depth)
            t.prototyped = bool(attrs.get(AT_prototyped, (0, False))[1])
            t.cplus = self._cplus(tcu)
            t.params = []
            for c in node.children:
                if c.tag == TAG_formal_parameter:
                    t.params.append(self.type_of(c))
                elif c.tag == TAG_unspecified_parameters:
                    t.varargs = True
            return t
        if tag == TAG_ptr_to_member_type:
            t = Type("memberptr", None, size or self.addr_size)
            cache[off] = t
            t.target = self._target(tcu, attrs, depth)
            ct = attrs.get(AT_containing_type)
            if ct is not None:
                t.self_type = self._ref_type(tcu, ct, depth)
            if strip_typedefs(t.target).kind == "func":
                t.size = 2 * self.addr_size
            return t
        if tag in (TAG_base_type, TAG_unspecified_type):
            t = self._base(tcu, attrs, size)
            cache[off] = t
            return t
        if tag in (TAG_subrange_type, TAG_generic_subrange):
            t = self._target(tcu, attrs, depth)
            cache[off] = t
            return t
        t = Type("void", f"<unknown type tag 0x{tag:x}>", size or 0)
        cache[off] = t
        return t

    def _base(self, cu, attrs, size):
        name = self._name(cu, attrs)
        cname = _canon_type(name) if name else name
        if AT_encoding not in attrs:
            # DW_TAG_unspecified_type (decltype(nullptr)): GDB reads it as an incomplete void
            t = Type("void", cname or "void", 0)
            t.stub = True
            return t
        enc = attrs[AT_encoding][1]
        size = size or 0
        if enc == ATE_boolean:
            t = Type("bool", cname, size)
            t.unsigned = True
        elif enc in (ATE_float,):
            t = Type("float", cname, size)
            t.float_format = {4: "ieee32", 8: "ieee64", 2: "ieee16"}.get(size)
            if size in (10, 12, 16):
                t.float_format = "ieee128" if name and "128" in name else self.long_double
        elif enc == ATE_decimal_float:
            t = Type("float", cname, size)
            t.float_format = {4: "bid32", 8: "bid64", 16: "bid128"}.get(size)
        elif enc == ATE_complex_float:
            t = Type("complex", cname, size)
            part = Type("float", None, size // 2)
            part.float_format = {4: "ieee32", 8: "ieee64", 2: "ieee16"}.get(size // 2)
            if size // 2 in (10, 12, 16):
                part.float_format = "ieee128" if name and "128" in name else self.long_double
            t.target = part
        elif enc == ATE_UTF:
            t = Type("char", cname, size)
            t.unsigned = True
        elif enc in (ATE_unsigned, ATE_unsigned_char, ATE_address):
            t = Type("int", cname, size)
            t.unsigned = True
        else:                                              # signed, signed_char, fixed, ...
            t = Type("int", cname, size)
        return t

    def _array(self, node, off, depth):
        tcu = node.cu
        attrs = node.attrs
        elem = self._target(tcu, attrs, depth)
        dims = []
        for c in node.children:
            if c.tag not in (TAG_subrange_type, TAG_generic_subrange):
                continue
            a = c.attrs
            lo = 0
            if AT_lower_bound in a:
                lv = dies.const_int(*a[AT_lower_bound])
                lo = lv if lv is not None else 0
            if AT_count in a:
                form, v = a[AT_count]
                if form in (0x13, 0x12, 0x11, 0x14, 0x15, 0x10) or form in FORM_block_forms:
                    dims.append((None, ("count", tcu, form, v)))
                else:
                    dims.append((dies.const_int(form, v), None))
            elif AT_upper_bound in a:
                form, v = a[AT_upper_bound]
                if form in (0x13, 0x12, 0x11, 0x14, 0x15, 0x10) or form in FORM_block_forms:
                    dims.append((None, ("upper", tcu, form, v, lo)))
                else:
                    ub = self._bound(tcu, c.attrs, form, v)
                    # GCC marks flexible/zero-length arrays with an upper bound of -1
                    dims.append((ub - lo + 1 if ub is not None and ub - lo + 1 >= 0 else 0, None))
            else:
                dims.append((None, None))
        if not dims:
            dims = [(None, None)]
        t = elem
        vector = bool(attrs.get(AT_GNU_vector))
        for count, dyn in reversed(dims):
            a_t = Type("array", None, 0, t)
            a_t.count = count
            a_t.dyn_count = dyn
            a_t.vector = vector
            esz = strip_typedefs(t).size
            a_t.size = (count or 0) * esz
            t = a_t
        bs = attrs.get(AT_byte_size)
        if bs is not None and isinstance(bs[1], int) and dims[0][0] is not None:
            t.size = bs[1]
        self._cache[off] = t
        return t

    def _bound(self, cu, attrs, form, v):
        """A constant subrange bound as GDB's read_subrange_type reads it: dataN forms are
        unsigned, sign-extended only when the subrange's base type is signed and the value
        has that type's sign bit (so ``int arr[200]``'s one-byte bound 199 stays 199)."""
        b = dies.const_int(form, v)
        if b is None or form not in (0x0b, 0x05, 0x06, 0x07):
            return b
        base = strip_typedefs(self._target(cu, attrs, 0)) if AT_type in attrs else None
        size = base.size if base is not None and base.kind == "int" and base.size else 8
        if base is not None and base.kind == "int" and base.unsigned:
            return b
        if b >> (size * 8 - 1) & 1:
            return b - (1 << (size * 8))
        return b

    def _enum(self, t, node, depth):
        tcu = node.cu
        attrs = node.attrs
        d = self.d
        if AT_type in attrs and t.size == 0:
            under = strip_typedefs(self._target(tcu, attrs, depth))
            t.size = under.size
        t.declared_class = bool(attrs.get(AT_enum_class, (0, False))[1])
        prefix = ""
        if t.cplus:
            if t.declared_class:
                prefix = (t.name + "::") if t.name else ""
            else:
                try:
                    if self._printer is None:
                        self._printer = _TypePrinter(d)
                    spec = attrs.get(AT_specification)
                    where = spec[1] if spec is not None and dies.ref(spec[1]) is not None \
                        else node.offset
                    pre = self._printer.scope_prefix(tcu, where)
                except Exception:
                    pre = ""
                prefix = pre + "::" if pre else ""
        vals = []
        unsigned = True
        flag = True
        mask = 0
        for c in node.children:
            if c.tag != TAG_enumerator:
                continue
            nm = self._name(tcu, c.attrs)
            cv = c.attrs.get(AT_const_value)
            # as GDB's constant_value: dataN forms are unsigned, sdata signed
            v = dies.const_int(cv[0], cv[1]) if cv is not None else 0
            if v is None:
                v = 0
            vals.append(((prefix + nm) if nm else nm, v))
            if v < 0:
                unsigned = False
                flag = False
            else:
                if bin(v).count("1") >= 2 or (mask & v):
                    flag = False
                else:
                    mask |= v
        if not vals:
            flag = False
        t.enumerators = vals
        t.unsigned = unsigned
        t.flag_enum = flag

    def _field_loader(self, t, node, depth):
        """A struct's members as fields reads them, read once for it and its qualified copies."""
        done = []

        def load():
            if not done:
                fields = self._fields(node, depth)
                for f in fields:
                    f.owner = t
                done.append(fields)
            return done[0]
        return load

    def _fields(self, node, depth):
        """GDB's field list: DW_TAG_inheritance first, then members (static ones included)."""
        bases, members = [], []
        d = self.d
        for c in node.children:
            tag = c.tag
            if tag == TAG_inheritance:
                ft = self.type_of(c)
                f = Field(None, ft, self._member_bitpos(c) or 0)
                f.is_base = True
                f.is_virtual = bool(c.attrs.get(AT_virtuality, (0, 0))[1])
                dml = c.attrs.get(AT_data_member_location)
                if dml is not None and isinstance(dml[1], (bytes, bytearray)) and \
                        self._member_bitpos(c) is None:
                    f.loc_expr = bytes(dml[1])
                f.name = type_name(ft)
                bases.append(f)
            elif tag == TAG_member or tag == TAG_variable:       # DWARF 5 static members
                nm = self._name(c.cu, c.attrs)
                ft = self.type_of(c)
                is_static = tag == TAG_variable or (
                    bool(c.attrs.get(AT_external, (0, False))[1])
                    or bool(c.attrs.get(AT_declaration, (0, False))[1])) and \
                    AT_data_member_location not in c.attrs and AT_data_bit_offset not in c.attrs
                f = Field(nm if nm is not None else "", ft)
                f.artificial = bool(c.attrs.get(AT_artificial, (0, False))[1])
                f.die = c
                if is_static:
                    f.is_static = True
                else:
                    bitpos = self._member_bitpos(c)
                    f.bitpos = bitpos or 0
                    bsz = c.attrs.get(AT_bit_size)
                    if bsz is not None and isinstance(bsz[1], int):
                        f.bitsize = bsz[1]
                        bo = c.attrs.get(AT_bit_offset)
                        if bo is not None and AT_data_bit_offset not in c.attrs:
                            # DWARF 2/3: offset of the field's MSB from its storage unit's
                            # MSB; bitpos counts from the LSB of the first byte on a
                            # little-endian target, from the MSB on a big-endian one (GDB's
                            # dwarf2_add_field): only the former needs the unit's size
                            if self.d.byteorder == "big":
                                f.bitpos = (bitpos or 0) + bo[1]
                            else:
                                bs = c.attrs.get(AT_byte_size)
                                unit = bs[1] if bs is not None else strip_typedefs(ft).size
                                f.bitpos = (bitpos or 0) + unit * 8 - bo[1] - f.bitsize
                members.append(f)
        return bases + members

    def _member_bitpos(self, c):
        a = c.attrs.get(AT_data_bit_offset)
        if a is not None and isinstance(a[1], int):
            return a[1]
        a = c.attrs.get(AT_data_member_location)
        if a is None:
            return 0
        form, v = a
        if isinstance(v, int) and form not in FORM_block_forms:
            return v * 8
        if isinstance(v, (bytes, bytearray)):
            # DW_OP_plus_uconst N (DWARF 2) is the only form of a constant offset
            if len(v) >= 2 and v[0] == 0x23:
                try:
                    n, _p = uleb128(v, 1)
                    return n * 8
                except Exception:
                    return None
        return None


# --- naming (c-typeprint.c) ------------------------------------------------------------------

def _modifiers(t, pre_space, post_space):
    out = []
    if t.const and t.kind not in ("ref", "rref"):
        out.append("const")
    if t.volatile:
        out.append("volatile")
    if t.restrict:
        out.append("__restrict__" if t.cplus else "restrict")
    if t.atomic:
        out.append("_Atomic")
    if not out:
        return ""
    s = " ".join(out)
    if pre_space:
        s = " " + s
    if post_space:
        s += " "
    return s


def _base(t, show=-1):
    k = t.kind
    if t.name is not None and show <= 0:
        prefix = ""
        if not t.cplus:
            if k == "union":
                prefix = "union "
            elif k == "struct":
                prefix = "class " if t.declared_class else "struct "
            elif k == "enum":
                prefix = "enum "
        return _modifiers(t, False, True) + prefix + t.name
    if k in ("ptr", "ref", "rref", "array", "memberptr", "func", "typedef"):
        if t.target is None:
            return "void"
        return _base(t.target, show)
    if k in ("struct", "union"):
        word = "union " if k == "union" else ("class " if t.declared_class else "struct ")
        return _modifiers(t, False, True) + word + "{...}"
    if k == "enum":
        return _modifiers(t, False, True) + "enum {...}"
    return _modifiers(t, False, True) + (t.name or "void")


def _prefix(t, passed_a_ptr, need_post_space):
    if t is None or t.name is not None:
        return ""
    k = t.kind
    if k == "ptr":
        return _prefix(t.target, True, True) + "*" + _modifiers(t, True, need_post_space)
    if k in ("ref", "rref"):
        return _prefix(t.target, True, False) + ("&" if k == "ref" else "&&") + \
            _modifiers(t, True, need_post_space)
    if k == "memberptr":
        st = t.self_type
        nm = st.name if st is not None and st.name else (_base(st) if st is not None else "")
        if t.target is not None and strip_typedefs(t.target).kind == "func" and t.target.name is None:
            return _prefix(t.target.target, False, False) + "(" + nm + "::*"
        return _prefix(t.target, False, False) + nm + "::*"
    if k in ("func", "array"):
        return _prefix(t.target, False, need_post_space if k == "array" else False) + \
            ("(" if passed_a_ptr else "")
    if k == "typedef":
        return _prefix(t.target, passed_a_ptr, False)
    return ""


def _args(t):
    parts = [type_name(p) for p in (t.params or ())]
    if parts and t.varargs:
        parts.append("...")
    if not parts and (t.prototyped or t.cplus):
        parts.append("void")
    return "(" + ", ".join(parts) + ")"


def _suffix(t, passed_a_ptr):
    if t is None or t.name is not None:
        return ""
    k = t.kind
    if k == "array":
        s = ")" if passed_a_ptr else ""
        if t.vector:
            s += " __attribute__ ((vector_size(" + ("" if t.count is None else str(t.count)) + ")))"
        elif t.dyn_count is not None:
            s += "[variable length]"
        else:
            s += "[" + ("" if t.count is None else str(t.count)) + "]"
        return s + _suffix(t.target, False)
    if k in ("ptr", "ref", "rref"):
        return _suffix(t.target, True)
    if k == "memberptr":
        if t.target is not None and strip_typedefs(t.target).kind == "func" and t.target.name is None:
            return ")" + _args(t.target) + _suffix(t.target.target, False)
        return _suffix(t.target, False)
    if k == "func":
        return (")" if passed_a_ptr else "") + _args(t) + _suffix(t.target, passed_a_ptr)
    if k == "typedef":
        return _suffix(t.target, passed_a_ptr)
    return ""


def type_name(t):
    """The type as GDB's ``whatis`` prints it ("int", "char *", "const struct point",
    "unsigned long", "int [4]", "int (*)(int)")."""
    if t is None:
        return "void"
    base = _base(t)
    need_space = t.name is None and t.kind in ("ptr", "func", "array", "memberptr", "ref", "rref")
    return base + (" " if need_space else "") + _prefix(t, False, False) + _suffix(t, False)
