"""swk-bt as a GDB user types it: text like bt, N/-N, -all, -v, -compare, help,
settings, and forgetting everything a stop, a resume or a write changes."""
import json
import re

import pytest

import swk_suite as S
import swk_testlib as T

pytestmark = [pytest.mark.swk]

S.need_tool(T.GDB, "gdb")

BEGIN, END = "SWK-TEST-BEGIN", "SWK-TEST-END"


def section(out, n):
    """The lines printed between the n-th BEGIN/END marker pair."""
    lines = out.splitlines()
    starts = [i for i, ln in enumerate(lines) if ln == BEGIN]
    ends = [i for i, ln in enumerate(lines) if ln == END]
    return [ln for ln in lines[starts[n] + 1:ends[n]] if ln.strip()]


def marked(*cmds):
    out = []
    for c in cmds:
        out += [f"echo {BEGIN}\\n", c, f"echo {END}\\n"]
    return out


def gdb(prog, stop, *cmds, core=None):
    out = T.run_gdb(prog, [*stop, *marked(*cmds)], core=core, swk=True, timeout=180)
    assert "Traceback" not in out, out
    return out


@pytest.fixture(scope="module")
def chain_prog(corpus):
    case = T.CASES_BY_ID["chain-O0g"]
    return corpus.exe(case), corpus.stop_cmds(case)


def frame_key(line):
    """'#1  0x... in c (x=3) at f.c:10' -> ('#1', '0x...', 'c', 'f.c:10'); args left out (issue 5)."""
    m = re.match(r"(#\d+)\s+(?:(0x[0-9a-f]+) in )?(\S+|<signal handler called>)(?: \(.*?\))?"
                 r"(?: at (\S+))?(?: from (\S+))?", line)
    assert m, line
    return m.groups()


def test_text_matches_gdbs_bt(chain_prog):
    prog, stop = chain_prog
    out = gdb(prog, stop + ["set backtrace past-main off"], "bt", "swk-bt")
    theirs, mine = section(out, 0), section(out, 1)
    assert [frame_key(x) for x in mine] == [frame_key(x) for x in theirs]
    assert mine[0].startswith("#0  stop_here (")            # no pc: stopped at a line start
    assert frame_key(mine[-1])[2] == "main"                  # past-main off, as in bt


def test_innermost_and_outermost_frames(chain_prog):
    prog, stop = chain_prog
    out = gdb(prog, stop, "bt 2", "swk-bt 2", "bt -2", "swk-bt -2", "swk-bt -json 2", "swk-bt 0")
    assert [frame_key(x) for x in section(out, 1)[:2]] == [frame_key(x) for x in section(out, 0)[:2]]
    assert section(out, 1)[2] == "(More stack frames follow...)"
    assert [frame_key(x) for x in section(out, 3)] == [frame_key(x) for x in section(out, 2)]
    walk = json.loads(section(out, 4)[0])
    assert [f["level"] for f in walk["frames"]] == [0, 1]
    assert len(section(out, 5)) == 1 and "zero" in section(out, 5)[0]


def test_verbose_shows_how_each_frame_was_found(chain_prog):
    prog, stop = chain_prog
    lines = section(gdb(prog, stop, "swk-bt -v"), 0)
    assert "[context: registers]" in lines[0]
    assert all(re.search(r"\[(cfi|frame-pointer): \w+Stepper\] sp=0x[0-9a-f]+ fp=0x[0-9a-f]+", ln)
               for ln in lines[1:-1])
    assert lines[-1].startswith("Walk ended: ")


def test_compare_marks_no_difference_where_gdb_agrees(chain_prog):
    prog, stop = chain_prog
    lines = section(gdb(prog, stop + ["set backtrace past-main off"], "swk-bt -compare"), 0)
    assert lines[-1].startswith("0 difference(s) over 5 frames")
    assert not any(ln.startswith("!=") for ln in lines)


def test_compare_marks_differences(chain_prog):
    """With a frame cap of 3, swk's walk is shorter than GDB's: the missing frames are marked."""
    prog, stop = chain_prog
    out = gdb(prog, stop + ["set backtrace past-main off"], "set swk frame-cap 3", "swk-bt -compare")
    lines = section(out, 1)
    frames = [ln for ln in lines[1:-1]]
    assert [ln[:2] for ln in frames] == ["  ", "  ", "  ", "!=", "!="]
    assert frames[3].split("|")[1].strip().endswith(" in a")
    assert lines[-1].startswith("2 difference(s) over 5 frames; swk: frame cap of 3 reached")


def test_all_threads_and_thread_apply_all(corpus):
    case = T.CASES_BY_ID["threads-O0g"]
    prog, stop = corpus.exe(case), corpus.stop_cmds(case)
    out = gdb(prog, stop, "swk-bt -all", "thread apply all swk-bt", "swk-bt -all -json")
    headers = [ln for ln in section(out, 0) if ln.startswith("Thread ")]
    assert len(headers) == 4
    assert [re.match(r"Thread (\d+) \(LWP (\d+)\):", h).group(1) for h in headers] == ["1", "2", "3", "4"]
    applied = section(out, 1)
    assert sum(1 for ln in applied if ln.startswith("Thread ")) == 4
    walks = [json.loads(ln) for ln in section(out, 2)]
    assert [w["thread"] for w in walks] == [1, 2, 3, 4]
    assert len({w["tid"] for w in walks}) == 4
    for w in walks[1:]:
        assert [f["function"] for f in w["frames"][-2:]] == ["start_thread", "clone3"]
        assert "bottom of the stack" in w["stop_reason"]


def test_help_and_settings(chain_prog):
    prog, stop = chain_prog
    out = gdb(prog, stop, "help swk-bt", "show swk frame-cap", "set swk frame-cap 3", "swk-bt -json",
              "set swk frame-cap 0", "show swk frame-cap", "show swk debug")
    assert "Usage: swk-bt [-json] [-all] [-unique] [-merge[=line]] [-svg=FILE] [-compare] [-v] [-full]\n" \
        "              [-frame-arguments=MODE] [-entry-values=MODE] [N | -N]" in "\n".join(section(out, 0))
    assert section(out, 1) == ["swk walks stop after 1000000 frames."]
    walk = json.loads(section(out, 3)[0])
    assert len(walk["frames"]) == 3 and walk["stop_reason"] == "frame cap of 3 reached"
    assert section(out, 5) == ["swk walks stop after 1000000 frames."]
    assert section(out, 6) == ["swk debug output is off."]


def test_frame_cap_ends_a_deep_walk(corpus):
    case = T.CASES_BY_ID["recurse-O0g"]
    out = gdb(corpus.exe(case), corpus.stop_cmds(case), "set swk frame-cap 500", "swk-bt -json")
    walk = json.loads(section(out, 1)[0])
    assert len(walk["frames"]) == 500 and "frame cap of 500" in walk["stop_reason"]


@pytest.fixture(scope="module")
def twice():
    return T.build(["twice.c"], "twice", ["-O0", "-g"])


def names(out, n):
    return [f["function"] for f in json.loads(section(out, n)[0])["frames"]]


def test_a_new_stop_forgets_the_old_one(twice):
    out = gdb(twice, ["break stop_here", "run"], "swk-bt -json", "continue", "swk-bt -json")
    assert names(out, 0)[:4] == ["stop_here", "first_b", "first_a", "main"]
    assert names(out, 2)[:5] == ["stop_here", "second_c", "second_b", "second_a", "main"]


def test_memory_and_register_writes_are_seen(twice):
    # -O0 stop_here keeps a frame: after `finish`-free stepping past its prologue
    # (the breakpoint is after it) its return address is at $rbp+8.
    out = gdb(twice, ["break stop_here", "run"], "swk-bt -json",
              "set var *(long *)($rbp + 8) = 0", "swk-bt -json",
              "set var $rsp = 16", "set var $rbp = 16", "swk-bt -json")
    assert names(out, 0)[:2] == ["stop_here", "first_b"]
    after_write = json.loads(section(out, 2)[0])
    assert [f["function"] for f in after_write["frames"]] == ["stop_here"]
    assert "zero" in after_write["stop_reason"]
    broken = json.loads(section(out, 5)[0])
    assert len(broken["frames"]) == 1
    assert "cannot read memory" in broken["stop_reason"]


def test_gdb_init_says_what_is_missing(tmp_path):
    import os
    import subprocess
    env = dict(os.environ, SWK_VENV=str(tmp_path / "no-venv"))
    p = subprocess.run(["gdb", "-nx", "-batch", "-ex", f"source {T.REPO}/gdb_init.py"],
                       capture_output=True, text=True, env=env, timeout=60)
    out = p.stdout + p.stderr
    assert "Traceback" not in out
    assert f"no virtual environment at {tmp_path / 'no-venv'}" in out


def test_gdb_init_sourced_from_another_python_script(tmp_path, chain_prog):
    """A user's gdbinit script that runs gdb.execute("source .../gdb_init.py"): __file__ is
    then the outer script's, yet swk loads from its own directory and walks; a copy of
    gdb_init.py away from the project says so in one line."""
    import shutil
    prog, stop = chain_prog
    outer = tmp_path / "my_gdbinit.py"
    outer.write_text(f"import gdb\ngdb.execute('source {T.REPO}/gdb_init.py')\n")
    out = T.run_gdb(prog, [f"source {outer}", *stop, "swk-bt"], swk=False, timeout=120)
    assert "Traceback" not in out and "swk:" not in out, out
    assert any(line.startswith("#0  ") and "stop_here" in line for line in out.splitlines()), out
    stray = tmp_path / "elsewhere"
    stray.mkdir()
    shutil.copy(T.REPO / "gdb_init.py", stray / "gdb_init.py")
    out = T.run_gdb(None, [f"source {stray / 'gdb_init.py'}"], swk=False, timeout=60)
    lines = [ln for ln in out.splitlines() if ln.startswith("swk:")]
    assert "Traceback" not in out and len(lines) == 1 and "has no swk_plugin/" in lines[0], out


LIBS_PY = """
import json
from swk_plugin.backends.gdb.session import SESSION
from swk_plugin.stepper import FrameStepper, Gcf
w = SESSION.walker()
ls = w.process_state.library_state
if not hasattr(gdb, "_swk_test_recorder"):
    class Recorder(FrameStepper):
        name = "Recorder"
        priority = 0x1fff
        seen = []
        def get_caller_frame(self, frame):
            return Gcf.NOT_ME, "only listens"
        def new_library_notification(self, library, change):
            self.seen.append((library.path, change))
    gdb._swk_test_recorder = Recorder()
    w.add_stepper(gdb._swk_test_recorder)
print("LIBS " + json.dumps({"libs": [[l.path, l.base] for l in ls.get_libraries()],
                            "libc": ls.get_libc().path, "aout": ls.get_aout().path,
                            "libthread": ls.get_libthread().path,
                            "trap": ls.get_lib_trap_address(),
                            "seen": gdb._swk_test_recorder.seen}))
"""


def libs_of(out):
    return [json.loads(ln[5:]) for ln in out.splitlines() if ln.startswith("LIBS ")]


def test_library_state_mirrors_gdbs_and_notifies_dlopen(corpus, tmp_path):
    case = T.CASES_BY_ID["dlopen-O0g"]
    prog, lib = corpus.exe(case), corpus.lib(case)
    script = tmp_path / "libs.py"
    script.write_text(LIBS_PY)
    out = gdb(prog, ["break main", f"run {lib}"], f"source {script}", "swk-bt", "info sharedlibrary",
              "break stop_here", "continue", f"source {script}", "swk-bt -json", "info sharedlibrary")
    before, after = libs_of(out)
    paths = [p for p, _ in after["libs"]]
    assert after["aout"] == str(prog) and paths[0] == str(prog)
    assert after["libc"].endswith("libc.so.6") and after["libthread"].endswith("libc.so.6")
    assert str(lib) in paths and str(lib) not in [p for p, _ in before["libs"]]
    assert "[vdso]" in paths
    assert after["trap"] != 0
    assert [str(lib), "load"] in after["seen"] and [str(lib), "load"] not in before["seen"]
    # every library GDB lists is known to swk
    listed = re.findall(r"^0x[0-9a-f]+\s+0x[0-9a-f]+\s+\S+\s+(?:\(\*\)\s+)?(/\S+)$", "\n".join(section(out, 7)), re.M)
    assert listed and set(listed) <= set(paths)
    walk = json.loads(section(out, 6)[0])
    assert [f["library"] for f in walk["frames"][2:5]] == [str(lib)] * 3


def test_signal_frames_print_like_gdb(corpus):
    """The trampoline prints as <signal handler called>; the interrupted frame is at its
    real pc, so like GDB swk leaves the pc out when it starts a source line."""
    case = T.CASES_BY_ID["signal-raise-O0g"]
    out = gdb(corpus.exe(case), corpus.stop_cmds(case), "bt", "swk-bt")
    theirs, mine = section(out, 0), section(out, 1)
    sig = next(i for i, ln in enumerate(theirs) if "<signal handler called>" in ln)
    assert mine[sig].endswith("<signal handler called>")
    assert [frame_key(x) for x in mine[:sig + 2]] == [frame_key(x) for x in theirs[:sig + 2]]


def test_a_limited_walk_still_knows_its_last_frame_is_a_signal_frame(corpus):
    case = T.CASES_BY_ID["signal-raise-O0g"]
    out = gdb(corpus.exe(case), corpus.stop_cmds(case), "swk-bt -json 4", "swk-bt 4")
    walk = json.loads(section(out, 0)[0])
    assert [f["kind"] for f in walk["frames"]] == ["normal", "normal", "normal", "signal"]
    assert section(out, 1)[3].endswith("<signal handler called>")
    assert section(out, 1)[4] == "(More stack frames follow...)"


def test_a_running_process_gets_one_clear_line(tmp_path):
    src = tmp_path / "spin.c"
    src.write_text("int main(void) { volatile long i = 0; for (;;) i++; }\n")
    import subprocess
    exe = tmp_path / "spin"
    subprocess.run(["gcc", "-g", "-o", str(exe), str(src)], check=True)
    out = T.run_gdb(exe, ["run &", "shell sleep 0.5", *marked("swk-bt", "swk-bt -all -json"), "kill"],
                    swk=True, timeout=60)
    assert "Traceback" not in out
    for n in (0, 1):
        lines = section(out, n)
        assert len(lines) == 1 and "running" in lines[0]


def test_symbols_are_read_when_gdb_loads_an_objfile(chain_prog):
    """`set swk prewarm` (on by default): libc's ELF symbols are read when GDB loads it, as
    GDB reads its minimal symbols, so the first swk-bt does not pay for them; off, they
    are read by the first walk. The walk is the same either way."""
    prog, stop = chain_prog
    probe = ("python from swk_plugin.elf.module import _MODULE_CACHE; "
             "print('WARM', sorted(__import__('os').path.basename(m.name) for m in _MODULE_CACHE.values() "
             "if m.cache.peek('symbols')))")
    on = gdb(prog, stop, probe, "swk-bt")
    off = T.run_gdb(prog, ["set swk prewarm off", *stop, *marked(probe, "swk-bt")], swk=True, timeout=180)
    assert "Traceback" not in off
    warm_on = [ln for ln in section(on, 0) if ln.startswith("WARM")][0]
    warm_off = [ln for ln in section(off, 0) if ln.startswith("WARM")][0]
    assert "libc.so.6" in warm_on
    assert "libc.so.6" not in warm_off
    assert section(on, 1) == section(off, 1)
    show = T.run_gdb(None, ["show swk prewarm", "set swk prewarm off", "show swk prewarm"], swk=True)
    assert ": on." in show and ": off." in show


def test_gdb_is_asked_about_values_only_with_a_printer_that_could_take_them(chain_prog):
    """swk asks GDB for a value's text only where a pretty-printer might take it (values.py):
    with GDB's builtin collection alone (mpx_bound128) there is none, and GDB is asked about
    no value (so it expands no unit's symbols for swk); a printer a user registers counts
    (libstdc++'s, loaded for its objfile, are tests/test_optimised.py's).  The walks are GDB's."""
    prog, stop = chain_prog
    probe = "python from swk_plugin.backends.gdb.values import any_printer; print('ANY', any_printer())"
    register = ("python exec(\"import gdb\\nclass _P:\\n def __init__(self, v): self.v = v\\n"
                " def to_string(self): return 'PRINTED'\\n"
                "def _lookup(v):\\n t = v.type.strip_typedefs()\\n"
                " return _P(v) if t.code == gdb.TYPE_CODE_PTR and t.target().strip_typedefs().code == gdb.TYPE_CODE_PTR"
                " else None\\ngdb.pretty_printers.append(_lookup)\")")
    out = gdb(prog, stop + ["set backtrace past-main off"], probe, "bt", "swk-bt", register, probe, "bt", "swk-bt")
    assert section(out, 0) == ["ANY False"]
    assert [frame_key(x) for x in section(out, 2)] == [frame_key(x) for x in section(out, 1)]
    assert section(out, 4) == ["ANY True"]
    theirs, mine = section(out, 5), section(out, 6)
    assert any("argv=PRINTED" in x for x in theirs), theirs          # GDB's own bt took it
    assert [frame_key(x) for x in mine] == [frame_key(x) for x in theirs]
