"""Values printed by GDB itself: swk found where a variable is, GDB knows its type and
its pretty-printers (libstdc++'s std::vector, std::map, std::string; a user's own).

For a struct or class value swk has read completely, the variable's gdb.Symbol is
found in the blocks at the frame's pc (past the blocks of calls inlined inside the
variable's scope), and GDB is given the value: at its address, lazily, when it is in
memory (so a printer reads what it needs); as bytes when it is not (a register, or
pieces), so what swk recovered is what GDB prints.  Only where GDB has a pretty-printer
for it is GDB's text used: swk's own printer already prints plain values as GDB does.
"""
import gdb

_AGGREGATE = (gdb.TYPE_CODE_STRUCT, gdb.TYPE_CODE_UNION)
_NONE = object()         # no printer takes the type


def _scope_block(pc, depth):
    """The innermost block of the variable's function or inlined call at ``pc``."""
    try:
        block = gdb.block_for_pc(pc)
    except (RuntimeError, gdb.error):
        return None
    while block is not None and depth > 0:
        if block.function is not None:
            depth -= 1
        block = block.superblock
    return block


def find_symbol(pc, depth, name, is_param):
    """The gdb.Symbol of variable ``name`` of the scope ``depth`` inlined calls out at pc."""
    block = _scope_block(pc, depth)
    while block is not None:
        for sym in block:
            if sym.name == name and sym.is_argument == is_param and sym.is_variable or \
                    sym.name == name and sym.is_argument == is_param and is_param:
                return sym
        if block.function is not None:
            return None
        block = block.superblock
    return None


def _builtin_only(printers):
    """Whether GDB's global printers are its own builtin collection alone (mpx_bound128: a
    type no program declares)."""
    try:
        import gdb.printing as gp
        builtin = gp._builtin_pretty_printers
    except (ImportError, AttributeError):
        return not printers
    return all(p is builtin for p in printers) and \
        {getattr(sp, "name", None) for sp in getattr(builtin, "subprinters", ())} <= {"mpx_bound128"}


def any_printer():
    """Whether a pretty-printer that could take a program's type is registered (an objfile's,
    the program space's, or a global one besides GDB's builtin): without one, asking GDB
    about each value would only have it expand its units' symbols for nothing."""
    try:
        if gdb.current_progspace().pretty_printers or any(o.pretty_printers for o in gdb.objfiles()):
            return True
        return not _builtin_only(gdb.pretty_printers)
    except (gdb.error, RuntimeError):
        return True


class GdbValuePrinter:
    """Walker.value_printer inside GDB."""

    #: GDB's printers are asked about pointers to aggregates too (python-gdb.py's PyObject *).
    pointers = True

    def __init__(self):
        #: pointer types no printer took, while the objfiles (and so the printers) stay
        self._plain = (None, set())
        #: swk's Type of a variable (one per type DIE) -> GDB's type of its symbol, or False
        #: where no printer takes that type: while the objfiles stay the same.  Finding the
        #: symbol has GDB expand its unit's symbols (block_for_pc), the costliest step of a
        #: first swk-bt on a big program, and a walk meets the same few types again and again.
        self._types = (None, {})

    def __call__(self, req):
        if not any_printer():
            return None           # nothing for GDB to add: and its symbols stay unexpanded
        key = len(gdb.objfiles())
        held, types = self._types
        if held != key:
            types = {}
            self._types = (key, types)
        swk_type = req.var.type
        t = types.get(swk_type)
        if t is False:
            return None
        if t is None:
            sym = find_symbol(req.pc, req.scope_depth, req.var.name, req.var.is_param)
            if sym is None:
                return None
            t = sym.type
        text = self._text(t, req)
        types[swk_type] = t if text is not _NONE else False
        return text if text is not _NONE else None

    def _text(self, t, req):
        """GDB's text for the value as type ``t`` by its printer, None where it cannot be
        given that type, _NONE where no printer takes the type."""
        base = t.strip_typedefs()
        vv = req.value
        if base.code == gdb.TYPE_CODE_PTR:
            return self._pointer(t, vv, req.summary)
        if base.code in (gdb.TYPE_CODE_REF, gdb.TYPE_CODE_RVALUE_REF):
            target = base.target()
            if target.strip_typedefs().code not in _AGGREGATE or len(vv.data) != base.sizeof:
                return None
            referent = gdb.Value(int.from_bytes(vv.data, vv.byteorder)).cast(target.pointer()).dereference()
            if gdb.default_visualizer(referent) is None:
                return _NONE
            value = referent.reference_value() if base.code == gdb.TYPE_CODE_REF \
                else referent.rvalue_reference_value()
        else:
            if base.code not in _AGGREGATE:
                return None
            if vv.address is not None:
                value = gdb.Value(vv.address).cast(t.pointer()).dereference()
            else:
                if len(vv.data) != t.sizeof:
                    return None
                value = gdb.Value(vv.data, t)
            if gdb.default_visualizer(value) is None:
                return _NONE
        return value.format_string(summary=req.summary) if req.summary else value.format_string()

    def _pointer(self, t, vv, summary):
        """A pointer's text from the printer GDB has for it, or None (most pointer types have
        none: that answer is kept per type name while GDB's objfiles stay the same)."""
        if len(vv.data) != t.sizeof:
            return None
        key = len(gdb.objfiles())
        held, plain = self._plain
        if held != key:
            plain = set()
            self._plain = (key, plain)
        name = str(t)
        if name in plain:
            return _NONE
        value = gdb.Value(vv.data, t)
        if gdb.default_visualizer(value) is None:
            plain.add(name)
            return _NONE
        return value.format_string(summary=summary) if summary else value.format_string()
