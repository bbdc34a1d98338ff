"""A CPython Layout read from the interpreter's own DWARF, where it carries debug info.

pyenv's builds keep their DWARF and Debian's python3.11 has it in python3.11-dbg's separate
file: there the struct members' offsets are the build's own word, whatever patches or options
it was built with, so they win over layouts.py's table (which only _Py_DebugOffsets outranks).
Only offsets and sizes are read; macros (PyLong_SHIFT, CO_FAST_*) have no DWARF and stay the
table's, and the unicode state's bit masks are read only on little-endian targets (the table
mirrors them for big-endian ones).

The types are found by name among the top-level DIEs of the evaluator's unit first (it
includes every header swk needs), then of the other units (an LTO build's partitions keep
the types elsewhere); a declaration is passed over for a definition.  Any DWARF trouble
gives no fields (the table is used), never an error.

Searching Debian's LTO python3.11 takes about 0.6 s, so the fields found are kept on disk by
the interpreter's build-id (elf/diskcache.py), named with a digest of what is searched for:
the next process reads them there.
"""
from ..dwarf.constants import AT_name
from ..dwarf.lines import module_lines
from ..elf import diskcache
from ..locals.types import TypeReader, strip_typedefs

#: Most units searched for the types (a program embedding Python may have thousands).
MAX_UNITS = 4096
#: Changed whenever how the fields are found changes: fields kept on disk by an older swk
#: are then not used.
FINDER_VERSION = 1


def _specs(version):
    """{Layout field: (type name, member path)} for ``version``; a path of None: the type's
    size; "a.b|mask": the bits member b of a takes (a bitfield)."""
    v = version
    s = {
        "runtime_interpreters_head": ("_PyRuntimeState", "interpreters.head"),
        "runtime_interpreters_main": ("_PyRuntimeState", "interpreters.main"),
        "interp_runtime": ("PyInterpreterState", "runtime"),
        "interp_next": ("PyInterpreterState", "next"),
        "interp_threads_head": ("PyInterpreterState", "tstate_head" if v < (3, 11) else "threads.head"),
        "tstate_next": ("PyThreadState", "next"),
        "tstate_thread_id": ("PyThreadState", "thread_id"),
        "ob_type": ("PyObject", "ob_type"),
        "var_size": ("PyVarObject", "ob_size"),
        "code_filename": ("PyCodeObject", "co_filename"),
        "code_name": ("PyCodeObject", "co_name"),
        "code_firstlineno": ("PyCodeObject", "co_firstlineno"),
        "code_linetable": ("PyCodeObject", "co_linetable"),
        "unicode_length": ("PyASCIIObject", "length"),
        "unicode_state": ("PyASCIIObject", "state"),
        "sizeof_ascii": ("PyASCIIObject", None),
        "sizeof_compact": ("PyCompactUnicodeObject", None),
        "unicode_kind_mask": ("PyASCIIObject", "state.kind|mask"),
        "unicode_compact_mask": ("PyASCIIObject", "state.compact|mask"),
        "unicode_ascii_mask": ("PyASCIIObject", "state.ascii|mask"),
        "bytes_sval": ("PyBytesObject", "ob_sval"),
        "tuple_item": ("PyTupleObject", "ob_item"),
        "list_item": ("PyListObject", "ob_item"),
        "float_value": ("PyFloatObject", "ob_fval"),
        "type_name": ("PyTypeObject", "tp_name"),
        "dict_used": ("PyDictObject", "ma_used"),
        "dict_keys": ("PyDictObject", "ma_keys"),
        "dict_values": ("PyDictObject", "ma_values"),
        "dictkeys_nentries": ("PyDictKeysObject", "dk_nentries"),
        "dictkeys_indices": ("PyDictKeysObject", "dk_indices"),
        "sizeof_dictkeyentry": ("PyDictKeyEntry", None),
        "dictkeyentry_key": ("PyDictKeyEntry", "me_key"),
        "dictkeyentry_value": ("PyDictKeyEntry", "me_value"),
        "cell_ref": ("PyCellObject", "ob_ref"),
        "sizeof_digit": ("digit", None),
        "gil_last_holder": ("_gil_runtime_state", "last_holder"),
        "gil_locked": ("_gil_runtime_state", "locked"),
    }
    if v < (3, 12):
        s["long_digits"] = ("PyLongObject", "ob_digit")
        s["runtime_gil"] = ("_PyRuntimeState", "ceval.gil")
    else:
        s.update(long_digits=("PyLongObject", "long_value.ob_digit"), long_tag=("PyLongObject", "long_value.lv_tag"),
                 interp_ceval_gil=("PyInterpreterState", "ceval.gil"))
    if v < (3, 11):
        s["dictkeys_size"] = ("PyDictKeysObject", "dk_size")
    else:
        s.update(dictkeys_log2_index_bytes=("PyDictKeysObject", "dk_log2_index_bytes"),
                 dictkeys_kind=("PyDictKeysObject", "dk_kind"),
                 sizeof_dictunicodeentry=("PyDictUnicodeEntry", None),
                 dictunicodeentry_key=("PyDictUnicodeEntry", "me_key"),
                 dictunicodeentry_value=("PyDictUnicodeEntry", "me_value"))
    if v < (3, 11):
        s.update(frame_localsplus=("PyFrameObject", "f_localsplus"), code_nlocals=("PyCodeObject", "co_nlocals"),
                 code_varnames=("PyCodeObject", "co_varnames"), code_cellvars=("PyCodeObject", "co_cellvars"),
                 code_freevars=("PyCodeObject", "co_freevars"), tstate_frame=("PyThreadState", "frame"),
                 frame_previous=("PyFrameObject", "f_back"), frame_code=("PyFrameObject", "f_code"),
                 frame_instr=("PyFrameObject", "f_lasti"), frame_lineno=("PyFrameObject", "f_lineno"))
        return s
    s.update(frame_localsplus=("_PyInterpreterFrame", "localsplus"),
             code_nlocalsplus=("PyCodeObject", "co_nlocalsplus"),
             code_localsplusnames=("PyCodeObject", "co_localsplusnames"),
             code_localspluskinds=("PyCodeObject", "co_localspluskinds"),
             tstate_native_thread_id=("PyThreadState", "native_thread_id"),
             frame_previous=("_PyInterpreterFrame", "previous"), frame_owner=("_PyInterpreterFrame", "owner"),
             code_qualname=("PyCodeObject", "co_qualname"), code_adaptive=("PyCodeObject", "co_code_adaptive"),
             code_firsttraceable=("PyCodeObject", "_co_firsttraceable"))
    if v < (3, 13):
        s.update(tstate_cframe=("PyThreadState", "cframe"), cframe_current_frame=("_PyCFrame", "current_frame"),
                 frame_code=("_PyInterpreterFrame", "f_code"), frame_instr=("_PyInterpreterFrame", "prev_instr"))
    else:
        s.update(tstate_frame=("PyThreadState", "current_frame"),
                 frame_code=("_PyInterpreterFrame", "f_executable"), frame_instr=("_PyInterpreterFrame", "instr_ptr"))
    if v < (3, 12):
        s["frame_is_entry"] = ("_PyInterpreterFrame", "is_entry")
    return s


#: Layout field <- (enum type, enumerator) (3.11+).
ENUMERATORS = {"owned_by_generator": ("_frameowner", "FRAME_OWNED_BY_GENERATOR"),
               "owned_by_cstack": ("_frameowner", "FRAME_OWNED_BY_CSTACK"),
               "dict_kind_general": ("DictKeysKind", "DICT_KEYS_GENERAL")}


def dwarf_fields(module, version, byteorder="little", eval_address=None):
    """{Layout field: value} read from ``module``'s DWARF (or its separate debug file) for
    CPython ``version``; {} without DWARF.  ``eval_address``: the evaluator's unbiased
    address, whose unit is searched first.  Kept in the module's cache."""
    if module is None:
        return {}
    key = ("cpython-dwarf-layout", tuple(version[:2]), byteorder)
    return module.cache.value(key, lambda: _kept(module, tuple(version[:2]), byteorder, eval_address))


def _kept(module, version, byteorder, eval_address):
    """_read's fields, from the disk cache when an earlier process found them in this
    build's DWARF.  Only where the module has DWARF to read now (a stripped copy has its
    program's build-id but no DWARF: the table's layout, as without the cache), and only a
    search that found fields is kept (a debug package installed later is then read)."""
    try:
        lines = module_lines(module)
        build_id = module.build_id if lines is not None and lines.dwarf is not None else None
    except Exception:
        build_id = None
    import hashlib   # here: the command line imports nothing it may not need
    what = repr((FINDER_VERSION, _specs(version), ENUMERATORS, MAX_UNITS)).encode()
    fact = (f"cpython-layout-{version[0]}.{version[1]}-{byteorder}-"
            f"{hashlib.sha1(what).hexdigest()[:16]}")
    if build_id:
        kept = diskcache.load_fact(build_id, fact)
        if isinstance(kept, dict) and kept and all(isinstance(k, str) and isinstance(v, int)
                                                   for k, v in kept.items()):
            return kept
    out = _read(module, version, byteorder, eval_address)
    if build_id and out:
        diskcache.store_fact(build_id, fact, out)
    return out


def _read(module, version, byteorder, eval_address):
    try:
        lines = module_lines(module)
        if lines is None or lines.dwarf is None:
            return {}
        types = _Types(lines.dwarf, eval_address)
        specs = _specs(version)
        out = {}
        for field, (tname, path) in specs.items():
            if path is not None and path.endswith("|mask") and byteorder != "little":
                continue
            value = types.member(tname, path)
            if value is not None:
                out[field] = value
        if version >= (3, 11):
            for field, (tname, name) in ENUMERATORS.items():
                values = dict(types.enumerators(tname))
                if name in values:
                    out[field] = values[name]
        return out
    except Exception:       # malformed or unexpected DWARF: the table's offsets stand
        return {}


class _Types:
    """Named type definitions of one DwarfInfo, found by name as asked for."""

    def __init__(self, dwarf, eval_address):
        self.d, self.reader = dwarf, TypeReader(dwarf)
        self.found, self.units, self._scanned = {}, self._units(eval_address), set()

    def _units(self, eval_address):
        d = self.d
        if eval_address is not None:
            cu = d.cu_for(eval_address)
            if cu is not None:
                yield cu
        info = d.secs.get(".debug_info")
        off, n, count = 0, len(info) if info is not None else 0, 0
        while off + 11 <= n and count < MAX_UNITS:
            cu = d.unit_at(off)
            count += 1
            yield cu
            if cu.end <= off:
                return
            off = cu.end

    def type(self, name):
        """The definition (typedefs stripped) named ``name``, or None."""
        while name not in self.found:
            cu = next(self.units, None)
            if cu is None:
                return None
            if cu.offset in self._scanned:
                continue
            self._scanned.add(cu.offset)
            self._scan(cu)
        return self.found[name]

    def _scan(self, cu):
        d = self.d
        for off in d.children(cu, cu.die_off):
            r = d.die_full(cu, off)
            if r is None or AT_name not in r[2]:
                continue
            v = r[2][AT_name][1]
            name = v if isinstance(v, str) else d.string(cu, v)
            if name in self.found:
                continue
            t = strip_typedefs(self.reader.type_at(cu, off))
            if t.kind in ("struct", "union") and (t.stub or not t.fields):
                continue                # a declaration (an opaque struct here): defined elsewhere
            self.found[name] = t

    def member(self, tname, path):
        t = self.type(tname)
        if t is None:
            return None
        if path is None:
            return t.size or None
        mask = path.endswith("|mask")
        bits = 0
        for part in path.split("|")[0].split("."):
            if mask:
                bits = 0                # a bitfield's bits count from its own struct's start
            f = _field(t, part)
            if f is None:
                return None
            bits += f.bitpos
            t = strip_typedefs(f.type)
        if mask:
            return ((1 << f.bitsize) - 1) << bits if f.bitsize else None
        return bits // 8

    def enumerators(self, name):
        t = self.type(name)
        return t.enumerators or () if t is not None else ()


def _field(t, name):
    """The member ``name`` of struct ``t``, looked for in its anonymous members too (their
    offsets added)."""
    for f in t.fields or ():
        if f.name == name and not f.is_static:
            return f
    for f in t.fields or ():
        if not f.name and not f.is_static:
            inner = _field(strip_typedefs(f.type), name)
            if inner is not None:
                copy = type(inner)(inner.name, inner.type, inner.bitpos + f.bitpos, inner.bitsize)
                return copy
    return None
