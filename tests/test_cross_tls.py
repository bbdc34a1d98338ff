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
_LINE = re.compile(r"^work\(v=(\d+)\): calls = (-?\d+) big = (\{.*\})$")


def _frames_values(threads: list[dict]) -> dict[int, dict[str, str]]:
    """{v of work: {local: value}} from swk's JSON threads: the work frame of each, v being 2 in
    the thread stopped in stop_here (tls.c stops the thread with v == 2 there), else 5 (its
    argument may be <optimized out>)."""
    out = {}
    for t in threads:
        frames = t.get("frames") or []
        work = next((f for f in frames if f.get("function") == "work"), None)
        if work is not None:
            v = 2 if frames[0].get("function") == "stop_here" else 5
            out[v] = {a["name"]: a["value"] for a in work.get("locals") or []}
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
    if target.name in NO_LOCATION:
        info = T.run_cmd(["objdump", "--dwarf=info", str(exe)], timeout=120).stdout
        die = info[info.index(": calls"):]
        assert "DW_AT_location" not in die[:die.index("DW_TAG")], die[:400]
        got = _frames_values(T.parse_swk_json(out))
        assert {k for v in got.values() for k in v.values()} >= {"<optimized out>"}, out[-3000:]
        assert {got[v][k] for v in got for k in ("calls", "big")} == {"<optimized out>"}, out[-3000:]
        return
    want = {}
    for line in record.splitlines():
        m = _LINE.match(line)
        assert m, record
        want[int(m.group(1))] = {"calls": m.group(2), "big": m.group(3)}
    assert set(want) == {2, 5}, record
    got = _frames_values(T.parse_swk_json(out))
    assert {v: {k: got.get(v, {}).get(k) for k in ("calls", "big")} for v in want} == want, out[-4000:]
    if core is not None:
        swk, text, rc = C.swk_cli(target, core, exe, extra=("--full",))
        assert swk is not None and rc == 0, text[-3000:]
        got = _frames_values(swk)
        assert {v: {k: got.get(v, {}).get(k) for k in ("calls", "big")} for v in want} == want, text[-4000:]
