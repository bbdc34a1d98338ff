"""_PyRuntime found in a stripped interpreter (issue 28): no symbol names it, swk finds it in the
interpreter's writable data by its shape (swk_plugin/interp/scan.py).

Each of pyenv's interpreters (3.10, 3.11, 3.12, 3.13: a python binary and its libpython) is
copied and stripped (objcopy --strip-all: no .symtab), and runs tests/corpus/py_frames.py to
its stop.  libpython still exports _PyRuntime in .dynsym (extension modules link to it), so once
the process has loaded everything, the copy's dynamic string table has the name overwritten in
place: from then on no symbol table of the process's files names _PyRuntime (checked with nm).
Oracles: the program's own record of its stacks (test_python_frames.check_process), live and on
a gcore core; the runtime's address is the one the unstripped library's symbol gives.
"""
from __future__ import annotations

import dataclasses
import shutil
import subprocess

import pytest

from cpython_lib import INTERPRETERS, PYENV, has_dwarf
from swk_testlib import parse_swk_json, run_cmd
from test_python_frames import Stopped, check_process, swk

from swk_plugin.elf.module import open_module
from swk_plugin.elf.symbols import module_symbols

PYENVS = [i for i in INTERPRETERS if str(i.python).startswith(str(PYENV))]
NAME = b"\0_PyRuntime\0"


def _runtime_offset(lib):
    hits = [s for s in module_symbols(open_module(str(lib))).by_name("_PyRuntime") if s.value]
    assert hits, lib
    return hits[0].value


@pytest.mark.parametrize("interp", PYENVS, ids=[i.name for i in PYENVS])
def test_stripped_interpreter(interp, tmp_path, monkeypatch):
    assert interp.exists, interp.python
    libname = f"libpython{interp.version[0]}.{interp.version[1]}.so.1.0"
    original = interp.python.parent.parent / "lib" / libname
    python, lib = tmp_path / interp.python.name, tmp_path / libname
    shutil.copy(interp.python, python)
    shutil.copy(original, lib)
    for f in (python, lib):
        subprocess.run(["objcopy", "--strip-all", str(f)], check=True)
    stripped = dataclasses.replace(interp, python=python)
    monkeypatch.setenv("LD_LIBRARY_PATH", str(tmp_path))        # the copy, not the runpath's libpython
    run = Stopped(stripped, tmp_path)
    monkeypatch.delenv("LD_LIBRARY_PATH")
    try:
        maps = open(f"/proc/{run.pid}/maps").read()
        assert str(lib) in maps, "the process does not run the stripped libpython"
        with open(lib, "r+b") as f:             # its one name of _PyRuntime, overwritten in place
            data = f.read()
            assert data.count(NAME) == 1
            f.seek(data.index(NAME) + 1)
            f.write(b"_PyRuntimX")
        for f in (python, lib):
            listed = run_cmd(["nm", "-D", "--defined-only", str(f)]).stdout + run_cmd(["nm", str(f)]).stdout
            assert not any(line.split()[-1:] == ["_PyRuntime"] for line in listed.splitlines()), f
        base = int(next(line for line in maps.splitlines() if str(lib) in line).split("-")[0], 16)
        want = base + _runtime_offset(original)
        walks = parse_swk_json(swk("bt", "--pid", run.pid, "--py", "--json"))
        assert not has_dwarf(lib) and not has_dwarf(python)
        check_process(walks, run, named=False, dwarf=False)
        assert all(w["python"]["scanned"] and w["python"]["runtime"] == want for w in walks), walks[0]["python"]
        core = run.make_core(tmp_path)
        walks = parse_swk_json(swk("bt", "--core", core, "--py", "--json"))
        check_process(walks, run, named=False, dwarf=False)
        assert all(w["python"]["scanned"] and w["python"]["runtime"] == want for w in walks)
    finally:
        run.close()
