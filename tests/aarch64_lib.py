"""AArch64 under qemu-user: the corpus cross-built, run under qemu's gdb stub, walked by
gdb-multiarch and LLDB, and dumped as qemu's own core files (issue 15).

Everything here reuses swk_testlib: the corpus sources (tests/corpus), ``build`` (with the
cross compilers), gdb's own walk (``native_commands`` / ``parse_native``), swk's JSON
(``parse_swk_json``), chains and comparisons.  What is new is running the programs:

* ``Qemu``: ``qemu-aarch64 -cpu max,sve=off -L SYSROOT -g PORT prog ARGS`` on a free port,
  in a directory of its own (where a crash writes the guest's ``qemu_<prog>_<date>_<pid>.core``),
  with one fixed environment, so every run of a program has the same stack addresses
  (qemu-user places the guest deterministically); always killed at the end.
* ``gdb_session``: one gdb-multiarch session on the stub: stop, gdb's own walk (swk not
  loaded yet), swk-bt -json -all, gdb's walk again with swk's unwinder registered, then the
  core: ``kill -ABRT`` to qemu and ``detach``, so qemu dumps the guest where it stopped.
* ``lldb_session``: LLDB on a fresh qemu (``platform select remote-linux``, ``gdb-remote``):
  swk-bt -json -all, LLDB's own pc of every thread, LLDB's own ``bt all``.

``-cpu max`` has pointer authentication (the corpus is also built with
``-mbranch-protection=pac-ret+leaf``); SVE is off because GDB 13 misreads signal frames
with SVE on.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Sequence

import swk_suite as S
import swk_testlib as T

CROSS = ("aarch64-linux-gnu-gcc-12", "gcc-12-aarch64-linux-gnu",
         "aarch64-linux-gnu-g++-12", "g++-12-aarch64-linux-gnu")
SYSROOT = "/usr/aarch64-linux-gnu"
QEMU = "qemu-aarch64"
QEMU_CPU = "max,sve=off"
GDB = os.environ.get("SWK_GDB_MULTIARCH", "gdb-multiarch")
PACKAGES = {CROSS[0]: CROSS[1], CROSS[2]: CROSS[3], QEMU: "qemu-user", "gdb-multiarch": "gdb-multiarch"}

#: Build flags.
O0 = ("-O0", "-g")
OG = ("-Og", "-g")
O2 = ("-O2", "-g", "-fomit-frame-pointer")
PAC = ("-mbranch-protection=pac-ret+leaf",)
#: No CFI in the program's own code, no frame pointer, no DWARF (hard_cases.NOCFI).
NOCFI = ("-O2", "-fomit-frame-pointer", "-g0", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables")

#: The guest's environment: the same in every run, so stacks are at the same addresses.
GUEST_ENV = {"LC_ALL": "C", "PATH": "/usr/bin:/bin", "SWK_GUEST": "1"}
#: Frames gdb walks at most (a wrong walk may repeat a frame for ever).
BACKTRACE_LIMIT = 1500
#: Markers between the parts of a gdb session's output.
HOOKED, CORE_NOW = "SWK-A64-HOOKED", "SWK-A64-CORE"


def need_machine() -> None:
    """The cross compilers, qemu-user, gdb-multiarch and the cross libc, or a skip (under
    CI a failure) naming the package."""
    for tool in (CROSS[0], CROSS[2], QEMU, GDB):
        S.need_tool(tool, PACKAGES.get(tool, tool))
    S.need_path(f"{SYSROOT}/lib/libc.so.6", "libc6-dev-arm64-cross", "the AArch64 C library")


def build(srcs: Sequence[str], name: str, cflags: Sequence[str], ldflags: Sequence[str] = (),
          post: Sequence = ()) -> Path:
    return T.build(srcs, name, cflags, ldflags, [list(c) for c in post] or None, compilers=CROSS)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------
# cases
# --------------------------------------------------------------------------

#: The bottom of a main thread: the cross libc has no symbol for __libc_start_call_main.
LIBC_START = [None, "__libc_start_main", "_start"]
#: The bottom of a pthread: start_thread and thread_start have no symbols either.
THREAD_START = [None, None]


@dataclasses.dataclass(frozen=True)
class A64Case:
    """A corpus program cross-built, how to stop it, and its known chain per gdb thread.

    ``gdb_right``: gdb's own walk (swk not loaded) is the known chain, so it is the oracle
    of every pc and sp; else gdb is wrong there (``gdb_note`` says how; recorded by the
    tests) and the oracle is the known chain, the frames gdb gets right before it goes
    wrong, and, with ``twin``, gdb's walk of a build with the same code that gdb can walk.
    ``interrupted``: functions a timer signal interrupts at a varying pc (not compared
    across runs)."""
    id: str
    srcs: tuple[str, ...]
    cflags: tuple[str, ...]
    expected: dict = dataclasses.field(hash=False, compare=False)
    ldflags: tuple[str, ...] = ()
    pre: tuple[str, ...] = ("break stop_here",)
    run_args: tuple[str, ...] = ()
    lib: tuple | None = None            # (srcs, cflags, name) of a library given as argument 1
    gdb_right: bool = True
    gdb_note: str = ""
    twin: "A64Case | None" = None
    interrupted: tuple[str, ...] = ()
    lldb: bool = True
    post: tuple = ()                    # post steps (argv tuples), see swk_testlib.build
    timeout: float = 240

    @property
    def exe_name(self) -> str:
        return "a64-" + self.id

    def exe(self) -> Path:
        return build(self.srcs, self.exe_name, self.cflags, self.ldflags, self.post)

    def lib_path(self) -> Path | None:
        if not self.lib:
            return None
        return build(self.lib[0], self.lib[2], self.lib[1], ("-shared",))

    def args(self) -> list[str]:
        lib = self.lib_path()
        return [a.format(lib=lib) for a in self.run_args]


def gdb_stop_cmds(case: A64Case) -> list[str]:
    return [*case.pre, "continue"]


# --------------------------------------------------------------------------
# qemu
# --------------------------------------------------------------------------

def _core_limit():
    # the guest's core (qemu writes it when the guest dies of a signal) needs a limit above
    # zero; qemu's own host core, written as it dies too, is cut short at this size
    resource.setrlimit(resource.RLIMIT_CORE, (64 << 20, 64 << 20))


class Qemu:
    """qemu-user running ``exe`` under its gdb stub on a free port, in a directory of its own."""

    def __init__(self, exe: Path, args: Sequence[str] = (), stub: bool = True):
        self.exe, self.args, self.stub = Path(exe), list(args), stub
        T.BUILD.mkdir(parents=True, exist_ok=True)
        self.dir = Path(tempfile.mkdtemp(prefix="a64-run-", dir=T.BUILD))
        self.proc = None
        self.port = None
        self.log = self.dir / "qemu.log"

    def start(self) -> "Qemu":
        for _attempt in range(5):
            self.port = free_port()
            argv = [QEMU, "-cpu", QEMU_CPU, "-L", SYSROOT]
            if self.stub:
                argv += ["-g", str(self.port)]
            argv += [str(self.exe), *self.args]
            with open(self.log, "wb") as log:
                self.proc = subprocess.Popen(argv, cwd=self.dir, env=GUEST_ENV, stdin=subprocess.DEVNULL,
                                             stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                             preexec_fn=_core_limit)
            if not self.stub or self._listening():
                return self
            self.kill()
        raise T.HarnessError(f"qemu did not start its gdb stub: {self.log.read_text(errors='replace')}")

    def _listening(self, seconds: float = 10) -> bool:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                return False
            with open(f"/proc/{self.proc.pid}/net/tcp", errors="replace") as fh:
                table = fh.read()
            if re.search(rf":{self.port:04X} 00000000:0000 0A ", table):
                return True
            time.sleep(0.05)
        return False

    def wait(self, seconds: float = 60) -> int | None:
        try:
            return self.proc.wait(seconds)
        except subprocess.TimeoutExpired:
            return None

    def core(self, seconds: float = 60) -> Path | None:
        """The guest's core qemu wrote when it died (its own host core is deleted)."""
        self.wait(seconds)
        host = self.dir / "core"
        if host.exists():
            host.unlink()
        cores = sorted(self.dir.glob("qemu_*.core"))
        return cores[0] if cores else None

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.wait(30)
        host = self.dir / "core"
        if host.exists():
            host.unlink()

    def keep_core(self, name: str) -> Path | None:
        """The guest's core moved to tests/_build/a64-cores/NAME.core (replacing an older one)."""
        core = self.core()
        if core is None:
            return None
        dest = T.BUILD / "a64-cores" / f"{name}.core"
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.replace(core, dest)
        return dest

    def __enter__(self) -> "Qemu":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


# --------------------------------------------------------------------------
# gdb-multiarch
# --------------------------------------------------------------------------

def gdb_argv(exe: Path, port: int, commands: Sequence[str]) -> list[str]:
    argv = [GDB, "-nx", "-batch", "-q",
            "-iex", "set debuginfod enabled off", "-iex", "set pagination off",
            "-iex", "set confirm off", "-iex", "set width 0", "-iex", "set height 0",
            "-iex", "set backtrace past-main on", "-iex", "set print thread-events off",
            "-iex", f"set backtrace limit {BACKTRACE_LIMIT}",
            "-ex", f"set solib-search-path {SYSROOT}/lib", "-ex", f"file {exe}",
            "-ex", f"target remote 127.0.0.1:{port}"]
    for c in commands:
        argv += ["-ex", c]
    return argv


#: tgkill's system call number on the machine running the tests.
_TGKILL = {"x86_64": 234, "aarch64": 131, "i686": 270}


def abort_command(pid: int) -> str:
    """A gdb ``shell`` command sending SIGABRT to qemu's first thread (the guest's main thread
    runs on it): qemu takes it at once when gdb detaches and dumps the guest.  A signal to
    the whole process could land on a thread blocked in a system call instead and be lost
    when the program exits first."""
    nr = _TGKILL[os.uname().machine]
    code = f"import ctypes; ctypes.CDLL(None, use_errno=True).syscall({nr}, {pid}, {pid}, {int(signal.SIGABRT)})"
    return f"shell {T.PYTHON} -c '{code}'"


@dataclasses.dataclass
class GdbSession:
    """What one gdb-multiarch session on qemu's stub found."""
    native: dict                     # gdb's own walk, swk not loaded (gdb thread num -> frames)
    swk: list | None                 # swk-bt -json -all
    hooked: dict | None              # gdb's walk with swk's unwinder registered
    core: Path | None                # qemu's core of the guest at that stop
    output: str


def _segment(out: str, begin: str | None, end: str | None) -> str:
    lines = out.splitlines()
    i = 0 if begin is None else next((k for k, ln in enumerate(lines) if ln.strip() == begin), len(lines))
    j = len(lines) if end is None else next((k for k, ln in enumerate(lines) if ln.strip() == end and k > i),
                                            len(lines))
    return "\n".join(lines[i:j])


def gdb_session(case: A64Case, extra: Sequence[str] = (), swk_cmd: str = T.swk_bt_command(),
                make_core: bool = True) -> GdbSession:
    """One session: stop, gdb's own walk, swk loaded, swk-bt, gdb's walk with swk's unwinder,
    then (``make_core``) the guest dumped by qemu at that very stop."""
    exe = case.exe()
    with Qemu(exe, case.args()) as q:
        cmds = [*gdb_stop_cmds(case), *extra, *T.native_commands(True),
                f"source {T.GDB_INIT}", swk_cmd,
                f"echo {HOOKED}\\n", *T.native_commands(True)]
        if make_core:
            cmds += [f"echo {CORE_NOW}\\n", abort_command(q.proc.pid), "detach"]
        p = T.run_cmd(gdb_argv(exe, q.port, cmds), timeout=case.timeout)
        out = p.stdout
        core = q.keep_core(case.id) if make_core else None
    native = T.parse_native(_segment(out, None, HOOKED))
    try:
        swk = T.parse_swk_json(_segment(out, None, HOOKED))
    except T.OutputError:
        swk = None
    try:
        hooked = T.parse_native(_segment(out, HOOKED, CORE_NOW))
    except T.OutputError:
        hooked = None
    return GdbSession(native, swk, hooked, core, out)


def gdb_commands_session(case: A64Case, commands: Sequence[str]) -> str:
    """gdb-multiarch on the stopped program running ``commands`` (swk not loaded unless
    they source it); its output."""
    exe = case.exe()
    with Qemu(exe, case.args()) as q:
        return T.run_cmd(gdb_argv(exe, q.port, [*gdb_stop_cmds(case), *commands]), timeout=case.timeout).stdout


def swk_cli(core: Path, exe: Path, extra: Sequence[str] = (), sysroot: bool = True) -> tuple[list | None, str, int]:
    """``python -m swk_plugin bt --core CORE --exe EXE [--sysroot SYSROOT] --json --all``."""
    args = ["bt", "--core", str(core), "--exe", str(exe), "--json", "--all", *extra]
    if sysroot:
        args[5:5] = ["--sysroot", SYSROOT]
    p = T.run_swk_cli(args)
    try:
        res = T.parse_swk_json(p.stdout)
    except T.OutputError:
        res = None
    return res, p.stdout, p.returncode


# --------------------------------------------------------------------------
# LLDB
# --------------------------------------------------------------------------

LLDB_BEGIN, LLDB_END, LLDB_BT = "SWK-A64-LLDB-BEGIN", "SWK-A64-LLDB-END", "SWK-A64-LLDB-BT"
PC0_TAG = "SWK-A64-PC0"


def lldb_stop_cmds(case: A64Case, stop_pc: int | None = None) -> list[str]:
    """gdb's stop commands in LLDB's words; a breakpoint at ``stop_pc`` (where gdb stopped:
    LLDB's own breakpoint on a function skips its prologue at -O0, gdb's does not always)."""
    out, handle = [], []
    for cmd in case.pre:
        words = cmd.split()
        if words[0] == "break":
            out.append(f"breakpoint set -a 0x{stop_pc:x}" if stop_pc else f"breakpoint set -n {words[1]}")
        elif words[0] == "handle":
            handle.append("process handle -s false -n false -p true "
                          + " ".join(w for w in words[1:] if w.startswith("SIG")))
        else:
            raise ValueError(f"no LLDB translation of gdb's {cmd!r}")
    return [*handle, *out, "process continue"]


def lldb_session(case: A64Case, lldb: str, after: Sequence[str] = (), stop_pc: int | None = None) -> str:
    """LLDB on qemu's stub (no platform sysroot: LLDB then lists the executable alone), stopped
    as gdb stops; then swk-bt -all -json, LLDB's pc of every thread and ``bt all``."""
    exe = case.exe()
    init = T.REPO / "lldb_init.py"
    after = list(after) or [
        f"script print('{LLDB_BEGIN}')", "swk-bt -all -json",
        f"script for t in lldb.process: print('{PC0_TAG}', t.GetIndexID(), t.GetThreadID(), "
        "t.GetFrameAtIndex(0).GetPC())",
        f"script print('{LLDB_BT}')", "bt all", f"script print('{LLDB_END}')"]
    with Qemu(exe, case.args()) as q:
        argv = [lldb, "-b", "-x", "-o", "settings set auto-confirm true",
                "-o", "settings set stop-disassembly-display never",
                "-o", "settings set stop-line-count-before 0", "-o", "settings set stop-line-count-after 0",
                # swk first: its frame provider is registered when the target is made (registering
                # it on a target with a process can deadlock LLDB 22: docs/lldb.md)
                "-o", f"command script import {init}",
                "-o", "platform select remote-linux", "-o", f"target create {exe}",
                "-o", f"gdb-remote 127.0.0.1:{q.port}"]
        for c in lldb_stop_cmds(case, stop_pc):
            argv += ["-o", c]
        for c in after:
            argv += ["-o", c]
        for c in after:
            argv += ["-k", c]
        env = {**T._env(), "TMPDIR": str(T.BUILD)}
        return T.run_cmd(argv, timeout=case.timeout, env=env).stdout


def parse_pc0(output: str) -> dict[int, int]:
    """{tid: pc} of LLDB's own frame 0 of every thread."""
    res = {}
    for line in output.splitlines():
        if line.startswith(PC0_TAG):
            _tag, _idx, tid, pc = line.split()
            res[int(tid)] = int(pc)
    return res


_LLDB_FRAME = re.compile(r"^\s*\*?\s*frame #(\d+): (0x[0-9a-f]+)")


def parse_lldb_bt(output: str) -> dict[int, list[int]]:
    """LLDB's ``bt all``: {thread index: [pc of each frame]} (the part after LLDB_BT)."""
    text = _segment(output, LLDB_BT, LLDB_END)
    res: dict[int, list[int]] = {}
    cur = None
    for line in text.splitlines():
        m = re.match(r"^\s*\*?\s*thread #(\d+)", line)
        if m:
            cur = res.setdefault(int(m.group(1)), [])
            continue
        m = _LLDB_FRAME.match(line)
        if m and cur is not None:
            cur.append(int(m.group(2), 16))
    return res


# --------------------------------------------------------------------------
# checks shared by the tests
# --------------------------------------------------------------------------

def chains(swk_threads: list[dict], native: dict, by_order: bool = False) -> dict[int, list]:
    """{gdb thread number: chain} of swk's threads, matched to gdb's by tid, or in order for a
    walk of another run (another qemu: other tids)."""
    if by_order:
        return {n: T.chain(t.get("frames") or []) for n, t in zip(sorted(native), swk_threads)}
    mapped = T.thread_by_key(swk_threads, native, by_tid=True)
    return {n: T.chain(t.get("frames") or []) for n, t in mapped.items()}


def known_chain_errors(case: A64Case, chains_by_thread: dict[int, list]) -> list[str]:
    return [f"known chain: {m}" for m in T.expected_mismatches(chains_by_thread, T.Case(
        case.id, case.srcs, case.cflags, case.expected))]


def is_known_chain(case: A64Case, native: dict) -> bool:
    return not T.expected_mismatches({n: T.chain(fr) for n, fr in native.items()},
                                     T.Case(case.id, case.srcs, case.cflags, case.expected))


def right_prefix(case: A64Case, native: dict) -> dict[int, int]:
    """How many leading frames of gdb's own walk of each thread are the known chain's (the
    frames gdb gets right before it goes wrong)."""
    out = {}
    for num, fr in native.items():
        got = T.chain(fr)
        exp = case.expected.get(num, [])
        k = 0
        while k < min(len(got), len(exp)) and T._entry_ok(got[k], exp[k]):
            k += 1
        out[num] = k
    return out


def compare_frames(oracle: dict, swk_threads: list[dict], case: A64Case | None, upto: dict[int, int] | None = None,
                   check_sp: bool = True, by_order: bool = False) -> list[str]:
    """swk's frames against an oracle walk (gdb's), thread by thread (matched by tid, or
    ``by_order`` for an oracle of another run): pc, sp and kind of the first ``upto[thread]``
    frames (all when None); an oracle pc or sp of None is not compared."""
    errs = []
    if by_order:
        if len(oracle) != len(swk_threads):
            return [f"{len(swk_threads)} threads, the oracle {len(oracle)}"]
        mapped = dict(zip(sorted(oracle), swk_threads))
    else:
        try:
            mapped = T.thread_by_key(swk_threads, oracle, by_tid=True)
        except T.OutputError as e:
            return [str(e)]
    for num, tf in oracle.items():
        st = mapped.get(num)
        if st is None:
            errs.append(f"thread {num}: not in swk's output")
            continue
        nat = T.real_frames(tf)
        fr = T.real_frames(st.get("frames") or [])
        n = len(nat) if upto is None else upto.get(num, 0)
        if upto is None and len(fr) != len(nat):
            errs.append(f"thread {num}: swk has {len(fr)} frames, the oracle {len(nat)}")
        for i, (g, s) in enumerate(list(zip(nat, fr))[:n]):
            msgs = []
            if g.pc is not None and g.pc != s.get("pc"):       # None: not comparable (see callers)
                msgs.append(f"pc {T._hex(s.get('pc'))} != {T._hex(g.pc)}")
            if check_sp and g.sp is not None and g.sp != s.get("sp"):
                msgs.append(f"sp {T._hex(s.get('sp'))} != {T._hex(g.sp)}")
            if g.is_signal != (s.get("kind") == "signal"):
                msgs.append(f"kind {s.get('kind')!r}, oracle frame type {g.type!r}")
            if msgs:
                errs.append(f"thread {num} #{i} ({g.function}): " + "; ".join(msgs))
    return errs


def format_swk(swk_threads: list[dict] | None) -> str:
    if not swk_threads:
        return "(no swk output)"
    lines = []
    for t in swk_threads:
        lines.append(f"thread {t.get('thread')} tid {t.get('tid')}: {t.get('stop_reason')}")
        for f in t.get("frames") or []:
            lines.append(f"  #{f.get('level'):<3} {T._hex(f.get('pc')):>18} sp={T._hex(f.get('sp'))} "
                         f"{f.get('kind'):6} {f.get('stepper')} {f.get('function')}")
    return "\n".join(lines)


def json_dump(obj) -> str:
    return json.dumps(obj, indent=1, default=str)[:4000]




# --------------------------------------------------------------------------
# where DWARF puts a variable (for values in vector registers, issue 16)
# --------------------------------------------------------------------------

#: AADWARF64: v0-v31 are DWARF registers 64-95.
VECTOR_DWARF = range(64, 96)


def load_bias(output: str, exe: Path) -> int | None:
    """The executable's load bias from gdb's ``info auxv`` (AT_ENTRY) in ``output``."""
    from elftools.elf.elffile import ELFFile
    m = re.search(r"^9\s+AT_ENTRY\s.*?(0x[0-9a-f]+)\s*$", output, re.M)
    if not m:
        return None
    with open(exe, "rb") as fh:
        return int(m.group(1), 16) - ELFFile(fh)["e_entry"]


def _needs_vector(ops) -> bool:
    for op in ops:
        name = op.op_name
        if name in ("DW_OP_regx", "DW_OP_bregx") and op.args and op.args[0] in VECTOR_DWARF:
            return True
        for a in op.args:
            if isinstance(a, list) and _needs_vector(a):
                return True
    return False


def vector_located(exe: Path, addr: int, function: str, var: str) -> bool:
    """Whether the DWARF of ``exe`` locates ``var`` of ``function`` at the unbiased ``addr`` in
    a vector register (v0-v31), directly or through an entry value: read with pyelftools,
    independently of swk.  Such a value is one no back-end reads yet (issue 16)."""
    from elftools.dwarf.dwarf_expr import DWARFExprParser
    from elftools.dwarf.locationlists import LocationEntry, LocationExpr, LocationParser
    from elftools.elf.elffile import ELFFile
    short = function.split("(")[0].split("::")[-1]
    with open(exe, "rb") as fh:
        dwarf = ELFFile(fh).get_dwarf_info()
        locparser = LocationParser(dwarf.location_lists())
        for cu in dwarf.iter_CUs():
            expr_parser = DWARFExprParser(cu.structs)
            for die in cu.iter_DIEs():
                if die.tag not in ("DW_TAG_formal_parameter", "DW_TAG_variable"):
                    continue
                if _die_name(die) != var or "DW_AT_location" not in die.attributes:
                    continue
                scope = die.get_parent()
                while scope is not None and scope.tag not in ("DW_TAG_subprogram", "DW_TAG_inlined_subroutine"):
                    scope = scope.get_parent()
                if scope is None or (_die_name(scope) or "").split("<")[0] != short.split("<")[0]:
                    continue
                if not _covers(dwarf, cu, scope, addr):
                    continue
                loc = locparser.parse_from_attribute(die.attributes["DW_AT_location"], cu["version"], die)
                if isinstance(loc, LocationExpr):
                    if _needs_vector(expr_parser.parse_expr(loc.loc_expr)):
                        return True
                    continue
                base = cu.get_top_DIE().attributes.get("DW_AT_low_pc")
                base = base.value if base is not None else 0
                for e in loc:
                    if isinstance(e, LocationEntry):
                        lo, hi = (e.begin_offset, e.end_offset) if getattr(e, "is_absolute", False) else \
                            (base + e.begin_offset, base + e.end_offset)
                        if lo <= addr < hi and _needs_vector(expr_parser.parse_expr(e.loc_expr)):
                            return True
                    elif hasattr(e, "base_address"):
                        base = e.base_address
    return False


def _die_name(die):
    seen = 0
    while die is not None and seen < 8:
        if "DW_AT_name" in die.attributes:
            return die.attributes["DW_AT_name"].value.decode()
        ref = die.attributes.get("DW_AT_abstract_origin") or die.attributes.get("DW_AT_specification")
        die = die.get_DIE_from_attribute(ref.name) if ref is not None else None
        seen += 1
    return None


def _covers(dwarf, cu, die, addr) -> bool:
    attrs = die.attributes
    if "DW_AT_low_pc" in attrs:
        lo = attrs["DW_AT_low_pc"].value
        hi = attrs.get("DW_AT_high_pc")
        if hi is None:
            return lo == addr
        hi = hi.value if hi.form == "DW_FORM_addr" else lo + hi.value
        return lo <= addr < hi
    if "DW_AT_ranges" in attrs:
        rl = dwarf.range_lists()
        if rl is None:
            return False
        base = cu.get_top_DIE().attributes.get("DW_AT_low_pc")
        base = base.value if base is not None else 0
        for r in rl.get_range_list_at_offset(attrs["DW_AT_ranges"].value, cu=cu):
            if hasattr(r, "begin_offset"):
                lo, hi = (r.begin_offset, r.end_offset) if getattr(r, "is_absolute", False) else \
                    (base + r.begin_offset, base + r.end_offset)
                if lo <= addr < hi:
                    return True
            elif hasattr(r, "base_address"):
                base = r.base_address
    return False
