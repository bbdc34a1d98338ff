"""RISC-V 64 (issue 26): the corpus cross-built for riscv64 (rv64gc, LP64D) and run under
qemu-user, walked by swk inside gdb-multiarch and LLDB; the ABI's facts swk states checked
against the cross toolchain, GCC's own CFI and objdump.

For every case of CASES (tests/cross_lib.py runs them):
  test_gdb_own_walk[CASE]          gdb's own walk is the known chain where the case says gdb is
                                   right, and is not where it says it is wrong (recorded)
  test_swk_in_gdb[CASE]            swk-bt -json -all: the known chain, and every frame's pc and sp
                                   equal to gdb's where gdb is right (else up to where gdb errs)
  test_gdb_with_swk_unwinder[CASE] gdb's own bt with swk's unwinder: the known chain
qemu-riscv64 7.2 writes no core of its guest, and gdb's gcore over its stub writes a core whose
NT_PRSTATUS is the host's shape (cross_lib.RISCV64's note): swk's CLI on a riscv64 core is
tests/test_elfutils_cores.py's (elfutils' riscv64 core, walked as eu-stack walks it).
Units: user_regs_struct / ucontext offsets against the cross compiler's headers (a program run
under qemu), the signal frame where qemu puts it (a handler measuring its own frame); the
frame-pointer prologue and epilogue rules against GCC's CFI of the same functions; jal / jalr /
c.jalr return sites and the 2/4-byte instruction boundaries against objdump; the stack-height
analysis against GCC's CFI.
"""
from __future__ import annotations

import re
import subprocess

import pytest

import cross_lib as C
import cross_suite as X
import swk_suite as S
import swk_testlib as T
from cross_lib import NOCFI, O0, O2, CrossCase

pytestmark = [pytest.mark.corpus]
TARGET = C.RISCV64
C.need_machine(TARGET)

#: main's callers: __libc_start_call_main (no symbol in the cross C library), then
#: __libc_start_main, then the program's _start (whose CFI marks ra undefined).
LIBC_START = [None, "__libc_start_main", "_start"]
CHAIN = ["stop_here", "c", "b", "a", "main", *LIBC_START]
SIGTRAMP = T.SIGTRAMP
#: No CFI, no DWARF, but GCC's frame pointer: the frame record {ra, s0} below s0.
NOCFI_FP = ("-O2", "-fno-omit-frame-pointer", "-g0", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables")
#: With CFI and a frame pointer: the oracle of the prologue kit's rules.
O2_FP = ("-O2", "-g", "-fno-omit-frame-pointer")


def _case(id, srcs, cflags, expected, **kw) -> CrossCase:
    return CrossCase(id, srcs, cflags, expected, target=TARGET, **kw)


_SIG_PRE = ("handle SIGUSR1 SIGALRM nostop noprint pass", "break stop_here")
_NOCFI_NOTE = "no CFI and no frame pointer: gdb's prologue analyser stops after c (\"frame did not save the PC\")"
CASES = [
    _case("chain-O0", ("chain.c",), O0, {1: CHAIN}),
    _case("chain-O2", ("chain.c",), O2, {1: CHAIN}),
    # no CFI: the stack-height analysis (the leaf stop_here's caller still in ra)
    _case("chain-nocfi", ("chain.c",), NOCFI, {1: CHAIN}, gdb_right=False, gdb_note=_NOCFI_NOTE),
    # no CFI, frame pointers: the frame record, from the first instruction of stop_here on
    _case("chain-nocfi-fp", ("chain.c",), NOCFI_FP, {1: CHAIN}),
    _case("chain-nocfi-fp-entry", ("chain.c",), NOCFI_FP, {1: CHAIN}, pre=("break *stop_here",)),
    _case("signal-raise-O2", ("signal.c",), O2,
          {1: ["stop_here", "h1", "on_signal", SIGTRAMP, None, "raise", "sig_b", "sig_a", "main", *LIBC_START]},
          pre=_SIG_PRE, run_args=("raise",)),
]
#: start_thread (no symbol, and no CFI in Debian's riscv64 C library: its frame record or the
#: analysis finds its caller), then clone's thread_start (no symbol; its CFI marks ra undefined).
THREAD_START = [None, None]
_THREADS_NOTE = ("start_thread has neither a symbol nor CFI in the cross C library: gdb's riscv prologue "
                 "analyser knows no function there and ends the walk at it, one frame short of clone's "
                 "thread_start")
RECURSE_DEPTH = 1000
CASES += [
    _case("threads-O2", ("threads.c",), O2, {
        1: ["stop_here", "main_a", "main", *LIBC_START],
        2: ["read", "t1_b", "t1_a", "t1_start", *THREAD_START],
        3: [None, None, "t2_b", "t2_a", "t2_start", *THREAD_START],   # (the cross libc's futex wait)
        4: ["clock_nanosleep", "nanosleep", "t3_b", "t3_a", "t3_start", *THREAD_START]},
        ldflags=("-pthread",), gdb_right=False, gdb_note=_THREADS_NOTE),
    _case("cxx-O2", ("cxx.cpp",), O2, {1: [
        "stop_here", "(anonymous namespace)::anon_leaf",
        "geo::Vec::operator+(geo::Vec const&) const::{lambda(int)#1}::operator()",
        "geo::Vec::operator+", "shapes::Square<int>::area", "app::Runner<long>::run", "main", *LIBC_START]}),
    _case("dlopen-O2", ("dlopen_main.c",), O2, {1: [
        "stop_here", "main_callback", "dlib_inner", "dlib_mid", "dlib_entry", "load_and_call", "main", *LIBC_START]},
        ldflags=("-ldl",), run_args=("{lib}",), lib=(("dlib.c",), (*O2, "-fPIC"), "libriscv64dlib.so")),
    _case("recurse-O0", ("recurse.c",), O0, {1: ["stop_here", *(["rec"] * (RECURSE_DEPTH + 1)), "main", *LIBC_START]},
          run_args=(str(RECURSE_DEPTH),)),
    _case("crash-abort-O2", ("crash.c",), O2, {1: [None, "raise", "abort", "do_abort", "abort_b", "abort_a", "main",
                                                  *LIBC_START]}, pre=(), run_args=("abort",)),
    # a timer signal in frameless code without CFI: the analysis on both sides of the trampoline
    _case("hard-signal-nocfi", ("hard_signal.c",), NOCFI, {1: [
        "fault", "h1", "handler", SIGTRAMP, "loop", "b", "a", "main", *LIBC_START]},
        pre=("handle SIGALRM nostop noprint pass",), gdb_right=False,
        gdb_note="no CFI in the handler's code: gdb stops after h1 (\"frame did not save the PC\")",
        interrupted=("loop",)),
]
BY_ID = {c.id: c for c in CASES}
session = X.Sessions()
_fail, _errors, _ids = X.fail, X.errors, X.ids


@pytest.mark.native
@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_gdb_own_walk(case):
    X.check_gdb_own_walk(case, session(case))


@pytest.mark.swk
@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_swk_in_gdb(case):
    X.check_swk_in_gdb(case, session(case))


@pytest.mark.swk
@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_gdb_with_swk_unwinder(case):
    """gdb's bt with swk's unwinder registered.  GDB 13's own riscv sigtramp unwinder matches
    the trampoline's two words (qemu's page too), so the trampoline frame stays gdb's: a
    signal frame in the walk."""
    X.check_gdb_with_swk_unwinder(case, session(case))


def test_no_guest_core():
    """The premise of leaving qemu's cores out: qemu-riscv64 writes none when its guest dies
    of SIGABRT (cross_lib.RISCV64.qemu_core is False).  If a later qemu writes one, this fails
    and the CLI-on-core test of the other targets belongs here too."""
    case = BY_ID["crash-abort-O2"]
    with C.Qemu(TARGET, case.exe(), case.args(), stub=False) as q:
        assert q.wait(120) is not None, "the guest did not die"
        assert q.core() is None, "qemu-riscv64 wrote a core of its guest"
    assert not TARGET.qemu_core


# --------------------------------------------------------------------------
# the ABI's facts, against the toolchain
# --------------------------------------------------------------------------

_OFFSETS_C = r"""
#include <signal.h>
#include <stdio.h>
#include <stddef.h>
#include <ucontext.h>
#include <sys/procfs.h>
#include <asm/ptrace.h>
int main(void) {
    printf("pr_reg %zu\nprstatus %zu\ngregset %zu\nfpregset %zu\n", offsetof(struct elf_prstatus, pr_reg),
           sizeof(struct elf_prstatus), sizeof(elf_gregset_t), sizeof(struct __riscv_d_ext_state));
    printf("uc_sigmask %zu\nuc_mcontext %zu\nucontext %zu\n", offsetof(ucontext_t, uc_sigmask),
           offsetof(ucontext_t, uc_mcontext), sizeof(ucontext_t));
    printf("sc_regs %zu\nsc_fpregs %zu\nsigcontext %zu\n", offsetof(struct sigcontext, gregs),
           offsetof(struct sigcontext, fpregs), sizeof(struct sigcontext));
    printf("mc_fpregs %zu\nsiginfo %zu\n", offsetof(mcontext_t, __fpregs), sizeof(siginfo_t));
    printf("pc %zu\nra %zu\nsp %zu\ns0 %zu\ntp %zu\n", offsetof(struct user_regs_struct, pc),
           offsetof(struct user_regs_struct, ra), offsetof(struct user_regs_struct, sp),
           offsetof(struct user_regs_struct, s0), offsetof(struct user_regs_struct, tp));
    return 0;
}
"""


def _run_c(tmp_path, name, source, *flags) -> str:
    src = tmp_path / f"{name}.c"
    src.write_text(source)
    exe = tmp_path / name
    subprocess.run([TARGET.gcc, *flags, str(src), "-o", str(exe)], check=True, capture_output=True)
    return subprocess.run([*TARGET.qemu_argv, str(exe)], check=True, capture_output=True, text=True,
                          timeout=120).stdout


def _toolchain_offsets(tmp_path) -> dict[str, int]:
    out = _run_c(tmp_path, "offsets", _OFFSETS_C)
    return {k: int(v) for k, v in (line.split() for line in out.splitlines())}


def test_layouts_match_the_toolchain(tmp_path):
    from swk_plugin.arch import get_architecture
    from swk_plugin.arch.riscv64 import registers, regsets, signal
    got = _toolchain_offsets(tmp_path)
    rs = regsets.REGSETS
    assert (rs.prstatus_reg_offset, rs.prstatus_size, rs.user_regs_size) == \
        (got["pr_reg"], got["prstatus"], got["gregset"])
    assert regsets.FPREGSET_SIZE == got["fpregset"]             # f0-f31, fcsr (padded to 8)
    assert (signal.UC_SIGMASK, signal.UC_MCONTEXT, signal.UCONTEXT_SIZE, signal.SIGINFO_SIZE) == \
        (got["uc_sigmask"], got["uc_mcontext"], got["ucontext"], got["siginfo"])
    assert (signal.SC_REGS, signal.SC_FPREGS, signal.SIGCONTEXT_SIZE) == \
        (got["sc_regs"], got["sc_fpregs"], got["sigcontext"])
    assert signal.SC_FPREGS == got["mc_fpregs"]
    arch = get_architecture("riscv64")
    # the sigcontext's sc_regs is user_regs_struct: each register where the struct has it
    for name, regno in (("pc", registers.pc), ("ra", registers.ra), ("sp", registers.sp), ("s0", registers.fp),
                        ("tp", registers.tp)):
        assert signal.SC_OFFSETS[regno] == got[name], name
        assert rs.keys[got[name] // rs.slot] == regno, name
    assert arch.reg_name(registers.fp) == "fp" and arch.thread_pointer == "tp"


_SIGFRAME_C = r"""
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
static void handler(int sig, siginfo_t *si, void *uc) {
    unsigned int *ra = __builtin_return_address(0);
    char *cfa = __builtin_frame_address(0);          /* s0: the CFA with a frame pointer */
    printf("uc %ld\nsi %ld\nw0 %u\nw1 %u\n", (long)((char *)uc - cfa), (long)((char *)si - cfa), ra[0], ra[1]);
    printf("mc_pc %d\n", ((ucontext_t *)uc)->uc_mcontext.__gregs[0] == (unsigned long)ra ? 1 : 0);
}
int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR1, &sa, 0);
    raise(SIGUSR1);
    return 0;
}
"""


def test_signal_frame_where_qemu_puts_it(tmp_path):
    """A handler under qemu-riscv64 measures its own frame: the siginfo at its CFA (the
    trampoline frame's sp) and the ucontext 128 bytes above, as signal.sigcontext_address
    reads them; ra at the trampoline's two words, which gdb_knows and is_trampoline_code
    recognise."""
    from swk_plugin.arch.riscv64 import signal
    out = _run_c(tmp_path, "sigframe", _SIGFRAME_C, "-O0", "-fno-omit-frame-pointer")
    got = {k: int(v) for k, v in (line.split() for line in out.splitlines())}
    assert got["si"] == 0 and got["uc"] == signal.UC_FROM_SP
    assert signal.sigcontext_address(0) == signal.UC_FROM_SP + signal.UC_MCONTEXT
    code = got["w0"].to_bytes(4, "little") + got["w1"].to_bytes(4, "little")
    assert code == signal.TRAMPOLINE and signal.is_trampoline_code(code) and signal.gdb_knows(code)
    assert got["mc_pc"] == 0                             # the interrupted pc is raise's, not the trampoline


def _sections(exe):
    from elftools.elf.elffile import ELFFile
    with open(exe, "rb") as f:
        return [dict(s.header, name=s.name) for s in ELFFile(f).iter_sections()]


def _text(exe):
    text = next(s for s in _sections(exe) if s["name"] == ".text")
    data = exe.read_bytes()[text["sh_offset"]:text["sh_offset"] + text["sh_size"]]
    return text["sh_addr"], data


def _functions(exe, names=("stop_here", "a", "b", "c", "main")):
    """{name: (start, end)} of the program's own functions (nm's symbol table)."""
    out = {}
    nm = subprocess.run([TARGET.tool("nm"), "-S", "--defined-only", str(exe)], check=True, capture_output=True,
                        text=True).stdout
    for line in nm.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tT" and (names is None or parts[3] in names):
            out[parts[3]] = (int(parts[0], 16), int(parts[0], 16) + int(parts[1], 16))
    return out


def _objdump(exe, *args):
    return subprocess.run([TARGET.tool("objdump"), "-d", *args, str(exe)], check=True, capture_output=True,
                          text=True).stdout


def test_return_sites_match_objdump():
    """Every call objdump shows in the C library's text (jal/jalr linking ra, 4 bytes, and
    c.jalr, 2), decoded from each function's start with 2- and 4-byte instructions mixed, is
    a return site swk finds, and nothing else is; every instruction boundary swk decodes is
    objdump's."""
    from swk_plugin.arch import get_architecture
    from swk_plugin.arch.riscv64 import rv
    from pathlib import Path
    arch = get_architecture("riscv64")
    libc = Path(TARGET.sysroot) / "lib" / "libc.so.6"
    start, data = _text(libc)
    sites, end = arch.calls.return_sites(data, start)
    assert end == start + len(data)
    dis = _objdump(libc, "-M", "no-aliases", "--section=.text")
    insns = {int(m.group(1), 16): (len(m.group(2)) // 2, m.group(3), m.group(4)) for m in re.finditer(
        r"^\s*([0-9a-f]+):\s+([0-9a-f]{4}|[0-9a-f]{8})\s+(\S+)\s*(\S*)", dis, re.M)}
    calls = {a for a, (_n, mn, ops) in insns.items()
             if mn == "c.jalr" or (mn in ("jal", "jalr") and ops.split(",")[0] == "ra")}
    assert len(calls) > 10000, "objdump shows too few calls"
    assert set(sites.values()) == calls
    assert all(ra - call == insns[call][0] for ra, call in sites.items())
    assert {a for a, _i in rv.insns(data, start)} >= set(insns)
    assert {insns[c][0] for c in calls} == {2, 4}


def test_calls_ending_at_both_lengths():
    """calls_ending_at, given only the bytes before a return address, finds objdump's call
    there (c.jalr: 2 bytes; jal: 4) as one of its candidates."""
    from swk_plugin.arch import get_architecture
    from pathlib import Path
    arch = get_architecture("riscv64")
    libc = Path(TARGET.sysroot) / "lib" / "libc.so.6"
    start, data = _text(libc)
    sites, _end = arch.calls.return_sites(data, start)
    by_len = {}
    for ra, call in sorted(sites.items()):
        by_len.setdefault(ra - call, []).append((ra, call))
    for n, pairs in by_len.items():
        for ra, call in pairs[:200]:
            found = arch.calls.calls_ending_at(data[ra - start - 4:ra - start], ra)
            assert any(c.addr == call and c.end == ra for c in found), (n, hex(ra), found)
            assert arch.scan.after_call(data[ra - start - 4:ra - start])


def _cfi_module(exe):
    from swk_plugin.elf.module import ElfModule
    return ElfModule(str(exe))


def _insn_addrs(exe, start, end):
    from swk_plugin.arch.riscv64 import rv
    tstart, data = _text(exe)
    return [(a, i) for a, i in rv.insns(data[start - tstart:end - tstart], start)]


def _same_place(rule, cfi, arch):
    """(the CFA agrees, the saves agree) of two rules: the CFA where both base it on one
    register (the kit's sp-based epilogue rows, GCC's s0-based ones until ``ld s0``: the same
    CFA, as s0 = CFA there); every register the CFI says is saved at the same slot.  The kit
    may know a save the CFI states an instruction later (GCC notes a group of stores after
    the last of them): the register holds that value too, so either rule is right there."""
    from swk_plugin.rule import OFFSET
    saved = {r: rr.arg for r, rr in rule.regs.items() if rr.kind == OFFSET}
    cfi_saved = {r: rr.arg for r, rr in cfi.regs.items() if rr.kind == OFFSET}
    same_cfa = (rule.cfa.reg, rule.cfa.offset) == (cfi.cfa.reg, cfi.cfa.offset)
    return same_cfa or rule.cfa.reg != cfi.cfa.reg, all(saved.get(r) == o for r, o in cfi_saved.items())


#: Frames beyond addi's 12 bits (``lui t0; add sp,sp,t0``, scheduled apart), and a VLA.
_FRAMES_C = r"""
#include <string.h>
__attribute__((noipa)) int use(char *p, int n) { return p[n] + p[0]; }
__attribute__((noipa)) int big(int n) { char buf[70000]; memset(buf, n, sizeof buf); return use(buf, n) + 1; }
__attribute__((noipa)) int mid(int n) { char buf[3000]; memset(buf, n, sizeof buf); return use(buf, n) + 2; }
__attribute__((noipa)) int vla(int n) { char buf[n]; memset(buf, n, n); return use(buf, n - 1) + 3; }
int main(int argc, char **argv) { return big(argc) + mid(argc) + vla(argc + 10); }
"""
FRAMES_FUNCS = ("use", "big", "mid", "vla", "main")


def _frames_exe(tmp_path, *flags):
    src = tmp_path / "frames.c"
    src.write_text(_FRAMES_C)
    exe = tmp_path / ("frames" + "".join(flags).replace("-", "_"))
    subprocess.run([TARGET.gcc, *flags, str(src), "-o", str(exe)], check=True, capture_output=True)
    return exe


def test_frame_record_rules_agree_with_gcc_cfi(tmp_path):
    """The prologue kit against the CFI GCC wrote for the same functions (-O2 with frame
    pointers, and -O0): at every instruction of each prologue (the rows) and of each epilogue
    (epilogue_at, read from the pc to the ret), the CFA where both base it on one register and
    every saved register's slot; the body rule (CFA = s0) after the prologue."""
    from swk_plugin.arch import get_architecture
    from swk_plugin.unwind.cfi import cfi_rule_at
    arch = get_architecture("riscv64")
    checked = 0
    exes = [(C.build(TARGET, ("chain.c",), f"rv-fp-{flags[0][1:]}", flags), None) for flags in (O2_FP, O0)]
    exes += [(_frames_exe(tmp_path, *O2_FP), FRAMES_FUNCS), (_frames_exe(tmp_path, *O0), FRAMES_FUNCS)]
    for exe, names in exes:
        mod = _cfi_module(exe)
        tstart, data = _text(exe)
        for name, (start, end) in _functions(exe, names or ("stop_here", "a", "b", "c", "main")).items():
            pro = arch.prologue.parse_prologue(data[start - tstart:start - tstart + arch.prologue.READ_SIZE], start)
            assert pro is not None, f"{name}: no frame record parsed"
            for addr, _ins in _insn_addrs(exe, start, end):
                cfi = cfi_rule_at(mod, addr)
                code = data[addr - tstart:addr - tstart + arch.prologue.EPILOGUE_READ]
                epi = arch.prologue.epilogue_at(code, addr, (start, end))
                if addr in pro.rows:
                    rule = pro.rows[addr]
                elif epi is not None:
                    rule = epi.rule
                else:
                    rule = pro.body
                    assert (cfi.cfa.reg, cfi.cfa.offset) == (arch.fp, 0), f"{name}+{addr - start:#x}: {cfi}"
                cfa_ok, saved_ok = _same_place(rule, cfi, arch)
                assert cfa_ok and saved_ok, f"{name}+{addr - start:#x}: swk {rule} vs CFI {cfi}"
                checked += 1
    assert checked > 100


def test_analysis_agrees_with_gcc_cfi(tmp_path):
    """The stack-height analysis (arch/dataflow.py fed by the riscv64 decoder) against GCC's
    CFI of the same code, at every instruction of every function in -O2 builds (frame
    pointers or not): the CFA wherever both base it on sp, and the slot of every register
    both say is saved."""
    from swk_plugin.arch import get_architecture
    from swk_plugin.rule import OFFSET, UNDEFINED, RegRule
    from swk_plugin.unwind.cfi import cfi_rule_at
    arch = get_architecture("riscv64")
    checked = 0
    exes = [C.build(TARGET, srcs, f"rv-an-{'-'.join(srcs)}-{'-'.join(flags)}".replace(".", "_"), flags,
                    ("-pthread",) if "threads.c" in srcs else ())
            for flags, srcs in ((O2, ("chain.c",)), (O2_FP, ("chain.c",)), (O2, ("threads.c",)), (O0, ("recurse.c",)))]
    exes += [_frames_exe(tmp_path, *O2), _frames_exe(tmp_path, *O2_FP)]
    big_frames = 0
    for exe in exes:
        mod = _cfi_module(exe)
        tstart, data = _text(exe)
        read = lambda a, n: data[a - tstart:a - tstart + n]       # noqa: E731
        for name, (start, end) in _functions(exe, None).items():
            if not tstart <= start < tstart + len(data) or end <= start:
                continue
            fa = arch.analysis.analyze(read, start, end)
            for addr, height in zip(fa.addrs, fa.rules):
                cfi = cfi_rule_at(mod, addr)
                if cfi is None or cfi.regs.get(arch.ra, RegRule(OFFSET, 0)).kind == UNDEFINED:
                    continue            # _start: ra undefined, and sp realigned under a CFA of sp+0
                # where the CFI follows sp, so does the analysis (large frames included)
                assert height is not None or cfi.cfa.reg != arch.sp, f"{name}+{addr - start:#x}: lost, CFI {cfi}"
                if height is None:
                    continue
                rule = height.rule
                if rule.cfa.reg == cfi.cfa.reg:
                    assert rule.cfa.offset == cfi.cfa.offset, f"{name}+{addr - start:#x}: {rule} vs {cfi}"
                mine = {r: rr.arg for r, rr in rule.regs.items() if rr.kind == OFFSET}
                theirs = {r: rr.arg for r, rr in cfi.regs.items() if rr.kind == OFFSET}
                for r in set(mine) & set(theirs):
                    assert mine[r] == theirs[r], f"{name}+{addr - start:#x} r{r}: {rule} vs {cfi}"
                checked += 1
                big_frames += name == "big" and rule.cfa.reg == cfi.cfa.reg == arch.sp and rule.cfa.offset > 65536
    assert checked > 200 and big_frames


# --------------------------------------------------------------------------
# LLDB on qemu's stub
# --------------------------------------------------------------------------

LLDB_CASES = [BY_ID[i] for i in ("chain-O0", "chain-nocfi", "signal-raise-O2", "threads-O2", "cxx-O2")]
_LLDB: dict[str, str] = {}


def _lldb_output(case: CrossCase) -> str:
    """LLDB stopped where gdb stopped (a breakpoint at gdb's frame-0 pc of the stopped thread)."""
    choice = S.lldb()
    if choice.path is None:
        pytest.skip(choice.problem)
    if case.id not in _LLDB:
        stop_pc = T.pcs(session(case).native[1])[0] if any(c.startswith("break ") for c in case.pre) else None
        _LLDB[case.id] = C.lldb_session(case, choice.path, stop_pc=stop_pc)
    return _LLDB[case.id]


@pytest.mark.swk
@pytest.mark.parametrize("case", LLDB_CASES, ids=_ids(LLDB_CASES))
def test_lldb(case):
    """swk-bt -json -all in LLDB on qemu-riscv64's stub: frame 0 is LLDB's own pc, the known
    chain, gdb's pcs (another run: threads in order)."""
    s = session(case)
    out = _lldb_output(case)
    try:
        swk = T.parse_swk_json(C._segment(out, C.LLDB_BEGIN, C.LLDB_BT))
    except T.OutputError:
        _fail([f"{case.id}: swk-bt printed no JSON in LLDB"], out)
    pc0 = C.parse_pc0(out)
    errs = []
    for t in swk:
        frames = t.get("frames") or []
        if not frames or frames[0].get("pc") != pc0.get(t.get("tid")):
            errs.append(f"thread {t.get('tid')}: swk's frame 0 is not LLDB's pc {T._hex(pc0.get(t.get('tid')))}")
    errs += C.known_chain_errors(case, C.chains(swk, s.native, by_order=True))
    upto = None if case.gdb_right else C.right_prefix(case, s.native)
    errs += C.compare_frames(s.native, swk, None, upto=upto, check_sp=False, by_order=True)
    if errs:
        _fail(errs, "gdb:\n" + T.format_native(s.native) + "\n--- LLDB ---\n" + out[-6000:])


def test_plt_entries_are_objdumps():
    """Every PLT entry objdump names (``<NAME@plt>:``) is the symbol swk gives that address,
    read from the entry's auipc t3 / ld t3 / jalr t1 and the .got.plt slot's R_RISCV_JUMP_SLOT."""
    from swk_plugin.elf.module import ElfModule
    from swk_plugin.elf.symbols import module_symbols
    case = BY_ID["dlopen-O2"]
    exe = case.exe()
    want = {int(m.group(1), 16): m.group(2) for m in re.finditer(r"^([0-9a-f]+) <(\w+@plt)>:", _objdump(exe), re.M)}
    assert len(want) >= 3, want
    table = module_symbols(ElfModule(str(exe)))
    got = {}
    for addr in want:
        hit = table.lookup(addr)
        got[addr] = hit[0].name if hit and hit[1] == 0 else None
    assert got == want


# --------------------------------------------------------------------------
# locals: every value gdb prints, swk prints the same (arguments in a0-a7 / fa0-fa7, s0 as the
# frame base at -O0, callee-saved s1-s11 and fs0-fs11); live only (qemu-riscv64 writes no core)
# --------------------------------------------------------------------------

LOCALS_SUITE = X.Locals(TARGET)
LOCALS = LOCALS_SUITE.cases


@pytest.mark.swk
@pytest.mark.parametrize("case", LOCALS, ids=_ids(LOCALS))
def test_locals(case):
    LOCALS_SUITE.check(case, "live")
