"""swk as GDB's frame unwinder: GDB's own bt, thread apply all bt, up, finish,
info registers and info locals, with gdb_init.py sourced."""
import dataclasses
import re

import pytest

import hard_cases as H
import swk_suite as S
import swk_testlib as T

pytestmark = [pytest.mark.swk, pytest.mark.corpus]

S.need_tool(T.GDB, "gdb")

CORPUS = T.Corpus()
HARD = H.HardCorpus()
ALL = [(c, CORPUS) for c in T.CASES] + [(h.case, HARD) for h in H.HARD_CASES]


#: Where GDB's bt with swk's unwinder differs from the known chain by design: a trampoline GDB
#: does not recognise (i386 SA_RESTORER code named swk_restore) is unwound by swk, and a Python
#: unwinder cannot make GDB mark a frame as a signal frame: GDB shows it as a caller, named
#: after pc-1 (the end of the function before it, __x86.get_pc_thunk.dx), every pc right.
UNWINDER_CHAINS = {
    "i386-hard-restorer": {1: [(T.Alt("swk_restore", "__x86.get_pc_thunk.dx") if e == T.SIGTRAMP else e)
                               for e in H.HARD_BY_ID["i386-hard-restorer"].case.expected[1]]},
}


def _params():
    out = []
    for case, corpus in ALL:
        for mode in ("live", "core"):
            marks = [pytest.mark.slow] if case.slow else []
            out.append(pytest.param(case, corpus, mode, id=f"{case.id}-{mode}", marks=marks))
    return out


def gdbs_own_frames(case, corpus, mode, swk=True):
    exe = corpus.exe(case)
    if mode == "live":
        out = T.run_gdb(exe, [*corpus.stop_cmds(case), *T.native_commands()], swk=swk,
                        timeout=case.timeout)
    else:
        out = T.run_gdb(exe, T.native_commands(), core=corpus.core(case), swk=swk, timeout=case.timeout)
    assert "Traceback" not in out, out[-3000:]
    return T.parse_native(out), out


@pytest.mark.parametrize("case,corpus,mode", _params())
def test_gdbs_own_bt_gives_the_known_chain(case, corpus, mode):
    """Every program of the corpora of issues 2 and 3: GDB's bt (all threads) is the true chain,
    signal frames stay GDB's own sigtramp frames, and GDB's walk ends at the outermost frame."""
    native, out = gdbs_own_frames(case, corpus, mode)
    expected = UNWINDER_CHAINS.get(case.id)
    if expected is not None:
        case = dataclasses.replace(case, expected=expected)
    errs = T.expected_mismatches({n: T.chain(fr) for n, fr in native.items()}, case)
    for num, tf in native.items():
        if tf.stop_reason != "outermost":
            errs.append(f"thread {num}: GDB stopped with {tf.stop_reason!r}")
    if errs:
        pytest.fail("\n".join(errs) + "\n" + T.format_native(native), pytrace=False)


# --- frames GDB gets right alone stay exactly as they are ---------------------------------

FRAME_DUMP = """
python
import gdb
f = gdb.newest_frame()
n = 0
while f is not None and n < 60:
    f.select()
    print("FRAME", n, hex(f.pc()), f.name())
    for r in ("rip", "rsp", "rbp", "rbx", "r12", "r13", "r14", "r15"):
        try:
            v = f.read_register(r)
            print("REG", n, r, "<not saved>" if v.is_optimized_out else hex(int(v)))
        except gdb.error as e:
            print("REG", n, r, "error", e)
    try:
        print("LOCALS", n, gdb.execute("info locals", to_string=True).replace(chr(10), " | "))
        print("ARGS", n, gdb.execute("info args", to_string=True).replace(chr(10), " | "))
    except gdb.error as e:
        print("LOCALS", n, "error", e)
    f = f.older()
    n += 1
end
"""


def dump(out):
    return [ln for ln in out.splitlines() if re.match(r"(FRAME|REG|LOCALS|ARGS) \d+ ", ln)]


@pytest.mark.parametrize("case_id", ["chain-O0g", "chain-O2g", "cxx-O2g", "crash-abort-O2g",
                                     "signal-alarm-O2g", "threads-O2g", "dlopen-O2g"])
def test_registers_and_locals_are_unchanged_where_gdb_is_right(case_id, tmp_path):
    case = T.CASES_BY_ID[case_id]
    script = tmp_path / "dump.gdb"
    script.write_text(FRAME_DUMP)
    stop = CORPUS.stop_cmds(case)
    exe = CORPUS.exe(case)
    out = T.run_gdb(exe, [*stop, "echo MARK-ON\\n", f"source {script}", "show swk unwinder",
                          "set swk unwinder off", "echo MARK-OFF\\n", f"source {script}"], swk=True)
    assert "Traceback" not in out
    with_hook, without = out.split("MARK-ON\n", 1)[1].split("MARK-OFF\n", 1)
    a, b = dump(with_hook), dump(without)
    assert len(a) > 20
    assert a == b
    assert "(0 frames unwound by swk so far)" in with_hook


def test_unwinder_is_listed_and_switchable(corpus):
    case = H.HARD_BY_ID["hard-nocfi-pie"].case
    exe = HARD.exe(case)
    out = T.run_gdb(exe, [*HARD.stop_cmds(case), "info unwinder", "echo MARK-A\\n", "bt",
                          "disable unwinder global swk", "echo MARK-B\\n", "bt", "show swk unwinder",
                          "enable unwinder global swk", "echo MARK-C\\n", "bt",
                          "set swk unwinder off", "echo MARK-D\\n", "bt", "show swk unwinder",
                          "set swk unwinder on", "show swk unwinder"], swk=True)
    assert "Traceback" not in out
    assert re.search(r"Global:\s*\n\s*swk", out)

    def names(mark):
        part = out.split(f"MARK-{mark}\n", 1)[1]
        return re.findall(r"^#\d+\s+(?:0x[0-9a-f]+ in )?(\S+)", part.split("MARK-")[0], re.M)
    good = ["stop_here", "c", "b", "a", "main"]
    assert names("A")[:5] == good and names("C")[:5] == good
    assert names("B")[:5] != good and names("D")[:5] != good
    assert "swk's unwinder is off" in out and out.rstrip().splitlines()[-1].startswith("swk's unwinder is on")


def test_finish_out_of_a_no_cfi_frame(tmp_path):
    case = H.HARD_BY_ID["hard-nocfi-pie"].case
    exe = HARD.exe(case)
    out = T.run_gdb(exe, [*HARD.stop_cmds(case), "up 2", "finish", "echo MARK\\n", "bt 2"], swk=True)
    assert "Traceback" not in out
    assert re.search(r"^#2\s+0x[0-9a-f]+ in b \(\)\n0x[0-9a-f]+ in a \(\)$", out, re.M), out[-2000:]
    after = out.split("MARK\n", 1)[1]
    assert re.match(r"#0\s+0x[0-9a-f]+ in a \(\)", after)
    assert re.search(r"^#1\s+0x[0-9a-f]+ in main \(\)", after, re.M)


def test_up_into_a_jit_stub():
    case = H.HARD_BY_ID["hard-jit"].case
    exe = HARD.exe(case)
    out = T.run_gdb(exe, [*HARD.stop_cmds(case), "up 2", "echo MARK2\\n", "frame", "up",
                          "echo MARK3\\n", "frame", "up", "echo MARK4\\n", "frame", "info frame"], swk=True)
    assert "Traceback" not in out
    f2 = re.search(r"MARK2\n#2\s+(0x[0-9a-f]+) in \?\? \(\)", out)
    f3 = re.search(r"MARK3\n#3\s+(0x[0-9a-f]+) in \?\? \(\)", out)
    assert f2 and f3, out[-3000:]
    p2, p3 = int(f2.group(1), 16), int(f3.group(1), 16)
    assert p2 & ~0xfff == p3 & ~0xfff and p2 & 0xfff == 0x53 and p3 & 0xfff == 0x13
    assert re.search(r"MARK4\n#4\s+0x[0-9a-f]+ in call_jit \(", out)
    assert "caller of frame at" in out


def test_thread_apply_all_bt_with_the_hook():
    case = H.HARD_BY_ID["hard-threads"].case
    out = T.run_gdb(HARD.exe(case), [*HARD.stop_cmds(case), "thread apply all bt"], swk=True,
                    timeout=case.timeout)
    assert "Traceback" not in out
    blocks = re.split(r"^Thread \d+ \(Thread ", out, flags=re.M)[1:]
    assert len(blocks) == 4, out[-3000:]
    for block in blocks:
        names = re.findall(r"^#\d+\s+(?:0x[0-9a-f]+ in )?(\S+)", block, re.M)
        assert names[-1] in ("_start", "clone3") and "??" not in names, block


BREAK_IT = """
python
from swk_plugin.backends.gdb import unwinder
def broken(pc):
    raise ZeroDivisionError("injected")
unwinder.UNWINDER._classify = broken
unwinder.UNWINDER.forget()
gdb.invalidate_cached_frames()
end
"""


def test_an_error_inside_the_unwinder_never_breaks_gdb(tmp_path):
    case = T.CASES_BY_ID["chain-O0g"]
    script = tmp_path / "break.gdb"
    script.write_text(BREAK_IT)
    out = T.run_gdb(CORPUS.exe(case), [*CORPUS.stop_cmds(case), f"source {script}", "bt",
                                       "maint flush register-cache", "bt", "echo MARK\\n",
                                       "set swk debug on", "maint flush register-cache", "bt 1"], swk=True)
    before, after = out.split("MARK\n", 1)
    assert before.count("swk unwinder: declined a frame after an internal error: ZeroDivisionError") == 1
    assert len(re.findall(r"^#4\s+0x[0-9a-f]+ in main \(", before, re.M)) == 2   # GDB's own bt, twice
    assert "Traceback" not in before
    assert "Traceback" in after and "injected" in after                          # details when asked
