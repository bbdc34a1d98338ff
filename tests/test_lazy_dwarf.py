"""Big programs' first walk reads only the DWARF its stack needs (issue 25, item 4).

On Debian's own python3.11 (python3.11-dbg's DWARF: LTO units, compressed sections), its
libc (libc6-dbg) and liblua5.4 (liblua5.4-0-dbg: dwz-compressed, a supplementary file):

* a frame of ``_PyEval_EvalFrameDefault`` (7,000 DIEs of its own, 35,000 with the abstract
  trees of what it inlines) reads a fraction of them, counted by the DWARF reader's own
  counters, and a few of python3.11's 253 units;
* what is read lazily is what an eager read gives: the DIE subtree read child by child
  (skipping subtrees by DW_AT_sibling) is pyelftools' tree; a unit's functions found while
  passing over inlined calls' subtrees are those a walk over every DIE finds; the scopes
  and variables at hundreds of lines of each of 11 big functions, with their blocks filled
  only as pcs need them and in a random order, are those of the block tree filled whole;
  the call site at a return address found through the scopes holding the call is the one
  among all of the function's call sites;
* the line tables (decoded by the faster decoder) give GDB's own ``info line *ADDR``;
* sections inflated ahead in a background thread are the bytes pyelftools inflates.

Every reader here is made on fresh ElfModules (not open_module's shared ones), so its
counters count this test's reads only.
"""
import os
import random
import re
import subprocess
import threading

import pytest

import swk_suite as S

from swk_plugin.dwarf.lines import module_lines
from swk_plugin.elf.debugfile import attach_debug_file
from swk_plugin.elf.module import ElfModule
from swk_plugin.elf.sections import DebugSections
from swk_plugin.elf.symbols import module_symbols
from swk_plugin.locals.entry import call_site_at, call_sites
from swk_plugin.locals.scopes import engine_for

PY = "/usr/bin/python3.11"
LIBC = "/lib/x86_64-linux-gnu/libc.so.6"
LUA = "/usr/lib/x86_64-linux-gnu/liblua5.4.so.0"
LUA_EXE = "/usr/bin/lua5.4"
PACKAGES = {PY: "python3.11 python3.11-dbg", LIBC: "libc6-dbg", LUA: "liblua5.4-0-dbg",
            LUA_EXE: "lua5.4 liblua5.4-0-dbg"}


def fresh(path):
    """A module of its own (open_module shares one per file): its readers count from zero."""
    S.need_path(path, PACKAGES[path])
    real = os.path.realpath(path)
    return ElfModule(path=real, name=path)


def engine(path):
    eng = engine_for(fresh(path))
    if eng is None:
        S.missing(f"no DWARF for {path}", S.install_hint(PACKAGES[path]))
    return eng


def function_named(eng, name):
    """The Function (DWARF subprogram) at the ELF symbol ``name``."""
    hits = [s for s in module_symbols(eng.module).by_name(name) if s.value]
    assert hits, f"{eng.module.name} has no symbol {name}"
    fn = eng.function_at(hits[0].value)
    assert fn is not None and fn.entry_pc == hits[0].value, (name, fn)
    return fn


def row_pcs(d, fn):
    """Every address a line-table row of ``fn``'s unit starts at inside ``fn``."""
    return sorted({pc for sf in d.lines_for(fn.cu) for pc in sf.pcs if fn.contains(pc)})


def subtree_size(node):
    n, todo = 0, [node]
    while todo:
        x = todo.pop()
        n += 1
        todo.extend(x.children)
    return n


def view(eng, pc):
    """What the engine says at ``pc``: its scopes, and each scope's arguments and locals."""
    out = []
    for s in eng.scopes_at(pc):
        args, locs = eng.frame_variables(s, pc)
        out.append((s.kind, s.name, s.call_file, s.call_line, s.die, tuple(s.ranges),
                    [(v.name, v.is_param, v.die, v.loc_class, tuple(v.block.ranges)) for v in args + locs]))
    return out


def fill_whole(blk):
    """Fill and decide every block below ``blk``: the block tree as an eager build makes it."""
    todo = [blk]
    while todo:
        b = todo.pop()
        b.syms
        todo.extend(b.children)


# --- reading a fraction -----------------------------------------------------------------------

def test_one_frame_of_python_reads_a_fraction_of_its_function_and_unit():
    eng = engine(PY)
    d = eng.d
    hit = [s for s in module_symbols(eng.module).by_name("_PyEval_EvalFrameDefault") if s.value][0]
    pc = hit.value + hit.size // 2
    before = dict(d.counts)
    scopes = eng.scopes_at(pc)
    assert scopes and scopes[-1].name == "_PyEval_EvalFrameDefault", scopes
    for s in scopes:
        eng.frame_variables(s, pc)
    read = d.counts["dies_read"] - before["dies_read"]
    units = d.counts["units_read"] - before["units_read"]

    other = engine(PY)                       # the eager reader, on a module of its own
    fn = scopes[-1].function
    before = other.d.counts["dies_read"]
    fill_whole(other.function_at(pc).block)
    eager = other.d.counts["dies_read"] - before
    cu = other.d.unit_at(fn.cu.offset)
    in_unit = len(other.d.parents(cu))
    in_function = subtree_size(other.d.die_tree(cu, fn.die))
    total_units = 0
    off = 0
    info = other.d.secs.get(".debug_info")
    while off + 11 < len(info):
        off = other.d._read_unit_header(info, off).end
        total_units += 1
    print(f"one frame: {read} DIEs decoded (the whole block tree: {eager}; the function's own "
          f"subtree: {in_function}, its unit: {in_unit}); {units} of {total_units} units read")
    assert read * 4 < eager, (read, eager)
    assert read < in_function and read < in_unit, (read, in_function, in_unit)
    assert units * 20 < total_units, (units, total_units)


def test_a_call_site_is_found_without_reading_every_call_site():
    eng = engine(PY)
    fn = function_named(eng, "_PyEval_EvalFrameDefault")
    lazy = engine(PY)
    lfn = lazy.function_at(fn.entry_pc)
    d = lazy.d
    sites = call_sites(fn)                   # every call site of the function, the eager way
    assert len(sites) > 300, len(sites)
    before = d.counts["dies_read"]
    pc, site = sorted(sites.items())[len(sites) // 2]
    found = call_site_at(lfn, pc)
    one = d.counts["dies_read"] - before
    assert found is not None and found.offset == site.offset
    assert one * 4 < len(sites), (one, len(sites))
    rng = random.Random(S.SEED)
    for pc, site in rng.sample(sorted(sites.items()), 300):
        got = call_site_at(lfn, pc)
        assert got is not None and got.offset == site.offset, hex(pc)
    for pc in rng.sample(row_pcs(eng.d, fn), 100):
        if pc not in sites:
            assert call_site_at(lfn, pc) is None, hex(pc)


# --- lazy == eager ---------------------------------------------------------------------------

def pyelftools_tree(path, offset):
    """[(offset, tag number, parent offset, attribute numbers)] of the subtree at ``offset``,
    as pyelftools reads it."""
    from elftools.dwarf.enums import ENUM_DW_AT, ENUM_DW_TAG
    from elftools.elf.elffile import ELFFile
    with open(path, "rb") as f:
        dw = ELFFile(f).get_dwarf_info()
        root = dw.get_DIE_from_refaddr(offset)
        out = []
        todo = [(root, None)]
        while todo:
            die, parent = todo.pop()
            tag = die.tag if isinstance(die.tag, int) else ENUM_DW_TAG[die.tag]
            ats = sorted(a if isinstance(a, int) else ENUM_DW_AT[a] for a in die.attributes)
            out.append((die.offset, tag, parent, ats))
            todo.extend((c, die.offset) for c in die.iter_children())
    return sorted(out)


def test_the_tree_read_child_by_child_is_pyelftools_tree():
    eng = engine(PY)
    fn = function_named(eng, "_PyEval_EvalFrameDefault")
    root = eng.d.die_node(fn.cu, fn.die)
    mine = []
    todo = [(root, None)]
    while todo:
        n, parent = todo.pop()
        mine.append((n.offset, n.tag, parent, sorted(n.attrs)))
        todo.extend((c, n.offset) for c in n.children)
    mine.sort()
    assert len(mine) > 5000
    theirs = pyelftools_tree(attach_debug_file(eng.module).path, fn.die)
    assert mine == theirs


@pytest.mark.parametrize("path", [PY, LIBC, LUA])
def test_functions_found_passing_over_inlined_calls_are_every_function(path):
    """funcs_for skips the subtrees of inlined calls and call sites by DW_AT_sibling; the
    oracle visits every DIE of the unit and takes every subprogram's ranges."""
    eng = engine(path)
    d = eng.d
    info = d.secs.get(".debug_info")
    offs = []
    off = d.info_base
    while off + 11 < len(info):
        offs.append(off)
        off = d._read_unit_header(info, off).end
    rng = random.Random(S.SEED)
    for off in rng.sample(offs, min(12, len(offs))):
        cu = d.unit_at(off)
        los, his, dies_, _pmax = d.funcs_for(cu)
        mine = sorted(zip(los, his, dies_))
        oracle = []
        for die in d.parents(cu):
            r = d.die_attrs(cu, die)
            if r is not None and r[1] == 0x2e:
                oracle.extend((lo, hi, die) for lo, hi in d.die_ranges(cu, r[2]))
        assert mine == sorted(oracle), f"{path}: unit 0x{off:x}"


@pytest.mark.parametrize("path,names", [
    (PY, ["_PyEval_EvalFrameDefault", "PyEval_EvalCode", "Py_RunMain", "_PyObject_MakeTpCall"]),
    (LIBC, ["__libc_start_main", "qsort_r", "__vfprintf_internal", "__printf_fp_l"]),
    (LUA, ["luaV_execute", "luaD_call", "lua_pcallk"]),
])
def test_scopes_filled_as_pcs_need_them_are_the_whole_trees(path, names):
    lazy, eager = engine(path), engine(path)
    rng = random.Random(S.SEED)
    for name in names:
        fn_e = function_named(eager, name)
        fill_whole(fn_e.block)
        pcs = row_pcs(eager.d, fn_e)
        pcs = sorted(rng.sample(pcs, min(400, len(pcs))))
        pcs += [pc + 1 for pc in pcs[::5]]
        rng.shuffle(pcs)                      # blocks decided in any order give one tree
        for pc in pcs:
            assert view(lazy, pc) == view(eager, pc), f"{name} at 0x{pc:x}"


# --- lines and sections -----------------------------------------------------------------------

def test_python_lines_are_gdbs_info_line():
    """The line decoder against GDB: ``info line *ADDR`` for rows and mid-instruction pcs
    of the units of a Python interpreter's frames."""
    S.need_tool("gdb")
    eng = engine(PY)
    lines = module_lines(eng.module)
    d = lines.dwarf
    rng = random.Random(S.SEED)
    pcs = []
    for name in ("_PyEval_EvalFrameDefault", "PyEval_EvalCode", "Py_RunMain", "PyRun_StringFlags"):
        fn = function_named(eng, name)
        unit = sorted({pc for sf in d.lines_for(fn.cu) for pc in sf.pcs})
        pcs += rng.sample(unit, 60) + [pc + 1 for pc in rng.sample(unit, 20)]
    cmds = [a for pc in pcs for a in ("-ex", f"info line *0x{pc:x}")]
    out = subprocess.run(["gdb", "-nx", "-batch", "-iex", "set debuginfod enabled off", PY, *cmds],
                         capture_output=True, text=True, timeout=600).stdout
    answers = [ln for ln in out.splitlines() if ln.startswith(("Line ", "No line"))]
    assert len(answers) == len(pcs), out[-2000:]
    for pc, ans in zip(pcs, answers):
        m = re.match(r'Line (\d+) of "([^"]+)"', ans)
        assert lines.lookup(pc) == ((m.group(2), int(m.group(1))) if m else None), f"0x{pc:x}: {ans}"


def test_dwz_partial_units_are_not_searched_for_code():
    """lua5.4's debug file (liblua5.4-0-dbg, dwz-compressed) has about 190 partial units with no
    pc of their own; a pc no unit covers (the program's entry, _start: GDB has no line for
    it either) is looked for in the units that could hold code, never in partial units, which
    GDB reads only where a unit imports them: none of their functions is scanned."""
    S.need_tool("gdb")
    mod = fresh(LUA_EXE)
    lines = module_lines(mod)
    d = lines.dwarf
    entry = mod.entry
    assert d.cu_for(entry) is None
    info = d.secs.get(".debug_info")
    partial = [off for off in _unit_offsets(info, d.little) if d._top_die(info, off)
               and d._top_die(info, off)[0] == 0x3c]
    assert len(partial) > 100, len(partial)
    assert not set(partial) & set(d._pcless), "partial units are searched for code"
    assert not any(d.unit_at(off)._funcs is not None for off in partial if off in d._cus)
    out = subprocess.run(["gdb", "-nx", "-batch", "-iex", "set debuginfod enabled off", LUA_EXE,
                          "-ex", f"info line *0x{entry:x}"], capture_output=True, text=True, timeout=300).stdout
    assert "No line number information" in out, out
    assert lines.lookup(entry) is None


def _unit_offsets(info, little):
    off, out = 0, []
    while off + 11 <= len(info):
        length = int.from_bytes(info[off:off + 4], "little" if little else "big")
        out.append(off)
        off += 4 + length if length != 0xFFFFFFFF else 12 + int.from_bytes(info[off + 4:off + 12], "little")
    return out


def test_sections_inflated_ahead_are_pyelftools_bytes(monkeypatch):
    from elftools.elf.elffile import ELFFile
    monkeypatch.setenv("SWK_CACHE_DIR", "off")      # inflated here, not taken from the disk cache
    dbg = attach_debug_file(fresh(LIBC))
    assert dbg is not None
    names = [".debug_info", ".debug_line", ".debug_loclists", ".debug_abbrev"]
    secs = DebugSections(ElfModule(path=dbg.path, name=dbg.name))
    secs.upto(".debug_info", 1 << 16)                # a reader started before the prefetch
    before = set(threading.enumerate())
    secs.prefetch(names)
    workers = [t for t in threading.enumerate() if t not in before and t.name == "swk-inflate"]
    assert len(workers) == 1
    secs.upto(".debug_info", 1 << 20)                # readers go on meanwhile
    workers[0].join(120)
    with open(dbg.path, "rb") as f:
        elf = ELFFile(f)
        for name in names:
            assert secs.view(name) == elf.get_section_by_name(name).data(), name
    ondemand = DebugSections(ElfModule(path=dbg.path, name=dbg.name))
    assert ondemand.upto(".debug_info", 1 << 62) == secs.get(".debug_info")


def test_a_process_dwarf_inflated_before_swk_is_imported(monkeypatch):
    """`swk bt --pid` starts inflating the compressed DWARF of the files a process maps before
    the rest of swk is imported (linux/inflateahead.py, elf/ahead.py): for a process parked in
    libc, libc's debug file's sections are inflating in one thread (when a processor is spare:
    the check is made to pass here), and the walk's reader takes them from it, the bytes a
    reader of its own inflates."""
    import subprocess
    import time
    from swk_plugin.elf import ahead
    from swk_plugin.elf.module import open_module
    from swk_plugin.elf.sections import debug_sections
    from swk_plugin.linux import inflateahead
    monkeypatch.setenv("SWK_CACHE_DIR", "off")
    monkeypatch.setattr(inflateahead, "_spare_processor", lambda: True)
    monkeypatch.setattr(ahead, "_JOBS", {})
    monkeypatch.setattr(ahead, "_STARTED", [0])
    proc = subprocess.Popen(["sleep", "1000"])
    try:
        time.sleep(0.3)
        inflateahead.inflate_ahead([proc.pid])
        dbg = attach_debug_file(open_module(LIBC))
        real = os.path.realpath(dbg.path)
        started = {k for k in ahead._JOBS if k[0] == real}
        assert len(started) >= 4, ahead._JOBS.keys()
        secs = debug_sections(dbg)
        own = DebugSections(ElfModule(path=dbg.path, name=dbg.name))
        for name in (".debug_info", ".debug_abbrev", ".debug_line"):
            key = secs._ahead_key(name)
            assert key in started, name
            assert secs.get(name) == own.get(name), name
            assert not ahead.pending(*key), f"{name} was inflated again, not taken"
        # a section inflating to more than MAX_SIZE is left to its readers (who inflate only
        # as far as they need): with the bound at 2 MiB, libc's 5.8 MB of .debug_info
        monkeypatch.setattr(ahead, "_JOBS", {})
        monkeypatch.setattr(ahead, "_STARTED", [0])
        monkeypatch.setattr(ahead, "MAX_SIZE", 2 << 20)
        inflateahead.inflate_ahead([proc.pid])
        secs = DebugSections(ElfModule(path=dbg.path, name=dbg.name))
        assert secs._ahead_key(".debug_abbrev") is not None
        assert secs._ahead_key(".debug_info") is None
        for key in list(ahead._JOBS):
            ahead.take(*key)
        # and no more than TOTAL_MAX in all: with it just over .debug_abbrev's size, the rest
        # of the sections is left to the readers
        monkeypatch.setattr(ahead, "_JOBS", {})
        monkeypatch.setattr(ahead, "_STARTED", [0])
        monkeypatch.setattr(ahead, "TOTAL_MAX", 1 << 20)
        inflateahead.inflate_ahead([proc.pid])
        assert secs._ahead_key(".debug_abbrev") is not None
        assert secs._ahead_key(".debug_line") is None and ahead._STARTED[0] <= 1 << 20
        for key in list(ahead._JOBS):
            ahead.take(*key)
    finally:
        proc.kill()
        proc.wait()


def test_a_forked_worker_never_waits_for_the_inflating_thread(monkeypatch):
    """A worker forked while a section is still inflating has no thread to finish it: it is
    told there is nothing (and its readers inflate the section themselves), at once."""
    import time
    from swk_plugin.elf import ahead
    job = ahead._Job(b"", 0, 1)             # under way: its lock held, as at the fork
    monkeypatch.setattr(ahead, "_JOBS", {("/x", 1, 2): job})
    monkeypatch.setattr(ahead, "_OWNER", [os.getpid()])
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            got = ahead.take("/x", 1, 2)
            os.write(w, b"none" if got is None else b"data")
        finally:
            os._exit(0)
    os.close(w)
    deadline = time.time() + 20
    while time.time() < deadline and os.waitpid(pid, os.WNOHANG) == (0, 0):
        time.sleep(0.05)
    else:
        if time.time() >= deadline:        # still waiting: what the test is about
            os.kill(pid, 9)
            os.waitpid(pid, 0)
    said = os.read(r, 16)
    os.close(r)
    assert said == b"none", said or "the worker waited for a thread it does not have"


def test_the_processes_inflated_ahead_are_those_asked_for():
    """The command line's entry (__main__) reads `bt --pid` from its arguments before argparse
    does, only to start inflating: every spelling argparse takes is read, anything else is
    left to argparse (which says what is wrong), and no other command starts anything."""
    import importlib.util
    spec = importlib.util.find_spec("swk_plugin.__main__")
    source = open(spec.origin).read()
    env = {}
    exec(compile(source.split("\n_asked = ")[0], spec.origin, "exec"), env)
    pids = env["_pids_asked"]
    assert pids(["bt", "--pid", "12"]) == [12]
    assert pids(["bt", "--pid=12,34"]) == [12, 34]
    assert pids(["bt", "--json", "--pid", "16", "5"]) == [16]
    assert pids(["bt", "--pid", "0x10"]) == [] and pids(["bt", "--pid", "0"]) == []
    assert pids(["bt", "--pid", "twelve"]) == []
    assert pids(["bt", "--core", "core.1"]) == []
    assert pids(["profile", "--pid", "12"]) == []
    assert pids(["bt", "--pid"]) == []
