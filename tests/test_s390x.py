"""s390x (issue 26): the corpus cross-built for s390x (z/Architecture, big-endian) and run under
qemu-user, walked by swk inside gdb-multiarch and from qemu's own cores with the CLI; the ABI's
facts swk states checked against the cross toolchain, GCC's own CFI and objdump.

For every case of CASES (tests/cross_lib.py runs them):
  test_gdb_own_walk[CASE]          gdb's own walk is the known chain where the case says gdb is
                                   right, and is not where it says it is wrong (recorded)
  test_swk_in_gdb[CASE]            swk-bt -json -all: the known chain, and every frame's pc and sp
                                   equal to gdb's where gdb is right (else up to where gdb errs)
  test_gdb_with_swk_unwinder[CASE] gdb's own bt with swk's unwinder: the known chain
  test_cli_on_qemu_core[CASE]      `swk bt --core` on qemu's core of the guest at that stop
Where GDB 13 is wrong: an rt_sigframe (a handler installed with SA_SIGINFO) whose trampoline is
not in the frame itself — qemu-user's — is read as an old sigframe, and the walk stops there
(signal.py's docstring).  No LLDB here: LLDB 22 crashes on qemu-s390x's stub
(test_lldb_crashes_on_the_stub keeps that premise).
Units: s390_regs / elf_prstatus / ucontext / _sigregs offsets against the cross compiler's
headers (a program run under qemu); both signal frames where qemu puts them (a handler
measuring its own frame); the FPRs' DWARF numbers against GCC's CFI of ``std %fN`` saves; the
frame-pointer and back-chain rules against GCC's CFI of the same functions; brasl / bras / basr
return sites and the 2/4/6-byte instruction boundaries against objdump; the stack-height
analysis against GCC's CFI; PLT entries against objdump.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

import cross_lib as C
import cross_suite as X
import swk_suite as S
import swk_testlib as T
from cross_lib import NOCFI, O0, O2, CrossCase

pytestmark = [pytest.mark.corpus]
TARGET = C.S390X
C.need_machine(TARGET)

#: main's callers: __libc_start_call_main (no symbol in the cross C library), then
#: __libc_start_main, then the program's _start (whose CFI marks r14 undefined).
LIBC_START = [None, "__libc_start_main", "_start"]
CHAIN = ["stop_here", "c", "b", "a", "main", *LIBC_START]
SIGTRAMP = T.SIGTRAMP
#: No CFI, no DWARF, but GCC's frame pointer (r11) / back chain.
NOCFI_FP = ("-O2", "-fno-omit-frame-pointer", "-g0", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables")
NOCFI_BC = (*NOCFI, "-mbackchain")
#: With CFI: the oracles of the prologue kit's rules.
O2_FP = ("-O2", "-g", "-fno-omit-frame-pointer")
O2_BC = ("-O2", "-g", "-mbackchain")


def _case(id, srcs, cflags, expected, **kw) -> CrossCase:
    return CrossCase(id, srcs, cflags, expected, target=TARGET, **kw)


_SIG_PRE = ("handle SIGUSR1 SIGALRM nostop noprint pass", "break stop_here")
_SIG_CHAIN = ["stop_here", "h1", "on_signal", SIGTRAMP, None, "raise", "sig_b", "sig_a", "main", *LIBC_START]
_RT_NOTE = ("an rt_sigframe (SA_SIGINFO) with qemu-user's trampoline, not the frame's own svc_insn: gdb 13 reads "
            "it as an old sigframe, a sregs pointer inside the siginfo, and stops (\"Cannot access memory\")")
CASES = [
    _case("chain-O0", ("chain.c",), O0, {1: CHAIN}),
    _case("chain-O2", ("chain.c",), O2, {1: CHAIN}),
    # no CFI: the stack-height analysis (the leaf stop_here's caller still in r14)
    _case("chain-nocfi", ("chain.c",), NOCFI, {1: CHAIN}),
    # no CFI, a frame pointer / a back chain: the prologue kit, in c's body and at its first
    # instruction
    _case("chain-nocfi-fp", ("chain.c",), NOCFI_FP, {1: CHAIN[1:]}, pre=("break c",)),
    # ... and in the leaf stop_here, which parks c's r11 in f0 (``ldgr %f0,%r11``): the caller's
    # r11 from the innermost frame's f0 (in GDB, with swk's unwinder, the pending frame's)
    _case("chain-nocfi-fp-leaf", ("chain.c",), NOCFI_FP, {1: CHAIN}),
    _case("chain-nocfi-fp-entry", ("chain.c",), NOCFI_FP, {1: CHAIN[1:]}, pre=("break *c",)),
    _case("chain-nocfi-backchain", ("chain.c",), NOCFI_BC, {1: CHAIN[1:]}, pre=("break c",)),
    # the old sigframe (no SA_SIGINFO): svc 119 in qemu's page, its sregs pointer
    _case("signal-raise-O2", ("signal.c",), O2, {1: _SIG_CHAIN}, pre=_SIG_PRE, run_args=("raise",)),
    # the rt_sigframe: svc 173, two bytes further in qemu's page
    _case("signal-siginfo-O2", ("signal.c",), O2, {1: _SIG_CHAIN}, pre=_SIG_PRE, run_args=("raise", "siginfo"),
          gdb_right=False, gdb_note=_RT_NOTE),
]
#: start_thread (no symbol in the cross C library), then clone's thread_start (none either; its
#: CFI marks r14 undefined).
THREAD_START = [None, None]
RECURSE_DEPTH = 1000
CASES += [
    _case("threads-O2", ("threads.c",), O2, {
        1: ["stop_here", "main_a", "main", *LIBC_START],
        2: ["read", "t1_b", "t1_a", "t1_start", *THREAD_START],
        3: [None, None, None, "t2_b", "t2_a", "t2_start", *THREAD_START],   # (the cross libc's futex wait)
        4: ["clock_nanosleep", "nanosleep", "t3_b", "t3_a", "t3_start", *THREAD_START]}, ldflags=("-pthread",)),
    _case("cxx-O2", ("cxx.cpp",), O2, {1: [
        "stop_here", "(anonymous namespace)::anon_leaf",
        "geo::Vec::operator+(geo::Vec const&) const::{lambda(int)#1}::operator()",
        "geo::Vec::operator+", "shapes::Square<int>::area", "app::Runner<long>::run", "main", *LIBC_START]}),
    _case("dlopen-O2", ("dlopen_main.c",), O2, {1: [
        "stop_here", "main_callback", "dlib_inner", "dlib_mid", "dlib_entry", "load_and_call", "main", *LIBC_START]},
        ldflags=("-ldl",), run_args=("{lib}",), lib=(("dlib.c",), (*O2, "-fPIC"), "libs390xdlib.so")),
    _case("recurse-O0", ("recurse.c",), O0, {1: ["stop_here", *(["rec"] * (RECURSE_DEPTH + 1)), "main", *LIBC_START]},
          run_args=(str(RECURSE_DEPTH),)),
    _case("crash-abort-O2", ("crash.c",), O2, {1: [None, "raise", "abort", "do_abort", "abort_b", "abort_a", "main",
                                                  *LIBC_START]}, pre=(), run_args=("abort",)),
    # a timer signal in frameless code without CFI: the analysis on both sides of the trampoline
    _case("hard-signal-nocfi", ("hard_signal.c",), NOCFI, {1: [
        "fault", "h1", "handler", SIGTRAMP, "loop", "b", "a", "main", *LIBC_START]},
        pre=("handle SIGALRM nostop noprint pass",), interrupted=("loop",)),
]
BY_ID = {c.id: c for c in CASES}
#: Cases whose trampoline swk unwinds for gdb (signal.gdb_knows is false): a Python unwinder
#: cannot make gdb mark a frame as a signal's, so there it is a frame without a name.
SWK_TRAMPOLINE = {"signal-siginfo-O2"}
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
    """gdb's bt with swk's unwinder registered.  GDB 13's own sigtramp unwinder keeps the old
    sigframe's trampoline (a signal frame in the walk); the rt_sigframe's swk unwinds."""
    X.check_gdb_with_swk_unwinder(case, session(case), sigtramp_unnamed=case.id in SWK_TRAMPOLINE)


@pytest.mark.swk
@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_cli_on_qemu_core(case):
    """qemu-s390x's own core of the guest at gdb's stop (NT_PRSTATUS: s390_regs, big-endian;
    no NT_FILE: the libraries from the dynamic linker's list, under the sysroot)."""
    X.check_cli_on_core(case, session(case))


def test_lldb_crashes_on_the_stub():
    """The premise of leaving LLDB out (cross_lib.S390X.lldb is False; docs/lldb.md): LLDB 22
    connects to qemu-s390x's stub, sets the breakpoint, and dies of SIGSEGV at the first
    ``process continue`` — swk not loaded.  If a later LLDB survives, this fails and the LLDB
    tests of the other targets belong here too."""
    choice = S.lldb()
    if choice.path is None:
        pytest.skip(choice.problem)
    case = BY_ID["chain-O2"]
    exe = case.exe()
    with C.Qemu(TARGET, exe) as q:
        p = subprocess.run([choice.path, "-b", "-x", "-o", "platform select remote-linux", "-o", f"target create {exe}",
                            "-o", f"gdb-remote 127.0.0.1:{q.port}", "-o", "breakpoint set -n stop_here",
                            "-o", "process continue", "-o", "bt"], capture_output=True, text=True, timeout=180,
                           cwd=T.BUILD, env={**T._env(), "TMPDIR": str(T.BUILD)})
    out = p.stdout + p.stderr
    for d in re.findall(r"diagnostics will be written to (\S+)", out):
        if Path(d).parent == T.BUILD:
            shutil.rmtree(d, ignore_errors=True)
    assert not TARGET.lldb
    assert p.returncode == -11 or p.returncode == 139, (p.returncode, out[-3000:])
    assert "PLEASE submit a bug report" in out and "stop_here" not in out.split("process continue", 1)[1], out[-3000:]


# --------------------------------------------------------------------------
# the ABI's facts, against the toolchain
# --------------------------------------------------------------------------

_OFFSETS_C = r"""
#include <signal.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include <ucontext.h>
#include <sys/procfs.h>
#include <asm/ptrace.h>
#include <asm/sigcontext.h>
int main(void) {
    printf("pr_reg %zu\nprstatus %zu\ngregset %zu\nfpregset %zu\n", offsetof(struct elf_prstatus, pr_reg),
           sizeof(struct elf_prstatus), sizeof(elf_gregset_t), sizeof(s390_fp_regs));
    printf("fprs %zu\n", offsetof(s390_fp_regs, fprs));
    printf("psw_mask %zu\npsw_addr %zu\ngprs %zu\nacrs %zu\norig_gpr2 %zu\ns390_regs %zu\n",
           offsetof(s390_regs, psw.mask), offsetof(s390_regs, psw.addr), offsetof(s390_regs, gprs),
           offsetof(s390_regs, acrs), offsetof(s390_regs, orig_gpr2), sizeof(s390_regs));
    printf("uc_mcontext %zu\nuc_sigmask %zu\nucontext %zu\nsiginfo %zu\n", offsetof(ucontext_t, uc_mcontext),
           offsetof(ucontext_t, uc_sigmask), sizeof(ucontext_t), sizeof(siginfo_t));
    printf("sr_psw_addr %zu\nsr_gprs %zu\nsr_acrs %zu\nsr_fpc %zu\nsr_fprs %zu\nsigregs %zu\nsigcontext %zu\n",
           offsetof(_sigregs, regs.psw.addr), offsetof(_sigregs, regs.gprs), offsetof(_sigregs, regs.acrs),
           offsetof(_sigregs, fpregs.fpc), offsetof(_sigregs, fpregs.fprs), sizeof(_sigregs),
           sizeof(struct sigcontext));
    printf("sc_sregs %zu\nmc_gregs %zu\nmc_fpregs %zu\n", offsetof(struct sigcontext, sregs),
           offsetof(mcontext_t, gregs), offsetof(mcontext_t, fpregs));
    s390_regs r;                         /* a0:a1, the thread pointer, in the table's one slot */
    memset(&r, 0, sizeof r);
    r.acrs[0] = 0x11223344u;
    r.acrs[1] = 0x55667788u;
    printf("bytes ");
    for (size_t i = 0; i < sizeof r; i++) printf("%02x", ((unsigned char *)&r)[i]);
    printf("\n");
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


def test_layouts_match_the_toolchain(tmp_path):
    """s390_regs (NT_PRSTATUS), s390_fp_regs (NT_PRFPREG), the ucontext and _sigregs of the
    signal frames, as the cross toolchain's headers lay them out; the slot of a0 and a1 is
    the thread pointer a0:a1 (tests/test_arch_kit.py checks the other slots one by one)."""
    from swk_plugin.arch import get_architecture
    from swk_plugin.arch.s390x import registers, regsets, signal
    out = _run_c(tmp_path, "offsets", _OFFSETS_C)
    got = {k: (bytes.fromhex(v) if k == "bytes" else int(v)) for k, v in (line.split() for line in out.splitlines())}
    rs = regsets.REGSETS
    assert (rs.prstatus_reg_offset, rs.prstatus_size, rs.user_regs_size) == \
        (got["pr_reg"], got["prstatus"], got["gregset"])
    assert got["gregset"] == got["s390_regs"]
    slots = regsets.SLOTS
    assert (8 * slots["pswm"], 8 * slots["pc"], 8 * slots["r0"], 8 * slots["acr0_1"], 8 * slots["orig_r2"]) == \
        (got["psw_mask"], got["psw_addr"], got["gprs"], got["acrs"], got["orig_gpr2"])
    assert (regsets.FPREGSET_SIZE, regsets.FP_FPRS) == (got["fpregset"], got["fprs"])
    arch = get_architecture("s390x")
    regs = rs.unpack_user_regs(got["bytes"])
    assert rs.thread_pointer(regs, {}) == 0x1122334455667788
    assert regs[registers.THREAD_POINTER] == 0x1122334455667788 and arch.thread_pointer == registers.THREAD_POINTER
    assert (signal.UC_MCONTEXT, signal.UC_SIGMASK, signal.UCONTEXT_SIZE, signal.SIGINFO_SIZE) == \
        (got["uc_mcontext"], got["uc_sigmask"], got["ucontext"], got["siginfo"])
    assert (signal.SR_PSW_ADDR, signal.SR_GPRS, signal.SR_ACRS, signal.SR_FPC, signal.SR_FPRS, signal.SIGREGS_SIZE) == \
        (got["sr_psw_addr"], got["sr_gprs"], got["sr_acrs"], got["sr_fpc"], got["sr_fprs"], got["sigregs"])
    assert (signal.SIGCONTEXT_SIZE, signal.SR_GPRS, signal.SR_FPC) == \
        (got["sigcontext"], got["mc_gregs"], got["mc_fpregs"])
    assert got["sc_sregs"] == 8                       # oldmask, then the sregs pointer
    for regno in range(16):
        assert signal.SC_OFFSETS[regno] == got["sr_gprs"] + 8 * regno
    assert signal.SC_OFFSETS[registers.pc] == got["sr_psw_addr"]


_SIGFRAME_C = r"""
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <asm/sigcontext.h>
static void rt_handler(int sig, siginfo_t *si, void *uc) {
    char *frame = (char *)__builtin_dwarf_cfa() - 160;          /* the handler's r15 at entry */
    unsigned char *ra = __builtin_return_address(0);
    ucontext_t *u = uc;
    printf("rt_si %ld\nrt_uc %ld\nrt_code %u\nrt_r15 %d\nrt_chain %d\n", (long)((char *)si - frame),
           (long)((char *)uc - frame), ra[0] << 8 | ra[1],
           u->uc_mcontext.gregs[15] == *(unsigned long *)frame, ra == (unsigned char *)frame + 160);
}
static void old_handler(int sig, struct sigcontext *sc) {
    char *frame = (char *)__builtin_dwarf_cfa() - 160;
    unsigned char *ra = __builtin_return_address(0);
    printf("old_sc %ld\nold_sregs %ld\nold_code %u\nold_signo %d\n", (long)((char *)sc - frame),
           (long)((char *)sc->sregs - frame), ra[0] << 8 | ra[1], *(int *)(frame + 176 + sizeof(_sigregs)) == sig);
}
int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = rt_handler;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR1, &sa, 0);
    raise(SIGUSR1);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = (void (*)(int))old_handler;
    sigaction(SIGUSR2, &sa, 0);
    raise(SIGUSR2);
    return 0;
}
"""


def test_signal_frames_where_qemu_puts_them(tmp_path):
    """Handlers under qemu-s390x measure their own frames (their r15 at entry: the CFA - 160):
    the rt_sigframe's siginfo and ucontext, the old sigframe's sigcontext and its sregs, where
    signal.py reads them; r14 at ``svc 173`` / ``svc 119`` (qemu's page, not the frame's own
    svc_insn: what gdb_knows tells apart), which frame_kind maps to each frame."""
    from swk_plugin.arch.s390x import signal
    out = _run_c(tmp_path, "sigframe", _SIGFRAME_C, "-O0")
    got = {k: int(v) for k, v in (line.split() for line in out.splitlines())}
    assert (got["rt_si"], got["rt_uc"]) == (signal.RT_SIGINFO, signal.RT_UCONTEXT)
    assert signal.RT.sigcontext_address(0) == signal.RT_UCONTEXT + signal.UC_MCONTEXT
    assert got["rt_r15"] == 1 and got["rt_chain"] == 0    # the back chain is the interrupted r15
    assert (got["old_sc"], got["old_sregs"], got["old_signo"]) == (signal.OLD_SIGCONTEXT, signal.OLD_SREGS, 1)
    assert signal.OLD.sigcontext_address(0) == signal.OLD_SREGS
    for kind, code in ((signal.RT, got["rt_code"]), (signal.OLD, got["old_code"])):
        raw = code.to_bytes(2, "big")
        assert signal.is_trampoline_code(raw) and signal.frame_kind(lambda a, n, r=raw: r, 0, False) is kind
        assert signal.gdb_knows(raw) == (kind is signal.OLD)
    # qemu's page: svc 119 first, svc 173 two bytes on; a frame stopped in the system call
    page = signal.OLD_TRAMPOLINE + signal.RT_TRAMPOLINE + b"\0\0"
    code_at = lambda a, n: page[a - 0x1000:a - 0x1000 + n]      # noqa: E731
    assert signal.frame_kind(code_at, 0x1002, False) is signal.RT
    assert signal.frame_kind(code_at, 0x1004, True) is signal.RT
    assert signal.frame_kind(code_at, 0x1000, True) is signal.OLD


_FPRS_C = r"""
__attribute__((noipa)) double use(double x) { return x * 3.0; }
__attribute__((noipa)) double keep(double a, double b, double c, double d, double e, double f, double g, double h) {
    double r = use(a) + use(b) + use(c) + use(d) + use(e) + use(f) + use(g) + use(h);
    return r + a * b + c * d + e * f + g * h;
}
int main(int argc, char **argv) { return (int)keep(argc, 2, 3, 4, 5, 6, 7, 8); }
"""


def test_fpr_dwarf_numbers_are_gccs():
    """f0-f15's DWARF numbers in the ABI's order (16: f0, 17: f2, ... 20: f1 ...): where GCC's CFI
    says register N is saved, the ``std %fM`` objdump shows at that slot names DWARF_NAMES[N]."""
    from swk_plugin.arch import get_architecture
    from swk_plugin.elf.module import ElfModule
    from swk_plugin.rule import OFFSET
    from swk_plugin.unwind.cfi import cfi_rule_at
    arch = get_architecture("s390x")
    tmp = T.BUILD / "s390x-fprs"
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "fprs.c").write_text(_FPRS_C)
    exe = tmp / "fprs"
    subprocess.run([TARGET.gcc, "-O2", "-g", str(tmp / "fprs.c"), "-o", str(exe)], check=True, capture_output=True)
    start, end = _functions(exe, ("keep",))["keep"]
    dis = _objdump(exe, f"--start-address={start:#x}", f"--stop-address={end:#x}")
    stores = {}                                         # offset from the CFA -> fN
    base = {"r15": -160}                                # registers pointing at CFA + n
    for m in re.finditer(r"^\s*[0-9a-f]+:.*?\t(std|lay|aghi|lgr)\s+(\S+)", dis, re.M):
        op, ops = m.group(1), m.group(2)
        rm = re.match(r"%(r\d+),(?:%(r\d+)|(-?\d+)(?:\(%(r\d+)\))?)$", ops)
        if op == "lgr" and rm and rm.group(2) in base:       # GCC saves them through a copy of r15
            base[rm.group(1)] = base[rm.group(2)]
        elif op == "aghi" and rm and rm.group(1) in base:
            base[rm.group(1)] += int(rm.group(3))
        elif op == "lay" and rm and rm.group(1) == rm.group(4) == "r15":
            base["r15"] += int(rm.group(3))
        elif op == "std":
            fm = re.match(r"%(f\d+),(\d+)\(%(r\d+)\)", ops)
            if fm and fm.group(3) in base:
                stores.setdefault(base[fm.group(3)] + int(fm.group(2)), fm.group(1))
    assert len(stores) >= 6, dis
    mod = ElfModule(str(exe))
    saved = {}
    for a in range(start, end, 2):
        rule = cfi_rule_at(mod, a)
        if rule is not None:
            saved.update({r: rr.arg for r, rr in rule.regs.items() if rr.kind == OFFSET and r >= 16})
    assert len(saved) >= 6, saved
    for regno, off in saved.items():
        assert stores.get(off) == arch.reg_name(regno) == arch.fp_register_name(regno), (regno, off, stores)


def _sections(exe):
    from elftools.elf.elffile import ELFFile
    with open(exe, "rb") as f:
        return [dict(s.header, name=s.name) for s in ELFFile(f).iter_sections()]


def _text(exe):
    text = next(s for s in _sections(exe) if s["name"] == ".text")
    data = Path(exe).read_bytes()[text["sh_offset"]:text["sh_offset"] + text["sh_size"]]
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


_LIBC = Path(TARGET.sysroot) / "lib" / "libc.so.6"


def test_return_sites_match_objdump():
    """Every call objdump shows in the C library's text (brasl %r14: 6 bytes, bras: 4, basr
    %r14,%rN: 2), decoded from the section's start with 2-, 4- and 6-byte instructions mixed,
    is a return site swk finds, and nothing else is; every instruction boundary objdump shows
    (but where it reads an opcode it does not know as data) is one swk decodes."""
    from swk_plugin.arch import get_architecture
    from swk_plugin.arch.s390x import zarch
    arch = get_architecture("s390x")
    start, data = _text(_LIBC)
    sites, end = arch.calls.return_sites(data, start)
    assert end == start + len(data)
    dis = _objdump(_LIBC, "--section=.text")
    insns = {int(m.group(1), 16): (len(m.group(2).split()), m.group(3), m.group(4)) for m in re.finditer(
        r"^\s*([0-9a-f]+):\s+((?:[0-9a-f]{2} )+)\s*(\S+)\s*(\S*)", dis, re.M)}
    calls = {a for a, (_n, mn, ops) in insns.items()
             if mn in ("brasl", "bras", "basr", "bas", "balr") and ops.startswith("%r14,") and ops != "%r14,%r0"}
    assert len(calls) > 10000, "objdump shows too few calls"
    assert set(sites.values()) == calls
    assert all(ra - call == insns[call][0] for ra, call in sites.items())
    mine = {a for a, _i in zarch.insns(data, start)}
    # objdump reads an opcode it does not know (0x0000: an illegal instruction, a trap) as a
    # 4-byte .long and loses the boundaries for an instruction or two after it
    data_at = sorted(a for a, (_n, mn, _o) in insns.items() if mn.startswith("."))
    strays = [a for a, (_n, mn, _o) in insns.items() if not mn.startswith(".") and a not in mine]
    assert all(any(0 < a - d <= 16 for d in data_at) for a in strays), [hex(a) for a in strays]
    assert len(strays) <= len(data_at)
    assert {insns[c][0] for c in calls} == {2, 6} or {insns[c][0] for c in calls} == {2, 4, 6}


def test_calls_ending_at_every_length():
    """calls_ending_at, given only the bytes before a return address, finds objdump's call
    there (basr: 2 bytes; brasl: 6) as one of its candidates."""
    from swk_plugin.arch import get_architecture
    arch = get_architecture("s390x")
    start, data = _text(_LIBC)
    sites, _end = arch.calls.return_sites(data, start)
    by_len = {}
    for ra, call in sorted(sites.items()):
        by_len.setdefault(ra - call, []).append((ra, call))
    assert {2, 6} <= set(by_len)
    for n, pairs in by_len.items():
        for ra, call in pairs[:200]:
            before = data[ra - start - arch.calls.MAX_CALL_LEN:ra - start]
            found = arch.calls.calls_ending_at(before, ra)
            assert any(c.addr == call and c.end == ra for c in found), (n, hex(ra), found)
            assert arch.scan.after_call(before)


def _cfi_module(exe):
    from swk_plugin.elf.module import ElfModule
    return ElfModule(str(exe))


def _insn_addrs(exe, start, end):
    from swk_plugin.arch.s390x import zarch
    tstart, data = _text(exe)
    return [a for a, _i in zarch.insns(data[start - tstart:end - tstart], start)]


#: Frames beyond lay's 20 bits (a large frame), and a VLA (alloca: r15 moved in the body).
_FRAMES_C = r"""
#include <string.h>
__attribute__((noipa)) int use(char *p, int n) { return p[n] + p[0]; }
__attribute__((noipa)) int big(int n) { char buf[700000]; memset(buf, n, sizeof buf); return use(buf, n) + 1; }
__attribute__((noipa)) int mid(int n) { char buf[3000]; memset(buf, n, sizeof buf); return use(buf, n) + 2; }
__attribute__((noipa)) int vla(int n) { char buf[n]; memset(buf, n, n); return use(buf, n - 1) + 3; }
int main(int argc, char **argv) { return big(argc) + mid(argc) + vla(argc + 10); }
"""
FRAMES_FUNCS = ("use", "big", "mid", "vla", "main")


def _frames_exe(*flags):
    d = T.BUILD / "s390x-frames"
    d.mkdir(parents=True, exist_ok=True)
    src = d / "frames.c"
    src.write_text(_FRAMES_C)
    exe = d / ("frames" + "".join(flags).replace("-", "_"))
    subprocess.run([TARGET.gcc, *flags, str(src), "-o", str(exe)], check=True, capture_output=True)
    return exe


def _same_place(rule, cfi):
    """(the CFA agrees where both base it on one register, every register both say is saved
    in memory is at the same slot).  The kit may know a save the CFI states an instruction
    later (GCC notes a stmg's saves after it): either rule is right there."""
    from swk_plugin.rule import OFFSET
    saved = {r: rr.arg for r, rr in rule.regs.items() if rr.kind == OFFSET}
    cfi_saved = {r: rr.arg for r, rr in cfi.regs.items() if rr.kind == OFFSET}
    same_cfa = rule.cfa.reg != cfi.cfa.reg or (rule.cfa.reg, rule.cfa.offset) == (cfi.cfa.reg, cfi.cfa.offset)
    return same_cfa, all(saved.get(r, o) == o for r, o in cfi_saved.items())


def test_frame_rules_agree_with_gcc_cfi():
    """The prologue kit against the CFI GCC wrote for the same functions (-O0, -O2 with a frame
    pointer, -O2 -mbackchain): at every instruction of each prologue (the rows) and of each
    epilogue (epilogue_at, read from the pc to the return), the CFA where both base it on one
    register and every saved register's slot; in the body, r11 + k where GCC's CFI bases the CFA
    on r11 (the back chain's CFA is a read of memory: the walks of chain-nocfi-backchain check it)."""
    from swk_plugin.arch import get_architecture
    from swk_plugin.unwind.cfi import cfi_rule_at
    arch = get_architecture("s390x")
    checked = bodies = 0
    exes = [(C.build(TARGET, ("chain.c",), "s390x-rules" + "".join(f).replace("-", "_"), f), None) for f in
            (O2_FP, ("-O0", "-g"), O2_BC)]
    exes += [(_frames_exe(*O2_FP), FRAMES_FUNCS), (_frames_exe("-O0", "-g"), FRAMES_FUNCS),
             (_frames_exe(*O2_BC), FRAMES_FUNCS)]
    for exe, names in exes:
        mod = _cfi_module(exe)
        tstart, data = _text(exe)
        for name, (start, end) in _functions(exe, names or ("stop_here", "a", "b", "c", "main")).items():
            pro = arch.prologue.parse_prologue(data[start - tstart:start - tstart + arch.prologue.READ_SIZE], start)
            if pro is None:
                continue                # a leaf without a frame (-O2 -mbackchain's stop_here, use)
            for addr in _insn_addrs(exe, start, end):
                cfi = cfi_rule_at(mod, addr)
                code = data[addr - tstart:addr - tstart + arch.prologue.EPILOGUE_READ]
                epi = arch.prologue.epilogue_at(code, addr, (start, end))
                if addr in pro.rows:
                    rule = pro.rows[addr]
                elif epi is not None:
                    rule = epi.rule
                else:
                    rule = pro.body
                    bodies += 1
                    if pro.k is not None and cfi.cfa.reg == arch.fp:
                        assert cfi.cfa.offset == pro.k, f"{exe.name} {name}+{addr - start:#x}: {pro} vs {cfi}"
                cfa_ok, saved_ok = _same_place(rule, cfi)
                assert cfa_ok and saved_ok, f"{exe.name} {name}+{addr - start:#x}: swk {rule} vs CFI {cfi}"
                checked += 1
    assert checked > 150 and bodies > 50


def test_analysis_agrees_with_gcc_cfi():
    """The stack-height analysis (arch/dataflow.py fed by the s390x decoder) against GCC's CFI
    of the same code, at every instruction of every function of -O0 and -O2 builds (frame
    pointers, back chains, large frames, a VLA): the CFA wherever both base it on one register,
    and the slot of every register both say is saved (r14's and r15's included)."""
    from swk_plugin.arch import get_architecture
    from swk_plugin.rule import OFFSET, UNDEFINED, RegRule
    from swk_plugin.unwind.cfi import cfi_rule_at
    arch = get_architecture("s390x")
    checked = big_frames = ra_saved = lost_pooled = 0
    exes = [C.build(TARGET, srcs, f"s390x-an-{'-'.join(srcs)}-{'-'.join(flags)}".replace(".", "_"), flags,
                    ("-pthread",) if "threads.c" in srcs else ())
            for flags, srcs in ((O2, ("chain.c",)), (O2_FP, ("chain.c",)), (O2_BC, ("chain.c",)), (O0, ("chain.c",)),
                                (O2, ("threads.c",)), (O0, ("recurse.c",)), (O2, ("signal.c",)))]
    exes += [_frames_exe(*O2), _frames_exe(*O2_FP), _frames_exe("-O0", "-g")]
    for exe in exes:
        mod = _cfi_module(exe)
        tstart, data = _text(exe)
        read = lambda a, n: data[a - tstart:a - tstart + n]       # noqa: E731
        for name, (start, end) in _functions(exe, None).items():
            if not tstart <= start < tstart + len(data) or end <= start:
                continue
            fa = arch.analysis.analyze(read, start, end)
            pooled = _pooled_frame_ends(data[start - tstart:end - tstart], start)
            for addr, height in zip(fa.addrs, fa.rules):
                cfi = cfi_rule_at(mod, addr)
                if cfi is None or cfi.regs.get(arch.ra, RegRule(OFFSET, 0)).kind == UNDEFINED:
                    continue            # _start: r14 undefined
                where = f"{exe.name} {name}+{addr - start:#x}"
                assert height is not None or cfi.cfa.reg != arch.sp or addr in pooled, f"{where}: lost, CFI {cfi}"
                lost_pooled += height is None and addr in pooled
                if height is None:
                    continue
                rule = height.rule
                if rule.cfa.reg == cfi.cfa.reg:
                    assert rule.cfa.offset == cfi.cfa.offset, f"{where}: {rule} vs {cfi}"
                mine = {r: rr.arg for r, rr in rule.regs.items() if rr.kind == OFFSET}
                theirs = {r: rr.arg for r, rr in cfi.regs.items() if rr.kind == OFFSET}
                for r in set(mine) & set(theirs):
                    assert mine[r] == theirs[r], f"{where} r{r}: {rule} vs {cfi}"
                ra_saved += arch.ra in mine and arch.ra in theirs
                checked += 1
                big_frames += name == "big" and rule.cfa.reg == cfi.cfa.reg == arch.sp and rule.cfa.offset > 524288
    assert checked > 500 and big_frames and ra_saved
    assert lost_pooled <= 8, lost_pooled


def _pooled_frame_ends(code, start):
    """Addresses after ``ag %r15,d(%rN)`` — a frame beyond 32-bit immediates freed by an add
    from GCC's literal pool, whose value is not in the code — up to the ``lmg`` that reloads
    r15: the only place the analysis may lose a height the CFI keeps."""
    from swk_plugin.arch.s390x import zarch
    out, freed = set(), False
    for addr, ins in zarch.insns(code, start):
        if freed:
            out.add(addr)
        if ins.op == zarch.OTHER and 15 in ins.writes:
            freed = True
        elif ins.op == zarch.LMG:
            freed = False
    return out


def test_plt_entries_are_objdumps():
    """Every PLT entry objdump names (``<NAME@plt>:``) is the symbol swk gives that address,
    read from the entry's larl %r1 / lg %r1,0(%r1) / br %r1 and the .got.plt slot's
    R_390_JMP_SLOT."""
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
# locals: every value gdb prints, swk prints the same (arguments in r2-r6 / f0, f2, f4, f6 and
# the caller's frame, callee-saved r6-r13 and f8-f15), live and on qemu's core (no FPR notes:
# a value DWARF puts in f0-f15 may be <optimized out> there)
# --------------------------------------------------------------------------

LOCALS_SUITE = X.Locals(TARGET, fp_regs=range(16, 32))
LOCALS = LOCALS_SUITE.cases


@pytest.mark.swk
@pytest.mark.parametrize("mode", ["live", "cli-core"])
@pytest.mark.parametrize("case", LOCALS, ids=_ids(LOCALS))
def test_locals(case, mode):
    LOCALS_SUITE.check(case, mode)
