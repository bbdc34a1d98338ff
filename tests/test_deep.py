"""Deep stacks (issue 25): stack overflows walked to main, printed as they are found.

tests/corpus/overflow.c recurses until its stack overflows; `overflow KIB` sets the stack's
size first.  Oracles: GDB's own bt of a 512 KiB overflow (about 25,000 levels: rec, its inlined
descend, hop's tail-call frame), which swk's text must equal line for line although swk prints
it in segments; and the program's own record of its depth in the 8 MiB overflow (rec's argument
n is 1 in the frame main called and one more in each deeper rec), which GDB takes minutes to
print: swk must reach main with the levels that record says, in flat memory.
"""
from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

import swk_suite as S
import swk_testlib as T

pytestmark = [pytest.mark.corpus]

S.need_tool(T.GDB, "gdb")

SMALL_KIB = 512
_REC = re.compile(r"^#(\d+)\s+(?:0x[0-9a-f]+ in )?rec_plain \(n=(?:n@entry=)?(\d+)\)")
_MARK = re.compile(r"^\[\u2026 (\d+) more frames of (\S+) \(\) at (\S+) \u2026\]$")


@pytest.fixture(scope="module")
def overflow():
    return T.build(["overflow.c"], "overflow-O2", ("-O2", "-g"))


@pytest.fixture(scope="module")
def small(overflow):
    """(core, GDB's bt lines on it) of the 512 KiB overflow."""
    core = T.make_core(overflow, (f"run {SMALL_KIB}",), timeout=300)
    out = T.run_gdb(overflow, T.marked_commands("BT", "bt"), core=core, timeout=600)
    lines = [ln for ln in T.between_markers(out, "BT") if ln.startswith("#")]
    assert len(lines) > 20_000, out[-2000:]
    return core, lines


@pytest.fixture(scope="module")
def big(overflow):
    """The 8 MiB overflow's core: 262,000 frames of rec_plain."""
    return T.make_core(overflow, ("run 8192 plain",), timeout=600)


def _cli(*args, timeout=600):
    """The stdout lines of `swk ARGS`, a fresh process."""
    p = T.run_swk_cli(args, timeout=timeout)
    assert p.returncode == 0, p.stdout[-3000:]
    return p.stdout.splitlines()


def _cli_rss(*args, timeout=600):
    """(stdout lines, peak RSS in MiB) of `swk ARGS`, the child's own (wait4)."""
    pid = os.fork()
    if pid == 0:   # pragma: no cover - the child
        try:
            fd = os.open(str(T.BUILD / f".deep-{os.getpid()}.out"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            os.chdir(T.REPO)
            os.execv(T.PYTHON, [T.PYTHON, "-m", "swk_plugin", *map(str, args)])
        finally:
            os._exit(127)
    _pid, status, usage = os.wait4(pid, 0)
    path = T.BUILD / f".deep-{pid}.out"
    text = path.read_text()
    path.unlink()
    assert os.waitstatus_to_exitcode(status) == 0, text[-3000:]
    return text.splitlines(), usage.ru_maxrss / 1024


def test_streamed_text_is_gdbs_bt(overflow, small):
    """A walk of 25,000 levels goes out in segments of 4,096 frames: every line is GDB's
    (inlined calls and tail-call frames on both sides of each segment's edge)."""
    core, gdb_lines = small
    lines = _cli("bt", "--core", core, "--collapse", "unlimited")
    assert [ln for ln in lines if ln.startswith("#")] == gdb_lines


def test_recursion_collapsed(overflow, small):
    """By default a run of more than 10,000 frames of one function at one return address is
    its first frame, then one line counting the levels left out; the levels after it keep
    GDB's numbers.  `--collapse 5` collapses at 5."""
    core, gdb_lines = small
    for args, limit in (((), 10_000), (("--collapse", "5"), 5)):
        lines = _cli("bt", "--core", core, *args)
        frames = lines[1:]
        marks = [i for i, ln in enumerate(frames) if _MARK.match(ln)]
        assert len(marks) == 1, frames[:20]
        m = _MARK.match(frames[marks[0]])
        skipped, name = int(m.group(1)), m.group(2)
        before, after = frames[:marks[0]], frames[marks[0] + 1:]
        assert before == gdb_lines[:len(before)]
        assert after == gdb_lines[len(before) + skipped:]
        # each frame of the run is three levels (descend inlined in rec, hop's tail call)
        assert skipped % 3 == 0 and skipped // 3 > limit and name == "rec"


def test_streamed_json_is_whole(overflow, small):
    """--json of a streamed walk: one line, its levels GDB's (function, line) in order."""
    core, gdb_lines = small
    lines = _cli("bt", "--core", core, "--json")
    assert len(lines) == 1
    walk = json.loads(lines[0])
    assert [f["level"] for f in walk["frames"]] == list(range(len(gdb_lines)))
    names = [re.match(r"#\d+\s+(?:0x[0-9a-f]+ in )?(\S+) ", ln).group(1) for ln in gdb_lines]
    assert [f["function"] for f in walk["frames"]] == names
    assert walk["stop_reason"].startswith("bottom of the stack")


def test_limits_of_a_streamed_walk(overflow, small):
    """N and -N levels of a streamed walk are GDB's bt N / bt -N lines."""
    core, gdb_lines = small
    lines = _cli("bt", "--core", core, "--collapse", "unlimited", "5000")
    assert lines[1:-1] == gdb_lines[:5000] and lines[-1] == "(More stack frames follow...)"
    lines = _cli("bt", "--core", core, "--collapse", "unlimited", "-7000")
    assert lines[1:] == gdb_lines[-7000:]


def test_stack_overflow_to_main(overflow, big):
    """The 8 MiB overflow: walked to main and past it in memory flat in the depth; the level
    of each rec printed is the program's own record of its depth."""
    lines, rss = _cli_rss("bt", "--core", big)
    assert rss < 300, f"peak RSS {rss:.0f} MiB"
    recs = [(int(m.group(1)), int(m.group(2))) for m in map(_REC.match, lines) if m]
    main = next(int(ln.split()[0][1:]) for ln in lines if re.match(r"#\d+\s+0x[0-9a-f]+ in main ", ln))
    depth = recs[0][1]
    assert depth > 200_000
    for level, n in recs:       # rec_plain n is depth - n levels below the top
        assert level == depth - n, (level, n)
    assert main == depth
    assert any(_MARK.match(ln) for ln in lines)
    assert lines[-1].split()[-1] == "()" and "_start" in lines[-1]


def test_stack_overflow_in_gdb(overflow, big):
    """swk-bt in GDB on the 8 MiB overflow's core: the command line's lines, up to main."""
    out = T.run_gdb(overflow, T.marked_commands("SWK", "swk-bt"), core=big, swk=True, timeout=900)
    mine = T.between_markers(out, "SWK")
    cli = _cli("bt", "--core", big)
    assert mine == cli[1:]
    assert any(re.match(r"#\d+\s+0x[0-9a-f]+ in main ", ln) for ln in mine)


def test_stack_overflow_live_in_gdb(overflow):
    """The 8 MiB overflow live, stopped by its SIGSEGV in GDB (no core): swk-bt walks the live
    process to main, each rec_plain at the level its own argument says."""
    out = T.run_gdb(overflow, ["run 8192 plain", *T.marked_commands("SWK", "swk-bt")], swk=True, timeout=900)
    lines = T.between_markers(out, "SWK")
    recs = [(int(m.group(1)), int(m.group(2))) for m in map(_REC.match, lines) if m]
    assert recs, "\n".join(lines[:5]) or out[-3000:]
    depth = recs[0][1]
    assert depth > 200_000 and all(level == depth - n for level, n in recs)
    main = [ln for ln in lines if re.match(rf"#{depth}\s+0x[0-9a-f]+ in main ", ln)]
    assert main, "\n".join(lines[-6:])


def test_deep_live_process_with_the_command_line(overflow):
    """A live process 262,000 levels deep (rec_park, parked in pause()): swk bt --pid walks its
    copy to main in memory flat in the depth; rec_park's own counter n numbers every level
    printed, main is the level after rec_park(1); the process goes on."""
    depth = 262_000
    proc = subprocess.Popen([str(overflow), "16384", "park", str(depth)], stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        lines, rss = _cli_rss("bt", "--pid", proc.pid)
        assert proc.poll() is None, "the process did not survive swk"
    finally:
        proc.kill()
        proc.wait()
    assert rss < 300, f"peak RSS {rss:.0f} MiB"
    park = re.compile(r"^#(\d+)\s+(?:0x[0-9a-f]+ in )?rec_park \(n=(?:n@entry=)?(\d+),")
    recs = [(int(m.group(1)), int(m.group(2))) for m in map(park.match, lines) if m]
    assert recs and recs[0] == (1, depth), lines[:4]
    assert all(level == depth + 1 - n for level, n in recs), recs[:4]
    assert any(re.match(rf"#{depth + 1}\s+0x[0-9a-f]+ in main ", ln) for ln in lines), lines[-6:]
    assert any(_MARK.match(ln) for ln in lines)


def test_entry_value_chains_as_deep_as_gdb_follows():
    """tests/corpus/parked.c's deep(n) passes n - 1 on: at -O2 each frame's n is its caller's
    call-site value DW_OP_entry_value(n) - 1, a chain down to main's deep(5000).  GDB 13
    evaluates at most 257 nested expressions: frames more than 256 calls above main print
    "<error reading variable: DWARF-2 expression error: Loop detected (257).>", the one at
    the edge that error and its n@entry, the rest n=n@entry=V.  swk-bt's lines are GDB's, across
    the edge of a 4,096-frame segment too (its last frame's callers come later)."""
    exe = T.build(["parked.c"], "parked", ("-O2", "-g"), ("-pthread",))
    out = T.run_gdb(exe, ["set width 0", "handle SIGUSR1 SIGUSR2 nostop noprint pass", "break park_main",
                          "run 5000 quiet",
                          *T.marked_commands("GDB", "bt"), *T.marked_commands("SWK", "swk-bt")],
                    swk=True, timeout=900)
    gdb, mine = T.between_markers(out, "GDB"), T.between_markers(out, "SWK")
    assert len(gdb) > 5000, gdb[-3:]
    loops = [ln for ln in gdb if "Loop detected (257)" in ln]
    assert len(loops) > 4000, "GDB no longer stops entry-value chains at 257: " + gdb[3]
    assert mine == gdb, next((f"swk {a!r}\ngdb {b!r}" for a, b in zip(mine, gdb) if a != b), "lengths differ")
