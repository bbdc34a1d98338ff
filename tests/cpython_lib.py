"""The CPython interpreters of this machine, and their own headers as an oracle (issue 28).

``INTERPRETERS``: each interpreter swk reads Python frames of — Debian's python3.11 and
pyenv's 3.10, 3.11, 3.12, 3.13 — with the directory of its own headers.  ``header_layout``
compiles a C file against that interpreter's ``internal/`` headers (Py_BUILD_CORE) and runs
it: every offset, size and constant swk_plugin/interp/layouts.py states, as the compiler
lays the structs out.  Nothing here is a hard-coded answer.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import subprocess
from pathlib import Path

from swk_testlib import BUILD

PYENV = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"


@dataclasses.dataclass(frozen=True)
class Interpreter:
    name: str                 # the test id: "3.11-debian", "3.12"
    python: Path              # the interpreter to run
    include: Path             # its include/python3.X
    version: tuple            # (3, 12)

    @property
    def exists(self):
        return self.python.exists() and (self.include / "internal").is_dir()

    @property
    def library(self):
        """The file that defines _PyRuntime: pyenv's libpython, else the program itself."""
        lib = self.python.parent.parent / "lib" / f"libpython{self.version[0]}.{self.version[1]}.so.1.0"
        return lib if lib.exists() else self.python


def has_dwarf(path) -> bool:
    """Whether ``path`` has DWARF, in itself or in the separate file its build ID names
    (python3.11-dbg's), as binutils' readelf sees it."""
    def sections(p):
        out = subprocess.run(["readelf", "-S", "-W", str(p)], capture_output=True, text=True).stdout
        return " .debug_info " in out
    if sections(path):
        return True
    notes = subprocess.run(["readelf", "-n", str(path)], capture_output=True, text=True).stdout
    ids = [line.split()[-1] for line in notes.splitlines() if "Build ID:" in line]
    return any(sections(p) for i in ids if (p := Path(f"/usr/lib/debug/.build-id/{i[:2]}/{i[2:]}.debug")).exists())


def _pyenv(full):
    minor = ".".join(full.split(".")[:2])
    root = PYENV / full
    return Interpreter(minor, root / "bin" / f"python{minor}", root / "include" / f"python{minor}",
                       tuple(int(p) for p in minor.split(".")))


INTERPRETERS = [
    _pyenv("3.10.13"),
    _pyenv("3.11.7"),
    Interpreter("3.11-debian", Path("/usr/bin/python3.11"), Path("/usr/include/python3.11"), (3, 11)),
    _pyenv("3.12.1"),
    _pyenv("3.13.0"),
]


def probe_fields(version):
    """{layouts field: the C expression the probe prints for it}."""
    return _fields(version)


def _fields(version):
    """{layouts field: C expression} for one version: what each field of
    swk_plugin.interp.layouts.Layout is in CPython's own terms."""
    v = version
    f = {
        "runtime_interpreters_head": "offsetof(_PyRuntimeState, interpreters.head)",
        "interp_next": "offsetof(PyInterpreterState, next)",
        "interp_threads_head": ("offsetof(PyInterpreterState, tstate_head)" if v < (3, 11)
                                else "offsetof(PyInterpreterState, threads.head)"),
        "tstate_next": "offsetof(PyThreadState, next)",
        "tstate_thread_id": "offsetof(PyThreadState, thread_id)",
        "ob_type": "offsetof(PyObject, ob_type)",
        "var_size": "offsetof(PyVarObject, ob_size)",
        "code_filename": "offsetof(PyCodeObject, co_filename)",
        "code_name": "offsetof(PyCodeObject, co_name)",
        "code_firstlineno": "offsetof(PyCodeObject, co_firstlineno)",
        "code_linetable": "offsetof(PyCodeObject, co_linetable)",
        "unicode_length": "offsetof(PyASCIIObject, length)",
        "unicode_state": "offsetof(PyASCIIObject, state)",
        "sizeof_ascii": "sizeof(PyASCIIObject)",
        "sizeof_compact": "sizeof(PyCompactUnicodeObject)",
        "bytes_sval": "offsetof(PyBytesObject, ob_sval)",
        # the bits of PyASCIIObject.state each bitfield takes, as the compiler packs them
        "unicode_kind_mask": "state_bits(0)",
        "unicode_compact_mask": "state_bits(1)",
        "unicode_ascii_mask": "state_bits(2)",
    }
    # what a frame's locals need: the values' objects
    f.update({"tuple_item": "offsetof(PyTupleObject, ob_item)",
              "list_item": "offsetof(PyListObject, ob_item)",
              "float_value": "offsetof(PyFloatObject, ob_fval)",
              "type_name": "offsetof(PyTypeObject, tp_name)",
              "dict_used": "offsetof(PyDictObject, ma_used)",
              "cell_ref": "offsetof(PyCellObject, ob_ref)",
              "long_shift": "PyLong_SHIFT",
              "sizeof_digit": "sizeof(digit)"})
    # a dict's entries (3.10 keeps its keys object in Objects/dict-common.h: not installed)
    f.update({"dict_keys": "offsetof(PyDictObject, ma_keys)", "dict_values": "offsetof(PyDictObject, ma_values)"})
    if v >= (3, 11):
        f.update({"dictkeys_log2_index_bytes": "offsetof(PyDictKeysObject, dk_log2_index_bytes)",
                  "dictkeys_kind": "offsetof(PyDictKeysObject, dk_kind)",
                  "dictkeys_nentries": "offsetof(PyDictKeysObject, dk_nentries)",
                  "dictkeys_indices": "offsetof(PyDictKeysObject, dk_indices)",
                  "dict_kind_general": "DICT_KEYS_GENERAL",
                  "sizeof_dictkeyentry": "sizeof(PyDictKeyEntry)",
                  "dictkeyentry_key": "offsetof(PyDictKeyEntry, me_key)",
                  "dictkeyentry_value": "offsetof(PyDictKeyEntry, me_value)",
                  "sizeof_dictunicodeentry": "sizeof(PyDictUnicodeEntry)",
                  "dictunicodeentry_key": "offsetof(PyDictUnicodeEntry, me_key)",
                  "dictunicodeentry_value": "offsetof(PyDictUnicodeEntry, me_value)"})
    if v < (3, 12):
        f["long_digits"] = "offsetof(PyLongObject, ob_digit)"
    else:
        f.update({"long_digits": "offsetof(PyLongObject, long_value.ob_digit)",
                  "long_tag": "offsetof(PyLongObject, long_value.lv_tag)"})
    if v < (3, 11):
        f.update({"frame_localsplus": "offsetof(PyFrameObject, f_localsplus)",
                  "code_nlocals": "offsetof(PyCodeObject, co_nlocals)",
                  "code_varnames": "offsetof(PyCodeObject, co_varnames)",
                  "code_cellvars": "offsetof(PyCodeObject, co_cellvars)",
                  "code_freevars": "offsetof(PyCodeObject, co_freevars)"})
    else:
        f.update({"frame_localsplus": "offsetof(_PyInterpreterFrame, localsplus)",
                  "code_nlocalsplus": "offsetof(PyCodeObject, co_nlocalsplus)",
                  "code_localsplusnames": "offsetof(PyCodeObject, co_localsplusnames)",
                  "code_localspluskinds": "offsetof(PyCodeObject, co_localspluskinds)",
                  "fast_cell": "CO_FAST_CELL",
                  "fast_free": "CO_FAST_FREE"})
    # what a runtime found without its symbol must be (interp/scan.py)
    f.update({"runtime_interpreters_main": "offsetof(_PyRuntimeState, interpreters.main)",
              "interp_runtime": "offsetof(PyInterpreterState, runtime)"})
    # the GIL: who holds it (thread states, swk-bt -py's thread headers)
    f.update({"gil_last_holder": "offsetof(struct _gil_runtime_state, last_holder)",
              "gil_locked": "offsetof(struct _gil_runtime_state, locked)"})
    if v < (3, 12):
        f["runtime_gil"] = "offsetof(_PyRuntimeState, ceval.gil)"
    else:
        f["interp_ceval_gil"] = "offsetof(PyInterpreterState, ceval.gil)"
    if v < (3, 11):
        f.update({"tstate_frame": "offsetof(PyThreadState, frame)",
                  "frame_previous": "offsetof(PyFrameObject, f_back)",
                  "frame_code": "offsetof(PyFrameObject, f_code)",
                  "frame_instr": "offsetof(PyFrameObject, f_lasti)",
                  "frame_lineno": "offsetof(PyFrameObject, f_lineno)"})
        return f
    f.update({"tstate_native_thread_id": "offsetof(PyThreadState, native_thread_id)",
              "frame_previous": "offsetof(_PyInterpreterFrame, previous)",
              "frame_owner": "offsetof(_PyInterpreterFrame, owner)",
              "code_qualname": "offsetof(PyCodeObject, co_qualname)",
              "code_adaptive": "offsetof(PyCodeObject, co_code_adaptive)",
              "code_firsttraceable": "offsetof(PyCodeObject, _co_firsttraceable)",
              "owned_by_generator": "FRAME_OWNED_BY_GENERATOR"})
    if v < (3, 13):
        f.update({"tstate_cframe": "offsetof(PyThreadState, cframe)",
                  "cframe_current_frame": "offsetof(_PyCFrame, current_frame)",
                  "frame_code": "offsetof(_PyInterpreterFrame, f_code)",
                  "frame_instr": "offsetof(_PyInterpreterFrame, prev_instr)"})
    else:
        f.update({"tstate_frame": "offsetof(PyThreadState, current_frame)",
                  "frame_code": "offsetof(_PyInterpreterFrame, f_executable)",
                  "frame_instr": "offsetof(_PyInterpreterFrame, instr_ptr)"})
    if v < (3, 12):
        f["frame_is_entry"] = "offsetof(_PyInterpreterFrame, is_entry)"
    else:
        f["owned_by_cstack"] = "FRAME_OWNED_BY_CSTACK"
    return f


#: The headers the probe includes (each version's internal headers name these).
_INCLUDES = ("Python.h", "frameobject.h", "internal/pycore_runtime.h", "internal/pycore_interp.h",
             "internal/pycore_frame.h", "internal/pycore_code.h", "internal/pycore_dict.h")


def probe_source(version):
    lines = ["#define Py_BUILD_CORE 1", "#include <stddef.h>", "#include <stdio.h>", "#include <string.h>"]
    lines += [f"#include <{h}>" for h in _INCLUDES if version >= (3, 11) or ("frame.h" not in h and "dict.h" not in h)]
    lines += ["#include <longintrepr.h>" if version < (3, 11) else "#include <cpython/longintrepr.h>"]
    lines += ["static unsigned long long state_bits(int which) {",
              "    PyASCIIObject o;",
              "    unsigned int word = 0;",
              "    memset(&o, 0, sizeof o);",
              "    if (which == 0) o.state.kind = 7; else if (which == 1) o.state.compact = 1; else o.state.ascii = 1;",
              "    memcpy(&word, &o.state, sizeof word);",
              "    return word;",
              "}",
              "int main(void) {"]
    for name, expr in _fields(version).items():
        lines.append(f'    printf("{name} %lld\\n", (long long)({expr}));')
    lines += ["    return 0;", "}"]
    return "\n".join(lines) + "\n"


def header_layout(interp: Interpreter) -> dict:
    """{field: value} compiled from ``interp``'s own headers (cached by the source and headers)."""
    src = probe_source(interp.version)
    h = hashlib.sha256(src.encode())
    for p in sorted((interp.include / "internal").glob("*.h")) + sorted(interp.include.glob("cpython/*.h")):
        h.update(p.name.encode())
        h.update(str(p.stat().st_mtime_ns).encode())
    out_dir = BUILD / "cpython-probe"
    out_dir.mkdir(parents=True, exist_ok=True)
    exe = out_dir / f"probe-{interp.name}-{h.hexdigest()[:12]}"
    if not exe.exists():
        c = out_dir / f"{exe.name}.c"
        c.write_text(src)
        p = subprocess.run(["gcc", "-w", "-I", str(interp.include), "-I", str(interp.include / "internal"),
                            str(c), "-o", str(exe) + ".tmp"], capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, f"the probe does not compile against {interp.include}:\n{p.stderr[-4000:]}"
        os.replace(str(exe) + ".tmp", exe)
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=30, check=True).stdout
    return {name: int(value) for name, value in (line.split() for line in out.splitlines())}
