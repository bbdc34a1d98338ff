"""pytest setup for swk: makes tests/swk_testlib.py importable and provides
session-scoped, cached access to corpus builds, cores and gdb's own walks."""
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import swk_testlib  # noqa: E402


def pytest_report_header(config):
    gdb = shutil.which(swk_testlib.GDB) or "NOT FOUND"
    return [f"swk corpus: gdb={gdb} build={swk_testlib.BUILD} "
            f"sysdebug={'hidden' if swk_testlib.NO_SYSDEBUG else 'as installed'}"]


@pytest.fixture(scope="session")
def testlib():
    return swk_testlib


@pytest.fixture(scope="session")
def need_gdb():
    if shutil.which(swk_testlib.GDB) is None:
        pytest.skip("gdb not installed")


@pytest.fixture(scope="session")
def corpus():
    """swk_testlib.Corpus: cached exe / lib / core / gdb-native walks per case."""
    return swk_testlib.Corpus()
