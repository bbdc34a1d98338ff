"""Power-64 little-endian (issue 26): the corpus cross-built for ppc64le and run under qemu-user,
walked by swk inside gdb-multiarch and from qemu's own cores with the CLI; the ABI's facts
swk states checked against the cross toolchain and GCC's own CFI.

For every case of CASES (tests/cross_lib.py runs them):
  test_gdb_own_walk[CASE]          gdb's own walk is the known chain where the case says gdb is
                                   right, and is not where it says it is wrong (recorded)
  test_swk_in_gdb[CASE]            swk-bt -json -all: the known chain, and every frame's pc and sp
                                   equal to gdb's where gdb is right (else up to where gdb errs)
  test_gdb_with_swk_unwinder[CASE] gdb's own bt with swk's unwinder: the known chain
  test_cli_on_qemu_core[CASE]      `swk bt --core` on qemu's core of the guest at that stop
Units: pt_regs / elf_prstatus / ucontext offsets against the cross compiler's <sys/procfs.h>
and <ucontext.h> (a program run under qemu); the back chain's prologue rules against GCC's
CFI of the same functions; bl / bctrl return sites against objdump.
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
TARGET = C.PPC64LE
C.need_machine(TARGET)

#: main's callers in the cross C library (__libc_start_call_main has no symbol there).
LIBC_START = [None, "__libc_start_main"]
CHAIN = ["stop_here", "c", "b", "a", "main", *LIBC_START]
SIGTRAMP = T.SIGTRAMP


def _case(id, srcs, cflags, expected, **kw) -> CrossCase:
    return CrossCase(id, srcs, cflags, expected, target=TARGET, **kw)


_SIG_PRE = ("handle SIGUSR1 SIGALRM nostop noprint pass", "break stop_here")
CASES = [
    _case("chain-O0", ("chain.c",), O0, {1: CHAIN}),
    _case("chain-O2", ("chain.c",), O2, {1: CHAIN}),
    # no CFI in the program: the back chain (and lr for the leaf stop_here)
    _case("chain-nocfi", ("chain.c",), NOCFI, {1: CHAIN}),
    _case("signal-raise-O2", ("signal.c",), O2,
          {1: ["stop_here", "h1", "on_signal", SIGTRAMP, None, "raise", "sig_b", "sig_a", "main", *LIBC_START]},
          pre=_SIG_PRE, run_args=("raise",), gdb_right=False,
          gdb_note="qemu-user's sigreturn trampoline (li r0,172; sc in a page of its own) is not the "
                   "kernel's vDSO one gdb 13 knows: gdb shows it as ?? and unwinds garbage past it"),
]
THREAD_START = [None, "clone"]   # start_thread (no symbol in the cross libc), then clone
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
        ldflags=("-ldl",), run_args=("{lib}",), lib=(("dlib.c",), (*O2, "-fPIC"), "libppc64dlib.so")),
    _case("recurse-O0", ("recurse.c",), O0, {1: ["stop_here", *(["rec"] * (RECURSE_DEPTH + 1)), "main", *LIBC_START]},
          run_args=(str(RECURSE_DEPTH),)),
    _case("crash-abort-O2", ("crash.c",), O2, {1: [None, "raise", "abort", "do_abort", "abort_b", "abort_a", "main",
                                                  *LIBC_START]}, pre=(), run_args=("abort",)),
    # a timer signal in frameless code without CFI: the back chain cannot help a leaf's caller
    _case("hard-signal-nocfi", ("hard_signal.c",), NOCFI, {1: [
        "fault", "h1", "handler", SIGTRAMP, "loop", "b", "a", "main", *LIBC_START]},
        pre=("handle SIGALRM nostop noprint pass",), gdb_right=False,
        gdb_note="qemu-user's trampoline (as signal-raise-O2)", interrupted=("loop",)),
]
BY_ID = {c.id: c for c in CASES}
#: One gdb session per program (test_ppc64be.py's cases share it: keyed by the executable's
#: name, which names the target); gdb's trailing pc-0 frame dropped (cross_suite).
session = X.Sessions(zero_bottom=True)
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
    X.check_gdb_with_swk_unwinder(case, session(case), sigtramp_unnamed=True)


@pytest.mark.swk
@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_cli_on_qemu_core(case):
    X.check_cli_on_core(case, session(case))


# --------------------------------------------------------------------------
# the ABI's facts, against the toolchain
# --------------------------------------------------------------------------

_OFFSETS_C = r"""
#include <stdio.h>
#include <stddef.h>
#include <ucontext.h>
#include <sys/procfs.h>
int main(void) {
    printf("pr_reg %zu\nprstatus %zu\ngregset %zu\n", offsetof(struct elf_prstatus, pr_reg),
           sizeof(struct elf_prstatus), sizeof(elf_gregset_t));
    printf("uid %zu\npid %zu\nfname %zu\npsargs %zu\nprpsinfo %zu\nuid_size %zu\n",
           offsetof(struct elf_prpsinfo, pr_uid), offsetof(struct elf_prpsinfo, pr_pid),
           offsetof(struct elf_prpsinfo, pr_fname), offsetof(struct elf_prpsinfo, pr_psargs),
           sizeof(struct elf_prpsinfo), sizeof(((struct elf_prpsinfo *)0)->pr_uid));
    printf("uc_sigmask %zu\nuc_mcontext %zu\nucontext %zu\n", offsetof(ucontext_t, uc_sigmask),
           offsetof(ucontext_t, uc_mcontext), sizeof(ucontext_t));
    printf("regs %zu\ngp_regs %zu\nfp_regs %zu\n", offsetof(mcontext_t, regs), offsetof(mcontext_t, gp_regs),
           offsetof(mcontext_t, fp_regs));
    printf("PT_NIP %d\nPT_CTR %d\nPT_LNK %d\nPT_XER %d\nPT_CCR %d\n", PT_NIP, PT_CTR, PT_LNK, PT_XER, PT_CCR);
    return 0;
}
"""


def _toolchain_offsets(tmp_path, target=TARGET) -> dict[str, int]:
    src = tmp_path / "offsets.c"
    src.write_text(_OFFSETS_C)
    exe = tmp_path / "offsets"
    subprocess.run([target.gcc, str(src), "-o", str(exe)], check=True, capture_output=True)
    out = subprocess.run([*target.qemu_argv, str(exe)], check=True, capture_output=True, text=True).stdout
    return {k: int(v) for k, v in (line.split() for line in out.splitlines())}


def test_layouts_match_the_toolchain(tmp_path):
    from swk_plugin.arch.ppc64 import regsets, signal
    got = _toolchain_offsets(tmp_path)
    rs = regsets.REGSETS
    assert (rs.prstatus_reg_offset, rs.prstatus_size, rs.user_regs_size) == \
        (got["pr_reg"], got["prstatus"], got["gregset"])
    assert rs.long == 8
    assert rs.prpsinfo == {"uid": got["uid"], "uid_size": got["uid_size"], "pid": got["pid"],
                           "fname": got["fname"], "psargs": got["psargs"], "size": got["prpsinfo"]}
    assert (signal.UC_SIGMASK, signal.UC_MCONTEXT, signal.UCONTEXT_SIZE) == \
        (got["uc_sigmask"], got["uc_mcontext"], got["ucontext"])
    assert (signal.SC_REGS_POINTER, signal.SC_GP_REGS, signal.SC_FP_REGS) == \
        (got["regs"], got["gp_regs"], got["fp_regs"])
    slots = regsets.SLOTS
    assert (slots["pc"], slots["ctr"], slots["lr"], slots["xer"], slots["cr"]) == \
        (got["PT_NIP"], got["PT_CTR"], got["PT_LNK"], got["PT_XER"], got["PT_CCR"])


def _functions(exe, target=TARGET):
    """{name: (start, end)} of the program's own functions (nm's symbol table)."""
    out = {}
    nm = subprocess.run([target.tool("nm"), "-S", "--defined-only", str(exe)], check=True, capture_output=True,
                        text=True).stdout
    for line in nm.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tT" and parts[3] in ("stop_here", "a", "b", "c", "main"):
            out[parts[3]] = (int(parts[0], 16), int(parts[0], 16) + int(parts[1], 16))
    return out


def test_back_chain_rules_agree_with_gcc_cfi():
    """The prologue kit's body rule (CFA = *(r1), lr at CFA+16) against the CFI GCC wrote for
    the same functions: the lr slot, every callee-saved register's slot, and (where the
    function does not move r1 again) the frame size, in the body of every non-leaf function."""
    from swk_plugin.arch import get_architecture
    from swk_plugin.elf.module import ElfModule
    from swk_plugin.rule import OFFSET
    from swk_plugin.unwind.cfi import cfi_rule_at
    arch = get_architecture("ppc64le")
    exe = _case("chain-O0", ("chain.c",), O0, {}).exe()
    mod = ElfModule(str(exe))
    code = exe.read_bytes()
    checked = 0
    for name, (start, end) in _functions(exe).items():
        off = next(s["sh_offset"] + start - s["sh_addr"] for s in _sections(exe)
                   if s["sh_type"] == "SHT_PROGBITS" and s["sh_addr"] <= start < s["sh_addr"] + s["sh_size"])
        pro = arch.prologue.parse_prologue(code[off:off + arch.prologue.READ_SIZE], start)
        if name == "stop_here" and pro is None:
            continue                                    # a leaf at -O0 may still save lr: either is fine
        assert pro is not None, f"{name}: no back-chain prologue parsed"
        pc = pro.body_at
        cfi = cfi_rule_at(mod, pc)
        assert cfi is not None and cfi.cfa.reg == arch.sp, f"{name}: {cfi}"
        assert cfi.ra_reg == arch.ra, f"{name}: CFI's return column {cfi.ra_reg} after renumbering"
        assert pro.size == cfi.cfa.offset, f"{name}: frame {pro.size} vs CFI's CFA r1+{cfi.cfa.offset}"
        cfi_saved = {r: rr.arg for r, rr in cfi.regs.items() if rr.kind == OFFSET}
        assert cfi_saved == pro.saved, f"{name}: saved {pro.saved} vs CFI's {cfi_saved}"
        checked += 1
    assert checked >= 4


def _sections(exe):
    from elftools.elf.elffile import ELFFile
    with open(exe, "rb") as f:
        return [dict(s.header) for s in ELFFile(f).iter_sections()]


def test_return_sites_match_objdump():
    """Every bl / bctrl objdump shows in the program's text is a return site swk decodes, and
    nothing else is."""
    from swk_plugin.arch import get_architecture
    arch = get_architecture("ppc64le")
    exe = _case("chain-O2", ("chain.c",), O2, {}).exe()
    text = next(s for s in _sections(exe) if s["sh_type"] == "SHT_PROGBITS" and s["sh_flags"] & 4
                and s["sh_size"] > 256)
    data = exe.read_bytes()[text["sh_offset"]:text["sh_offset"] + text["sh_size"]]
    sites, _end = arch.calls.return_sites(data, text["sh_addr"])
    dis = subprocess.run([TARGET.tool("objdump"), "-d", "--section=.text", str(exe)], check=True,
                         capture_output=True, text=True).stdout
    calls = {int(m.group(1), 16) for m in re.finditer(r"^\s*([0-9a-f]+):\s+(?:[0-9a-f]{2} ){4}\s*(bl|bctrl|blrl)\b",
                                                       dis, re.M)}
    assert calls, "objdump shows no call"
    assert set(sites.values()) == calls


def test_eh_frame_is_renumbered():
    """GCC's .eh_frame names lr 65; .debug_frame 108 (the ABI's number): swk reads one numbering."""
    from swk_plugin.elf.module import ElfModule
    from swk_plugin.unwind.cfi import module_cfi
    exe = _case("chain-O0", ("chain.c",), O0, {}).exe()
    mod = ElfModule(str(exe))
    tables = module_cfi(mod)
    assert tables, "no CFI"
    for table in tables:
        for fde in table.iter_fdes():
            for row in table.rows(fde):
                assert row.ra_reg == 108, (table.section, row)
                assert not set(row.regs) & {65, 66}, (table.section, row)


#: A breakpoint on the linker's call stub of abort (found by GDB's own `info functions`: its
#: name is the linker's, ``NNNNNNNN.plt_call.abort@@GLIBC_2.17``).
_STUB_BREAK = ('python gdb.execute("break *" + next(l.split()[0] for l in gdb.execute('
               '"info functions plt_call[.]abort@", to_string=True).splitlines() if l.startswith("0x")))')


@pytest.mark.swk
def test_plt_call_stub_named_as_gdb():
    """Stopped in a linker-generated PLT call stub (ld's ``*.plt_call.*`` in .text, which GDB
    names by the stub's symbol as written, version and all): swk-bt's lines equal GDB's own bt,
    frame for frame (GDB's last, at pc 0, aside: the ABI's end of the chain, swk's stop reason)."""
    import dataclasses
    case = dataclasses.replace(BY_ID["crash-abort-O2"], pre=(_STUB_BREAK,))
    out = C.gdb_commands_session(case, ["echo SWK-GDB-BT\\n", "bt", f"source {T.GDB_INIT}",
                                        "echo SWK-SWK-BT\\n", "swk-bt"])
    gdb_part, _, swk_part = out.partition("SWK-SWK-BT")
    gdb_lines = [ln for ln in gdb_part.partition("SWK-GDB-BT")[2].splitlines() if ln.startswith("#")]
    swk_lines = [ln for ln in swk_part.splitlines() if ln.startswith("#")]
    assert gdb_lines and "plt_call.abort" in gdb_lines[0], out[-3000:]
    if gdb_lines[-1].startswith(f"#{len(gdb_lines) - 1}  0x0000000000000000 in ?? ()"):
        gdb_lines.pop()
    assert swk_lines == gdb_lines, out[-3000:]


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
    if case.exe_name not in _LLDB:
        stop_pc = T.pcs(session(case).native[1])[0] if any(c.startswith("break ") for c in case.pre) else None
        _LLDB[case.exe_name] = C.lldb_session(case, choice.path, stop_pc=stop_pc)
    return _LLDB[case.exe_name]


@pytest.mark.swk
@pytest.mark.parametrize("case", LLDB_CASES, ids=_ids(LLDB_CASES))
def test_lldb(case):
    """swk-bt -json -all in LLDB on qemu-ppc64le's stub: frame 0 is LLDB's own pc, the known
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


def _text(exe):
    text = next(s for s in _sections(exe) if s["sh_type"] == "SHT_PROGBITS" and s["sh_flags"] & 4
                and s["sh_size"] > 256)
    return text["sh_addr"], exe.read_bytes()[text["sh_offset"]:text["sh_offset"] + text["sh_size"]]


def _all_functions(exe, target=TARGET):
    """{name: (start, end)} of every sized function symbol (nm)."""
    out = {}
    nm = subprocess.run([target.tool("nm"), "-S", "--defined-only", str(exe)], check=True, capture_output=True,
                        text=True).stdout
    for line in nm.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tT":
            start = int(parts[0], 16)
            out[parts[3]] = (start, start + int(parts[1], 16))
    return out


@pytest.mark.parametrize("cid", ["chain-O0", "chain-O2", "threads-O2", "cxx-O2", "recurse-O0"])
def test_analysis_agrees_with_gcc_cfi(cid):
    """The stack-height analysis (arch/dataflow.py fed by the Power decoder) against GCC's CFI
    of the same code, at every instruction of every function: where the CFI bases the CFA on
    r1 the analysis knows the height and agrees, and every register both say is saved is in the
    same slot (lr's included: mflr r0; std r0,16(r1))."""
    from swk_plugin.arch import get_architecture
    from swk_plugin.elf.module import ElfModule
    from swk_plugin.rule import OFFSET
    from swk_plugin.unwind.cfi import cfi_rule_at
    arch = get_architecture("ppc64le")
    exe = BY_ID[cid].exe()
    mod = ElfModule(str(exe))
    tstart, data = _text(exe)
    read = lambda a, n: data[a - tstart:a - tstart + n]       # noqa: E731
    checked = lr_saved = 0
    for name, (start, end) in _all_functions(exe).items():
        if not tstart <= start < tstart + len(data) or end <= start or name.startswith("_start"):
            continue
        fa = arch.analysis.analyze(read, start, end)
        for addr, height in zip(fa.addrs, fa.rules):
            cfi = cfi_rule_at(mod, addr)
            if cfi is None or cfi.cfa.reg != arch.sp:
                continue
            assert height is not None, f"{name}+{addr - start:#x}: the analysis lost the height, CFI {cfi}"
            rule = height.rule
            if rule.cfa.reg == arch.sp:
                assert rule.cfa.offset == cfi.cfa.offset, f"{name}+{addr - start:#x}: {rule} vs {cfi}"
            mine = {r: rr.arg for r, rr in rule.regs.items() if rr.kind == OFFSET}
            theirs = {r: rr.arg for r, rr in cfi.regs.items() if rr.kind == OFFSET}
            for r in set(mine) & set(theirs):
                assert mine[r] == theirs[r], f"{name}+{addr - start:#x} r{r}: {rule} vs {cfi}"
            assert arch.ra not in theirs or arch.ra in mine, f"{name}+{addr - start:#x}: lr's save missed: {rule}"
            lr_saved += arch.ra in mine
            checked += 1
    assert checked > 20 and lr_saved


# --------------------------------------------------------------------------
# locals: every value gdb prints, swk prints the same (Power's registers: arguments in r3-r10,
# callee-saved r14-r31, the CFA from r1 or the back chain)
# --------------------------------------------------------------------------

LOCALS_SUITE = X.Locals(TARGET, fp_regs=range(32, 64))    # f0-f31: qemu's cores hold no FP state
LOCALS = LOCALS_SUITE.cases


@pytest.mark.swk
@pytest.mark.parametrize("mode", ["live", "cli-core"])
@pytest.mark.parametrize("case", LOCALS, ids=_ids(LOCALS))
def test_locals(case, mode):
    LOCALS_SUITE.check(case, mode)
