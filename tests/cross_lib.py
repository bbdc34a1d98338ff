"""Foreign architectures under qemu-user: the corpus cross-built, run under qemu's gdb stub,
walked by gdb-multiarch and LLDB, and dumped as qemu's own core files (issues 15 and 26).

A ``CrossTarget`` says everything that differs from one architecture to the next: Debian's
cross compilers and C library (``/usr/<triplet>``, the sysroot), qemu's binary and CPU, the
name gdb's ``set architecture`` wants where the ELF file alone does not tell it, and whether
LLDB connects to qemu's stub.  Everything else is the same for every target and reuses
swk_testlib: the corpus sources (tests/corpus), ``build`` (with the target's compilers),
gdb's own walk (``native_commands`` / ``parse_native``), swk's JSON (``parse_swk_json``),
chains and comparisons.  What is here is running the programs:

* ``Qemu``: ``qemu-<arch> [-cpu CPU] -L SYSROOT -g PORT prog ARGS`` on a free port, in a
  directory of its own (where a crash writes the guest's ``qemu_<prog>_<date>_<pid>.core``),
  with one fixed environment, so every run of a program has the same stack addresses
  (qemu-user places the guest deterministically); always killed at the end.
* ``gdb_session``: one gdb-multiarch session on the stub: stop, gdb's own walk (swk not
  loaded yet), swk-bt -json -all, gdb's walk again with swk's unwinder registered, then the
  core: ``kill -ABRT`` to qemu and ``detach``, so qemu dumps the guest where it stopped.
* ``lldb_session``: LLDB on a fresh qemu (``platform select remote-linux``, ``gdb-remote``):
  swk-bt -json -all, LLDB's own pc of every thread, LLDB's own ``bt all``.

tests/aarch64_lib.py is AArch64's user of this; TARGETS has the targets of issue 26.
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

GDB = os.environ.get("SWK_GDB_MULTIARCH", "gdb-multiarch")
#: Frames gdb walks at most (a wrong walk may repeat a frame for ever).
BACKTRACE_LIMIT = 1500
#: The guest's environment: the same in every run, so stacks are at the same addresses.
GUEST_ENV = {"LC_ALL": "C", "PATH": "/usr/bin:/bin", "SWK_GUEST": "1"}
#: Markers between the parts of a gdb session's output.
HOOKED, CORE_NOW = "SWK-CROSS-HOOKED", "SWK-CROSS-CORE"
LLDB_BEGIN, LLDB_END, LLDB_BT = "SWK-CROSS-LLDB-BEGIN", "SWK-CROSS-LLDB-END", "SWK-CROSS-LLDB-BT"
PC0_TAG = "SWK-CROSS-PC0"

#: Build flags shared by every target.
O0 = ("-O0", "-g")
OG = ("-Og", "-g")
O2 = ("-O2", "-g", "-fomit-frame-pointer")
#: No CFI in the program's own code, no frame pointer, no DWARF (hard_cases.NOCFI).
NOCFI = ("-O2", "-fomit-frame-pointer", "-g0", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables")


@dataclasses.dataclass(frozen=True)
class CrossTarget:
    """One foreign architecture as Debian 12 packages it: ``gcc-12-<triplet>`` (the versioned
    compilers: the unversioned ones conflict with gcc-multilib), ``libc6-dev-<debian>-cross``
    (installed under /usr/<triplet>, the sysroot) and ``qemu-<qemu_arch>`` of qemu-user."""
    name: str                        # swk's and the tests' name: aarch64, ppc64le, ...
    triplet: str                     # GNU triplet: aarch64-linux-gnu
    debian: str                      # Debian's architecture in the cross packages' names: arm64
    qemu_arch: str                   # qemu-user's binary is qemu-<qemu_arch>
    qemu_cpu: str | None = None      # qemu's -cpu (None: qemu's default for the binary)
    gdb_arch: str | None = None      # gdb's `set architecture`, where the ELF file does not decide it
    lldb: bool = True                # LLDB 22's gdb-remote works on qemu's stub for this target
    lldb_note: str = ""              # how (or why not)
    qemu_core: bool = True           # qemu-user writes a core of the guest when it dies of a signal
    qemu_core_note: str = ""
    tag: str = ""                    # prefix of build and run directories (default: name)

    @property
    def prefix(self) -> str:
        return self.tag or self.name

    @property
    def sysroot(self) -> str:
        return f"/usr/{self.triplet}"

    @property
    def gcc(self) -> str:
        return f"{self.triplet}-gcc-12"

    @property
    def gxx(self) -> str:
        return f"{self.triplet}-g++-12"

    @property
    def qemu(self) -> str:
        return f"qemu-{self.qemu_arch}"

    def tool(self, name: str) -> str:
        """A binutils program of the target: ``strip`` -> ``<triplet>-strip``."""
        return f"{self.triplet}-{name}"

    @property
    def compilers(self) -> tuple[str, str, str, str]:
        """(C compiler, its package, C++ compiler, its package): swk_testlib.build's ``compilers``."""
        return (self.gcc, f"gcc-12-{self.triplet}", self.gxx, f"g++-12-{self.triplet}")

    @property
    def packages(self) -> dict[str, str]:
        """Program -> the Debian package that installs it."""
        c = self.compilers
        return {c[0]: c[1], c[2]: c[3], self.qemu: "qemu-user", GDB: "gdb-multiarch",
                self.tool("objdump"): f"binutils-{self.triplet}"}

    @property
    def libc_package(self) -> str:
        return f"libc6-dev-{self.debian}-cross"

    @property
    def qemu_argv(self) -> list[str]:
        """qemu-user with the target's CPU and C library (no stub, no program yet)."""
        return [self.qemu, *(["-cpu", self.qemu_cpu] if self.qemu_cpu else []), "-L", self.sysroot]


#: ``-cpu max`` has pointer authentication (the AArch64 corpus is also built with
#: ``-mbranch-protection=pac-ret+leaf``); SVE is off because GDB 13 misreads signal frames with SVE on.
AARCH64 = CrossTarget("aarch64", "aarch64-linux-gnu", "arm64", "aarch64", qemu_cpu="max,sve=off", tag="a64")
#: Issue 26's targets: PowerPC64 little-endian (ELFv2) and big-endian (ELFv1: function descriptors
#: in .opd), RISC-V 64, s390x (big-endian).  gdb-multiarch needs no `set architecture` on any of
#: their stubs (the program's ELF header decides it); LLDB 22 and qemu 7.2 differ per target, as
#: each note says (seen on this machine).
PPC64LE = CrossTarget("ppc64le", "powerpc64le-linux-gnu", "ppc64el", "ppc64le")
PPC64 = CrossTarget("ppc64", "powerpc64-linux-gnu", "ppc64", "ppc64",
                    lldb_note="LLDB 22 connects but names no function of an ELFv1 program: its `bt` has "
                              "frame 0 alone, and `breakpoint set -n` takes the .opd descriptor (it never "
                              "hits): stop at gdb's pc (lldb_session's stop_pc)")
RISCV64 = CrossTarget("riscv64", "riscv64-linux-gnu", "riscv64", "riscv64", qemu_core=False,
                      qemu_core_note="qemu-riscv64 7.2 writes no core of its guest (its linux-user has no "
                                     "core dumps for RISC-V), and gdb's gcore over the stub writes registers "
                                     "too short to read")
S390X = CrossTarget("s390x", "s390x-linux-gnu", "s390x", "s390x", lldb=False,
                    lldb_note="LLDB 22 crashes (SIGSEGV in liblldb) at `process continue` on qemu-s390x's stub")
TARGETS = {t.name: t for t in (AARCH64, PPC64LE, PPC64, RISCV64, S390X)}


def need_machine(target: CrossTarget) -> None:
    """The target's cross compilers, qemu-user, gdb-multiarch and the cross libc, or a skip
    (under CI a failure) naming the package."""
    for tool, package in target.packages.items():
        S.need_tool(tool, package)
    S.need_path(f"{target.sysroot}/lib/libc.so.6", target.libc_package, f"the {target.name} C library")


def build(target: CrossTarget, srcs: Sequence[str], name: str, cflags: Sequence[str],
          ldflags: Sequence[str] = (), post: Sequence = ()) -> Path:
    return T.build(srcs, name, cflags, ldflags, [list(c) for c in post] or None, compilers=target.compilers)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------
# cases
# --------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class CrossCase:
    """A corpus program cross-built for ``target``, how to stop it, and its known chain per
    gdb thread.

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
    twin: "CrossCase | None" = None
    interrupted: tuple[str, ...] = ()
    lldb: bool = True
    post: tuple = ()                    # post steps (argv tuples), see swk_testlib.build
    timeout: float = 240
    target: CrossTarget | None = None   # None: a subclass's default (A64Case: AArch64)

    @property
    def arch(self) -> CrossTarget:
        return self.target

    @property
    def exe_name(self) -> str:
        return f"{self.arch.prefix}-{self.id}"

    def exe(self) -> Path:
        return build(self.arch, self.srcs, self.exe_name, self.cflags, self.ldflags, self.post)

    def lib_path(self) -> Path | None:
        if not self.lib:
            return None
        return build(self.arch, self.lib[0], self.lib[2], self.lib[1], ("-shared",))

    def args(self) -> list[str]:
        lib = self.lib_path()
        return [a.format(lib=lib) for a in self.run_args]


def gdb_stop_cmds(case: CrossCase) -> list[str]:
    return [*case.pre, "continue"]


# --------------------------------------------------------------------------
# qemu
# --------------------------------------------------------------------------

def _core_limit():
    # the guest's core (qemu writes it when the guest dies of a signal) needs a limit above
    # zero; qemu's own host core, written as it dies too, is cut short at this size
    resource.setrlimit(resource.RLIMIT_CORE, (64 << 20, 64 << 20))


class Qemu:
    """qemu-user running ``exe`` for ``target`` under its gdb stub on a free port, in a
    directory of its own."""

    def __init__(self, target: CrossTarget, exe: Path, args: Sequence[str] = (), stub: bool = True):
        self.target = target
        self.exe, self.args, self.stub = Path(exe), list(args), stub
        T.BUILD.mkdir(parents=True, exist_ok=True)
        self.dir = Path(tempfile.mkdtemp(prefix=f"{target.prefix}-run-", dir=T.BUILD))
        self.proc = None
        self.port = None
        self.log = self.dir / "qemu.log"

    def start(self) -> "Qemu":
        for _attempt in range(5):
            self.port = free_port()
            argv = list(self.target.qemu_argv)
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
        """The guest's core moved to tests/_build/<prefix>-cores/NAME.core (replacing an older one)."""
        core = self.core()
        if core is None:
            return None
        dest = T.BUILD / f"{self.target.prefix}-cores" / f"{name}.core"
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

def gdb_argv(target: CrossTarget, exe: Path, port: int, commands: Sequence[str]) -> list[str]:
    argv = [GDB, "-nx", "-batch", "-q",
            "-iex", "set debuginfod enabled off", "-iex", "set pagination off",
            "-iex", "set confirm off", "-iex", "set width 0", "-iex", "set height 0",
            "-iex", "set backtrace past-main on", "-iex", "set print thread-events off",
            "-iex", f"set backtrace limit {BACKTRACE_LIMIT}"]
    if target.gdb_arch:
        argv += ["-iex", f"set architecture {target.gdb_arch}"]
    argv += ["-ex", f"set solib-search-path {target.sysroot}/lib", "-ex", f"file {exe}",
             "-ex", f"target remote 127.0.0.1:{port}"]
    for c in commands:
        argv += ["-ex", c]
    return argv


#: tgkill's system call number on the machine running the tests (qemu runs on it).
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


def gdb_session(case: CrossCase, extra: Sequence[str] = (), swk_cmd: str = T.swk_bt_command(),
                make_core: bool | None = None) -> GdbSession:
    """One session: stop, gdb's own walk, swk loaded, swk-bt, gdb's walk with swk's unwinder,
    then (``make_core``; by default where the target's qemu writes cores) the guest dumped by
    qemu at that very stop."""
    if make_core is None:
        make_core = case.arch.qemu_core
    exe = case.exe()
    with Qemu(case.arch, exe, case.args()) as q:
        cmds = [*gdb_stop_cmds(case), *extra, *T.native_commands(True),
                f"source {T.GDB_INIT}", swk_cmd,
                f"echo {HOOKED}\\n", *T.native_commands(True)]
        if make_core:
            cmds += [f"echo {CORE_NOW}\\n", abort_command(q.proc.pid), "detach"]
        p = T.run_cmd(gdb_argv(case.arch, exe, q.port, cmds), timeout=case.timeout)
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


def gdb_commands_session(case: CrossCase, commands: Sequence[str]) -> str:
    """gdb-multiarch on the stopped program running ``commands`` (swk not loaded unless
    they source it); its output."""
    exe = case.exe()
    with Qemu(case.arch, exe, case.args()) as q:
        return T.run_cmd(gdb_argv(case.arch, exe, q.port, [*gdb_stop_cmds(case), *commands]),
                         timeout=case.timeout).stdout


def swk_cli(target: CrossTarget, core: Path, exe: Path, extra: Sequence[str] = (),
            sysroot: bool = True) -> tuple[list | None, str, int]:
    """``python -m swk_plugin bt --core CORE --exe EXE [--sysroot SYSROOT] --json --all``."""
    args = ["bt", "--core", str(core), "--exe", str(exe), "--json", "--all", *extra]
    if sysroot:
        args[5:5] = ["--sysroot", target.sysroot]
    p = T.run_swk_cli(args)
    try:
        res = T.parse_swk_json(p.stdout)
    except T.OutputError:
        res = None
    return res, p.stdout, p.returncode


# --------------------------------------------------------------------------
# LLDB
# --------------------------------------------------------------------------

def lldb_stop_cmds(case: CrossCase, stop_pc: int | None = None) -> list[str]:
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


def lldb_session(case: CrossCase, lldb: str, after: Sequence[str] = (), stop_pc: int | None = None) -> str:
    """LLDB on qemu's stub (no platform sysroot: LLDB then lists the executable alone), stopped
    as gdb stops; then swk-bt -all -json, LLDB's pc of every thread and ``bt all``."""
    if not case.arch.lldb:
        raise T.HarnessError(f"no LLDB session on qemu-{case.arch.qemu_arch}'s stub: {case.arch.lldb_note}")
    exe = case.exe()
    init = T.REPO / "lldb_init.py"
    after = list(after) or [
        f"script print('{LLDB_BEGIN}')", "swk-bt -all -json",
        f"script for t in lldb.process: print('{PC0_TAG}', t.GetIndexID(), t.GetThreadID(), "
        "t.GetFrameAtIndex(0).GetPC())",
        f"script print('{LLDB_BT}')", "bt all", f"script print('{LLDB_END}')"]
    with Qemu(case.arch, exe, case.args()) as q:
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


def known_chain_errors(case: CrossCase, chains_by_thread: dict[int, list]) -> list[str]:
    return [f"known chain: {m}" for m in T.expected_mismatches(chains_by_thread, T.Case(
        case.id, case.srcs, case.cflags, case.expected))]


def is_known_chain(case: CrossCase, native: dict) -> bool:
    return not T.expected_mismatches({n: T.chain(fr) for n, fr in native.items()},
                                     T.Case(case.id, case.srcs, case.cflags, case.expected))


def right_prefix(case: CrossCase, native: dict) -> dict[int, int]:
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


def compare_frames(oracle: dict, swk_threads: list[dict], case: CrossCase | None, upto: dict[int, int] | None = None,
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


def load_bias(output: str, exe: Path) -> int | None:
    """The executable's load bias from gdb's ``info auxv`` (AT_ENTRY) in ``output``."""
    from elftools.elf.elffile import ELFFile
    m = re.search(r"^9\s+AT_ENTRY\s.*?(0x[0-9a-f]+)\s*$", output, re.M)
    if not m:
        return None
    with open(exe, "rb") as fh:
        return int(m.group(1), 16) - ELFFile(fh)["e_entry"]
