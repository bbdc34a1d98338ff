"""Thread-local variables on the variant-1 architectures (issue 26): tests/corpus/tls.c cross-built
(dynamically linked, and static) and stopped under qemu-user, its threads' `static __thread`
locals read by swk-bt -full in gdb-multiarch and by `swk bt --core --full` on qemu's core of the
same stop, equal to what each thread wrote down just before (the target's own record: GDB on
qemu's stub has no libthread_db and cannot read them at all).

What is checked per architecture: the thread descriptor from the thread pointer as glibc's own
DB_THREAD_SELF states it (`_thread_db_register64`'s bias: Power's r13 is 0x7000 past the TCB,
RISC-V's tp at the first block; AArch64's CONST_THREAD_AREA), the DTV behind it, and a static
executable's block from the thread pointer (Architecture.tls_tcb_offset / tls_first_block);
s390x's variant 2 (a0:a1).  GCC 12 gives AArch64's and RISC-V's thread-local variables no location
at all (objdump shows none): there both print <optimized out>, which is checked too.
"""
from __future__ import annotations

import re

import pytest

import cross_lib as C
import swk_testlib as T

pytestmark = [pytest.mark.corpus]

TARGETS = [C.PPC64LE, C.PPC64, C.S390X, C.AARCH64, C.RISCV64]
#: GCC 12 gives AArch64's and RISC-V's thread-local variables no DW_AT_location (those targets
#: have no DTP-relative relocation for debug information): GDB and swk print <optimized out>.
NO_LOCATION = {"aarch64", "riscv64"}
LINKS = {"dynamic": (), "static": ("-static",)}
RECORD = "tls-record.txt"
_LINE = re.compile(r"^work\(v=(\d+)\) tid=(\d+): calls = (-?\d+) big = (\{.*\})$")


def _frames_values(threads: list[dict]) -> dict[int, dict[str, str]]:
    """{thread id: {local: value}} of the work frame of each of swk's JSON threads."""
    out = {}
    for t in threads:
        work = next((f for f in t.get("frames") or [] if f.get("function") == "work"), None)
        if work is not None:
            out[t.get("tid")] = {a["name"]: a["value"] for a in work.get("locals") or []}
    return out


@pytest.mark.swk
@pytest.mark.parametrize("link", list(LINKS))
@pytest.mark.parametrize("target", TARGETS, ids=[t.name for t in TARGETS])
def test_thread_locals_equal_the_targets_record(target, link):
    C.need_machine(target)
    exe = C.build(target, ("tls.c",), f"{target.prefix}-tls-{link}", ("-O1", "-g"), ("-pthread", *LINKS[link]))
    make_core = target.qemu_core
    with C.Qemu(target, exe, [RECORD]) as q:
        cmds = ["break stop_here", "continue", f"source {T.GDB_INIT}", "swk-bt -json -all -full"]
        if make_core:
            cmds += [C.abort_command(q.proc.pid), "detach"]
        out = T.run_cmd(C.gdb_argv(target, exe, q.port, cmds), timeout=240).stdout
        record = (q.dir / RECORD).read_text()
        core = q.keep_core(f"tls-{link}") if make_core else None
        assert core is not None or not make_core, "qemu wrote no core of the guest"
    if target.name in NO_LOCATION:
        info = T.run_cmd(["objdump", "--dwarf=info", str(exe)], timeout=120).stdout
        die = info[info.index(": calls"):]
        assert "DW_AT_location" not in die[:die.index("DW_TAG")], die[:400]
        got = _frames_values(T.parse_swk_json(out))
        assert len(got) == 2, out[-3000:]
        assert {got[v][k] for v in got for k in ("calls", "big")} == {"<optimized out>"}, out[-3000:]
        return
    want, vs = {}, set()
    for line in record.splitlines():
        m = _LINE.match(line)
        assert m, record
        vs.add(int(m.group(1)))
        want[int(m.group(2))] = {"calls": m.group(3), "big": m.group(4)}
    assert vs == {2, 5} and len(want) == 2, record
    got = _frames_values(T.parse_swk_json(out))
    assert {v: {k: got.get(v, {}).get(k) for k in ("calls", "big")} for v in want} == want, out[-4000:]
    if core is not None:
        swk, text, rc = C.swk_cli(target, core, exe, extra=("--full",))
        assert swk is not None and rc == 0, text[-3000:]
        got = _frames_values(swk)
        assert {v: {k: got.get(v, {}).get(k) for k in ("calls", "big")} for v in want} == want, text[-4000:]


@pytest.mark.swk
def test_program_placed_when_the_stub_gives_no_auxv():
    """GDB on qemu's stub: swk places a PIE program by the auxiliary vector `info auxv` shows.
    Where that says nothing (qemu's stub under load once: the program's frames lost their
    names and locals in a CI run), GDB's own entry point (`info files`) places it: here
    `info auxv`'s lines are made unreadable to swk, and the threads' work frames are still
    named and their locals read, as the target recorded them."""
    target = C.PPC64LE
    C.need_machine(target)
    exe = C.build(target, ("tls.c",), f"{target.prefix}-tls-dynamic", ("-O1", "-g"), ("-pthread",))
    blind = "python import re, swk_plugin.backends.gdb.procstate as P; P._AUXV_LINE = re.compile('(?!)')"
    with C.Qemu(target, exe, [RECORD]) as q:
        out = T.run_cmd(C.gdb_argv(target, exe, q.port, ["break stop_here", "continue", f"source {T.GDB_INIT}",
                                                         blind, "swk-bt -json -all -full"]), timeout=240).stdout
        record = (q.dir / RECORD).read_text()
    want = {int(m.group(2)): {"calls": m.group(3), "big": m.group(4)}
            for m in map(_LINE.match, record.splitlines()) if m}
    assert len(want) == 2, record
    walks = T.parse_swk_json(out)
    assert walks and all(w["frames"][0]["function"] == "stop_here" or
                         any(f["function"] == "work" for f in w["frames"]) for w in walks), out[-3000:]
    got = _frames_values(walks)
    assert {v: {k: got.get(v, {}).get(k) for k in ("calls", "big")} for v in want} == want, out[-4000:]
