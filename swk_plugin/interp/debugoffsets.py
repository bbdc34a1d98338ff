"""_Py_DebugOffsets: the offsets CPython 3.13 publishes at the start of _PyRuntime.

From 3.13 the runtime state begins with a struct of the offsets out-of-process tools need
(cookie "xdebugpy", the version, then per struct its size and its members' offsets, all
uint64_t).  Where an interpreter has it, it is the interpreter's own word and wins over
layouts.py's table, member by member; the table still gives what it does not say (the
unicode state's bits, _co_firsttraceable).  Only the shape of 3.13's struct is read: later
versions extend it.
"""
from ..errors import MemoryReadError
COOKIE = b"xdebugpy"

#: 3.13's struct, in order: (section, [members]); every member a uint64_t.
SHAPE_313 = (
    ("runtime_state", ("size", "finalizing", "interpreters_head")),
    ("interpreter_state", ("size", "id", "next", "threads_head", "gc", "imports_modules", "sysdict", "builtins",
                           "ceval_gil", "gil_runtime_state", "gil_runtime_state_enabled",
                           "gil_runtime_state_locked", "gil_runtime_state_holder")),
    ("thread_state", ("size", "prev", "next", "interp", "current_frame", "thread_id", "native_thread_id",
                      "datastack_chunk", "status")),
    ("interpreter_frame", ("size", "previous", "executable", "instr_ptr", "localsplus", "owner")),
    ("code_object", ("size", "filename", "name", "qualname", "linetable", "firstlineno", "argcount",
                     "localsplusnames", "localspluskinds", "co_code_adaptive")),
    ("pyobject", ("size", "ob_type")),
    ("type_object", ("size", "tp_name", "tp_repr", "tp_flags")),
    ("tuple_object", ("size", "ob_item", "ob_size")),
    ("list_object", ("size", "ob_item", "ob_size")),
    ("dict_object", ("size", "ma_keys", "ma_values")),
    ("float_object", ("size", "ob_fval")),
    ("long_object", ("size", "lv_tag", "ob_digit")),
    ("bytes_object", ("size", "ob_size", "ob_sval")),
    ("unicode_object", ("size", "state", "length", "asciiobject_size")),
    ("gc", ("size", "collecting")),
)

#: Layout field <- (section, member).
TO_LAYOUT = {
    "runtime_interpreters_head": ("runtime_state", "interpreters_head"),
    "interp_next": ("interpreter_state", "next"),
    "interp_threads_head": ("interpreter_state", "threads_head"),
    "tstate_next": ("thread_state", "next"),
    "tstate_frame": ("thread_state", "current_frame"),
    "tstate_thread_id": ("thread_state", "thread_id"),
    "tstate_native_thread_id": ("thread_state", "native_thread_id"),
    "frame_previous": ("interpreter_frame", "previous"),
    "frame_code": ("interpreter_frame", "executable"),
    "frame_instr": ("interpreter_frame", "instr_ptr"),
    "frame_owner": ("interpreter_frame", "owner"),
    "code_filename": ("code_object", "filename"),
    "code_name": ("code_object", "name"),
    "code_qualname": ("code_object", "qualname"),
    "code_linetable": ("code_object", "linetable"),
    "code_firstlineno": ("code_object", "firstlineno"),
    "code_adaptive": ("code_object", "co_code_adaptive"),
    "ob_type": ("pyobject", "ob_type"),
    "var_size": ("bytes_object", "ob_size"),
    "bytes_sval": ("bytes_object", "ob_sval"),
    "unicode_state": ("unicode_object", "state"),
    "unicode_length": ("unicode_object", "length"),
    "sizeof_ascii": ("unicode_object", "asciiobject_size"),
    "frame_localsplus": ("interpreter_frame", "localsplus"),
    "code_localsplusnames": ("code_object", "localsplusnames"),
    "code_localspluskinds": ("code_object", "localspluskinds"),
    "tuple_item": ("tuple_object", "ob_item"),
    "list_item": ("list_object", "ob_item"),
    "float_value": ("float_object", "ob_fval"),
    "type_name": ("type_object", "tp_name"),
    "long_tag": ("long_object", "lv_tag"),
    "long_digits": ("long_object", "ob_digit"),
    "interp_ceval_gil": ("interpreter_state", "ceval_gil"),
}

#: Layout field <- a member of the interpreter's own GIL (_gil), which _Py_DebugOffsets states
#: from the start of PyInterpreterState: less gil_runtime_state, the offset in the GIL itself
#: (what ceval.gil points at).
GIL_MEMBERS = {"gil_locked": "gil_runtime_state_locked", "gil_last_holder": "gil_runtime_state_holder"}


class PyDebugOffsets:
    """A _Py_DebugOffsets as read: ``version`` (PY_VERSION_HEX), ``free_threaded``, and
    ``sections[section][member]``."""

    def __init__(self, version, free_threaded, sections):
        self.version, self.free_threaded, self.sections = version, free_threaded, sections

    @property
    def version_tuple(self):
        """(major, minor, micro) of PY_VERSION_HEX."""
        return (self.version >> 24) & 0xff, (self.version >> 16) & 0xff, (self.version >> 8) & 0xff

    def layout_fields(self):
        """{Layout field: offset} this struct states."""
        out = {field: self.sections[sec][member] for field, (sec, member) in TO_LAYOUT.items()}
        interp = self.sections["interpreter_state"]
        out.update({field: interp[member] - interp["gil_runtime_state"] for field, member in GIL_MEMBERS.items()})
        return out


def size_313():
    return 8 * (3 + sum(len(members) for _sec, members in SHAPE_313))


def parse(data, byteorder):
    """The PyDebugOffsets in ``data`` (the first bytes of _PyRuntime), or None where they do
    not start with the cookie or are not 3.13's."""
    if len(data) < 24 or data[:8] != COOKIE:
        return None

    def word(i):
        return int.from_bytes(data[8 * i:8 * i + 8], byteorder)
    version = word(1)
    if (version >> 16) & 0xffff != 0x030d or len(data) < size_313():
        return None
    i, sections = 3, {}
    for section, members in SHAPE_313:
        sections[section] = {m: word(i + k) for k, m in enumerate(members)}
        i += len(members)
    return PyDebugOffsets(version, word(2), sections)


def read(read_memory, runtime, byteorder):
    """The PyDebugOffsets at ``runtime`` (the address of _PyRuntime), or None."""
    try:
        if read_memory(runtime, 8) != COOKIE:
            return None
        return parse(read_memory(runtime, size_313()), byteorder)
    except MemoryReadError:
        return None
