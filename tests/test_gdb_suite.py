"""GDB 13.1's own test programs as the oracle (issue 24): swk-bt against GDB's bt at the stop
points their .exp files name.

The programs of gdb.arch (x86-64, and its i386 ones built with -m32), gdb.opt and gdb.dwarf2
(its pre-built assembly: x86-64's, and i386's with -m32), and those of gdb.base and gdb.python
whose .exp checks a backtrace or frame line, in Debian's gdb source package (fetched by
scripts/setup.sh into the build dir; tests/gdbsuite/harness.py reads each .exp for its
sources, flags and breakpoints) are built with gcc/g++ and run under GDB, several at once:
at each stop (up to 12), GDB's own ``bt`` (swk's unwinder off) and ``swk-bt``, line for line.  Every program
that builds must give GDB's lines at every stop, except the differences KNOWN names, each
with its reason; a known difference that is gone fails too, so the table in docs/testing.md
stays true.
"""
from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "gdbsuite"))

import assembled as A  # noqa: E402
import harness as H  # noqa: E402
import swk_suite as S  # noqa: E402
import swk_testlib as T  # noqa: E402

pytestmark = [pytest.mark.corpus]

ROOT = T.BUILD / "gdb-src" / "gdb-13.1" / "gdb" / "testsuite"

#: i386-disp-step's stops where GDB ends at frame 0: test_call ... are labels inside main, which
#: is assembly without CFI, and %ebp is 0 there
_EBP_ZERO = ("swk goes further: GDB's i386 prologue analyser takes %ebp == 0 in a function without "
             "CFI for the outermost frame; swk's analysis finds main's caller, __libc_start_call_main, "
             "and walks on to _start")

#: (program, stop index) -> why swk's lines differ from GDB's there (docs/testing.md)
KNOWN = {
    **{("gdb.arch/i386-disp-step", i): _EBP_ZERO for i in range(1, 12)},
    ("gdb.arch/amd64-break-on-asm-line", 2):
        "GDB wrong: main is assembly without CFI; GDB's prologue analyser takes argc for the return "
        "address (#1 0x0000000000000001 in ?? ()); swk's analysis finds __libc_start_call_main",
    ("gdb.arch/amd64-init-x87-values", 1):
        "GDB wrong: at a pc past its _start's first instruction GDB invents frames from the stack "
        "(#1 0x1 in ?? (), #2 0x7fffffffe.. in ?? ()); swk finds no caller and says why",
    ("gdb.dwarf2/clztest", 1):
        "GDB wrong: after the program returns to address 1 (no function, no CFI), GDB's amd64 prologue "
        "analyser invents frames from the stack (#1 0x7fff... in ?? ()); swk finds no caller, and the "
        "frame pointer is zero, the psABI's mark of the outermost frame",
    ("gdb.dwarf2/dw2-dup-frame", 0):
        "swk goes further: the program's .debug_frame makes stop_frame its own caller (every register "
        "\"same value\"); GDB stops (previous frame identical to this frame); swk's frame-pointer chain "
        "finds first_frame and main (-v and JSON: past DebugStepper: caller's stack pointer ... is not above ...)",
    **{("gdb.dwarf2/dw2-linkage-name-trust", i):
       "two CUs claim the same addresses (the .S's file1.txt, with no line table and no function at "
       "them, and main.cc's); GDB 13 picks file1.txt's and prints minimal symbols (0x... in main (), "
       "f() ()); swk takes the CU whose DWARF has the function at the pc" for i in (0, 1)},
    ("gdb.python/py-unwind", 1):
        "swk goes further: the program overwrites its saved frame pointers on purpose; GDB stops (frame "
        "did not save the PC) until the .exp's own Python unwinder is loaded, after which its bt shows "
        "main, as swk does",
    ("gdb.arch/amd64-invalid-stack-middle", 0):
        "swk goes further: GDB stops where the CFI of func3 reads an unmapped page (Cannot access "
        "memory); swk's frame-pointer chain below it is verifiable and reaches main (-v says how)",
}


_JUMPED_MAIN = ("GDB wrong: main is reached from the program's own _start by a jump, not a call (the "
                "stack holds argc where a return address would be); GDB, past main, takes it for one "
                "(#1 0x1 in ?? ()); swk finds no caller and the frame pointer is zero (the outermost frame)")

#: (program, stop index) -> why ``swk bt --core`` differs from GDB's bt on that stop's core (both
#: walk past main there): the live differences of KNOWN, and those past main
KNOWN_CORE = {
    **{key: why for key, why in KNOWN.items() if key in {
        ("gdb.arch/amd64-break-on-asm-line", 2), ("gdb.arch/amd64-invalid-stack-middle", 0),
        ("gdb.arch/i386-disp-step", 1), ("gdb.arch/i386-disp-step", 2), ("gdb.dwarf2/clztest", 1),
        ("gdb.dwarf2/dw2-dup-frame", 0), ("gdb.dwarf2/dw2-linkage-name-trust", 0),
        ("gdb.dwarf2/dw2-linkage-name-trust", 1), ("gdb.python/py-unwind", 1)}},
    ("gdb.arch/i386-disp-step", 0): _EBP_ZERO,
    ("gdb.arch/i386-float", 0): _EBP_ZERO,
    **{("gdb.arch/i386-unwind", i):
       "neither is right, past main: the program falls from gdb1435 (no epilogue) into main's code, so the "
       "stack holds a frame no call made; GDB reads its saved %ebp as a return address (#3 0xffffd788 in ?? "
       "()), then main again; swk's frame-pointer chain skips that frame and the first main with it"
       for i in (1, 2)},
    ("gdb.arch/amd64-disp-step-avx", 0): _JUMPED_MAIN,
    ("gdb.arch/amd64-init-x87-values", 0): _JUMPED_MAIN,
    ("gdb.arch/amd64-init-x87-values", 1): _JUMPED_MAIN,
}


#: programs that do not build here with plain gcc/g++, and why (docs/testing.md)
NOT_BUILT = {
    "gdb.arch/amd64-prologue-skip": "has no main: the .exp links it with its own start files",
    "gdb.arch/i386-avx": "includes GDB's own nat/x86-cpuid.h from GDB's source tree",
    "gdb.arch/i386-avx512": "includes GDB's own nat/x86-cpuid.h from GDB's source tree",
    "gdb.arch/i386-pkru": "includes GDB's own nat/x86-cpuid.h from GDB's source tree",
    "gdb.arch/i386-sse": "includes GDB's own nat/x86-cpuid.h from GDB's source tree",
    "gdb.arch/i386-mpx-map": "needs libmpx, gone from GCC 12",
    "gdb.dwarf2/dw2-abs-hi-pc": "its .exp compiles it with addresses (-DHELLO_START=...) read from a first build",
    "gdb.dwarf2/dw2-common-block": "Fortran: links against libgfortran (no gfortran here)",
    **{f"gdb.dwarf2/{n}": "built by build_executable_from_fission_assembler (the .dwo split out by objcopy), "
       "which the harness does not mirror" for n in ("fission-base", "fission-loclists", "fission-loclists-pie")},
    "gdb.base/call-sc": "built once per scalar type by its .exp (-DT=char, -DT=short ...)",
    "gdb.base/structs": "built once per structure layout by its .exp (-DtA=... -DtB=...)",
    "gdb.base/miscexprs": "built with -DSTORAGE=static and without by its .exp's loop",
    "gdb.base/large-frame": "built once per optimisation level by its .exp's loop (large-frame-2.c without "
                            "debug info at -O0, -O1, -O2)",
}


def _programs():
    if not ROOT.is_dir():
        return []
    progs = H.programs(ROOT) + A.programs(ROOT)     # in the table's order: by directory, then name
    return sorted(progs, key=lambda p: (H.DIRS.index(p.exp.parent.name), p.exp.name))


PROGRAMS = _programs()


@pytest.fixture(scope="module")
def root():
    S.need_tool(T.GDB, "gdb")
    if not ROOT.is_dir():
        S.missing(f"GDB's testsuite sources are not in {ROOT}", "run scripts/setup.sh (it fetches Debian's gdb "
                  "source package with a private apt sources list)")
    return ROOT


def _here(prog: H.Program) -> tuple[H.Program, Path]:
    """The program as built here, and where: gdb.arch's i386 programs with -m32 (an i386 board's
    build: swk_testlib.m32_flags), the others for x86-64."""
    if prog.exp.stem.startswith("i386") or prog.m32:
        return (dataclasses.replace(prog, flags=[*prog.flags, *T.m32_flags()]),
                T.BUILD / "gdbsuite" / "m32" / prog.exp.parent.name)
    return prog, T.BUILD / "gdbsuite" / prog.exp.parent.name


def _limit_cpu():
    """A program of the suite that spins for ever (gdb.base has several) is killed by its CPU
    limit, not waited for: GDB and the program each get this much CPU time."""
    import resource
    resource.setrlimit(resource.RLIMIT_CPU, (30, 30))


@dataclasses.dataclass
class Run:
    """One program's GDB session: its stops (GDB's bt, swk-bt), its output, and for the first
    stops the CLI on a core of each against GDB's bt on that core: {stop: (gdb, swk, output)}."""
    stops: list
    out: str
    cores: dict
    #: the deepest of those cores in LLDB: (stop, GDB's bt on it, swk-bt's lines in LLDB, output)
    lldb: tuple | None = None


def _run(prog: H.Program) -> Run | None:
    if prog.assembled:
        return _run_assembled(prog)
    prog, where = _here(prog)
    exe, why = H.build(prog, where)
    if exe is None:
        return None
    cores = where / f"{prog.exp.stem}.cores"
    shutil.rmtree(cores, ignore_errors=True)
    cores.mkdir(parents=True)
    argv = [T.GDB, "-nx", "-batch"]
    for c in H.session_commands(prog, T.GDB_INIT, cores=cores):
        argv += ["-ex", c]
    argv.append(str(exe))
    try:
        out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60,
                             cwd=str(exe.parent), errors="replace", preexec_fn=_limit_cpu).stdout
    except subprocess.TimeoutExpired as exc:     # a program waiting for ever: the stops it made
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
    legs, lldb = {}, None
    written = [(i, tid) for i, tid in sorted(H.core_tids(out).items())
               if (cores / f"stop-{i}.core").exists() and (cores / f"stop-{i}.core").stat().st_size]
    for i, tid in written:
        legs[i] = _core_leg(exe, cores / f"stop-{i}.core", tid)
    if written and S.lldb().path:
        i, tid = written[-1]                        # the deepest of them
        lldb = (i, legs[i][0], *_lldb_leg(exe, cores / f"stop-{i}.core", tid))
    shutil.rmtree(cores, ignore_errors=True)     # a core is as big as the program's memory
    return Run(H.stops_of(out), out, legs, lldb)


#: where the programs of gdb.dwarf2's Tcl DWARF assembler are built, one directory per .exp
ASSEMBLED = T.BUILD / "gdbsuite" / "gdb.dwarf2-assembled"


def _build_why(prog: H.Program) -> str:
    if prog.assembled:
        return A.build(prog, ASSEMBLED / prog.exp.stem, T.GDB)[1]
    return H.build(*_here(prog))[1]


def _run_assembled(prog: H.Program) -> Run | None:
    """A program of the Tcl DWARF assembler (tests/gdbsuite/assembled.py): built once by
    dwarf_assemble.tcl, then each GDB session of its .exp replayed, checkpoints among the
    .exp's commands; the checked stops' cores for the CLI and LLDB, as for the others."""
    S.need_tool("tclsh", "tcl")
    where = ASSEMBLED / prog.exp.stem
    recipe, _why = A.build(prog, where, T.GDB)
    if recipe is None:
        return None
    cores = where / "cores"
    shutil.rmtree(cores, ignore_errors=True)
    cores.mkdir(parents=True)
    stops, outs, written = [], [], []
    for sess, items in A.plan(recipe):
        argv = [T.GDB, "-nx", "-batch"]
        for c in A.session_commands(items, T.GDB_INIT, cores):
            argv += ["-ex", c]
        argv.append(str(sess.exe))
        try:
            out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120,
                                 cwd=str(sess.exe.parent), errors="replace", preexec_fn=_limit_cpu).stdout
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        outs.append(out)
        tids = H.core_tids(out)
        for check, g, s in A.stops_of(out, items):
            core = cores / f"stop-{check.index}.core"
            if check.core and check.index in tids and core.exists() and core.stat().st_size:
                written.append((len(stops), sess.exe, core, tids[check.index]))
            stops.append((g, s))
    legs, lldb = {}, None
    for k, exe, core, tid in written:
        legs[k] = _core_leg(exe, core, tid)
    if written and S.lldb().path:
        k, exe, core, tid = written[-1]             # the last of them
        lldb = (k, legs[k][0], *_lldb_leg(exe, core, tid))
    shutil.rmtree(cores, ignore_errors=True)
    return Run(stops, "\n".join(outs), legs, lldb)


def _lldb_leg(exe: Path, core: Path, tid: int) -> tuple[list, str]:
    """(swk-bt's lines in LLDB on the core, in the thread that stopped; LLDB's output)."""
    argv = [S.lldb().path, "-b", "-x", "-o", "settings set auto-confirm true",
            "-o", f"command script import {T.REPO / 'lldb_init.py'}", "-o", f"target create {exe} --core {core}",
            "-o", "script print('SWKSUITE-LLDB')", "-o", "swk-bt -gdb -all", "-o", "script print('SWKSUITE-LLDB-END')"]
    env = dict(os.environ, TMPDIR=str(T.BUILD))
    out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120,
                         errors="replace", stdin=subprocess.DEVNULL, env=env).stdout
    lines = out.splitlines()
    try:
        block = lines[lines.index("SWKSUITE-LLDB") + 1:lines.index("SWKSUITE-LLDB-END")]
    except ValueError:
        return [], out[-3000:]
    mine, keep = [], False
    for ln in block:                              # the thread that stopped, of "swk-bt -all"
        if ln.startswith("Thread "):
            keep = f"(LWP {tid})" in ln
        elif keep:
            mine.append(ln)
    return H.frame_lines(mine), out[-3000:]


def _core_leg(exe: Path, core: Path, tid: int) -> tuple[list, list, str]:
    """(GDB's bt on the core, ``swk bt --core``'s lines, both outputs) in the thread that stopped."""
    argv = [T.GDB, "-nx", "-batch"]
    for c in H.core_commands(tid):
        argv += ["-ex", c]
    argv += [str(exe), str(core)]
    g = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60,
                       errors="replace").stdout
    lines = g.splitlines()
    try:
        gdb_lines = H.frame_lines(lines[lines.index("SWKSUITE-CORE") + 1:lines.index("SWKSUITE-CORE-END")])
    except ValueError:
        gdb_lines = []
    p = T.run_swk_cli(["bt", "--core", core, "--exe", exe, "--thread", tid], timeout=60)
    swk_lines = H.frame_lines(p.stdout.splitlines())
    return gdb_lines, swk_lines, f"--- gdb on the core ---\n{g[-3000:]}\n--- swk bt --core ---\n{p.stdout[-3000:]}"


@pytest.fixture(scope="module")
def results(request):
    """prog.id -> a future of _run(prog), for the programs this run selected: started at once on
    the machine's cores (each is a GDB session of its own), so the suite costs what its
    slowest half does, not the sum."""
    import concurrent.futures
    import os
    chosen = {}                         # once each, whichever of its tests are selected
    for item in request.session.items:
        prog = getattr(getattr(item, "callspec", None), "params", {}).get("prog")
        if isinstance(prog, H.Program) and item.module is request.module:
            chosen.setdefault(prog.id, prog)
    pool = concurrent.futures.ThreadPoolExecutor(max(1, min(4, os.cpu_count() or 1)))
    futures = {pid: pool.submit(_run, p) for pid, p in chosen.items()}
    yield futures
    pool.shutdown(cancel_futures=True)


def test_the_suite_is_there(root):
    """The harness takes enough of GDB's programs to be an oracle (not an empty loop)."""
    assert len(PROGRAMS) >= 120, [p.id for p in PROGRAMS]


@pytest.mark.swk
@pytest.mark.parametrize("prog", PROGRAMS or [None], ids=[p.id for p in PROGRAMS] or ["no-testsuite"])
def test_gdb_program(root, results, prog):
    if prog is None:
        pytest.fail(f"no program of GDB's testsuite found under {ROOT}", pytrace=False)
    got = results[prog.id].result() if prog.id in results else _run(prog)
    if got is None:
        why = _build_why(prog)
        if prog.id not in NOT_BUILT:
            pytest.fail(f"{prog.id} does not build: {why}", pytrace=False)
        return                          # documented: not built, and why
    if prog.id in NOT_BUILT:
        pytest.fail(f"{prog.id} builds now: take it out of NOT_BUILT", pytrace=False)
    stops, out = got.stops, got.out
    errs = _against(prog, KNOWN, "stop", ((i, g, s, "") for i, (g, s) in enumerate(stops)))
    if not stops:
        errs.append("no stop reached")
    if errs:
        pytest.fail(f"{prog.id}:\n" + "\n".join(errs) + "\n--- gdb session ---\n" + out[-6000:], pytrace=False)


def _differs(g: list, s: list) -> str:
    first = next((k for k, (a, b) in enumerate(zip(g, s)) if a != b), min(len(g), len(s)))
    return (f"line {first}:\n  gdb: {g[first] if first < len(g) else '-'}\n"
            f"  swk: {s[first] if first < len(s) else '-'}")


def _against(prog, known_table, what, results) -> list[str]:
    """The errors of (stop, GDB's lines, swk's lines, context) against a table of known
    differences: an unlisted difference, and a listed one that is gone."""
    errs = []
    for i, g, s, context in results:
        known = known_table.get((prog.id, i))
        if g == s and known:
            errs.append(f"{what} {i}: now equal to GDB, but listed as a known difference ({known})")
        elif g != s and not known:
            errs.append(f"{what} {i}, {_differs(g, s)}" + (f"\n{context}" if context else ""))
    return errs


@pytest.mark.swk
@pytest.mark.parametrize("prog", PROGRAMS or [None], ids=[p.id for p in PROGRAMS] or ["no-testsuite"])
def test_gdb_program_core(root, results, prog):
    """The first stops of each program as cores (gcore): ``swk bt --core`` (the command line, no
    debugger) against GDB's bt on the same core, line for line (both past main)."""
    if prog is None:
        pytest.fail(f"no program of GDB's testsuite found under {ROOT}", pytrace=False)
    got = results[prog.id].result() if prog.id in results else _run(prog)
    if got is None:
        return                          # test_gdb_program says why it does not build
    errs = _against(prog, KNOWN_CORE, "core of stop", ((i, g, s, o) for i, (g, s, o) in sorted(got.cores.items())))
    if got.stops and not got.cores:
        errs.append("no core written")
    if errs:
        pytest.fail(f"{prog.id}:\n" + "\n".join(errs), pytrace=False)


#: (program, stop index) -> why swk-bt in LLDB differs from GDB's bt on that stop's core
KNOWN_LLDB = {}


@pytest.mark.swk
@pytest.mark.parametrize("prog", PROGRAMS or [None], ids=[p.id for p in PROGRAMS] or ["no-testsuite"])
def test_gdb_program_lldb(root, results, prog):
    """The deepest of those cores in LLDB (``target create --core``): swk-bt's lines there
    against GDB's bt on the same core (LLDB's swk-bt walks past main, as GDB does there)."""
    if prog is None:
        pytest.fail(f"no program of GDB's testsuite found under {ROOT}", pytrace=False)
    S.need_lldb()
    got = results[prog.id].result() if prog.id in results else _run(prog)
    if got is None or not got.cores:
        return                          # test_gdb_program / test_gdb_program_core say why
    if got.lldb is None:
        pytest.fail(f"{prog.id}: no LLDB session", pytrace=False)
    i, g, s, out = got.lldb
    known = KNOWN_LLDB.get((prog.id, i)) or KNOWN_CORE.get((prog.id, i))
    if g == s and known and (prog.id, i) in KNOWN_LLDB:
        pytest.fail(f"{prog.id}: core of stop {i} in LLDB now equal to GDB, but listed ({known})", pytrace=False)
    if g != s and not known:
        pytest.fail(f"{prog.id}: core of stop {i} in LLDB, {_differs(g, s)}\n--- lldb ---\n{out}", pytrace=False)
