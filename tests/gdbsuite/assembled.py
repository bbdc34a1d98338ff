"""GDB's gdb.dwarf2 programs whose DWARF their .exp makes at test time with GDB's Tcl DWARF
assembler (``Dwarf::assemble``, testsuite/lib/dwarf.exp), as oracles for swk-bt.

dwarf_assemble.tcl (beside this file) sources the .exp under tclsh with the few DejaGnu and
lib/gdb.exp procs it calls: the assembler writes its .S, gcc builds the program as the .exp's
build call says, and from that build on the GDB commands the .exp sends are written down (the
recipe).  Here the recipe is replayed, one ``gdb -batch`` per GDB session of the .exp, with a
checkpoint (GDB's own ``bt``, swk's unwinder off, then ``swk-bt``) after every command that
moves the program (run, continue, step, finish, stepi ...) and before a frame command of the
.exp (frame, bt, up, finish ...) that follows a change of GDB's settings (set filename-display
...).  Cores are written at the first checkpoints whose frame the .exp looks at (one per stop).

Every variant a .exp builds (dw2-ranges-func's lo-cold and hi-cold) is run; their stops are
numbered in the order the .exp reaches them.
"""
from __future__ import annotations

import dataclasses
import re
import subprocess
import tarfile
import threading
from pathlib import Path

import harness as H

TCL = Path(__file__).with_name("dwarf_assemble.tcl")

#: commands that move the program (GDB's abbreviations included)
MOTION = {"run", "r", "start", "starti", "continue", "c", "fg", "step", "s", "next", "n", "stepi", "si",
          "nexti", "ni", "finish", "fin", "until", "u", "advance", "jump", "return", "signal", "kill"}
#: commands that show a frame: the .exp checks a frame line there
FRAME = {"bt", "backtrace", "where", "frame", "f", "up", "down", "finish", "fin"}
#: commands that may change how a frame line is shown (or which symbols there are)
DISPLAY = {"set", "maint", "maintenance", "cd", "directory", "dir", "file", "symbol-file",
           "add-symbol-file", "sharedlibrary"}


def _word(cmd: str) -> str:
    return cmd.split(None, 1)[0].lower() if cmd.strip() else ""


def _is_frame(cmd: str) -> bool:
    return _word(cmd) in FRAME or cmd.strip().startswith("info frame")


def programs(root: Path) -> list[H.Program]:
    """The gdb.dwarf2 programs made by the Tcl DWARF assembler whose .exp checks a backtrace or
    frame line (the check gdb.base's programs are taken by)."""
    out = []
    for exp in sorted((root / "gdb.dwarf2").glob("*.exp")):
        text = exp.read_text(errors="replace")
        if "Dwarf::assemble" in text and H._FRAME_CHECK.search(text):
            out.append(H.Program(exp, [], False, [], _stops(text), assembled=True))
    return out


def _stops(text: str) -> list[str]:
    """The breakpoints the .exp names (for the table; the recipe is what runs)."""
    stops = ["main"] if re.search(r"\brunto_main\b", text) else []
    for m in re.finditer(r"\b(?:gdb_breakpoint|runto|gdb_test\s+\"break)\s+\"?([\w${}\[\]]+)", text):
        spec = m.group(1)
        if spec.startswith("$") or spec.startswith("[") or spec in stops:
            continue
        stops.append(spec)
    if "gdb_starti_cmd" in text:
        stops.insert(0, "starti")
    return stops


# --- the recipe ----------------------------------------------------------------------------


@dataclasses.dataclass
class Session:
    exe: Path
    commands: list[str]


@dataclasses.dataclass
class Variant:
    exe: Path
    sessions: list[Session]


@dataclasses.dataclass
class Recipe:
    variants: list[Variant]
    notes: list[str]


def parse_recipe(text: str) -> Recipe | str:
    """The recipe dwarf_assemble.tcl wrote, or why it did not build (its error)."""
    variants, notes, done = [], [], False
    for line in text.splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "variant":
            variants.append(Variant(Path(rest), []))
        elif kind == "session" and variants:
            variants[-1].sessions.append(Session(Path(rest) if rest else variants[-1].exe, []))
        elif kind == "cmd" and variants:
            if not variants[-1].sessions:
                variants[-1].sessions.append(Session(variants[-1].exe, []))
            sess = variants[-1].sessions[-1]
            if rest.startswith("file ") and not sess.commands:
                sess.exe = Path(rest[5:].strip())     # clean_restart, then gdb_load: a session on it
            else:
                sess.commands.append(rest)
        elif kind == "note":
            notes.append(rest)
        elif kind == "error":
            return f"the .exp fails under dwarf_assemble.tcl: {rest[:300]}"
        elif kind == "done":
            done = True
    if not done:
        return "dwarf_assemble.tcl stopped before the end of the .exp"
    if not variants:
        return "the .exp built no program from the assembler's output (" + "; ".join(notes)[:300] + ")"
    return Recipe(variants, notes)


_INCLUDE_LOCK = threading.Lock()


def _include(root: Path) -> str:
    """dwarf.exp reads the DWARF constants from GDB's include/dwarf2.h and dwarf2.def
    ($srcdir/../../include): unpacked from the source package's tarball once.  "" or why not."""
    inc = root.parent.parent / "include"
    members = [f"gdb-13.1/include/{n}" for n in ("dwarf2.h", "dwarf2.def")]
    with _INCLUDE_LOCK:
        if all((inc / Path(m).name).exists() for m in members):
            return ""
        tarball = root.parent.parent.parent / "gdb_13.1.orig.tar.xz"
        if not tarball.exists():
            return f"no {tarball} (scripts/setup.sh fetches it) for include/dwarf2.h"
        inc.mkdir(parents=True, exist_ok=True)
        with tarfile.open(tarball) as tf:
            for m in members:
                dest = inc / Path(m).name
                if dest.exists():
                    continue
                tmp = dest.with_suffix(dest.suffix + ".tmp")
                tmp.write_bytes(tf.extractfile(tf.getmember(m)).read())
                tmp.rename(dest)
    return ""


def build(prog: H.Program, out_dir: Path, gdb: str) -> tuple[Recipe | None, str]:
    """(the recipe, "") or (None, why not): dwarf_assemble.tcl run once; its recipe and builds
    are kept in out_dir until the .exp or the shim changes."""
    root = prog.exp.parent.parent
    recipe = out_dir / f"{prog.exp.stem}.recipe"
    stale = not recipe.exists() or recipe.stat().st_mtime < max(TCL.stat().st_mtime, prog.exp.stat().st_mtime) \
        or not re.search(r"^done", recipe.read_text(errors="replace"), re.M)   # a failed run: tried again
    if stale:
        why = _include(root)
        if why:
            return None, why
        out_dir.mkdir(parents=True, exist_ok=True)
        p = subprocess.run(["tclsh", str(TCL), str(root), prog.exp.parent.name, prog.exp.stem,
                            str(out_dir / prog.exp.stem), gdb, str(recipe)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
        if not recipe.exists():
            return None, f"dwarf_assemble.tcl wrote no recipe: {p.stdout[-500:]}"
    got = parse_recipe(recipe.read_text(errors="replace"))
    if isinstance(got, str):
        return None, got
    return got, ""


# --- the replay --------------------------------------------------------------------------------


@dataclasses.dataclass
class Check:
    """A checkpoint: GDB's bt and swk-bt, at the stop the motion ``motion`` reached."""
    index: int
    motion: int
    checked: bool = False           # the .exp shows a frame here (before the next checkpoint)
    core: bool = False


def plan(recipe: Recipe, max_cores: int = 3) -> list[tuple[Session, list]]:
    """Per session: its commands with Check items among them, numbered across the recipe;
    cores at the first ``max_cores`` checked stops (one per motion)."""
    out, index, motion = [], 0, 0
    for variant in recipe.variants:
        for sess in variant.sessions:
            items, pending = [], False
            for cmd in sess.commands:
                if _is_frame(cmd) and pending:
                    items.append(Check(index, motion))
                    index += 1
                    pending = False
                items.append(cmd)
                if _word(cmd) in MOTION:
                    motion += 1
                    items.append(Check(index, motion))
                    index += 1
                    pending = False
                elif _word(cmd) in DISPLAY:
                    pending = True
            last = None
            for it in items:                # checked: a frame command follows before the next Check
                if isinstance(it, Check):
                    last = it
                elif last is not None and _is_frame(it):
                    last.checked = True
            out.append((sess, items))
    cored = set()
    for _sess, items in out:
        for it in items:
            if isinstance(it, Check) and it.checked and it.motion not in cored and len(cored) < max_cores:
                it.core = True
                cored.add(it.motion)
    return out


def session_commands(items: list, gdb_init: Path, cores: Path | None) -> list[str]:
    """GDB's commands for one session: swk loaded (its unwinder off: GDB's bt is GDB's own),
    the .exp's commands, and at each checkpoint bt and swk-bt between markers (and a core)."""
    cmds = ["set width 0", "set height 0", "set confirm off", "set pagination off",
            f"source {gdb_init}", "set swk unwinder off"]
    for it in items:
        if not isinstance(it, Check):
            cmds.append(it)
            continue
        i = it.index
        cmds += [f"echo SWKSUITE-GDB-{i}\\n", "bt", f"echo SWKSUITE-SWK-{i}\\n", "swk-bt",
                 f"echo SWKSUITE-END-{i}\\n"]
        if it.core and cores is not None:
            cmds += [f"python print('SWKSUITE-TID-{i}', gdb.selected_thread().ptid[1] if gdb.selected_thread() else 0)",
                     f"gcore {cores}/stop-{i}.core"]
    return cmds


def stops_of(output: str, items: list) -> list[tuple[Check, list[str], list[str]]]:
    """[(checkpoint, GDB's bt lines, swk-bt's lines)] of a session's output, the checkpoints
    where there was a program to walk (GDB's bt not "No stack.")."""
    lines = output.splitlines()
    out, at = [], 0
    for it in items:
        if not isinstance(it, Check):
            continue
        i = it.index
        try:
            a = lines.index(f"SWKSUITE-GDB-{i}", at)
            b = lines.index(f"SWKSUITE-SWK-{i}", a)
            c = lines.index(f"SWKSUITE-END-{i}", b)
        except ValueError:
            break                       # the session ended there (GDB gone)
        at = c
        g = H.frame_lines(lines[a + 1:b])
        if g:
            out.append((it, g, H.frame_lines(lines[b + 1:c])))
    return out


def describe(recipe: Recipe) -> str:
    """The stops for docs/testing.md's table: breakpoints and other motions, in order, once each."""
    seen = []
    names = [v.exe.name for v in recipe.variants]
    stem = names[0]
    while stem and not all(n.startswith(stem) for n in names):
        stem = stem[:-1]
    for variant in recipe.variants:
        for sess in variant.sessions:
            for cmd in sess.commands:
                w = _word(cmd)
                if w in ("break", "tbreak", "b"):
                    what = cmd.split()[-1]
                    what = f"line {what}" if what.isdigit() else what
                elif w in MOTION - {"run", "r", "continue", "c", "kill"}:
                    what = w
                else:
                    continue
                if what not in seen:
                    seen.append(what)
    text = ", ".join(seen[:4]) + (" …" if len(seen) > 4 else "")
    if len(names) > 1:                  # the variants by what tells their programs apart
        text = " and ".join(n[len(stem):].strip("-") for n in names) + " builds: " + text
    return text
