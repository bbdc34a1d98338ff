"""AArch64 (issue 15): the corpus cross-built and run under qemu-user, walked by swk inside
gdb-multiarch and LLDB, and from qemu's own cores with the CLI.

For every case of aarch64_cases.A64_CASES (tests/aarch64_lib.py runs them):

  test_gdb_own_walk[CASE]        gdb's own walk (swk not loaded) is the known chain where
                                 the case says gdb is right, and is NOT where it says gdb is
                                 wrong (signed return addresses, a signal in frameless code
                                 without CFI): what gdb gets wrong, recorded
  test_swk_in_gdb[CASE]          swk-bt -json -all in the same session: the known chain, and
                                 every frame's pc, sp and kind equal to gdb's walk where gdb
                                 is right; where it is not, the frames gdb gets right before
                                 it goes wrong, and the twin's pcs (same code, with CFI)
  test_gdb_with_swk_unwinder[CASE]  gdb's own walk once gdb_init.py registered swk's unwinder:
                                 the known chain and the same oracle
  test_cli_on_qemu_core[CASE]    `swk bt --core QEMU_CORE --exe PROG --sysroot SYSROOT` on the
                                 core qemu wrote of the guest at that very stop (no NT_FILE:
                                 the link map is read from the core): the known chain, and
                                 pcs and sps equal to gdb's walk of the live stop
  test_lldb[CASE]                LLDB on qemu's stub (`platform select remote-linux`,
                                 `gdb-remote`; LLDB lists no library there): swk-bt's frame 0
                                 is LLDB's own pc, the known chain, gdb's pcs; the libraries
                                 LLDB does not list are found by swk from the link map;
                                 LLDB 22's own `bt all` (swk's frame provider) has gdb's pcs
                                 and the known chain's length

and: eu-stack on qemu's cores (wrong, recorded), the core without --sysroot, the twin's
code, locals of the locals corpus (tests/locals_cases.py) equal to gdb's in every frame,
live and on qemu's cores.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

import aarch64_lib as A
import locals_cases as LC
import swk_suite as S
import swk_testlib as T
from aarch64_cases import A64_BY_ID, A64_CASES
from aarch64_lib import A64Case

pytestmark = [pytest.mark.corpus, pytest.mark.aarch64]

A.need_machine()

_SESSIONS: dict[str, A.GdbSession] = {}
_TWINS: dict[str, dict] = {}
_LLDB: dict[str, str] = {}


def session(case: A64Case) -> A.GdbSession:
    s = _SESSIONS.get(case.id)
    if s is None:
        s = _SESSIONS[case.id] = A.gdb_session(case)
    return s


def twin_native(case: A64Case) -> dict | None:
    if case.twin is None:
        return None
    if case.id not in _TWINS:
        _TWINS[case.id] = A.gdb_session(case.twin, make_core=False).native
    return _TWINS[case.id]


def _fail(msgs: list[str], context: str = "") -> None:
    text = "\n".join(msgs)
    if context:
        text += "\n--- context ---\n" + context[-8000:]
    pytest.fail(text, pytrace=False)


def _ids(cases):
    return [c.id for c in cases]


def _skip_interrupted(case: A64Case, oracle: dict) -> dict:
    """The oracle without the pcs of frames a timer signal interrupted (another run stops
    elsewhere in them): their functions stay, their pcs become unknown."""
    if not case.interrupted:
        return oracle
    out = {}
    for num, tf in oracle.items():
        copy = T.ThreadFrames()
        for f in tf:
            if f.function in case.interrupted:
                f = T.Frame(**{**f.__dict__, "pc": None, "sp": None})
            copy.append(f)
        copy.num, copy.tid, copy.stop_reason, copy.error = tf.num, tf.tid, tf.stop_reason, tf.error
        out[num] = copy
    return out


def oracle_errors(case: A64Case, s: A.GdbSession, frames: list[dict], same_stop: bool,
                  check_sp: bool = True) -> list[str]:
    """Everything wrong with ``frames`` (swk's threads, or a walk shaped like them) against the
    oracles: the known chain; gdb's walk where gdb is right (all frames), else the frames gdb
    gets right, and the twin's pcs.  ``same_stop``: the walk is of gdb's stop itself (else it
    is of another run: threads are matched in order, and a frame a timer signal interrupted
    is compared by name only)."""
    by_order = not same_stop
    try:
        errs = A.known_chain_errors(case, A.chains(frames, s.native, by_order))
    except T.OutputError as e:
        return [str(e)]
    native = s.native if same_stop else _skip_interrupted(case, s.native)
    upto = None if case.gdb_right else A.right_prefix(case, s.native)
    errs += A.compare_frames(native, frames, None, upto=upto, check_sp=check_sp, by_order=by_order)
    twin = twin_native(case)
    if twin is not None:
        errs += [f"twin: {e}" for e in A.compare_frames(_skip_interrupted(case, twin), frames, None,
                                                        check_sp=False, by_order=True)]
    return errs


def _hooked_as_swk(s: A.GdbSession) -> list[dict]:
    """gdb's walk with swk's unwinder, shaped as swk's JSON threads (for the same checks)."""
    out = []
    for num, tf in s.hooked.items():
        frames = [{"level": i, "pc": f.pc, "sp": f.sp, "function": f.function,
                   "kind": "signal" if f.is_signal else "normal"} for i, f in enumerate(T.real_frames(tf))]
        out.append({"thread": num, "tid": tf.tid, "frames": frames})
    return out


# --------------------------------------------------------------------------
# gdb's own walk: right or wrong, as recorded
# --------------------------------------------------------------------------

@pytest.mark.native
@pytest.mark.parametrize("case", A64_CASES, ids=_ids(A64_CASES))
def test_gdb_own_walk(case: A64Case):
    s = session(case)
    known = A.is_known_chain(case, s.native)
    if case.gdb_right and not known:
        _fail([f"{case.id}: gdb's own walk is not the known chain (the case says gdb is right)"],
              T.format_native(s.native))
    if not case.gdb_right and known:
        _fail([f"{case.id}: gdb walked this right; the case records it as wrong ({case.gdb_note})"],
              T.format_native(s.native))
    if case.gdb_right:
        bad = [n for n, tf in s.native.items() if tf.stop_reason != "outermost"]
        if bad:
            _fail([f"gdb's walk of thread {n} stopped with {s.native[n].stop_reason!r}" for n in bad])


# --------------------------------------------------------------------------
# swk inside gdb-multiarch, and gdb with swk's unwinder
# --------------------------------------------------------------------------

@pytest.mark.swk
@pytest.mark.parametrize("case", A64_CASES, ids=_ids(A64_CASES))
def test_swk_in_gdb(case: A64Case):
    s = session(case)
    if s.swk is None:
        _fail([f"{case.id}: swk-bt printed no JSON"], s.output)
    errs = T.compare_swk_to_gdb(s.native, s.swk, check_names=False) if case.gdb_right else []
    errs += oracle_errors(case, s, s.swk, same_stop=True)
    for t in s.swk:
        for f in t.get("frames") or []:
            if f.get("level", 0) > 0 and f.get("kind") == "normal" and f.get("stepper") is None:
                errs.append(f"thread {t.get('thread')} #{f.get('level')}: no stepper named")
    if errs:
        _fail(errs, "gdb:\n" + T.format_native(s.native) + "\n--- swk ---\n" + A.format_swk(s.swk))


@pytest.mark.swk
@pytest.mark.parametrize("case", A64_CASES, ids=_ids(A64_CASES))
def test_gdb_with_swk_unwinder(case: A64Case):
    """gdb's own bt, with the unwinder gdb_init.py registers: right where gdb alone is wrong."""
    s = session(case)
    if s.hooked is None:
        _fail([f"{case.id}: no gdb walk after gdb_init.py was sourced"], s.output)
    walk = _hooked_as_swk(s)
    errs = oracle_errors(case, s, walk, same_stop=True)
    if errs:
        _fail(errs, "gdb alone:\n" + T.format_native(s.native) + "\n--- gdb with swk's unwinder ---\n"
              + T.format_native(s.hooked))


# --------------------------------------------------------------------------
# qemu's cores with the CLI (and eu-stack on them)
# --------------------------------------------------------------------------

def _core(case: A64Case):
    s = session(case)
    if s.core is None:
        _fail([f"{case.id}: qemu wrote no core of the guest"], s.output)
    return s


@pytest.mark.swk
@pytest.mark.parametrize("case", A64_CASES, ids=_ids(A64_CASES))
def test_cli_on_qemu_core(case: A64Case):
    s = _core(case)
    swk, out, rc = A.swk_cli(s.core, case.exe())
    if swk is None or rc != 0:
        _fail([f"{case.id}: swk bt --core exited {rc} without JSON"], out)
    errs = oracle_errors(case, s, swk, same_stop=True)
    for t in swk:
        if t.get("tid") not in {tf.tid for tf in s.native.values()}:
            errs.append(f"core thread {t.get('tid')} is none of gdb's")
    if errs:
        _fail(errs, "gdb (live, the same stop):\n" + T.format_native(s.native) + "\n--- swk on the core ---\n"
              + A.format_swk(swk))


WANDERER_CASES = ["chain-O0", "chain-O2-pac", "chain-nocfi-pac", "cxx-O2-pac", "threads-O2", "recurse-O0"]


@pytest.mark.swk
@pytest.mark.parametrize("cid", WANDERER_CASES)
def test_wanderer_alone_on_qemu_core(cid):
    """The stack scanner alone (with the bottom-of-stack stepper): a return address is a word
    right after a bl/blr (signed ones stripped), the top frame's still in x30, and the CFA
    beside a frame record's x29: the known chain down to __libc_start_main, with gdb's pcs."""
    from swk_plugin.backends.core import CoreProcessState
    from swk_plugin.steppergroup import StepperGroup
    from swk_plugin.steppers import BottomOfStackStepper, StepperWanderer
    from swk_plugin.walker import Walker
    case = A64_BY_ID[cid]
    s = _core(case)
    ps = CoreProcessState(s.core, exe_path=case.exe(), sysroot=A.SYSROOT)
    w = Walker(ps)
    group = StepperGroup(w)
    for stepper in (StepperWanderer(w), BottomOfStackStepper(w)):
        group.add_stepper(stepper)
    w.stepper_group = group
    errs = []
    for num, tf in s.native.items():
        walk = w.walk_stack(tf.tid)
        exp = case.expected[num]
        upto = exp.index("__libc_start_main") + 1 if "__libc_start_main" in exp else len(exp)
        names = [T.strip_params(f.name) for f in walk]
        m = T.chain_mismatch(names, exp[:upto])
        if m:
            errs.append(f"thread {num}: {m}")
        got, want = [f.ra for f in walk], T.pcs(tf)[:upto]
        if case.gdb_right and got != want:
            errs.append(f"thread {num}: pcs {[hex(p) for p in got]} != gdb's {[hex(p) for p in want]}")
        if not all(f.trust == "scan" for f in walk[1:upto - 1]):
            errs.append(f"thread {num}: trusts {[f.trust for f in walk]}")
    if errs:
        _fail(errs, T.format_native(s.native))


def test_qemu_core_has_no_file_note():
    """The premise of reading the link map from memory: qemu's cores have no NT_FILE, and swk
    still names the C library's frames (found under the sysroot)."""
    from swk_plugin.linux.coredump import CoreFile
    case = A64_BY_ID["chain-O2-pac"]
    s = _core(case)
    with CoreFile(s.core, sysroot=A.SYSROOT, exe_path=case.exe()) as core:
        assert core.arch.name == "aarch64"
        assert not core.mappings, "qemu's core has an NT_FILE note after all"
        paths = core.mapped_paths()
    assert any(p.endswith("libc.so.6") for p in paths), paths
    swk, out, _rc = A.swk_cli(s.core, case.exe())
    libs = {f.get("library") for f in swk[0]["frames"] if f.get("function") == "__libc_start_main"}
    assert libs == {f"{A.SYSROOT}/lib/libc.so.6"}, out


def test_cli_on_qemu_core_without_sysroot():
    """Without --sysroot the architecture's own (Debian's /usr/aarch64-linux-gnu) is tried: the
    link map's /lib/... paths are not this machine's AArch64 files."""
    case = A64_BY_ID["chain-O2-pac"]
    s = _core(case)
    swk, out, rc = A.swk_cli(s.core, case.exe(), sysroot=False)
    assert rc == 0 and swk is not None, out
    errs = oracle_errors(case, s, swk, same_stop=True)
    assert not errs, "\n".join(errs) + "\n" + out


@pytest.mark.native
def test_gdb_on_qemu_core():
    """gdb-multiarch on qemu's core (no NT_FILE) does not walk it: recorded here, while swk's CLI
    walks the same core right (test_cli_on_qemu_core)."""
    case = A64_BY_ID["chain-O2"]
    s = _core(case)
    argv = [A.GDB, "-nx", "-batch", "-q", "-iex", "set debuginfod enabled off", "-iex", "set pagination off",
            "-iex", "set backtrace past-main on", "-ex", f"set sysroot {A.SYSROOT}", "-ex", f"file {case.exe()}",
            "-ex", f"core {s.core}", *[a for c in T.native_commands(True) for a in ("-ex", c)]]
    native = T.parse_native(T.run_cmd(argv, timeout=120).stdout)
    assert not A.is_known_chain(case, native), T.format_native(native)


def test_cli_bad_input_on_qemu_core(tmp_path):
    """One line, no traceback: an x86-64 program for an AArch64 core, a sysroot that is not there."""
    s = _core(A64_BY_ID["chain-O2"])
    p = T.run_swk_cli(["bt", "--core", str(s.core), "--exe", "/bin/sh"])
    assert p.returncode == 2 and p.stdout.strip() == \
        "swk: --exe /bin/sh: not an aarch64 program (the core is of an aarch64 process)", p.stdout
    p = T.run_swk_cli(["bt", "--core", str(s.core), "--sysroot", str(tmp_path / "none")])
    assert p.returncode == 2 and len(p.stdout.strip().splitlines()) == 1 and "Traceback" not in p.stdout


EU_STACK_CASES = ["chain-O2", "chain-O2-pac", "hard-signal"]


@pytest.mark.parametrize("cid", EU_STACK_CASES)
def test_eu_stack_on_qemu_cores(cid):
    """eu-stack reads qemu's cores (no NT_FILE) without the C library's frames, and loses the
    stack on signed return addresses and at the no-CFI signal frame; swk's walk of the same
    core is the known chain (test_cli_on_qemu_core).  Recorded here."""
    S.need_tool("eu-stack", "elfutils")
    case = A64_BY_ID[cid]
    s = _core(case)
    p = T.run_cmd(["eu-stack", "--core", str(s.core), "-e", str(case.exe())], timeout=120)
    names = []
    for line in p.stdout.splitlines():
        m = re.match(r"^#\d+\s+0x([0-9a-f]+)\s*(\S+)?", line)
        if m:
            names.append(m.group(2))
    if not names:
        _fail([f"eu-stack printed no frame for {cid}"], p.stdout)
    if T.chain_mismatch(names, case.expected[1]) is None:
        _fail([f"eu-stack walked {cid}'s qemu core right: {names}"], p.stdout)


# --------------------------------------------------------------------------
# the twin: the same code with CFI (the oracle of pcs where gdb is wrong)
# --------------------------------------------------------------------------

TWIN_CASES = [c for c in A64_CASES if c.twin is not None]


@pytest.mark.parametrize("case", TWIN_CASES, ids=_ids(TWIN_CASES))
def test_twin_same_code(case: A64Case):
    from elftools.elf.elffile import ELFFile

    def text(path):
        with open(path, "rb") as fh:
            elf = ELFFile(fh)
            sec = elf.get_section_by_name(".text")
            return sec["sh_addr"], sec.data()
    assert text(case.exe()) == text(case.twin.exe()), "the twin's .text differs"
    twin = twin_native(case)
    assert A.is_known_chain(case.twin, twin), T.format_native(twin)


# --------------------------------------------------------------------------
# LLDB on qemu's stub
# --------------------------------------------------------------------------

LLDB_CASES = [c for c in A64_CASES if c.lldb]


def _lldb():
    choice = S.lldb()
    if choice.path is None:
        pytest.skip(choice.problem)
    return choice


def lldb_output(case: A64Case) -> str:
    """LLDB stopped where gdb stopped (a breakpoint at gdb's frame-0 pc of the stopped thread)."""
    if case.id not in _LLDB:
        stop_pc = None
        if any(c.startswith("break ") for c in case.pre):
            stop_pc = T.pcs(session(case).native[1])[0]
        _LLDB[case.id] = A.lldb_session(case, _lldb().path, stop_pc=stop_pc)
    return _LLDB[case.id]


@pytest.mark.swk
@pytest.mark.parametrize("case", LLDB_CASES, ids=_ids(LLDB_CASES))
def test_lldb(case: A64Case):
    choice = _lldb()
    s = session(case)
    out = lldb_output(case)
    part = A._segment(out, A.LLDB_BEGIN, A.LLDB_BT)
    try:
        swk = T.parse_swk_json(part)
    except T.OutputError:
        _fail([f"{case.id}: swk-bt printed no JSON in LLDB"], out)
    errs = []
    pc0 = A.parse_pc0(out)
    for t in swk:
        frames = t.get("frames") or []
        if not frames or frames[0].get("pc") != pc0.get(t.get("tid")):
            errs.append(f"thread {t.get('tid')}: swk's frame 0 {T._hex(frames[0].get('pc') if frames else None)}"
                        f" != LLDB's pc {T._hex(pc0.get(t.get('tid')))}")
        for f in frames:
            if f.get("function") == "__libc_start_main" and not (f.get("library") or "").endswith("libc.so.6"):
                errs.append(f"thread {t.get('tid')}: __libc_start_main's library {f.get('library')!r}: "
                            "the link map did not complete LLDB's empty list")
    # another run than gdb's: a frame a timer signal interrupted stops elsewhere
    errs += oracle_errors(case, s, swk, same_stop=False)
    if choice.version >= (22,):
        errs += _lldb_own_bt_errors(case, s, out)
    if errs:
        _fail(errs, "gdb:\n" + T.format_native(s.native) + "\n--- LLDB ---\n" + out[-6000:])


def _lldb_own_bt_errors(case: A64Case, s: A.GdbSession, out: str) -> list[str]:
    """LLDB 22's own `bt all` (swk's frame provider): every thread has the known chain's length
    and gdb's pcs (all of them where gdb is right; else those gdb gets right)."""
    errs = []
    bt = A.parse_lldb_bt(out)
    native = _skip_interrupted(case, s.native)
    by_num = sorted(native.items())
    if len(bt) != len(by_num):
        return [f"LLDB's bt all has {len(bt)} threads, gdb {len(by_num)}"]
    prefix = A.right_prefix(case, s.native)
    for (num, tf), (idx, pcs) in zip(by_num, sorted(bt.items())):
        exp = case.expected[num]
        if len(pcs) != len(exp):
            errs.append(f"LLDB's bt thread #{idx}: {len(pcs)} frames, the known chain {len(exp)}")
        nat = T.pcs(tf)
        n = len(nat) if case.gdb_right else prefix[num]
        for i in range(min(n, len(pcs), len(nat))):
            # LLDB shows a caller's pc one less when its return address lies past the function's
            # end (a call to a function that does not return, as do_abort's to abort)
            if nat[i] is not None and pcs[i] != nat[i] and not (i > 0 and pcs[i] == nat[i] - 1):
                errs.append(f"LLDB's bt thread #{idx} frame {i}: {T._hex(pcs[i])} != gdb's {T._hex(nat[i])}")
    return errs


def test_lldb_lists_no_libraries_on_qemu():
    """The premise of test_lldb's library check: LLDB on qemu's stub without a platform sysroot
    lists the executable alone."""
    choice = _lldb()
    case = A64_BY_ID["chain-O2"]
    out = A.lldb_session(case, choice.path, after=[f"script print('{A.LLDB_BEGIN}')", "image list",
                                                   f"script print('{A.LLDB_END}')"])
    part = A._segment(out, A.LLDB_BEGIN, A.LLDB_END)
    mods = [ln for ln in part.splitlines() if re.match(r"^\[\s*\d+\]", ln.strip())]
    assert len(mods) == 1 and case.exe_name in mods[0], part


# --------------------------------------------------------------------------
# locals: the locals corpus cross-built, live and on qemu's cores
# --------------------------------------------------------------------------

LOCALS = [A64Case(f"locals-{c.id.removeprefix('locals-')}", (c.src,), c.cflags, {}, pre=c.pre)
          for c in LC.LOCALS_CASES if not c.m32]      # the x86 builds' -m32 means nothing here
_LOCALS_RUNS: dict[str, tuple] = {}


def locals_run(case: A64Case):
    """gdb's info args / info locals of every frame (swk not loaded), then swk-bt -full -json,
    then qemu's core of that stop."""
    if case.id not in _LOCALS_RUNS:
        s = A.gdb_session(case, extra=[*LC.GDB_SETTINGS, "info auxv", *LC.dump_commands()],
                          swk_cmd=LC.SWK_FULL_JSON)
        _LOCALS_RUNS[case.id] = (LC.parse_dump(s.output), s)
    return _LOCALS_RUNS[case.id]


#: Values swk prints as <optimized out> on qemu's cores because DWARF puts them in a vector
#: register and qemu's cores hold no FP/SIMD state (no NT_FPREGSET note: only NT_PRSTATUS,
#: NT_PRPSINFO, NT_AUXV); live, through GDB, swk reads v0-v31 (issue 16) and must print them.
IN_VECTOR_REGISTERS: list[str] = []
_UNREAD = re.compile(r"^#(\d+) (.+) (args|locals) (\S+): swk says <optimized out>, gdb ")


def _unread_vector_values(case: A64Case, s: A.GdbSession, gdb_frames, errs: list[str]) -> list[str]:
    """``errs`` without the values DWARF puts in a vector register at the frame's pc (read with
    pyelftools: tests/aarch64_lib.vector_located); those are reported in IN_VECTOR_REGISTERS."""
    bias = A.load_bias(s.output, case.exe())
    by_level = {g.level: g for g in gdb_frames}
    keep = []
    for e in errs:
        m = _UNREAD.match(e)
        g = by_level.get(int(m.group(1))) if m else None
        if m and bias is not None and g is not None and g.pc is not None:
            addr = g.pc - bias - (1 if g.level > 0 else 0)     # a caller: its call, as gdb looks up
            if A.vector_located(case.exe(), addr, g.function, m.group(4)):
                IN_VECTOR_REGISTERS.append(f"{case.id}: {e}")
                continue
        keep.append(e)
    return keep


def _locals_frames(swk_threads, out):
    if not swk_threads or len(swk_threads) != 1:
        _fail(["swk printed no (or more than one) thread"], out)
    return swk_threads[0].get("frames") or []


@pytest.mark.swk
@pytest.mark.parametrize("mode", ["live", "cli-core"])
@pytest.mark.parametrize("case", LOCALS, ids=_ids(LOCALS))
def test_locals(case: A64Case, mode: str):
    """Every value gdb prints, swk prints the same, frame by frame (aarch64 register numbers:
    arguments in x0-x7, callee-saved x19-x28, the CFA from sp or x29)."""
    gdb_frames, s = locals_run(case)
    chain = [(T.strip_params(f.function), f.type) for f in gdb_frames]
    lc = next(c for c in LC.LOCALS_CASES if c.src == case.srcs[0] and c.cflags == case.cflags)
    if chain != list(lc.chain):
        _fail([f"gdb's chain {chain} != the locals corpus' {list(lc.chain)}"])
    if mode == "live":
        frames = _locals_frames(s.swk, s.output)
        errs = LC.compare_locals(gdb_frames, frames, exact_count=True)
    else:
        if s.core is None:
            _fail(["qemu wrote no core"], s.output)
        swk, out, rc = A.swk_cli(s.core, case.exe(), extra=["--full"])
        frames = _locals_frames(swk, out)
        errs = _unread_vector_values(case, s, gdb_frames, LC.compare_locals(gdb_frames, frames, exact_count=False))
    if errs:
        _fail(errs, "gdb:\n" + LC.format_gdb_frames(gdb_frames) + "\n--- swk ---\n" + LC.format_swk_frames(frames))


def test_vector_register_values_are_floats():
    """The values test_locals lets swk print as <optimized out> on qemu's cores are exactly
    those DWARF keeps in vector registers, which such a core does not hold: floating-point
    variables, each of which gdb prints live (and swk too, test_locals' live mode); at -O0
    there is none."""
    found = []
    for case in LOCALS:
        gdb_frames, s = locals_run(case)
        if s.core is None:
            _fail(["qemu wrote no core"], s.output)
        swk, out, _rc = A.swk_cli(s.core, case.exe(), extra=["--full"])
        frames = _locals_frames(swk, out)
        before = len(IN_VECTOR_REGISTERS)
        rest = _unread_vector_values(case, s, gdb_frames, LC.compare_locals(gdb_frames, frames, exact_count=False))
        assert not rest, rest
        new = IN_VECTOR_REGISTERS[before:]
        if "-O0" in case.cflags:
            assert not new, new
        types = {(g.level, n): t for g in gdb_frames for n, t in (g.arg_types or []) + (g.local_types or [])}
        for e in new:
            m = _UNREAD.match(e.split(": ", 1)[1])
            t = types.get((int(m.group(1)), m.group(4)))
            assert t in ("float", "double", "long double", "const double", "const float"), (e, t)
        found += new
    assert found, "no value in a vector register: the allowance is not needed any more"
    print("\n".join(["values in vector registers, unknown on qemu's cores:", *found]))
