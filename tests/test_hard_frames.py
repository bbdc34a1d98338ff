"""The HARD frames (issue 3): swk against each program's KNOWN chain.

The cases are in tests/hard_cases.py (HARD_CASES; sources tests/corpus/hard_*):
no CFI at all (PIE, non-PIE, stripped), a timer signal in frameless no-CFI
code, no-CFI threads, deep no-CFI recursion, hand-written assembly without
CFI, JIT code, a smashed saved frame pointer (with and without CFI), a
dlopen'd library without CFI.

  test_twin_with_cfi[CASE]     gdb's bt of the case's twin (same source built
                               so gdb can prove it: CFI, or -DSWK_TWIN*) is
                               the known chain: sanity of the corpus itself
  test_twin_same_code[CASE]    where the swk tests use the twin's pcs as
                               the true pcs: .text is byte-identical
  test_gdb_bt[CASE-live|core]  records what gdb's OWN bt gives on the hard
                               build (printed: run with -rA or -s; also a
                               "gdb_result" property for --junitxml).  Only
                               checks the program stopped where intended (and,
                               for the cases with gdb_wrong, that gdb's chain
                               is NOT the known one - deterministic here, and
                               the point of the case)
  test_swk[CASE-live]          swk-bt -all -json inside gdb, live
  test_swk[CASE-gdb-core]      the same on a gcore loaded in gdb
  test_swk[CASE-cli-core]      python -m swk_plugin bt --core CORE --exe PROG

The swk tests require, per thread: the chain of names equal to the known
chain entry for entry down to _start / clone3 and nothing below; a
stop_reason that says "bottom"; frame 0 trust "context" and every caller's
trust in {cfi, frame-pointer, analysis, scan, signal}; kind "signal" exactly
on the signal frame; sp strictly increasing; and, where the twin has the
same code (hard_cases.HardCase.twin_same_code), every pc equal to the pc gdb
finds in the twin (except the pc a signal interrupted, which varies) and
every sp at the same distance from frame 0 (from the interrupted frame,
below a signal frame) as in gdb's walk of the twin.
"""

from __future__ import annotations


import pytest

import hard_cases as H
import swk_suite as S
import swk_testlib as T
from hard_cases import HARD_CASES, HardCase

pytestmark = [pytest.mark.corpus]

S.need_tool(T.GDB, "gdb")


def _params(modes):
    res = []
    for hc in HARD_CASES:
        for mode in modes:
            marks = [pytest.mark.slow] if hc.case.slow else []
            res.append(pytest.param(hc, mode, id=f"{hc.id}-{mode}" if mode else hc.id, marks=marks))
    return res


def _fail(msgs: list[str], extra: str = "") -> None:
    text = "\n".join(msgs)
    if extra:
        text += "\n--- context ---\n" + extra
    pytest.fail(text, pytrace=False)


def _twin_pcs(hard: H.HardCorpus, hc: HardCase) -> dict[int, list] | None:
    """Per thread, the true pcs of the hard build (from gdb's walk of the
    twin), when the twin has the very same code; else None."""
    if not hc.twin_same_code:
        return None
    return {n: T.pcs(tf) for n, tf in hard.native_live(hc.twin).items()}


def _twin_sps(hard: H.HardCorpus, hc: HardCase) -> dict[int, list] | None:
    """Per thread, the sps of gdb's walk of the twin (same code only): their
    differences are the hard build's true frame sizes."""
    if not hc.twin_same_code:
        return None
    return {n: [f.sp for f in T.real_frames(tf)] for n, tf in hard.native_live(hc.twin).items()}


# --------------------------------------------------------------------------
# sanity: the twin, which gdb can walk, has the known chain
# --------------------------------------------------------------------------

@pytest.mark.native
@pytest.mark.parametrize("hc", [pytest.param(h, id=h.id) for h in HARD_CASES])
def test_twin_with_cfi(hard, hc: HardCase):
    native = hard.native_live(hc.twin)
    errs = T.expected_mismatches(H.native_chains(native), hc.twin)
    for num, tf in native.items():
        if tf.error:
            errs.append(f"thread {num}: gdb unwind error: {tf.error}")
        if tf.stop_reason != "outermost":
            errs.append(f"thread {num}: gdb stopped with {tf.stop_reason!r}, not 'outermost'")
    if errs:
        _fail(errs, T.format_native(native))


@pytest.mark.native
@pytest.mark.parametrize("hc", [pytest.param(h, id=h.id) for h in HARD_CASES if h.twin_same_code])
def test_twin_same_code(hard, hc: HardCase):
    """The twin's .text is the hard build's, byte for byte at the same
    address (and the library's, if any): only unwind tables, symbols and
    DWARF differ, so the pcs gdb finds in the twin are the true pcs."""
    pairs = [("program", hard.exe(hc.case), hard.exe(hc.twin))]
    if hc.case.lib:
        pairs.append(("library", hard.lib(hc.case), hard.lib(hc.twin)))
    for what, a, b in pairs:
        ta, tb = H.text_section(a), H.text_section(b)
        assert ta is not None and tb is not None, f"{what}: no .text in {a} or {b}"
        assert ta[0] == tb[0], f"{what}: .text at {ta[0]:#x} in {a}, {tb[0]:#x} in the twin {b}"
        assert ta[1] == tb[1], f"{what}: .text bytes differ between {a} and the twin {b}"


# --------------------------------------------------------------------------
# what gdb's own bt says about the hard builds (recorded, not trusted)
# --------------------------------------------------------------------------

@pytest.mark.native
@pytest.mark.parametrize("hc,mode", _params(["live", "core"]))
def test_gdb_bt(hard, hc: HardCase, mode: str, record_property):
    native = hard.native_live(hc.case) if mode == "live" else hard.native_core(hc.case)
    chains = H.native_chains(native)
    summary = H.gdb_summary(native)
    record_property("gdb_result", summary)
    print(f"\n[gdb bt of {hc.id} ({mode})]\n{summary}\n[known chain]\n{H.expected_summary(hc.case)}"
          + (f"\n[note] {hc.gdb_note}" if hc.gdb_note else ""))

    errs = []
    # the program stopped where intended: the threads are there, and frame 0
    # is the known top (by name, or by pc from the twin for unnamed frames)
    if set(native) != set(hc.case.expected):
        errs.append(f"threads {sorted(native)} != expected {sorted(hc.case.expected)}")
    twin_pcs = _twin_pcs(hard, hc)
    for num in sorted(set(native) & set(hc.case.expected)):
        top = chains[num][0] if chains[num] else "<no frame>"
        if T.chain_mismatch([top], hc.case.expected[num][:1]) is not None:
            errs.append(f"thread {num}: stopped in {top!r}, not {hc.case.expected[num][0]!r}")
        if twin_pcs is not None and num in twin_pcs and T.pcs(native[num])[:1] != twin_pcs[num][:1]:
            errs.append(f"thread {num}: frame 0 pc {H.hexs(T.pcs(native[num])[0])} != the twin's "
                        f"{H.hexs(twin_pcs[num][0])}")
    if hc.gdb_wrong and not errs:
        if not T.expected_mismatches(chains, hc.case):
            errs.append(f"gdb's own bt of {hc.id} IS the known chain: the case no longer tests "
                        f"anything gdb gets wrong ({hc.gdb_note})")
    if errs:
        _fail(errs, T.format_native(native))


# --------------------------------------------------------------------------
# swk: live in gdb, on a core in gdb, on a core from the CLI
# --------------------------------------------------------------------------

def _check(hard, hc: HardCase, swk_threads, native, output: str, by_tid: bool) -> None:
    ctx = ("known chain:\n" + H.expected_summary(hc.case) + "\ngdb's own bt:\n" + H.gdb_summary(native)
           + "\n--- swk ---\n" + (H.swk_summary(swk_threads) if swk_threads else "(no JSON)")
           + "\n--- other output ---\n" + H.other_output(output)[-3000:])
    if swk_threads is None:
        _fail([f"{hc.id}: swk printed no JSON line"], ctx)
    try:
        mapped = T.thread_by_key(swk_threads, native, by_tid=by_tid)
    except T.OutputError as e:
        _fail([str(e)], ctx)
    errs = []
    if set(mapped) != set(hc.case.expected):
        errs.append(f"threads: swk {sorted(mapped)} != expected {sorted(hc.case.expected)}")
    twin_pcs, twin_sps = _twin_pcs(hard, hc), _twin_sps(hard, hc)
    for num in sorted(set(mapped) & set(hc.case.expected)):
        st = mapped[num]
        errs += H.swk_thread_errors(st.get("frames") or [], st.get("stop_reason"), hc.case.expected[num],
                                    f"thread {num}", twin_pcs.get(num) if twin_pcs else None,
                                    twin_sps.get(num) if twin_sps else None)
    if hc.extra_check is not None:
        errs += hc.extra_check({n: t.get("frames") or [] for n, t in mapped.items()})
    if errs:
        _fail(errs, ctx)


@pytest.mark.swk
@pytest.mark.parametrize("hc,mode", _params(["live", "gdb-core", "cli-core"]))
def test_swk(hard, hc: HardCase, mode: str):
    case = hc.case
    exe = hard.exe(case)
    if mode == "live":
        native, swk, out = T.gdb_and_swk_frames(exe, hard.stop_cmds(case), timeout=case.timeout)
        _check(hard, hc, swk, native, out, by_tid=False)
    elif mode == "gdb-core":
        native, swk, out = T.gdb_and_swk_frames(exe, [], core=hard.core(case), timeout=case.timeout)
        _check(hard, hc, swk, native, out, by_tid=False)
    else:
        native = hard.native_core(case)
        p = T.run_swk_cli(["bt", "--core", hard.core(case), "--exe", exe, "--json", "--all"],
                          timeout=case.timeout)
        try:
            swk = T.parse_swk_json(p.stdout)
        except T.OutputError:
            swk = None
        if swk is not None and p.returncode != 0:
            _fail([f"swk_plugin exited {p.returncode}"], p.stdout)
        _check(hard, hc, swk, native, p.stdout, by_tid=True)
