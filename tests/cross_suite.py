"""The checks every cross-built architecture's corpus test makes (tests/test_ppc64.py,
test_ppc64be.py, test_riscv64.py, test_s390x.py), once: a test file lists its cases and
writes one thin test function per check.

* ``check_gdb_own_walk``: gdb's own walk is the known chain where the case says gdb is right,
  and is not where it says gdb is wrong (recorded).
* ``check_swk_in_gdb``: swk-bt -json -all in the same session: the known chain, and every
  frame's pc and sp equal to gdb's where gdb is right (else up to where gdb errs).
* ``check_gdb_with_swk_unwinder``: gdb's own bt once gdb_init.py registered swk's unwinder.
* ``check_cli_on_core``: ``swk bt --core`` on qemu's core of the guest at that stop.
* ``Locals``: the locals corpus, every value GDB prints equal in swk-bt -full (live, on cores).
"""
from __future__ import annotations

import re

import pytest

import cross_lib as C
import swk_testlib as T


def fail(msgs, context=""):
    pytest.fail("\n".join(msgs) + ("\n--- context ---\n" + context[-8000:] if context else ""), pytrace=False)


def ids(cases):
    return [c.id for c in cases]


def without_zero_bottom(walk: dict | None) -> dict | None:
    """gdb's walk without its last frame when that frame's pc is 0 (Power: the outermost
    frame's lr save slot holds 0, the ABI's end of the chain, and gdb shows a frame at pc 0
    before it stops; swk ends the walk there with that reason)."""
    if walk is None:
        return None
    for tf in walk.values():
        while len(tf) > 1 and tf[-1].pc == 0:
            tf.pop()
    return walk


class Sessions:
    """One gdb-multiarch session per case (cross_lib.gdb_session), kept for the module's tests;
    ``zero_bottom``: drop gdb's trailing pc-0 frame (without_zero_bottom)."""

    def __init__(self, zero_bottom=False):
        self.zero_bottom, self.by_key = zero_bottom, {}

    def __call__(self, case) -> C.GdbSession:
        key = case.exe_name
        if key not in self.by_key:
            s = C.gdb_session(case)
            if self.zero_bottom:
                without_zero_bottom(s.native)
                without_zero_bottom(s.hooked)
            self.by_key[key] = s
        return self.by_key[key]


def errors(case, s: C.GdbSession, frames: list[dict], by_order=False, check_sp=True) -> list[str]:
    """Everything wrong with ``frames`` (swk's threads, or a walk shaped like them): the known
    chain, and gdb's walk where gdb is right (all of it) or up to where it errs."""
    try:
        errs = C.known_chain_errors(case, C.chains(frames, s.native, by_order=by_order))
    except T.OutputError as e:
        return [str(e)]
    upto = None if case.gdb_right else C.right_prefix(case, s.native)
    return errs + C.compare_frames(s.native, frames, None, upto=upto, check_sp=check_sp, by_order=by_order)


def check_gdb_own_walk(case, s, gdb_case=None):
    """``gdb_case``: the case with its known chain in gdb's names where they differ."""
    known = C.is_known_chain(gdb_case or case, s.native)
    if case.gdb_right != known:
        fail([f"{case.id}: gdb's own walk is{'' if known else ' not'} the known chain "
              f"(the case says gdb is {'right' if case.gdb_right else 'wrong: ' + case.gdb_note})"],
             T.format_native(s.native))


def check_swk_in_gdb(case, s):
    if s.swk is None:
        fail([f"{case.id}: swk-bt printed no JSON"], s.output)
    errs = errors(case, s, s.swk)
    if errs:
        fail(errs, "gdb:\n" + T.format_native(s.native) + "\n--- swk ---\n" + C.format_swk(s.swk))


def hooked_walk(s) -> list[dict]:
    """gdb's walk with swk's unwinder, shaped as swk's JSON threads."""
    return [{"thread": n, "tid": tf.tid,
             "frames": [{"level": i, "pc": f.pc, "sp": f.sp, "function": f.function,
                         "kind": "signal" if f.is_signal else "normal"} for i, f in enumerate(T.real_frames(tf))]}
            for n, tf in s.hooked.items()]


def check_gdb_with_swk_unwinder(case, s, sigtramp_unnamed=False, gdb_case=None):
    """``sigtramp_unnamed``: gdb does not know the target's sigreturn trampoline (qemu's on
    Power), which swk unwinds for it — as a frame without a name, since a Python unwinder
    cannot make gdb mark a frame as a signal's.  ``gdb_case``: the case in gdb's names."""
    if s.hooked is None:
        fail([f"{case.id}: no gdb walk after gdb_init.py was sourced"], s.output)
    case = gdb_case or case
    expect = case
    if sigtramp_unnamed:
        expect = C.CrossCase(case.id, case.srcs, case.cflags,
                             {n: [None if f == T.SIGTRAMP else f for f in chain] for n, chain in case.expected.items()},
                             target=case.target)
    walk = hooked_walk(s)
    errs = C.known_chain_errors(expect, C.chains(walk, s.native))
    errs += C.compare_frames(s.native, walk, None, upto=None if case.gdb_right else C.right_prefix(case, s.native))
    if errs:
        fail(errs, "gdb alone:\n" + T.format_native(s.native) + "\n--- with swk ---\n" + T.format_native(s.hooked))


def check_cli_on_core(case, s):
    if s.core is None:
        fail([f"{case.id}: qemu wrote no core of the guest"], s.output)
    swk, out, rc = C.swk_cli(case.target, s.core, case.exe())
    if swk is None or rc != 0:
        fail([f"{case.id}: swk bt --core exited {rc} without JSON"], out)
    errs = errors(case, s, swk)
    if errs:
        fail(errs, "gdb (live):\n" + T.format_native(s.native) + "\n--- swk on the core ---\n" + C.format_swk(swk))


class Locals:
    """The locals corpus (tests/locals_cases.py) on one target: every argument and local GDB
    prints in every frame, swk-bt -full prints the same, live in gdb-multiarch and (where qemu
    writes cores) with ``swk bt --core --full`` on qemu's core of the same stop.  ``fp_regs``:
    the DWARF numbers of the floating-point registers, whose values a qemu core (no FP notes)
    does not hold: there swk may say <optimized out> where the DWARF puts the value in one
    (read with pyelftools, independently of swk)."""
    _UNREAD = re.compile(r"^#(\d+) (.+) (args|locals) (\S+): swk says <optimized out>, gdb ")

    def __init__(self, target, fp_regs=()):
        import locals_cases as LC
        self.LC, self.target, self.fp_regs = LC, target, tuple(fp_regs)
        self.cases = [C.CrossCase(f"locals-{c.id.removeprefix('locals-')}", (c.src,), c.cflags, {}, pre=c.pre,
                                  target=target) for c in LC.LOCALS_CASES if not c.m32]
        self._runs: dict[str, tuple] = {}

    def run(self, case):
        if case.id not in self._runs:
            LC = self.LC
            s = C.gdb_session(case, extra=[*LC.GDB_SETTINGS, "info auxv", *LC.dump_commands()],
                              swk_cmd=LC.SWK_FULL_JSON)
            self._runs[case.id] = (LC.parse_dump(s.output), s)
        return self._runs[case.id]

    def _unread_fp_values(self, case, s, gdb_frames, errs):
        import aarch64_lib
        bias = C.load_bias(s.output, case.exe())
        by_level = {g.level: g for g in gdb_frames}
        keep = []
        for e in errs:
            m = self._UNREAD.match(e)
            g = by_level.get(int(m.group(1))) if m else None
            if m and bias is not None and g is not None and g.pc is not None and self.fp_regs:
                addr = g.pc - bias - (1 if g.level > 0 else 0)
                if aarch64_lib.vector_located(case.exe(), addr, g.function, m.group(4), regs=self.fp_regs):
                    continue
            keep.append(e)
        return keep

    @staticmethod
    def _one_thread(swk_threads, out):
        if not swk_threads or len(swk_threads) != 1:
            fail(["swk printed no (or more than one) thread"], out)
        return swk_threads[0].get("frames") or []

    def check(self, case, mode):
        LC = self.LC
        gdb_frames, s = self.run(case)
        lc = next(c for c in LC.LOCALS_CASES if c.src == case.srcs[0] and c.cflags == case.cflags)
        chain = [(T.strip_params(f.function), f.type) for f in gdb_frames]
        if chain != list(lc.chain):
            fail([f"gdb's chain {chain} != the locals corpus' {list(lc.chain)}"])
        if mode == "live":
            frames = self._one_thread(s.swk, s.output)
            errs = LC.compare_locals(gdb_frames, frames, exact_count=True)
        else:
            if s.core is None:
                fail(["qemu wrote no core"], s.output)
            swk, out, _rc = C.swk_cli(self.target, s.core, case.exe(), extra=["--full"])
            frames = self._one_thread(swk, out)
            errs = self._unread_fp_values(case, s, gdb_frames,
                                          LC.compare_locals(gdb_frames, frames, exact_count=False))
        if errs:
            fail(errs, "gdb:\n" + LC.format_gdb_frames(gdb_frames) + "\n--- swk ---\n" + LC.format_swk_frames(frames))
