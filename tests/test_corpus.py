"""The swk test corpus against real gdb.

For every case in swk_testlib.CASES (program x build variant, with its true
call chain known by construction):

  test_native[CASE-live|core]  gdb's own backtrace == the known chain
                               (sanity of the corpus and the harness; no swk)
  test_swk[CASE-live]          swk-bt inside gdb on the live process
  test_swk[CASE-gdb-core]      swk-bt inside gdb on a gcore of it (gdb PROG CORE)
  test_swk[CASE-cli-core]      python -m swk_plugin bt --core CORE --exe PROG

The swk tests compare swk's walk frame by frame with gdb's own walk of the
very same process or core (pcs, sps, function names after strip_params,
signal frames, thread ids; gdb's virtual inline/tailcall frames skipped), check the
JSON contract (levels 0..n-1, non-empty stop_reason, kind) and check the
known chain.  Bad-input tests are at the end.
"""

from __future__ import annotations

import os
import subprocess

import pytest

import swk_testlib as T
import swk_suite as S
from swk_testlib import CASES, Case

pytestmark = [pytest.mark.corpus]

S.need_tool(T.GDB, "gdb")

#: SWK_TEST_LOOSE_NAMES=1: accept glibc aliases of gdb's names (raise for
#: __GI_raise, __libc_start_main for __libc_start_main_impl, ...).  The
#: default is strict: swk must name every frame as gdb does.
SAME_NAME = T.loose_same_name if os.environ.get("SWK_TEST_LOOSE_NAMES", "") not in ("", "0") \
    else T.strict_same_name


def _params(modes):
    res = []
    for case in CASES:
        for mode in modes:
            marks = [pytest.mark.slow] if case.slow else []
            res.append(pytest.param(case, mode, id=f"{case.id}-{mode}", marks=marks))
    return res


def _native_chains(native: dict[int, T.ThreadFrames]) -> dict[int, list]:
    return {n: T.chain(fr) for n, fr in native.items()}


def _fail(msgs: list[str], extra: str = "") -> None:
    text = "\n".join(msgs)
    if extra:
        text += "\n--- context ---\n" + extra[-6000:]
    pytest.fail(text, pytrace=False)


# --------------------------------------------------------------------------
# (1) sanity: gdb's own backtrace is the known chain
# --------------------------------------------------------------------------

@pytest.mark.native
@pytest.mark.parametrize("case,mode", _params(["live", "core"]))
def test_native(corpus, case: Case, mode: str):
    native = corpus.native_live(case) if mode == "live" else corpus.native_core(case)
    errs = T.expected_mismatches(_native_chains(native), case)
    for num, tf in native.items():
        if tf.error:
            errs.append(f"thread {num}: gdb unwind error: {tf.error}")
        if tf.stop_reason != "outermost":
            errs.append(f"thread {num}: gdb stopped with {tf.stop_reason!r}, not 'outermost'")
    if errs:
        _fail(errs, T.format_native(native))


@pytest.mark.native
def test_native_core_matches_live(corpus):
    """A gcore holds the same stacks as the live process it was taken from
    (gdb disables ASLR, so even the addresses agree) - except where the pc is
    where a timer signal happened to land."""
    errs = []
    for case in CASES:
        if "alarm" in case.id:
            continue
        live, core = corpus.native_live(case), corpus.native_core(case)
        for num in sorted(set(live) | set(core)):
            a = T.pcs(live.get(num, []))
            b = T.pcs(core.get(num, []))
            if a != b:
                errs.append(f"{case.id} thread {num}: live pcs != core pcs")
    if errs:
        _fail(errs)


# --------------------------------------------------------------------------
# (2)-(4) swk: live in gdb, on a core in gdb, on a core from the CLI
# --------------------------------------------------------------------------

def _check_swk(case: Case, native, swk_threads, output: str, by_tid: bool = False) -> None:
    if swk_threads is None:
        _fail([f"{case.id}: swk printed no JSON line"], output)
    errs = T.compare_swk_to_gdb(native, swk_threads, by_tid=by_tid, check_sp=True, same_name=SAME_NAME)
    try:
        mapped = T.thread_by_key(swk_threads, native, by_tid=by_tid)
        chains = {n: T.chain(t.get("frames") or []) for n, t in mapped.items()}
        errs += [f"known chain: {m}" for m in T.expected_mismatches(
            chains, case, None if SAME_NAME is T.strict_same_name else SAME_NAME)]
    except T.OutputError as e:
        errs.append(str(e))
    if errs:
        _fail(errs, "gdb's own walk:\n" + T.format_native(native) + "\n--- swk output ---\n" + output)


@pytest.mark.swk
@pytest.mark.parametrize("case,mode", _params(["live", "gdb-core", "cli-core"]))
def test_swk(corpus, case: Case, mode: str):
    exe = corpus.exe(case)
    if mode == "live":
        native, swk, out = T.gdb_and_swk_frames(exe, corpus.stop_cmds(case), timeout=case.timeout)
        _check_swk(case, native, swk, out)
    elif mode == "gdb-core":
        native, swk, out = T.gdb_and_swk_frames(exe, [], core=corpus.core(case), timeout=case.timeout)
        _check_swk(case, native, swk, out)
    else:
        native = corpus.native_core(case)
        p = T.run_swk_cli(["bt", "--core", corpus.core(case), "--exe", exe, "--json", "--all"],
                          timeout=case.timeout)
        try:
            swk = T.parse_swk_json(p.stdout)
        except T.OutputError:
            swk = None
        if swk is not None and p.returncode != 0:
            _fail([f"swk_plugin exited {p.returncode}"], p.stdout)
        _check_swk(case, native, swk, p.stdout, by_tid=True)


@pytest.mark.swk
@pytest.mark.parametrize("mode", ["live", "cli-core"])
def test_compressed_debug_frame_in_a_separate_debug_file(corpus, mode):
    """The only CFI of the user functions is a zlib-compressed .debug_frame in the separate
    debug file: swk inflates it and walks them by CFI (not by its analysis or scan)."""
    from swk_plugin.elf.module import ElfModule
    from swk_plugin.elf.sections import SHF_COMPRESSED
    case = T.CASES_BY_ID["chain-debug_frame-debuglink-zlib"]
    exe = corpus.exe(case)
    debug = ElfModule(str(exe) + ".debug")
    flags = {h[0]: h[2] for h in debug.section_headers()}
    assert flags[".debug_frame"] & SHF_COMPRESSED, "the debug file's .debug_frame is not compressed"
    assert not ElfModule(str(exe)).has_section(".debug_frame")
    if mode == "live":
        _native, swk, out = T.gdb_and_swk_frames(exe, corpus.stop_cmds(case), timeout=case.timeout)
    else:
        p = T.run_swk_cli(["bt", "--core", corpus.core(case), "--exe", exe, "--json", "--all"],
                          timeout=case.timeout)
        out, swk = p.stdout, T.parse_swk_json(p.stdout)
    assert swk, out
    frames = {f["function"]: f for f in swk[0]["frames"]}
    for fn in ("c", "b", "a", "main"):
        assert fn in frames, out
    for fn in ("b", "a", "main"):          # callers of a user function: found by its CFI
        assert (frames[fn]["trust"], frames[fn]["stepper"]) == ("cfi", "DebugStepper"), frames[fn]


# --------------------------------------------------------------------------
# bad input: one clear line, never a Traceback
# --------------------------------------------------------------------------

BEGIN, END = "SWK-TEST-BEGIN", "SWK-TEST-END"


def _swk_lines(prog, stop_cmds, cmd: str, core=None) -> tuple[list[str], str]:
    """Run ``cmd`` in gdb with swk loaded, return (lines it printed, full output)."""
    out = T.run_gdb(prog, [*stop_cmds, f"echo {BEGIN}\\n", cmd, f"echo {END}\\n"],
                    core=core, swk=True, timeout=120)
    lines = out.splitlines()
    try:
        i, j = lines.index(BEGIN), lines.index(END)
    except ValueError:
        pytest.fail(f"markers missing from gdb output:\n{out}", pytrace=False)
    return [ln for ln in lines[i + 1:j] if ln.strip()], out


def _assert_one_clear_line(lines: list[str], out: str) -> None:
    assert "Traceback" not in out, out
    assert len(lines) == 1, f"expected exactly one line, got {len(lines)}:\n" + "\n".join(lines)
    assert len(lines[0].strip()) > 5, lines


@pytest.mark.swk
def test_bad_option(corpus):
    case = T.CASES_BY_ID["chain-O0g"]
    lines, out = _swk_lines(corpus.exe(case), corpus.stop_cmds(case), "swk-bt --bogus")
    _assert_one_clear_line(lines, out)
    assert "bogus" in lines[0], lines


@pytest.mark.swk
def test_no_program_loaded():
    lines, out = _swk_lines(None, [], "swk-bt")
    _assert_one_clear_line(lines, out)


@pytest.mark.swk
def test_no_program_loaded_json():
    lines, out = _swk_lines(None, [], "swk-bt -json")
    _assert_one_clear_line(lines, out)


@pytest.mark.swk
def test_program_not_running(corpus):
    lines, out = _swk_lines(corpus.exe("chain-O0g"), [], "swk-bt")
    _assert_one_clear_line(lines, out)


@pytest.mark.swk
def test_program_exited(corpus):
    # the program ran to completion: no process any more
    lines, out = _swk_lines(corpus.exe("chain-O0g"), ["run"], "swk-bt")
    _assert_one_clear_line(lines, out)


@pytest.mark.swk
def test_cli_nonexistent_core():
    p = T.run_swk_cli(["bt", "--core", "/nonexistent/core", "--json"])
    assert p.returncode != 0, p.stdout
    assert "Traceback" not in p.stdout, p.stdout
    lines = [ln for ln in p.stdout.splitlines() if ln.strip()]
    assert len(lines) == 1, p.stdout


@pytest.mark.swk
def test_cli_nonexistent_exe(corpus):
    core = corpus.core("chain-O0g")
    p = T.run_swk_cli(["bt", "--core", core, "--exe", "/nonexistent/prog", "--json"])
    assert p.returncode != 0, p.stdout
    assert "Traceback" not in p.stdout, p.stdout
    lines = [ln for ln in p.stdout.splitlines() if ln.strip()]
    assert len(lines) == 1, p.stdout


@pytest.mark.swk
def test_cli_not_a_core(corpus):
    exe = corpus.exe("chain-O0g")
    p = T.run_swk_cli(["bt", "--core", exe, "--exe", exe, "--json"])
    assert p.returncode != 0, p.stdout
    assert "Traceback" not in p.stdout, p.stdout
    lines = [ln for ln in p.stdout.splitlines() if ln.strip()]
    assert len(lines) == 1, p.stdout


@pytest.mark.swk
def test_cli_truncated_core(corpus, tmp_path):
    """A core cut short: swk may print what it can or fail, but never a Traceback."""
    core = corpus.core("chain-O0g")
    cut = tmp_path / "cut.core"
    cut.write_bytes(core.read_bytes()[: 64 * 1024])
    p = T.run_swk_cli(["bt", "--core", cut, "--exe", corpus.exe("chain-O0g"), "--json"])
    assert "Traceback" not in p.stdout, p.stdout
    if p.returncode != 0:
        lines = [ln for ln in p.stdout.splitlines() if ln.strip() and not ln.startswith('{"thread"')]
        assert len(lines) == 1, p.stdout


@pytest.mark.swk
def test_cli_output_complete_through_a_pipe_and_a_reader_leaving_early(corpus):
    """`swk` ends its process without tearing its objects down (os._exit, __main__.py):
    what it wrote reaches a pipe whole, its exit code stands, and a reader that stops
    early (`| head -1`) costs neither a traceback nor an error code."""
    core, exe = corpus.core("recurse-O0g"), corpus.exe("recurse-O0g")
    argv = [T.PYTHON, "-m", "swk_plugin", "bt", "--core", str(core), "--exe", str(exe)]
    whole = subprocess.run(argv, cwd=T.REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=180)
    lines = whole.stdout.splitlines()
    assert whole.returncode == 0 and not whole.stderr, whole.stderr
    assert len(lines) > 10000 and lines[-1].startswith("#") and " in _start " in lines[-1] + " ", lines[-3:]
    early = subprocess.Popen(argv, cwd=T.REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = early.stdout.readline()
    early.stdout.close()
    err = early.stderr.read()
    assert early.wait(timeout=180) == 0, err
    assert first.startswith("Thread ") and "Traceback" not in err, err
    bad = subprocess.run([*argv[:4], "/nonexistent/core"], cwd=T.REPO, capture_output=True, text=True,
                         timeout=60)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and not bad.stdout, bad.stderr
