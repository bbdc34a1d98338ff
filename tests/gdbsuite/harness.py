"""GDB 13.1's own test programs as the oracle (issue 24): which programs, how to build them and
where they stop, read from their .exp files.

Only what a .exp states is taken from it: its source files (standard_testfile), compile
flags (additional_flags, c++, nopie) and stop points (runto / gdb_breakpoint / break, with
gdb_get_line_number markers resolved in the sources).  At each stop GDB's own ``bt`` is the
oracle for ``swk-bt`` (tests/test_gdb_suite.py).
"""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path

#: the testsuite directories taken (of gdb.arch its x86 programs; of FRAME_CHECKED_ONLY those
#: whose .exp checks a backtrace or frame line)
DIRS = ("gdb.arch", "gdb.opt", "gdb.dwarf2", "gdb.base", "gdb.python")


@dataclasses.dataclass
class Program:
    exp: Path
    sources: list[Path]
    cxx: bool
    flags: list[str]
    stops: list[str]          # GDB breakpoint specs, in the .exp's order
    m32: bool = False         # i386 code (an .S gated by is_x86_like_target): built with -m32
    nodebug: tuple = ()       # sources the .exp builds without debug info
    assembled: bool = False   # DWARF made by the .exp's Tcl assembler: built by assembled.py

    @property
    def id(self) -> str:
        return f"{self.exp.parent.name}/{self.exp.stem}"


_STD = re.compile(r"^[ \t]*standard_testfile[ \t]*(.*)$", re.M)
_BP = re.compile(r"\b(?:gdb_breakpoint|runto|gdb_test\s+\"break)\s+(\[gdb_get_line_number\s+\"[^\"]+\"[^\]]*\]|\"?[^\s\"\]]+)")
_INLINE_LINE = re.compile(r"\[gdb_get_line_number\s+\"([^\"]+)\"(?:\s+\$?\{?(\w+)\}?)?\]")
_LINE = re.compile(r"set\s+(\w+)\s+\[gdb_get_line_number\s+\"([^\"]+)\"(?:\s+\$?\{?(\w+)\}?)?\]")


_SET_SRC = re.compile(r"^\s*set\s+(srcfile\w*)\s+\"?\$\{?testfile\}?([-\w.]*)\"?\s*$", re.M)


def _sources(exp: Path, text: str) -> list[Path] | None:
    m = _STD.search(text)
    if m is None:
        # older .exp files: set srcfile ${testfile}.c, set srcfileasm ${testfile}-asm.S ...,
        # then gdb_compile "${srcdir}/${subdir}/${srcfile} ..." (in that order)
        named = {var: exp.parent / (exp.stem + tail) for var, tail in _SET_SRC.findall(text)}
        call = re.search(r"gdb_compile\s+\"([^\"]+)\"", text) or \
            re.search(r"(?:prepare_for_testing|build_executable)\s+\"[^\"]*\"\s+(\S+\s+\S+)", text)
        if not named or call is None:
            return None
        used = [named[v] for v in re.findall(r"\$\{?(srcfile\w*)\}?", call.group(1)) if v in named]
        return used or None
    args = m.group(1).split()
    stem = exp.stem
    first = args[0] if args else ".c"
    out = [exp.parent / (stem + first if first.startswith(".") else first)]
    for a in args[1:]:
        out.append(exp.parent / (stem + a if a.startswith(".") else a))
    return out


def parse(exp: Path) -> Program | None:
    """The program of a .exp, or None when its build or stops are not plain enough to take."""
    text = exp.read_text(errors="replace")
    if "dwarf_assemble" in text or "Dwarf::assemble" in text or "gdb_compile_shlib" in text:
        return None
    if re.search(r"gdb_compile\b[^\n]*\bobject\b", text) and "prepare_for_testing" not in text \
            and "build_executable" not in text:
        return None                         # an object file for GDB to read, never run
    srcs = _sources(exp, text)
    if not srcs or not all(s.exists() for s in srcs):
        return None
    srcs = [s for s in srcs if s.suffix in (".c", ".cc", ".S", ".s", ".cpp")]
    if not srcs:
        return None
    # what the build call compiles: $srcfile alone unless it names the others
    call = re.search(r"(?:prepare_for_testing|build_executable|gdb_compile)\b([^\]]{0,200})", text, re.S)
    named = call.group(1) if call else ""
    built = [srcs[0]] + [s for k, s in enumerate(srcs[1:], 2)
                         if re.search(rf"\$\{{?srcfile{k}\b", named)]
    if _STD.search(text) is None:
        built = list(srcs)                  # _sources took what the gdb_compile call names
    listed = re.search(r"(?:prepare_for_testing|build_executable)[\s\\]+\"[^\"]*\"[\s\\]+\S+[\s\\]+\{([^}]*)\}", text)
    if listed:                              # {skip.c skip1.c}: the sources by name
        files = [exp.parent / f for f in listed.group(1).split()]
        if files and all(f.exists() for f in files):
            built = files
    nodebug = []
    full = re.search(r"prepare_for_testing_full\b(.{0,300})", text, re.S)
    if full:                                # [list $testfile LANG FILE FLAGS FILE FLAGS ...]
        for m in re.finditer(r"\$\{?testfile\}?([-\w.]+\.(?:cc|cpp|c|S))\b", full.group(1)):
            extra = exp.parent / (exp.stem + m.group(1))
            if extra.exists() and extra not in built:
                built.append(extra)
        for m in re.finditer(r"\$\{?srcfile(\d?)\}?\s+(\{\s*\}|\{[^}]*nodebug[^}]*\})", full.group(1)):
            k = int(m.group(1) or 1)
            if k <= len(srcs):
                if srcs[k - 1] not in built:
                    built.append(srcs[k - 1])
                nodebug.append(srcs[k - 1])
        for m in re.finditer(r"\$\{?srcfile(\d)\}?\s+(?:debug|\{[^}]*\})", full.group(1)):
            k = int(m.group(1))
            if k <= len(srcs) and srcs[k - 1] not in built:
                built.append(srcs[k - 1])
    lines_from = srcs
    srcs = built
    cxx = any(s.suffix in (".cc", ".cpp") for s in srcs) or "c++" in text.split("prepare_for_testing", 1)[-1][:300]
    flags = [] if re.search(r"\{[^}\n]*\bnodebug\b", text) else ["-g"]
    bare = re.search(r"gdb_compile\s+\"[^\"]+\"\s+\"?\$\{?binfile\}?\"?\s+executable\s+([^\n]*)", text)
    if bare and "prepare_for_testing" not in text and "build_executable" not in text \
            and not re.search(r"\bdebug\b", bare.group(1)):
        flags = []                          # gdb_compile builds without debug info unless asked
    for f in re.findall(r"additional_flags=([^\s\}\]\"]+)", text):
        if "integrated-as" in f:            # clang's only (under test_compiler_info clang*)
            continue
        if f.startswith(("-O", "-f", "-static", "-nostartfiles", "-nostdlib")) or f.startswith("-m") and f != "-m32":
            flags.append(f)
    if re.search(r"\bnopie\b", text):
        flags.append("-no-pie")
    if "-m32" in text:
        return None
    asm = any(s.suffix in (".S", ".s") for s in srcs)
    if asm and "-no-pie" not in flags:
        flags.append("-no-pie")
    # gdb.dwarf2's pre-built assembly for "x86-like" targets is i386 code (is_x86_like_target:
    # i386, or x86-64 with -m32); x86-64's is gated by istarget x86_64 / is_x86_64_m64_target
    m32 = asm and "is_x86_like_target" in text
    lines = {}
    for var, marker, where in _LINE.findall(text):
        files = lines_from if not where else [s for s in lines_from if where in ("srcfile", "srcfile2") and
                                              s == lines_from[min(len(lines_from) - 1,
                                                                  0 if where == "srcfile" else 1)]] or lines_from
        for f in files:
            for i, ln in enumerate(f.read_text(errors="replace").splitlines(), 1):
                if marker in ln:
                    lines[var] = (f.name, i)
                    break
            if var in lines:
                break
    stops = ["main"] if re.search(r"\brunto_main\b", text) else []
    for m in _BP.finditer(text):
        spec = m.group(1).lstrip('"')
        if spec.startswith(("-", "*(")):    # an option (-qualified, -pstap ...), an expression
            continue
        inline = _INLINE_LINE.fullmatch(spec)
        if inline:
            where = lines_from[1] if inline.group(2) == "srcfile2" and len(lines_from) > 1 else lines_from[0]
            for i, ln in enumerate(where.read_text(errors="replace").splitlines(), 1):
                if inline.group(1) in ln:
                    spec = f"{where.name}:{i}"
                    break
            else:
                continue
        spec = re.sub(r"\$\{?srcfile\d?\}?:", "", spec)
        var = re.fullmatch(r"\$\{?(\w+)\}?", spec)
        if var:
            hit = lines.get(var.group(1))
            if hit is None:
                continue
            spec = f"{hit[0]}:{hit[1]}"
        elif "$" in spec or "[" in spec:
            continue
        if spec not in stops:
            stops.append(spec)
    if not stops and re.search(r"gdb_run_cmd", text) and re.search(r"Program received signal", text):
        pass                                # it stops by a signal of its own (int3, abort): run
    elif not stops:
        return None
    return Program(exp, srcs, cxx, flags, stops, m32, tuple(nodebug))


#: directories of which only the programs whose .exp checks a backtrace or a frame line are
#: taken (gdb.base and gdb.python test much else: breakpoints, printing, Python's API)
FRAME_CHECKED_ONLY = ("gdb.base", "gdb.python")
_FRAME_CHECK = re.compile(r'gdb_test\w*\s+"(bt|backtrace|where|up|down|frame|info frame|finish)\b'
                          r'|\bgdb_test_sequence\s+"(bt|backtrace)|\[list\s+"(bt|backtrace)')


def programs(root: Path, dirs=DIRS) -> list[Program]:
    out = []
    for d in dirs:
        for exp in sorted((root / d).glob("*.exp")):
            name = exp.stem
            if d == "gdb.arch" and not name.startswith(("amd64", "x86", "i386")):
                continue
            if d in FRAME_CHECKED_ONLY and not _FRAME_CHECK.search(exp.read_text(errors="replace")):
                continue
            p = parse(exp)
            if p is not None:
                out.append(p)
    return out


def build(prog: Program, out_dir: Path) -> tuple[Path | None, str]:
    """(the executable, "") or (None, why it does not build here)."""
    import subprocess
    out_dir.mkdir(parents=True, exist_ok=True)
    exe = out_dir / prog.exp.stem
    if exe.exists():
        return exe, ""
    cc = "g++" if prog.cxx else "gcc"
    inputs = list(map(str, prog.sources))
    for src in prog.nodebug:                # compiled on its own, without -g
        obj = out_dir / f"{prog.exp.stem}-{src.stem}.nodebug.o"
        flags = [f for f in prog.flags if not f.startswith("-g")]
        p = subprocess.run([cc, *flags, "-c", str(src), "-o", str(obj)], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, cwd=prog.exp.parent)
        if p.returncode != 0:
            return None, f"{cc} fails on {src.name}: {p.stdout.strip()[:200]}"
        inputs[inputs.index(str(src))] = str(obj)
    argv = [cc, *prog.flags, *inputs, "-o", str(exe), "-lm"]
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=prog.exp.parent)
    if p.returncode != 0:
        first = next((ln for ln in p.stdout.splitlines() if "error" in ln), p.stdout.strip()[:200])
        return None, f"{cc} fails: {first.strip()[:200]}"
    return exe, ""


def session_commands(prog: Program, gdb_init: Path, max_stops: int = 12, cores: Path | None = None,
                     core_stops: int = 3) -> list[str]:
    """GDB's commands for one program: its breakpoints, then at each stop GDB's own bt (swk's
    unwinder off) and swk-bt, between markers, up to ``max_stops`` stops; with ``cores``, the
    first ``core_stops`` stops are also written there as cores (``stop-N.core``), with the
    stopped thread's id printed (``SWKSUITE-TID-N tid``) for core_commands."""
    cmds = ["set width 0", "set height 0", "set confirm off", "set pagination off",
            f"source {gdb_init}", "set swk unwinder off"]
    cmds += [f"break {s}" for s in prog.stops]
    cmds += ["run"]
    for i in range(max_stops):
        cmds += [f"echo SWKSUITE-GDB-{i}\\n", "bt", f"echo SWKSUITE-SWK-{i}\\n", "swk-bt",
                 f"echo SWKSUITE-END-{i}\\n"]
        if cores is not None and i < core_stops:
            cmds += [f"python print('SWKSUITE-TID-{i}', gdb.selected_thread().ptid[1])",
                     f"gcore {cores}/stop-{i}.core"]
        cmds += ["continue"]
    return cmds


def core_commands(tid: int) -> list[str]:
    """GDB's commands for its bt on a core of the suite (the oracle for ``swk bt --core``, which
    walks past main: so does GDB here), in the thread that stopped."""
    return ["set width 0", "set height 0", "set confirm off", "set pagination off",
            "set backtrace past-main on",
            f"python [t.switch() for t in gdb.selected_inferior().threads() if t.ptid[1] == {tid}]",
            "echo SWKSUITE-CORE\\n", "bt", "echo SWKSUITE-CORE-END\\n"]


def frame_lines(lines: list[str]) -> list[str]:
    """The lines of a backtrace: frames and its closing remark."""
    return [ln for ln in lines if ln.startswith(("#", "Backtrace stopped", "(More stack frames"))]


def core_tids(output: str) -> dict[int, int]:
    """{stop index: the stopped thread's id} from a session's SWKSUITE-TID lines."""
    return {int(m.group(1)): int(m.group(2)) for m in re.finditer(r"^SWKSUITE-TID-(\d+) (\d+)$", output, re.M)}


def stops_of(output: str) -> list[tuple[list[str], list[str]]]:
    """[(GDB's bt lines, swk-bt's lines)] per stop of a session's output."""
    lines = output.splitlines()
    out = []
    i = 0
    while True:
        try:
            a = lines.index(f"SWKSUITE-GDB-{i}")
            b = lines.index(f"SWKSUITE-SWK-{i}", a)
            c = lines.index(f"SWKSUITE-END-{i}", b)
        except ValueError:
            return out
        g = frame_lines(lines[a + 1:b])
        s = frame_lines(lines[b + 1:c])
        if not g or g[0].startswith("No stack"):
            return out
        out.append((g, s))
        i += 1
