"""Function names as GDB's bt shows them, from DWARF.

A function DIE's name: its linkage name demangled without parameters (C++),
else DW_AT_name qualified by the enclosing namespaces and classes, with GDB's
C++ canonical spellings and, where GDB's parser would keep it whole, the
parameter list its symbol has.
"""
from ..elf.demangle import demangle, drop_return_type, gdb_can_parse, strip_params
from .constants import (AT_abstract_origin, AT_linkage_name, AT_MIPS_linkage_name, AT_name,
                        AT_specification, AT_type, LANG_rust, TAG_namespace, TAG_subprogram,
                        TAG_template_type_param, CPP_LANGS, SCOPE_TAGS)
from .typeprint import TypePrinter, canon
from .units import DwarfError


class FunctionNames:
    """GDB's names for the function DIEs of one DwarfInfo, remembered per DIE."""

    def __init__(self, dwarf):
        self._dwarf = dwarf
        self._names = {}

    def name_of(self, cu, off):
        """GDB's name for the subprogram / inlined subroutine DIE at ``off``, or None."""
        names = self._names
        key = (id(cu), off)
        name = names.get(key, names)
        if name is names:
            try:
                name = self._func_name(cu, off)
            except Exception:   # malformed DWARF: no name, never an error
                name = None
            names[key] = name
        return name

    def _func_name(self, cu, off):
        """GDB's name for the function DIE: its linkage name (demangled, without parameters,
        for C++), else DW_AT_name qualified by the enclosing namespaces and classes."""
        if cu.language == LANG_rust:
            return self._rust_name(cu, off)
        cpp = cu.language in CPP_LANGS
        linkage = self._attr_chain(cu, off, (AT_linkage_name, AT_MIPS_linkage_name))
        if linkage:
            if cpp and linkage.startswith("_Z"):
                dm = demangle(linkage)
                if dm and dm != linkage:
                    # GDB names the symbol by the demangled linkage name without its return
                    # type; bt drops the parameters when its C++ parser can read the name
                    return strip_params(dm) if gdb_can_parse(dm) else drop_return_type(dm)
            return linkage
        name = self._attr_chain(cu, off, (AT_name,))
        if name is None:
            return None
        if cpp:
            if "operator" not in name:      # gdb's parser rejects "operator()<...>" and keeps it
                name = canon(name)
            prefix = self._prefix(cu, off)
            if prefix:
                name = prefix + "::" + name
            # GDB's symbol is named "qualified(params) [const]"; bt shows it whole when
            # its C++ parser cannot read it (lambdas, "struct {...}", "<>" ...)
            try:
                params = TypePrinter(self._dwarf).physname_params(cu, off)
            except (IndexError, KeyError, ValueError, RecursionError, DwarfError, TypeError):
                params = None
            if params is not None and not gdb_can_parse(name + params, computed=True, params_at=len(name)):
                return name + params
        return name

    # --- Rust: GDB names a function from DWARF, never from its linkage name ----------------
    def _rust_name(self, cu, off):
        """dwarf2_compute_name for Rust: the enclosing namespaces ("{impl#2}", "{closure#0}"
        are namespaces too), DW_AT_name, and the type parameters as GDB's Rust printer names
        them ("core::slice::index::{impl#2}::index<u8>", "main::deep")."""
        name = self._attr_chain(cu, off, (AT_name,))
        if name is None:
            return None
        spec = self._spec_die(cu, off)
        dcu, doff = spec if spec is not None else (cu, off)
        prefix = self._rust_prefix(dcu, doff)
        targs = []
        for c in (self._dwarf.children(dcu, doff) if "<" not in name else ()):
            r = self._dwarf.die_full(dcu, c)
            if r is not None and r[1] == TAG_template_type_param and AT_type in r[2]:
                targs.append(self._rust_type(r[0], r[2][AT_type][1], 0))
        if targs and "<" not in name:      # a name with its arguments already is kept, as GDB
            name += "<" + ", ".join(targs) + ">"
        return prefix + "::" + name if prefix else name

    def _rust_prefix(self, cu, off):
        """The "::"-joined names of the namespaces and types around DIE ``off``."""
        return TypePrinter(self._dwarf).scope_prefix(cu, off, canonical=False)

    def _rust_type(self, cu, off, depth):
        """A type as GDB's Rust printer names it in a template argument list: its DW_AT_name
        (rustc's "&str", "()", "!", "(dyn ... + ...)"), qualified by its namespaces when
        it is an aggregate; "?" where DWARF gives no name."""
        if not isinstance(off, int) or depth > 16:
            return "?"
        r = self._dwarf.die_full(cu, off)
        if r is None:
            return "?"
        tcu, tag, attrs, _c, _e = r
        if AT_name not in attrs:
            return self._rust_type(tcu, attrs[AT_type][1], depth + 1) if AT_type in attrs else "?"
        nm = self._dwarf.string(tcu, attrs[AT_name][1])
        if tag in SCOPE_TAGS and nm and not nm.startswith(("(", "[", "&", "*")):
            pre = self._rust_prefix(tcu, off)
            return pre + "::" + nm if pre else nm
        return nm

    def _attr_chain(self, cu, off, wanted):
        """dwarf2_attr: the first of ``wanted`` on the DIE, else on the DIE its
        DW_AT_specification / DW_AT_abstract_origin names, and so on."""
        d = self._dwarf
        cur_cu, cur = cu, off
        for _ in range(16):
            r = d.die_attrs(cur_cu, cur)
            if r is None:
                return None
            tcu, _tag, attrs = r
            for at in wanted:
                if at in attrs:
                    return d.string(tcu, attrs[at][1])
            nxt = attrs.get(AT_specification) or attrs.get(AT_abstract_origin)
            if nxt is None or not isinstance(nxt[1], int):
                return None
            cur_cu, cur = tcu, nxt[1]
        return None

    def _spec_die(self, cu, off):
        """die_specification: the DIE named by DW_AT_specification (looked up through
        DW_AT_abstract_origin links), else by the DIE's DW_AT_abstract_origin; or None."""
        d = self._dwarf
        cur_cu, cur = cu, off
        origin = None
        for _ in range(16):
            r = d.die_attrs(cur_cu, cur)
            if r is None:
                break
            tcu, _tag, attrs = r
            sp = attrs.get(AT_specification)
            if sp is not None and isinstance(sp[1], int):
                return tcu, sp[1]
            ao = attrs.get(AT_abstract_origin)
            if ao is None or not isinstance(ao[1], int):
                break
            if origin is None:
                origin = (tcu, ao[1])
            cur_cu, cur = tcu, ao[1]
        return origin

    def _prefix(self, cu, off):
        """determine_prefix for a C++ DIE (the enclosing scope's qualified name)."""
        d = self._dwarf
        spec = self._spec_die(cu, off)
        if spec is not None:
            cu, off = spec
        d.funcs_for(cu)
        scopes = cu._scopes or {}
        ent = scopes.get(off)
        if ent is None:
            return ""
        return self._scope_name(cu, scopes, ent[2], 0)

    def _scope_name(self, cu, scopes, off, depth):
        """The qualified name of scope DIE ``off`` as a prefix ("" when none)."""
        if off is None or depth > 64:
            return ""
        ent = scopes.get(off)
        if ent is None:
            return ""
        tag, attrs, parent = ent
        d = self._dwarf
        if tag == TAG_namespace:
            nm = d.string(cu, attrs[AT_name][1]) if AT_name in attrs else None
            if nm is None:
                nm = "(anonymous namespace)"
            outer = self._scope_name(cu, scopes, parent, depth + 1)
            return outer + "::" + nm if outer else nm
        if tag in SCOPE_TAGS:
            nm = canon(d.string(cu, attrs[AT_name][1])) if AT_name in attrs else None
            if nm is None:
                return ""          # anonymous aggregates give no prefix
            outer = self._scope_name(cu, scopes, parent, depth + 1)
            return outer + "::" + nm if outer else nm
        if tag == TAG_subprogram:
            return ""
        return self._scope_name(cu, scopes, parent, depth + 1)
