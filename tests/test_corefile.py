"""The pure-Python core-file back-end (swk_plugin/linux/coredump.py, swk_plugin/backends/core.py).

Real cores are made at test time (gcc + gdb's gcore, and the kernel's own
dump when core_pattern allows it) and everything the back-end reports is
checked against what gdb says about the same core.  Synthetic cores written
here cover the parser's corners (PN_XNUM, sparse 100s-of-MB files, exact
register layout) and malformed input.
"""
import os
import re
import resource
import shutil
import struct
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

from swk_plugin.arch import known_names

import swk_suite as S

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from swk_plugin.arch.x86_64 import regsets as _regsets  # noqa: E402
from swk_plugin.linux import auxv as _auxv, coredump as _coredump  # noqa: E402
from swk_plugin.backends.core import CoreProcessState  # noqa: E402
from swk_plugin.linux.coredump import CoreFile  # noqa: E402
from swk_plugin.errors import BadFileError, MemoryReadError  # noqa: E402

#: The constants of the core format's layers: auxv (AT_*), notes (NT_*), x86-64 register sets.
cf = types.SimpleNamespace(**{k: v for m in (_auxv, _coredump, _regsets) for k, v in vars(m).items()
                              if k.isupper()})

GDB = shutil.which(os.environ.get("SWK_GDB", "gdb"))
GCC = shutil.which("gcc")

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="ELF cores are Linux-only")

THREADS_C = r"""
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static pthread_barrier_t bar;
static const char banner[] = "swk core test rodata";
volatile const char *keep;

__attribute__((noinline)) void crash(int *p) { *p = 42; }
__attribute__((noinline)) void level2(int *p) { keep = banner; crash(p); }
__attribute__((noinline)) void level1(int *p) { level2(p); __asm__ volatile("" ::: "memory"); }

static void *worker(void *arg) {
    pthread_barrier_wait(&bar);
    if (arg) { usleep(50000); level1((int *)0); }
    for (;;) pause();
    return arg;
}

int main(int argc, char **argv) {
    int in_worker = argc > 1 && strcmp(argv[1], "worker") == 0;
    pthread_t t[3];
    pthread_barrier_init(&bar, NULL, 4);
    for (long i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, worker, (void *)(long)(in_worker && i == 1));
    pthread_barrier_wait(&bar);
    usleep(20000);
    if (!in_worker) level1((int *)0);
    for (;;) pause();
    return 0;
}
"""

SIMPLE_C = r"""
#include <signal.h>
#include <stdio.h>
__attribute__((noinline)) void crash(void) { raise(SIGABRT); }
__attribute__((noinline)) void level1(void) { crash(); __asm__ volatile("" ::: "memory"); }
int main(void) { puts("simple"); level1(); return 0; }
"""


# --- building, crashing, asking gdb ---------------------------------------------------------
def _run(argv, timeout=120, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)


def _gcc(src_text, out, flags=()):
    src = out.with_suffix(".c")
    src.write_text(src_text)
    res = _run([GCC, "-g", "-O0", "-fno-omit-frame-pointer", *flags, str(src), "-o", str(out), "-pthread"])
    if res.returncode != 0:
        pytest.fail(f"cannot build {out.name} with gcc {' '.join(flags)}: {res.stderr.strip()[:300]}",
                    pytrace=False)
    return out


def _gdb_argv(prog, cmds, core=None, args=()):
    argv = [GDB, "-nx", "-batch", "-iex", "set debuginfod enabled off", "-iex", "set width 0"]
    for c in cmds:
        argv += ["-ex", c]
    if core is not None:
        argv += [str(prog), str(core)]
    else:
        argv += ["--args", str(prog), *args]
    return argv


def _gcore(prog, core, args=(), stop=("run",)):
    res = _run(_gdb_argv(prog, [*stop, f"gcore {core}", "kill"], args=args), timeout=180)
    if not Path(core).exists():
        pytest.fail(f"gcore did not write {core}:\n{res.stdout}\n{res.stderr}")
    return Path(core)


#: how to get kernel core files where the tests cannot
KERNEL_CORES = ("the kernel must write core files to disk: sysctl kernel.core_pattern=core (as root; "
                "not a pipe to systemd-coredump or apport)")


def _core_pattern():
    try:
        return Path("/proc/sys/kernel/core_pattern").read_text().strip()
    except OSError:
        return None


def _kernel_core(prog, workdir, args=()):
    """Crash ``prog`` for real and collect the kernel's core, or skip with the reason."""
    pattern = _core_pattern()
    if pattern is None:
        S.missing("kernel core files: no /proc/sys/kernel/core_pattern", KERNEL_CORES)
    if pattern.startswith("|"):
        S.missing(f"kernel core files: core_pattern pipes cores to a program ({pattern.split()[0]})",
                  KERNEL_CORES)
    soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
    if hard == 0:
        S.missing("kernel core files: the RLIMIT_CORE hard limit is 0", "raise it (ulimit -Hc unlimited)")
    where = Path(os.path.dirname(pattern)) if os.path.isabs(pattern) else Path(workdir)
    if not where.is_dir():
        S.missing(f"kernel core files: the core_pattern directory {where} does not exist", KERNEL_CORES)
    before = set(os.listdir(where))

    def limits():
        resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))
    start = time.time()
    proc = subprocess.run([str(prog), *args], cwd=workdir, preexec_fn=limits, capture_output=True, timeout=60)
    if proc.returncode >= 0:
        pytest.fail(f"{prog} did not crash (exit {proc.returncode})")
    for _ in range(50):
        new = [where / n for n in set(os.listdir(where)) - before]
        new = [p for p in new if p.is_file() and p.stat().st_mtime >= start - 1]
        for p in new:
            with open(p, "rb") as f:
                head = f.read(18)
            if head[:4] == b"\x7fELF" and head[16] == 4:
                dest = Path(workdir) / f"kernel.{prog.name}.core"
                shutil.move(str(p), dest)
                return dest
        time.sleep(0.1)
    S.missing(f"kernel core files: the kernel wrote none (core_pattern {pattern!r}, RLIMIT_CORE {hard})",
              KERNEL_CORES)


class GdbView:
    """What gdb says about a core, parsed from one batch run."""

    def __init__(self, prog, core):
        cmds = []
        for name, cmd in [("threads", "info threads"),
                          ("regs", "thread apply all info registers rip rsp rbp"),
                          ("stack", "x/8gx $rsp"),
                          ("main", "x/16xb main"),
                          ("mainaddr", "p/x &main"),
                          ("libs", "info sharedlibrary"),
                          ("auxv", "info auxv")]:
            cmds += [f"echo @@{name}\\n", "thread 1" if name == "stack" else "echo", cmd]
        cmds += ["echo @@pc2\\n", "thread 2", "x/16xb $pc", "echo @@end\\n"]
        res = _run(_gdb_argv(prog, cmds, core=core), timeout=180)
        self.output = res.stdout + res.stderr
        sections, cur = {}, None
        for line in res.stdout.splitlines():
            if line.startswith("@@"):
                cur = line[2:].strip()
                sections[cur] = []
            elif cur:
                sections[cur].append(line)
        self.sections = sections
        self.thread_order = []  # [(gdb num, tid)]
        for line in sections.get("threads", ()):
            m = re.match(r"^\*?\s+(\d+)\s+(?:Thread 0x[0-9a-f]+ \()?(?:LWP|process) (\d+)", line)
            if m:
                self.thread_order.append((int(m.group(1)), int(m.group(2))))
        self.regs = {}  # tid -> {name: value}
        tid = None
        for line in sections.get("regs", ()):
            m = re.match(r"^Thread (\d+) \(.*?(?:LWP|process) (\d+)\)", line)
            if m:
                tid = int(m.group(2))
                self.regs[tid] = {}
                continue
            m = re.match(r"^(rip|rsp|rbp)\s+(0x[0-9a-f]+)", line)
            if m and tid is not None:
                self.regs[tid][m.group(1)] = int(m.group(2), 16)
        self.stack = self._words(sections.get("stack", ()), 8)
        self.main_bytes = self._words(sections.get("main", ()), 1)
        self.pc2_bytes = self._words(sections.get("pc2", ()), 1)
        self.main_addr = None
        for line in sections.get("mainaddr", ()):
            m = re.match(r"^\$\d+ = (0x[0-9a-f]+)", line)
            if m:
                self.main_addr = int(m.group(1), 16)
        self.libs = []  # (from, path)
        for line in sections.get("libs", ()):
            m = re.match(r"^(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+(?:Yes|No)(?: \(\*\))?\s+(/\S.*)$", line)
            if m:
                self.libs.append((int(m.group(1), 16), m.group(3).strip()))
        self.auxv = {}
        self.auxv_strings = {}
        for line in sections.get("auxv", ()):
            m = re.match(r'^(\d+)\s+.*?\s(0x[0-9a-f]+|\d+)(?:\s+"(.*)")?\s*$', line)
            if m:
                key = int(m.group(1))
                self.auxv[key] = int(m.group(2), 0)
                if m.group(3) is not None:
                    self.auxv_strings[key] = m.group(3)

    @staticmethod
    def _words(lines, size):
        out = b""
        for line in lines:
            if ":" not in line:
                continue
            for tok in line.split(":", 1)[1].split():
                if tok.startswith("0x"):
                    out += int(tok, 16).to_bytes(size, "little")
        return out


class Case:
    def __init__(self, name, prog, core, kind):
        self.name, self.prog, self.core, self.kind = name, Path(prog), Path(core), kind
        self._gdb = None

    @property
    def gdb(self):
        if self._gdb is None:
            self._gdb = GdbView(self.prog, self.core)
        return self._gdb

    def __repr__(self):
        return f"<Case {self.name}>"


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    S.need_tools("gdb", "gcc")
    return tmp_path_factory.mktemp("corefile")


_cases = {}


def _case(work, name):
    """Build the program and core of one named case once per module."""
    if name in _cases:
        return _cases[name]
    d = work / name
    d.mkdir(exist_ok=True)
    if name in ("gcore_main", "gcore_worker", "gcore_break", "kernel_worker"):
        prog = _gcc(THREADS_C, d / "threads")
        if name == "gcore_main":
            core = _gcore(prog, d / "core")
        elif name == "gcore_worker":
            core = _gcore(prog, d / "core", args=("worker",))
        elif name == "gcore_break":
            core = _gcore(prog, d / "core", stop=("break crash", "run"))
        else:
            core = _kernel_core(prog, d, args=("worker",))
        kind = "threads"
    elif name in ("nopie", "static", "static_pie", "kernel_nopie"):
        flags = {"nopie": ["-no-pie"], "static": ["-static"], "static_pie": ["-static-pie"],
                 "kernel_nopie": ["-no-pie"]}[name]
        prog = _gcc(SIMPLE_C, d / "simple", flags)
        core = _kernel_core(prog, d) if name.startswith("kernel") else _gcore(prog, d / "core")
        kind = "simple"
    else:
        raise KeyError(name)
    _cases[name] = c = Case(name, prog, core, kind)
    return c


@pytest.fixture(scope="module", autouse=True)
def _reset_cases():
    _cases.clear()
    yield
    _cases.clear()


THREAD_CASES = ["gcore_main", "gcore_worker", "gcore_break", "kernel_worker"]
ALL_CASES = THREAD_CASES + ["nopie", "static", "static_pie", "kernel_nopie"]


@pytest.fixture(params=THREAD_CASES)
def tcase(request, work):
    return _case(work, request.param)


@pytest.fixture(params=ALL_CASES)
def anycase(request, work):
    return _case(work, request.param)


def _elf_symbol(path, name):
    from elftools.elf.elffile import ELFFile
    with open(path, "rb") as f:
        elf = ELFFile(f)
        for secname in (".symtab", ".dynsym"):
            sec = elf.get_section_by_name(secname)
            if sec is None:
                continue
            syms = sec.get_symbol_by_name(name)
            if syms:
                return syms[0]["st_value"]
    return None


def _unstored(core, path):
    """An address mapped from ``path`` whose bytes the core itself does not hold."""
    for m in core.mappings_of(path):
        for a in range(m.start, m.end, 4096):
            seg = core.segment_at(a)
            if seg is None or a - seg.vaddr >= seg.filesz:
                return a, m
    return None, None


# --- threads and registers -----------------------------------------------------------------
def test_threads_match_gdb(tcase):
    ps = CoreProcessState(tcase.core)
    g = tcase.gdb
    assert g.thread_order, g.output
    assert ps.get_thread_ids() == [tid for _num, tid in g.thread_order]
    assert len(g.thread_order) == 4
    for num, tid in g.thread_order:
        assert ps.thread_label(tid) == (num, tid)
        regs = ps.get_registers(tid)
        want = g.regs[tid]
        assert (regs[16], regs[7], regs[6]) == (want["rip"], want["rsp"], want["rbp"]), tid
    first = ps.core.threads[0]
    if tcase.name == "gcore_break":
        assert first.signal == 5  # SIGTRAP at the breakpoint
    else:
        assert first.signal == 11
        assert ps.signal_info.signo == 11
        assert ps.signal_info.addr == 0
        assert "SIGSEGV" in str(ps.signal_info)
    if tcase.name.endswith("worker"):
        # the thread that crashed is listed (and numbered by gdb) first, the main thread is not it
        assert ps.get_thread_ids()[0] != ps.get_process_id()
    else:
        assert ps.get_thread_ids()[0] == ps.get_process_id()
    assert ps.get_process_id() in ps.get_thread_ids()
    assert ps.get_default_thread() == ps.get_thread_ids()[0]


def test_registers_full_set(tcase):
    ps = CoreProcessState(tcase.core)
    for tid in ps.get_thread_ids():
        regs = ps.get_registers(tid)
        assert all(r in regs for r in range(17))
        for key in ("fs_base", "gs_base", "eflags", "orig_rax"):
            assert key in regs
        assert regs["fs_base"] != 0  # every glibc thread has a TLS block
        assert ps.get_reg_value("rsp", tid) == regs[7]
    t = ps.core.threads[0]
    assert t.fpregs is not None and len(t.fpregs) == 512


def test_unknown_thread(tcase):
    from swk_plugin.errors import RegisterError
    ps = CoreProcessState(tcase.core)
    with pytest.raises(RegisterError):
        ps.get_registers(999999999)
    assert ps.thread_label(999999999) == (None, 999999999)


# --- memory ----------------------------------------------------------------------------------
def test_stack_matches_gdb(tcase):
    ps = CoreProcessState(tcase.core)
    g = tcase.gdb
    rsp = ps.get_registers(ps.get_thread_ids()[0])[7]
    assert len(g.stack) == 64, g.output
    assert ps.core.read(rsp, 64) == g.stack
    assert ps.read_memory(rsp, 64) == g.stack
    assert ps.read_pointer(rsp) == int.from_bytes(g.stack[:8], "little")


def test_code_reads_match_gdb_and_files(tcase):
    ps = CoreProcessState(tcase.core)
    core = ps.core
    g = tcase.gdb
    assert g.main_addr and len(g.main_bytes) == 16, g.output
    assert core.read(g.main_addr, 16) == g.main_bytes
    # the same bytes are in the executable file
    aout = ps.library_state.get_aout()
    assert aout.module.read_vaddr(g.main_addr - aout.base, 16) == g.main_bytes
    # thread 2 sits in libc's pause(): code the core may not hold
    pc2 = ps.get_registers(ps.get_thread_ids()[1])[16]
    assert len(g.pc2_bytes) == 16
    assert core.read(pc2, 16) == g.pc2_bytes
    libc = ps.library_state.get_library_at_addr(pc2)
    assert libc is not None and os.path.basename(libc.path).startswith("libc")
    assert libc.module.read_vaddr(pc2 - libc.base, 16) == g.pc2_bytes


def test_gcore_break_has_no_breakpoint_bytes(work):
    case = _case(work, "gcore_break")
    ps = CoreProcessState(case.core)
    pc = ps.get_registers()[16]
    aout = ps.library_state.get_aout()
    assert aout.module.read_vaddr(pc - aout.base, 8) == ps.read_memory(pc, 8)
    assert _elf_symbol(case.prog, "crash") + aout.base <= pc < _elf_symbol(case.prog, "crash") + aout.base + 32


def test_kernel_core_text_comes_from_files(work):
    case = _case(work, "kernel_worker")
    core = CoreFile(case.core)
    exe = core.exe_mapped_path
    addr, m = _unstored(core, exe)
    assert addr is not None, "the kernel dumped all of the executable; nothing to read from the file"
    with open(exe, "rb") as f:
        f.seek(m.offset + addr - m.start)
        assert core.read(addr, 64) == f.read(64)


def test_unmapped_reads_raise(anycase):
    ps = CoreProcessState(anycase.core)
    core = ps.core
    for addr in (0, 0x1000, 0x10000):
        with pytest.raises(MemoryReadError):
            core.read(addr, 8)
        with pytest.raises(MemoryReadError):
            ps.read_memory(addr, 8)
        assert not ps.is_readable(addr)
    with pytest.raises(MemoryReadError):
        core.read(-8, 8)
    with pytest.raises(MemoryReadError):
        core.read((1 << 64) - 4, 8)
    # a gap between two regions, and a read that runs off the end of one
    regions = ps.memory_regions()
    gaps = [(a.end, b.start) for a, b in zip(regions, regions[1:]) if b.start > a.end]
    assert gaps
    lo, _hi = gaps[0]
    with pytest.raises(MemoryReadError):
        core.read(lo, 1)
    with pytest.raises(MemoryReadError):
        core.read(lo - 8, 16)
    try:  # the end of the region below: readable or not, never another exception
        assert len(core.read(lo - 8, 8)) == 8
    except MemoryReadError:
        pass
    assert core.read(lo, 0) == b""


def test_reads_across_boundaries(anycase):
    """Reads spanning two PT_LOADs, or a PT_LOAD and file-backed memory, are joined."""
    ps = CoreProcessState(anycase.core)
    core = ps.core
    regions = ps.memory_regions()
    checked = 0
    for a, b in zip(regions, regions[1:]):
        if a.end != b.start or not (a.readable and b.readable):
            continue
        try:
            left, right = core.read(a.end - 8, 8), core.read(b.start, 8)
        except MemoryReadError:
            continue
        assert core.read(a.end - 8, 16) == left + right
        assert ps.read_memory(a.end - 8, 16) == left + right
        checked += 1
    assert checked >= 2


def test_regions(anycase):
    ps = CoreProcessState(anycase.core)
    regions = ps.memory_regions()
    starts = [r.start for r in regions]
    assert starts == sorted(starts)
    for a, b in zip(regions, regions[1:]):
        assert a.end <= b.start
    rsp = ps.get_registers()[7]
    rip = ps.get_registers()[16]
    assert any(rsp in r and r.writable for r in regions)
    code = [r for r in regions if rip in r]
    assert code and code[0].executable
    exe = ps.core.exe_mapped_path
    assert any(r.name == exe and r.executable for r in regions)
    vdso = ps.core.auxv.get(cf.AT_SYSINFO_EHDR)
    if vdso:
        assert any(r.name == "[vdso]" and r.start == vdso for r in regions)


# --- libraries -------------------------------------------------------------------------------
def _by_real(libs):
    return {os.path.realpath(lib.path): lib for lib in libs if not lib.path.startswith("[")}


def test_libraries_match_gdb(anycase):
    ps = CoreProcessState(anycase.core)
    libs = ps.library_state.get_libraries()
    g = anycase.gdb
    names = [os.path.basename(lib.path) for lib in libs]
    aout = ps.library_state.get_aout()
    assert libs[0] is aout and aout.is_aout
    assert os.path.realpath(aout.path) == os.path.realpath(anycase.prog)
    assert "[vdso]" in names
    if anycase.name in ("static", "static_pie"):
        assert len(libs) == 2, libs
        assert not g.libs
    else:
        assert any(n.startswith("libc.so") for n in names), names
        assert any(n.startswith("ld-linux") for n in names), names
        assert len(libs) == 4, libs
        assert ps.library_state.get_libc() is not None
    # gdb's From column is the library's .text start
    real = _by_real(libs)
    assert len(g.libs) == len(libs) - 2
    for frm, path in g.libs:
        lib = real[os.path.realpath(path)]
        text = lib.module.section(".text")
        assert lib.base + text.addr == frm, (path, hex(lib.base))
        assert any(lo <= frm < hi for lo, hi in lib.ranges)
    # the executable: where gdb puts main
    main = _elf_symbol(anycase.prog, "main")
    assert aout.base + main == g.main_addr
    if anycase.name in ("nopie", "static", "kernel_nopie"):
        assert aout.base == 0
    assert ps.library_state.get_library_at_addr(g.main_addr) is aout
    assert ps.get_executable_path() == aout.path


def test_vdso(anycase):
    ps = CoreProcessState(anycase.core)
    g = anycase.gdb
    ehdr = g.auxv[cf.AT_SYSINFO_EHDR]
    vdso = [lib for lib in ps.library_state.get_libraries() if lib.path == "[vdso]"]
    assert len(vdso) == 1
    vdso = vdso[0]
    mod = vdso.module
    assert mod is not None, vdso.module_error
    assert vdso.base + mod.first_load_vaddr() == ehdr
    assert mod.section(".text") is not None
    dynsym = mod.elf.get_section_by_name(".dynsym")
    names = {s.name for s in dynsym.iter_symbols()}
    assert "__vdso_clock_gettime" in names
    assert vdso.ranges and all(lo >= ehdr for lo, _ in vdso.ranges)
    text = mod.section(".text")
    assert ps.library_state.get_library_at_addr(vdso.base + text.addr) is vdso


def test_library_ranges_are_code(anycase):
    ps = CoreProcessState(anycase.core)
    for lib in ps.library_state.get_libraries():
        assert lib.ranges, lib
        for lo, hi in lib.ranges:
            assert lo < hi
            region = [r for r in ps.memory_regions() if r.start <= lo < r.end]
            assert region and region[0].executable, (lib, hex(lo))
    for tid in ps.get_thread_ids():
        pc = ps.get_registers(tid)[16]
        assert ps.library_state.get_library_at_addr(pc) is not None, hex(pc)


def test_auxv_matches_gdb(anycase):
    core = CoreFile(anycase.core)
    g = anycase.gdb
    assert g.auxv, g.output
    for key, value in g.auxv.items():
        if key == cf.AT_NULL:
            continue
        assert core.auxv[key] == value, key
    for key in (cf.AT_SYSINFO_EHDR, cf.AT_ENTRY, cf.AT_PHDR, cf.AT_EXECFN):
        assert key in core.auxv
    if anycase.name in ("static", "kernel_nopie", "nopie"):
        assert core.auxv[cf.AT_ENTRY] == _elf_entry(anycase.prog)
    if anycase.name in ("static", "static_pie"):
        assert core.auxv.get(cf.AT_BASE, 0) == 0
    else:
        assert core.auxv[cf.AT_BASE] != 0
    assert core.execfn == g.auxv_strings[cf.AT_EXECFN]


def _elf_entry(path):
    with open(path, "rb") as f:
        return struct.unpack_from("<Q", f.read(64), 24)[0]


def test_process_info(anycase):
    core = CoreFile(anycase.core)
    assert core.exe_name == anycase.prog.name[:15]
    assert core.psargs.split()[0].endswith(anycase.prog.name)
    assert core.pid in [t.tid for t in core.threads]
    assert core.mappings and all(isinstance(m, tuple) and len(m) == 4 for m in core.mappings)
    assert core.exe_mapped_path == os.path.realpath(anycase.prog)
    assert not core.warnings
    core.close()


# --- exe override and sysroot -----------------------------------------------------------------
def test_exe_path_override(work, tmp_path):
    src = _case(work, "gcore_worker")
    prog = tmp_path / "a" / "threads"
    prog.parent.mkdir()
    shutil.copy(src.prog, prog)
    core = _gcore(prog, tmp_path / "core", args=("worker",))
    moved = tmp_path / "b" / "renamed"
    moved.parent.mkdir()
    prog.rename(moved)

    plain = CoreProcessState(core)
    aout = plain.library_state.get_aout()
    assert aout.path == os.path.realpath(prog) and aout.is_aout
    assert aout.module is None and aout.module_error
    base = aout.base
    addr, m = _unstored(plain.core, aout.mapped_path)
    assert addr is not None, "gcore stored all of the executable"
    with pytest.raises(MemoryReadError) as err:
        plain.core.read(addr, 16)
    assert aout.mapped_path in str(err.value)

    ps = CoreProcessState(core, exe_path=moved)
    aout = ps.library_state.get_aout()
    assert aout.path == str(moved) and aout.is_aout
    assert aout.base == base
    assert aout.module is not None
    with open(moved, "rb") as f:
        f.seek(m.offset + addr - m.start)
        assert ps.core.read(addr, 16) == f.read(16)
    # the other libraries are untouched by the override
    assert {os.path.basename(lib.path) for lib in ps.library_state.get_libraries()[1:]} == \
        {os.path.basename(lib.path) for lib in plain.library_state.get_libraries()[1:]}


@pytest.mark.parametrize("name", ["gcore_worker", "kernel_worker"])
def test_sysroot(work, tmp_path, name):
    case = _case(work, name)
    plain = CoreProcessState(case.core)
    libc = plain.library_state.get_libc()
    addr, m = _unstored(plain.core, libc.mapped_path)
    assert addr is not None

    sysroot = tmp_path / "sysroot"
    for path in plain.core.mapped_paths():
        if os.path.isfile(path):
            dest = sysroot / path.lstrip("/")
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, dest)
    # mark the sysroot's libc so reads from it are recognisable
    with open(sysroot / libc.mapped_path.lstrip("/"), "r+b") as f:
        f.seek(m.offset + addr - m.start)
        f.write(b"\xcc" * 16)

    ps = CoreProcessState(case.core, sysroot=sysroot)
    assert ps.core.read(addr, 16) == b"\xcc" * 16
    libs = ps.library_state.get_libraries()
    for lib in libs:
        if lib.path != "[vdso]":
            assert lib.path.startswith(str(sysroot) + "/"), lib.path
            assert lib.module is not None
    assert [(os.path.basename(lib.path), lib.base) for lib in libs] == \
        [(os.path.basename(lib.path), lib.base) for lib in plain.library_state.get_libraries()]

    # an empty sysroot: the libraries are still found (their headers are in the core),
    # their modules fail to load, and code the core lacks cannot be read
    empty = tmp_path / "empty"
    empty.mkdir()
    ps = CoreProcessState(case.core, sysroot=empty)
    libs = ps.library_state.get_libraries()
    assert [lib.base for lib in libs] == [lib.base for lib in plain.library_state.get_libraries()]
    for lib in libs:
        if lib.path != "[vdso]":
            assert lib.module is None and lib.module_error
    with pytest.raises(MemoryReadError):
        ps.core.read(addr, 16)
    assert ps.read_memory(ps.get_registers()[7], 8)  # the stack is in the core


# --- cores without NT_FILE: the r_debug list ---------------------------------------------------
def _patch_notes(src, dst, fn):
    shutil.copy(src, dst)
    with open(dst, "r+b") as f:
        data = f.read()
        phoff = struct.unpack_from("<Q", data, 32)[0]
        phnum = struct.unpack_from("<H", data, 56)[0]
        for i in range(phnum):
            p_type, _fl, off, _va, _pa, filesz, _ms, _al = struct.unpack_from("<IIQQQQQQ", data, phoff + 56 * i)
            if p_type != 4:
                continue
            pos = off
            while pos + 12 <= off + filesz:
                namesz, descsz, ntype = struct.unpack_from("<III", data, pos)
                fn(f, pos, namesz, descsz, ntype)
                pos += 12 + (namesz + 3) // 4 * 4 + (descsz + 3) // 4 * 4
    return dst


def _retype(old, new):
    def fn(f, pos, namesz, descsz, ntype):
        if ntype == old:
            f.seek(pos + 8)
            f.write(struct.pack("<I", new))
    return fn


@pytest.mark.parametrize("name", ["gcore_worker", "kernel_worker", "static"])
def test_no_nt_file_uses_r_debug(work, tmp_path, name):
    case = _case(work, name)
    core = _patch_notes(case.core, tmp_path / "core", _retype(cf.NT_FILE, 0x1234))
    want = CoreProcessState(case.core)
    ps = CoreProcessState(core, exe_path=case.prog)
    assert ps.core.mappings == []
    got = _by_real(ps.library_state.get_libraries())
    for path, lib in _by_real(want.library_state.get_libraries()).items():
        assert got[path].base == lib.base, path
        assert got[path].module is not None
    assert ps.library_state.get_aout().is_aout
    for tid in ps.get_thread_ids():
        pc = ps.get_registers(tid)[16]
        assert ps.read_memory(pc, 16) == want.read_memory(pc, 16)


# --- bad input -----------------------------------------------------------------------------------
def _one_line_bad(path, **kw):
    with pytest.raises(BadFileError) as err:
        CoreFile(path, **kw)
    msg = str(err.value)
    assert msg and "\n" not in msg
    assert type(err.value) is BadFileError
    return msg


def test_errors_missing_dir_empty_text(tmp_path):
    assert "no such file" in _one_line_bad(tmp_path / "nope")
    assert "directory" in _one_line_bad(tmp_path)
    (tmp_path / "empty").write_bytes(b"")
    assert "not a core" in _one_line_bad(tmp_path / "empty")
    (tmp_path / "text").write_text("hello, this is not a core file\n" * 10)
    assert "not an ELF" in _one_line_bad(tmp_path / "text")
    (tmp_path / "tiny").write_bytes(b"\x7fELF\x02")
    assert "truncated" in _one_line_bad(tmp_path / "tiny")
    with pytest.raises(BadFileError):
        CoreProcessState(tmp_path / "nope")


def test_errors_elf_not_core(work):
    case = _case(work, "gcore_main")
    assert "not a core file (ELF type ET_DYN)" in _one_line_bad(case.prog)
    obj = case.prog.with_suffix(".o")
    res = _run([GCC, "-c", str(case.prog.with_suffix(".c")), "-o", str(obj)])
    assert res.returncode == 0
    assert "ET_REL" in _one_line_bad(obj)


def test_errors_machine_and_class(work, tmp_path):
    case = _case(work, "gcore_main")
    data = bytearray(case.core.read_bytes()[:1 << 20])
    sparc = tmp_path / "sparc"            # (AArch64, Power, RISC-V are supported: issues 15, 26)
    d = bytearray(data)
    d[18:20] = struct.pack("<H", 43)
    sparc.write_bytes(d)
    assert "unsupported machine SPARC v9" in _one_line_bad(sparc)
    # i386 is known, but only in ELF32 cores: a 64-bit core claiming it is refused
    c64 = tmp_path / "c64"
    d = bytearray(data)
    d[18:20] = struct.pack("<H", 3)
    c64.write_bytes(d)
    assert "unsupported machine i386 (64-bit)" in _one_line_bad(c64)
    mips = tmp_path / "mips"
    d = bytearray(data)
    d[18:20] = struct.pack("<H", 8)
    mips.write_bytes(d)
    line = _one_line_bad(mips)
    assert "unsupported machine MIPS (64-bit)" in line and ", ".join(known_names()) in line


@pytest.mark.parametrize("name", ["gcore_main", "kernel_worker"])
@pytest.mark.parametrize("size", [40, 64, 300, 3000, 5000])
def test_errors_truncated(work, tmp_path, name, size):
    case = _case(work, name)
    cut = tmp_path / "cut"
    with open(case.core, "rb") as f:
        cut.write_bytes(f.read(size))
    assert "truncated" in _one_line_bad(cut)


def test_truncated_memory_opens_with_warning(work, tmp_path):
    """Notes intact but the memory cut short (kernel cores put notes first): gdb's
    behaviour -- open with a warning, fail reads of what is missing."""
    case = _case(work, "kernel_worker")
    core = CoreFile(case.core)
    notes_end = max(off + size for off, size in _note_spans(case.core))
    first_load = min(s.offset for s in core.segments if s.filesz)
    cut = tmp_path / "cut"
    with open(case.core, "rb") as f:
        cut.write_bytes(f.read(max(notes_end, first_load) + 4096))
    short = CoreProcessState(cut)
    assert short.core.warnings and "truncated" in short.core.warnings[0]
    assert short.get_thread_ids() == [t.tid for t in core.threads]
    rsp = short.get_registers()[7]
    with pytest.raises(MemoryReadError) as err:
        short.core.read(rsp, 8)
    assert "truncated" in str(err.value)
    seg0 = min((s for s in core.segments if s.filesz), key=lambda s: s.offset)
    assert short.read_memory(seg0.vaddr, 8) == core.read(seg0.vaddr, 8)
    short.library_state.get_libraries()  # no exception


def _note_spans(path):
    with open(path, "rb") as f:
        data = f.read(1 << 16)
        phoff = struct.unpack_from("<Q", data, 32)[0]
        phnum = struct.unpack_from("<H", data, 56)[0]
        f.seek(phoff)
        table = f.read(56 * phnum)
    out = []
    for i in range(phnum):
        p_type, _fl, off, _va, _pa, filesz, _ms, _al = struct.unpack_from("<IIQQQQQQ", table, 56 * i)
        if p_type == 4:
            out.append((off, filesz))
    return out


def test_errors_malformed_notes(work, tmp_path):
    case = _case(work, "kernel_worker")

    def big_desc(f, pos, namesz, descsz, ntype):
        if ntype == cf.NT_AUXV:
            f.seek(pos + 4)
            f.write(struct.pack("<I", 0x7FFFFFF0))
    msg = _one_line_bad(_patch_notes(case.core, tmp_path / "a", big_desc))
    assert "note" in msg

    def short_prstatus(f, pos, namesz, descsz, ntype):
        if ntype == cf.NT_PRSTATUS:
            f.seek(pos + 4)
            f.write(struct.pack("<I", 16))
    assert "NT_PRSTATUS" in _one_line_bad(_patch_notes(case.core, tmp_path / "b", short_prstatus))

    def bad_file(f, pos, namesz, descsz, ntype):
        if ntype == cf.NT_FILE:
            f.seek(pos + 12 + (namesz + 3) // 4 * 4)
            f.write(struct.pack("<Q", 1 << 40))
    assert "NT_FILE" in _one_line_bad(_patch_notes(case.core, tmp_path / "c", bad_file))

    def no_threads(f, pos, namesz, descsz, ntype):
        if ntype == cf.NT_PRSTATUS:
            f.seek(pos + 8)
            f.write(struct.pack("<I", 0x99))
    assert "NT_PRSTATUS" in _one_line_bad(_patch_notes(case.core, tmp_path / "d", no_threads))


def test_fuzzed_headers_give_one_line_errors(work, tmp_path, rng):
    """Random damage (drawn from the suite's seed, SWK_TEST_SEED) to the ELF header,
    program headers and notes: BadFileError or a usable core, never a traceback from
    struct/IndexError."""
    case = _case(work, "kernel_nopie")
    data = case.core.read_bytes()
    spans = [(0, 64), (64, 64 + 56 * struct.unpack_from("<H", data, 56)[0])] + \
        [(off, off + size) for off, size in _note_spans(case.core)]
    path = tmp_path / "fuzz"
    opened = failed = 0
    for _ in range(300):
        d = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            lo, hi = rng.choice(spans)
            pos = rng.randrange(lo, hi)
            d[pos] = rng.randrange(256) if rng.random() < 0.7 else (0xFF if rng.random() < 0.5 else 0)
        path.write_bytes(d)
        try:
            ps = CoreProcessState(path, exe_path=case.prog)
        except BadFileError as exc:
            assert "\n" not in str(exc)
            failed += 1
            continue
        opened += 1
        for tid in ps.get_thread_ids():
            ps.get_registers(tid)
        ps.memory_regions()
        for lib in ps.library_state.get_libraries():
            lib.module
        try:
            ps.read_memory(ps.get_registers()[7], 64)
        except MemoryReadError:
            pass
        ps.core.close()
    assert opened and failed


# --- synthetic cores ------------------------------------------------------------------------------
def _note(name, ntype, desc):
    n = name + b"\0"
    return struct.pack("<III", len(n), len(desc), ntype) + n.ljust((len(n) + 3) // 4 * 4, b"\0") + \
        desc.ljust((len(desc) + 3) // 4 * 4, b"\0")


def _prstatus(tid, regs, sig=11):
    d = bytearray(336)
    struct.pack_into("<h", d, 12, sig)
    struct.pack_into("<i", d, 32, tid)
    for i, name in enumerate(cf.USER_REGS):
        struct.pack_into("<Q", d, 112 + 8 * i, regs.get(name, 0))
    return bytes(d)


def _prpsinfo(pid, fname, args):
    d = bytearray(136)
    struct.pack_into("<i", d, 24, pid)
    d[40:40 + len(fname)] = fname
    d[56:56 + len(args)] = args
    return bytes(d)


def _nt_file(maps, page=4096):
    d = struct.pack("<QQ", len(maps), page)
    for start, end, off, _path in maps:
        d += struct.pack("<QQQ", start, end, off // page)
    return d + b"".join(p.encode() + b"\0" for *_x, p in maps)


def write_core(path, notes, loads, xnum=False, page=4096):
    """loads: [(vaddr, memsz, filesz, flags, data or None)]; data goes at its
    page-aligned file offset, the rest of the file is left sparse."""
    nph = 1 + len(loads)
    phoff = 64
    note_off = phoff + 56 * nph
    notes_blob = b"".join(notes)
    shoff = note_off + len(notes_blob)
    shoff = (shoff + 7) // 8 * 8
    data_off = (shoff + 64 + page - 1) // page * page
    ehdr = bytearray(64)
    ehdr[:16] = b"\x7fELF\x02\x01\x01" + bytes(9)
    struct.pack_into("<HHIQQQIHHHHHH", ehdr, 16, 4, 62, 1, 0, phoff, shoff if xnum else 0, 0, 64, 56,
                     0xFFFF if xnum else nph, 64 if xnum else 0, 1 if xnum else 0, 0)
    phdrs = [struct.pack("<IIQQQQQQ", 4, 4, note_off, 0, 0, len(notes_blob), 0, 4)]
    pos = data_off
    placed = []
    for vaddr, memsz, filesz, flags, data in loads:
        phdrs.append(struct.pack("<IIQQQQQQ", 1, flags, pos, vaddr, 0, filesz, memsz, page))
        placed.append((pos, data))
        pos += (filesz + page - 1) // page * page
    with open(path, "wb") as f:
        f.write(ehdr)
        f.write(b"".join(phdrs))
        f.write(notes_blob)
        f.seek(shoff)
        sh0 = bytearray(64)
        struct.pack_into("<I", sh0, 44, nph)
        f.write(sh0)
        for off, data in placed:
            if data:
                f.seek(off)
                f.write(data)
        f.truncate(pos)
    return path


def test_synthetic_register_layout(tmp_path):
    regs = {name: 0x1000 + i for i, name in enumerate(cf.USER_REGS)}
    notes = [_note(b"CORE", cf.NT_PRPSINFO, _prpsinfo(77, b"synth", b"synth --flag")),
             _note(b"CORE", cf.NT_PRSTATUS, _prstatus(78, regs, 6)),
             _note(b"CORE", cf.NT_FPREGSET, b"\x11" * 512),
             _note(b"LINUX", cf.NT_X86_XSTATE, b"\x22" * 64),
             _note(b"CORE", cf.NT_PRSTATUS, _prstatus(77, {"rip": 5})),
             _note(b"CORE", cf.NT_AUXV, struct.pack("<8Q", 6, 4096, 9, 0x401000, 0, 0, 99, 99))]
    core = CoreFile(write_core(tmp_path / "c", notes, [(0x400000, 0x1000, 0x1000, 5, b"\x90" * 16)]))
    assert [t.tid for t in core.threads] == [78, 77]
    r = core.threads[0].regs
    want = {0: "rax", 1: "rdx", 2: "rcx", 3: "rbx", 4: "rsi", 5: "rdi", 6: "rbp", 7: "rsp",
            8: "r8", 9: "r9", 10: "r10", 11: "r11", 12: "r12", 13: "r13", 14: "r14", 15: "r15", 16: "rip"}
    for num, name in want.items():
        assert r[num] == regs[name], name
    for key in ("fs_base", "gs_base", "eflags", "orig_rax"):
        assert r[key] == regs[key]
    assert core.threads[0].signal == 6
    assert core.threads[0].fpregs == b"\x11" * 512 and core.threads[0].xstate == b"\x22" * 64
    assert core.threads[1].fpregs is None
    assert core.auxv == {6: 4096, 9: 0x401000}  # stops at AT_NULL
    assert (core.pid, core.exe_name, core.psargs) == (77, "synth", "synth --flag")
    assert core.read(0x400000, 16) == b"\x90" * 16
    assert core.read(0x400010, 16) == bytes(16)
    ps = CoreProcessState(tmp_path / "c")
    assert ps.signal_info.signo == 6 and ps.signal_info.name == "SIGABRT"
    assert ps.thread_label(77) == (2, 77)
    assert ps.library_state.get_libraries() == []  # no NT_FILE, no exe: nothing, no error


def test_synthetic_filesz_smaller_than_memsz_reads_file(tmp_path):
    page = 4096
    backing = tmp_path / "lib.bin"
    backing.write_bytes(bytes(range(256)) * 64 + b"tail")  # 16 KiB + 4 bytes
    maps = [(0x10000, 0x10000 + 5 * page, 0, "/lib.bin")]
    notes = [_note(b"CORE", cf.NT_PRSTATUS, _prstatus(1, {})), _note(b"CORE", cf.NT_FILE, _nt_file(maps))]
    loads = [(0x10000, page, page, 4, b"\xaa" * page),          # first page stored (modified)
             (0x11000, 2 * page, 0, 5, None)]                    # next two left out: read lib.bin
    path = write_core(tmp_path / "c", notes, loads)
    core = CoreFile(path, sysroot=tmp_path)
    assert core.read(0x10000, 4) == b"\xaa" * 4
    assert core.read(0x11000, 4) == bytes([0, 1, 2, 3])
    assert core.read(0x10ffe, 4) == b"\xaa\xaa\x00\x01"
    # past the segments, still in the mapping (no PT_LOAD at all): the file again
    assert core.read(0x13000, 4) == bytes([0, 1, 2, 3])
    # the file's last partial page reads as zeros after EOF, the page after faults
    assert core.read(0x14000, 8) == b"tail" + bytes(4)
    with pytest.raises(MemoryReadError):
        core.read(0x15000 - 2, 4)
    with pytest.raises(MemoryReadError):
        CoreFile(path).read(0x11000, 4)  # without the sysroot: /lib.bin does not exist
    regions = core.regions()
    assert [(r.start, r.end) for r in regions] == [(0x10000, 0x11000), (0x11000, 0x13000), (0x13000, 0x15000)]
    assert regions[1].executable and regions[2].name == "/lib.bin"


def test_synthetic_pn_xnum_and_sparse_large_core(tmp_path):
    """70000 segments (more than ELF's 16-bit e_phnum) over ~270 MB of sparse file: read
    whole, and read from anywhere (how fast: benchmarks/bounds.py; here only a hang fails)."""
    page = 4096
    n = 70000
    loads = [(0x10000000 + i * page, page, page, 6, None) for i in range(n)]
    loads[-1] = (0x10000000 + (n - 1) * page, page, page, 6, b"last!")
    loads[100] = (0x10000000 + 100 * page, page, page, 6, b"\x01" * page)
    loads[101] = (0x10000000 + 101 * page, page, page, 6, b"\x02" * page)
    notes = [_note(b"CORE", cf.NT_PRSTATUS, _prstatus(1, {"rsp": 0x10000000}))]
    path = write_core(tmp_path / "big", notes, loads, xnum=True)
    assert path.stat().st_size > 250 * 1024 * 1024
    with S.hang_guard(120, "opening and reading a core of 70000 segments"):
        core = CoreFile(path)
        assert len(core.segments) == n
        assert core.read(0x10000000 + (n - 1) * page, 5) == b"last!"
        assert core.read(0x10000000 + 101 * page - 2, 4) == b"\x01\x01\x02\x02"
        for i in range(0, n, 7):
            assert core.read(0x10000000 + i * page + 8, 8) == bytes(8)
    with pytest.raises(MemoryReadError):
        core.read(0x10000000 + n * page, 1)


def test_context_manager_closes(work):
    case = _case(work, "gcore_main")
    with CoreFile(case.core) as core:
        assert core.threads
    with pytest.raises(MemoryReadError):
        core.read(core.segments[0].vaddr, 1)


# --- data mappings, a deleted executable, a library loaded twice --------------------------------
MAPS_C = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int fd = open(argv[1], O_RDONLY);                 /* a plain data file */
    volatile char *data = mmap(0, 8192, PROT_READ, MAP_PRIVATE, fd, 0);
    int fd2 = open(argv[2], O_RDONLY);                /* an ELF mapped as data, not loaded */
    volatile char *elf = mmap(0, 8192, PROT_READ, MAP_PRIVATE, fd2, 0);
    void *h = dlmopen(LM_ID_NEWLM, "libm.so.6", RTLD_NOW);   /* a second libc, in a new namespace */
    unlink(argv[0]);                                  /* the executable is now "(deleted)" */
    printf("%c %c %p\n", data[0], elf[1], h);
    fflush(stdout);
    raise(SIGSEGV);
    return 0;
}
"""


@pytest.mark.parametrize("how", ["gcore", "kernel"])
def test_data_mappings_deleted_exe_and_dlmopen(work, tmp_path, how, rng):
    built = _gcc(MAPS_C, work / "maps_build")
    keep = tmp_path / "maps.keep"
    shutil.copy(built, keep)
    prog = tmp_path / "maps"
    shutil.copy(built, prog)
    data_file = tmp_path / "data.txt"
    data_file.write_bytes(bytes(rng.randrange(32, 127) for _ in range(10000)))
    libc_path = None
    for cand in ("/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6", "/lib64/libc.so.6"):
        if os.path.isfile(cand):
            libc_path = os.path.realpath(cand)
            break
    if libc_path is None:
        S.missing("libc.so.6 not found", S.install_hint("libc6"))
    args = (str(data_file), libc_path)
    if how == "gcore":
        core = _gcore(prog, tmp_path / "core", args=args)
    else:
        core = _kernel_core(prog, tmp_path, args=args)
    assert not prog.exists()

    ps = CoreProcessState(core)
    libs = ps.library_state.get_libraries()
    aout = libs[0]
    assert aout.is_aout and aout.mapped_path == os.path.realpath(prog) + " (deleted)"
    assert aout.module is None and aout.module_error
    names = sorted(os.path.basename(lib.mapped_path if lib.path != "[vdso]" else lib.path) for lib in libs[1:])
    assert names == ["[vdso]", "ld-linux-x86-64.so.2", "libc.so.6", "libc.so.6", "libm.so.6"], names

    g = GdbView(keep, core)
    want = sorted({(os.path.realpath(path), frm) for frm, path in g.libs})
    got = sorted((os.path.realpath(lib.path), lib.base + lib.module.section(".text").addr)
                 for lib in libs[1:] if lib.path != "[vdso]")
    assert got == want

    # the data file and the ELF mapped as data are memory, not libraries
    core_f = ps.core
    dmap = [m for m in core_f.mappings if m.path == str(data_file)]
    assert len(dmap) == 1
    content = data_file.read_bytes()
    assert core_f.read(dmap[0].start, 64) == content[:64]
    assert ps.read_memory(dmap[0].start + 4096 + 10, 32) == content[4106:4138]
    assert ps.library_state.get_library_at_addr(dmap[0].start) is None
    libc_starts = {m.start for m in core_f.mappings if m.path == libc_path and m.offset == 0}
    assert len(libc_starts) == 3
    lib_bases = {lib.base for lib in libs}
    data_elf = [a for a in libc_starts if a not in lib_bases]
    assert len(data_elf) == 1
    with open(libc_path, "rb") as f:
        assert core_f.read(data_elf[0], 64) == f.read(64)
    assert ps.library_state.get_library_at_addr(data_elf[0]) is None
    assert any(r.name == str(data_file) for r in ps.memory_regions())

    # with the executable given, the deleted file is replaced
    ps = CoreProcessState(core, exe_path=keep)
    aout = ps.library_state.get_aout()
    assert aout.path == str(keep) and aout.module is not None
    assert aout.base + _elf_symbol(keep, "main") == g.main_addr
    assert ps.read_memory(g.main_addr, 16) == g.main_bytes
