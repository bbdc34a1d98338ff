"""swk's on-disk cache by build-id (swk_plugin/elf/diskcache.py, issue 25): inflated debug sections.

libc6-dbg's debug file (zlib-compressed, as Debian ships it) is the subject: the bytes kept
are pyelftools' own inflation of each section; `swk bt --pid` of a process parked in libc
prints the same with an empty cache, a warm one and a damaged one; the warm run reads the
files (they are marked used) and inflates nothing it found there; SWK_CACHE_DIR=off keeps
nothing; the cache keeps to its size by dropping the files used least recently.
"""
from __future__ import annotations

import os
import subprocess
import time

import pytest

from swk_plugin.elf import diskcache
from swk_plugin.elf.debugfile import attach_debug_file
from swk_plugin.elf.module import ElfModule
from swk_plugin.elf.sections import DebugSections
from swk_testlib import PYTHON, REPO

LIBC = "/lib/x86_64-linux-gnu/libc.so.6"
SECTIONS = [".debug_info", ".debug_line", ".debug_str", ".debug_loclists", ".debug_abbrev", ".debug_rnglists"]


def _debug_file():
    dbg = attach_debug_file(ElfModule(LIBC))
    assert dbg is not None, "libc6-dbg's debug file for libc is not installed"
    return dbg


def _files(root):
    out = {}
    for folder, _dirs, names in os.walk(root):
        for n in names:
            if not n.startswith(".tmp-"):
                out[os.path.join(folder, n)] = os.stat(os.path.join(folder, n))
    return out


@pytest.fixture
def parked():
    proc = subprocess.Popen(["sleep", "1000"])
    time.sleep(0.3)
    yield proc.pid
    proc.kill()
    proc.wait()


def _bt(pid, cache):
    env = {**os.environ, "SWK_CACHE_DIR": str(cache), "SWK_PREFETCH": "1"}
    p = subprocess.run([str(PYTHON), "-m", "swk_plugin", "bt", "--pid", str(pid), "--full"], capture_output=True,
                       text=True, timeout=300, cwd=REPO, env=env)
    assert p.returncode == 0 and not p.stderr, p.stderr
    assert "clock_nanosleep" in p.stdout, p.stdout
    return p.stdout


def test_kept_bytes_are_pyelftools_inflation(tmp_path, monkeypatch):
    from elftools.elf.elffile import ELFFile
    monkeypatch.setenv("SWK_CACHE_DIR", str(tmp_path))
    dbg = _debug_file()
    secs = DebugSections(ElfModule(path=dbg.path, name=dbg.name))
    for name in SECTIONS:
        secs.get(name)
    assert secs.to_disk, "nothing was kept"
    again = DebugSections(ElfModule(path=dbg.path, name=dbg.name))
    with open(dbg.path, "rb") as f:
        elf = ELFFile(f)
        for name in secs.to_disk:
            assert again.get(name) == elf.get_section_by_name(name).data(), name
    assert again.from_disk == secs.to_disk, "the second reader inflated what was kept"
    assert again.to_disk == []


def test_cold_warm_and_damaged_walks_are_the_same(parked, tmp_path):
    cache = tmp_path / "cache"
    cold = _bt(parked, cache)
    kept = _files(cache)
    build_id = _debug_file().build_id
    assert any(build_id in path for path in kept), f"libc's debug sections were not kept: {sorted(kept)}"
    for path in kept:                                   # marked unused since long ago
        os.utime(path, (1_000_000, 1_000_000))
    warm = _bt(parked, cache)
    assert warm == cold
    used = [p for p, st in _files(cache).items() if os.stat(p).st_mtime > 1_000_000]
    assert used, "the warm walk read none of the kept sections"
    victim = max(kept, key=lambda p: kept[p].st_size)    # a damaged file: not used, written again
    with open(victim, "r+b") as f:
        f.truncate(kept[victim].st_size // 2)
    assert _bt(parked, cache) == cold
    assert not os.path.exists(victim) or os.path.getsize(victim) == kept[victim].st_size


def test_default_place_and_off(parked, tmp_path):
    """Without SWK_CACHE_DIR the files go under $XDG_CACHE_HOME/swk; =off, nowhere."""
    base = {k: v for k, v in os.environ.items() if k != "SWK_CACHE_DIR"}
    for setting, where in (("off", None), (None, tmp_path / "on" / "xdg" / "swk")):
        home = tmp_path / ("off" if setting else "on")
        home.mkdir()
        env = {**base, "HOME": str(home), "XDG_CACHE_HOME": str(home / "xdg"), "SWK_PREFETCH": "1",
               **({"SWK_CACHE_DIR": setting} if setting else {})}
        p = subprocess.run([str(PYTHON), "-m", "swk_plugin", "bt", "--pid", str(parked)], capture_output=True,
                           text=True, timeout=300, cwd=REPO, env=env)
        assert p.returncode == 0 and "clock_nanosleep" in p.stdout, p.stderr
        files = [f for f in home.rglob("*") if f.is_file()]
        if where is None:
            assert not files, files
        else:
            assert files and all(where in f.parents for f in files), files


def test_prune_drops_the_least_recently_used(tmp_path):
    """Least recently used first, dead writers' temporary files too; only files it names
    itself, in build-id folders (SWK_CACHE_DIR may name a folder holding other things)."""
    for k, name in enumerate(["debug_info-0-1-a", "debug_line-0-1-b", "x.json", "debug_str-0-1-c"]):
        folder = tmp_path / f"{k % 2:08x}"
        folder.mkdir(exist_ok=True)
        path = folder / name
        path.write_bytes(b"x" * 1000)
        os.utime(path, (1_000_000 + k, 1_000_000 + k))
    for other in (tmp_path / "00000000" / "notes.txt", tmp_path / "photos" / "debug_info-0-1-a"):
        other.parent.mkdir(exist_ok=True)
        other.write_bytes(b"z" * 5000)
        os.utime(other, (1, 1))
    (tmp_path / "00000000" / ".tmp-dead").write_bytes(b"y")
    os.utime(tmp_path / "00000000" / ".tmp-dead", (1_000_000, 1_000_000))
    diskcache.prune(str(tmp_path), max_bytes=2500)
    left = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert left == ["00000000/notes.txt", "00000000/x.json", "00000001/debug_str-0-1-c", "photos/debug_info-0-1-a"], left


def test_facts_round_trip_and_damage(tmp_path, monkeypatch):
    monkeypatch.setenv("SWK_CACHE_DIR", str(tmp_path))
    assert diskcache.load_fact("abcdef0123", "layout") is None
    assert diskcache.store_fact("abcdef0123", "layout", {"a": 1, "b": 2})
    assert diskcache.load_fact("abcdef0123", "layout") == {"a": 1, "b": 2}
    path = tmp_path / "abcdef0123" / "layout.json"
    path.write_bytes(b'{"a": 1, "b"')                   # damaged: not used, removed
    assert diskcache.load_fact("abcdef0123", "layout") is None and not path.exists()
    monkeypatch.setenv("SWK_CACHE_DIR", "off")
    assert not diskcache.store_fact("abcdef0123", "layout", {"a": 1})


def test_kept_unit_facts_are_what_a_first_reader_derives(tmp_path, monkeypatch):
    """A unit's function ranges (with the scopes that name them), its line tables and the
    file's maps from addresses to units are kept (dwarf/unitcache.py): for 60 units of libc's
    debug file picked by a seeded draw from its .debug_aranges, a second reader's, read back
    and decoding no DIE and no line program, are the first reader's; the maps answer 2,000
    addresses alike; a reader with the cache off derives the same again."""
    import random
    from swk_plugin.dwarf import unitcache
    from swk_plugin.dwarf.info import DwarfInfo
    dbg = _debug_file()

    def reader():
        return DwarfInfo(ElfModule(path=dbg.path, name=dbg.name))

    def facts(d, offs):
        out = {}
        for off in offs:
            cu = d.unit_at(off)
            funcs = d.funcs_for(cu)
            lines = [(sf.name, sf.symtab, list(sf.pcs), list(sf.lines), list(sf.stmts)) for sf in d.lines_for(cu)]
            out[off] = (tuple(map(list, funcs)), dict(cu._scopes or {}), lines)
        return out

    monkeypatch.setenv("SWK_CACHE_DIR", str(tmp_path))
    first = reader()
    first.cu_for(0)                                     # builds the aranges map
    los, _his, _pmax, offs = first._amap
    rng = random.Random(12)
    picked = sorted(set(rng.sample(sorted(set(offs)), 60)))
    derived = facts(first, picked)
    assert first.counts["line_programs"] >= 60 and first.counts["dies_read"] > 0
    assert list(tmp_path.rglob("funcs-*.blob")) and list(tmp_path.rglob("lines-*.blob"))
    lo, hi = min(los), max(los)
    pcs = [rng.randrange(lo - 0x1000, hi + 0x1000) for _ in range(2000)]
    where = [(cu.offset if cu else None) for cu in map(first.cu_for, pcs)]

    second = reader()
    kept = facts(second, picked)
    assert kept == derived
    small_lines = sum(1 for off in picked if sum(len(f[2]) for f in derived[off][2]) < unitcache.MIN_ROWS)
    assert second.counts["line_programs"] == small_lines < len(picked) - 5, (second.counts, small_lines)
    small_units = [off for off in picked if second.unit_at(off).end - off < unitcache.MIN_UNIT]
    assert len(small_units) < len(picked) - 5
    assert [(cu.offset if cu else None) for cu in map(second.cu_for, pcs)] == where

    monkeypatch.setenv("SWK_CACHE_DIR", "off")
    assert facts(reader(), picked) == derived


def test_kept_dies_are_the_dies(tmp_path, monkeypatch):
    """The DIEs a walk reads (dwarf/dies.py: a function's tree child by child, whole trees,
    the attributes that name a function) are kept per unit at the end of a command
    (unitcache.flush): for 30 functions of libc's debug file (a seeded draw), every DIE of
    their trees, read back by a second reader from the cache (reading no DIE from
    .debug_info but units' top DIEs), is the first reader's; what a later command reads is
    added to what was kept; a reader with the cache off reads the same."""
    import random
    from swk_plugin.dwarf import unitcache
    from swk_plugin.dwarf.info import DwarfInfo
    dbg = _debug_file()

    def reader():
        return DwarfInfo(ElfModule(path=dbg.path, name=dbg.name))

    def tree(node, depth):
        kids = [tree(k, depth - 1) for k in node.children] if depth else []
        return (node.offset, node.tag, dict(node.attrs), kids)

    def trees(d, funcs):
        out = []
        for cu_off, off in funcs:
            cu = d.unit_at(cu_off)
            whole = d.die_tree(cu, off)                     # read in one pass, kept whole
            named = d.die_attrs(cu, off)                    # the attributes that name it
            out.append((tree(d.die_node(cu, off), 3), tree(whole, 50), named[1:]))
        return out

    monkeypatch.setenv("SWK_CACHE_DIR", str(tmp_path))
    first = reader()
    first.cu_for(0)
    offs = sorted(set(first._amap[3]))
    rng = random.Random(12)
    funcs = []
    for cu_off in rng.sample(offs, 60):
        dies = first.funcs_for(first.unit_at(cu_off))[2]
        if dies:
            funcs.append((cu_off, rng.choice(dies)))
    funcs = funcs[:30]
    half = len(funcs) // 2
    derived = trees(first, funcs[:half])
    unitcache.flush()
    assert list(tmp_path.rglob("dies-*.blob")), "nothing was kept"
    derived += trees(first, funcs[half:])          # a later command's reads, added
    unitcache.flush()

    second = reader()
    read = second.counts["dies_read"]
    kept = trees(second, funcs)
    assert kept == derived
    # only each unit's top DIE is read (its header): no function's DIE, none of their children
    assert second.counts["dies_read"] - read <= len(funcs) < first.counts["dies_read"] // 4, \
        (second.counts, first.counts)
    monkeypatch.setenv("SWK_CACHE_DIR", "off")
    assert trees(reader(), funcs) == derived


def test_sections_kept_are_not_inflated_ahead(tmp_path, monkeypatch):
    """elf/ahead.py, which starts inflating a process's DWARF before swk is imported, passes
    over the sections the disk cache keeps (the readers map those): with libc's debug file's
    .debug_info kept, it starts no job for it, and still one for each section not kept; with
    the cache off, one for each."""
    from swk_plugin.elf import ahead
    monkeypatch.setenv("SWK_CACHE_DIR", str(tmp_path))
    dbg = _debug_file()
    real = os.path.realpath(dbg.path)

    def started():
        monkeypatch.setattr(ahead, "_JOBS", {})
        monkeypatch.setattr(ahead, "_STARTED", [0])
        ahead.start([LIBC])
        jobs = dict(ahead._JOBS)
        for key in jobs:                  # let the thread finish with them
            ahead.take(*key)
        hdrs = {name: (off, size) for name, _t, _f, _a, size, off, _l, _e in dbg.section_headers()}
        return {name for name, (off, size) in hdrs.items() if (real, off, size) in jobs}

    assert {".debug_info", ".debug_abbrev", ".debug_line"} <= started()
    secs = DebugSections(ElfModule(path=dbg.path, name=dbg.name))
    assert secs.get(".debug_info") is not None and ".debug_info" in secs.to_disk
    left = started()
    assert ".debug_info" not in left and {".debug_abbrev", ".debug_line"} <= left, left
    monkeypatch.setenv("SWK_CACHE_DIR", "off")
    assert ".debug_info" in started()
