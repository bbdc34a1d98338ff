"""elfutils' own test cores (issue 26: "every core of an architecture swk claims walks
completely"), walked by ``swk bt --core CORE [--exe EXEC] --json`` and compared with
eu-stack's walk of the same core (tests/elfutils_cores.py has the cores and the oracle).

For every core eu-stack walks, thread by thread (matched by tid):

  * swk has every thread eu-stack has, and no other;
  * swk's real frames (inlined ones left out, as eu-stack prints them) begin with eu-stack's
    pcs, in order: swk goes at least as far as eu-stack;
  * a frame swk finds past eu-stack's last is in an executable mapping of the core (eu-stack
    stops where a module has no CFI: the bottom of a static program, a C library the core
    names but elfutils does not ship).

Cores of architectures swk claims (x86-64, i386, AArch64) must pass; those of issue 26's
(ppc64le, big-endian ppc64, s390x, x32, riscv64: NOT_YET) are strict xfails, so the first one
swk walks fails loudly until its architecture leaves NOT_YET.
"""

from __future__ import annotations

import pytest

import elfutils_cores as EC
import swk_suite as S
import swk_testlib as T

pytestmark = [pytest.mark.swk]

S.need_tool(EC.EU_STACK, "elfutils")
S.need_tool(EC.GDB, "gdb-multiarch")
if EC.tests_dir() is None:
    S.missing(f"elfutils' source package not unpacked under {EC.SRC}",
              "scripts/setup.sh fetches it (apt-get source elfutils, a private sources list: network at set-up)")

#: Issue 26's architectures swk does not walk yet: their cores are strict xfails (an architecture
#: leaves this set when swk walks its cores).
NOT_YET = set()
PENDING = pytest.mark.xfail(strict=True, reason="issue 26: architecture not yet supported")
#: Cores of architectures swk claims that it walks short of eu-stack (issue 26 says every one
#: walks completely): strict xfails naming what is missing, until swk walks them.
SHORT = {
}


def _walked(archs) -> list:
    """The cores of ``archs`` eu-stack walks (the others have no oracle: a kernel dump, a core
    of 65,000 program headers elfutils cannot attach to)."""
    return [c for c in EC.cores() if c.arch in archs and EC.eu_stack(c).threads]


def _params():
    def marks(c):
        if c.arch in NOT_YET:
            return [PENDING]
        if c.id in SHORT:
            return [pytest.mark.xfail(strict=True, reason=f"issue 26: {SHORT[c.id]}")]
        return []
    return [pytest.param(c, id=f"{c.arch}-{c.id}", marks=marks(c)) for c in _walked((*EC.CLAIMED, *EC.ISSUE_26))]


def swk_walk(core: EC.ElfutilsCore) -> tuple[list | None, str, int]:
    """``swk bt --core CORE [--exe EXEC] --json`` in the directory of the decompressed files
    (as eu-stack and gdb ran)."""
    swk = T.REPO / ".venv" / "bin" / "swk"
    argv = [str(swk)] if swk.exists() else [T.PYTHON, "-m", "swk_plugin"]
    argv += ["bt", "--core", core.core.name, "--json"]
    if core.exe is not None:
        argv += ["--exe", core.exe.name]
    p = T.run_cmd(argv, timeout=300, cwd=EC.OUT)
    try:
        return T.parse_swk_json(p.stdout), p.stdout, p.returncode
    except T.OutputError:
        return None, p.stdout, p.returncode


def _hexes(pcs) -> str:
    return "[" + ", ".join(T._hex(p) for p in pcs) + "]"


def walk_errors(core: EC.ElfutilsCore, swk_threads: list[dict]) -> list[str]:
    """What differs between swk's walk and the oracle (eu-stack's), thread by thread."""
    orc = EC.oracle(core)
    by_tid = {t.get("tid"): t for t in swk_threads}
    errs = []
    if set(by_tid) != set(orc.threads):
        errs.append(f"threads: swk {sorted(by_tid)}, eu-stack {sorted(orc.threads)}")
    for tid, want in sorted(orc.threads.items()):
        t = by_tid.get(tid)
        if t is None:
            continue
        got = [f.get("pc") for f in T.real_frames(t.get("frames") or [])]
        want_pcs = [f.pc for f in want]
        if got[:len(want_pcs)] != want_pcs:
            level = next((i for i, (a, b) in enumerate(zip(got, want_pcs)) if a != b), min(len(got), len(want_pcs)))
            errs.append(f"tid {tid}: swk's pcs {_hexes(got)} are not eu-stack's {_hexes(want_pcs)} "
                        f"(first difference at #{level}; swk stopped: {t.get('stop_reason')})")
            continue
        for level, pc in enumerate(got[len(want_pcs):], len(want_pcs)):
            if pc is None or not EC.in_code(core, pc):
                errs.append(f"tid {tid} #{level}: {T._hex(pc)}, past eu-stack's last frame, is in no "
                            f"executable mapping of the core")
    return errs


@pytest.mark.parametrize("core", _params())
def test_swk_walks_elfutils_core(core: EC.ElfutilsCore):
    swk, out, rc = swk_walk(core)
    context = (f"--- eu-stack ---\n{EC.eu_stack(core).output}\n--- dropped from eu-stack's walk (repeated, "
               f"gdb-multiarch passes them once) ---\n{EC.oracle(core).dropped}\n--- gdb-multiarch ---\n"
               + "\n".join(f"tid {tid}: {_hexes(f.pc for f in fr)}" for tid, fr in EC.gdb_walk(core).threads.items())
               + f"\n--- swk ---\n{out[-6000:]}")
    if swk is None or rc != 0:
        pytest.fail(f"{core.name}: swk bt --core exited {rc} without a walk\n{context}", pytrace=False)
    errs = walk_errors(core, swk)
    if errs:
        pytest.fail("\n".join(errs) + "\n" + context, pytrace=False)


def test_cores_of_every_architecture():
    """The premise: elfutils ships cores of every architecture named here, and for each one swk
    claims a core with its executable whose eu-stack walk reaches main."""
    archs = EC.by_arch()
    assert set(EC.CLAIMED) | set(EC.ISSUE_26) <= set(archs), sorted(archs)
    for arch in EC.CLAIMED:
        with_main = [c.name for c in archs[arch] if c.exe is not None
                     and any(f.function == "main" for fr in EC.eu_stack(c).threads.values() for f in fr)]
        assert with_main, f"{arch}: no core whose eu-stack walk reaches main"

