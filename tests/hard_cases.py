"""The HARD frames of the swk corpus (issue 3): programs whose call chains are
known by construction but that GDB's own ``bt`` usually gets wrong, because
the code has no CFI at all, no frame pointer, a signal frame in frameless
code, JIT code with no symbol, a smashed saved frame pointer, ...

Each case comes with a *twin*: the same source built so that gdb can prove
the chain (CFI in .eh_frame and DWARF, or -DSWK_TWIN / -DSWK_TWIN_CFI for
the sources where the hard part is in the code itself).  Where the twin's
instructions are the very same as the hard build's (``twin_same_code``: only
the unwind tables and debug info differ), gdb's walk of the twin also gives
the true pc of every frame of the hard build (gdb disables ASLR), so swk's
pcs can be checked one by one, not just its names.

Only swk_testlib is used (Case, build, make_core, native_frames, ...);
``HardCorpus`` is the per-session cache (like swk_testlib.Corpus).
See tests/corpus/README.md ("Hard frames") and tests/test_hard_frames.py.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Callable

import swk_testlib as T
from swk_testlib import LIBC_START, SIGTRAMP, THREAD_START, Alt, Case

#: No CFI at all in the program's own code (the crt objects, e.g. _start,
#: and libc keep theirs), no frame pointer, no DWARF.
NOCFI = ("-O2", "-fomit-frame-pointer", "-g0", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables")
#: The twin of a NOCFI build: gcc emits the same instructions, plus .eh_frame
#: and DWARF (checked by hand with objdump when the corpus was written).
TWIN = ("-O2", "-g", "-fomit-frame-pointer")

#: Trusts a frame other than frame 0 may carry (frame 0 is "context").
CALLER_TRUSTS = frozenset({"cfi", "frame-pointer", "analysis", "scan", "signal"})


def hexs(v) -> str:
    """0x... for an int, repr() for anything else (None, a bad value)."""
    return hex(v) if isinstance(v, int) else repr(v)


def _libc(debug_name: str, dynsym_name: str | None = None) -> Alt:
    return Alt(debug_name, dynsym_name)


@dataclasses.dataclass(frozen=True)
class HardCase:
    """A hard build (``case``, with its known chain), the twin gdb can walk
    (``twin``: a Case with the twin's own chain, naming what the hard case
    leaves unnamed) and what is known about gdb's own bt of the hard build.

    ``gdb_wrong``: gdb's bt of the hard build is deterministically NOT the
    known chain (the point of the case); ``gdb_note`` says what it does.
    ``twin_same_code``: the twin's code is byte-identical at the same
    addresses, so its gdb pcs are the hard build's true pcs."""
    case: Case
    twin: Case
    twin_same_code: bool = True
    gdb_wrong: bool = True
    gdb_note: str = ""
    #: more checks of swk's walk: f(thread num -> swk frames) -> error messages
    extra_check: Callable[[dict[int, list[dict]]], list[str]] | None = None

    @property
    def id(self) -> str:
        return self.case.id


def _nocfi_cases() -> list[HardCase]:
    exp = {1: ["stop_here", "c", "b", "a", "main", *LIBC_START]}
    res = []
    for vid, cf, ld, note in (
            ("pie", ("-fPIE",), ("-pie",), "PIE"),
            ("nopie", ("-fno-PIE",), ("-no-pie",), "non-PIE, fixed addresses")):
        res.append(HardCase(
            Case(f"hard-nocfi-{vid}", ("hard_nocfi.c",), (*NOCFI, *cf), exp, ldflags=ld,
                 note=f"no CFI, no frame pointer, no DWARF; {note}"),
            Case(f"hard-nocfi-{vid}-twin", ("hard_nocfi.c",), (*TWIN, *cf), exp, ldflags=ld),
            gdb_note="prologue analysis: stop_here c, then junk (?? at 0 / small integers)"))
    # stripped: no .symtab either; stop on the program's own int3 in stop_here
    res.append(HardCase(
        Case("hard-nocfi-stripped", ("hard_nocfi.c",), (*NOCFI, "-fPIE"),
             {1: [None, None, None, None, None, *LIBC_START[:2], None]}, ldflags=("-pie",),
             post=(("strip", "--strip-all", "{out}"),), pre=(), run_args="trap",
             note="as hard-nocfi-pie, then strip --strip-all: no symbols; stops on its own int3"),
        Case("hard-nocfi-stripped-twin", ("hard_nocfi.c",), (*TWIN, "-fPIE"), exp, ldflags=("-pie",),
             pre=(), run_args="trap"),
        gdb_note="no symbols: ?? ?? then junk"))
    return res


def _signal_cases() -> list[HardCase]:
    exp = {1: ["fault", "h1", "handler", SIGTRAMP, "loop", "b", "a", "main", *LIBC_START]}
    pre = ("handle SIGALRM nostop noprint pass",)
    return [HardCase(
        Case("hard-signal", ("hard_signal.c",), NOCFI, exp, pre=pre,
             note="SIGALRM lands in frameless no-CFI loop(); the handler's chain stores through NULL"),
        Case("hard-signal-twin", ("hard_signal.c",), TWIN, exp, pre=pre),
        gdb_note="fault h1 then junk: never reaches the signal frame")]


def _thread_cases() -> list[HardCase]:
    exp = {
        1: ["stop_here", "main_a", "main", *LIBC_START],
        2: [_libc("__GI___libc_read", "read"), "t1_b", "t1_a", "t1_start", *THREAD_START],
        3: [_libc("__futex_abstimed_wait_common"), _libc("__new_sem_wait_slow64"),
            "t2_b", "t2_a", "t2_start", *THREAD_START],
        4: [_libc("__GI___clock_nanosleep", "clock_nanosleep"), _libc("__GI___nanosleep", "nanosleep"),
            "t3_b", "t3_a", "t3_start", *THREAD_START],
    }
    return [HardCase(
        Case("hard-threads", ("hard_threads.c",), NOCFI, exp, ldflags=("-pthread",),
             note="3 pthreads with no-CFI, frameless start functions and chains, parked in "
                  "read / sem_wait / nanosleep"),
        Case("hard-threads-twin", ("hard_threads.c",), TWIN, exp, ldflags=("-pthread",)),
        gdb_note="every thread: the libc frames (CFI), then the first no-CFI frame, then junk")]


RECURSE_DEPTH = 2000


def _recurse_cases(depth: int = RECURSE_DEPTH) -> list[HardCase]:
    exp = {1: ["stop_here", *(["rec"] * (depth + 1)), "main", *LIBC_START]}
    cf = ("-fno-optimize-sibling-calls",)
    return [HardCase(
        Case("hard-recurse", ("hard_recurse.c",), (*NOCFI, *cf), exp, run_args=str(depth), timeout=600,
             note=f"no-CFI recursion, {depth + 1} frames of rec (48 bytes each, no frame pointer)"),
        Case("hard-recurse-twin", ("hard_recurse.c",), (*TWIN, *cf), exp, run_args=str(depth),
             timeout=600),
        gdb_note="stop_here rec, then junk")]


def _asm_cases() -> list[HardCase]:
    exp = {1: ["stop_here", "c_leaf", "asm_push_saved", "asm_reuse_rbp", "asm_keep_frame", "main",
               *LIBC_START]}
    return [HardCase(
        Case("hard-asm", ("hard_asm_main.c", "hard_asm.S"), TWIN, exp,
             note="hand-written frames without CFI: callee-saved pushes + sub (no fp), %rbp "
                  "reused as a pointer into the frame, a classic %rbp frame; the C parts have CFI"),
        Case("hard-asm-twin", ("hard_asm_main.c", "hard_asm.S"), (*TWIN, "-DSWK_TWIN_CFI"), exp),
        gdb_note="stop_here c_leaf asm_push_saved, then 0x0")]


def _check_jit_frames(threads: dict[int, list[dict]]) -> list[str]:
    """The two unnamed frames are the JIT stubs' return addresses: jit_nofp's
    call returns to page+0x53, jit_fp's to page+0x13 (see hard_jit.c), in
    one page that belongs to no library."""
    fr = threads.get(1) or []
    if len(fr) < 4:
        return []   # the chain check already failed
    f2, f3 = fr[2], fr[3]
    errs = []
    p2, p3 = f2.get("pc"), f3.get("pc")
    if not (isinstance(p2, int) and isinstance(p3, int) and p2 & ~0xfff == p3 & ~0xfff
            and p2 & 0xfff == 0x53 and p3 & 0xfff == 0x13):
        errs.append(f"JIT frames: pcs {hexs(p2)} / {hexs(p3)} are not page+0x53 / page+0x13 of one page")
    for f in (f2, f3):
        if f.get("library") is not None:
            errs.append(f"JIT frame {f.get('level')}: library {f.get('library')!r}, expected none")
    return errs


def _jit_cases() -> list[HardCase]:
    exp = {1: ["stop_here", "c_callback", None, None, "call_jit", "main", *LIBC_START]}
    twin_exp = {1: ["stop_here", "c_callback", "twin_jit_nofp", "twin_jit_fp", "call_jit", "main",
                    *LIBC_START]}
    return [HardCase(
        Case("hard-jit", ("hard_jit.c",), TWIN, exp,
             note="two stubs in an anonymous r-x page (no symbol, no CFI, no library): one with "
                  "a frame pointer, one with sub $8; called through mov $imm64,%rax; call *%rax"),
        Case("hard-jit-twin", ("hard_jit.c",), (*TWIN, "-DSWK_TWIN"), twin_exp),
        twin_same_code=False, extra_check=_check_jit_frames,
        gdb_note="stop_here c_callback then four ?? (two of them junk) before call_jit main")]


def _smash_cases() -> list[HardCase]:
    exp = {1: ["stop_here", "deeper", "smash", "a", "main", *LIBC_START]}
    fp = ("-O2", "-fno-omit-frame-pointer")
    nocfi = ("-g0", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables")
    twin = Case("hard-smash-twin", ("hard_smash.c",), (*fp, "-g", "-DSWK_TWIN"), exp)
    return [
        HardCase(Case("hard-smash-cfi", ("hard_smash.c",), (*fp, "-g"), exp,
                      note="smash() points its caller's saved %rbp at a fake {0, 0} frame record; "
                           "with CFI (a's CFA is %rbp-based, so CFI alone goes wrong too)"),
                 twin, twin_same_code=False,
                 gdb_note="stop_here deeper smash a, then 'previous frame inner to this frame'"),
        HardCase(Case("hard-smash-nocfi", ("hard_smash.c",), (*fp, *nocfi), exp,
                      note="as hard-smash-cfi without any CFI: frame pointers only, one of them broken"),
                 twin, twin_same_code=False,
                 gdb_note="stop_here deeper smash, then 0x0"),
    ]


def _dlopen_cases() -> list[HardCase]:
    exp = {1: ["stop_here", "main_cb", "lib_inner", "lib_entry", "load_and_call", "main", *LIBC_START]}
    return [HardCase(
        Case("hard-dlopen", ("hard_dlopen_main.c",), TWIN, exp, ldflags=("-ldl",), run_args="{lib}",
             lib=(("hard_dlib.c",), (*NOCFI, "-fPIC"), "libhard_dlib.so"),
             note="dlopen'd library without CFI or frame pointer calls back into the program"),
        Case("hard-dlopen-twin", ("hard_dlopen_main.c",), TWIN, exp, ldflags=("-ldl",), run_args="{lib}",
             lib=(("hard_dlib.c",), (*TWIN, "-fPIC"), "libhard_dlib.so")),
        gdb_note="stop_here main_cb lib_inner, then junk")]


def _m32(hc: HardCase, expected: dict | None = None, twin_expected: dict | None = None, **kw) -> HardCase:
    """The i386 build of a hard case and its twin (swk_testlib.m32_case)."""
    return dataclasses.replace(hc, case=T.m32_case(hc.case, expected), twin=T.m32_case(hc.twin, twin_expected),
                               **kw)


def _i386_cases() -> list[HardCase]:
    """The hard cases that are plain C, built with gcc -m32, and one of i386's own: a handler
    returning into the program's copy of glibc's __restore (an int $0x80 trampoline in .text
    named swk_restore, no CFI), which gdb does not recognise."""
    by_id = {h.id: h for h in (*_nocfi_cases(), *_signal_cases(), *_thread_cases(), *_recurse_cases(),
                               *_smash_cases(), *_dlopen_cases())}
    res = [_m32(by_id[i]) for i in ("hard-nocfi-pie", "hard-nocfi-nopie", "hard-nocfi-stripped", "hard-signal",
                                    "hard-smash-cfi", "hard-smash-nocfi", "hard-dlopen")]
    res.append(_m32(by_id["hard-recurse"], gdb_note="stop_here rec, then junk"))
    threads = {
        1: ["stop_here", "main_a", "main", *LIBC_START],
        2: [T.KVSYSCALL, _libc("__GI___libc_read", "read"), "t1_b", "t1_a", "t1_start", *T.I386_THREAD_START],
        3: [T.KVSYSCALL, _libc("__futex_abstimed_wait_common64"), _libc("__futex_abstimed_wait_common"),
            _libc("__new_sem_wait_slow64"), Alt("__new_sem_wait_slow64.constprop.0", "sem_wait", None),
            "t2_b", "t2_a", "t2_start", *T.I386_THREAD_START],
        4: [T.KVSYSCALL, _libc("__GI___clock_nanosleep_time64", "__clock_nanosleep_time64"),
            _libc("__GI___nanosleep", "nanosleep"), "t3_b", "t3_a", "t3_start", *T.I386_THREAD_START],
    }
    res.append(_m32(by_id["hard-threads"], threads, threads))
    sig = T.CASES_BY_ID["signal-raise-O0g"]
    exp = {1: ["stop_here", "h1", "on_signal", SIGTRAMP, *T.I386_RAISE, "sig_b", "sig_a", "main", *LIBC_START]}
    res.append(HardCase(
        T.m32_case(dataclasses.replace(sig, id="hard-restorer", run_args="raise restorer",
                                       note="SA_RESTORER: the program's own int $0x80 sigreturn trampoline, swk_restore"), exp),
        T.m32_case(dataclasses.replace(sig, id="hard-restorer-twin", run_args="raise"), exp),
        twin_same_code=False,
        gdb_note="gdb looks at a trampoline's code only when it has no name (or one with 'sigaction' "
                 "in it), else only at the names __restore and __restore_rt: it walks swk_restore as "
                 "a function and junk from there"))
    return res


HARD_CASES: list[HardCase] = [*_nocfi_cases(), *_signal_cases(), *_thread_cases(), *_recurse_cases(),
                              *_asm_cases(), *_jit_cases(), *_smash_cases(), *_dlopen_cases(), *_i386_cases()]
HARD_BY_ID: dict[str, HardCase] = {h.id: h for h in HARD_CASES}


# --------------------------------------------------------------------------
# per-session cache
# --------------------------------------------------------------------------

class HardCorpus:
    """Cached builds, stop commands, cores and gdb's own walks, for both the
    hard builds and their twins (any swk_testlib.Case works)."""

    def __init__(self):
        self._exe: dict[str, Path] = {}
        self._lib: dict[str, Path | None] = {}
        self._core: dict[str, Path] = {}
        self._native_live: dict[str, dict[int, T.ThreadFrames]] = {}
        self._native_core: dict[str, dict[int, T.ThreadFrames]] = {}

    def lib(self, case: Case) -> Path | None:
        if case.id not in self._lib:
            self._lib[case.id] = (T.build(case.lib[0], case.lib[2], case.lib[1], ("-shared",))
                                  if case.lib else None)
        return self._lib[case.id]

    def exe(self, case: Case) -> Path:
        if case.id not in self._exe:
            self._exe[case.id] = T.build(case.srcs, case.exe_name, case.cflags, case.ldflags,
                                         [list(c) for c in case.post] if case.post else None)
        return self._exe[case.id]

    def stop_cmds(self, case: Case) -> list[str]:
        lib = self.lib(case)
        args = case.run_args.format(lib=lib) if lib else case.run_args
        return [*case.pre, f"run {args}".rstrip()]

    def core(self, case: Case) -> Path:
        if case.id not in self._core:
            self._core[case.id] = T.make_core(self.exe(case), self.stop_cmds(case), timeout=case.timeout)
        return self._core[case.id]

    def native_live(self, case: Case) -> dict[int, T.ThreadFrames]:
        if case.id not in self._native_live:
            self._native_live[case.id] = T.native_frames(self.exe(case), self.stop_cmds(case),
                                                         timeout=case.timeout)
        return self._native_live[case.id]

    def native_core(self, case: Case) -> dict[int, T.ThreadFrames]:
        if case.id not in self._native_core:
            self._native_core[case.id] = T.native_frames(self.exe(case), [], core=self.core(case),
                                                         timeout=case.timeout)
        return self._native_core[case.id]


# --------------------------------------------------------------------------
# checks
# --------------------------------------------------------------------------

def text_section(path: Path) -> tuple[int, bytes] | None:
    """(address, bytes) of an ELF file's .text (None if it has none)."""
    from elftools.elf.elffile import ELFFile
    with open(path, "rb") as f:
        sec = ELFFile(f).get_section_by_name(".text")
        return (sec["sh_addr"], sec.data()) if sec is not None else None


def native_chains(native: dict[int, T.ThreadFrames]) -> dict[int, list]:
    return {n: T.chain(fr) for n, fr in native.items()}


def _entry_text(n) -> str:
    if isinstance(n, Alt):
        return "|".join(_entry_text(x) for x in n)
    return "??" if n is None else ("<signal>" if n == SIGTRAMP else str(n))


def format_chain(ch: list) -> str:
    """A chain (or an expected chain, with Alt entries as a|b) as one line,
    gdb-style: None -> ??, the signal trampoline -> <signal>."""
    return " ".join(_entry_text(n) for n in ch)


def format_chain_short(ch: list, limit: int = 14) -> str:
    """format_chain, with the middle of a chain longer than ``limit`` elided."""
    if len(ch) > limit:
        return format_chain(ch[:limit - 4]) + f" ... ({len(ch)} frames) ... " + format_chain(ch[-3:])
    return format_chain(ch)


def expected_summary(case: Case) -> str:
    """The known chain of every thread, one line each."""
    return "\n".join(f"thread {n}: {format_chain_short(list(c))}" for n, c in sorted(case.expected.items()))


def gdb_summary(native: dict[int, T.ThreadFrames]) -> str:
    """gdb's chain of every thread on one line each (long chains elided)."""
    lines = []
    for num, tf in sorted(native.items()):
        ch_s = format_chain_short(T.chain(tf))
        tail = f" [{tf.stop_reason}" + (f"; {tf.error}" if tf.error else "") + "]"
        lines.append(f"thread {num}: {ch_s}{tail}")
    return "\n".join(lines)


def sp_deltas(sps: list, expected: list) -> list[int | None]:
    """Each frame's sp relative to the first frame of its segment, segments
    being split below each signal frame (where the kernel put the signal
    frame depends on the stack's alignment, which differs between a
    program and its twin; everything else is fixed by the code)."""
    res: list[int | None] = []
    base = None
    for i, sp in enumerate(sps):
        if i == 0 or (0 < i <= len(expected) and expected[i - 1] == SIGTRAMP):
            base = sp
        res.append(sp - base if isinstance(sp, int) and isinstance(base, int) else None)
    return res


def swk_thread_errors(frames: list[dict], stop_reason, expected: list, tag: str,
                      true_pcs: list[int | None] | None = None,
                      true_sps: list[int | None] | None = None) -> list[str]:
    """Everything wrong with one thread of swk's walk against its known chain:
    the names (exactly, entry for entry, down to _start or clone3 and no
    further), stop_reason saying "bottom", frame 0 found from the context,
    every caller found by a real method, signal frames only where the chain
    has one, the stack pointer going up, and (when ``true_pcs`` / ``true_sps``
    are given: the twin's walk) the pc of every frame except the one a signal
    interrupted, and every frame's sp relative to frame 0 (see sp_deltas)."""
    errs = []
    frames = T.real_frames(frames)   # inlined calls share their physical frame's pc and sp
    ch = T.chain(frames)
    m = T.chain_mismatch(ch, expected)
    if m:
        errs.append(f"{tag}: chain is not the known one: {m}")
    if not isinstance(stop_reason, str) or "bottom" not in stop_reason:
        errs.append(f"{tag}: stop_reason {stop_reason!r} does not say the walk reached the bottom")
    if frames:
        if frames[0].get("trust") != "context":
            errs.append(f"{tag}: frame 0 trust {frames[0].get('trust')!r}, not 'context'")
        for f in frames[1:]:
            if f.get("trust") not in CALLER_TRUSTS:
                errs.append(f"{tag}: frame {f.get('level')} ({f.get('function')}) trust "
                            f"{f.get('trust')!r} not in {sorted(CALLER_TRUSTS)}")
        for i, f in enumerate(frames):
            want = "signal" if i < len(expected) and expected[i] == SIGTRAMP else "normal"
            if f.get("kind") != want:
                errs.append(f"{tag}: frame {i} kind {f.get('kind')!r}, expected {want!r}")
        sps = [f.get("sp") for f in frames]
        for i in range(1, len(sps)):
            if not (isinstance(sps[i], int) and isinstance(sps[i - 1], int) and sps[i] > sps[i - 1]):
                errs.append(f"{tag}: sp of frame {i} ({hexs(sps[i])}) is not above frame {i - 1}'s "
                            f"({hexs(sps[i - 1])})")
                break
    if true_pcs is not None:
        got = [f.get("pc") for f in frames]
        bad = []
        for i, (g, t) in enumerate(zip(got, true_pcs)):
            interrupted = 0 < i <= len(expected) and expected[i - 1] == SIGTRAMP
            if not interrupted and g != t:
                bad.append(f"#{i} {hexs(g)} != {hexs(t)}")
        if bad:
            errs.append(f"{tag}: pcs differ from the twin's (true) pcs: " + ", ".join(bad[:10]))
    if true_sps is not None:
        got = sp_deltas([f.get("sp") for f in frames], expected)
        want = sp_deltas(true_sps, expected)
        bad = [f"#{i} {hexs(g)} != {hexs(t)}" for i, (g, t) in enumerate(zip(got, want)) if g != t]
        if bad:
            errs.append(f"{tag}: sps (relative to frame 0 / the interrupted frame) differ from the "
                        "twin's: " + ", ".join(bad[:10]))
    return errs


def swk_summary(swk_threads: list[dict], max_frames: int = 40) -> str:
    """swk's walks, compactly: per thread its chain and a frame table
    (level, pc, sp, function, trust, stepper, kind; long walks elided)."""
    lines = []
    for t in swk_threads:
        fr = t.get("frames") or []
        lines.append(f"thread {t.get('thread')} (tid {t.get('tid')}): {format_chain_short(T.chain(fr))}"
                     f"  [stop_reason: {t.get('stop_reason')}]")
        shown = fr if len(fr) <= max_frames else fr[:max_frames - 10] + [None] + fr[-9:]
        for f in shown:
            if f is None:
                lines.append(f"    ... ({len(fr)} frames)")
                continue
            lines.append(f"  #{f.get('level')!s:<4} {hexs(f.get('pc')):>18} sp={hexs(f.get('sp'))} "
                         f"{f.get('function') or '??'}  trust={f.get('trust')} stepper={f.get('stepper')}"
                         + ("  [signal]" if f.get("kind") == "signal" else ""))
    return "\n".join(lines)


def other_output(output: str) -> str:
    """The output minus swk's JSON lines and the harness's SWKNATIVE lines."""
    return "\n".join(ln for ln in output.splitlines()
                     if not ln.startswith(T.NATIVE_TAG) and not ln.strip().startswith('{"thread"'))
