"""Test harness for swk: builds the C/C++ corpus, drives real gdb, parses output.

Importable by any test file (``tests/`` is put on sys.path by conftest.py)::

    from swk_testlib import build, run_gdb, native_frames, swk_frames, ...

Everything here shells out with a timeout; nothing needs the swk code itself
except ``swk_frames`` (sources the repository's gdb_init.py inside gdb) and
``swk_core_frames`` (runs ``python -m swk_plugin``).

JSON contract of swk (one line per thread)::

    {"thread": <gdb thread num or null>, "tid": <OS tid>, "stop_reason": "...",
     "frames": [{"level", "pc", "sp", "fp", "function", "offset", "library",
                 "file", "line", "stepper", "kind"}, ...]}

``pc`` is the current pc for frame 0 and the return address for callers,
``function`` is null when unknown, ``kind`` is "normal" or "signal".
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable, Iterable, Sequence

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"
CORPUS = TESTS / "corpus"
BUILD = Path(os.environ.get("SWK_TEST_BUILD", TESTS / "_build"))
#: swk's on-disk cache by build-id (elf/diskcache.py), for every swk the tests
#: run (the CLI, GDB's, LLDB's): under the build directory, never the user's own.
os.environ.setdefault("SWK_CACHE_DIR", str(BUILD / "swk-cache"))
GDB = os.environ.get("SWK_GDB", "gdb")
GDB_INIT = REPO / "gdb_init.py"
_venv_py = REPO / ".venv" / "bin" / "python"
PYTHON = str(_venv_py) if _venv_py.exists() else sys.executable

#: Bump to invalidate every cached build / core.
CACHE_VERSION = "1"

#: Set SWK_TEST_NO_SYSDEBUG=1 to hide /usr/lib/debug from gdb (libc6-dbg):
#: libc frames are then named from .dynsym only, as on a machine without it.
NO_SYSDEBUG = os.environ.get("SWK_TEST_NO_SYSDEBUG", "") not in ("", "0")

SIGTRAMP = "<signal handler called>"

#: gdb frame types that are not real stack frames (skipped in comparisons).
VIRTUAL_TYPES = ("inline", "tailcall")

# gdb frame types -> short names
_FRAME_TYPES = {
    "NORMAL_FRAME": "normal",
    "DUMMY_FRAME": "dummy",
    "INLINE_FRAME": "inline",
    "TAILCALL_FRAME": "tailcall",
    "SIGTRAMP_FRAME": "sigtramp",
    "ARCH_FRAME": "arch",
    "SENTINEL_FRAME": "sentinel",
}


class HarnessError(RuntimeError):
    """A build, gdb or swk run did not produce what the harness needs."""


class BuildError(HarnessError):
    pass


class GdbTimeout(HarnessError):
    pass


class OutputError(HarnessError):
    """The tool ran but its output had no parsable result."""


# --------------------------------------------------------------------------
# building the corpus
# --------------------------------------------------------------------------

def _hash_update_file(h, path: Path) -> None:
    h.update(str(path.name).encode() + b"\0")
    h.update(path.read_bytes())
    h.update(b"\0")


def _tool_version(tool: str) -> str:
    try:
        return subprocess.run([tool, "--version"], capture_output=True, text=True,
                              timeout=30).stdout.splitlines()[0]
    except Exception:  # noqa: BLE001 - only used as a cache key
        return tool


_VERSIONS: dict[str, str] = {}


def _version(tool: str) -> str:
    if tool not in _VERSIONS:
        _VERSIONS[tool] = _tool_version(tool)
    return _VERSIONS[tool]


PostStep = Callable[[Path], None] | Sequence[Sequence[str]] | None


def _post_key(post: PostStep) -> str:
    if post is None:
        return ""
    if callable(post):
        try:
            return inspect.getsource(post)
        except (OSError, TypeError):
            return getattr(post, "__qualname__", repr(post))
    return json.dumps([list(map(str, c)) for c in post])


def _run_post(post: PostStep, out: Path) -> None:
    if post is None:
        return
    if callable(post):
        post(out)
        return
    for cmd in post:
        argv = [str(a).format(out=str(out), dir=str(out.parent), name=out.name) for a in cmd]
        p = subprocess.run(argv, cwd=out.parent, capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            raise BuildError(f"post step failed: {' '.join(argv)}\n{p.stdout}{p.stderr}")


def post_separate_debug(strip_all: bool = True) -> list[list[str]]:
    """Post steps: move debug info to ``NAME.debug`` beside the exe, strip the exe
    (``--strip-all`` removes .symtab too; else ``--strip-debug``) and add a
    .gnu_debuglink pointing at NAME.debug."""
    return [
        ["objcopy", "--only-keep-debug", "{out}", "{out}.debug"],
        ["strip", "--strip-all" if strip_all else "--strip-debug", "{out}"],
        ["objcopy", "--add-gnu-debuglink={name}.debug", "{out}"],
    ]


def post_separate_compressed_debug() -> list[list[str]]:
    """post_separate_debug(strip_all=True), with the debug file's sections compressed
    (SHF_COMPRESSED, zlib): its .debug_frame must be inflated to be read."""
    steps = post_separate_debug(strip_all=True)
    return [steps[0], ["objcopy", "--compress-debug-sections=zlib", "{out}.debug"], *steps[1:]]


def post_strip_all() -> list[list[str]]:
    """Post step: strip everything (.symtab and .debug_*; .eh_frame stays)."""
    return [["strip", "--strip-all", "{out}"]]


def build(src_names: Iterable[str], out_name: str, cflags: Sequence[str] = (),
          ldflags: Sequence[str] = (), post: PostStep = None,
          compilers: tuple[str, str, str, str] | None = None) -> Path:
    """Compile ``src_names`` (relative to tests/corpus/) into
    ``tests/_build/<out_name>-<hash>/<out_name>`` and return that path.

    The hash covers the sources, every header in the corpus, the flags, the
    post steps and the compiler version, so a second call is just a stat.
    g++ is used when any source is C++.  ``post`` is either a callable taking
    the output Path or a list of argv lists where ``{out}``, ``{dir}`` and
    ``{name}`` are substituted (see ``post_separate_debug``).  A shared
    library is built by passing ``-fPIC`` in cflags and ``-shared`` in ldflags.
    ``compilers``: (C compiler, its package, C++ compiler, its package) for another
    target (tests/aarch64_lib.py cross-builds the corpus); default gcc/g++ (or $CC/$CXX).
    """
    srcs = [CORPUS / s for s in src_names]
    for s in srcs:
        if not s.exists():
            raise BuildError(f"no such corpus source: {s}")
    cxx = any(s.suffix in (".cpp", ".cc", ".cxx", ".C") for s in srcs)
    if compilers is not None:
        cc, pkg = (compilers[2], compilers[3]) if cxx else (compilers[0], compilers[1])
    else:
        cc = os.environ.get("CXX", "g++") if cxx else os.environ.get("CC", "gcc")
        pkg = "g++" if cxx else "gcc"
    if shutil.which(cc) is None:
        import swk_suite   # (not at the top: this file is also read inside gdb, without pytest)
        swk_suite.need_tool(cc, pkg)

    h = hashlib.sha256()
    h.update(CACHE_VERSION.encode())
    h.update(_version(cc).encode())
    for s in srcs:
        _hash_update_file(h, s)
    for hdr in sorted(CORPUS.glob("*.h")):
        _hash_update_file(h, hdr)
    h.update(json.dumps([list(cflags), list(ldflags), out_name]).encode())
    h.update(_post_key(post).encode())
    digest = h.hexdigest()[:16]

    final_dir = BUILD / f"{out_name}-{digest}"
    out = final_dir / out_name
    if (final_dir / ".ok").exists() and out.exists():
        return out

    BUILD.mkdir(parents=True, exist_ok=True)
    tmp_dir = Path(tempfile.mkdtemp(prefix=f".{out_name}-", dir=BUILD))
    try:
        tmp_out = tmp_dir / out_name
        argv = [cc, *cflags, f"-I{CORPUS}", *map(str, srcs), "-o", str(tmp_out), *ldflags]
        p = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            raise BuildError(f"build of {out_name} failed:\n$ {' '.join(argv)}\n{p.stdout}{p.stderr}")
        _run_post(post, tmp_out)
        (tmp_dir / ".ok").write_text(" ".join(argv) + "\n")
        try:
            os.rename(tmp_dir, final_dir)
        except OSError:
            # somebody else finished the same build first
            if not (final_dir / ".ok").exists():
                raise
    finally:
        if tmp_dir.exists():
            shutil.rmtree(tmp_dir, ignore_errors=True)
    return out


# --------------------------------------------------------------------------
# running gdb
# --------------------------------------------------------------------------

def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("DEBUGINFOD_URLS", None)
    env["LC_ALL"] = "C"
    return env


def _session_pids(sid: int) -> list[int]:
    """Processes in session ``sid`` (gdb and the inferiors it started)."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        # fields[0] is the state; session id is the 6th field overall -> fields[3]
        if len(fields) > 3 and fields[3] == str(sid):
            pids.append(int(d))
    return pids


def _kill_session(sid: int) -> None:
    """SIGKILL every process of the session we created for one command (its
    leader is our child, so nothing else can be in it).  An inferior is put in
    a process group of its own by gdb, so killpg alone would miss it."""
    for pid in _session_pids(sid):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def run_cmd(argv: Sequence[str], timeout: float = 120, cwd: Path | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run argv in a session of its own; stdout+stderr merged into ``.stdout``.
    On timeout everything in that session (gdb and its inferior) is killed
    and GdbTimeout is raised with the partial output."""
    with subprocess.Popen(list(map(str, argv)), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          stdin=subprocess.DEVNULL, cwd=cwd, env=env or _env(),
                          start_new_session=True, text=True, errors="replace") as p:
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_session(p.pid)
            out, _ = p.communicate()
            raise GdbTimeout(f"timed out after {timeout}s: {' '.join(map(str, argv))}\n"
                             f"--- output so far ---\n{out}")
        finally:
            # no stray inferior may survive (gdb -batch kills it normally)
            _kill_session(p.pid)
    return subprocess.CompletedProcess(p.args, p.returncode, out, "")


def gdb_argv(prog: Path | str | None, commands: Sequence[str], core: Path | str | None = None,
             swk: bool = False) -> list[str]:
    argv = [GDB, "-nx", "-batch", "-q",
            "-iex", "set debuginfod enabled off",
            "-iex", "set pagination off",
            "-iex", "set confirm off",
            "-iex", "set width 0",
            "-iex", "set height 0",
            "-iex", "set backtrace past-main on",
            "-iex", "set print thread-events off"]
    if NO_SYSDEBUG:
        argv += ["-iex", "set debug-file-directory /nonexistent-swk-test"]
    if swk:
        argv += ["-ex", f"source {GDB_INIT}"]
    for c in commands:
        argv += ["-ex", c]
    if prog is not None:
        argv.append(str(prog))
        if core is not None:
            argv.append(str(core))
    elif core is not None:
        argv += ["-c", str(core)]
    return argv


def run_gdb(prog: Path | str | None, commands: Sequence[str], core: Path | str | None = None,
            swk: bool = False, timeout: float = 120) -> str:
    """Run ``gdb -nx -batch -q`` on prog (and core) with one ``-ex`` per command;
    with swk=True, ``source gdb_init.py`` first.  Returns stdout+stderr."""
    return run_cmd(gdb_argv(prog, commands, core, swk), timeout=timeout).stdout


# --------------------------------------------------------------------------
# gdb's own backtrace, via its Python API
# --------------------------------------------------------------------------

NATIVE_TAG = "SWKNATIVE "

_NATIVE_SCRIPT = r'''
import gdb, json

_SWK_TYPES = {}
for _n, _s in %(types)r.items():
    if hasattr(gdb, _n):
        _SWK_TYPES[getattr(gdb, _n)] = _s

def _swk_frame_dict(f, level):
    d = {"level": level, "pc": None, "sp": None, "function": None, "type": None,
         "unwind_stop_reason": None, "file": None, "line": None, "library": None}
    try:
        d["pc"] = int(f.pc())
    except gdb.error:
        pass
    try:
        d["function"] = f.name()
    except gdb.error:
        pass
    try:
        d["type"] = _SWK_TYPES.get(f.type(), str(f.type()))
    except gdb.error:
        pass
    for _reg in ("sp", "rsp"):         # GDB's $sp (every architecture), else x86-64's
        try:
            d["sp"] = int(f.read_register(_reg)) & 0xffffffffffffffff
            break
        except Exception:
            pass
    try:
        d["unwind_stop_reason"] = gdb.frame_stop_reason_string(f.unwind_stop_reason())
    except gdb.error:
        pass
    if %(want_sal)r and d["pc"] is not None:
        try:
            sal = f.find_sal()
            if sal.symtab is not None:
                d["file"] = sal.symtab.filename
                d["line"] = sal.line
        except gdb.error:
            pass
        try:
            d["library"] = gdb.solib_name(d["pc"])
        except gdb.error:
            pass
    return d

def _swk_walk(th):
    frames = []
    err = None
    try:
        f = gdb.newest_frame()
    except gdb.error as e:
        return frames, str(e)
    level = 0
    while f is not None:
        frames.append(_swk_frame_dict(f, level))
        level += 1
        try:
            f = f.older()
        except gdb.error as e:
            err = str(e)
            break
    return frames, err

def swk_native_dump(all_threads=True):
    inf = gdb.selected_inferior()
    sel = gdb.selected_thread()
    if sel is None:
        print(%(tag)r + json.dumps({"error": "no thread selected"}))
        return
    ths = sorted(inf.threads(), key=lambda t: t.num) if all_threads else [sel]
    try:
        for th in ths:
            th.switch()
            frames, err = _swk_walk(th)
            out = {"thread": th.num, "tid": th.ptid[1] or th.ptid[0],
                   "stop_reason": frames[-1]["unwind_stop_reason"] if frames else None,
                   "error": err, "frames": frames}
            print(%(tag)r + json.dumps(out))
    finally:
        try:
            sel.switch()
        except gdb.error:
            pass
    print(%(tag)r + json.dumps({"done": True}))
'''


def _native_script(want_sal: bool = True) -> Path:
    text = _NATIVE_SCRIPT % {"types": _FRAME_TYPES, "tag": NATIVE_TAG, "want_sal": want_sal}
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    path = BUILD / f"_gdb_native_{digest}.py"
    if not path.exists():
        BUILD.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(text)
        os.replace(tmp, path)
    return path


@dataclasses.dataclass
class Frame:
    """One frame of gdb's own backtrace."""
    level: int
    pc: int | None
    sp: int | None
    function: str | None
    type: str | None            # normal | inline | sigtramp | tailcall | ...
    unwind_stop_reason: str | None
    file: str | None = None
    line: int | None = None
    library: str | None = None  # gdb.solib_name(pc); None for the main executable

    @property
    def inline(self) -> bool:
        return self.type == "inline"

    @property
    def virtual(self) -> bool:
        """gdb-synthesised frame with no stack frame of its own: an inlined
        call (INLINE_FRAME) or a tail call gdb reconstructed from DWARF
        call-site info (TAILCALL_FRAME).  A real unwinder never sees these."""
        return self.type in VIRTUAL_TYPES

    @property
    def is_signal(self) -> bool:
        return self.type == "sigtramp"


class ThreadFrames(list):
    """list[Frame] for one thread, plus ``.num``, ``.tid``, ``.stop_reason``, ``.error``."""
    num: int
    tid: int
    stop_reason: str | None
    error: str | None


def native_commands(thread_all: bool = True, want_sal: bool = True) -> list[str]:
    """gdb commands that print gdb's own frames as ``SWKNATIVE {json}`` lines."""
    return [f"source {_native_script(want_sal)}",
            f"python swk_native_dump({bool(thread_all)!r})"]


def parse_native(output: str) -> dict[int, ThreadFrames]:
    threads: dict[int, ThreadFrames] = {}
    done = False
    for line in output.splitlines():
        if not line.startswith(NATIVE_TAG):
            continue
        obj = json.loads(line[len(NATIVE_TAG):])
        if obj.get("done"):
            done = True
            continue
        if "error" in obj and "frames" not in obj:
            raise OutputError(f"native backtrace failed: {obj['error']}\n--- gdb output ---\n{output}")
        tf = ThreadFrames(Frame(**fr) for fr in obj["frames"])
        tf.num = obj["thread"]
        tf.tid = obj["tid"]
        tf.stop_reason = obj["stop_reason"]
        tf.error = obj["error"]
        threads[tf.num] = tf
    if not done:
        raise OutputError(f"no native backtrace in gdb output\n--- gdb output ---\n{output}")
    return threads


def native_frames(prog: Path | str, stop_cmds: Sequence[str], core: Path | str | None = None,
                  thread_all: bool = True, timeout: float = 180,
                  want_sal: bool = True) -> dict[int, ThreadFrames]:
    """gdb's own backtrace of every thread (or only the selected one) after
    ``stop_cmds`` (for a core, stop_cmds is usually empty): walks
    gdb.newest_frame().older() with ``backtrace past-main on``."""
    out = run_gdb(prog, [*stop_cmds, *native_commands(thread_all, want_sal)],
                  core=core, timeout=timeout)
    return parse_native(out)


# --------------------------------------------------------------------------
# swk
# --------------------------------------------------------------------------

def parse_swk_json(output: str) -> list[dict]:
    """The ``{"thread"...`` lines of swk's output, parsed.  Raises OutputError
    when there are none or one does not parse."""
    res = []
    for line in output.splitlines():
        s = line.strip()
        if not s.startswith('{"thread"'):
            continue
        try:
            res.append(json.loads(s))
        except json.JSONDecodeError as e:
            raise OutputError(f"bad swk JSON line ({e}): {s[:300]}\n--- output ---\n{output}")
    if not res:
        raise OutputError(f"no swk JSON lines in output\n--- output ---\n{output}")
    return res


def swk_bt_command(extra: str = "") -> str:
    return f"swk-bt -json -all {extra}".rstrip()


def swk_frames(prog: Path | str, stop_cmds: Sequence[str], core: Path | str | None = None,
               extra: str = "", timeout: float = 180) -> list[dict]:
    """Run swk inside gdb (sourcing gdb_init.py), after ``stop_cmds``, as
    ``swk-bt -json -all EXTRA``; returns the parsed per-thread JSON objects."""
    out = run_gdb(prog, [*stop_cmds, swk_bt_command(extra)], core=core, swk=True, timeout=timeout)
    return parse_swk_json(out)


def gdb_and_swk_frames(prog: Path | str, stop_cmds: Sequence[str], core: Path | str | None = None,
                       extra: str = "", timeout: float = 240
                       ) -> tuple[dict[int, ThreadFrames], list[dict] | None, str]:
    """gdb's own frames and swk's, from ONE gdb session (so both see the very
    same process).  Returns (native, swk_threads, output); swk_threads is None
    when swk printed no JSON (the output says why)."""
    out = run_gdb(prog, [*stop_cmds, *native_commands(True), swk_bt_command(extra)],
                  core=core, swk=True, timeout=timeout)
    native = parse_native(out)
    try:
        swk = parse_swk_json(out)
    except OutputError:
        swk = None
    return native, swk, out


def _core_key(prog: Path, stop_cmds: Sequence[str]) -> str:
    h = hashlib.sha256()
    h.update(CACHE_VERSION.encode())
    h.update(str(prog.resolve()).encode())
    st = prog.stat()
    h.update(f"{st.st_size}:{st.st_mtime_ns}".encode())
    h.update(json.dumps(list(stop_cmds)).encode())
    return h.hexdigest()[:16]


def make_core(prog: Path | str, stop_cmds: Sequence[str], out_dir: Path | None = None,
              timeout: float = 180) -> Path:
    """Run prog under gdb to the stop point and ``gcore`` it.  The core is cached
    under tests/_build/cores/ (or out_dir), keyed by the exe and the commands."""
    prog = Path(prog)
    out_dir = Path(out_dir) if out_dir else BUILD / "cores"
    out_dir.mkdir(parents=True, exist_ok=True)
    core = out_dir / f"{prog.name}-{_core_key(prog, stop_cmds)}.core"
    if core.exists():
        return core
    tmp = out_dir / f".{core.name}.{os.getpid()}.tmp"
    out = run_gdb(prog, [*stop_cmds, f"gcore {tmp}"], timeout=timeout)
    if not tmp.exists() or tmp.stat().st_size == 0:
        raise HarnessError(f"gcore did not write {tmp}\n--- gdb output ---\n{out}")
    # Publish without ever replacing a core someone may be reading (gdb
    # re-opens the file by name): link() fails if another run won the race.
    try:
        os.link(tmp, core)
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)
    return core


def between_markers(out: str, tag: str) -> list[str]:
    """The lines a session printed between ``echo SWK-BEGIN-TAG`` and ``echo SWK-END-TAG``
    (see marked_commands)."""
    lines = out.splitlines()
    a, b = f"SWK-BEGIN-{tag}", f"SWK-END-{tag}"
    try:
        i, j = lines.index(a), lines.index(b)
    except ValueError:
        raise OutputError(f"markers {a}/{b} missing\n--- output ---\n{out[-6000:]}") from None
    return lines[i + 1:j]


def marked_commands(tag: str, *cmds: str) -> list[str]:
    """GDB commands ``cmds`` between echoed markers, for between_markers."""
    return [f"echo SWK-BEGIN-{tag}\\n", *cmds, f"echo SWK-END-{tag}\\n"]


def run_swk_cli(args: Sequence[str], timeout: float = 180) -> subprocess.CompletedProcess:
    """``python -m swk_plugin ARGS`` from the repo root; stdout+stderr merged."""
    return run_cmd([PYTHON, "-m", "swk_plugin", *map(str, args)], timeout=timeout, cwd=REPO)


def profiled_stacks(pid: int, folded: Path, duration: float = 1, hz: int = 20) -> list[str]:
    """``swk profile --pid PID --folded FILE``: its stacks, outermost first, one per line
    (the counts dropped)."""
    p = run_swk_cli(["profile", "--pid", str(pid), "--duration", str(duration), "--hz", str(hz),
                     "--folded", str(folded)], timeout=120)
    if p.returncode != 0:
        raise OutputError(f"swk profile exited {p.returncode}\n--- output ---\n{p.stdout}")
    return [line.rsplit(" ", 1)[0] for line in folded.read_text().splitlines()]


def as_profiled(frames: list[dict]) -> str:
    """Consecutive physical frames of a parked thread's walk (swk bt --json) as `swk profile`
    folds them, outermost first: each by its function, a frame outside every file by its pc
    (profiler.frame_label).  Only frames whose JSON name is the symbol's (JIT code, the
    program's own functions) compare: a profile names frames by symbol, not by DWARF."""
    labels = []
    for f in frames:
        if f["kind"] in ("inline", "tailcall"):
            continue
        name = f["function"] or (None if f["library"] else f"0x{f['pc']:x}")
        if name is None:
            raise OutputError(f"frame {f['level']} has no name to compare: {f}")
        labels.append(name.replace(";", ":"))
    return ";".join(reversed(labels))


def swk_core_frames(core: Path | str, exe: Path | str, extra: Sequence[str] = (),
                    timeout: float = 180) -> list[dict]:
    """``python -m swk_plugin bt --core CORE --exe EXE --json --all EXTRA``, parsed."""
    p = run_swk_cli(["bt", "--core", str(core), "--exe", str(exe), "--json", "--all", *extra],
                    timeout=timeout)
    res = parse_swk_json(p.stdout)
    if p.returncode != 0:
        raise OutputError(f"swk_plugin exited {p.returncode}\n--- output ---\n{p.stdout}")
    return res


# --------------------------------------------------------------------------
# names and chains
# --------------------------------------------------------------------------

_QUALIFIERS = re.compile(r"(\s*(const|volatile|&&|&|noexcept))+\s*$")


def _matching_open(s: str, close: int) -> int:
    depth = 0
    for i in range(close, -1, -1):
        ch = s[i]
        if ch == ")":
            depth += 1
        elif ch == "(":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _top_level_space(s: str) -> int:
    """Index of the last space outside (), <>, [] and {}; -1 if none."""
    depth = 0
    last = -1
    for i, ch in enumerate(s):
        if ch in "(<[{":
            depth += 1
        elif ch in ")>]}":
            depth = max(0, depth - 1)
        elif ch == " " and depth == 0:
            last = i
    return last


def strip_params(name: str | None) -> str | None:
    """Drop a trailing C++ parameter list (and cv/ref qualifiers), a leading
    return type (as the demangler prints for function templates) and an ELF
    symbol version (``@@GLIBC_2.34``):

        "ns::f<int>(int) const"           -> "ns::f<int>"
        "int ns::g<int>(int)"             -> "ns::g<int>"
        "Foo::operator()(int) const"      -> "Foo::operator()"
        "Foo::operator()"                 -> "Foo::operator()"
        "X::operator+(X const&) const::{lambda(int)#1}::operator()(int) const"
                                          -> "X::operator+(X const&) const::{lambda(int)#1}::operator()"
        "pthread_kill@@GLIBC_2.34"        -> "pthread_kill"
    """
    if name is None:
        return None
    s = name.strip()
    if "@" in s and "(" not in s:
        s = s.split("@", 1)[0]
    m = _QUALIFIERS.search(s)
    core = s[:m.start()] if m and s[:m.start()].endswith(")") else s
    if core.endswith(")"):
        open_i = _matching_open(core, len(core) - 1)
        if open_i > 0:
            prefix = core[:open_i]
            if not prefix.rstrip().endswith("operator"):
                s = prefix.rstrip()
    # leading return type: "int ns::f<int>" (not "operator new", "(anonymous namespace)")
    sp = _top_level_space(s)
    if sp > 0:
        head, tail = s[:sp], s[sp + 1:]
        if not head.endswith("operator") and not tail.startswith(("const", "volatile")) \
                and "operator" not in tail.split("::")[0]:
            s = tail
    return s


def _is_virtual(f) -> bool:
    if isinstance(f, Frame):
        return f.virtual
    return f.get("type") in VIRTUAL_TYPES or f.get("kind") in VIRTUAL_TYPES


def _is_signal(f) -> bool:
    if isinstance(f, Frame):
        return f.is_signal
    return f.get("kind") == "signal" or f.get("type") == "sigtramp"


def frame_name(f) -> str | None:
    return f.function if isinstance(f, Frame) else f.get("function")


def chain(frames, sigtramp_marker: bool = True) -> list[str | None]:
    """Function names top->bottom (strip_params applied), skipping gdb's
    inline and tailcall frames; signal trampoline frames become SIGTRAMP ("<signal handler called>")
    unless sigtramp_marker is False.  Works on gdb Frames and swk frame dicts."""
    res = []
    for f in frames:
        if _is_virtual(f):
            continue
        if sigtramp_marker and _is_signal(f):
            res.append(SIGTRAMP)
        else:
            res.append(strip_params(frame_name(f)))
    return res


def real_frames(frames) -> list:
    """Frames without gdb's virtual (inline / tailcall) frames."""
    return [f for f in frames if not _is_virtual(f)]


def pcs(frames) -> list[int | None]:
    """pcs of the real frames (gdb inline/tailcall frames skipped: an inline
    frame shares its pc with the real frame below it)."""
    return [f.pc if isinstance(f, Frame) else f.get("pc") for f in real_frames(frames)]


class Alt(tuple):
    """One expected chain entry that may be any of several names (None = unnamed)."""
    def __new__(cls, *names):
        return super().__new__(cls, names)

    def __repr__(self):
        return "Alt(" + ", ".join(map(repr, self)) + ")"


def _entry_ok(actual, expected, same_name=None) -> bool:
    if isinstance(expected, Alt):
        return any(_entry_ok(actual, e, same_name) for e in expected)
    if actual == expected:
        return True
    if same_name is not None and SIGTRAMP not in (actual, expected):
        return same_name(actual, expected)
    return False


def chain_mismatch(actual: Sequence[str | None], expected: Sequence,
                   same_name: Callable[[str | None, str | None], bool] | None = None) -> str | None:
    """None when ``actual`` matches ``expected`` entry for entry (entries are
    names, None, or Alt(...); same_name, e.g. loose_same_name, may accept
    more); else a readable message."""
    problems = []
    if len(actual) != len(expected):
        problems.append(f"length {len(actual)} != expected {len(expected)}")
    for i, (a, e) in enumerate(zip(actual, expected)):
        if not _entry_ok(a, e, same_name):
            problems.append(f"#{i}: {a!r} != expected {e!r}")
            if len(problems) > 12:
                problems.append("...")
                break
    if not problems:
        return None
    width = max(len(actual), len(expected))
    if width <= 60:
        rows = [f"  {i:3} {actual[i] if i < len(actual) else '-'!r:60} "
                f"{expected[i] if i < len(expected) else '-'!r}" for i in range(width)]
        table = "\n".join(rows)
    else:
        table = f"  (chains of {len(actual)} / {len(expected)} entries; first problems above)"
    return "; ".join(problems) + "\n  #   actual" + " " * 56 + "expected\n" + table


def thread_by_key(swk_threads: list[dict], native: dict[int, ThreadFrames],
                  by_tid: bool = False) -> dict[int, dict]:
    """Map swk's per-thread objects onto gdb thread numbers: by "thread" when
    swk gives one (and by_tid is False), else by "tid"."""
    tid_map = {t.tid: n for n, t in native.items()}
    res: dict[int, dict] = {}
    for t in swk_threads:
        num = None if by_tid else t.get("thread")
        if num is None:
            num = tid_map.get(t.get("tid"))
        if num is None:
            raise OutputError(f"swk thread matches no gdb thread: thread={t.get('thread')} tid={t.get('tid')}")
        if num in res:
            raise OutputError(f"swk printed thread {num} twice")
        res[num] = t
    return res


def compare_swk_to_gdb(native: dict[int, ThreadFrames], swk_threads: list[dict],
                       check_names: bool = True, by_tid: bool = False,
                       check_sp: bool = False,
                       same_name: Callable[[str | None, str | None], bool] | None = None) -> list[str]:
    """Every difference between swk's walk and gdb's own (inline frames are compared
    apart; gdb's tail-call frames must be swk "tailcall" frames in the same places, and
    a gdb sigtramp frame a swk "signal" frame).  Checks the
    per-thread JSON contract too.  by_tid: match threads by OS tid only (for
    the CLI, which has no gdb thread numbers).  check_sp: also require swk's
    "sp" to equal gdb's $rsp in that frame (gdb: the caller's CFA for
    frames > 0).  same_name(swk_name, gdb_name) decides name equality
    (default: equal after strip_params; see loose_same_name).  Returns a list
    of messages (empty = same)."""
    same_name = same_name or strict_same_name
    errs: list[str] = []
    try:
        mapped = thread_by_key(swk_threads, native, by_tid=by_tid)
    except OutputError as e:
        return [str(e)]
    if set(mapped) != set(native):
        errs.append(f"threads: swk {sorted(mapped)} != gdb {sorted(native)}")
    for num in sorted(set(mapped) & set(native)):
        st = mapped[num]
        nat = [g for g in native[num] if not g.inline]
        fr = st.get("frames")
        tag = f"thread {num}"
        if st.get("tid") != native[num].tid:
            errs.append(f"{tag}: tid {st.get('tid')} != gdb's {native[num].tid}")
        if not isinstance(st.get("stop_reason"), str) or not st.get("stop_reason"):
            errs.append(f"{tag}: stop_reason missing or empty: {st.get('stop_reason')!r}")
        if not isinstance(fr, list):
            errs.append(f"{tag}: no frames list")
            continue
        levels = [f.get("level") for f in fr]
        if levels != list(range(len(fr))):
            errs.append(f"{tag}: levels not 0..{len(fr) - 1}: {levels[:20]}...")
        for f in fr:
            missing = {"level", "pc", "sp", "fp", "function", "offset", "library", "file",
                       "line", "stepper", "kind"} - set(f)
            if missing:
                errs.append(f"{tag} frame {f.get('level')}: missing keys {sorted(missing)}")
                break
            if f.get("kind") not in ("normal", "signal", "inline", "tailcall", "jit"):
                errs.append(f"{tag} frame {f.get('level')}: kind {f.get('kind')!r}")
                break
        # inline calls: swk's "inline" frames must be gdb's inline frames, in order
        gdb_inline = [strip_params(g.function) for g in native[num] if g.inline]
        swk_inline = [strip_params(f.get("function")) for f in fr if f.get("kind") == "inline"]
        if check_names and gdb_inline != swk_inline:
            errs.append(f"{tag}: inline frames {swk_inline[:12]} != gdb's {gdb_inline[:12]}")
        fr = [f for f in fr if f.get("kind") != "inline"]
        if len(fr) != len(nat):
            errs.append(f"{tag}: swk has {len(fr)} frames, gdb {len(nat)} (non-inline, tail calls counted)")
        nbad = 0
        for i, (g, s) in enumerate(zip(nat, fr)):
            msgs = []
            if g.pc != s.get("pc"):
                msgs.append(f"pc {_hex(s.get('pc'))} != gdb {_hex(g.pc)}")
            if check_sp and g.sp != s.get("sp"):
                msgs.append(f"sp {_hex(s.get('sp'))} != gdb {_hex(g.sp)}")
            if g.is_signal != (s.get("kind") == "signal") or (g.type == "tailcall") != (s.get("kind") == "tailcall"):
                msgs.append(f"kind {s.get('kind')!r} but gdb frame type is {g.type!r}")
            if check_names and not g.is_signal and not same_name(s.get("function"), g.function):
                msgs.append(f"function {s.get('function')!r} != gdb {g.function!r}")
            if msgs:
                errs.append(f"{tag} #{i}: " + "; ".join(msgs))
                nbad += 1
                if nbad >= 10:
                    errs.append(f"{tag}: ... (more differences)")
                    break
    return errs


def strict_same_name(a: str | None, b: str | None) -> bool:
    """Names equal after strip_params (None only equals None)."""
    return strip_params(a) == strip_params(b)


_ALIAS_PREFIX = re.compile(r"^(__GI_|__libc_|__new_|_+)*")
_CLONE_SUFFIX = re.compile(r"(\.(constprop|isra|part|cold|lto_priv)(\.\d+)?)+$")


def canonical_alias(name: str | None) -> str | None:
    """A heuristic canonical form of a glibc-style name, so that different
    aliases of one function compare equal: strips parameters, ``@@VERSION``,
    gcc clone suffixes (.constprop.0, .isra.0, .part.0, .cold), internal
    prefixes (__GI_, __libc_, leading underscores) and an ``_impl`` suffix:
    "__GI_raise" ~ "raise", "__GI___libc_read" ~ "read",
    "__libc_start_main_impl" ~ "__libc_start_main"."""
    s = strip_params(name)
    if s is None:
        return None
    s = _CLONE_SUFFIX.sub("", s)
    s = _ALIAS_PREFIX.sub("", s)
    if s.endswith("_impl"):
        s = s[:-5]
    return s


def loose_same_name(a: str | None, b: str | None) -> bool:
    """strict_same_name, or both are aliases by canonical_alias()."""
    return strict_same_name(a, b) or (a is not None and b is not None
                                      and canonical_alias(a) == canonical_alias(b))


def _hex(v) -> str:
    return hex(v) if isinstance(v, int) else repr(v)


def format_native(threads: dict[int, ThreadFrames]) -> str:
    """Human-readable dump (for failure messages and hand checks)."""
    lines = []
    for num, tf in sorted(threads.items()):
        lines.append(f"Thread {num} (tid {tf.tid}) stop: {tf.stop_reason}"
                     + (f" error: {tf.error}" if tf.error else ""))
        for f in tf[:40] + (["..."] if len(tf) > 50 else []) + (tf[-10:] if len(tf) > 50 else tf[40:]):
            if f == "...":
                lines.append("    ...")
                continue
            lines.append(f"  #{f.level:<3} {_hex(f.pc):>18} {f.type:8} {f.function!s}"
                         + (f"  [{f.library}]" if f.library else ""))
    return "\n".join(lines)


# --------------------------------------------------------------------------
# the corpus: cases with their true call chains
# --------------------------------------------------------------------------
#
# Names of libc frames depend on whether gdb finds glibc's separate debug
# info (Debian's libc6-dbg, /usr/lib/debug/.build-id/..; installed on this
# machine).  With it gdb uses the full .symtab/DWARF names (__GI_raise,
# __pthread_kill_implementation, start_thread, ...); without it libc.so.6
# has only .dynsym (no .symtab), so exported functions get their dynsym
# name (raise, abort, read, __libc_start_main) and static ones are unnamed
# (None, "??" in bt).  Expected chains accept both through Alt(...).

def _libc(debug_name: str, dynsym_name: str | None = None) -> Alt:
    return Alt(debug_name, dynsym_name)


#: bottom of the main thread of a dynamically linked program
LIBC_START = [_libc("__libc_start_call_main"), _libc("__libc_start_main_impl", "__libc_start_main"),
              "_start"]
#: bottom of the main thread of a static program (full .symtab in the exe)
STATIC_START = ["__libc_start_call_main", "__libc_start_main_impl", "_start"]
#: bottom of a pthread
THREAD_START = [_libc("start_thread"), _libc("clone3")]
#: raise() -> pthread_kill, as real frames (gdb also shows a *tailcall*
#: frame __pthread_kill_internal between the two when libc debug info is
#: there; it is virtual and skipped by chain()).
LIBC_RAISE = [_libc("__pthread_kill_implementation"), _libc("__GI_raise", "raise")]

O0G = ("-O0", "-g")
O2G = ("-O2", "-g", "-fomit-frame-pointer")


@dataclasses.dataclass(frozen=True)
class Case:
    """One corpus program + build flags + how to stop it + the true chain(s).

    ``expected`` maps gdb thread number -> chain top->bottom: names, None
    (unnamed) or Alt(...); SIGTRAMP stands for the signal trampoline frame.
    ``run_args`` may contain ``{lib}`` (path of the built ``lib``)."""
    id: str
    srcs: tuple[str, ...]
    cflags: tuple[str, ...]
    expected: dict = dataclasses.field(hash=False, compare=False)
    ldflags: tuple[str, ...] = ()
    post: tuple = ()                    # post steps (argv tuples), see build()
    pre: tuple[str, ...] = ("break stop_here",)
    run_args: str = ""
    lib: tuple | None = None            # (srcs, cflags, out_name) of a shared lib
    timeout: float = 180
    slow: bool = False
    note: str = ""

    @property
    def exe_name(self) -> str:
        return self.id.replace("/", "_")


def _tuple_post(steps) -> tuple:
    return tuple(tuple(c) for c in steps)


def _chain_cases() -> list[Case]:
    exp = {1: ["stop_here", "c", "b", "a", "main", *LIBC_START]}
    v = [
        ("chain-O0g", O0G, (), (), "-O0 -g, frame pointers"),
        ("chain-O2g", O2G, (), (), "-O2 -fomit-frame-pointer: CFI only"),
        ("chain-O0-nodebug", ("-O0",), (), (), "no -g: names from .symtab"),
        ("chain-pie", ("-O2", "-g", "-fPIE"), ("-pie",), (), "PIE"),
        ("chain-nopie", ("-O2", "-g", "-fno-PIE"), ("-no-pie",), (), "non-PIE, fixed addresses"),
        ("chain-debug_frame", (*O2G, "-fno-asynchronous-unwind-tables", "-fno-unwind-tables"), (), (),
         "user code CFI only in .debug_frame (crt code keeps .eh_frame)"),
        ("chain-debuglink", O2G, (), _tuple_post(post_separate_debug(strip_all=True)),
         "strip --strip-all; symbols+DWARF in chain-debuglink.debug via .gnu_debuglink"),
        ("chain-debuglink-stripg", O2G, (), _tuple_post(post_separate_debug(strip_all=False)),
         "strip --strip-debug (.symtab kept); DWARF via .gnu_debuglink"),
        ("chain-debug_frame-debuglink", (*O2G, "-fno-asynchronous-unwind-tables", "-fno-unwind-tables"), (),
         _tuple_post(post_separate_debug(strip_all=True)),
         "user code CFI only in .debug_frame, and that only in the separate debug file"),
        ("chain-debug_frame-debuglink-zlib", (*O2G, "-fno-asynchronous-unwind-tables", "-fno-unwind-tables"),
         (), _tuple_post(post_separate_compressed_debug()),
         "as chain-debug_frame-debuglink, the debug file compressed (objcopy --compress-debug-sections)"),
    ]
    cases = [Case(i, ("chain.c",), cf, exp, ldflags=ld, post=post, note=n) for i, cf, ld, post, n in v]
    cases.append(Case("chain-static", ("chain.c",), O0G, {1: ["stop_here", "c", "b", "a", "main", *STATIC_START]},
                      ldflags=("-static",), note="static: libc with full .symtab inside the exe"))
    cases.append(Case("chain-stripped", ("chain.c",), ("-O2", "-fomit-frame-pointer"),
                      {1: [None, None, None, None, None, *LIBC_START[:2], None]},
                      post=_tuple_post(post_strip_all()), pre=(), run_args="trap",
                      note="strip --strip-all, no debug file: user frames unnamed; stops on its own int3"))
    return cases


def _crash_cases() -> list[Case]:
    abort = {1: [*LIBC_RAISE, _libc("__GI_abort", "abort"), "do_abort", "abort_b", "abort_a", "main",
                 *LIBC_START]}
    segv = {1: ["write_null", "segv_b", "segv_a", "main", *LIBC_START]}
    res = []
    for opt, cf in (("O0g", O0G), ("O2g", O2G)):
        res.append(Case(f"crash-abort-{opt}", ("crash.c",), cf, abort, pre=(), run_args="abort",
                        note="stops on SIGABRT inside libc"))
        res.append(Case(f"crash-segv-{opt}", ("crash.c",), cf, segv, pre=(), run_args="segv",
                        note="stops on SIGSEGV (NULL store) in write_null"))
    return res


def _cxx_cases() -> list[Case]:
    exp = {1: ["stop_here", "(anonymous namespace)::anon_leaf",
               "geo::Vec::operator+(geo::Vec const&) const::{lambda(int)#1}::operator()",
               "geo::Vec::operator+", "shapes::Square<int>::area", "app::Runner<long>::run", "main",
               *LIBC_START]}
    return [Case("cxx-O0g", ("cxx.cpp",), O0G, exp),
            Case("cxx-O2g", ("cxx.cpp",), O2G, exp),
            Case("cxx-O2-nodebug", ("cxx.cpp",), ("-O2",), exp,
                 note="no -g: gdb names come demangled from .symtab, with parameter lists")]


def _thread_cases() -> list[Case]:
    exp = {
        1: ["stop_here", "main_a", "main", *LIBC_START],
        2: [_libc("__GI___libc_read", "read"), "t1_b", "t1_a", "t1_start", *THREAD_START],
        3: [_libc("__futex_abstimed_wait_common"), _libc("__new_sem_wait_slow64"),
            "t2_b", "t2_a", "t2_start", *THREAD_START],
        4: [_libc("__GI___clock_nanosleep", "clock_nanosleep"), _libc("__GI___nanosleep", "nanosleep"),
            "t3_b", "t3_a", "t3_start", *THREAD_START],
    }
    return [Case(f"threads-{o}", ("threads.c",), cf, exp, ldflags=("-pthread",))
            for o, cf in (("O0g", O0G), ("O2g", O2G))]


def _dlopen_cases() -> list[Case]:
    exp = {1: ["stop_here", "main_callback", "dlib_inner", "dlib_mid", "dlib_entry", "load_and_call", "main",
               *LIBC_START]}
    return [Case(f"dlopen-{o}", ("dlopen_main.c",), cf, exp, ldflags=("-ldl",), run_args="{lib}",
                 lib=(("dlib.c",), (*cf, "-fPIC"), "libdlib.so"))
            for o, cf in (("O0g", O0G), ("O2g", O2G))]


def _recurse_cases(depth: int = 10000) -> list[Case]:
    exp = {1: ["stop_here", *(["rec"] * (depth + 1)), "main", *LIBC_START]}
    return [Case("recurse-O0g", ("recurse.c",), O0G, exp, run_args=str(depth), timeout=600),
            Case("recurse-O2", ("recurse.c",), ("-O2", "-g", "-fno-optimize-sibling-calls", "-fno-inline"),
                 exp, run_args=str(depth), timeout=600)]


def _asm_cases() -> list[Case]:
    exp = {1: ["stop_here", "c_leaf", "asm_cfi_noframe", "asm_realign", "asm_fp_nocfi", "main", *LIBC_START]}
    note = ("hand-written frames: no CFI at all (frame pointer only), a 64-byte stack "
            "realignment (CFA via %rbp), and a CFI-only frame that uses %rbp as scratch")
    return [Case(f"asm-{o}", ("asm_main.c", "asm_frames.S"), cf, exp, note=note)
            for o, cf in (("O0g", O0G), ("O2g", O2G))]


def _signal_cases() -> list[Case]:
    top = ["stop_here", "h1", "on_signal", SIGTRAMP]
    bottom = ["sig_b", "sig_a", "main", *LIBC_START]
    raise_exp = {1: [*top, *LIBC_RAISE, *bottom]}
    alarm_exp = {1: [*top, "spin", *bottom]}
    pre = ("handle SIGUSR1 SIGALRM nostop noprint pass", "break stop_here")
    res = []
    for opt, cf, modes in (("O0g", O0G, ("raise", "alarm")), ("O2g", O2G, ("alarm",))):
        for mode in modes:
            for alt in ("", " altstack"):
                res.append(Case(f"signal-{mode}{alt.replace(' ', '-')}-{opt}", ("signal.c",), cf,
                                raise_exp if mode == "raise" else alarm_exp, pre=pre,
                                run_args=mode + alt,
                                note=("SIGUSR1 via raise()" if mode == "raise" else
                                      "SIGALRM interrupts spin() at an arbitrary pc")
                                + ("; handler on a sigaltstack (SA_ONSTACK)" if alt else "")))
    return res


# --------------------------------------------------------------------------
# i386: the same programs built with gcc -m32 (issue 14)
# --------------------------------------------------------------------------

def m32_flags() -> tuple[str, ...]:
    """gcc flags of an i386 build on an x86-64 Debian with gcc-multilib: -m32, and the
    kernel's uapi asm/ headers, which Debian installs for x86-64 only
    (/usr/include/x86_64-linux-gnu/asm; the x86 ones serve both: they test __i386__) and
    which <errno.h> needs: a directory holding just that asm/ is searched last."""
    d = BUILD / "m32-include"
    link = d / "asm"
    if not link.exists():
        d.mkdir(parents=True, exist_ok=True)
        try:
            link.symlink_to("/usr/include/x86_64-linux-gnu/asm")
        except FileExistsError:
            pass
    return ("-m32", "-idirafter", str(d))


def m32_case(case: Case, expected: dict | None = None, **kw) -> Case:
    """The i386 build of a Case: id "i386-<id>", -m32 added to the program's (and its
    library's) flags, and i386's own known chain when it differs."""
    m32 = m32_flags()
    lib = (case.lib[0], (*m32, *case.lib[1]), "i386-" + case.lib[2]) if case.lib else None
    return dataclasses.replace(case, id=f"i386-{case.id}", cflags=(*m32, *case.cflags),
                               expected=expected if expected is not None else case.expected, lib=lib, **kw)


#: i386 glibc enters the kernel through the vDSO's __kernel_vsyscall (called from the libc
#: function, so it is the top frame of a thread blocked in a system call).  Debian has no
#: debug file for the 32-bit libc: its static functions are unnamed (None) there.
KVSYSCALL = "__kernel_vsyscall"
I386_RAISE = [KVSYSCALL, _libc("__pthread_kill_implementation"), _libc("__GI_raise", "raise")]
I386_THREAD_START = [_libc("start_thread"), Alt("clone3", "clone", None)]


def _i386_cases() -> list[Case]:
    by_id = {c.id: c for c in (*_chain_cases(), *_cxx_cases(), *_thread_cases(), *_dlopen_cases(),
                               *_signal_cases(), *_crash_cases())}
    res = [m32_case(by_id[i]) for i in ("chain-O0g", "chain-O2g", "chain-stripped", "cxx-O0g", "cxx-O2g",
                                         "dlopen-O2g", "crash-segv-O2g")]
    chain = by_id["chain-O0g"]
    res.append(m32_case(dataclasses.replace(chain, id="chain-Og", cflags=("-Og", "-g"))))
    res.append(m32_case(dataclasses.replace(
        chain, id="chain-O0-nocfi", cflags=("-O0", "-g0", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables"),
        note="frame pointers, no CFI in the program's own code (gdb's prologue analysis is right here)")))
    threads = {
        1: ["stop_here", "main_a", "main", *LIBC_START],
        2: [KVSYSCALL, _libc("__GI___libc_read", "read"), "t1_b", "t1_a", "t1_start", *I386_THREAD_START],
        3: [KVSYSCALL, _libc("__futex_abstimed_wait_common64"), _libc("__futex_abstimed_wait_common"),
            _libc("__new_sem_wait_slow64"), Alt("__new_sem_wait_slow64.constprop.0", "sem_wait", None),
            "t2_b", "t2_a", "t2_start", *I386_THREAD_START],
        4: [KVSYSCALL, _libc("__GI___clock_nanosleep_time64", "__clock_nanosleep_time64"),
            _libc("__GI___nanosleep", "nanosleep"), "t3_b", "t3_a", "t3_start", *I386_THREAD_START],
    }
    res += [m32_case(by_id[f"threads-{o}"], threads) for o in ("O0g", "O2g")]
    top = ["stop_here", "h1", "on_signal", SIGTRAMP]
    bottom = ["sig_b", "sig_a", "main", *LIBC_START]
    raise_exp = {1: [*top, *I386_RAISE, *bottom]}
    alarm_exp = {1: [*top, "spin", *bottom]}
    sig = by_id["signal-raise-O0g"]
    for mode, exp in (("raise", raise_exp), ("alarm", alarm_exp)):
        for extra, note in (("", "non-RT sigframe, the vDSO's __kernel_sigreturn"),
                            (" altstack", "on a sigaltstack"),
                            (" siginfo", "SA_SIGINFO: rt_sigframe, the vDSO's __kernel_rt_sigreturn")):
            for opt, cf in (("O0g", O0G), ("O2g", O2G)):
                if opt == "O2g" and extra == " siginfo" and mode == "raise":
                    continue
                res.append(m32_case(dataclasses.replace(
                    sig, id=f"signal-{mode}{extra.replace(' ', '-')}-{opt}", cflags=cf, run_args=mode + extra,
                    note=note), exp))
    return res


I386_CASES: list[Case] = _i386_cases()
CASES: list[Case] = [*_chain_cases(), *_crash_cases(), *_cxx_cases(), *_thread_cases(),
                     *_dlopen_cases(), *_recurse_cases(), *_signal_cases(), *_asm_cases(), *I386_CASES]
CASES_BY_ID: dict[str, Case] = {c.id: c for c in CASES}


class Corpus:
    """Per-session cache of builds, stop commands, cores and gdb's own walks
    (see the ``corpus`` fixture in conftest.py)."""

    def __init__(self):
        self._exe: dict[str, Path] = {}
        self._lib: dict[str, Path | None] = {}
        self._core: dict[str, Path] = {}
        self._native_live: dict[str, dict[int, ThreadFrames]] = {}
        self._native_core: dict[str, dict[int, ThreadFrames]] = {}

    @staticmethod
    def case(case_or_id: Case | str) -> Case:
        return CASES_BY_ID[case_or_id] if isinstance(case_or_id, str) else case_or_id

    def lib(self, case: Case | str) -> Path | None:
        case = self.case(case)
        if case.id not in self._lib:
            self._lib[case.id] = (build(case.lib[0], case.lib[2], case.lib[1], ("-shared",))
                                  if case.lib else None)
        return self._lib[case.id]

    def exe(self, case: Case | str) -> Path:
        case = self.case(case)
        if case.id not in self._exe:
            self._exe[case.id] = build(case.srcs, case.exe_name, case.cflags, case.ldflags,
                                       [list(c) for c in case.post] if case.post else None)
        return self._exe[case.id]

    def stop_cmds(self, case: Case | str) -> list[str]:
        case = self.case(case)
        lib = self.lib(case)
        args = case.run_args.format(lib=lib) if lib else case.run_args
        return [*case.pre, f"run {args}".rstrip()]

    def core(self, case: Case | str) -> Path:
        case = self.case(case)
        if case.id not in self._core:
            self._core[case.id] = make_core(self.exe(case), self.stop_cmds(case), timeout=case.timeout)
        return self._core[case.id]

    def native_live(self, case: Case | str) -> dict[int, ThreadFrames]:
        case = self.case(case)
        if case.id not in self._native_live:
            self._native_live[case.id] = native_frames(self.exe(case), self.stop_cmds(case),
                                                       timeout=case.timeout)
        return self._native_live[case.id]

    def native_core(self, case: Case | str) -> dict[int, ThreadFrames]:
        case = self.case(case)
        if case.id not in self._native_core:
            self._native_core[case.id] = native_frames(self.exe(case), [], core=self.core(case),
                                                       timeout=case.timeout)
        return self._native_core[case.id]


def expected_mismatches(threads: dict[int, list], case: Case,
                        same_name: Callable[[str | None, str | None], bool] | None = None) -> list[str]:
    """Compare per-thread name chains (from chain()) with case.expected."""
    errs = []
    if set(threads) != set(case.expected):
        errs.append(f"threads {sorted(threads)} != expected {sorted(case.expected)}")
    for num in sorted(set(threads) & set(case.expected)):
        m = chain_mismatch(threads[num], case.expected[num], same_name)
        if m:
            errs.append(f"thread {num}: {m}")
    return errs
