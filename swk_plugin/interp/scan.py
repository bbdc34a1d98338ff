"""_PyRuntime without its symbol: found in the interpreter's writable data by what it must hold.

A stripped interpreter (a static python whose symbols are gone, a libpython that does not
export _PyRuntime) still has its runtime state in its writable data (.data, .bss, 3.12's
.PyRuntime section), at an address no table says.  It is found there by its structure:

- 3.13 and later start it with _Py_DebugOffsets, whose cookie ``xdebugpy`` is looked for
  (debugoffsets.py checks the rest);
- any version: the runtime's ``interpreters.head`` and ``interpreters.main`` are interpreter
  states, and each interpreter state points back at the runtime it belongs to
  (PyInterpreterState.runtime).  A word where both interpreter pointers lead back to that word's
  own address is _PyRuntime: no other data has that shape.

Only the writable PT_LOAD segments of the library (or program) are read, each once, in
pieces, skipping what cannot be read.
"""
from ..elf.header import PF_W
from ..errors import MemoryReadError
from .debugoffsets import COOKIE

#: Bytes read at a time (a page at a time where that fails).
CHUNK = 1 << 16
PAGE = 1 << 12
#: Most bytes of one library's writable data read (a runtime lies in the first megabytes).
MAX_SCAN = 64 << 20


def writable_spans(lib):
    """[(lo, hi)] of ``lib``'s writable PT_LOAD segments, where they are in the process."""
    mod = lib.module
    if mod is None:
        return []
    return [(lib.base + vaddr, lib.base + vaddr + memsz)
            for _t, vaddr, memsz, flags, _off, _filesz in mod.segments("PT_LOAD") if flags & PF_W]


def _pieces(ps, lo, hi):
    """(address, bytes) of what can be read of [lo, hi)."""
    at = lo
    while at < hi:
        size = min(CHUNK, hi - at)
        try:
            yield at, ps.read_memory(at, size)
        except MemoryReadError:
            for page in range(at, at + size, PAGE):
                try:
                    yield page, ps.read_memory(page, min(PAGE, at + size - page))
                except MemoryReadError:
                    pass
        at += size


def _spans(ps, lib):
    budget = MAX_SCAN
    for lo, hi in writable_spans(lib):
        hi = min(hi, lo + budget)
        budget -= hi - lo
        if hi > lo:
            yield lo, hi
        if budget <= 0:
            return


def find_debug_offsets(ps, lib):
    """The address of the first _Py_DebugOffsets cookie, pointer-aligned, in ``lib``'s writable
    data (3.13+), or None."""
    align = ps.arch.ptr_size
    for lo, hi in _spans(ps, lib):
        for at, data in _pieces(ps, lo, hi):
            k = data.find(COOKIE)
            while k >= 0:
                if (at + k) % align == 0:
                    return at + k
                k = data.find(COOKIE, k + 1)
    return None


def find_runtime_address(ps, lib, layout):
    """The address of _PyRuntime in ``lib``'s writable data, by its interpreters (above), read
    with ``layout``; None where no word has that shape."""
    size = ps.arch.ptr_size
    order = ps.arch.byteorder
    head_at, main_at = layout.runtime_interpreters_head, layout.runtime_interpreters_main
    back = layout.interp_runtime
    for lo, hi in _spans(ps, lib):
        # a runtime that starts in one piece may hold its interpreters in the next: pieces are
        # read overlapping by the span of the two fields
        carry, carry_at = b"", lo
        for at, data in _pieces(ps, lo, hi):
            if carry and carry_at + len(carry) == at:
                data, at = carry + data, carry_at
            for k in range(0, len(data) - main_at - size + 1, size):
                main = int.from_bytes(data[k + main_at:k + main_at + size], order)
                if not main or main % size:
                    continue
                head = int.from_bytes(data[k + head_at:k + head_at + size], order)
                if not head or head % size:
                    continue
                addr = at + k
                try:
                    if ps.read_pointer(main + back) == addr and ps.read_pointer(head + back) == addr:
                        return addr
                except MemoryReadError:
                    continue
            keep = main_at + size
            carry, carry_at = data[-keep:], at + len(data) - keep
    return None
