"""What the test suite needs from the machine, CI mode, and the suite's one random seed.

See docs/testing.md.  Everything here is used by tests/conftest.py and by the test
files themselves (``import swk_suite as S``):

* ``CI``: true when the environment variable CI is set (to anything but "", 0, false,
  no, off).  Under CI a skipped test is a failure (conftest.py turns every skip into a
  failure that says what is missing and how to install it).
* ``SEED``: the session's seed, from ``SWK_TEST_SEED``; without it, ``CI_SEED`` under
  CI and a new random seed otherwise.  Printed in pytest's header.  Every random choice
  of a test comes from ``rng_for(name)`` / ``seed_for(name)``, derived from it: two runs
  with the same seed take the same samples.
* ``need_tool`` / ``need_path`` / ``missing``: a prerequisite of the machine, or a skip
  whose reason names it and how to install it (under CI: a failure saying so).
* ``lldb()``: the LLDB the run uses: ``$SWK_LLDB``, else the first candidate of
  lldb-22, lldb-16, (other lldb-N, newest first), lldb whose Python module works.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import os
import random
import re
import shutil
import signal
import subprocess
from typing import NoReturn

import pytest


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() not in ("", "0", "false", "no", "off")


#: Set by .ci/run (CI=1) and by the CI machine (CI=true).
CI = _truthy(os.environ.get("CI"))

#: The seed of every CI run that does not set SWK_TEST_SEED.
CI_SEED = 12


def _session_seed() -> tuple[int, str]:
    env = os.environ.get("SWK_TEST_SEED", "").strip()
    if env:
        try:
            return int(env, 0), "from SWK_TEST_SEED"
        except ValueError:
            raise pytest.UsageError(f"SWK_TEST_SEED must be an integer, not {env!r}") from None
    if CI:
        return CI_SEED, "fixed under CI; SWK_TEST_SEED overrides it"
    return random.SystemRandom().randrange(1 << 32), "new for this run; SWK_TEST_SEED=N repeats a run"


SEED, SEED_SOURCE = _session_seed()


def seed_for(name: str) -> int:
    """A 63-bit seed for ``name`` (a test, a fuzz target), derived from the session's seed."""
    return int.from_bytes(hashlib.sha256(f"{SEED}-{name}".encode()).digest()[:8], "little") >> 1


def rng_for(name: str) -> random.Random:
    """The random generator of ``name``, derived from the session's seed."""
    return random.Random(seed_for(name))


# --------------------------------------------------------------------------
# what the machine must have
# --------------------------------------------------------------------------

SETUP = "scripts/setup.sh installs it"

#: program -> the Debian package that has it (scripts/setup.sh installs all of them)
PACKAGES = {
    "gdb": "gdb", "gcc": "gcc", "g++": "g++", "cc": "gcc",
    "nm": "binutils", "objcopy": "binutils", "objdump": "binutils", "readelf": "binutils",
    "strip": "binutils", "addr2line": "binutils", "c++filt": "binutils", "as": "binutils",
    "eu-stack": "elfutils", "eu-readelf": "elfutils", "strace": "strace",
    "node": "nodejs", "perl": "perl", "tclsh": "tcl", "sqlite3": "sqlite3", "xz": "xz-utils",
    "gzip": "gzip", "bash": "bash", "python3.11": "python3.11",
}


def missing(what: str, how: str) -> NoReturn:
    """Skip (under CI: fail, see conftest.py) saying what is missing and how to get it.
    Works in a test, a fixture, and at a module's top level (the whole module)."""
    pytest.skip(f"{what}; {how}", allow_module_level=True)


def install_hint(package: str) -> str:
    return f"install: apt-get install {package} ({SETUP})"


def need_tool(name: str, package: str | None = None) -> str:
    """The path of program ``name`` on PATH, or a skip naming it and its package."""
    path = shutil.which(name)
    if path is None:
        missing(f"{name} not found on PATH", install_hint(package or PACKAGES.get(name, name)))
    return path


def need_tools(*names: str) -> None:
    for n in names:
        need_tool(n)


def mark_needs(*tools: str) -> pytest.MarkDecorator:
    """A skipif mark for tests that need these programs, its reason naming the packages."""
    lacking = [t for t in tools if shutil.which(t) is None]
    pkgs = " ".join(sorted({PACKAGES.get(t, t) for t in lacking}))
    return pytest.mark.skipif(bool(lacking), reason=f"{', '.join(lacking)} not found on PATH; "
                                                    f"install: apt-get install {pkgs} ({SETUP})")


def need_path(path: str, package: str, what: str | None = None) -> str:
    """A file the tests read (libc, its debug file, kernel headers), or a skip naming its package."""
    if not os.path.exists(path):
        missing(f"{what or path} not found ({path})", install_hint(package))
    return path


def toolchain_quirk(what: str) -> NoReturn:
    """The installed toolchain did not make what a test needs (a compiler that behaves
    differently from Debian 12's): skip, under CI fail, saying so."""
    missing(what, "the test needs Debian 12's toolchain as scripts/setup.sh installs it")


# --------------------------------------------------------------------------
# LLDB: the first candidate whose Python module works
# --------------------------------------------------------------------------

LLDB_INSTALL = "install: apt-get install lldb-22 python3-lldb-22 (scripts/setup.sh installs them)"


@dataclasses.dataclass(frozen=True)
class LldbChoice:
    path: str | None                  # the LLDB the run uses, None when none works
    version: tuple[int, ...]
    tried: tuple[str, ...]            # "name: what was found", in the order tried
    problem: str | None               # why no LLDB can be used (one line), else None

    def describe(self) -> str:
        if self.path:
            return (f"lldb={self.path} ({'.'.join(map(str, self.version))})"
                    + (f" [tried {'; '.join(self.tried)}]" if len(self.tried) > 1 else ""))
        return f"lldb=NONE ({self.problem})"


def _lldb_candidates() -> list[str]:
    want = os.environ.get("SWK_LLDB", "").strip()
    if want:
        return [want]
    names = ["lldb-22", "lldb-16"]
    for d in os.environ.get("PATH", "").split(os.pathsep):
        try:
            entries = os.listdir(d or ".")
        except OSError:
            continue
        for e in entries:
            if re.fullmatch(r"lldb-\d+", e) and e not in names:
                names.append(e)
    head, rest = names[:2], sorted(names[2:], key=lambda n: -int(n.split("-")[1]))
    return [*head, *rest, "lldb"]


def _probe_lldb(name: str) -> tuple[str | None, tuple[int, ...], str]:
    """(path, version, what was found) for one candidate."""
    path = shutil.which(name)
    if path is None:
        return None, (0, 0, 0), f"{name}: not on PATH"
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60).stdout
        m = re.search(r"version (\d+)\.(\d+)\.(\d+)", out)
        version = tuple(int(x) for x in m.groups()) if m else (0, 0, 0)
        p = subprocess.run([path, "-b", "-x", "-o", "script import lldb; print('SWK-PY-' + 'OK')"],
                           capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, (0, 0, 0), f"{name}: {path} does not run ({exc})"
    if "SWK-PY-OK" not in p.stdout:
        why = " ".join((p.stdout + p.stderr).split())[-160:]
        return None, version, f"{name}: {path} {'.'.join(map(str, version))} has no working Python lldb module ({why})"
    return path, version, f"{name}: {path} {'.'.join(map(str, version))} works"


@functools.lru_cache(maxsize=None)
def lldb() -> LldbChoice:
    tried = []
    for name in _lldb_candidates():
        path, version, note = _probe_lldb(name)
        tried.append(note)
        if path is not None:
            return LldbChoice(path, version, tuple(tried), None)
    if os.environ.get("SWK_LLDB", "").strip():
        problem = f"lldb: SWK_LLDB names no working LLDB ({tried[0]}); {LLDB_INSTALL}"
    else:
        problem = f"lldb: no LLDB with a working Python module ({'; '.join(tried)}); {LLDB_INSTALL}"
    return LldbChoice(None, (0, 0, 0), tuple(tried), problem)


def need_lldb() -> tuple[str, tuple[int, ...]]:
    """(path, version) of the run's LLDB, or a skip (under CI a failure) saying why there is none."""
    choice = lldb()
    if choice.path is None:
        pytest.skip(choice.problem, allow_module_level=True)
    return choice.path, choice.version


# --------------------------------------------------------------------------
# hangs fail; speed is measured in benchmarks/, not asserted
# --------------------------------------------------------------------------

class Hang(AssertionError):
    """Something the test runs did not end within a generous time (a hang, not slowness)."""


@contextlib.contextmanager
def hang_guard(seconds: float, what: str):
    """Fail with Hang when the body runs longer than ``seconds`` (SIGALRM; main thread only).
    The bound is far above any normal run: it catches loops that never end, it is not a
    speed check (those are in benchmarks/bounds.py)."""
    def _alarm(_sig, _frame):
        raise Hang(f"{what} did not end within {seconds:g} s: a hang")
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
