"""elfutils' own test cores (issue 26): cores of many architectures, made on real machines,
with the executables of most, and two walks of each that swk did not compute.

scripts/setup.sh fetches Debian's elfutils source package (a private apt sources list under
the build dir, never committed) and unpacks its tests/ directory under
``$BUILD/elfutils-src/elfutils-<version>/tests``.  Here:

* ``cores()``: every bzip2'd ELF core there, with its architecture (from its ELF header),
  its executable (``X.exec`` or ``X`` beside ``X.core``, when it is one) and the files its
  NT_FILE note names that the directory also has (test-core-lib.so, linkmap-cut-lib.so);
  all decompressed once into ``$BUILD/elfutils-cores/``, where every tool runs, so the
  relative paths of an NT_FILE note resolve the same for each.
* ``eu_stack(core)``: ``eu-stack --core=CORE [-e EXEC]`` (elfutils reads foreign cores on
  any host), parsed into frames (pc and function) per thread: the oracle.
* ``gdb_walk(core)``: gdb-multiarch's own walk of every thread (its Python API: pc, function,
  frame type, so inlined frames are told apart), parsed into the same frames.
* ``oracle(core)``: eu-stack's walk without the frames its frame-pointer fallback repeats
  (on AArch64 and ppc64le it reports the caller in the link register and again from the
  frame record, and a bottom frame twice): a frame with its predecessor's pc is dropped
  where gdb's walk of the same thread passes that pc once; and without a last frame of pc 0,
  the mark of the outermost frame (a zero return address), which eu-stack and gdb print as
  a frame and swk does not.

``python tests/elfutils_cores.py`` prints the table of docs/testing.md.
"""

from __future__ import annotations

import bz2
import dataclasses
import functools
import os
import re
import shutil
import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import swk_testlib as T  # noqa: E402

SRC = T.BUILD / "elfutils-src"
OUT = T.BUILD / "elfutils-cores"
GDB = os.environ.get("SWK_GDB_MULTIARCH", "gdb-multiarch")
EU_STACK = "eu-stack"
#: Frames eu-stack prints at most per thread (a wrong walk may repeat a frame for ever).
MAX_FRAMES = 1000

#: Architectures swk walks now, and those issue 26 adds (their tests are strict xfails).
CLAIMED = ("x86_64", "i386", "aarch64")
ISSUE_26 = ("ppc64le", "ppc64", "s390x", "x32", "riscv64")

#: (e_machine, ELF class, data encoding) -> architecture; None: any class or encoding.
_MACHINES = {
    (62, 64, None): "x86_64", (62, 32, None): "x32", (3, 32, None): "i386", (183, 64, None): "aarch64",
    (21, 64, "lsb"): "ppc64le", (21, 64, "msb"): "ppc64", (20, 32, None): "ppc",
    (22, 64, None): "s390x", (22, 32, None): "s390", (243, 64, None): "riscv64",
    (2, None, None): "sparc", (18, None, None): "sparc", (43, None, None): "sparc",
    (4, None, None): "m68k", (40, None, None): "arm",
}


def tests_dir() -> Path | None:
    """elfutils' unpacked tests/ directory (scripts/setup.sh), or None."""
    found = sorted(SRC.glob("elfutils-*/tests/backtrace.x86_64.core.bz2"))
    return found[-1].parent if found else None


@dataclasses.dataclass(frozen=True)
class ElfHeader:
    machine: int
    bits: int
    data: str            # "lsb" | "msb"
    type: int            # e_type: 2 exec, 3 dyn, 4 core

    @property
    def arch(self) -> str:
        for key in ((self.machine, self.bits, self.data), (self.machine, self.bits, None),
                    (self.machine, None, None)):
            if key in _MACHINES:
                return _MACHINES[key]
        return f"machine-{self.machine}"


def _header(head: bytes) -> ElfHeader | None:
    if len(head) < 20 or head[:4] != b"\x7fELF" or head[4] not in (1, 2) or head[5] not in (1, 2):
        return None
    end = "<" if head[5] == 1 else ">"
    e_type, e_machine = struct.unpack(end + "HH", head[16:20])
    return ElfHeader(e_machine, 32 if head[4] == 1 else 64, "lsb" if head[5] == 1 else "msb", e_type)


def _bz2_header(path: Path) -> ElfHeader | None:
    try:
        with bz2.open(path) as fh:
            return _header(fh.read(64))
    except (OSError, EOFError):
        return None


def _decompress(src: Path, name: str) -> Path:
    """``src`` (bzip2) as OUT/name, decompressed once."""
    dest = OUT / name
    if dest.exists() and dest.stat().st_mtime >= src.stat().st_mtime:
        return dest
    OUT.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{name}.{os.getpid()}")
    with bz2.open(src) as fin, open(tmp, "wb") as fout:
        shutil.copyfileobj(fin, fout)
    os.chmod(tmp, 0o755)
    os.replace(tmp, dest)
    return dest


@dataclasses.dataclass(frozen=True)
class ElfutilsCore:
    """One of elfutils' test cores, decompressed, with what belongs to it."""
    name: str                        # the core's file name without .bz2
    arch: str
    core: Path
    exe: Path | None                 # the program that dumped it, where elfutils ships it
    files: tuple[Path, ...] = ()     # other files its NT_FILE note names that elfutils ships

    @property
    def id(self) -> str:
        return self.name.removesuffix(".core")


def _file_note_names(core: Path) -> list[str]:
    from elftools.elf.elffile import ELFFile
    names = []
    try:
        with open(core, "rb") as fh:
            for seg in ELFFile(fh).iter_segments():
                if seg["p_type"] != "PT_NOTE":
                    continue
                for note in seg.iter_notes():
                    if note["n_type"] == "NT_FILE":
                        names += [os.fsdecode(n) for n in note["n_desc"].filename]
    except Exception:      # a core pyelftools cannot read (an odd one is a test of elfutils)
        return []
    return names


def _exe_for(tdir: Path, name: str) -> Path | None:
    stem = name.removesuffix(".core")
    for cand in (f"{stem}.exec.bz2", f"{stem}.bz2"):
        path = tdir / cand
        if cand != f"{name}.bz2" and path.exists():
            h = _bz2_header(path)
            if h is not None and h.type in (2, 3):
                return path
    return None


@functools.lru_cache(maxsize=1)
def cores() -> tuple[ElfutilsCore, ...]:
    """Every ELF core of elfutils' tests/, decompressed under OUT (empty without the source)."""
    tdir = tests_dir()
    if tdir is None:
        return ()
    out = []
    for path in sorted(tdir.glob("*.bz2")):
        h = _bz2_header(path)
        if h is None or h.type != 4:
            continue
        name = path.name.removesuffix(".bz2")
        core = _decompress(path, name)
        exe_src = _exe_for(tdir, name)
        exe = _decompress(exe_src, exe_src.name.removesuffix(".bz2")) if exe_src else None
        files = []
        # the files its NT_FILE note names, and a library named after it (testfile69.so: that
        # core has no NT_FILE note)
        stem = name.removesuffix(".core")
        for fn in sorted({os.path.basename(n) for n in _file_note_names(core)} | {f"{stem}.so"}):
            src = tdir / f"{fn}.bz2"
            if fn and src.exists() and (exe is None or fn != exe.name):
                files.append(_decompress(src, fn))
        out.append(ElfutilsCore(name, h.arch, core, exe, tuple(files)))
    return tuple(out)


def by_arch() -> dict[str, list[ElfutilsCore]]:
    res: dict[str, list[ElfutilsCore]] = {}
    for c in cores():
        res.setdefault(c.arch, []).append(c)
    return res


# --------------------------------------------------------------------------
# walks
# --------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Frame:
    pc: int
    function: str | None


@dataclasses.dataclass
class Walk:
    """One tool's walk of a core: {tid: frames, innermost first}, the tool's own errors, and
    its output."""
    threads: dict[int, list[Frame]]
    errors: list[str]
    output: str


_EU_THREAD = re.compile(r"^TID (\d+):\s*$")
_EU_FRAME = re.compile(r"^#(\d+)\s+0x([0-9a-f]+)(?:\s+(\S.*?))?\s*$")


def parse_eu_stack(output: str) -> Walk:
    """eu-stack's ``TID n:`` / ``#k  0xPC function`` lines (without -m or -s: the function is
    the rest of the line)."""
    threads: dict[int, list[Frame]] = {}
    errors, cur = [], None
    for line in output.splitlines():
        m = _EU_THREAD.match(line)
        if m:
            cur = threads.setdefault(int(m.group(1)), [])
            continue
        m = _EU_FRAME.match(line)
        if m and cur is not None:
            cur.append(Frame(int(m.group(2), 16), m.group(3)))
        elif line.startswith("eu-stack:"):
            errors.append(line)
    return Walk(threads, errors, output)


@functools.lru_cache(maxsize=None)
def eu_stack(core: ElfutilsCore) -> Walk:
    """eu-stack's walk of ``core`` (run in OUT, beside the files the core names)."""
    argv = [EU_STACK, f"--core={core.core.name}", "-n", str(MAX_FRAMES)]
    if core.exe is not None:
        argv += ["-e", core.exe.name]
    return parse_eu_stack(T.run_cmd(argv, timeout=120, cwd=OUT).stdout)


@functools.lru_cache(maxsize=None)
def gdb_walk(core: ElfutilsCore) -> Walk:
    """gdb-multiarch's own walk of every thread of ``core`` (past main and past the entry
    point, as far as gdb goes), its inlined and tail-call frames left out."""
    argv = [GDB, "-nx", "-batch", "-q", "-iex", "set debuginfod enabled off", "-iex", "set pagination off",
            "-iex", "set confirm off", "-iex", "set width 0", "-iex", "set height 0",
            "-iex", "set backtrace past-main on", "-iex", "set backtrace past-entry on",
            "-iex", f"set backtrace limit {MAX_FRAMES}"]
    if core.exe is not None:
        argv += ["-ex", f"file {core.exe.name}"]
    argv += ["-ex", f"core-file {core.core.name}", *[a for c in T.native_commands(True, want_sal=False)
                                                      for a in ("-ex", c)]]
    out = T.run_cmd(argv, timeout=180, cwd=OUT).stdout
    try:
        native = T.parse_native(out)
    except T.OutputError as e:
        return Walk({}, [str(e).splitlines()[0]], out)
    threads = {tf.tid: [Frame(f.pc, f.function) for f in T.real_frames(tf) if f.pc is not None]
               for tf in native.values()}
    errors = [f"thread {tf.tid}: {tf.error or tf.stop_reason}" for tf in native.values()]
    return Walk(threads, errors, out)


@dataclasses.dataclass
class Oracle:
    """eu-stack's walk with its repeated frames and its zero end mark dropped (``dropped``: tid
    -> eu-stack's levels)."""
    threads: dict[int, list[Frame]]
    dropped: dict[int, list[int]]


def _gdb_passes_once(gdb: list[Frame], prefix: list[Frame], pc: int) -> bool:
    """gdb's walk has ``prefix`` and then goes on without repeating ``pc`` (its last pc)."""
    n = len(prefix)
    if len(gdb) < n or [f.pc for f in gdb[:n]] != [f.pc for f in prefix]:
        return False
    return len(gdb) == n or gdb[n].pc != pc


@functools.lru_cache(maxsize=None)
def oracle(core: ElfutilsCore) -> Oracle:
    eu = eu_stack(core)
    if not eu.threads:      # a core elfutils cannot attach to (testfile-phdrs.elf hangs gdb)
        return Oracle({}, {})
    gdb = gdb_walk(core)
    threads, dropped = {}, {}
    for tid, frames in eu.threads.items():
        kept: list[Frame] = []
        for level, f in enumerate(frames):
            if kept and f.pc == kept[-1].pc and _gdb_passes_once(gdb.threads.get(tid, []), kept, f.pc):
                dropped.setdefault(tid, []).append(level)
                continue
            kept.append(f)
        if len(kept) > 1 and kept[-1].pc == 0:
            kept.pop()
            dropped.setdefault(tid, []).append(len(frames) - 1)
        threads[tid] = kept
    return Oracle(threads, dropped)


def gdb_agrees(core: ElfutilsCore) -> bool:
    """Whether gdb-multiarch walks ``core`` as far as eu-stack does, with the same pcs (every
    thread of the oracle, none missing)."""
    orc = oracle(core)
    if not orc.threads:
        return False
    gdb = gdb_walk(core)
    if set(gdb.threads) != set(orc.threads):
        return False
    return all([f.pc for f in gdb.threads[tid][:len(fr)]] == [f.pc for f in fr] for tid, fr in orc.threads.items())


# --------------------------------------------------------------------------
# the core's own mappings (where a pc past the oracle's frames may be)
# --------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def executable_ranges(core: ElfutilsCore) -> tuple[tuple[int, int], ...]:
    """[start, end) of the core's PT_LOAD segments with PF_X (every mapping of the process is
    one, written or not)."""
    from elftools.elf.elffile import ELFFile
    with open(core.core, "rb") as fh:
        return tuple((s["p_vaddr"], s["p_vaddr"] + s["p_memsz"]) for s in ELFFile(fh).iter_segments()
                     if s["p_type"] == "PT_LOAD" and s["p_flags"] & 1)


def in_code(core: ElfutilsCore, pc: int) -> bool:
    return any(lo <= pc < hi for lo, hi in executable_ranges(core))


# --------------------------------------------------------------------------
# the inventory (docs/testing.md's table)
# --------------------------------------------------------------------------

def _frames_text(walk: Walk) -> str:
    if not walk.threads:
        return "nothing" + (f" ({walk.errors[0]})" if walk.errors else "")
    return ", ".join(str(len(fr)) for _tid, fr in sorted(walk.threads.items()))


def table() -> str:
    """A Markdown table of every core: architecture, executable, eu-stack's frames per thread
    (and those dropped from the oracle), and whether gdb-multiarch walks it as far."""
    order = {a: i for i, a in enumerate((*CLAIMED, *ISSUE_26))}
    lines = ["| architecture | core | executable | eu-stack's frames per thread | "
             "dropped from its walk (repeated, or pc 0) | gdb-multiarch walks it as far |", "|---|---|---|---|---|---|"]
    for c in sorted(cores(), key=lambda c: (order.get(c.arch, len(order)), c.arch, c.name)):
        eu, orc = eu_stack(c), oracle(c)
        dropped = "; ".join(f"tid {tid}: #{', #'.join(map(str, lv))}" for tid, lv in sorted(orc.dropped.items()))
        lines.append(f"| {c.arch} | {c.name} | {c.exe.name if c.exe else '—'} | {_frames_text(eu)} | "
                     f"{dropped or '—'} | {'yes' if gdb_agrees(c) else 'no'} |")
    return "\n".join(lines)


if __name__ == "__main__":
    if not cores():
        sys.exit(f"no elfutils source under {SRC}: run scripts/setup.sh")
    print(table())
