"""GDB-exact on real -O2 code (issue 24): swk-bt's lines against GDB's own, on glibc built by
Debian at -O2 with its DWARF (libc6-dbg), in stops where swk used to differ.

tests/corpus/gdb_exact.c (see its header), built at -O2 -g:

  test_bt_lines[MODE-live|gdb-core]   one GDB session: ``bt`` and ``bt full``, then swk loaded
      and ``swk-bt`` / ``swk-bt -full``: the very same lines, live and on the core
  test_cli_core[MODE]                 ``swk bt --core --full`` == GDB's ``bt full`` on the core
  test_known_values[MODE]             the values the program itself passed (qsort's n=300,
      sorter's scale=4) and the frames the stop must have, in swk's lines and GDB's alike:
      an oracle beside GDB's text, so a change in GDB's own output cannot hide a regression

The classes of bug these stops caught: the frame-pointer chain answering where CFI covers the
pc (glibc's qsort_r pushes callee-saved registers between other instructions: the prologue
scan missed them, so its callers' registers were stale: ``n=1200, scale=1431654816``), and a
call site's callee named by its bare name resolving to a hidden symbol version
(``pthread_cond_timedwait@GLIBC_2.2.5``: an invented tail-call frame
``__pthread_cond_timedwait_2_0``); and a vDSO frame's ``from [vdso]``, which GDB never prints.
"""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

import swk_suite as S
import swk_testlib as T

pytestmark = [pytest.mark.corpus]

S.need_tool(T.GDB, "gdb")

SETTINGS = ("set width 0", "set height 0", "set print pretty off", "set confirm off")

#: the waiting thread selected (on a core GDB numbers threads in the core's order)
SELECT_WAITER = ("python exec(\"for t in gdb.selected_inferior().threads():\\n t.switch()\\n"
                 " if 'waiter' in gdb.execute('bt', to_string=True): break\")")

#: mode -> the commands that bring the program to its stop
STOPS = {
    "qsort": ("break cmp", "run qsort"),
    "condwait": ("break stop_here", "run condwait", SELECT_WAITER),
    "vdso": ("break main", "run vdso", "break __vdso_clock_gettime", "continue"),
    "args": ("break stop_here", "run args"),
    "decimal": ("break stop_here", "run decimal"),
    "lost": ("break stop_here", "run lost"),
}
MODES = list(STOPS)


class Programs:
    def __init__(self):
        self._exe: Path | None = None
        self._core: dict[str, Path] = {}

    def exe(self) -> Path:
        if self._exe is None:
            self._exe = T.build(["gdb_exact.c"], "gdb_exact-O2", ("-O2", "-g"), ("-pthread",))
        return self._exe

    def core(self, mode: str) -> Path:
        if mode not in self._core:
            self._core[mode] = T.make_core(self.exe(), STOPS[mode])
        return self._core[mode]


@pytest.fixture(scope="session")
def progs():
    if not Path("/usr/lib/debug/.build-id").is_dir():
        S.missing("no separate debug files for glibc", S.install_hint("libc6-dbg"))
    return Programs()


_between = T.between_markers
_marked = T.marked_commands


#: GDB's bug (docs/usage.md, "Where GDB's own lines are wrong"): live, it resolves the call site's
#: callee ``clock_gettime`` to the vDSO's (the first objfile exporting it) and so cannot evaluate
#: libc's entry values (its arguments' locations at that pc are DW_OP_entry_value): every value
#: there is <optimized out>; on a core of the same stop it prints them.  swk prints them both
#: times; where GDB prints <optimized out> for them swk must print the value main passed,
#: CLOCK_MONOTONIC (1), and a pointer.
VDSO_FRAME = "__GI___clock_gettime ("
VDSO_SWK = ((re.compile(r"\b(clock_id(?:@entry)?=)(?:clock_id@entry=)?(?:1|0x1|01)(?=[,)])"), r"\1<optimized out>"),
            (re.compile(r"\b(tp(?:@entry)?=)(?:tp@entry=)?(?:0x[0-9a-f]+)?(?=[,)])"), r"\1<optimized out>"))


def _same(g: str, s: str) -> bool:
    if g == s:
        return True
    if VDSO_FRAME in g and VDSO_FRAME in s and "clock_id" in g and "=1" not in g:
        for pat, rep in VDSO_SWK:
            s = pat.sub(rep, s)
        return s == g
    return False


def _differences(gdb_lines: list[str], swk_lines: list[str]) -> list[str]:
    errs = [] if gdb_lines else ["GDB printed no frames"]
    if len(gdb_lines) != len(swk_lines):
        errs.append(f"GDB printed {len(gdb_lines)} lines, swk {len(swk_lines)}")
    errs += [f"line {i}:\n  gdb: {g}\n  swk: {s}" for i, (g, s) in enumerate(zip(gdb_lines, swk_lines))
             if not _same(g, s)]
    return errs


def _session(progs, mode: str, core: Path | None) -> dict[str, list[str]]:
    stop = [] if core is not None else list(STOPS[mode])
    if core is not None and mode == "condwait":
        stop = [SELECT_WAITER]
    out = T.run_gdb(progs.exe(), [*SETTINGS, *stop, *_marked("GDB", "bt"), *_marked("GDBFULL", "bt full"),
                                  f"source {T.GDB_INIT}", *_marked("SWK", "swk-bt"),
                                  *_marked("SWKFULL", "swk-bt -full")], core=core, timeout=180)
    return {tag: _between(out, tag) for tag in ("GDB", "GDBFULL", "SWK", "SWKFULL")}


def _fail(errs: list[str], *blocks: tuple[str, list[str]]) -> None:
    ctx = "".join(f"\n--- {name} ---\n" + "\n".join(lines) for name, lines in blocks)
    pytest.fail("\n".join(errs) + ctx, pytrace=False)


@pytest.mark.swk
@pytest.mark.parametrize("where", ["live", "gdb-core"])
@pytest.mark.parametrize("mode", MODES)
def test_bt_lines(progs, mode, where):
    got = _session(progs, mode, progs.core(mode) if where == "gdb-core" else None)
    errs = _differences(got["GDB"], got["SWK"]) + _differences(got["GDBFULL"], got["SWKFULL"])
    if errs:
        _fail(errs, ("bt", got["GDB"]), ("swk-bt", got["SWK"]), ("bt full", got["GDBFULL"]),
              ("swk-bt -full", got["SWKFULL"]))


@pytest.mark.swk
@pytest.mark.parametrize("mode", MODES)
def test_cli_core(progs, mode):
    core = progs.core(mode)
    cmds = [*SETTINGS, "set backtrace past-main on", *([SELECT_WAITER] if mode == "condwait" else []),
            "python print('SWKTID', gdb.selected_thread().ptid[1])", *_marked("GDB", "bt full")]
    out = T.run_gdb(progs.exe(), cmds, core=core, timeout=180)
    tid = re.search(r"^SWKTID (\d+)$", out, re.M)
    if not tid:
        _fail(["no SWKTID line"], ("gdb", out.splitlines()))
    gdb_lines = _between(out, "GDB")
    p = T.run_swk_cli(["bt", "--core", progs.core(mode), "--exe", progs.exe(), "--full", "--thread", tid.group(1)])
    swk_lines = [ln for ln in p.stdout.splitlines() if not ln.startswith("Thread ")]
    errs = [] if p.returncode == 0 else [f"swk exited {p.returncode}"]
    errs += _differences(gdb_lines, swk_lines)
    if errs:
        _fail(errs, ("gdb bt full", gdb_lines), ("swk bt --core --full", p.stdout.splitlines()))


_FRAME = re.compile(r"^#\d+\s+(?:0x[0-9a-f]+ in )?(\S+) \((.*)\)")


@pytest.mark.swk
@pytest.mark.parametrize("mode", MODES)
def test_known_values(progs, mode):
    got = _session(progs, mode, None)
    errs = []
    for side in ("GDB", "SWK"):
        frames = [m.groups() for m in map(_FRAME.match, got[side]) if m]
        names = [f for f, _a in frames]
        args = dict(reversed(frames))          # the outermost frame of a name
        if mode == "qsort":
            want = ["cmp", "msort_with_tmp", "__GI___qsort_r", "__GI_qsort", "sorter", "main"]
            if [n for n in want if n not in names]:
                errs.append(f"{side}: frames {names}, expected {want} among them")
                continue
            if "n=n@entry=300" not in args["__GI_qsort"]:
                errs.append(f"{side}: qsort({args['__GI_qsort']}), the program passed n=300")
            if not re.search(r"\bn=(n@entry=)?300\b", args["sorter"]) or "scale=scale@entry=4" not in args["sorter"]:
                errs.append(f"{side}: sorter({args['sorter']}), the program passed n=300, scale=4 (argc + 2)")
        elif mode == "args":
            if "k=<optimized out>, k@entry=3" not in args.get("changed", "") or \
                    "n=n@entry=3" not in args.get("by_value", ""):
                errs.append(f"{side}: changed({args.get('changed')}) by_value({args.get('by_value')}), "
                            "by_value got n=3 and passed it to changed as k")
        elif mode == "decimal":
            # the program's own literals (decimals' arguments are its arrays' first elements),
            # as decNumber's to-scientific-string writes them
            full = "\n".join(got[side + "FULL"] if side == "SWK" else got["GDBFULL"])
            for want in ("d32 = {0.1, 1.0, -2.50, 1.23E+20, 1E-7,", "d64 = {2.00, 100, 0.0000015,",
                         "-Infinity, NaN}", "d128 = {-3.000E-10, 1.000000000000000000000000000000001, -5E+6000,"):
                if want not in full:
                    errs.append(f"{side}: no {want!r} in bt full: main passed 0.1DF, 2.00DD, -3.000E-10DL")
        elif mode == "lost":
            full = "\n".join(got[side + "FULL"] if side == "SWK" else got["GDBFULL"])
            if "keeps_in_rbx" not in names or "v = <optimized out>" not in full:
                errs.append(f"{side}: keeps_in_rbx's v (in %rbx, which loses_rbx's CFI marks undefined) "
                            "must be <optimized out>, not the inner frames' %rbx")
        elif mode == "vdso":
            if names[:1] != ["clock_gettime"] or "main" not in names:
                errs.append(f"{side}: frames {names}, expected clock_gettime (the vDSO's) ... main")
            if " from " in got[side][0]:
                errs.append(f"{side}: the vDSO frame names an object: {got[side][0]}")
            if side == "SWK" and "clock_id=clock_id@entry=1," not in args.get("__GI___clock_gettime", ""):
                errs.append(f"SWK: __GI___clock_gettime({args.get('__GI___clock_gettime')}), main passed "
                            "CLOCK_MONOTONIC (1)")
        else:
            if "waiter" not in names or "main" not in names:
                errs.append(f"{side}: frames {names}, expected waiter and main")
            if any("_2_0" in n for n in names):
                errs.append(f"{side}: a frame of the hidden old version: {names}")
            if not re.search(r"\bsecs=(secs@entry=)?60\b", args.get("waiter", "")):
                errs.append(f"{side}: waiter({args.get('waiter')}), the program passed secs=60")
    if errs:
        _fail(errs, ("bt", got["GDB"]), ("swk-bt", got["SWK"]))


# --------------------------------------------------------------------------
# GDB's settings that change a frame line
# --------------------------------------------------------------------------

ENTRY_VALUES = ("no", "only", "preferred", "if-needed", "both", "compact", "default")
#: (print entry-values, print frame-arguments): every entry-values mode, every frame-arguments one
SETTINGS_COMBOS = [(e, "scalars") for e in ENTRY_VALUES] + \
    [("default", fa) for fa in ("all", "none", "presence")] + [("both", "all"), ("compact", "all")]
#: GDB's other settings that change bt's lines, one case each (each starts from the defaults)
OTHER_SETTINGS = [
    ("set print address off",), ("set output-radix 16",), ("set output-radix 8",),
    ("set print symbol off",), ("set print elements 4",), ("set print repeats 2",),
    ("set print elements unlimited", "set print repeats unlimited"),
    ("set print frame-info short-location",), ("set print frame-info location-and-address",),
    ("set print frame-info location",),
    ("set backtrace limit 3",), ("set backtrace limit 2",), ("set backtrace limit 1",),
    ("set print address off", "set print frame-arguments all", "set print entry-values both"),
    ("set print frame-info source-line",), ("set print frame-info source-and-location",),
    ("set print frame-info source-line", "set print address off"),
    ("set filename-display basename",), ("set filename-display absolute",),
    ("set filename-display absolute", "set print frame-info source-and-location"),
]
#: (mode, case) GDB 13 cannot print: its bt dies of a segmentation fault (the qsort stop's
#: third frame, an inlined msort_with_tmp whose caller is past the limit), or of an internal
#: error (condwait, one frame: "dwarf_expr_reg_to_entry_parameter: Assertion `frame != NULL'
#: failed", an entry value wanted from the caller the limit removed).
GDB_CRASHES = {("qsort", ("set backtrace limit 3",)), ("condwait", ("set backtrace limit 1",))}
DEFAULTS = ("set print entry-values default", "set print frame-arguments scalars", "set print address on",
            "set output-radix 10", "set print symbol on", "set print elements 200", "set print repeats 10",
            "set print frame-info auto", "set backtrace limit unlimited", "set filename-display relative")


def _settings_cmds(cases, full=False) -> list[str]:
    cmds = []
    tag = "F" if full else ""
    for i, case in enumerate(cases):
        cmds += [*DEFAULTS, *case, *_marked(f"GDB{tag}-{i}", "bt full" if full else "bt"),
                 *_marked(f"SWK{tag}-{i}", "swk-bt -full" if full else "swk-bt")]
    return cmds


@pytest.mark.swk
@pytest.mark.parametrize("where", ["live", "gdb-core"])
@pytest.mark.parametrize("mode", MODES)
def test_print_settings(progs, mode, where):
    """swk-bt reads GDB's settings that change bt's lines at each command: its lines equal
    bt's under every value of `print entry-values` and `print frame-arguments`, and under
    `print address`, `output-radix`, `print symbol`, `print elements`, `print repeats`, `print
    frame-info` and `backtrace limit` (bt full's lines too, for the value settings)."""
    core = progs.core(mode) if where == "gdb-core" else None
    stop = ([SELECT_WAITER] if mode == "condwait" else []) if core is not None else list(STOPS[mode])
    cases = [(f"set print entry-values {e}", f"set print frame-arguments {fa}") for e, fa in SETTINGS_COMBOS]
    cases += [c for c in OTHER_SETTINGS if (mode, c) not in GDB_CRASHES]
    full_cases = OTHER_SETTINGS[:7]
    out = T.run_gdb(progs.exe(), [*SETTINGS, *stop, f"source {T.GDB_INIT}", *_settings_cmds(cases),
                                  *_settings_cmds(full_cases, full=True)], core=core, timeout=300)
    errs, blocks = [], []
    for tag, group, cmd in (("", cases, "bt"), ("F", full_cases, "bt full")):
        for i, case in enumerate(group):
            g, s = _between(out, f"GDB{tag}-{i}"), _between(out, f"SWK{tag}-{i}")
            d = _differences(g, s)
            if d:
                errs += [f"{cmd} after {'; '.join(case)}:", *d]
                blocks += [(f"{cmd} ({'; '.join(case)})", g), (f"swk ({'; '.join(case)})", s)]
    if errs:
        _fail(errs, *blocks)


@pytest.mark.swk
def test_print_settings_as_options(progs):
    """-entry-values= / -frame-arguments= override GDB's settings; a bad value is one line."""
    combos = [("both", "all"), ("preferred", "none"), ("if-needed", "presence")]
    cmds = []
    for e, fa in combos:      # GDB's settings back to the defaults for swk-bt: the options alone decide
        cmds += [f"set print entry-values {e}", f"set print frame-arguments {fa}", *_marked(f"GDB-{e}-{fa}", "bt"),
                 "set print entry-values default", "set print frame-arguments scalars",
                 *_marked(f"SWK-{e}-{fa}", f"swk-bt -entry-values={e} -frame-arguments={fa}")]
    out = T.run_gdb(progs.exe(), [*SETTINGS, *STOPS["args"], f"source {T.GDB_INIT}", *cmds,
                                  "swk-bt -entry-values=sometimes", "echo SWK-AFTER\\n"], timeout=180)
    errs = []
    for e, fa in combos:
        errs += _differences(_between(out, f"GDB-{e}-{fa}"), _between(out, f"SWK-{e}-{fa}"))
    if "swk-bt: entry-values must be one of no, only, preferred, if-needed, both, compact, default, " \
            "not 'sometimes'" not in out or "Traceback" in out or "SWK-AFTER" not in out:
        errs.append("a bad -entry-values= is not one clear line")
    if errs:
        _fail(errs, ("gdb", out.splitlines()[-80:]))


@pytest.mark.swk
@pytest.mark.parametrize("mode", ["args", "qsort"])
def test_print_settings_cli_core(progs, mode):
    """``swk bt --core --NAME VALUE`` (GDB's settings as options) == GDB's bt on the core under them."""
    core = progs.core(mode)
    cases = [  # (GDB's settings, the CLI's options)
        (("set print entry-values both", "set print frame-arguments all"),
         ("--entry-values", "both", "--frame-arguments", "all")),
        (("set print entry-values compact",), ("--entry-values", "compact")),
        (("set print entry-values only",), ("--entry-values", "only")),
        (("set print frame-arguments none",), ("--frame-arguments", "none")),
        (("set print address off", "set output-radix 16"), ("--print-address", "off", "--output-radix", "16")),
        (("set print elements 3", "set print repeats 2"), ("--print-elements", "3", "--print-repeats", "2")),
        (("set print frame-info short-location", "set backtrace limit 2"),
         ("--frame-info", "short-location", "--backtrace-limit", "2")),
        (("set print frame-info source-and-location",), ("--frame-info", "source-and-location")),
        (("set print frame-info source-line",), ("--frame-info", "source-line")),
        (("set filename-display basename",), ("--filename-display", "basename")),
        (("set filename-display absolute", "set print frame-info source-and-location"),
         ("--filename-display", "absolute", "--frame-info", "source-and-location")),
    ]
    cmds = [*SETTINGS, "set backtrace past-main on", "python print('SWKTID', gdb.selected_thread().ptid[1])"]
    for i, (sets, _cli) in enumerate(cases):
        cmds += [*DEFAULTS, *sets, *_marked(f"GDB-{i}", "bt full")]
    out = T.run_gdb(progs.exe(), cmds, core=core, timeout=180)
    tid = re.search(r"^SWKTID (\d+)$", out, re.M)
    if not tid:
        _fail(["no SWKTID line"], ("gdb", out.splitlines()))
    errs, blocks = [], []
    for i, (sets, cli) in enumerate(cases):
        g = _between(out, f"GDB-{i}")
        p = T.run_swk_cli(["bt", "--core", core, "--exe", progs.exe(), "--thread", tid.group(1), "--full", *cli])
        s = [ln for ln in p.stdout.splitlines() if not ln.startswith("Thread ")]
        d = ([] if p.returncode == 0 else [f"swk exited {p.returncode}"]) + _differences(g, s)
        if d:
            errs += [f"{' '.join(cli)}:", *d]
            blocks += [(f"bt full ({'; '.join(sets)})", g), (f"swk bt --core {' '.join(cli)}", p.stdout.splitlines())]
    p = T.run_swk_cli(["bt", "--core", core, "--exe", progs.exe(), "--print-elements", "many"])
    if p.returncode == 0 or "Traceback" in p.stdout or len(p.stdout.strip().splitlines()) != 1:
        errs.append(f"a bad --print-elements is not one clear line: {p.stdout!r}")
    if errs:
        _fail(errs, *blocks)


# --------------------------------------------------------------------------
# Rust: the names GDB builds from DWARF
# --------------------------------------------------------------------------

def _rustc() -> str:
    import shutil
    rustc = shutil.which("rustc") or str(Path.home() / ".cargo" / "bin" / "rustc")
    if not Path(rustc).exists():
        S.missing("rustc not found", "install Rust (rustup) so that rustc is on PATH or in ~/.cargo/bin")
    return rustc


def _rust_build() -> Path:
    """tests/corpus/rust_panic.rs built with rustc -g -O (cached by source and rustc version)."""
    import hashlib
    rustc = _rustc()
    src = T.CORPUS / "rust_panic.rs"
    version = subprocess.run([rustc, "--version"], stdout=subprocess.PIPE, text=True).stdout
    key = hashlib.sha256(src.read_bytes() + version.encode()).hexdigest()[:16]
    out = T.BUILD / f"rust_panic-{key}" / "rust_panic"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        p = subprocess.run([rustc, "-g", "-O", str(src), "-o", str(out)], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            raise T.BuildError(f"rustc failed:\n{p.stdout}")
    return out


def _rust_stripped() -> Path:
    """rust_panic.rs built without debug info (-C debuginfo=0) and stripped of the rest (the
    standard library's): every frame named from its ELF symbol, legacy or v0 mangled."""
    exe = _rust_build()
    out = exe.parent / "rust_panic-stripped"
    if not out.exists():
        src = T.CORPUS / "rust_panic.rs"
        tmp = exe.parent / "rust_panic-nodebug"
        p = subprocess.run([_rustc(), "-C", "debuginfo=0", "-O", str(src), "-o", str(tmp)], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            raise T.BuildError(f"rustc failed:\n{p.stdout}")
        subprocess.run(["strip", "--strip-debug", str(tmp), "-o", str(out)], check=True)
    return out


@pytest.mark.swk
@pytest.mark.parametrize("where", ["live", "cli-core"])
def test_rust_names_without_dwarf(where):
    """Without DWARF, Rust frames are named from their symbols as GDB demangles them (libiberty's
    Rust demangler): legacy names with their hash and escapes decoded
    (``core::ops::function::FnOnce::call_once{{vtable.shim}}::h...``), v0 names with crate
    disambiguators, closures, generic arguments and impl paths
    (``<std[...]::sys::thread::unix::Thread>::new::thread_start``), never a mangled name."""
    exe = _rust_stripped()
    stop = ["break rust_panic", "run"]
    core = T.make_core(exe, stop) if where == "cli-core" else None
    cmds = [*SETTINGS, "set backtrace past-main on", *([] if core else stop), *_marked("GDB", "bt"),
            "python print('SWKTID', gdb.selected_thread().ptid[1])"]
    if core is None:
        cmds += [f"source {T.GDB_INIT}", *_marked("SWK", "swk-bt")]
    out = T.run_gdb(exe, cmds, core=core, timeout=180)
    g = _between(out, "GDB")
    if core is None:
        s = _between(out, "SWK")
    else:                               # the thread that panicked, as GDB selects it on the core
        tid = re.search(r"^SWKTID (\d+)$", out, re.M)
        if not tid:
            _fail(["no SWKTID line"], ("gdb", out.splitlines()))
        p = T.run_swk_cli(["bt", "--core", core, "--exe", exe, "--thread", tid.group(1)])
        s = [ln for ln in p.stdout.splitlines() if ln.startswith("#")]
    errs = [] if any("{closure#0}" in ln for ln in g) and any("::h" in ln for ln in g) else \
        ["GDB's bt names no v0 closure and no legacy hash: not the stop this test is about"]
    errs += _differences(g, s)
    errs += [f"a mangled name: {ln}" for ln in s if re.search(r"\b_(R|ZN)[0-9A-Za-z_$]{6,}|\$u[0-9a-f]+\$", ln)]
    if errs:
        _fail(errs, ("bt", g), ("swk", s))


@pytest.mark.swk
@pytest.mark.parametrize("where", ["live", "gdb-core"])
def test_rust_names(where):
    """A Rust thread stopped in its panic (break rust_panic): every frame of swk-bt is named as
    GDB names it from DWARF ("std::panicking::rust_panic", "rust_panic::deep",
    "core::panic::unwind_safe::{impl#23}::call_once<u8, ...>"), never by its linkage name
    ("_RNvNt..." or "_ZN4main4deep17h...E"), at GDB's levels and pcs."""
    exe = _rust_build()
    stop = ["break rust_panic", "run"]
    core = T.make_core(exe, stop) if where == "gdb-core" else None
    out = T.run_gdb(exe, [*SETTINGS, *([] if core else stop), *_marked("GDB", "bt"), f"source {T.GDB_INIT}",
                          *_marked("SWK", "swk-bt")], core=core, timeout=180)
    g, s = _between(out, "GDB"), _between(out, "SWK")
    frame = re.compile(r"^(#\d+)\s+(?:(0x[0-9a-f]+) in )?(.*?) \(")

    def names(lines):
        return [m.groups() for m in map(frame.match, lines) if m]
    errs = []
    if not any(n == "rust_panic::deep" for _l, _pc, n in names(g)):
        errs.append("GDB's bt has no frame rust_panic::deep: the stop is not the panic")
    if names(g) != names(s):
        errs += [f"  gdb: {a}\n  swk: {b}" for a, b in zip(names(g), names(s)) if a != b] or \
            [f"GDB has {len(names(g))} frames, swk {len(names(s))}"]
    errs += [f"a linkage name: {ln}" for ln in s if re.search(r"\b_(R|ZN)[0-9A-Za-z_$]{6,}", ln)]
    if errs:
        _fail(errs, ("bt", g), ("swk-bt", s))


@pytest.mark.swk
@pytest.mark.parametrize("where", ["live", "gdb-core", "cli-core"])
def test_cxx_computed_names(where):
    """Addresses of C++ functions that have no linkage name (main, an extern "C" function) print
    as GDB names them: their parameter types canonicalized as GDB's C++ parser spells them
    (``<main(int, char**)>``, ``<fx(unsigned long, char const*, ..., int const* const*)>``),
    in the frame line and, past main, in __libc_start_call_main's arguments; on the command
    line too (which walks past main: so does GDB here)."""
    exe = T.build(["cxx_names.cpp"], "cxx_names", ("-g",))
    stop = ["break stop", "run"]
    core = T.make_core(exe, stop) if where != "live" else None
    out = T.run_gdb(exe, [*SETTINGS, "set backtrace past-main on", *([] if core else stop), *_marked("GDB", "bt"),
                          f"source {T.GDB_INIT}", *_marked("SWK", "swk-bt")], core=core, timeout=180)
    g = _between(out, "GDB")
    if where == "cli-core":
        p = T.run_swk_cli(["bt", "--core", core, "--exe", exe])
        s = [ln for ln in p.stdout.splitlines() if ln.startswith("#")]
    else:
        s = _between(out, "SWK")
    errs = [] if any("<main(int, char**)>" in ln for ln in g) else ["GDB's bt does not name <main(int, char**)>"]
    errs += _differences(g, s)
    if errs:
        _fail(errs, ("bt", g), ("swk", s))


@pytest.mark.swk
def test_rust_symbols_demangle_as_gdbs():
    """Every Rust symbol of the stripped program (the standard library's v0 names, the program's
    legacy ones) demangles here as GDB lists its minimal symbol (``maint print msymbols``)."""
    from swk_plugin.elf.demangle import demangle
    exe = _rust_stripped()
    out = T.run_gdb(exe, ["maint print msymbols"], timeout=180)
    pat = re.compile(r"^\[\s*\d+\] \S 0x[0-9a-f]+ (_R\S+|_ZN\S+)(?: section \S+)?  (.+?)  $")
    errs, checked = [], {"_R": 0, "_ZN": 0}
    for line in out.splitlines():
        m = pat.match(line)
        if not m:
            continue
        name, want = m.groups()
        got = demangle(name)
        checked["_R" if name.startswith("_R") else "_ZN"] += 1
        if got != want:
            errs.append(f"{name}\n  gdb: {want}\n  swk: {got}")
    if checked["_R"] < 100 or checked["_ZN"] < 10:
        errs.append(f"too few Rust symbols checked: {checked}")
    if errs:
        pytest.fail(f"{len(errs)} of {sum(checked.values())} differ:\n" + "\n".join(errs[:40]), pytrace=False)


@pytest.mark.swk
@pytest.mark.parametrize("where", ["live", "gdb-core"])
def test_saved_registers_are_gdbs(progs, where):
    """Register provenance (``swk-bt -json -v``: each physical frame's "registers": where it saved
    its caller's registers): at every level of the qsort stop (glibc's msort_with_tmp saves six
    callee-saved registers; qsort_r pushes them between other instructions), the same registers
    at the same addresses as GDB's `info frame` lists under "Saved registers"."""
    core = progs.core("qsort") if where == "gdb-core" else None
    cmds = [*SETTINGS, *([] if core else STOPS["qsort"]), f"source {T.GDB_INIT}",
            *_marked("SWKJSON", "swk-bt -json -v")]
    for level in range(8):
        cmds += _marked(f"INFO{level}", f"frame {level}", "info frame")
    out = T.run_gdb(progs.exe(), cmds, core=core, timeout=180)
    walk = T.parse_swk_json("\n".join(_between(out, "SWKJSON")))[0]
    errs, compared = [], 0
    for f in walk["frames"][:8]:
        if "registers" not in f:
            continue
        text = " ".join(_between(out, f"INFO{f['level']}"))
        m = re.search(r"Saved registers:\s*(.*)$", text)
        gdb_saved = dict((n, int(a, 16)) for n, a in re.findall(r"(\w+) at (0x[0-9a-f]+)", m.group(1))) if m else {}
        if f["registers"]["saved"] != gdb_saved:
            errs.append(f"level {f['level']} ({f['function']}): swk {f['registers']['saved']}, GDB {gdb_saved}")
        compared += 1
    if compared < 5:
        errs.append(f"only {compared} frames compared")
    if errs:
        _fail(errs, ("swk-bt -json -v", _between(out, "SWKJSON")))


def _readelf_rows(path, _cache={}):
    """readelf --debug-dump=frames-interp's rows of ``path``: [(start, end, columns, rows)] per
    FDE, each row (LOC, {column: text}) as the toolchain reads the CFI (the oracle)."""
    if path in _cache:
        return _cache[path]
    # readelf exits 1 on libc.so.6 (a section it cannot follow) after printing every row: its rows are the oracle
    out = subprocess.run(["readelf", "--debug-dump=frames-interp", "-W", path], capture_output=True, text=True).stdout
    assert "FDE" in out, f"readelf read no CFI from {path}"
    fdes, cies, cur, cols = [], {}, None, None
    for line in out.splitlines():
        m = re.match(r"([0-9a-f]+) [0-9a-f]+ [0-9a-f]+ CIE", line)
        if m:                                      # its initial row: an FDE without instructions has no other
            cur = cies[int(m.group(1), 16)] = (0, 0, [], [])
            cols = None
            continue
        m = re.match(r"[0-9a-f]+ [0-9a-f]+ [0-9a-f]+ FDE cie=([0-9a-f]+) pc=([0-9a-f]+)\.\.([0-9a-f]+)", line)
        if m:
            cur = (int(m.group(2), 16), int(m.group(3), 16), [], [])
            fdes.append(cur + (cies.get(int(m.group(1), 16)),))
            cols = None
            continue
        if cur is None:
            continue
        if line.strip().startswith("LOC"):
            cols = line.split()[1:]
            cur[2].extend(cols)
            continue
        fields = line.split()
        if cols and len(fields) == len(cols) + 1 and re.fullmatch(r"[0-9a-f]{8,16}", fields[0]):
            cur[3].append((int(fields[0], 16), dict(zip(cols, fields[1:]))))
    fdes = [(start, end, cols, rows or [(start, cie[3][0][1])] if cie and cie[3] else rows)
            for start, end, cols, rows, cie in fdes]
    _cache[path] = fdes
    return fdes


@pytest.mark.swk
@pytest.mark.parametrize("where", ["live", "cli-core"])
def test_register_rules_are_the_cfis(progs, where):
    """Which rule gave each register (``swk-bt -json -v``: "rule" and "origins", issue 24's
    register model): at every frame of the qsort stop whose caller the CFI found, the row swk
    applied is the one readelf --debug-dump=frames-interp prints for the frame's pc — the same
    CFA, and for every register column the same rule (readelf's ``u``, a column with no rule
    yet, is swk's undefined, or no rule: the ABI's same value or unknown); registers readelf
    has no column for have no rule in swk.  On the command line (the core) the same."""
    if where == "live":
        out = T.run_gdb(progs.exe(), [*SETTINGS, *STOPS["qsort"], f"source {T.GDB_INIT}",
                                      *_marked("SWKJSON", "swk-bt -json -v")], timeout=180)
        walk = T.parse_swk_json("\n".join(_between(out, "SWKJSON")))[0]
    else:
        p = T.run_swk_cli(["bt", "--core", str(progs.core("qsort")), "--exe", str(progs.exe()), "--json", "-v"])
        walk = T.parse_swk_json(p.stdout)[0]
    errs, compared = [], 0
    for f in walk["frames"]:
        regs = f.get("registers")
        if not regs or regs.get("rule", {}).get("by") != "cfi":
            continue
        rule, origins = regs["rule"], regs["origins"]
        fdes = [d for d in _readelf_rows(f["library"]) if d[0] <= rule["pc"] < d[1]]
        rows = [(loc, row) for d in fdes for k, (loc, row) in enumerate(d[3])
                if loc <= rule["pc"] < (d[3][k + 1][0] if k + 1 < len(d[3]) else d[1])]
        where_ = f"level {f['level']} ({f['function']}, pc +0x{rule['pc']:x})"
        if len(rows) != 1 or rows[0][0] != rule["row"]:
            errs.append(f"{where_}: swk's row 0x{rule['row']:x}, readelf's {[hex(r[0]) for r in rows]}")
            continue
        row = rows[0][1]
        if row["CFA"] != rule["cfa"]:
            errs.append(f"{where_}: CFA swk {rule['cfa']}, readelf {row['CFA']}")
        for col, text in row.items():
            if col == "CFA":
                continue
            name = "rip" if col == "ra" else col
            o = origins.get(name, {})
            mine = o.get("rule")
            ok = (mine in (None, "u") and o.get("how") in ("undefined", "same", "unknown")) if text == "u" \
                else mine == text
            if not ok:
                errs.append(f"{where_}: {name} swk {o}, readelf {text}")
        extra = [n for n, o in origins.items() if o.get("rule") not in (None, "cfa")
                 and ("ra" if n == "rip" else n) not in row]
        if extra:
            errs.append(f"{where_}: swk has rules for {extra}, readelf no column")
        compared += 1
    if compared < 5:
        errs.append(f"only {compared} frames compared")
    if errs:
        _fail(errs, ("swk json", [json.dumps(walk)[:3000]]))


def _regs_blocks(lines):
    """{level: (CFA value, {name: address})} from swk-bt -regs's lines."""
    out, level = {}, None
    for line in lines:
        m = re.match(r"#(\d+)\s", line)
        if m:
            level = int(m.group(1))
            continue
        m = re.match(r"    caller's registers by .*CFA=\S+ = (0x[0-9a-f]+)$", line)
        if m and level is not None:
            out[level] = (int(m.group(1), 16), {})
            continue
        m = re.match(r"      saved: (.*)$", line)
        if m and level in out:
            out[level][1].update((n, int(a, 16)) for n, a in re.findall(r"(\w+) at (0x[0-9a-f]+)", m.group(1)))
    return out


@pytest.mark.swk
@pytest.mark.parametrize("where", ["live", "cli-core"])
def test_register_lines_are_gdbs_info_frame(progs, where):
    """``swk-bt -regs`` (``swk bt --regs``): after each physical frame, its CFA is the address GDB's
    `info frame` says the frame is at, and the registers it says were saved are GDB's "Saved
    registers", at the same addresses — at every level of the qsort stop, in GDB and on the
    command line on the stop's core."""
    core = progs.core("qsort")
    cmds = [*SETTINGS, f"source {T.GDB_INIT}", *_marked("SWK", "swk-bt -regs")]
    for level in range(12):
        cmds += _marked(f"INFO{level}", f"frame {level}", "info frame")
    out = T.run_gdb(progs.exe(), [*STOPS["qsort"], *cmds] if where == "live" else cmds,
                    core=None if where == "live" else core, timeout=180)
    if where == "live":
        swk = _between(out, "SWK")
    else:
        swk = T.run_swk_cli(["bt", "--core", str(core), "--exe", str(progs.exe()), "--regs"]).stdout.splitlines()
    blocks = _regs_blocks(swk)
    errs, compared = [], 0
    for level in range(12):
        text = " ".join(_between(out, f"INFO{level}"))
        m = re.search(r"frame at (0x[0-9a-f]+)", text)
        if not m or "Saved registers" not in text or "inlined into frame" in text:
            continue                      # an inline level: it has no registers of its own (swk-bt shows none)
        if level not in blocks:
            errs.append(f"level {level}: no register lines from swk")
            continue
        cfa, saved = blocks[level]
        gdb_saved = dict((n, int(a, 16)) for n, a in
                         re.findall(r"(\w+) at (0x[0-9a-f]+)", text.split("Saved registers:")[1]))
        if cfa != int(m.group(1), 16) or saved != gdb_saved:
            errs.append(f"level {level}: swk CFA 0x{cfa:x} saved {saved}; GDB frame at {m.group(1)} saved {gdb_saved}")
        compared += 1
    if compared < 5:
        errs.append(f"only {compared} frames compared")
    if errs:
        _fail(errs, ("swk", swk))


@pytest.mark.swk
@pytest.mark.parametrize("where", ["live", "gdb-core"])
def test_bt_n_is_gdbs(progs, where):
    """``swk-bt N`` for every N up to the qsort stop's depth is GDB's ``bt N`` line for line: the
    last frame shown keeps its entry values (``n=n@entry=2``), which come from its caller's call
    site, so the walk goes one frame past what it shows, as GDB's does."""
    core = progs.core("qsort") if where == "gdb-core" else None
    cmds = [*SETTINGS, *([] if core else STOPS["qsort"]), f"source {T.GDB_INIT}"]
    ns = range(1, 9)
    for n in ns:
        cmds += [*_marked(f"GDB{n}", f"bt {n}"), *_marked(f"SWK{n}", f"swk-bt {n}")]
    out = T.run_gdb(progs.exe(), cmds, core=core, timeout=180)
    errs = []
    for n in ns:
        # GDB says "(More stack frames follow...)" only to a terminal (from_tty)
        g, s = ([ln for ln in _between(out, f"{who}{n}") if ln.startswith("#")] for who in ("GDB", "SWK"))
        errs += [f"bt {n}: {e}" for e in _differences(g, s)]
    if errs:
        _fail(errs, ("bt 8", _between(out, "GDB8")), ("swk-bt 8", _between(out, "SWK8")))


@pytest.mark.swk
def test_nested_entry_value_past_main_is_the_passed_value():
    """GDB 13's bug (docs/usage.md): with `backtrace past-main on`, an entry value computed from
    the caller's entry value through a tail-call frame is evaluated in the wrong frame — leaf's
    ``b@entry=5000`` where the program passed 4000 (its own line on stdout).  swk-bt prints the
    value passed, ``b=b@entry=4000``; with past-main off both agree."""
    exe = T.build(["entry_past_main.c"], "entry_past_main", ("-O2", "-g", "-gdwarf-4"))
    out = T.run_gdb(exe, [*SETTINGS, "break stop_here", "run", f"source {T.GDB_INIT}",
                          "set backtrace past-main off", *_marked("GDB", "bt"), *_marked("SWK", "swk-bt"),
                          "set backtrace past-main on", *_marked("GDBPM", "bt"), *_marked("SWKPM", "swk-bt")],
                    timeout=180)
    record = re.search(r"^leaf a=(\d+) b=(\d+)$", out, re.M)
    assert record, out
    passed = record.group(2)
    leaf = {tag: next((ln for ln in _between(out, tag) if " in leaf (" in ln), "")
            for tag in ("GDB", "SWK", "GDBPM", "SWKPM")}
    errs = _differences(_between(out, "GDB"), _between(out, "SWK"))
    if f"b@entry={passed}" in leaf["GDBPM"] or "b@entry=" not in leaf["GDBPM"]:
        errs.append(f"GDB's bug is not there any more (or moved): {leaf['GDBPM']}")
    if f"b=b@entry={passed}," not in leaf["SWKPM"]:
        errs.append(f"swk-bt past main: {leaf['SWKPM']} (the program passed b={passed})")
    if errs:
        _fail(errs, ("gdb", out.splitlines()))
