"""GDB's C type printer over DWARF type DIEs: type names and parameter lists as GDB
spells them (``unsigned long``, ``const char *``, ``int (*)(void)``), for C++ names
(swk_plugin.dwarf.names) and for the types of variables (swk_plugin.locals)."""
import re

from ..elf.demangle import gdb_can_parse

from .constants import (AT_abstract_origin, AT_artificial, AT_containing_type, AT_count, AT_name,
                        AT_object_pointer, AT_signature, AT_specification, AT_type, AT_upper_bound,
                        TAG_array_type, TAG_atomic_type, TAG_base_type, TAG_class_type,
                        TAG_const_type, TAG_enumeration_type, TAG_formal_parameter,
                        TAG_interface_type, TAG_namespace, TAG_pointer_type, TAG_ptr_to_member_type,
                        TAG_reference_type, TAG_restrict_type, TAG_rvalue_reference_type,
                        TAG_structure_type, TAG_subprogram, TAG_subrange_type, TAG_subroutine_type,
                        TAG_typedef, TAG_union_type, TAG_unspecified_parameters,
                        TAG_unspecified_type, TAG_volatile_type, SCOPE_TAGS)
from .units import DwarfError
from ..cache import LazyPattern



_BASE_CANON = [(re.compile(r"(?<![\w])" + a + r"(?![\w])"), b) for a, b in (
    ("long long unsigned int", "unsigned long long"), ("long long int", "long long"),
    ("long unsigned int", "unsigned long"), ("short unsigned int", "unsigned short"),
    ("long int", "long"), ("short int", "short"), ("__int128 unsigned", "unsigned __int128"))]
_PTR_SPACE = LazyPattern(r"(?<=[\w>*&]) (?=[*&])")
_CONST_FIRST = LazyPattern(r"(?<=[<(,])(\s?)const ([A-Za-z_][\w:]*)(?=[&*,>)])")


def canon(name):
    """A cheap cp_canonicalize_string: GDB canonicalizes C++ DWARF names it can parse
    ("long int" -> "long", "const int&" -> "int const&", "char **" -> "char**")."""
    if not name or not gdb_can_parse(name):
        return name
    if "int" in name:
        for rx, rep in _BASE_CANON:
            name = rx.sub(rep, name)
    if " *" in name or " &" in name:      # the demangler's spelling: char**, int&, char const*
        name = _PTR_SPACE.sub("", name)
    if "const " in name:
        name = _CONST_FIRST.sub(r"\1\2 const", name)
        if "const " in name:
            name = _const_after_templates(name)
    return name


def _const_after_templates(name):
    """``<const std::basic_string<char>, int>`` -> ``<std::basic_string<char> const, int>``:
    _CONST_FIRST for names with template arguments (balanced ``<...>``)."""
    out = []
    i = 0
    n = len(name)
    while i < n:
        j = name.find("const ", i)
        if j < 0:
            out.append(name[i:])
            break
        k = j - 1
        if k >= 0 and name[k] == " ":
            k -= 1
        if k < 0 or name[k] not in "<(,":
            out.append(name[i:j + 6])
            i = j + 6
            continue
        # the qualified name after "const ": identifiers, "::" and balanced <...>
        p = j + 6
        depth = 0
        while p < n:
            c = name[p]
            if c == "<":
                depth += 1
            elif c == ">":
                if depth == 0:
                    break
                depth -= 1
            elif depth == 0 and not (c.isalnum() or c in "_:"):
                if not (c == " " and name.startswith("<", p + 1)):
                    break
            p += 1
        if p == j + 6 or p >= n or name[p] not in "&*,>)":
            out.append(name[i:j + 6])
            i = j + 6
            continue
        out.append(name[i:j] + name[j + 6:p] + " const")
        i = p
    return "".join(out)


class _T:
    """A type as GDB's printer sees it: a kind, cv flags, and its parts."""
    __slots__ = ("kind", "name", "target", "const", "volatile", "params", "varargs", "dim", "self_name")

    def __init__(self, kind, name=None, target=None):
        self.kind = kind
        self.name = name
        self.target = target
        self.const = self.volatile = False
        self.params = None
        self.varargs = False
        self.dim = None
        self.self_name = None

    def with_cv(self, const=False, volatile=False):
        t = _T(self.kind, self.name, self.target)
        t.params, t.varargs, t.dim, t.self_name = self.params, self.varargs, self.dim, self.self_name
        t.const = self.const or const
        t.volatile = self.volatile or volatile
        return t


_DERIVED = ("ptr", "ref", "rref", "func", "array", "memberptr")


class TypePrinter:
    def __init__(self, dwarf):
        self.d = dwarf
        self._cache = {}

    # --- DIEs -> _T ------------------------------------------------------------------------
    def type_of(self, cu, attrs, depth=0):
        t = attrs.get(AT_type)
        if t is None:
            return _T("void", "void")
        if not isinstance(t[1], int):
            raise DwarfError("type reference outside this file")
        return self.resolve(cu, t[1], depth + 1)

    def resolve(self, cu, off, depth=0):
        if depth > 40:
            raise DwarfError("type nesting too deep")
        key = off
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        r = self.d.die_full(cu, off)
        if r is None:
            raise DwarfError("bad type reference")
        tcu, tag, attrs, _ch, _end = r
        if AT_signature in attrs:
            raise DwarfError("type unit")
        d = self.d
        if tag in (TAG_const_type, TAG_volatile_type, TAG_restrict_type, TAG_atomic_type):
            inner = self.type_of(tcu, attrs, depth)
            t = inner.with_cv(const=tag == TAG_const_type, volatile=tag == TAG_volatile_type)
        elif tag == TAG_pointer_type:
            t = _T("ptr", target=self.type_of(tcu, attrs, depth))
        elif tag == TAG_reference_type:
            t = _T("ref", target=self.type_of(tcu, attrs, depth))
        elif tag == TAG_rvalue_reference_type:
            t = _T("rref", target=self.type_of(tcu, attrs, depth))
        elif tag == TAG_subroutine_type:
            t = _T("func", target=self.type_of(tcu, attrs, depth))
            t.params, t.varargs = self.params(tcu, off, depth, skip_artificial=False)
        elif tag == TAG_array_type:
            t = self.type_of(tcu, attrs, depth)
            subs = [c for c in d.children(tcu, off)]
            dims = []
            for c in subs:
                rc = d.die_full(tcu, c)
                if rc is None or rc[1] != TAG_subrange_type:
                    continue
                a = rc[2]
                if AT_count in a and isinstance(a[AT_count][1], int):
                    dims.append(a[AT_count][1])
                elif AT_upper_bound in a and isinstance(a[AT_upper_bound][1], int):
                    dims.append(a[AT_upper_bound][1] + 1)
                else:
                    dims.append(None)
            for n in reversed(dims or [None]):
                a_t = _T("array", target=t)
                a_t.dim = n
                t = a_t
        elif tag == TAG_ptr_to_member_type:
            t = _T("memberptr", target=self.type_of(tcu, attrs, depth))
            ct = attrs.get(AT_containing_type)
            if ct is not None and isinstance(ct[1], int):
                t.self_name = self.name_of(self.resolve(tcu, ct[1], depth + 1))
        elif tag in (TAG_structure_type, TAG_class_type, TAG_union_type, TAG_enumeration_type,
                     TAG_interface_type, TAG_typedef):
            nm = d.string(tcu, attrs[AT_name][1]) if AT_name in attrs else None
            kind = {TAG_structure_type: "struct", TAG_class_type: "class", TAG_union_type: "union",
                    TAG_enumeration_type: "enum", TAG_interface_type: "class",
                    TAG_typedef: "typedef"}[tag]
            if nm is not None:
                pre = self.scope_prefix(tcu, off)
                nm = canon(nm)
                nm = pre + "::" + nm if pre else nm
            t = _T(kind, nm)
        elif tag in (TAG_base_type, TAG_unspecified_type):
            nm = d.string(tcu, attrs[AT_name][1]) if AT_name in attrs else None
            t = _T("base", canon(nm) or "void")
        else:
            raise DwarfError(f"type tag 0x{tag:x}")
        self._cache[key] = t
        return t

    def params(self, cu, off, depth=0, skip_artificial=True):
        """([(type, artificial)], varargs) of a subprogram or subroutine type DIE."""
        d = self.d
        out = []
        varargs = False
        own = d.die_full(cu, off)
        objptr = own[2].get(AT_object_pointer) if own is not None else None
        for c in d.children(cu, off):
            r = d.die_full(cu, c)
            if r is None:
                continue
            tcu, tag, attrs, _ch, _e = r
            if tag == TAG_unspecified_parameters:
                varargs = True
            elif tag == TAG_formal_parameter:
                art = bool(self._chain_attr(tcu, c, AT_artificial))
                ty_attrs = attrs
                if AT_type not in attrs:
                    ty_attrs = self._chain_attrs(tcu, c, AT_type) or attrs
                    tcu2 = ty_attrs[1] if isinstance(ty_attrs, tuple) else tcu
                    ty_attrs = ty_attrs[0] if isinstance(ty_attrs, tuple) else ty_attrs
                else:
                    tcu2 = tcu
                ty = self.type_of(tcu2, ty_attrs, depth)
                if art and not ty.const:
                    # read_subroutine_type: a C++ "this" parameter is made const
                    nm = self._chain_attr(tcu, c, AT_name)
                    nm = d.string(tcu, nm) if nm is not None else None
                    if objptr is not None:
                        is_this = objptr[1] == c
                    else:
                        is_this = nm == "this" or (nm is None and not out)
                    if is_this:
                        ty = ty.with_cv(const=True)
                out.append((ty, art))
        return out, varargs

    def _chain_attrs(self, cu, off, at):
        d = self.d
        cur_cu, cur = cu, off
        for _ in range(8):
            r = d.die_full(cur_cu, cur)
            if r is None:
                return None
            tcu, _tag, attrs, _c, _e = r
            if at in attrs:
                return attrs, tcu
            nxt = attrs.get(AT_abstract_origin) or attrs.get(AT_specification)
            if nxt is None or not isinstance(nxt[1], int):
                return None
            cur_cu, cur = tcu, nxt[1]
        return None

    def _chain_attr(self, cu, off, at):
        r = self._chain_attrs(cu, off, at)
        return r[0][at][1] if r else None

    def scope_prefix(self, cu, off, canonical=True):
        """determine_prefix for a type DIE, from the unit's parent map (``canonical``: the
        scopes' names in GDB's C++ spelling; Rust's are kept as they are)."""
        d = self.d
        par = d.parents(cu)
        p = par.get(off)
        parts = []
        for _ in range(64):
            if p is None:
                break
            r = d.die_full(cu, p)
            if r is None:
                break
            _u, tag, attrs, _c, _e = r
            if tag == TAG_namespace:
                parts.append(d.string(cu, attrs[AT_name][1]) if AT_name in attrs else "(anonymous namespace)")
            elif tag in SCOPE_TAGS:
                if AT_name not in attrs:
                    break
                nm = d.string(cu, attrs[AT_name][1])
                parts.append(canon(nm) if canonical else nm)
            elif tag == TAG_subprogram:
                break
            p = par.get(p)
        return "::".join(reversed(parts))

    # --- printing (c-typeprint.c) -----------------------------------------------------------
    def name_of(self, t):
        return self.print_type(t)

    def base(self, t):
        while t.kind in _DERIVED:
            t = t.target
        cv = ("const " if t.const else "") + ("volatile " if t.volatile else "")
        if t.name:
            return cv + t.name
        if t.kind in ("struct", "class", "union", "enum"):
            return cv + t.kind + " {...}"
        return cv + "void"

    def prefix(self, t, passed_a_ptr):
        k = t.kind
        if k == "ptr":
            s = self.prefix(t.target, True) + "*"
            if t.const:
                s += " const"
            if t.volatile:
                s += " volatile"
            return s
        if k in ("ref", "rref"):
            return self.prefix(t.target, True) + ("&" if k == "ref" else "&&")
        if k == "memberptr":
            if t.target is not None and t.target.kind == "func":      # pointer to method
                return self.prefix(t.target, False) + "(" + (t.self_name or "") + "::*"
            return self.prefix(t.target, False) + (t.self_name or "") + "::*"
        if k in ("func", "array"):
            return self.prefix(t.target, False) + ("(" if passed_a_ptr else "")
        return ""

    def suffix(self, t, passed_a_ptr):
        k = t.kind
        if k == "array":
            return ((")" if passed_a_ptr else "") + "[" + ("" if t.dim is None else str(t.dim)) + "]"
                    + self.suffix(t.target, False))
        if k in ("ptr", "ref", "rref"):
            return self.suffix(t.target, True)
        if k == "memberptr":
            if t.target is not None and t.target.kind == "func":
                return ")" + self.suffix(t.target, False)
            return self.suffix(t.target, False)
        if k == "func":
            return (")" if passed_a_ptr else "") + self.args(t.params, t.varargs, False) + \
                self.suffix(t.target, False)
        return ""

    def print_type(self, t):
        need_space = t.kind in _DERIVED and not t.name
        return self.base(t) + (" " if need_space else "") + self.prefix(t, False) + self.suffix(t, False)

    def args(self, params, varargs, linkage_name):
        out = []
        for ty, art in params or ():
            if art and linkage_name:
                continue
            if linkage_name:
                ty = ty.with_cv()
                ty.const = ty.volatile = False
            out.append(self.print_type(ty))
        if out and varargs:
            out.append("...")
        if not out:
            return "(void)"
        return "(" + ", ".join(out) + ")"

    def physname_params(self, cu, off):
        """The "(params) [const]" GDB appends to a computed C++ function name."""
        params, varargs = self.params(cu, off)
        s = self.args(params, varargs, True)
        if params and params[0][1]:
            this = params[0][0]
            if this.kind == "ptr" and this.target is not None and this.target.const:
                s += " const"
        return s
