"""Where CPython keeps what a stack needs, per version: one table per minor version.

A debugger that reads an interpreter's frames out of memory needs the offsets of a few fields
of CPython's internal structs (PyThreadState, _PyInterpreterFrame, PyCodeObject...), which
change with every minor version and are not in the interpreter's symbol table.  The tables
below are those of each version's own headers for LP64 targets, each checked by
tests/test_python_layouts.py against offsetof() compiled from that version's
``include/python3.X/internal`` headers (Py_BUILD_CORE).  3.13 also publishes its offsets at
the start of ``_PyRuntime`` (_Py_DebugOffsets, debugoffsets.py): where present they win
over the table, field by field.

Field names are ``<struct>_<member>`` in CPython's own terms; None where the version has no
such member (3.10 has no co_qualname, 3.12 no is_entry).
"""


class Layout:
    """The offsets (bytes), sizes and constants of one CPython version: a frozen record of the
    fields below (made by hand, not by dataclasses, whose import and class-making cost a
    debugger's start several milliseconds)."""
    version: tuple                      # (3, 12)
    # _PyRuntimeState, PyInterpreterState, PyThreadState
    runtime_interpreters_head: int      # _PyRuntime.interpreters.head
    runtime_interpreters_main: int      # _PyRuntime.interpreters.main
    interp_runtime: int                 # PyInterpreterState.runtime: &_PyRuntime (scan.py's check)
    interp_next: int
    interp_threads_head: int            # 3.10: tstate_head; 3.11+: threads.head
    tstate_next: int
    tstate_thread_id: int               # PyThread_get_thread_ident(): pthread_self()
    tstate_native_thread_id: int = None  # 3.11+: the OS thread id
    tstate_frame: int = None            # 3.10: frame (PyFrameObject *); 3.13: current_frame
    tstate_cframe: int = None           # 3.11, 3.12: cframe (_PyCFrame *)
    cframe_current_frame: int = None
    # the frame: 3.10's PyFrameObject, 3.11+'s _PyInterpreterFrame
    frame_previous: int = 0             # f_back / previous
    frame_code: int = 0                 # f_code; 3.13: f_executable
    frame_instr: int = 0                # 3.10: f_lasti (an int, in code units); prev_instr; 3.13: instr_ptr
    frame_lineno: int = None            # 3.10: f_lineno (set while tracing)
    frame_is_entry: int = None          # 3.11: is_entry (bool)
    frame_owner: int = None             # 3.11+: owner (char)
    owned_by_generator: int = None      # FRAME_OWNED_BY_GENERATOR
    owned_by_cstack: int = None         # 3.12+: FRAME_OWNED_BY_CSTACK (the entry shim)
    # objects
    ob_type: int = 8
    var_size: int = 16                  # PyVarObject.ob_size
    code_filename: int = 0
    code_name: int = 0
    code_qualname: int = None           # 3.11+
    code_firstlineno: int = 0
    code_linetable: int = 0
    code_adaptive: int = None           # 3.11+: co_code_adaptive, the instructions (_PyCode_CODE)
    code_firsttraceable: int = None     # 3.11+: _co_firsttraceable
    unicode_length: int = 16
    unicode_state: int = 32
    sizeof_ascii: int = 48              # sizeof(PyASCIIObject): compact ASCII data follows
    sizeof_compact: int = 72            # sizeof(PyCompactUnicodeObject): other compact data
    unicode_kind_mask: int = 0x1c       # state's bits, as GCC packs them in a little-endian word
    unicode_compact_mask: int = 0x20
    unicode_ascii_mask: int = 0x40
    bytes_sval: int = 32
    # a frame's locals (swk-bt -py -full): where they are, and the objects their values are
    frame_localsplus: int = 72          # 3.10: f_localsplus; 3.11+: localsplus
    code_nlocals: int = None            # 3.10: co_nlocals, then co_varnames, co_cellvars, co_freevars
    code_varnames: int = None
    code_cellvars: int = None
    code_freevars: int = None
    code_nlocalsplus: int = None        # 3.11+: co_nlocalsplus, co_localsplusnames, co_localspluskinds
    code_localsplusnames: int = None
    code_localspluskinds: int = None
    fast_cell: int = None               # 3.11+: CO_FAST_CELL, CO_FAST_FREE (a kind's bits)
    fast_free: int = None
    tuple_item: int = 24                # PyTupleObject.ob_item
    list_item: int = 24                 # PyListObject.ob_item
    float_value: int = 16               # PyFloatObject.ob_fval
    type_name: int = 24                 # PyTypeObject.tp_name
    dict_used: int = 16                 # PyDictObject.ma_used
    cell_ref: int = 16                  # PyCellObject.ob_ref
    # a dict's entries (-full): its keys object's indices, then entries; 3.10's keys object is
    # in no installed header, so its table leaves them None (read from DWARF only)
    dict_keys: int = 32                 # PyDictObject.ma_keys
    dict_values: int = 40               # ma_values: a split table's values (not read)
    dictkeys_size: int = None           # 3.10: dk_size (Py_ssize_t); the indices' width follows from it
    dictkeys_log2_index_bytes: int = None   # 3.11+: the indices' bytes, log2 (uint8_t)
    dictkeys_kind: int = None           # 3.11+: dk_kind (uint8_t): which entries
    dict_kind_general: int = None       # 3.11+: DICT_KEYS_GENERAL (PyDictKeyEntry; else PyDictUnicodeEntry)
    dictkeys_nentries: int = None       # Py_ssize_t
    dictkeys_indices: int = None
    sizeof_dictkeyentry: int = None
    dictkeyentry_key: int = None
    dictkeyentry_value: int = None
    sizeof_dictunicodeentry: int = None
    dictunicodeentry_key: int = None
    dictunicodeentry_value: int = None
    long_digits: int = 24               # PyLongObject's ob_digit (3.12+: long_value.ob_digit)
    long_tag: int = None                # 3.12+: long_value.lv_tag (3.10, 3.11: ob_size's sign and count)
    long_shift: int = 30                # PyLong_SHIFT
    sizeof_digit: int = 4
    # the GIL (struct _gil_runtime_state): 3.10, 3.11 keep it in _PyRuntime.ceval.gil, 3.12+
    # point each interpreter's ceval.gil at the one it uses
    runtime_gil: int = None             # 3.10, 3.11: offsetof(_PyRuntimeState, ceval.gil)
    interp_ceval_gil: int = None        # 3.12+: offsetof(PyInterpreterState, ceval.gil)
    gil_last_holder: int = 8            # the PyThreadState that took it last
    gil_locked: int = 16                # whether it is held (an int)

    @property
    def frame_objects(self):
        """Whether frames are PyFrameObjects chained by f_back (3.10), one per evaluator call."""
        return self.version < (3, 11)

    def __init__(self, *args, **fields):
        if len(args) > len(_FIELDS):
            raise TypeError(f"Layout takes at most {len(_FIELDS)} fields")
        values = dict(zip(_FIELDS, args))
        for name, value in fields.items():
            if name not in _INDEX or name in values:
                raise TypeError(f"Layout: unknown or repeated field {name!r}")
            values[name] = value
        for name in _FIELDS:
            if name not in values:
                if name not in _DEFAULTS:
                    raise TypeError(f"Layout: field {name!r} is missing")
                values[name] = _DEFAULTS[name]
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field {name!r}: a Layout is frozen")

    def _values(self):
        return {name: getattr(self, name) for name in _FIELDS}

    def __eq__(self, other):
        return other.__class__ is self.__class__ and other._values() == self._values()

    def __hash__(self):
        return hash(tuple(self._values().values()))

    def __repr__(self):
        return "Layout(" + ", ".join(f"{n}={v!r}" for n, v in self._values().items()) + ")"

    def replace(self, **fields):
        """A copy with ``fields`` changed (TypeError for a name that is no field)."""
        return Layout(**{**self._values(), **fields})


_FIELDS = tuple(Layout.__annotations__)
_INDEX = frozenset(_FIELDS)
_DEFAULTS = {name: getattr(Layout, name) for name in _FIELDS if hasattr(Layout, name)}


_V310 = Layout(
    (3, 10), runtime_interpreters_head=32, runtime_interpreters_main=40, interp_runtime=16,
    interp_next=0, interp_threads_head=8, tstate_next=8,
    tstate_thread_id=176, tstate_frame=24, frame_previous=24, frame_code=32, frame_instr=96, frame_lineno=100,
    code_filename=104, code_name=112, code_firstlineno=40, code_linetable=120,
    frame_localsplus=352, code_nlocals=28, code_varnames=72, code_cellvars=88, code_freevars=80, runtime_gil=352)

_V311 = Layout(
    (3, 11), runtime_interpreters_head=40, runtime_interpreters_main=48, interp_runtime=40,
    interp_next=0, interp_threads_head=16, tstate_next=8,
    tstate_thread_id=152, tstate_native_thread_id=160, tstate_cframe=56, cframe_current_frame=8,
    frame_previous=48, frame_code=32, frame_instr=56, frame_is_entry=68, frame_owner=69, owned_by_generator=1,
    code_filename=112, code_name=120, code_qualname=128, code_firstlineno=72, code_linetable=136,
    code_adaptive=184, code_firsttraceable=168,
    code_nlocalsplus=76, code_localsplusnames=96, code_localspluskinds=104, fast_cell=0x40, fast_free=0x80,
    runtime_gil=360)

_V312 = Layout(
    (3, 12), runtime_interpreters_head=40, runtime_interpreters_main=48, interp_runtime=96,
    interp_next=0, interp_threads_head=72, tstate_next=8,
    tstate_thread_id=136, tstate_native_thread_id=144, tstate_cframe=56, cframe_current_frame=0,
    frame_previous=8, frame_code=0, frame_instr=56, frame_owner=70, owned_by_generator=1, owned_by_cstack=3,
    code_filename=112, code_name=120, code_qualname=128, code_firstlineno=68, code_linetable=136,
    code_adaptive=192, code_firsttraceable=176, sizeof_ascii=40, sizeof_compact=56,
    code_nlocalsplus=72, code_localsplusnames=96, code_localspluskinds=104, fast_cell=0x40, fast_free=0x80,
    long_tag=16, interp_ceval_gil=384)

_V313 = Layout(
    (3, 13), runtime_interpreters_head=632, runtime_interpreters_main=640, interp_runtime=7376,
    interp_next=7264, interp_threads_head=7344, tstate_next=8,
    tstate_thread_id=152, tstate_native_thread_id=160, tstate_frame=72,
    frame_previous=8, frame_code=0, frame_instr=56, frame_owner=70, owned_by_generator=1, owned_by_cstack=3,
    code_filename=112, code_name=120, code_qualname=128, code_firstlineno=68, code_linetable=136,
    code_adaptive=200, code_firsttraceable=184, sizeof_ascii=40, sizeof_compact=56,
    code_nlocalsplus=72, code_localsplusnames=96, code_localspluskinds=104, fast_cell=0x40, fast_free=0x80,
    long_tag=16, interp_ceval_gil=16)

#: 3.11+'s dict keys (pycore_dict.h), the same in 3.11, 3.12 and 3.13.
_DICT_311 = dict(dictkeys_log2_index_bytes=9, dictkeys_kind=10, dict_kind_general=0, dictkeys_nentries=24,
                 dictkeys_indices=32, sizeof_dictkeyentry=24, dictkeyentry_key=8, dictkeyentry_value=16,
                 sizeof_dictunicodeentry=16, dictunicodeentry_key=0, dictunicodeentry_value=8)
_V311, _V312, _V313 = (v.replace(**_DICT_311) for v in (_V311, _V312, _V313))

#: (major, minor) -> Layout, for 64-bit targets.
LAYOUTS = {layout.version: layout for layout in (_V310, _V311, _V312, _V313)}

#: The pointer size the tables are for.
POINTER_SIZE = 8


def layout_for(version, ptr_size=POINTER_SIZE, byteorder="little"):
    """The Layout of CPython ``version`` ((3, 12) or longer) on a target with pointers of
    ``ptr_size`` bytes and ``byteorder``; None for a version or target without a table."""
    if ptr_size != POINTER_SIZE:
        return None
    layout = LAYOUTS.get(tuple(version[:2]))
    if layout is None or byteorder == "little":
        return layout
    # GCC packs bitfields from a big-endian word's most significant bit
    return layout.replace(**{name: _mirror(getattr(layout, name)) for name in
                             ("unicode_kind_mask", "unicode_compact_mask", "unicode_ascii_mask")})


def _mirror(mask, bits=32):
    return int(format(mask, f"0{bits}b")[::-1], 2)


def supported_versions():
    return sorted(LAYOUTS)
