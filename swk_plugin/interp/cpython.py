"""CPython's threads and Python frames, read out of a stopped process (issue 28).

Native frames show the evaluator, ``_PyEval_EvalFrameDefault``, once per call into it; which
Python functions it was running is in the interpreter's own records, read from memory here
without running anything in the target (a core has nothing to run):

- ``_PyRuntime`` by symbol (exported by libpython or a static interpreter), else by its shape
  in the writable data of a stripped one (scan.py); the version from
  ``Py_Version`` (3.11+), else the library's or program's name (python3.10); the layout from
  layouts.py, overridden by the interpreter's own DWARF where it has debug info
  (dwarflayout.py), and by _Py_DebugOffsets where the runtime starts with them (3.13);
- the interpreters (``interpreters.head``, ``next``) and their PyThreadStates (``threads.head``
  or 3.10's ``tstate_head``, ``next``); a PyThreadState is an OS thread's by
  ``native_thread_id`` (3.11+), in 3.10 by ``thread_id``, which is pthread_self(): the
  thread's descriptor, as libthread_db finds it from the thread pointer (linux/tls.py);
- the frames: 3.10's PyFrameObject chain (``tstate->frame``, ``f_back``), one per evaluator
  call; 3.11/3.12's _PyInterpreterFrame chain from ``tstate->cframe->current_frame``, 3.13's
  from ``tstate->current_frame`` (``previous``), many per evaluator call: 3.11 marks the first
  frame of each call ``is_entry``, 3.12+ puts a shim frame owned by the C stack
  (FRAME_OWNED_BY_CSTACK) below it.  Frames CPython itself hides (not yet started:
  _PyFrame_IsIncomplete) are kept for the count but not shown.

Each frame's code object gives co_qualname (co_name in 3.10), co_filename and, from its line
table (linetable.py) at the frame's instruction, the current line.  ``python_stack(ps,
thread)`` is the one entry: a PyStack whose ``groups`` are the frames of each evaluator
call, innermost first, kept for the stop.
"""
import os
import re

from ..elf.symbols import module_symbols
from ..errors import MemoryReadError, SwkError
from ..linux.tls import thread_descriptor
from . import debugoffsets, scan
from .dwarflayout import dwarf_fields
from .layouts import layout_for, supported_versions
from .linetable import LineTable
from .objects import read_bytes, read_unicode

#: The evaluator: one native frame per call into it.
EVAL_FUNCTION = "_PyEval_EvalFrameDefault"
RUNTIME_SYMBOL = "_PyRuntime"
VERSION_SYMBOL = "Py_Version"
CODE_TYPE_SYMBOL = "PyCode_Type"
#: Most frames read of one thread, interpreters and threads followed (a chain in freed memory
#: may loop or run on).
MAX_FRAMES = 1 << 20
MAX_THREADS = 1 << 16
MAX_INTERPRETERS = 1 << 10
#: A library or program whose name says the version: python3.10, libpython3.10.so.1.0.
_NAMED_VERSION = re.compile(r"python(\d)\.(\d+)")


def is_eval_function(name):
    """Whether a native frame named ``name`` is the evaluator (or a part GCC split off it,
    ``_PyEval_EvalFrameDefault.cold``)."""
    return bool(name) and (name == EVAL_FUNCTION or name.startswith(EVAL_FUNCTION + "."))


class PyRuntime:
    """The target's _PyRuntime: its address, CPython version (major, minor, micro), the Layout
    read with (None, and ``why``, where swk has none), the library that defines it, the
    address of PyCode_Type (to check that a frame's code is a code object), whether the
    layout came with the runtime's own _Py_DebugOffsets, where its fields came from
    (``layout_sources``: of "debug offsets", "DWARF", "table", those that gave any, first
    the one that wins), and whether it was found by scanning (``scanned``: its symbol is gone)."""

    def __init__(self, address, version, layout, library, code_type=None, debug_offsets=False, why=None,
                 scanned=False, layout_sources=()):
        self.address, self.version, self.layout, self.library = address, version, layout, library
        self.code_type, self.debug_offsets, self.why = code_type, debug_offsets, why
        self.scanned, self.layout_sources = scanned, tuple(layout_sources)

    def symbol(self, name):
        """The address of symbol ``name`` of the runtime's library, or None."""
        return _symbol(self.library, name)

    @property
    def version_text(self):
        return ".".join(map(str, self.version)) if self.version else "?"

    def __repr__(self):
        return f"<PyRuntime {self.version_text} @0x{self.address:x} in {self.library.path}>"


class PyThreadState:
    """A PyThreadState: its address, interpreter, and the ids it records of its thread."""
    __slots__ = ("address", "interp", "thread_id", "native_thread_id")

    def __init__(self, address, interp, thread_id, native_thread_id):
        self.address, self.interp = address, interp
        self.thread_id, self.native_thread_id = thread_id, native_thread_id

    def __repr__(self):
        return f"<PyThreadState 0x{self.address:x} native {self.native_thread_id}>"


class PyFrame:
    """One Python frame: where it is (``address``: its _PyInterpreterFrame or PyFrameObject;
    ``code``), what it runs (``name``: co_qualname, or co_name in 3.10; ``filename``), its
    current ``line``; ``hidden``: CPython hides it (not started yet)."""
    __slots__ = ("address", "code", "name", "filename", "line", "hidden")

    def __init__(self, address, code, name, filename, line, hidden=False):
        self.address, self.code, self.name, self.filename, self.line = address, code, name, filename, line
        self.hidden = hidden

    def __repr__(self):
        return f"<PyFrame {self.name} ({self.filename}:{self.line})>"


class PyStack:
    """The Python frames of one thread: ``groups``, the frames of each evaluator call
    (innermost call first, each innermost frame first); ``error``: why the chain was not
    read to its end (None: it was)."""

    def __init__(self, runtime, tstate, groups, error=None):
        self.runtime, self.tstate, self.groups, self.error = runtime, tstate, groups, error

    @property
    def frames(self):
        """Every frame CPython shows, innermost first."""
        return [f for group in self.groups for f in group if not f.hidden]


class _Code:
    """What a frame needs of its code object (read once per stop)."""
    __slots__ = ("name", "filename", "lines", "instructions", "firsttraceable")

    def __init__(self, name, filename, lines, instructions, firsttraceable):
        self.name, self.filename, self.lines = name, filename, lines
        self.instructions, self.firsttraceable = instructions, firsttraceable


# --- the runtime ---------------------------------------------------------------------------

def find_runtime(ps):
    """The PyRuntime of the process ``ps`` reads, or None where no library defines _PyRuntime
    (kept while the libraries stay: the runtime is static data)."""
    if ps.library_state is None:
        return None
    return ps.library_cache.value(("cpython", "runtime"), lambda: _find_runtime(ps))


def _rank(lib, aout):
    """The order libraries are searched in: the program, libpython, then whatever else is
    named after python (a program embedding it); None: not searched."""
    name = os.path.basename(lib.path)
    if lib is aout:
        return 0
    if name.startswith("libpython"):
        return 1
    if "python" in name and ".cpython-" not in name:    # not an extension module
        return 2
    return None


def _symbol(lib, name):
    mod = lib.module
    syms = module_symbols(mod) if mod is not None else None
    hits = [s for s in (syms.by_linkage_name(name) if syms is not None else ()) if s.value]
    return lib.base + hits[0].value if hits else None


def _find_runtime(ps):
    libs = ps.library_state
    aout = libs.get_aout()
    ranked = sorted(((r, i, lib) for i, lib in enumerate(libs.get_libraries()) if (r := _rank(lib, aout)) is not None),
                    key=lambda t: t[:2])
    for _r, _i, lib in ranked:
        address = _symbol(lib, RUNTIME_SYMBOL)
        if address is not None:
            return _runtime_at(ps, lib, address)
    for _r, _i, lib in ranked:              # stripped: found by its shape (scan.py), in what is
        if "python" not in os.path.basename(lib.path):     # named after python: not every program
            continue
        rt = _scanned_runtime(ps, lib)
        if rt is not None:
            return rt
    return None


def _scanned_runtime(ps, lib):
    """The PyRuntime in ``lib``'s writable data where its symbol is gone: 3.13's by the cookie
    of its _Py_DebugOffsets, others by their interpreters' pointers back to it (the version
    from Py_Version or the library's name, which says what to look for)."""
    version = _version_of(ps, lib)
    if version is None or version[:2] >= (3, 13):
        at = scan.find_debug_offsets(ps, lib)
        debug = debugoffsets.read(ps.read_memory, at, ps.arch.byteorder) if at is not None else None
        if debug is not None:
            return _runtime_at(ps, lib, at, debug.version_tuple, scanned=True)
    if version is None:
        return None
    layout = layout_for(version, ps.arch.ptr_size, ps.arch.byteorder)
    at = scan.find_runtime_address(ps, lib, layout) if layout is not None else None
    return _runtime_at(ps, lib, at, version, scanned=True) if at is not None else None


def _version_of(ps, lib):
    """(major, minor, micro) of the interpreter in ``lib``: Py_Version (PY_VERSION_HEX, 3.11+),
    else the version in the library's (or its real file's) name, micro unknown (None)."""
    at = _symbol(lib, VERSION_SYMBOL)
    if at is not None:
        try:
            hexversion = ps.read_uint(at, ps.arch.ptr_size)
            return (hexversion >> 24) & 0xff, (hexversion >> 16) & 0xff, (hexversion >> 8) & 0xff
        except MemoryReadError:
            pass
    for path in (lib.path, os.path.realpath(lib.path)):
        m = _NAMED_VERSION.search(os.path.basename(path))
        if m:
            return int(m.group(1)), int(m.group(2)), None
    return None


def _runtime_at(ps, lib, address, version=None, scanned=False):
    arch = ps.arch
    version = version or _version_of(ps, lib)
    code_type = _symbol(lib, CODE_TYPE_SYMBOL)
    if version is None:
        return PyRuntime(address, None, None, lib, code_type, why="the CPython version is not known")
    layout = layout_for(version, arch.ptr_size, arch.byteorder)
    debug = debugoffsets.read(ps.read_memory, address, arch.byteorder) if version[:2] >= (3, 13) else None
    if debug is not None and debug.free_threaded:
        return PyRuntime(address, version, None, lib, code_type,
                         why=f"CPython {'.'.join(map(str, version))} is free-threaded: swk reads no such build yet")
    if layout is None:
        known = ", ".join(".".join(map(str, v)) for v in supported_versions())
        why = (f"swk reads CPython {known} on 64-bit targets, not {version[0]}.{version[1]}"
               + (f" on {arch.ptr_size * 8}-bit {arch.name}" if arch.ptr_size != 8 else ""))
        return PyRuntime(address, version, None, lib, code_type, why=why)
    layout, sources = _overridden(layout, lib, version, arch.byteorder, debug)
    return PyRuntime(address, version, layout, lib, code_type, debug_offsets=debug is not None, scanned=scanned,
                     layout_sources=sources)


def _overridden(layout, lib, version, byteorder, debug):
    """(``layout`` with the fields the library's DWARF states, then those of its
    _Py_DebugOffsets ``debug``; the sources that gave any, the winner first)."""
    sources = ["table"]
    mod = lib.module
    hits = [s for s in module_symbols(mod).by_linkage_name(EVAL_FUNCTION) if s.value] if mod is not None else []
    found = dwarf_fields(mod, version, byteorder, hits[0].value if hits else None)
    if found:
        layout = layout.replace(**found)
        sources.insert(0, "DWARF")
    if debug is not None:
        layout = layout.replace(**debug.layout_fields())
        sources.insert(0, "debug offsets")
    return layout, sources


# --- threads -------------------------------------------------------------------------------

def thread_states(ps, runtime):
    """Every PyThreadState of every interpreter of ``runtime`` (this stop's)."""
    return ps.cache.value(("cpython", "tstates", runtime.address), lambda: _thread_states(ps, runtime))


def _thread_states(ps, rt):
    layout, out = rt.layout, []
    rp = ps.read_pointer
    try:
        interp, seen = rp(rt.address + layout.runtime_interpreters_head), set()
        while interp and interp not in seen and len(seen) < MAX_INTERPRETERS:
            seen.add(interp)
            ts, mine = rp(interp + layout.interp_threads_head), set()
            while ts and ts not in mine and len(mine) < MAX_THREADS:
                mine.add(ts)
                native = (ps.read_uint(ts + layout.tstate_native_thread_id, ps.arch.ptr_size)
                          if layout.tstate_native_thread_id is not None else None)
                out.append(PyThreadState(ts, interp, ps.read_uint(ts + layout.tstate_thread_id, ps.arch.ptr_size),
                                         native))
                ts = rp(ts + layout.tstate_next)
            interp = rp(interp + layout.interp_next)
    except MemoryReadError:
        pass                    # the states read so far (an interpreter being torn down)
    return out


def thread_state_of(ps, runtime, thread):
    """The PyThreadState of ``thread`` (a back-end's thread), or None (a thread that never ran
    Python): by native_thread_id, or in 3.10 by pthread_self(), the thread's descriptor."""
    states = thread_states(ps, runtime)
    if not states:
        return None
    if runtime.layout.tstate_native_thread_id is not None:
        tid = ps.thread_label(thread)[1]
        return next((ts for ts in states if ts.native_thread_id == tid), None)
    libc = ps.library_state.get_libthread()
    if libc is None:
        return None
    try:
        self_ = thread_descriptor(ps, thread, libc)
    except (SwkError, MemoryReadError):
        return None
    return next((ts for ts in states if ts.thread_id == self_), None)


# --- frames --------------------------------------------------------------------------------

def python_stack(ps, thread):
    """The PyStack of ``thread``, or None where the process runs no CPython swk can read, or
    the thread has no PyThreadState; a runtime swk has no layout for gives a PyStack without
    frames whose ``error`` says why.  Kept for the stop."""
    memo = ps.cache.memo("cpython-stacks")
    stack = memo.get(thread, memo)
    if stack is memo:
        stack = memo.put(thread, _python_stack(ps, thread))
    return stack


def _python_stack(ps, thread):
    rt = find_runtime(ps)
    if rt is None:
        return None
    if rt.layout is None:
        return PyStack(rt, None, [], rt.why)
    tstate = thread_state_of(ps, rt, thread)
    if tstate is None:
        return None
    groups, error = _frame_groups(ps, rt, tstate)
    return PyStack(rt, tstate, groups, error)


def _signed(value, bits=32):
    return value - (1 << bits) if value & (1 << (bits - 1)) else value


def _first_frame(ps, layout, tstate):
    rp = ps.read_pointer
    if layout.tstate_cframe is not None:               # 3.11, 3.12
        cframe = rp(tstate + layout.tstate_cframe)
        return rp(cframe + layout.cframe_current_frame) if cframe else 0
    return rp(tstate + layout.tstate_frame)           # 3.10's frame, 3.13's current_frame


def _frame_groups(ps, rt, tstate):
    """([[PyFrame]] per evaluator call, innermost first; the error that ended the chain early)."""
    layout = rt.layout
    groups, seen, error = [[]], set(), None
    try:
        addr = _first_frame(ps, layout, tstate.address)
        while addr:
            if addr in seen or len(seen) >= MAX_FRAMES:
                error = f"the frame chain loops at 0x{addr:x}" if addr in seen else "too many frames"
                break
            seen.add(addr)
            if layout.frame_objects:                    # 3.10: a PyFrameObject per evaluator call
                groups[-1].append(_frame_310(ps, rt, addr))
                groups.append([])
            else:
                owner = ps.read_uint(addr + layout.frame_owner, 1)
                if layout.owned_by_cstack is not None and owner == layout.owned_by_cstack:
                    groups.append([])                   # 3.12+: the shim below an evaluator call's frames
                else:
                    groups[-1].append(_frame_311(ps, rt, addr, owner))
                    if layout.frame_is_entry is not None and ps.read_uint(addr + layout.frame_is_entry, 1):
                        groups.append([])               # 3.11: the first frame of an evaluator call
            addr = ps.read_pointer(addr + layout.frame_previous)
    except MemoryReadError as exc:
        error = str(exc)
    if not groups[-1]:
        groups.pop()
    return groups, error


def _code(ps, rt, code):
    """The _Code at ``code`` (None: not a code object, or unreadable), once per stop."""
    memo = ps.cache.memo("cpython-code")
    hit = memo.get(code, memo)
    if hit is memo:
        hit = memo.put(code, _read_code(ps, rt, code))
    return hit


def _read_code(ps, rt, code):
    layout = rt.layout
    try:
        if not code or (rt.code_type is not None and ps.read_pointer(code + layout.ob_type) != rt.code_type):
            return None
        name = read_unicode(ps, ps.read_pointer(code + (layout.code_qualname if layout.code_qualname is not None
                                                        else layout.code_name)), layout)
        filename = read_unicode(ps, ps.read_pointer(code + layout.code_filename), layout)
        first = _signed(ps.read_uint(code + layout.code_firstlineno, 4))
        table = read_bytes(ps, ps.read_pointer(code + layout.code_linetable), layout)
        traceable = (_signed(ps.read_uint(code + layout.code_firsttraceable, 4))
                     if layout.code_firsttraceable is not None else 0)
    except MemoryReadError:
        return None
    lines = LineTable.of(table, first, rt.version) if table is not None else None
    instructions = code + layout.code_adaptive if layout.code_adaptive is not None else None
    return _Code(name, filename, lines, instructions, traceable)


def _frame_310(ps, rt, addr):
    layout = rt.layout
    code_addr = ps.read_pointer(addr + layout.frame_code)
    code = _code(ps, rt, code_addr)
    if code is None:
        return PyFrame(addr, code_addr, None, None, None)
    lineno = _signed(ps.read_uint(addr + layout.frame_lineno, 4))     # set while tracing
    lasti = _signed(ps.read_uint(addr + layout.frame_instr, 4))       # in code units
    line = lineno or (code.lines.line_at(lasti * 2) if code.lines is not None else None)
    return PyFrame(addr, code_addr, code.name, code.filename, line)


def _frame_311(ps, rt, addr, owner):
    layout = rt.layout
    code_addr = ps.read_pointer(addr + layout.frame_code)
    code = _code(ps, rt, code_addr)
    if code is None:
        return PyFrame(addr, code_addr, None, None, None)
    instr = ps.read_pointer(addr + layout.frame_instr)
    offset = ((instr - code.instructions) // 2) * 2       # _PyInterpreterFrame_LASTI, in bytes
    line = code.lines.line_at(offset) if code.lines is not None else None
    hidden = owner != layout.owned_by_generator and offset < 2 * code.firsttraceable
    return PyFrame(addr, code_addr, code.name, code.filename, line, hidden)
