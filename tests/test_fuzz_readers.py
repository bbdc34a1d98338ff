"""Mutation fuzzers for swk's file readers.

Real inputs — a small C program built with ``gcc -g -O2`` at test time, a core of it
made with gdb's gcore, and libc's .eh_frame / .eh_frame_hdr — are mutated (bytes
flipped, fields overwritten with edge values, truncated, chunks spliced) and fed to:

* ElfModule(data=...) + section lookups, SymbolTable.from_module, LineTable.from_module
  (.lookup / .function_name), CfiTable (from_eh_frame / from_debug_frame, row_at), and
  the locals engine (scopes_at / frame_variables);
* CfiTable on libc's mutated .eh_frame (+ .eh_frame_hdr);
* CoreFile / CoreProcessState (and a walk of each thread) on mutated cores.

Allowed outcomes: success, or a swk_plugin.errors.SwkError subclass.  Anything else
(IndexError, struct.error, RecursionError, a hang past SWK_FUZZ_CASE_SECONDS...) is a
bug; the test fails listing one reproducer (target, seed) per distinct crash site.

Each target runs a fixed number of cases (CASES, times SWK_FUZZ_SCALE, default 1), so
two runs with the same seed try the same inputs.  The first case's seed is
SWK_FUZZ_SEED, else derived from the suite's seed (SWK_TEST_SEED, fixed under CI;
tests/swk_suite.py).  SWK_FUZZ_SECONDS instead gives each target a time budget (the
long local mode of docs/robustness.md; not repeatable: how many cases run depends on
the machine).
"""
import os
import random
import signal
import subprocess
import time
import traceback

import pytest

import swk_suite as S

from swk_plugin.errors import SwkError

#: cases per target (about 3 s each on the 2-core machine; core cases are slow)
CASES = {"elf": 3000, "libc-eh_frame": 300, "libc-eh_frame_hdr": 300, "debug_frame": 10000, "core": 100}
SCALE = float(os.environ.get("SWK_FUZZ_SCALE", "1"))
FUZZ_SECONDS = float(os.environ["SWK_FUZZ_SECONDS"]) if os.environ.get("SWK_FUZZ_SECONDS") else None
FIRST_SEED = (int(os.environ["SWK_FUZZ_SEED"]) if os.environ.get("SWK_FUZZ_SEED")
              else S.seed_for("fuzz-readers") % 1_000_000)
CASE_SECONDS = float(os.environ.get("SWK_FUZZ_CASE_SECONDS", "10"))
LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"

PROG_C = r"""
#include <stdio.h>
#include <stdlib.h>
struct pt { int x, y; double w; char name[8]; };
static int depth;
__attribute__((noinline)) int f(struct pt *p, int n) {
    volatile int local = n * 3;
    depth++;
    if (n > 0) return f(p, n - 1) + local + p->x;
    return local + p->y;
}
static inline int g(int a) { return a * a + f(&(struct pt){a, a + 1, 0.5, "g"}, 2); }
int main(int argc, char **argv) {
    struct pt p = {argc, 2, 1.5, "main"};
    int r = g(argc) + f(&p, 3);
    printf("%d %d\n", r, depth);
    return 0;
}
"""

EDGE_VALUES = [0, 1, 0x7f, 0x80, 0xff, 0x7fff, 0xffff, 0x7fffffff, 0x80000000, 0xffffffff,
               (1 << 63), (1 << 64) - 1]


class CaseTimeout(Exception):
    pass


def _alarm(_sig, _frame):
    raise CaseTimeout(f"case ran past {CASE_SECONDS}s")


# --- mutation -------------------------------------------------------------------------------------

def mutate(rng, data, hot=()):
    """One mutated copy of ``data``; ``hot`` is a list of (start, end) ranges to favour."""
    buf = bytearray(data)
    if not buf:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(16)))

    def pos():
        if hot and rng.random() < 0.8:
            lo, hi = rng.choice(hot)
            hi = min(hi, len(buf))
            if lo < hi:
                return rng.randrange(lo, hi)
        return rng.randrange(len(buf))

    for _ in range(rng.choice([1, 1, 1, 2, 3, 5, 10])):
        op = rng.random()
        if not buf:
            break
        if op < 0.35:                          # flip a bit
            i = pos()
            buf[i] ^= 1 << rng.randrange(8)
        elif op < 0.55:                        # random byte
            buf[pos()] = rng.randrange(256)
        elif op < 0.75:                        # an edge value as a 1/2/4/8-byte field
            n = rng.choice([1, 2, 4, 8])
            i = pos()
            v = rng.choice(EDGE_VALUES) & ((1 << (8 * n)) - 1)
            buf[i:i + n] = v.to_bytes(n, "little")
        elif op < 0.85:                        # splice: copy a chunk elsewhere
            n = rng.randrange(1, 64)
            src, dst = rng.randrange(len(buf)), pos()
            chunk = buf[src:src + n]
            buf[dst:dst + len(chunk)] = chunk
        elif op < 0.93:                        # truncate
            buf = buf[:pos()]
        else:                                  # delete or insert a few bytes (shifts everything)
            i = pos()
            if rng.random() < 0.5:
                del buf[i:i + rng.randrange(1, 9)]
            else:
                buf[i:i] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 9)))
    return bytes(buf)


def run_fuzz(name, data, hot, exercise, share=1.0):
    """Mutate ``data`` and call exercise(mutated): CASES[name] * SWK_FUZZ_SCALE cases, or with
    SWK_FUZZ_SECONDS until share * that budget is spent.  Case n uses
    random.Random(f"{name}-{FIRST_SEED + n}").
    Returns (cases, {crash site: (seed, exception text)})."""
    budget = None if FUZZ_SECONDS is None else FUZZ_SECONDS * share
    count = max(1, round(CASES[name] * SCALE))
    start = time.monotonic()
    end = None if budget is None else start + budget
    seed = FIRST_SEED
    cases = ok = swk = 0
    crashes = {}
    old = signal.signal(signal.SIGALRM, _alarm)
    try:
        while (cases < count) if end is None else (time.monotonic() < end):
            rng = random.Random(f"{name}-{seed}")
            mutated = mutate(rng, data, hot)
            cases += 1
            signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS)
            try:
                exercise(mutated)
                ok += 1
            except SwkError:
                swk += 1
            except (Exception, RecursionError) as exc:  # noqa: B902 - anything else is a bug
                tb = traceback.extract_tb(exc.__traceback__)
                last = next((f for f in reversed(tb) if "swk_plugin" in f.filename), tb[-1])
                site = (type(exc).__name__, f"{os.path.relpath(last.filename)}:{last.lineno}")
                crashes.setdefault(site, (seed, f"{type(exc).__name__}: {exc}"[:300]))
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            seed += 1
    finally:
        signal.signal(signal.SIGALRM, old)
    REPORT[name] = (cases, ok, swk, len(crashes), time.monotonic() - start)
    return cases, crashes


REPORT = {}


def report_crashes(name, crashes):
    lines = [f"{name}: {len(crashes)} distinct crash site(s) (reproduce: SWK_FUZZ_SEED=<seed>):"]
    for (etype, where), (seed, text) in sorted(crashes.items()):
        lines.append(f"  {etype} at {where}  seed={seed}  {text}")
    return "\n".join(lines)


@pytest.fixture(scope="module", autouse=True)
def print_report():
    yield
    if REPORT:
        print(f"\nswk fuzz report, first seed {FIRST_SEED} (target: cases ok swk-errors crash-sites seconds)")
        for name, (cases, ok, swk, n, secs) in REPORT.items():
            print(f"  {name}: {cases} {ok} {swk} {n} {secs:.1f}")


# --- inputs ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    S.need_tool("gcc")
    d = tmp_path_factory.mktemp("fuzzprog")
    (d / "prog.c").write_text(PROG_C)
    exe = d / "prog"
    subprocess.run(["gcc", "-g", "-O2", "-o", str(exe), str(d / "prog.c")], check=True,
                   capture_output=True, timeout=60)
    return exe


@pytest.fixture(scope="module")
def core(prog):
    S.need_tool("gdb")
    out = prog.parent / "prog.core"
    res = subprocess.run(["gdb", "-nx", "-batch", "-ex", "break f", "-ex", "run", "-ex", f"gcore {out}",
                          str(prog)], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    if not out.exists():
        pytest.fail(f"gdb could not make a core of the test program:\n{res.stdout[-2000:]}{res.stderr[-2000:]}",
                    pytrace=False)
    return out


def section_ranges(module, names):
    hot = []
    for name in names:
        sec = module.section(name)
        if sec is not None and sec.size:
            hot.append((sec.offset, sec.offset + sec.size))
    return hot


# --- ELF + symbols + lines + CFI + locals ----------------------------------------------------------------

def elf_probe_addrs(exe):
    from swk_plugin.elf.module import ElfModule
    from swk_plugin.elf.symbols import SymbolTable
    m = ElfModule(str(exe))
    syms = SymbolTable.from_module(m)
    addrs = set()
    for s in syms:
        if s.kind == "func" and s.value:
            addrs.update({s.value, s.value + 1, s.value + max(s.size, 1) // 2})
    return m, sorted(addrs)[:24]


def exercise_module(data, addrs):
    from swk_plugin import locals as L
    from swk_plugin.dwarf.cfi import CfiTable
    from swk_plugin.dwarf.lines import LineTable
    from swk_plugin.elf.module import ElfModule
    from swk_plugin.elf.symbols import SymbolTable

    m = ElfModule(data=data, name="fuzz")
    for name in (".text", ".eh_frame", ".eh_frame_hdr", ".debug_frame", ".debug_info", ".debug_line",
                 ".symtab", ".dynsym", ".strtab", ".dynstr", ".note.gnu.build-id", ".gnu_debuglink"):
        sec = m.section(name)
        if sec is not None:
            sec.data
        m.has_section(name)
    m.load_spans()
    m.exec_spans()
    m.build_id
    m.debuglink
    syms = SymbolTable.from_module(m)
    len(syms)
    for a in addrs:
        syms.lookup(a)
    lines = LineTable.from_module(m)
    if lines is not None:
        for a in addrs:
            lines.lookup(a)
            lines.function_name(a)
    eh, hdr = m.section(".eh_frame"), m.section(".eh_frame_hdr")
    tables = []
    if eh is not None:
        tables.append(CfiTable.from_eh_frame(eh.data, eh.addr, hdr.data if hdr else None,
                                             hdr.addr if hdr else None, ptr_size=m.ptr_size))
    dbg = m.section(".debug_frame")
    if dbg is not None:
        tables.append(CfiTable.from_debug_frame(dbg.data, 0, ptr_size=m.ptr_size))
    errors = []
    found = {"rows": 0, "scopes": 0, "lines": 0}
    for t in tables:
        for a in addrs:
            try:
                found["rows"] += t.row_at(a) is not None
            except SwkError as exc:  # one bad FDE must not stop the others being tried
                errors.append(exc)
    for a in addrs:
        L.function_at(m, a)
        for sc in L.scopes_at(m, a):
            found["scopes"] += 1
            L.frame_variables(sc, a)
    if lines is not None:
        found["lines"] = sum(lines.lookup(a) is not None for a in addrs)
    if errors:
        raise errors[0]
    return found


def test_fuzz_elf_module_symbols_lines_cfi_locals(prog):
    m, addrs = elf_probe_addrs(prog)
    assert addrs, "the test program has no function symbols"
    data = prog.read_bytes()
    hot = [(0, 64), (m.elf.header["e_phoff"], m.elf.header["e_phoff"] + 56 * m.elf.header["e_phnum"]),
           (m.elf.header["e_shoff"], m.elf.header["e_shoff"] + 64 * m.elf.header["e_shnum"])]
    hot += section_ranges(m, (".eh_frame", ".eh_frame_hdr", ".debug_info", ".debug_abbrev", ".debug_line",
                              ".debug_line_str", ".debug_str", ".debug_loclists", ".debug_rnglists",
                              ".symtab", ".strtab", ".dynsym", ".dynstr", ".note.gnu.build-id"))
    found = exercise_module(data, addrs)       # the unmutated program reads cleanly, and fully
    assert all(found.values()), found
    cases, crashes = run_fuzz("elf", data, hot, lambda d: exercise_module(d, addrs))
    assert cases > 0
    assert not crashes, report_crashes("elf", crashes)


# --- libc's CFI -------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def libc_cfi():
    S.need_path(LIBC, "libc6", "x86-64 glibc")
    from swk_plugin.elf.module import ElfModule
    from swk_plugin.elf.symbols import SymbolTable
    m = ElfModule(LIBC)
    eh, hdr = m.section(".eh_frame"), m.section(".eh_frame_hdr")
    assert eh is not None, f"{LIBC} has no .eh_frame"
    rng = S.rng_for("fuzz-readers-libc-addresses")
    funcs = [s.value for s in SymbolTable.from_module(m) if s.kind == "func" and s.value]
    addrs = sorted(rng.sample(funcs, min(40, len(funcs))))
    return eh, hdr, addrs


def exercise_cfi(eh_data, eh_addr, hdr_data, hdr_addr, addrs, as_debug_frame=False):
    from swk_plugin.dwarf.cfi import CfiTable
    if as_debug_frame:
        t = CfiTable.from_debug_frame(eh_data, 0)
    else:
        t = CfiTable.from_eh_frame(eh_data, eh_addr, hdr_data, hdr_addr)
    errors = []
    for a in addrs:
        try:
            t.row_at(a)
        except SwkError as exc:
            errors.append(exc)
    if errors:
        raise errors[0]


def test_fuzz_libc_eh_frame(libc_cfi):
    eh, hdr, addrs = libc_cfi
    eh_data, hdr_data = eh.data, hdr.data if hdr else None
    exercise_cfi(eh_data, eh.addr, hdr_data, hdr.addr if hdr else None, addrs)
    # mutate the first 8 KiB of .eh_frame (CIEs and the first FDEs) and, separately, the header
    head = eh_data[:8192]

    def ex_eh(d):
        exercise_cfi(d + eh_data[len(head):], eh.addr, hdr_data, hdr.addr if hdr else None, addrs)
        exercise_cfi(d + eh_data[len(head):], eh.addr, None, None, addrs)   # no header: the linear index

    cases, crashes = run_fuzz("libc-eh_frame", head, [(0, len(head))], ex_eh, 0.5)
    assert cases > 0
    assert not crashes, report_crashes("libc-eh_frame", crashes)
    assert hdr is not None, "libc has no .eh_frame_hdr"
    cases, crashes = run_fuzz("libc-eh_frame_hdr", hdr_data[:4096], [(0, 64)],
                              lambda d: exercise_cfi(eh_data, eh.addr, d + hdr_data[4096:], hdr.addr, addrs),
                              0.5)
    assert cases > 0
    assert not crashes, report_crashes("libc-eh_frame_hdr", crashes)


def test_fuzz_debug_frame(prog):
    """A real .debug_frame (the program rebuilt without unwind tables)."""
    exe = prog.parent / "prog-debug-frame"
    subprocess.run(["gcc", "-g", "-O2", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables",
                    "-o", str(exe), str(prog.parent / "prog.c")], check=True, capture_output=True, timeout=60)
    m, addrs = elf_probe_addrs(exe)
    dbg = m.section(".debug_frame")
    if dbg is None:
        S.toolchain_quirk("gcc -fno-asynchronous-unwind-tables -g emitted no .debug_frame")
    exercise_cfi(dbg.data, 0, None, None, addrs, as_debug_frame=True)
    cases, crashes = run_fuzz("debug_frame", dbg.data, [(0, dbg.size)],
                              lambda d: exercise_cfi(d, 0, None, None, addrs, as_debug_frame=True),
                              0.5)
    assert cases > 0
    assert not crashes, report_crashes("debug_frame", crashes)


# --- core files -----------------------------------------------------------------------------------------

def core_hot(data):
    """Byte ranges of the core's ELF header, program headers and PT_NOTE segments."""
    import struct
    phoff, = struct.unpack_from("<Q", data, 32)
    phnum, = struct.unpack_from("<H", data, 56)
    hot = [(0, 64), (phoff, phoff + 56 * phnum)]
    for i in range(phnum):
        p_type, _f, off, _va, _pa, filesz = struct.unpack_from("<IIQQQQ", data, phoff + 56 * i)
        if p_type == 4:  # PT_NOTE
            hot.append((off, off + filesz))
    return hot


def exercise_core(path, exe, data):
    from swk_plugin.backends.core import CoreProcessState
    from swk_plugin.linux.coredump import CoreFile
    from swk_plugin.walker import Walker
    path.write_bytes(data)
    with CoreFile(str(path)) as c:
        c.regions()
        c.file_mappings
        c.mapped_paths()
        for t in c.threads:
            for a in (t.pc, t.sp):
                if a is not None:
                    try:
                        c.read(a, 64)
                    except SwkError:
                        pass
    ps = CoreProcessState(str(path), exe_path=str(exe))
    try:
        w = Walker(ps, frame_cap=64)
        for tid in ps.get_thread_ids()[:4]:
            walk = w.walk_stack(tid)
            assert walk.stop_reason
    finally:
        ps.core.close()


def test_fuzz_core_files(core, prog, tmp_path):
    data = core.read_bytes()
    target = tmp_path / "mutated.core"
    exercise_core(target, prog, data)
    cases, crashes = run_fuzz("core", data, core_hot(data), lambda d: exercise_core(target, prog, d))
    assert cases > 0
    assert not crashes, report_crashes("core", crashes)
