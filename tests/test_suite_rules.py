"""The suite's own rules (issue 12, docs/testing.md), checked by running pytest on it:

* under CI a skip is a failure whose one line names what is missing and how to
  install it (a test, a whole module); outside CI it is a skip with that reason;
* a tool taken off PATH makes the files that need it fail under CI, naming it;
* LLDB discovery passes over a broken LLDB (Debian's lldb 14 first on PATH);
* two runs with the same seed draw the same samples, and the seed is printed.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import swk_suite as S
import swk_testlib as T

PY = sys.executable


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("CI", "SWK_TEST_SEED", "SWK_LLDB", "SWK_GDB", "PYTEST_ADDOPTS")}
    env.update(extra)
    return env


def pytest_run(args: list[str], timeout: float = 300, **env) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=T.REPO,
                          capture_output=True, text=True, timeout=timeout, env=_env(**env))


def path_without(tmp: Path, hidden: tuple[str, ...]) -> str:
    """A PATH with every program of the current PATH except those whose name starts with one
    of ``hidden`` (symlinks in one directory)."""
    d = tmp / "bin"
    d.mkdir()
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for n in names:
            src = Path(entry) / n
            if n.startswith(hidden) or (d / n).exists() or not os.access(src, os.X_OK) or src.is_dir():
                continue
            (d / n).symlink_to(src)
    return str(d)


def _one_line(out: str, *words: str) -> list[str]:
    return [ln for ln in out.splitlines()
            if ln.startswith(("ERROR", "FAILED")) and all(w in ln for w in words)]


@pytest.fixture(scope="module")
def skipping_tests():
    """A test that skips and a module that skips at import, under tests/ (conftest.py applies)."""
    d = T.BUILD / "suite-rules"
    d.mkdir(parents=True, exist_ok=True)
    (d / "test_skips_inside.py").write_text(
        "import swk_suite as S\n\n"
        "def test_needs_a_tool():\n"
        "    S.need_tool('swk-no-such-tool', 'swk-no-such-package')\n\n"
        "def test_passes():\n"
        "    assert True\n")
    (d / "test_skips_module.py").write_text(
        "import swk_suite as S\n"
        "S.missing('swk-module-prerequisite absent', 'install: nothing')\n\n"
        "def test_never_runs():\n"
        "    assert False\n")
    return d


def test_a_skip_is_a_failure_under_ci(skipping_tests):
    res = pytest_run([str(skipping_tests / "test_skips_inside.py")], CI="1")
    out = res.stdout + res.stderr
    assert res.returncode == 1, out
    assert re.search(r"^1 failed, 1 passed", out, re.M), out
    lines = _one_line(out, "swk-no-such-tool not found on PATH",
                      "install: apt-get install swk-no-such-package")
    assert len(lines) == 1 and "CI: a skipped test is a failure here" in lines[0], out


def test_a_module_skip_is_a_failure_under_ci(skipping_tests):
    res = pytest_run([str(skipping_tests / "test_skips_module.py")], CI="true")
    out = res.stdout + res.stderr
    assert res.returncode not in (0, 5), out
    assert len(_one_line(out, "swk-module-prerequisite absent", "install: nothing")) == 1, out


def test_outside_ci_a_skip_shows_its_reason(skipping_tests):
    res = pytest_run([str(skipping_tests)], CI="0")
    out = res.stdout + res.stderr
    assert res.returncode == 0, out
    assert re.search(r"^1 passed, 2 skipped", out, re.M), out
    assert re.search(r"^SKIPPED .*swk-no-such-tool not found on PATH; install: apt-get install "
                     r"swk-no-such-package", out, re.M), out
    assert re.search(r"^SKIPPED .*swk-module-prerequisite absent", out, re.M), out


@pytest.mark.parametrize("hidden,target,words", [
    (("lldb",), "tests/test_lldb.py", ("lldb: no LLDB with a working Python module",
                                       "apt-get install lldb-22 python3-lldb-22")),
    (("gdb",), "tests/test_corpus.py", ("gdb not found on PATH", "apt-get install gdb")),
    (("strace",), "tests/test_target_untouched.py::test_the_checks_see_a_write_and_a_resume",
     ("strace not found on PATH", "apt-get install strace")),
    (("gcc",), "tests/test_fuzz_readers.py::test_fuzz_debug_frame",
     ("gcc not found on PATH", "apt-get install gcc")),
], ids=["lldb", "gdb", "strace", "gcc"])
def test_a_missing_tool_fails_under_ci_naming_it(tmp_path, hidden, target, words):
    """The tool taken off PATH: pytest fails (not exit 0, not 5: "no tests") with one line
    naming the tool and its package."""
    res = pytest_run([target], timeout=600, CI="1", PATH=path_without(tmp_path, hidden))
    out = res.stdout + res.stderr
    assert res.returncode not in (0, 5), out[-3000:]
    assert len(_one_line(out, *words)) == 1, out[-3000:]


def test_a_broken_lldb_first_on_path_is_passed_over(tmp_path):
    """A fake `lldb` 14 whose Python module does not import, first on PATH: the run takes the
    next candidate that works, and says which."""
    real = S.lldb()
    assert real.path is not None, real.problem
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "lldb").write_text("#!/bin/sh\n"
                               "case \"$1\" in --version) echo 'lldb version 14.0.6'; exit 0;; esac\n"
                               "echo 'ModuleNotFoundError: No module named lldb.embedded_interpreter' >&2\n"
                               "exit 1\n")
    (fake / "lldb").chmod(0o755)
    code = "import swk_suite as S; c = S.lldb(); print('CHOICE', c.path); print('TRIED', c.tried)"
    env = _env(PATH=f"{fake}{os.pathsep}{os.environ['PATH']}")
    p = subprocess.run([PY, "-c", code], cwd=T.TESTS, capture_output=True, text=True, timeout=300, env=env)
    assert f"CHOICE {real.path}" in p.stdout, p.stdout + p.stderr
    # with nothing else on PATH, the fake one is tried and refused, saying why
    only = tmp_path / "only"
    only.mkdir()
    (only / "lldb").symlink_to(fake / "lldb")
    p = subprocess.run([PY, "-c", code], cwd=T.TESTS, capture_output=True, text=True, timeout=300,
                       env=_env(PATH=f"{only}{os.pathsep}{path_without(tmp_path, ('lldb',))}"))
    assert "CHOICE None" in p.stdout and "14.0.6 has no working Python lldb module" in p.stdout, p.stdout


def test_the_same_seed_draws_the_same_samples():
    """Two runs with SWK_TEST_SEED=N: the same fuzz cases (the report's counts are equal, and
    the first seed), and the seed printed at the start and at the end."""
    target = "tests/test_fuzz_readers.py::test_fuzz_debug_frame"
    runs = [pytest_run(["-s", target], SWK_TEST_SEED="4242", SWK_FUZZ_SCALE="0.2") for _ in range(2)]
    other = pytest_run(["-s", target], SWK_TEST_SEED="4243", SWK_FUZZ_SCALE="0.2")
    reports = []
    for r in (*runs, other):
        out = r.stdout + r.stderr
        assert r.returncode == 0, out
        seed_lines = [ln for ln in out.splitlines() if ln.startswith("swk: CI=")]
        assert len(seed_lines) == 2, out      # -q: printed at the start and at the end
        rep = re.search(r"^swk fuzz report, first seed (\d+) .*\n\s+debug_frame: (\d+) (\d+) (\d+) (\d+)",
                        out, re.M)
        assert rep, out
        reports.append(rep.groups())
    assert "SWK_TEST_SEED=4242 (from SWK_TEST_SEED)" in runs[0].stdout
    assert reports[0] == reports[1], reports
    assert reports[2][0] != reports[0][0], reports     # another seed: other cases
