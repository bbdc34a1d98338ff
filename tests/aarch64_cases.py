"""The AArch64 corpus of issue 15: tests/corpus programs cross-built for AArch64 and run
under qemu-user (tests/aarch64_lib.py), with their known chains.

Every bullet of the issue has a case: chains at -O0, -Og and -O2, without CFI, and with
``-mbranch-protection=pac-ret+leaf`` (signed return addresses); a timer signal in code
with CFI on an alternate stack, and one in frameless code without CFI; raise() through
the C library; threads; C++; dlopen; deep recursion; a crash in the C library (abort).
Which of them GDB 13 walks right is recorded per case (``gdb_right``) and checked by
tests/test_aarch64.py::test_gdb_own_walk.
"""

from __future__ import annotations

from aarch64_lib import LIBC_START, NOCFI, O0, O2, OG, PAC, THREAD_START, A64Case
from swk_testlib import SIGTRAMP

CHAIN = ["stop_here", "c", "b", "a", "main", *LIBC_START]
RECURSE_DEPTH = 1000


def _chain_cases() -> list[A64Case]:
    exp = {1: CHAIN}
    pac_note = ("signed return addresses: gdb 13 without the target's PAC mask (qemu 7.2's stub "
                "has no pauth registers) takes the signed x30 for a pc")
    return [
        A64Case("chain-O0", ("chain.c",), O0, exp),
        A64Case("chain-Og", ("chain.c",), OG, exp),
        A64Case("chain-O2", ("chain.c",), O2, exp),
        A64Case("chain-O2-pac", ("chain.c",), (*O2, *PAC), exp, gdb_right=False, gdb_note=pac_note),
        A64Case("chain-nocfi", ("chain.c",), NOCFI, exp),       # gdb's prologue analysis gets it
        A64Case("chain-nocfi-pac", ("chain.c",), (*NOCFI, *PAC), exp, gdb_right=False,
                gdb_note="no CFI and signed return addresses"),
        # no symbols either: function bounds from the gaps between the crt's FDEs, stopped on its
        # own brk in stop_here; the twin is the same code with its symbols
        A64Case("chain-nocfi-stripped", ("chain.c",), NOCFI,
                {1: [None, None, None, None, None, None, "__libc_start_main", None]}, pre=(),
                run_args=("trap",), post=(("aarch64-linux-gnu-strip", "--strip-all", "{out}"),),
                gdb_right=False, gdb_note="no symbols and no CFI: gdb names strcmp and stops",
                twin=A64Case("chain-nocfi-trap", ("chain.c",), NOCFI, exp, pre=(), run_args=("trap",))),
    ]


def _signal_cases() -> list[A64Case]:
    top = ["stop_here", "h1", "on_signal", SIGTRAMP]
    bottom = ["sig_b", "sig_a", "main", *LIBC_START]
    pre = ("handle SIGUSR1 SIGALRM nostop noprint pass", "break stop_here")
    return [
        A64Case("signal-alarm-altstack-O0", ("signal.c",), O0, {1: [*top, "spin", *bottom]}, pre=pre,
                run_args=("alarm", "altstack"), interrupted=("spin",)),
        A64Case("signal-raise-O2-pac", ("signal.c",), (*O2, *PAC), {1: [*top, None, "raise", *bottom]},
                pre=pre, run_args=("raise",), gdb_right=False,
                gdb_note="signed return addresses above the signal frame"),
    ]


def _hard_signal_cases() -> list[A64Case]:
    exp = {1: ["fault", "h1", "handler", SIGTRAMP, "loop", "b", "a", "main", *LIBC_START]}
    pre = ("handle SIGALRM nostop noprint pass",)
    twin = A64Case("hard-signal-twin", ("hard_signal.c",), ("-O2", "-g", "-fomit-frame-pointer"), exp,
                   pre=pre, interrupted=("loop",))
    return [
        A64Case("hard-signal", ("hard_signal.c",), NOCFI, exp, pre=pre, gdb_right=False, twin=twin,
                interrupted=("loop",),
                gdb_note="a signal in frameless code without CFI: gdb never reaches the signal frame"),
        A64Case("hard-signal-pac", ("hard_signal.c",), (*NOCFI, *PAC), exp, pre=pre, gdb_right=False,
                interrupted=("loop",), gdb_note="the same with signed return addresses"),
    ]


def _other_cases() -> list[A64Case]:
    threads = {
        1: ["stop_here", "main_a", "main", *LIBC_START],
        2: ["read", "t1_b", "t1_a", "t1_start", *THREAD_START],
        3: [None, None, "t2_b", "t2_a", "t2_start", *THREAD_START],
        4: ["clock_nanosleep", "nanosleep", "t3_b", "t3_a", "t3_start", *THREAD_START],
    }
    cxx = {1: ["stop_here", "(anonymous namespace)::anon_leaf",
               "geo::Vec::operator+(geo::Vec const&) const::{lambda(int)#1}::operator()",
               "geo::Vec::operator+", "shapes::Square<int>::area", "app::Runner<long>::run", "main",
               *LIBC_START]}
    dl = {1: ["stop_here", "main_callback", "dlib_inner", "dlib_mid", "dlib_entry", "load_and_call", "main",
              *LIBC_START]}
    rec = {1: ["stop_here", *(["rec"] * (RECURSE_DEPTH + 1)), "main", *LIBC_START]}
    abort = {1: [None, "raise", "abort", "do_abort", "abort_b", "abort_a", "main", *LIBC_START]}
    return [
        A64Case("threads-O2", ("threads.c",), O2, threads, ldflags=("-pthread",)),
        A64Case("cxx-O2-pac", ("cxx.cpp",), (*O2, *PAC), cxx, gdb_right=False,
                gdb_note="signed return addresses"),
        A64Case("dlopen-O2-pac", ("dlopen_main.c",), O2, dl, ldflags=("-ldl",), run_args=("{lib}",),
                lib=(("dlib.c",), (*O2, *PAC, "-fPIC"), "liba64dlib.so"), gdb_right=False,
                gdb_note="the dlopen'd library signs its return addresses"),
        A64Case("recurse-O0", ("recurse.c",), O0, rec, run_args=(str(RECURSE_DEPTH),)),
        A64Case("crash-abort-O2", ("crash.c",), O2, abort, pre=(), run_args=("abort",)),
    ]


A64_CASES: list[A64Case] = [*_chain_cases(), *_signal_cases(), *_hard_signal_cases(), *_other_cases()]
A64_BY_ID = {c.id: c for c in A64_CASES}
