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


class GdbValuePrinter:
    """Walker.value_printer inside GDB."""

    #: GDB's printers are asked about pointers to aggregates too (python-gdb.py's PyObject *).
    pointers = True

    def __init__(self):
        #: pointer types no printer took, while the objfiles (and so the printers) stay
        self._plain = (None, set())

    def __call__(self, req):
        sym = find_symbol(req.pc, req.scope_depth, req.var.name, req.var.is_param)
        if sym is None:
            return None
        t = sym.type
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
                return None
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
                return None
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
            return None
        value = gdb.Value(vv.data, t)
        if gdb.default_visualizer(value) is None:
            plain.add(name)
            return None
        return value.format_string(summary=summary) if summary else value.format_string()
