#!/usr/bin/env bash
# CI step for issue 6: rerun tests/test_lldb.py (and the LLDB tests of issue 8's robustness
# files) against LLDB 16 (Debian's lldb-16), then put LLDB 22 back.  Debian's python3-lldb-N
# packages conflict with each other (and lldb-22 depends on python3-lldb-22), so only one
# LLDB can be installed at a time.  Exits non-zero when the LLDB 16 tests fail or a swap
# fails; LLDB 22 is put back either way.  Needs root or sudo, and the venv (scripts/setup.sh).
# Every selected test runs and asserts on LLDB 16 too (where LLDB 22 differs, the test asserts
# what LLDB 16 does); under CI=1 (.ci/run) a skip would be a failure (docs/testing.md).
#   usage: scripts/ci-lldb16.sh [pytest args...]
set -uo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
APT="$SUDO env DEBIAN_FRONTEND=noninteractive apt-get"
OLD_PKGS="lldb-16 python3-lldb-16"
NEW_PKGS="lldb-22 python3-lldb-22"

swap_to() {  # swap_to "PKGS" "PKGS-TO-REMOVE"
  if ! $APT install -y -qq $1 >/tmp/swk-ci-lldb-apt.log 2>&1; then
    $APT update -qq >/dev/null 2>&1 || true
    $APT install -y -qq $1 >/tmp/swk-ci-lldb-apt.log 2>&1 || { tail -20 /tmp/swk-ci-lldb-apt.log; return 1; }
  fi
  if [ -n "${2:-}" ]; then $APT remove -y -qq $2 >/dev/null 2>&1 || true; fi
}

had_new=0
dpkg -s python3-lldb-22 >/dev/null 2>&1 && had_new=1

echo "swk ci-lldb16: installing $OLD_PKGS (replaces LLDB 22 for the run)"
if ! swap_to "$OLD_PKGS" "lldb-22"; then
  echo "swk ci-lldb16: could not install $OLD_PKGS" >&2
  [ "$had_new" = 1 ] && swap_to "$NEW_PKGS" "python3-lldb-16"
  exit 1
fi

# the LLDB parts of issue 8's robustness tests (target untouched, running process, errors) and of
# issue 15's AArch64 tests (LLDB on qemu-user's stub) too
SWK_LLDB=lldb-16 .venv/bin/python -m pytest -q tests/test_lldb.py \
  tests/test_target_untouched.py::test_lldb_leaves_the_target_untouched \
  tests/test_session_robustness.py::test_lldb_running_process \
  tests/test_session_robustness.py::test_lldb_the_walk_raising \
  tests/test_session_robustness.py::test_lldb_every_stepper_raising \
  tests/test_aarch64.py::test_lldb tests/test_aarch64.py::test_lldb_lists_no_libraries_on_qemu "$@"
status=$?

echo "swk ci-lldb16: putting $NEW_PKGS back"
if ! swap_to "$NEW_PKGS" "lldb-16 python3-lldb-16"; then
  echo "swk ci-lldb16: could not put $NEW_PKGS back" >&2
  exit 1
fi
exit $status
