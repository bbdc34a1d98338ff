"""CPython's structs and line tables as swk reads them (issue 28), held against each interpreter.

- Every field of swk_plugin/interp/layouts.py's table for a version equals offsetof() (or the
  constant) compiled from that interpreter's own internal headers (cpython_lib.header_layout),
  for each interpreter of the machine: pyenv's 3.10, 3.11, 3.12, 3.13 and Debian's 3.11.
- The layout read from each interpreter's own DWARF (interp/dwarflayout.py: pyenv's builds,
  Debian's through python3.11-dbg) states every offset, size and enumerator the headers give
  (all but their macros), each equal to the headers' and so to the table's (and 3.10's dict
  keys, in no installed header, which only DWARF gives).
- 3.13's _Py_DebugOffsets, as swk parses them out of libpython's own _PyRuntime, equal those
  headers too.
- The line tables (PEP 626's and PEP 657's) decoded by swk give, at every instruction, the line
  the interpreter's own code.co_lines() gives, for the standard library and for code written
  to reach every entry form (long line jumps, long lines, multi-line expressions, no-line code).
"""
from __future__ import annotations

import json
import os
import subprocess

import pytest

from cpython_lib import INTERPRETERS, has_dwarf, header_layout, probe_fields

from swk_plugin.elf.module import ElfModule, open_module
from swk_plugin.elf.symbols import module_symbols
from swk_plugin.interp import debugoffsets
from swk_plugin.interp.dwarflayout import dwarf_fields
from swk_plugin.interp.layouts import layout_for
from swk_plugin.interp.linetable import LineTable

IDS = [i.name for i in INTERPRETERS]


def _need(interp):
    assert interp.exists, f"{interp.python} or {interp.include}/internal is missing (scripts/setup.sh)"


@pytest.mark.parametrize("interp", INTERPRETERS, ids=IDS)
def test_layout_is_the_headers(interp):
    _need(interp)
    compiled = header_layout(interp)
    layout = layout_for(interp.version)
    assert layout is not None, interp.version
    wrong = {name: (getattr(layout, name), value) for name, value in compiled.items()
             if getattr(layout, name) != value}
    assert not wrong, f"layouts.py (swk, headers) for {interp.name}: {wrong}"
    # and what the table leaves None is what this version does not have
    stated = {name for name, value in vars(layout).items() if value is not None and name != "version"}
    assert stated <= set(compiled) | {"frame_lineno", "ob_type", "var_size", "unicode_length", "unicode_state",
                                      "sizeof_ascii", "sizeof_compact", "bytes_sval"}, stated - set(compiled)


@pytest.mark.parametrize("interp", INTERPRETERS, ids=IDS)
def test_dwarf_layout_is_the_headers(interp, tmp_path, monkeypatch):
    """What the interpreter's DWARF says of its structs is what its headers say: every
    offsetof(), sizeof(), bitfield and enumerator; the macros (#define) DWARF cannot say.
    Read from the DWARF here (an empty disk cache), then kept: a second reader of the same
    build takes the same fields from the disk cache (elf/diskcache.py)."""
    _need(interp)
    assert has_dwarf(interp.library), f"{interp.library} has no DWARF (python3.11-dbg: scripts/setup.sh)"
    monkeypatch.setenv("SWK_CACHE_DIR", str(tmp_path))
    mod = ElfModule(str(interp.library))        # not open_module's: nothing derived from it yet
    evaluator = [s for s in module_symbols(mod).by_name("_PyEval_EvalFrameDefault") if s.value]
    found = dwarf_fields(mod, interp.version, mod.byteorder, evaluator[0].value)
    kept = list(tmp_path.glob(f"{mod.build_id}/cpython-layout-*.json"))
    assert len(kept) == 1, list(tmp_path.rglob("*"))
    os.utime(kept[0], (1_000_000, 1_000_000))
    again = ElfModule(str(interp.library))
    assert dwarf_fields(again, interp.version, again.byteorder, evaluator[0].value) == found
    assert kept[0].stat().st_mtime > 1_000_000, "the second reader did not take the kept fields"
    compiled = header_layout(interp)
    # what no installed header states (3.10's dict keys object, in Objects/dict-common.h) is
    # held against the program's own repr() of its dicts instead (test_python_frames.py)
    wrong = {k: (v, compiled[k]) for k, v in found.items() if k in compiled and compiled[k] != v}
    assert not wrong, f"(DWARF, headers) for {interp.name}: {wrong}"
    macros = {name for name, expr in probe_fields(interp.version).items()
              if not expr.startswith(("offsetof(", "sizeof(", "state_bits(", "FRAME_OWNED_BY_"))}
    assert set(compiled) - macros <= set(found), set(compiled) - macros - set(found)
    table = layout_for(interp.version)
    assert all(getattr(table, k) == v for k, v in found.items() if k in compiled)


def test_debug_offsets_are_the_headers():
    """3.13's _PyRuntime starts with _Py_DebugOffsets: parsed from libpython's own data, they
    are the headers' offsets (and the version libpython is)."""
    interp = next(i for i in INTERPRETERS if i.version == (3, 13))
    _need(interp)
    lib = interp.python.parent.parent / "lib" / "libpython3.13.so.1.0"
    mod = open_module(str(lib))
    runtime = [s for s in module_symbols(mod).by_name("_PyRuntime") if s.value][0].value
    found = debugoffsets.parse(mod.read_vaddr(runtime, debugoffsets.size_313()), mod.byteorder)
    assert found is not None and found.free_threaded == 0
    version = subprocess.run([str(interp.python), "-c", "import sys; print(sys.hexversion)"], capture_output=True,
                             text=True, check=True).stdout
    assert found.version == int(version)
    compiled = header_layout(interp)
    fields = found.layout_fields()
    wrong = {k: (v, compiled[k]) for k, v in fields.items() if k in compiled and compiled[k] != v}
    assert not wrong, wrong
    assert set(fields) - set(compiled) == set(), set(fields) - set(compiled)


#: Source reaching every form of the location table: a line jump past a signed byte, lines
#: past 127 columns, expressions over several lines, loops and with (backward jumps, no-line
#: cleanup code), comprehensions, exceptions.
SYNTHETIC = '''
def far():
    x = 1
''' + "\n" * 300 + '''
    y = (x +
         2 +
         3)
    return [i * y for i in range(3) if i] + ["''' + "w" * 200 + '''"]


def loops(n):
    total = 0
    for i in range(n):
        while total < i:
            total += 1
        with open(__file__) as f:
            total += len(f.read(1))
    try:
        1 / 0
    except ZeroDivisionError as e:
        total -= 1
    finally:
        total += 2
    return total


class K:
    def method(self, a,
               b=2):
        return lambda c: (a, b,
                          c)
'''

_DUMP = r'''
import json, sys, types, threading, asyncio.base_events, traceback, dataclasses
def codes(co):
    yield co
    for c in co.co_consts:
        if isinstance(c, types.CodeType):
            yield from codes(c)
sources = [(m.__file__, open(m.__file__).read()) for m in (threading, asyncio.base_events, traceback, dataclasses)]
sources.append(("<synthetic>", sys.stdin.read()))
out = []
for name, src in sources:
    for co in codes(compile(src, name, "exec")):
        out.append([co.co_linetable.hex(), co.co_firstlineno, list(co.co_lines())])
json.dump(out, sys.stdout)
'''


@pytest.mark.parametrize("interp", INTERPRETERS, ids=IDS)
def test_line_tables_are_the_interpreters(interp):
    _need(interp)
    p = subprocess.run([str(interp.python), "-c", _DUMP], input=SYNTHETIC, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    codes = json.loads(p.stdout)
    checked = 0
    for table, first, lines in codes:
        ours = LineTable.of(bytes.fromhex(table), first, interp.version)
        for start, end, line in lines:
            for addr in range(start, end, 2):
                assert ours.line_at(addr) == line, (interp.name, first, addr, line)
                checked += 1
    assert ours.line_at(-2) == first            # a frame that has not started: co_firstlineno
    assert checked > 5000, checked
