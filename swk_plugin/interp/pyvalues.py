"""A Python frame's local variables, named and shown as short reprs, read from memory (-py -full).

A frame's fast locals are an array of object pointers after its header (3.10's f_localsplus,
3.11+'s localsplus), named by its code object: 3.10's co_varnames, then co_cellvars and
co_freevars (those slots hold cells); 3.11+'s co_localsplusnames, with co_localspluskinds
marking cells and free variables (CO_FAST_CELL, CO_FAST_FREE).  A slot still NULL is a
variable not yet bound: left out, as Python's own f_locals leaves it out.

Values are shown as repr() shows them for the types that can be read without running code:
int, float, str, bytes, None, True, False, and tuples, lists and dicts of those (the first
few items, two levels deep); anything else as ``<TYPE object at 0x...>``.  A dict's items are
its keys object's entries in order (insertion order), deleted ones (NULL value) passed over;
a split table (an instance's __dict__, values apart from keys) or a version whose keys object
swk has no layout of (3.10 without DWARF) is shown by its size.
Each type is known by the address of its type object (PyLong_Type, ...), found by symbol.
A float's text is repr() of the same double here, which is the target's.
"""
import struct

from ..errors import MemoryReadError
from .objects import read_bytes, read_unicode

#: The type objects and singletons values are told apart by (symbols of the runtime's library).
TYPE_SYMBOLS = ("PyLong_Type", "PyFloat_Type", "PyUnicode_Type", "PyBytes_Type", "PyTuple_Type", "PyList_Type",
                "PyDict_Type", "PyBool_Type", "PyCell_Type")
SINGLETONS = {"_Py_NoneStruct": "None", "_Py_TrueStruct": "True", "_Py_FalseStruct": "False"}
#: How much of a value is shown: items of a tuple or list, levels of them, characters.
MAX_ITEMS = 8
MAX_DEPTH = 2
#: Most entries of a dict's table read for its first items (deleted ones among them).
MAX_ENTRIES = 64
MAX_TEXT = 200
#: An int of more digits than this is shown by its size.
MAX_DIGITS = 64
MAX_LOCALS = 4096


class PyVariable:
    """A local variable of a Python frame: its ``name`` and ``value`` (the short repr)."""
    __slots__ = ("name", "value")

    def __init__(self, name, value):
        self.name, self.value = name, value

    def as_json(self):
        return {"name": self.name, "value": self.value}

    def __repr__(self):
        return f"<PyVariable {self.name} = {self.value}>"


def _tuple_items(ps, layout, addr, limit=None):
    n = ps.read_uint(addr + layout.var_size, 8)
    k = n if limit is None else min(n, limit)
    raw = ps.read_memory(addr + layout.tuple_item, 8 * k) if k else b""
    return n, [int.from_bytes(raw[i:i + 8], ps.arch.byteorder) for i in range(0, len(raw), 8)]


def _names(ps, layout, tuple_addr):
    """The strs of a tuple of names (co_varnames, co_localsplusnames)."""
    if not tuple_addr:
        return []
    n, items = _tuple_items(ps, layout, tuple_addr)
    if n > MAX_LOCALS:
        return []
    return [read_unicode(ps, item, layout) for item in items]


def frame_locals(ps, runtime, frame):
    """[PyVariable] of a PyFrame (cpython.PyFrame), in the code's order; [] where they cannot
    be read."""
    layout = runtime.layout
    if frame.code is None or layout is None:
        return []
    try:
        slots = _slots(ps, layout, frame)
    except MemoryReadError:
        return []
    types = _types(ps, runtime)
    cell = types.get("PyCell_Type")
    out = []
    for name, addr, is_cell in slots:
        if not addr:
            continue
        if is_cell:
            try:
                if cell is None or ps.read_pointer(addr + layout.ob_type) == cell:
                    addr = ps.read_pointer(addr + layout.cell_ref)
            except MemoryReadError:
                addr = 0
            if not addr:
                continue            # a cell not bound yet
        out.append(PyVariable(name or "?", short_repr(ps, runtime, addr)))
    return out


def _slots(ps, layout, frame):
    """[(name, object address, is a cell)] of the frame's fast locals."""
    code, rp = frame.code, ps.read_pointer
    if layout.code_localsplusnames is None:                  # 3.10
        varnames = _names(ps, layout, rp(code + layout.code_varnames))
        cells = _names(ps, layout, rp(code + layout.code_cellvars)) + \
            _names(ps, layout, rp(code + layout.code_freevars))
        names = [(n, False) for n in varnames] + [(n, True) for n in cells]
    else:
        plain = _names(ps, layout, rp(code + layout.code_localsplusnames))
        kinds = read_bytes(ps, rp(code + layout.code_localspluskinds), layout) or b""
        cellish = layout.fast_cell | layout.fast_free
        names = [(n, k < len(kinds) and bool(kinds[k] & cellish)) for k, n in enumerate(plain)]
    if not names:
        return []
    raw = ps.read_memory(frame.address + layout.frame_localsplus, 8 * len(names))
    values = [int.from_bytes(raw[i:i + 8], ps.arch.byteorder) for i in range(0, len(raw), 8)]
    return [(name, value, is_cell) for (name, is_cell), value in zip(names, values)]


def _types(ps, runtime):
    """{symbol: address} of the type objects and singletons, once per library list."""
    def find():
        out = {}
        for name in TYPE_SYMBOLS + tuple(SINGLETONS):
            addr = runtime.symbol(name)
            if addr is not None:
                out[name] = addr
        return out
    return ps.library_cache.value(("cpython", "types", runtime.address), find)


def short_repr(ps, runtime, addr, depth=0):
    """repr() of the object at ``addr`` for the types read here, else ``<TYPE object at 0x...>``."""
    layout, types = runtime.layout, _types(ps, runtime)
    for name, text in SINGLETONS.items():
        if types.get(name) == addr:
            return text
    try:
        tp = ps.read_pointer(addr + layout.ob_type)
        if tp == types.get("PyLong_Type"):
            return _int(ps, layout, addr)
        if tp == types.get("PyFloat_Type"):
            raw = ps.read_memory(addr + layout.float_value, 8)
            return repr(struct.unpack("<d" if ps.arch.byteorder == "little" else ">d", raw)[0])
        if tp == types.get("PyUnicode_Type"):
            text = read_unicode(ps, addr, layout)
            return _cut(repr(text)) if text is not None else "<str>"
        if tp == types.get("PyBytes_Type"):
            data = read_bytes(ps, addr, layout)
            return _cut(repr(data)) if data is not None else "<bytes>"
        if tp in (types.get("PyTuple_Type"), types.get("PyList_Type")):
            return _sequence(ps, runtime, addr, tp == types.get("PyTuple_Type"), depth)
        if tp == types.get("PyDict_Type"):
            return _dict(ps, runtime, addr, depth)
        return f"<{_type_name(ps, layout, tp)} object at 0x{addr:x}>"
    except MemoryReadError:
        return f"<unreadable object at 0x{addr:x}>"


def _cut(text):
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "..."


def _type_name(ps, layout, tp):
    try:
        raw = ps.read_memory(ps.read_pointer(tp + layout.type_name), 64)
    except MemoryReadError:
        return "?"
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace") or "?"


def _int(ps, layout, addr):
    if layout.long_tag is not None:                       # 3.12+: lv_tag = digits << 3 | sign
        tag = ps.read_uint(addr + layout.long_tag, 8)
        ndigits, sign = tag >> 3, 1 - (tag & 3)
    else:                                                 # ob_size: the digits, signed
        size = ps.read_uint(addr + layout.var_size, 8)
        size = size - (1 << 64) if size >> 63 else size
        ndigits, sign = abs(size), (size > 0) - (size < 0)
    if ndigits > MAX_DIGITS:
        return f"<int of {ndigits * layout.long_shift} bits>"
    raw = ps.read_memory(addr + layout.long_digits, ndigits * layout.sizeof_digit)
    value = 0
    for i in range(ndigits - 1, -1, -1):
        digit = int.from_bytes(raw[i * layout.sizeof_digit:(i + 1) * layout.sizeof_digit], ps.arch.byteorder)
        value = (value << layout.long_shift) | digit
    return str(sign * value)


def _sequence(ps, runtime, addr, is_tuple, depth):
    layout = runtime.layout
    if is_tuple:
        n, items = _tuple_items(ps, layout, addr, MAX_ITEMS)
    else:
        n = ps.read_uint(addr + layout.var_size, 8)
        k = min(n, MAX_ITEMS)
        array = ps.read_pointer(addr + layout.list_item)
        raw = ps.read_memory(array, 8 * k) if k else b""
        items = [int.from_bytes(raw[i:i + 8], ps.arch.byteorder) for i in range(0, len(raw), 8)]
    open_, close = ("(", ")") if is_tuple else ("[", "]")
    if n and depth >= MAX_DEPTH:
        return f"{open_}...{close}"
    parts = [short_repr(ps, runtime, item, depth + 1) if item else "NULL" for item in items]
    if n > len(items):
        parts.append("...")
    if is_tuple and n == 1:
        return f"({parts[0]},)"
    return open_ + ", ".join(parts) + close


def _dict(ps, runtime, addr, depth):
    layout = runtime.layout
    n = ps.read_uint(addr + layout.dict_used, 8)
    if not n:
        return "{}"
    items = None
    if depth < MAX_DEPTH and layout.dictkeys_indices is not None and not ps.read_pointer(addr + layout.dict_values):
        items = _dict_items(ps, layout, ps.read_pointer(addr + layout.dict_keys), min(n, MAX_ITEMS))
    if items is None:
        return "{...}" if depth >= MAX_DEPTH else f"{{...}} ({n} items)" if n != 1 else "{...} (1 item)"
    parts = [f"{short_repr(ps, runtime, k, depth + 1)}: {short_repr(ps, runtime, v, depth + 1)}" for k, v in items]
    if n > len(items):
        parts.append("...")
    return "{" + ", ".join(parts) + "}"


def _dict_items(ps, layout, keys, want):
    """[(key, value)] of the first ``want`` live entries of a combined table's keys object
    ``keys``, or None where it does not read as one."""
    if not keys:
        return None
    nentries = ps.read_uint(keys + layout.dictkeys_nentries, 8)
    if layout.dictkeys_size is not None:                          # 3.10: indices of dk_size slots
        size = ps.read_uint(keys + layout.dictkeys_size, 8)
        width = 1 if size <= 0xff else 2 if size <= 0xffff else 4 if size <= 0xffffffff else 8
        index_bytes, entry = size * width, (layout.sizeof_dictkeyentry, layout.dictkeyentry_key,
                                            layout.dictkeyentry_value)
    else:
        index_bytes = 1 << ps.read_uint(keys + layout.dictkeys_log2_index_bytes, 1)
        general = ps.read_uint(keys + layout.dictkeys_kind, 1) == layout.dict_kind_general
        entry = ((layout.sizeof_dictkeyentry, layout.dictkeyentry_key, layout.dictkeyentry_value) if general else
                 (layout.sizeof_dictunicodeentry, layout.dictunicodeentry_key, layout.dictunicodeentry_value))
    size_of, key_at, value_at = entry
    if nentries > 1 << 40 or index_bytes > 1 << 40:
        return None
    first, out = keys + layout.dictkeys_indices + index_bytes, []
    for i in range(min(nentries, MAX_ENTRIES)):
        raw = ps.read_memory(first + i * size_of, size_of)
        key = int.from_bytes(raw[key_at:key_at + 8], ps.arch.byteorder)
        value = int.from_bytes(raw[value_at:value_at + 8], ps.arch.byteorder)
        if key and value:
            out.append((key, value))
            if len(out) >= want:
                break
    return out
