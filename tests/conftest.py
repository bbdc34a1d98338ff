"""pytest setup for swk: makes tests/swk_testlib.py importable, provides session-scoped,
cached access to corpus builds, cores and gdb's own walks, prints the run's seed and
tools, and under CI (the environment variable CI, set by .ci/run) turns every skip into a
failure that says what is missing (docs/testing.md)."""
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import swk_suite as S  # noqa: E402
import swk_testlib  # noqa: E402


def _seed_line() -> str:
    return (f"swk: CI={'yes (a skip is a failure)' if S.CI else 'no (skips allowed, reasons shown)'} "
            f"SWK_TEST_SEED={S.SEED} ({S.SEED_SOURCE})")


def _tools_line() -> str:
    gdb = shutil.which(swk_testlib.GDB) or "NOT FOUND"
    return f"swk tools: gdb={gdb} {S.lldb().describe()}"


def pytest_report_header(config):
    return [_seed_line(), _tools_line(),
            f"swk corpus: build={swk_testlib.BUILD} "
            f"sysdebug={'hidden' if swk_testlib.NO_SYSDEBUG else 'as installed'}"]


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session):
    """With -q pytest prints no header: the seed and the tools are printed all the same."""
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    if tr is not None and session.config.get_verbosity() < 0:
        tr.write_line(_seed_line())
        tr.write_line(_tools_line())


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(_seed_line())


# --------------------------------------------------------------------------
# under CI a skip is a failure
# --------------------------------------------------------------------------

class CiSkipFailure:
    """The long representation of a skip made a failure under CI: one line."""

    def __init__(self, text: str):
        self.text = text
        self.reprcrash = self      # pytest's short summary reads longrepr.reprcrash.message
        self.message = text

    def toterminal(self, tw) -> None:
        tw.line(self.text)

    def __str__(self) -> str:
        return self.text


def _skip_reason(longrepr) -> str:
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        reason = str(longrepr[2])
    else:
        reason = str(longrepr)
    return reason.removeprefix("Skipped: ").strip()


def _as_ci_failure(report) -> None:
    reason = _skip_reason(report.longrepr)
    report.outcome = "failed"
    report.longrepr = CiSkipFailure(f"CI: a skipped test is a failure here: {reason}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if S.CI and report.skipped and not hasattr(report, "wasxfail"):
        _as_ci_failure(report)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    if S.CI and report.skipped:
        _as_ci_failure(report)


# --------------------------------------------------------------------------
# fixtures
# --------------------------------------------------------------------------

@pytest.fixture
def rng(request):
    """This test's random generator, derived from the session's seed (SWK_TEST_SEED)."""
    return S.rng_for(request.node.nodeid)


@pytest.fixture(scope="session")
def testlib():
    return swk_testlib


@pytest.fixture(scope="session")
def need_gdb():
    S.need_tool(swk_testlib.GDB, "gdb")


@pytest.fixture(scope="session")
def hard():
    """hard_cases.HardCorpus: cached builds, cores and gdb walks of the hard cases and twins."""
    import hard_cases
    return hard_cases.HardCorpus()


@pytest.fixture(scope="session")
def corpus():
    """swk_testlib.Corpus: cached exe / lib / core / gdb-native walks per case."""
    return swk_testlib.Corpus()
