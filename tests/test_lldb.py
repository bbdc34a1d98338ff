"""swk inside real LLDB (issue 6): lldb_init.py, swk-bt and, on LLDB 22 or newer,
swk's frame provider behind LLDB's own `bt all`.

For every program of the corpora of issues 2 and 3 (swk_testlib.CASES and
hard_cases.HARD_CASES, reusing their builds, and gdb's cores of them), LLDB is
run in batch mode (`lldb -b -o ... -k ...`: -k commands run when the process
stopped on a crash) with the gdb stop commands translated to LLDB's:

  test_lldb[CASE-live]   the program run under LLDB to its stop point
  test_lldb[CASE-core]   gdb's core of it, loaded with `target create PROG --core CORE`

Each checks, per thread, against oracles swk did not compute:
  * swk-bt -all -json: frame 0's pc is the rip LLDB reads for that thread in the
    same session (PC0_COMMANDS); the known chain and the JSON contract; on cores,
    frame for frame the same pcs and sps as gdb's own walk of the same core
    (corpus cases); live, the pcs of gdb's own walk of the same program stopped
    in gdb (ASLR off in both; a frame a signal interrupted aside); or the
    hard-frame checks of tests/test_hard_frames.py (trusts, stop reason, and the
    true pcs and frame sizes from the twin);
  * LLDB 22+: LLDB's own `bt all` gives the known chain too (names as LLDB
    prints them, glibc aliases accepted; LLDB's inlined and tail-call frames
    left out) and the same oracle's pcs (oracle_pcs): never swk-bt's output.
Then bad input: one clear line, never a traceback.

LLDB is swk_suite.lldb(): $SWK_LLDB, else the first of lldb-22, lldb-16 (other
lldb-N, newest first), lldb whose Python module works (pytest's header names it);
the module is skipped when there is none, saying which were tried (under CI: a
failure).  The LLDB runs go two at a time (the machines have 2 cores), started for every
selected test when the first one needs its result.
"""

from __future__ import annotations

import concurrent.futures
import json
import re
from pathlib import Path

import pytest

import hard_cases as H
import swk_suite as S
import swk_testlib as T
from hard_cases import HARD_CASES, HardCase
from swk_testlib import CASES, SIGTRAMP, Case

LLDB_INIT = T.REPO / "lldb_init.py"
BEGIN, END = "SWK-LLDB-BEGIN", "SWK-LLDB-END"
BT_BEGIN = "SWK-LLDB-BT-BEGIN"
PC0_BEGIN, PC0_TAG = "SWK-LLDB-PC0-BEGIN", "SWK-PC0"

#: LLDB's own frame-0 pc of every thread, read from its register context (the oracle of
#: swk's frame 0): "SWK-PC0 <index id> <tid> <rip>" per thread.
PC0_COMMANDS = [f"script print('{PC0_BEGIN}')",
                f"script for t in lldb.process: print('{PC0_TAG}', t.GetIndexID(), t.GetThreadID(), "
                "t.GetFrameAtIndex(0).FindRegister('pc').GetValueAsUnsigned())",
                f"script print('{END}')"]


_CHOICE = S.lldb()
if _CHOICE.path is None:
    pytest.skip(_CHOICE.problem, allow_module_level=True)
LLDB = _CHOICE.path


def lldb_version() -> tuple[int, ...]:
    return _CHOICE.version


#: Whether this LLDB has scripted frame providers (swk then fixes LLDB's own bt).
PROVIDERS = lldb_version() >= (22,)


# --------------------------------------------------------------------------
# running lldb
# --------------------------------------------------------------------------

def lldb_stop_cmds(case: Case, lib: Path | None) -> list[str]:
    """The gdb stop commands of a case (``case.pre`` and ``run ARGS``) in LLDB's words.
    Signal handling is set at the entry stop: LLDB before 15 has no `process handle`
    without a process."""
    out, handle = [], []
    for cmd in case.pre:
        words = cmd.split()
        if words[0] == "break":
            out.append(f"breakpoint set -n {words[1]}")
        elif words[0] == "handle":
            sigs = [w for w in words[1:] if w.startswith("SIG")]
            handle.append(f"process handle -s false -n false -p true {' '.join(sigs)}")
        else:
            raise ValueError(f"no LLDB translation of gdb's {cmd!r}")
    args = case.run_args.format(lib=lib) if lib else case.run_args
    launch = "process launch" + (" -s" if handle else "") + (f" -- {args}" if args else "")
    out.append(launch)
    if handle:
        out += [*handle, "process continue"]
    return out


def lldb_argv(target: list[str], setup: list[str], after: list[str], swk: bool = True) -> list[str]:
    """lldb -b: ``setup`` (stop commands), then ``after``; -k repeats ``after`` for a
    process that stopped on a crash (LLDB then skips the rest of the -o commands)."""
    argv = [LLDB, "-b", "-x", "-o", "settings set auto-confirm true",
            "-o", "settings set stop-disassembly-display never",
            "-o", "settings set stop-line-count-before 0", "-o", "settings set stop-line-count-after 0"]
    if swk:
        argv += ["-o", f"command script import {LLDB_INIT}"]
    for c in [*target, *setup]:
        argv += ["-o", c]
    for c in after:
        argv += ["-o", c]
    for c in after:
        argv += ["-k", c]
    return argv


def marked(cmds: list[str]) -> list[str]:
    return [f"script print('{BEGIN}')", *cmds, f"script print('{END}')"]


def lldb_env(extra: dict | None = None) -> dict:
    """The harness's environment; swk's log file ($TMPDIR/swk-lldb.log) goes to tests/_build."""
    T.BUILD.mkdir(parents=True, exist_ok=True)
    return {**T._env(), "TMPDIR": str(T.BUILD), **(extra or {})}


def run_lldb(argv: list[str], timeout: float, env: dict | None = None) -> str:
    return T.run_cmd(argv, timeout=timeout, env=lldb_env(env)).stdout


def between(output: str, begin: str = BEGIN, end: str = END, open_end: bool = False) -> list[str]:
    """The lines between the markers.  ``open_end``: up to the end of the output when the
    end marker is missing (in batch mode LLDB quits at the first command that fails)."""
    lines = output.splitlines()
    try:
        i = max(k for k, ln in enumerate(lines) if ln.strip() == begin)
    except ValueError:
        raise T.OutputError(f"markers missing from lldb output:\n{output[-4000:]}") from None
    ends = [k for k, ln in enumerate(lines) if ln.strip() == end and k > i]
    if not ends and not open_end:
        raise T.OutputError(f"end marker missing from lldb output:\n{output[-4000:]}")
    return lines[i + 1:ends[0] if ends else len(lines)]


# --------------------------------------------------------------------------
# LLDB's own bt, parsed
# --------------------------------------------------------------------------

_THREAD = re.compile(r"^[* ] thread #(\d+)")
_FRAME = re.compile(r"^\s+(?:\* )?frame #(\d+): (0x[0-9a-fA-F]+)(?: (.*))?$")
_LAMBDA = re.compile(r"'lambda(\d*)'\(")


#: How LLDB names the frame of a sigreturn trampoline (it has no mark of its own in `bt`): glibc's
#: x86-64 one, i386's in the vDSO and in glibc, and the corpus's own copy (signal.c, "restorer").
SIGRETURN_TRAMPOLINES = frozenset({"__restore_rt", "__kernel_sigreturn", "__kernel_rt_sigreturn", "__restore",
                                   "swk_restore"})


def _matching_close(s: str, open_i: int) -> int:
    depth = 0
    for i in range(open_i, len(s)):
        if s[i] == "(":
            depth += 1
        elif s[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


def gnu_lambdas(name: str) -> str:
    """LLVM's demangling of a lambda ('lambda'(int), 'lambda0'(int) ...) as GNU's
    ({lambda(int)#1}, {lambda(int)#2} ...), the spelling of the known chains."""
    while True:
        m = _LAMBDA.search(name)
        if not m:
            return name
        close = _matching_close(name, m.end() - 1)
        if close < 0:
            return name
        n = int(m.group(1)) + 2 if m.group(1) else 1
        name = name[:m.start()] + "{lambda" + name[m.end() - 1:close + 1] + f"#{n}}}" + name[close + 1:]


def _split_at(text: str, sep: str) -> str:
    """text up to the last ``sep`` outside parentheses."""
    depth = 0
    cut = -1
    for i, ch in enumerate(text):
        if ch in "(<[":
            depth += 1
        elif ch in ")>]":
            depth = max(0, depth - 1)
        elif depth == 0 and text.startswith(sep, i):
            cut = i
    return text[:cut] if cut >= 0 else text


def parse_lldb_frame(rest: str | None) -> dict:
    """What an LLDB bt line says after the pc: {"function", "inlined", "artificial", "synthetic"}."""
    rest = (rest or "").strip()
    flags = {}
    for flag in ("synthetic", "artificial"):
        flags[flag] = f"[{flag}]" in rest
        rest = rest.replace(f" [{flag}]", "").replace(f"[{flag}]", "").strip()
    inlined = " [inlined] " in rest
    if "`" not in rest:
        return {"function": None, "inlined": inlined, **flags}
    name = rest.split("`", 1)[1]
    if inlined:
        name = name.split(" [inlined] ", 1)[1]
    name = _split_at(name, " at ")
    name = re.sub(r" \+ \d+$", "", name.strip())
    name = T.strip_params(gnu_lambdas(name))
    if not name or name.startswith("___lldb_unnamed_symbol"):
        name = None
    elif name in SIGRETURN_TRAMPOLINES:
        name = SIGTRAMP
    return {"function": name, "inlined": inlined, **flags}


def parse_bt_all(lines: list[str]) -> dict[int, list[dict]]:
    """`bt all` text -> {thread index: [{"pc", "function", "inlined", ...}]}."""
    threads: dict[int, list[dict]] = {}
    cur = None
    for ln in lines:
        m = _THREAD.match(ln)
        if m:
            cur = threads.setdefault(int(m.group(1)), [])
            continue
        m = _FRAME.match(ln)
        if m and cur is not None:
            cur.append({"level": int(m.group(1)), "pc": int(m.group(2), 16), **parse_lldb_frame(m.group(3))})
    return threads


def parse_pc0(output: str) -> dict[int, tuple[int, int]]:
    """{LLDB thread index: (tid, frame 0's rip as LLDB reads it)} from PC0_COMMANDS' output."""
    res = {}
    for ln in between(output, PC0_BEGIN):
        parts = ln.split()
        if len(parts) == 4 and parts[0] == PC0_TAG:
            res[int(parts[1])] = (int(parts[2]), int(parts[3]))
    if not res:
        raise T.OutputError(f"LLDB printed no frame-0 registers:\n{output[-3000:]}")
    return res


def lldb_real(frames: list[dict]) -> list[dict]:
    """LLDB's real frames: its inlined and tail-call frames left out (a frame of swk's,
    [synthetic], LLDB marks [inlined] when its pc starts an inlined call: it is real)."""
    return [f for f in frames if (not f["inlined"] or f["synthetic"]) and not f["artificial"]]


def lldb_chain(frames: list[dict]) -> list:
    return [f["function"] for f in lldb_real(frames)]


def lldb_same_name(a, b) -> bool:
    """Names as LLDB prints them: glibc aliases accepted (LLDB may pick another symbol at
    the same address: __clone3 for clone3, __futex_abstimed_wait_common64 for
    __futex_abstimed_wait_common)."""
    if T.loose_same_name(a, b):
        return True
    if a is None or b is None:
        return False
    ca, cb = T.canonical_alias(a), T.canonical_alias(b)
    return ca.removesuffix("64") == cb.removesuffix("64")


# --------------------------------------------------------------------------
# one LLDB run per test, two at a time
# --------------------------------------------------------------------------

ALL = [*[(c.id, c, None) for c in CASES], *[(h.id, h.case, h) for h in HARD_CASES]]
BY_ID = {i: (c, h) for i, c, h in ALL}

#: Programs whose `bt all` crashes LLDB itself, with or without swk: not run.
LLDB_BT_CRASHES = {
    "recurse-O2": "LLDB 22.1.8 overflows its own stack unwinding 10,000 frames of this -O2 recursion",
}


class LldbRuns:
    """Builds (through the gdb corpora's caches), cores, and the LLDB runs themselves."""

    def __init__(self, corpus: T.Corpus, hard: H.HardCorpus):
        self.corpus = corpus     # the session's: gdb's walks made for other test files are reused
        self.hard = hard
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)
        self.futures: dict[tuple[str, str], concurrent.futures.Future] = {}

    def _src(self, hc):
        return self.hard if hc is not None else self.corpus

    def exe(self, case, hc):
        return self._src(hc).exe(case)

    def core(self, case, hc):
        return self._src(hc).core(case)

    def native_core(self, case, hc):
        return self._src(hc).native_core(case)

    def commands(self, key: str, mode: str) -> list[str]:
        case, hc = BY_ID[key]
        exe = self.exe(case, hc)
        after = [*PC0_COMMANDS, *marked(["swk-bt -all -json"])]
        if PROVIDERS and key not in LLDB_BT_CRASHES:
            after += [f"script print('{BT_BEGIN}')", "bt all", f"script print('{END}')"]
        if mode == "live":
            lib = self._src(hc).lib(case)
            return lldb_argv([f"target create {exe}"], lldb_stop_cmds(case, lib), after)
        return lldb_argv([f"target create {exe} --core {self.core(case, hc)}"], [], after)

    def _run(self, key: str, mode: str) -> str:
        case, _hc = BY_ID[key]
        return run_lldb(self.commands(key, mode), timeout=max(case.timeout, 300))

    def start(self, wanted: list[tuple[str, str]]) -> None:
        for k in wanted:
            if k not in self.futures:
                self.futures[k] = self.pool.submit(self._run, *k)

    def output(self, key: str, mode: str) -> str:
        self.start([(key, mode)])
        return self.futures[(key, mode)].result()


@pytest.fixture(scope="module")
def runs(request, corpus, hard):
    r = LldbRuns(corpus, hard)
    wanted = []
    for item in request.session.items:
        cs = getattr(item, "callspec", None)
        if item.module is request.module and cs is not None and "key" in cs.params:
            wanted.append((cs.params["key"], cs.params["mode"]))
    S.need_tool(T.GDB, "gdb")      # the cores and the oracle walks come from gdb
    if any(m == "core" for _k, m in wanted):
        for key, mode in wanted:   # cores come from gdb: make them first, one at a time
            if mode == "core":
                case, hc = BY_ID[key]
                r.core(case, hc)
    r.start(wanted)
    yield r
    r.pool.shutdown(wait=True, cancel_futures=True)


def _params():
    res = []
    for key, case, _hc in ALL:
        for mode in ("live", "core"):
            marks = [pytest.mark.slow] if case.slow else []
            res.append(pytest.param(key, mode, id=f"{key}-{mode}", marks=marks))
    return res


def _fail(msgs: list[str], extra: str = "") -> None:
    text = "\n".join(msgs)
    if extra:
        text += "\n--- context ---\n" + extra[-8000:]
    pytest.fail(text, pytrace=False)


# --------------------------------------------------------------------------
# the checks
# --------------------------------------------------------------------------

def _contract_errors(swk_threads: list[dict]) -> list[str]:
    """The JSON contract of swk-bt (levels, keys, kind, stop_reason) for every thread."""
    errs = []
    for t in swk_threads:
        tag = f"thread {t.get('thread')}"
        fr = t.get("frames")
        if not isinstance(t.get("stop_reason"), str) or not t.get("stop_reason"):
            errs.append(f"{tag}: stop_reason missing or empty")
        if not isinstance(t.get("tid"), int):
            errs.append(f"{tag}: tid {t.get('tid')!r}")
        if not isinstance(fr, list) or not fr:
            errs.append(f"{tag}: no frames")
            continue
        if [f.get("level") for f in fr] != list(range(len(fr))):
            errs.append(f"{tag}: levels not 0..{len(fr) - 1}")
        for f in fr:
            missing = {"level", "pc", "sp", "fp", "function", "offset", "library", "mapping", "file",
                       "line", "stepper", "trust", "kind"} - set(f)
            if missing:
                errs.append(f"{tag} frame {f.get('level')}: missing keys {sorted(missing)}")
                break
            if f.get("kind") not in ("normal", "signal", "inline", "tailcall", "jit"):
                errs.append(f"{tag} frame {f.get('level')}: kind {f.get('kind')!r}")
                break
    return errs


def _by_thread(swk_threads: list[dict]) -> dict[int, dict]:
    out = {}
    for t in swk_threads:
        if t.get("thread") in out:
            raise T.OutputError(f"swk printed thread {t.get('thread')} twice")
        out[t.get("thread")] = t
    return out


def _twin(runs: LldbRuns, hc: HardCase):
    """Per thread: the true pcs and sps (gdb's walk of the twin), where the twin has the same code."""
    if not hc.twin_same_code:
        return None, None
    native = runs.hard.native_live(hc.twin)
    return ({n: T.pcs(tf) for n, tf in native.items()},
            {n: [f.sp for f in T.real_frames(tf)] for n, tf in native.items()})


def frame0_errors(swk_threads: list[dict], pc0: dict[int, tuple[int, int]]) -> list[str]:
    """swk's frame 0 of every thread against LLDB's own register (rip of LLDB's frame 0)."""
    errs = []
    if sorted(pc0) != sorted(t.get("thread") for t in swk_threads):
        errs.append(f"threads: swk {sorted(t.get('thread') for t in swk_threads)} != LLDB's {sorted(pc0)}")
    for t in swk_threads:
        num, frames = t.get("thread"), t.get("frames") or []
        if num not in pc0 or not frames:
            continue
        tid, pc = pc0[num]
        if t.get("tid") != tid:
            errs.append(f"thread {num}: tid {t.get('tid')} != LLDB's {tid}")
        if frames[0].get("pc") != pc:
            errs.append(f"thread {num}: frame 0 pc {H.hexs(frames[0].get('pc'))} != LLDB's rip {H.hexs(pc)}")
    return errs


def swk_errors(runs: LldbRuns, key: str, mode: str, swk_threads: list[dict],
               pc0: dict[int, tuple[int, int]]) -> list[str]:
    case, hc = BY_ID[key]
    errs = _contract_errors(swk_threads) + frame0_errors(swk_threads, pc0)
    if mode == "core":
        native = runs.native_core(case, hc)
        mapped = T.thread_by_key(swk_threads, native, by_tid=True)
        if hc is None:
            errs += T.compare_swk_to_gdb(native, swk_threads, by_tid=True, check_sp=True)
    else:
        mapped = _by_thread(swk_threads)
        if hc is None:
            # the same program stopped in GDB (ASLR off in both): the same pcs, frame for
            # frame, except in a frame a signal interrupted at a moment of its own
            errs += oracle_pc_errors("swk-bt", {n: T.real_frames(t.get("frames") or [])
                                                for n, t in mapped.items()},
                                     oracle_pcs(runs, key, mode, pc0), case)
    if set(mapped) != set(case.expected):
        errs.append(f"threads: swk {sorted(mapped)} != expected {sorted(case.expected)}")
    if hc is None:
        chains = {n: T.chain(t.get("frames") or []) for n, t in mapped.items()}
        errs += [f"known chain: {m}" for m in T.expected_mismatches(chains, case)]
        return errs
    pcs, sps = _twin(runs, hc)
    for num in sorted(set(mapped) & set(case.expected)):
        frames = T.real_frames(mapped[num].get("frames") or [])
        true_pcs = pcs.get(num) if pcs else None
        if true_pcs and mode == "live" and num in pc0:
            # LLDB puts a breakpoint on a function without line information at its first
            # instruction, gdb after the prologue: frame 0 is where LLDB stopped, as LLDB
            # reads it from the thread's registers
            true_pcs = [pc0[num][1], *true_pcs[1:]]
        errs += H.swk_thread_errors(frames, mapped[num].get("stop_reason"), case.expected[num],
                                    f"thread {num}", true_pcs, sps.get(num) if sps else None)
    if hc.extra_check is not None:
        errs += hc.extra_check({n: T.real_frames(t.get("frames") or []) for n, t in mapped.items()})
    return errs


def oracle_pcs(runs: LldbRuns, key: str, mode: str,
               pc0: dict[int, tuple[int, int]]) -> dict[int, list[int | None]] | None:
    """The true pcs of every thread (by LLDB thread index), from nothing swk computed:
    frame 0 is LLDB's own register; the callers are gdb's own walk of the same core (core
    mode) or of the same program stopped in gdb (live mode; ASLR is off in both), and for a
    hard case gdb's walk of its twin (the same code with CFI).  None where there is no
    such oracle (a hard case whose twin's code differs: its known chain is the oracle)."""
    case, hc = BY_ID[key]
    if hc is not None:
        if not hc.twin_same_code:
            return None
        native = runs.hard.native_live(hc.twin)
        by_index = {n: native[n] for n in pc0 if n in native}
    elif mode == "core":
        native = runs.native_core(case, hc)
        by_tid = {tf.tid: tf for tf in native.values()}
        by_index = {n: by_tid[tid] for n, (tid, _pc) in pc0.items() if tid in by_tid}
    else:
        native = runs.corpus.native_live(case)
        by_index = {n: native[n] for n in pc0 if n in native}
    return {n: [pc0[n][1], *T.pcs(tf)[1:]] for n, tf in by_index.items()}


def oracle_pc_errors(what: str, frames: dict[int, list[dict]], oracle: dict[int, list] | None,
                     case: Case, same_process: bool = False, shown_minus_one: bool = False) -> list[str]:
    """Real frames (dicts with "pc"; LLDB's [synthetic] ones may show the return address
    minus one when ``shown_minus_one``) against the oracle's pcs, thread by thread.  Unless
    the oracle walked the very same process (gdb's walk of the same core), the frame a
    signal interrupted is not compared: the signal came at a moment of its own in each run."""
    if oracle is None:
        return []
    errs = []
    for num in sorted(set(frames) & set(oracle)):
        real, want = frames[num], oracle[num]
        expected = case.expected.get(num, [])
        bad = []
        for i, (f, w) in enumerate(zip(real, want)):
            interrupted = not same_process and 0 < i <= len(expected) and expected[i - 1] == SIGTRAMP
            ok = f.get("pc") == w or (shown_minus_one and f.get("synthetic") and f.get("pc") == (w or 0) - 1)
            if not ok and not interrupted:
                bad.append(f"#{i} {H.hexs(f.get('pc'))} != {H.hexs(w)}")
        if bad or len(real) != len(want):
            errs.append(f"{what} thread {num}: pcs differ from the oracle's ({len(real)} vs {len(want)} "
                        "frames): " + ", ".join(bad[:8]))
    missing = sorted(set(frames) - set(oracle))
    if missing:
        errs.append(f"{what}: no oracle walk of thread(s) {missing}")
    return errs


def bt_errors(runs: LldbRuns, key: str, mode: str, bt: dict[int, list[dict]],
              pc0: dict[int, tuple[int, int]]) -> list[str]:
    """LLDB's own `bt all` (with swk's frame provider) against the known chain (glibc
    aliases accepted) and the true pcs of oracle_pcs (a frame of swk's may show the
    return address minus one: see provider._shown_pc)."""
    case, hc = BY_ID[key]
    errs = []
    if set(bt) != set(case.expected):
        errs.append(f"bt all: threads {sorted(bt)} != expected {sorted(case.expected)}")
    for num in sorted(set(bt) & set(case.expected)):
        m = T.chain_mismatch(lldb_chain(bt[num]), case.expected[num], lldb_same_name)
        if m:
            errs.append(f"bt all thread {num}: chain is not the known one: {m}")
    errs += oracle_pc_errors("bt all", {n: lldb_real(fr) for n, fr in bt.items()},
                             oracle_pcs(runs, key, mode, pc0), case, same_process=mode == "core" and hc is None,
                             shown_minus_one=True)
    return errs


def _bt_summary(bt: dict[int, list[dict]]) -> str:
    return "\n".join(f"thread {n}: {H.format_chain_short(lldb_chain(fr))}" for n, fr in sorted(bt.items()))


@pytest.mark.parametrize("key,mode", _params())
def test_lldb(runs, key: str, mode: str):
    case, hc = BY_ID[key]
    out = runs.output(key, mode)
    try:
        swk = T.parse_swk_json("\n".join(between(out)))
        pc0 = parse_pc0(out)
    except T.OutputError as e:
        _fail([f"{key} ({mode}): {str(e).splitlines()[0]}"], out)
    errs = []
    try:
        errs += swk_errors(runs, key, mode, swk, pc0)
    except T.OutputError as e:
        errs.append(str(e))
    context = "known chain:\n" + H.expected_summary(case) + "\n--- swk ---\n" + H.swk_summary(swk)
    if PROVIDERS and key not in LLDB_BT_CRASHES:
        bt = parse_bt_all(between(out, BT_BEGIN))
        errs += bt_errors(runs, key, mode, bt, pc0)
        context += "\n--- LLDB's bt all ---\n" + _bt_summary(bt)
    if "swk: the frame provider failed" in out or "Traceback" in out:
        errs.append("swk reported an internal failure")
    if errs:
        _fail(errs, context + "\n--- lldb output ---\n" + out[-5000:])


# --------------------------------------------------------------------------
# bad input, help, settings: one clear line, never a traceback
# --------------------------------------------------------------------------

def _lines(target: list[str], setup: list[str], cmds: list[str], env: dict | None = None,
           swk: bool = True) -> tuple[list[str], str]:
    out = run_lldb(lldb_argv(target, setup, marked(cmds), swk=swk), timeout=180, env=env)
    return [ln for ln in between(out, open_end=True) if ln.strip() and not ln.startswith("(lldb)")], out


def _one_clear_line(lines: list[str], out: str) -> None:
    assert "Traceback" not in out, out
    assert len(lines) == 1, f"expected exactly one line, got {len(lines)}:\n" + "\n".join(lines)
    assert len(lines[0].strip()) > 5, lines


@pytest.fixture(scope="module")
def chain_exe():
    return T.Corpus().exe("chain-O0g")


def test_bad_option(chain_exe):
    lines, out = _lines([f"target create {chain_exe}"], ["breakpoint set -n stop_here", "process launch"],
                        ["swk-bt --bogus"])
    _one_clear_line(lines, out)
    assert "bogus" in lines[0] and lines[0].startswith("error:"), lines


def test_two_counts(chain_exe):
    lines, out = _lines([f"target create {chain_exe}"], ["breakpoint set -n stop_here", "process launch"],
                        ["swk-bt 3 4"])
    _one_clear_line(lines, out)


@pytest.mark.parametrize("cmd", ["swk-bt", "swk-bt -json", "swk-bt -all -compare"])
def test_no_target(cmd):
    lines, out = _lines([], [], [cmd])
    _one_clear_line(lines, out)
    assert lines[0].startswith("error: swk-bt"), lines


def test_not_running(chain_exe):
    lines, out = _lines([f"target create {chain_exe}"], [], ["swk-bt"])
    _one_clear_line(lines, out)


def test_exited(chain_exe):
    lines, out = _lines([f"target create {chain_exe}"], ["process launch"], ["swk-bt"])
    _one_clear_line(lines, out)


def test_bad_setting():
    lines, out = _lines([], [], ["swk-settings frame-cap zero"])
    _one_clear_line(lines, out)


def test_no_venv():
    lines, out = _lines([], [], ["script print('after')"], env={"SWK_VENV": "/nonexistent-swk-venv"})
    # the import said one line before the markers, and LLDB went on
    assert "Traceback" not in out, out
    said = [ln for ln in out.splitlines() if ln.startswith("swk: no virtual environment")]
    assert len(said) == 1, out
    assert lines == ["after"], lines


def test_help():
    lines, out = _lines([], [], ["help swk-bt"])
    assert "Traceback" not in out
    text = "\n".join(lines)
    for opt in ("-json", "-all", "-compare", "-v", "N"):
        assert opt in text, text


def test_text_and_compare(chain_exe):
    """swk-bt -gdb's text (GDB's bt lines), -v, N / -N, -compare and -all beside LLDB's bt."""
    lines, out = _lines([f"target create {chain_exe}"], ["breakpoint set -n stop_here", "process launch"],
                        ["swk-bt -gdb", "swk-bt -gdb -v 2", "swk-bt -gdb -2", "swk-bt -compare",
                         "swk-bt -gdb -all"])
    assert "Traceback" not in out and "error:" not in "\n".join(lines), out
    text = "\n".join(lines)
    assert re.search(r"^#0  stop_here \(.*\) at .*chain\.c:\d+$", text, re.M), text
    assert re.search(r"^#1  0x[0-9a-f]{16} in c \(.*\) at .*chain\.c:\d+$", text, re.M), text
    # chain.c has CFI, which decides its frames (the frame-pointer chain is the fallback)
    assert "[context: registers]" in text and "[cfi: DebugStepper]" in text, text
    assert "(More stack frames follow...)" in text, text
    assert re.search(r"^0 difference\(s\) over 8 frames", text, re.M), text
    assert re.search(r"^Thread 1 \(LWP \d+\):$", text, re.M), text


def test_lldb_format_is_lldbs_bt(chain_exe):
    """swk-bt's default text in LLDB is LLDB's own bt: its thread line and, frame for frame,
    LLDB's frame-format lines (LLDB's own bt is the oracle: where both debuggers find the same
    frames, every line equal, the selected frame marked); N, -v and a changed frame-format."""
    lines, out = _lines([f"target create {chain_exe}"], ["breakpoint set -n stop_here", "process launch"],
                        ["bt", "script print('SWK-MID')", "swk-bt", "script print('SWK-MID2')", "swk-bt 2",
                         "script print('SWK-MID3')", "swk-bt -v",
                         "settings set frame-format 'F${frame.index} ${function.name}{ @${line.number}}\\n'",
                         "script print('SWK-MID4')", "bt", "script print('SWK-MID5')", "swk-bt"])
    assert "Traceback" not in out and "error:" not in "\n".join(lines), out
    cut = [i for i, ln in enumerate(lines) if ln.startswith("SWK-MID")]
    own, swk, two, verbose = (lines[:cut[0]], lines[cut[0] + 1:cut[1]], lines[cut[1] + 1:cut[2]],
                              lines[cut[2] + 1:cut[3]])
    own2, swk2 = lines[cut[3] + 1:cut[4]], lines[cut[4] + 1:]
    assert own[0].startswith("* thread #1") and own[1].startswith("  * frame #0: ") and len(own) == 9, out
    assert swk == own, "\n".join(["--- LLDB's bt ---", *own, "--- swk-bt ---", *swk])
    assert two == own[:3], two
    assert [re.sub(r"  \[\w[^]]*\] sp=0x[0-9a-f]+ fp=0x[0-9a-f]+$", "", ln) for ln in verbose] == own, verbose
    assert "[cfi: DebugStepper]" in verbose[2], verbose
    assert swk2 == own2 and own2[1].startswith("  * F0 stop_here @"), "\n".join([*own2, "---", *swk2])


#: a frame-format without values (argument values are LLDB's own formatting, not swk's)
#: (no ${function.is-inlined}: LLDB 16 does not know it, and these programs inline nothing)
_PLAIN_FORMAT = ("frame #${frame.index}: ${frame.pc} {${module.file.basename}{\\`}}{${function.name}"
                 "{${frame.no-debug}${function.pc-offset}}}{ at ${line.file.basename}:${line.number}}"
                 "{${frame.is-artificial} [artificial]}\\n")

_SWK_RENDER = ("script from swk_plugin.backends.lldb.session import SESSION as _S; "
               "from swk_plugin.lldblines import lldb_walk_lines as _L; from swk_plugin.lldbformat import parse as _P; "
               "from swk_plugin.options import BtOptions as _O; _w = _S.walker(lldb.target); "
               "print('\\n'.join(_L(_w.walk_stack(_w.process_state.get_default_thread()), _O(), "
               "_P(lldb.debugger.GetInternalVariableValue('frame-format', lldb.debugger.GetInstanceName())"
               ".GetStringAtIndex(0).strip(chr(34))))))")


def test_lldb_format_rendered_by_swk(chain_exe):
    """swk's own rendering of a frame-format (lldbformat and lldblines, which draw the frames only
    swk finds) against LLDB's own bt in the same format, every frame of the chain: the index, pc,
    module, function, `+ offset` without line information, file and line."""
    lines, out = _lines([f"target create {chain_exe}"], ["breakpoint set -n stop_here", "process launch",
                                                         f"settings set frame-format '{_PLAIN_FORMAT}'"],
                        ["bt", "script print('SWK-MID')", _SWK_RENDER])
    assert "Traceback" not in out, out
    cut = lines.index("SWK-MID")
    own, swk = lines[1:cut], lines[cut + 1:]
    assert len(own) == 8 and own[-1].split("`")[-1].startswith("_start + "), out
    assert swk == own, "\n".join(["--- LLDB's bt ---", *own, "--- swk's rendering ---", *swk])


def test_lldb_values_rendered_by_swk():
    """swk's own rendering of LLDB's frame lines with arguments (locals.lldbvalue), against LLDB's
    own bt in the same format: integers of every size, characters printable and not, bool,
    float / double / long double, strings, pointers (null too), a struct of scalars on one line,
    a struct holding a struct as ``Pair @ 0x...``, a union, enums, a reference; every frame, the C
    library's below them too, whose function pointers LLDB prints as the code they point at
    (``main=(lldb_values`main at lldb_values.cpp:38:1)``: its line entry's line and column)."""
    exe = T.build(["lldb_values.cpp"], "lldb_values", ("-g", "-O0"))
    fmt = _PLAIN_FORMAT.replace("${function.name}", "${function.name-with-args}")
    lines, out = _lines([f"target create {exe}"], ["breakpoint set -n leaf", "process launch",
                                                   f"settings set frame-format '{fmt}'"],
                        ["bt", "script print('SWK-MID')", _SWK_RENDER])
    assert "Traceback" not in out, out
    cut = lines.index("SWK-MID")
    own, swk = [ln.lstrip(" *") for ln in lines[1:cut]], [ln.lstrip(" *") for ln in lines[cut + 1:]]
    assert len(own) >= 5 and "pr=Pair @ 0x" in own[0] and "fl=(a = 4, b = -5)" in own[0], out
    assert swk == own, "\n".join(["--- LLDB's bt ---", *own, "--- swk's rendering ---", *swk])


def test_lldb_format_where_frames_differ():
    """A thread where LLDB's frames are not swk's (glibc's pthread_cond_timedwait: LLDB invents a
    tail-call frame __pthread_cond_timedwait_2_0, and numbers inlined calls its own way): every
    line in LLDB's frame format; a frame LLDB found too is LLDB's own line (renumbered); the
    frames below the top one waiter ... _start as LLDB prints them."""
    exe = T.build(["gdb_exact.c"], "gdb_exact-O2", ("-O2", "-g"), ("-pthread",))
    lines, out = _lines([f"target create {exe}"], ["breakpoint set -n stop_here", "process launch -- condwait",
                                                   "thread select 1"],
                        ["bt", "script print('SWK-MID')", "swk-bt", "script print('SWK-MID2')", "swk-bt -gdb"])
    assert "Traceback" not in out, out
    cut = [i for i, ln in enumerate(lines) if ln.startswith("SWK-MID")]
    own, swk, gdb_lines = lines[:cut[0]], lines[cut[0] + 1:cut[1]], lines[cut[1] + 1:]
    # (LLDB prints `thread select`'s own status late, into what follows: from the last header on)
    swk = swk[max(i for i, ln in enumerate(swk) if ln.startswith("* thread")):]
    frame = re.compile(r"^(?:  \*|   ) frame #(\d+): 0x[0-9a-f]{16} [\w.+-]+`(\S.*)$")
    errs = [f"not LLDB's frame format: {ln!r}" for ln in swk[1:] if not frame.match(ln)]
    if [int(frame.match(ln).group(1)) for ln in swk[1:] if frame.match(ln)] != list(range(len(swk) - 1)):
        errs.append("levels not 0..n-1")
    if len(swk) - 1 != len([ln for ln in gdb_lines if ln.startswith("#")]):
        errs.append("not as many frames as swk-bt -gdb")
    tail = {ln.split(": ", 1)[1] for ln in own if "frame #" in ln}
    for name in ("waiter", "main", "_start"):
        mine = [ln.split(": ", 1)[1] for ln in swk if f"`{name}" in ln]
        if not mine or mine[0] not in tail:
            errs.append(f"{name}'s line is not LLDB's own: {mine}")
    if errs:
        _fail(errs, "\n".join(["--- LLDB's bt ---", *own, "--- swk-bt ---", *swk]))


def test_provider_on_lldbs_event_thread_while_bt_runs():
    """LLDB 22 asks the provider for frames on its event thread too (printing `thread
    select`'s stop, it asks whether the next frame is hidden) while `bt` on the main thread
    holds the target's API lock and waits for that thread's frames: a provider making SB
    calls there without the lock deadlocked LLDB (llvm-project PR 208242).  The provider is
    slowed here so that `bt` always comes in while it works: LLDB's bt finishes, its frames
    those of a `bt` not slowed, and no call had to give up on the lock."""
    exe = T.build(["gdb_exact.c"], "gdb_exact-O2", ("-O2", "-g"), ("-pthread",))
    slow = ("script import time; swk_lldb._place = swk_lldb.provider.SwkFrameProvider._place_next; "
            "swk_lldb.provider.SwkFrameProvider._place_next = "
            "lambda self: (time.sleep(0.3), swk_lldb._place(self))[1]")
    busy = "script print('busy', swk_lldb.provider.STATS['busy'])"

    def bt(setup):
        lines, out = _lines([f"target create {exe}"], [*setup, "breakpoint set -n stop_here",
                                                       "process launch -- condwait", "thread select 1"],
                            ["bt", "script print('SWK-MID')", *[busy] * PROVIDERS])
        assert "Traceback" not in out, out
        own = lines[:lines.index("SWK-MID")]
        # (LLDB prints `thread select`'s own status late, into what follows: from the last header on)
        own = own[max(i for i, ln in enumerate(own) if ln.startswith("* thread")):]
        return own, lines, out

    want, _lines0, _out0 = bt([])
    got, lines, out = bt([slow] if PROVIDERS else [])
    assert len(got) > 4 and "`_start" in got[-1], out[-3000:]
    assert got == want, "\n".join(["--- slowed ---", *got, "--- not slowed ---", *want])
    if PROVIDERS:
        assert "busy 0" in lines, lines


NO_PROVIDER_NOTE = "has no frame providers"


def test_frame_provider_failure(chain_exe):
    """LLDB 22: a provider that raises gives LLDB's own frames, one line saying so, the details
    in the log.  LLDB 16 has no providers: importing says so in one line, `bt` is LLDB's own,
    and nothing reports a provider."""
    boom = ("script swk_lldb.provider.SwkFrameProvider._place_next = lambda self: 1 / 0" if PROVIDERS
            else "script print('no provider to break')")
    lines, out = _lines([f"target create {chain_exe}"], ["breakpoint set -n stop_here", "process launch"],
                        [boom, "bt", "thread backtrace"])
    assert "Traceback" not in out, out
    said = [ln for ln in lines if "swk: the frame provider failed" in ln]
    note = [ln for ln in out.splitlines() if NO_PROVIDER_NOTE in ln]
    if PROVIDERS:
        assert len(said) == 1 and "ZeroDivisionError" in said[0], out
        assert note == [], out
    else:
        assert said == [], out
        assert len(note) == 1 and note[0].startswith("swk: LLDB 16"), out
    frames = [ln for ln in lines if _FRAME.match(ln)]
    assert len(frames) == 2 * 8, out   # both backtraces whole: LLDB's own frames


def test_frame_provider_state():
    """swk-settings says whether swk's frame provider is behind LLDB's bt: on LLDB 22 it is
    on and can be switched off and on; on LLDB 16 it is unavailable, importing said so once,
    and asking for it is one clear error line."""
    out = run_lldb(lldb_argv([], [], marked(["swk-settings"])), timeout=120)
    shown = [ln for ln in between(out, open_end=True) if ln.startswith("provider:")]
    note = [ln for ln in out.splitlines() if NO_PROVIDER_NOTE in ln and not ln.startswith("provider:")]
    assert "Traceback" not in out, out
    assert len(shown) == 1, out
    if PROVIDERS:
        assert shown[0].startswith("provider: on ("), out
        assert note == [], out
        lines, out = _lines([], [], ["swk-settings provider off", "swk-settings provider on"])
        states = [ln.split()[1] for ln in lines if ln.startswith("provider:")]
        assert states == ["off", "on"], out
    else:
        assert shown[0].startswith("provider: unavailable (this LLDB has no frame providers"), out
        assert len(note) == 1, out
        lines, out = _lines([], [], ["swk-settings provider on"])
        _one_clear_line(lines, out)
        assert lines[0].startswith("error: swk-settings: this LLDB has no frame providers"), lines


def test_settings():
    lines, out = _lines([], [], ["swk-settings frame-cap 50", "swk-settings debug on", "swk-settings"])
    assert "Traceback" not in out
    text = "\n".join(lines)
    assert "frame-cap: 50" in text and "debug: on" in text, text


# --- issue 5's corpus: swk-bt -full in LLDB gives GDB's values ----------------------------

import dataclasses  # noqa: E402

import locals_cases as LC  # noqa: E402

_LOCALS = LC.LocalsCorpus()


@pytest.mark.parametrize("case", LC.LOCALS_CASES, ids=[c.id for c in LC.LOCALS_CASES])
def test_lldb_full_values_equal_gdbs(case):
    """The same program stopped in GDB and in LLDB: every argument and local of every frame
    swk prints inside LLDB equals GDB's `info args` / `info locals` (ASLR is off in both)."""
    gdb_frames = _LOCALS.live(case)[0]
    exe = _LOCALS.exe(case)
    out = run_lldb(lldb_argv([f"target create {exe}"], lldb_stop_cmds(case, None),
                             marked(["swk-bt -full -json"])), timeout=300)
    swk = T.parse_swk_json("\n".join(between(out)))
    # GDB and LLDB start the program with different environments, so its stack sits a few
    # bytes apart: stack addresses are compared as "a stack address", everything else exactly
    # (x86-64's stack at 0x7fff..., i386's in the top 4 MiB, 0xffc00000 and up).
    stack = re.compile(r"0x7fff[0-9a-f]{8}|0xff[c-f][0-9a-f]{5}\b")

    def mask(vals):
        return None if vals is None else [(n, stack.sub("0x7fff<stack>", v or "")) for n, v in vals]
    gdb_masked = [dataclasses.replace(g, args=mask(g.args), locals=mask(g.locals)) for g in gdb_frames]
    frames = [dict(f, **{k: [dict(v, value=stack.sub("0x7fff<stack>", v.get("value") or ""))
                             for v in f.get(k) or []] for k in ("args", "locals") if k in f})
              for f in swk[0]["frames"]]
    errs = LC.compare_locals(gdb_masked, frames, exact_count=False)
    if errs:
        _fail(errs, LC.format_swk_frames(swk[0]["frames"]))


# --- GDB's print settings as swk-bt options (issue 24) ------------------------------------

@pytest.mark.parametrize("entry,fargs", [("both", "all"), ("only", "scalars"), ("compact", "none")])
def test_print_setting_options_equal_gdbs(entry, fargs):
    """swk-bt -entry-values=E -frame-arguments=F in LLDB prints GDB's bt lines under
    `set print entry-values E` / `set print frame-arguments F` (stack addresses masked: the
    two debuggers start the program with different environments)."""
    exe = T.build(["gdb_exact.c"], "gdb_exact-O2", ("-O2", "-g"), ("-pthread",))
    gdb_out = T.run_gdb(exe, ["set width 0", "set height 0", "set backtrace past-main on", "break stop_here",
                              "run args", f"set print entry-values {entry}", f"set print frame-arguments {fargs}",
                              "echo SWK-GDB-BEGIN\\n", "bt", "echo SWK-GDB-END\\n"], timeout=120)
    lines = gdb_out.splitlines()
    want = lines[lines.index("SWK-GDB-BEGIN") + 1:lines.index("SWK-GDB-END")]
    out = run_lldb(lldb_argv([f"target create {exe}"], ["breakpoint set -n stop_here", "process launch -- args"],
                             marked([f"swk-bt -gdb -entry-values={entry} -frame-arguments={fargs}"])), timeout=180)
    got = between(out)
    stack = re.compile(r"0x7fff[0-9a-f]{8}")
    want = [stack.sub("0x7fff<stack>", ln) for ln in want]
    got = [stack.sub("0x7fff<stack>", ln) for ln in got if not ln.startswith("(lldb)")]
    if want != got:
        _fail([f"GDB printed {len(want)} lines, swk in LLDB {len(got)}"] +
              [f"  gdb: {w}\n  swk: {g}" for w, g in zip(want, got) if w != g],
              "--- gdb ---\n" + "\n".join(want) + "\n--- lldb swk-bt ---\n" + "\n".join(got))


def test_merge_in_lldb_is_the_command_lines():
    """swk-bt -merge in LLDB on the pool's core (tests/test_merge.py: the command line's tree
    there is GDB's own thread apply all bt, merged): the same tree, node for node, by thread id."""
    pool = T.build(["pool.c"], "pool-O2", ("-O2", "-g"), ("-pthread",))
    core = T.make_core(pool, ["set pagination off", "break stop_here", "run 40"])
    lines, out = _lines([f"target create {pool} --core {core}"], [], ["swk-bt -merge -json", "swk-bt -merge"])
    assert "Traceback" not in out, out
    cli = T.run_swk_cli(["bt", "--core", core, "--exe", pool, "--merge", "--json"])
    assert cli.returncode == 0, cli.stdout

    def nodes(top):
        out, stack = {}, [((), n) for n in top["tree"]]
        while stack:
            path, n = stack.pop()
            path += (n["function"], tuple(n.get("repeat") or ()))
            out[path] = sorted(t for tids in n["tids"].values() for t in tids)
            stack.extend((path, c) for c in n["children"])
        return out
    mine = json.loads(next(ln for ln in lines if ln.startswith("{")))
    want = json.loads(cli.stdout.splitlines()[-1])
    assert mine["count"] == want["count"] == 41, (mine["count"], want["count"])
    assert nodes(mine) == nodes(want), "\n".join(lines)
    assert any(ln.startswith("Merged stacks of 41 threads of process ") for ln in lines), "\n".join(lines)


def test_stack_overflow_in_lldb():
    """The 8 MiB stack overflow's core (262,000 frames of rec_plain: tests/test_deep.py) in LLDB:
    swk-bt in LLDB's own format reaches main, each level numbered as rec_plain's own counter
    says (main called rec_plain(1): frame #0's n is main's level), the recursion one line;
    swk-bt -gdb prints the command line's lines (tests/test_deep.py: equal to GDB's bt)."""
    exe = T.build(["overflow.c"], "overflow-O2", ("-O2", "-g"))
    core = T.make_core(exe, ("run 8192 plain",), timeout=600)
    out = run_lldb(lldb_argv([f"target create {exe} --core {core}"], [], marked(["swk-bt", "swk-bt -gdb"])),
                   timeout=900)
    lines = [ln for ln in between(out, open_end=True) if ln.strip() and not ln.startswith("(lldb)")]
    assert "Traceback" not in out and not any(ln.startswith("error:") for ln in lines), out[-3000:]
    top = next(re.match(r"\s*\* frame #0: 0x[0-9a-f]+ \S+`rec_plain\(n=(\d+)\)", ln) for ln in lines
               if "frame #0:" in ln)
    assert top, "\n".join(lines[:5])
    depth = int(top.group(1))
    assert depth > 200_000, depth
    assert any(re.fullmatch(rf"\s+frame #{depth}: 0x[0-9a-f]+ \S+`main\(.*\) at overflow\.c:\d+:\d+", ln)
               for ln in lines), "\n".join(lines[:12])
    assert any(re.fullmatch(r"\s+\[\u2026 \d+ more frames of rec_plain at overflow\.c:\d+ \u2026\]", ln)
               for ln in lines), "\n".join(lines[:12])
    gdb_lines = [ln for ln in lines if ln.startswith(("#", "[\u2026"))]
    cli = T.run_swk_cli(["bt", "--core", core, "--exe", exe], timeout=900)
    assert cli.returncode == 0, cli.stdout[-2000:]
    assert gdb_lines == [ln for ln in cli.stdout.splitlines() if ln.startswith(("#", "[\u2026"))]


def test_stack_overflow_live_in_lldb():
    """The 8 MiB overflow live in LLDB, stopped by its SIGSEGV (no core): swk-bt reaches main,
    numbered as rec_plain's own counter says, the recursion one line."""
    exe = T.build(["overflow.c"], "overflow-O2", ("-O2", "-g"))
    out = run_lldb(lldb_argv([f"target create {exe}"], ["process launch -- 8192 plain"], marked(["swk-bt"])),
                   timeout=900)
    lines = [ln for ln in between(out, open_end=True) if ln.strip() and not ln.startswith("(lldb)")]
    assert "Traceback" not in out and not any(ln.startswith("error:") for ln in lines), out[-3000:]
    top = next((re.match(r"\s*\* frame #0: 0x[0-9a-f]+ \S+`rec_plain\(n=(\d+)\)", ln) for ln in lines
                if "frame #0:" in ln), None)
    assert top, "\n".join(lines[:5])
    depth = int(top.group(1))
    assert depth > 200_000, depth
    assert any(re.fullmatch(rf"\s+frame #{depth}: 0x[0-9a-f]+ \S+`main\(.*\) at overflow\.c:\d+:\d+", ln)
               for ln in lines), "\n".join(lines[:12])


#: LLDB's default frame format without colours: line and column as LLDB writes them
#: (LLDB 16 has no ${function.is-inlined}).
_COLUMN_FORMAT = ("frame #${frame.index}: ${frame.pc} {${module.file.basename}{\\`}}{${function.name}"
                  "{${frame.no-debug}${function.pc-offset}}}{ at ${line.file.basename}:${line.number}"
                  "{:${line.column}}}" + ("{${function.is-inlined} [inlined]}" if PROVIDERS else "")
                  + "{${frame.is-artificial} [artificial]}\\n")


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_lldb_columns_rendered_by_swk(opt):
    """swk's own rendering of LLDB's frame lines with columns (for the frames only swk finds: the
    row LLDB's reading of the line program gives, an inlined call's DW_AT_call_column for the
    level it was called from) against LLDB's own bt, every frame, at -O0 and at -O2 (inlined
    calls, tail calls)."""
    exe = T.build(["entry_past_main.c"], "entry_past_main-cols" + opt, (opt, "-g"))
    lines, out = _lines([f"target create {exe}"], ["breakpoint set -n stop_here", "process launch",
                                                   f"settings set frame-format '{_COLUMN_FORMAT}'"],
                        ["bt", "script print('SWK-MID')", _SWK_RENDER])
    assert "Traceback" not in out, out
    cut = lines.index("SWK-MID")
    own, swk = [ln.lstrip(" *") for ln in lines[1:cut]], [ln.lstrip(" *") for ln in lines[cut + 1:]]
    assert len(own) >= 5 and any(re.search(r"\.c:\d+:\d+", ln) for ln in own), out
    if opt == "-O0":
        assert swk == own, "\n".join(["--- LLDB's bt ---", *own, "--- swk's rendering ---", *swk])
        return
    # at -O2 LLDB 22 shows the inlined scale in place of relay's frame (no relay, no [inlined]):
    # the frames both show (pc and function) have the same line and column
    pat = re.compile(r"frame #\d+: (0x[0-9a-f]+) \S+`(\S+?)(?: \+ \d+)?(?: at (\S+))?(?: \[.*)?$")
    mine = {m.group(1, 2): m.group(3) for m in map(pat.match, swk) if m}
    theirs = {m.group(1, 2): m.group(3) for m in map(pat.match, own) if m}
    both = set(mine) & set(theirs)
    assert len(both) >= 6 and any(theirs[k] and theirs[k].count(":") == 2 for k in both), (own, swk)
    assert {k: mine[k] for k in both} == {k: theirs[k] for k in both}, \
        "\n".join(["--- LLDB's bt ---", *own, "--- swk's rendering ---", *swk])
