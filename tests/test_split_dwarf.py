"""Split DWARF (issue 24): the functions, arguments, locals, inline and tail-call frames of a
program built with ``-gsplit-dwarf``, read from its .dwo files or its .dwp package, as GDB
13 reads them.

tests/corpus/split_main.c + split_lib.c (split_one.c: both as one unit) built at -O0 and
-O2 for DWARF 4 (GCC's GNU extension: DW_AT_GNU_dwo_name, DW_FORM_GNU_addr_index,
.debug_loc.dwo's DW_LLE_GNU_* entries, DW_AT_GNU_ranges_base) and DWARF 5 (skeleton and
split_compile units, DW_FORM_addrx, loclistx, rnglistx), as two units (``gcc -c`` each, its
own .dwo) and as one; packaged into ``prog.dwp`` by binutils' ``dwp`` (DWARF 4: GNU's
version 2 index) and, for DWARF 5, by this file's ``pack_dwarf5`` (the standard's version 5
index, section 7.3.5: binutils' dwp crashes on GCC 12's DWARF 5 units, LLVM 14's llvm-dwp
hangs on them; llvm-dwarfdump --verify reads the package without error).  Each build is
made in its own directory, where its .dwo names and DW_AT_comp_dir point.

  test_bt_lines[BUILD]     one GDB session stopped in stop_here: ``bt`` == ``swk-bt`` and
      ``bt full`` == ``swk-bt -full``, line for line
  test_cli_core[BUILD]     ``swk bt --core [--full]`` on a gcore of that stop == GDB's
      ``bt [full]`` on the core.  GDB 13 dies (SIGSEGV) loading a DWARF 5 package, so there
      GDB reads a copy of the program elsewhere (``ref/prog``: no package beside it), which
      finds the .dwo files left at DW_AT_comp_dir; swk, given the program beside its package,
      reads the package (GDB's rule: with a package, no .dwo is opened), which the test
      checks (the split units' file is prog.dwp)
  test_damaged[CASE]       a .dwo removed, a .dwo of another compile in its place (its dwo_id
      differs): GDB's lines (minimal symbols and the skeleton's line table for that unit),
      live and on the core; GDB warns ("Could not find DWO CU"), once, wherever it is in its
      output, and swk prints nothing of it.  DWARF 4 only: GDB 13 stops with "Dwarf Error:
      unexpected tag 'DW_TAG_skeleton_unit'" where a DWARF 5 split unit is not found.  And a
      build whose DW_AT_comp_dir leads nowhere (-fdebug-prefix-map): the .dwo files, or
      the package, found beside the program.
  Every build's lines must show what it is for (_expectations): frames of both units at
  their files and lines, arguments and locals, and at -O2 the inlined frame of scale, the
  tail-call frame of bounce and entry values through relay's call site.
"""
from __future__ import annotations

import dataclasses
import difflib
import fcntl
import hashlib
import inspect
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import swk_suite as S
import swk_testlib as T

pytestmark = [pytest.mark.corpus]

S.need_tool(T.GDB, "gdb")
S.need_tool("gcc", "gcc")
for _tool in ("objcopy", "nm"):
    S.need_tool(_tool, "binutils")

SOURCES = ("split_main.c", "split_lib.c", "split_one.c")
SETTINGS = ("set width 0", "set height 0", "set print pretty off", "set confirm off")
STOP = ("break stop_here", "run")
#: GDB's warning where a skeleton's split unit is not found (read.c's lookup_dwo_cutu): printed
#: once, when the unit is first read, wherever GDB is in its output then (mid-line too)
DWO_WARNING = re.compile(r"warning: Could not find DWO CU [^\n]*\n")


@dataclasses.dataclass(frozen=True)
class Build:
    dwarf: int
    opt: str
    units: str = "two"          # "two": split_main.c and split_lib.c, each its .dwo; "one": split_one.c
    package: str = "dwo"        # "dwo": the .dwo files; "dwp": prog.dwp (DWARF 4: the .dwo files removed)
    damage: str = ""            # "missing", "mismatch", "moved" (see the module docstring)

    @property
    def id(self) -> str:
        parts = [f"dwarf{self.dwarf}", self.opt, self.units, self.package] + ([self.damage] if self.damage else [])
        return "-".join(parts)

    @property
    def cflags(self) -> list[str]:
        # a static __thread local: DW_OP_GNU_const_index (DWARF 4 only: GDB 13 has no DW_OP_constx)
        return [f"-{self.opt}", "-g", f"-gdwarf-{self.dwarf}", "-gsplit-dwarf", *(["-DSPLIT_TLS"] if self.dwarf == 4 else [])]


BUILDS = [Build(d, o, u, p) for d in (4, 5) for o in ("O0", "O2") for u in ("two", "one") for p in ("dwo", "dwp")]
#: the builds GDB 13 itself can load (not a DWARF 5 package)
LIVE = [b for b in BUILDS if not (b.dwarf == 5 and b.package == "dwp")]
DAMAGED = [Build(4, "O2", "two", "dwo", "missing"), Build(4, "O0", "two", "dwo", "missing"),
           Build(4, "O2", "two", "dwo", "mismatch"), Build(4, "O2", "two", "dwo", "moved"),
           Build(5, "O2", "two", "dwo", "moved"), Build(4, "O2", "one", "dwp", "moved")]


# --------------------------------------------------------------------------
# building
# --------------------------------------------------------------------------

def _run(argv, cwd: Path) -> None:
    p = subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise T.BuildError(f"$ {' '.join(map(str, argv))}\n{p.stdout}{p.stderr}")


def build(b: Build) -> Path:
    """The program of build ``b``, made once in tests/_build/split-ID-HASH/ (compiled there,
    with relative names: its .dwo names and DW_AT_comp_dir are that directory's)."""
    if b.package == "dwp" and b.dwarf == 4:
        S.need_tool("dwp", "binutils")
    h = hashlib.sha256()
    h.update(T.CACHE_VERSION.encode())
    for tool in ("gcc", *(["dwp"] if b.package == "dwp" and b.dwarf == 4 else [])):
        h.update(T._version(tool).encode())
    for s in SOURCES:
        h.update((T.CORPUS / s).read_bytes())
    h.update(repr(b).encode())
    h.update(inspect.getsource(build).encode())
    h.update(inspect.getsource(pack_dwarf5).encode() if b.package == "dwp" and b.dwarf == 5 else b"")
    d = T.BUILD / f"split-{b.id}-{h.hexdigest()[:12]}"
    exe = d / "prog"
    T.BUILD.mkdir(parents=True, exist_ok=True)
    with open(T.BUILD / ".split-dwarf.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (d / ".ok").exists() and exe.exists():
            return exe
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        for s in SOURCES:
            shutil.copy(T.CORPUS / s, d / s)
        cflags = b.cflags + ([f"-fdebug-prefix-map={d}=/nonexistent/swk-split-build"] if b.damage == "moved" else [])
        if b.units == "two":
            for s in ("split_main.c", "split_lib.c"):
                _run(["gcc", *cflags, "-c", s], d)
            _run(["gcc", "split_main.o", "split_lib.o", "-o", "prog"], d)
        else:
            _run(["gcc", *cflags, "split_one.c", "-o", "prog"], d)
        dwos = sorted(d.glob("*.dwo"))
        if b.package == "dwp" and b.dwarf == 4:
            _run(["dwp", "-e", "prog", "-o", "prog.dwp"], d)
            for f in dwos:
                f.unlink()
        elif b.package == "dwp":             # the .dwo files stay for GDB's reference (ref/prog)
            pack_dwarf5(dwos, d / "prog.dwp")
            (d / "ref").mkdir()
            shutil.copy(exe, d / "ref" / "prog")
        if b.damage == "missing":
            (d / "split_lib.dwo").unlink()
        elif b.damage == "mismatch":           # the same source compiled otherwise: another dwo_id
            other = ["-O1" if f == f"-{b.opt}" else f for f in cflags]
            _run(["gcc", *other, "-c", "split_lib.c", "-o", "other.o"], d)
            (d / "other.dwo").rename(d / "split_lib.dwo")
        (d / ".ok").write_text(" ".join(cflags) + "\n")
    return exe


# --- a DWARF 5 package, as the standard describes it (section 7.3.5) ---------------------------

#: .debug_cu_index columns: DW_SECT_INFO, ABBREV, LINE, LOCLISTS, STR_OFFSETS, MACRO, RNGLISTS
DW_SECT_V5 = {".debug_info.dwo": 1, ".debug_abbrev.dwo": 3, ".debug_line.dwo": 4, ".debug_loclists.dwo": 5,
              ".debug_str_offsets.dwo": 6, ".debug_macro.dwo": 7, ".debug_rnglists.dwo": 8}


def pack_dwarf5(dwos: list[Path], out: Path) -> None:
    """Package DWARF 5 .dwo files (one split_compile unit each) into ``out``: each column's
    sections concatenated, .debug_str.dwo merged (every unit's .debug_str_offsets.dwo entries
    moved by where its strings went), and a version 5 .debug_cu_index over the units'
    contributions by dwo_id, written into a copy of the first .dwo with objcopy."""
    from elftools.elf.elffile import ELFFile
    merged = {name: bytearray() for name in DW_SECT_V5}
    strs = bytearray()
    units = []                  # (dwo_id, {name: (offset, size)})
    for dwo in dwos:
        with open(dwo, "rb") as f:
            elf = ELFFile(f)
            secs = {s.name: s.data() for s in elf.iter_sections() if s.name.endswith(".dwo")}
        info = secs[".debug_info.dwo"]
        assert int.from_bytes(info[4:6], "little") == 5 and info[6] == 5, f"{dwo}: not one DWARF 5 split unit"
        dwo_id = int.from_bytes(info[12:20], "little")
        str_base = len(strs)
        strs += secs.get(".debug_str.dwo", b"")
        contrib = {}
        for name in DW_SECT_V5:
            data = bytearray(secs.get(name, b""))
            if not data:
                continue
            if name == ".debug_str_offsets.dwo":        # header (8 bytes), then 4-byte offsets
                for p in range(8, len(data), 4):
                    v = int.from_bytes(data[p:p + 4], "little") + str_base
                    data[p:p + 4] = v.to_bytes(4, "little")
            contrib[name] = (len(merged[name]), len(data))
            merged[name] += data
        units.append((dwo_id, contrib))
    columns = [n for n in DW_SECT_V5 if merged[n]]
    nslots = 1
    while nslots < 2 * len(units):
        nslots *= 2
    sigs, rows = [0] * nslots, [0] * nslots
    for row, (dwo_id, _c) in enumerate(units, 1):
        h, h2 = dwo_id & (nslots - 1), ((dwo_id >> 32) & (nslots - 1)) | 1
        while sigs[h]:
            h = (h + h2) & (nslots - 1)
        sigs[h], rows[h] = dwo_id, row
    u32 = lambda v: v.to_bytes(4, "little")          # noqa: E731
    index = bytearray((5).to_bytes(2, "little") + b"\0\0" + u32(len(columns)) + u32(len(units)) + u32(nslots))
    index += b"".join(s.to_bytes(8, "little") for s in sigs) + b"".join(u32(r) for r in rows)
    index += b"".join(u32(DW_SECT_V5[n]) for n in columns)
    index += b"".join(u32(c.get(n, (0, 0))[0]) for _id, c in units for n in columns)
    index += b"".join(u32(c.get(n, (0, 0))[1]) for _id, c in units for n in columns)
    with open(dwos[0], "rb") as f:
        have = {s.name for s in ELFFile(f).iter_sections()}
    argv = ["objcopy"]
    parts = {**{n: bytes(merged[n]) for n in columns}, ".debug_str.dwo": bytes(strs), ".debug_cu_index": bytes(index)}
    for name, data in parts.items():
        blob = out.parent / f".pack{name}"
        blob.write_bytes(data)
        argv += ["--update-section" if name in have else "--add-section", f"{name}={blob}"]
    _run([*argv, dwos[0], out], out.parent)
    for name in parts:
        (out.parent / f".pack{name}").unlink()


# --------------------------------------------------------------------------
# sessions
# --------------------------------------------------------------------------

def _without_warnings(out: str) -> str:
    return DWO_WARNING.sub("", out)


def _live(exe: Path) -> tuple[dict[str, list[str]], str]:
    out = T.run_gdb(exe, [*SETTINGS, *STOP, *T.marked_commands("GDB", "bt"), *T.marked_commands("GDBFULL", "bt full"),
                          f"source {T.GDB_INIT}", *T.marked_commands("SWK", "swk-bt"),
                          *T.marked_commands("SWKFULL", "swk-bt -full")], timeout=180)
    clean = _without_warnings(out)
    return {tag: T.between_markers(clean, tag) for tag in ("GDB", "GDBFULL", "SWK", "SWKFULL")}, out


def _reference(exe: Path) -> Path:
    """The program GDB reads: a copy without the package beside it where GDB 13 cannot load
    the package (DWARF 5), else the program itself."""
    ref = exe.parent / "ref" / exe.name
    return ref if ref.exists() else exe


def _core(exe: Path) -> tuple[dict[str, list[str]], str]:
    ref = _reference(exe)
    core = T.make_core(ref, [*SETTINGS, *STOP])
    out = T.run_gdb(ref, [*SETTINGS, *T.marked_commands("GDB", "bt"), *T.marked_commands("GDBFULL", "bt full")],
                    core=core, timeout=180)
    clean = _without_warnings(out)
    got = {tag: T.between_markers(clean, tag) for tag in ("GDB", "GDBFULL")}
    for tag, extra in (("SWK", []), ("SWKFULL", ["--full"])):
        p = T.run_swk_cli(["bt", "--core", core, "--exe", exe, *extra])
        if p.returncode != 0:
            pytest.fail(f"swk bt --core {' '.join(extra)} exited {p.returncode}\n{p.stdout}", pytrace=False)
        got[tag] = [ln for ln in p.stdout.splitlines() if not ln.startswith("Thread ")]
    return got, out


def _differences(got: dict[str, list[str]]) -> list[str]:
    errs = []
    for gdb_tag, swk_tag in (("GDB", "SWK"), ("GDBFULL", "SWKFULL")):
        g, s = got[gdb_tag], got[swk_tag]
        if not g or not g[0].startswith("#0  stop_here"):
            errs.append(f"{gdb_tag}: GDB did not stop in stop_here")
        if g != s:
            errs.append(f"{gdb_tag} != {swk_tag}:\n" + "\n".join(difflib.unified_diff(g, s, "gdb", "swk", lineterm="")))
    return errs


def _fail(errs: list[str], out: str) -> None:
    pytest.fail("\n".join(errs) + "\n--- session ---\n" + out[-6000:], pytrace=False)


_FRAME = re.compile(r"^#(\d+)\s+(?:0x[0-9a-f]+ in )?(\S+) \((.*)\)(?: at (\S+):(\d+))?$")


def _frames(lines: list[str]) -> list[tuple[str, str, str | None]]:
    out = []
    for ln in lines:
        m = _FRAME.match(ln)
        if m:
            out.append((m.group(2), m.group(3), m.group(4)))
    return out


# --------------------------------------------------------------------------
# the tests
# --------------------------------------------------------------------------

@pytest.mark.swk
@pytest.mark.parametrize("b", LIVE, ids=[b.id for b in LIVE])
def test_bt_lines(b):
    got, out = _live(build(b))
    errs = _differences(got) + _expectations(b, got["SWKFULL"])
    if DWO_WARNING.search(out):
        errs.append("GDB did not find a split unit (Could not find DWO CU)")
    if errs:
        _fail(errs, out)


@pytest.mark.swk
@pytest.mark.parametrize("b", BUILDS, ids=[b.id for b in BUILDS])
def test_cli_core(b):
    exe = build(b)
    got, out = _core(exe)
    errs = _differences(got) + _expectations(b, got["SWKFULL"])
    if b.package == "dwp":
        errs += _read_from_package(exe)
    if errs:
        _fail(errs, out)


@pytest.mark.swk
@pytest.mark.parametrize("where", ["live", "core"])
@pytest.mark.parametrize("b", DAMAGED, ids=[b.id for b in DAMAGED])
def test_damaged(b, where):
    got, out = (_live if where == "live" else _core)(build(b))
    errs = _differences(got)
    warned = bool(DWO_WARNING.search(out))
    if b.damage in ("missing", "mismatch"):
        if not warned:
            errs.append("GDB found every split unit: the damage did not take")
        frames = _frames(got["SWK"])
        if any(a for f, a, _file in frames if f in ("scale", "relay", "bounce")) or (
                b.opt == "O2" and "bounce" in [f for f, _a, _file in frames]):
            errs.append("split_lib.c's functions still have their split unit's arguments or call sites")
        if not any(f == "leaf" and "a=" in a for f, a, _file in _frames(got["SWK"])):
            errs.append("split_main.c's unit lost its split unit")
    else:
        if warned:
            errs.append("GDB did not find a split unit")
        errs += _expectations(b, got["SWKFULL"])
    if any("DWO" in ln or "warning" in ln for ln in got["SWK"] + got["SWKFULL"]):
        errs.append("swk's lines speak of the missing .dwo")
    if errs:
        _fail(errs, out)


def _read_from_package(exe: Path) -> list[str]:
    """That swk read the split units of stop_here's and relay's units from ``prog.dwp``."""
    from swk_plugin.dwarf.lines import LineTable
    from swk_plugin.elf.module import ElfModule
    lines = LineTable.from_module(ElfModule(path=str(exe)))
    nm = subprocess.run(["nm", str(exe)], capture_output=True, text=True, check=True).stdout
    syms = {ln.split()[2]: int(ln.split()[0], 16) for ln in nm.splitlines() if len(ln.split()) == 3}
    errs = []
    for name in ("stop_here", "relay"):
        cu = lines.dwarf.cu_for(syms[name])
        path = getattr(cu.owner.module, "path", None) if cu is not None else None
        if cu is None or cu.skeleton is None or path != str(exe) + ".dwp":
            errs.append(f"{name}'s unit: not a split unit read from {exe}.dwp (from {path})")
    return errs


def _expectations(b: Build, swk_full: list[str]) -> list[str]:
    """What the build is for must be in swk's lines (a corpus or compiler that stopped making
    it would otherwise pass by printing less)."""
    frames = _frames(swk_full)
    names = [f for f, _a, _file in frames]
    text = "\n".join(swk_full)
    errs = []

    def want(cond, what):
        if not cond:
            errs.append(f"{b.id}: expected {what}")

    want(names[:2] == ["stop_here", "leaf"] and "relay" in names and "main" in names,
         "stop_here, leaf, ... relay ... main")
    want(all(file and file.endswith(("split_main.c", "split_lib.c")) for f, _a, file in frames
             if f in ("stop_here", "leaf", "relay", "main")), "every program frame at split_main.c / split_lib.c")
    want("        sum = 3134" in swk_full and "        calls = 1" in swk_full, "leaf's locals (sum = 3134, calls = 1)")
    if b.dwarf == 4:
        want(any(ln.startswith("        tcalls = ") for ln in swk_full), "leaf's static __thread local")
    if b.opt == "O0":
        want("relay (x=4, k=3)" in text and "bounce (n=2, m=3)" in text, "-O0's arguments (x=4, k=3; n=2, m=3)")
    else:
        want(names[2:4] == ["scale", "relay"], "the inlined frame of scale in relay")
        want("bounce" in names and names.index("bounce") == names.index("relay") + 1,
             "the tail-call frame of bounce between relay and main")
        want("v=v@entry=3134" in text, "stop_here's entry value (v=v@entry=3134)")
        want('tag=tag@entry=0x' in text and '"scaled"' in text, "leaf's entry values through relay's call site")
    return errs
