#!/usr/bin/env bash
# Set up swk on a Debian machine: system packages, and a venv at .venv made
# with GDB's own Python (GDB embeds the system Python, not the one on PATH).
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

# Everything the tests need (docs/testing.md says which test needs what): under CI a test
# whose tool is missing fails, saying which package to install.
# i386: gcc-12-multilib and g++-12-multilib (what the gcc-multilib meta-package pulls in; the meta-package
# itself conflicts with every gcc-12-<cross> package, so naming it would make apt remove the cross compilers).
# AArch64 (tests/test_aarch64*.py): the versioned cross compilers (the unversioned gcc-aarch64-linux-gnu
# conflicts with gcc-multilib), their binutils and C library (sysroot /usr/aarch64-linux-gnu), qemu-user
# and gdb-multiarch.
# Issue 26's targets (tests/cross_lib.py): the same five packages each for ppc64le, big-endian ppc64,
# riscv64 and s390x (sysroots /usr/<triplet>), versioned for the same reason; `apt-get install -s`
# of them removes nothing (gcc-12-multilib and the AArch64 compilers stay).
CROSS_PKGS="gcc-12-powerpc64le-linux-gnu g++-12-powerpc64le-linux-gnu binutils-powerpc64le-linux-gnu libc6-dev-ppc64el-cross linux-libc-dev-ppc64el-cross gcc-12-powerpc64-linux-gnu g++-12-powerpc64-linux-gnu binutils-powerpc64-linux-gnu libc6-dev-ppc64-cross linux-libc-dev-ppc64-cross gcc-12-riscv64-linux-gnu g++-12-riscv64-linux-gnu binutils-riscv64-linux-gnu libc6-dev-riscv64-cross linux-libc-dev-riscv64-cross gcc-12-s390x-linux-gnu g++-12-s390x-linux-gnu binutils-s390x-linux-gnu libc6-dev-s390x-cross linux-libc-dev-s390x-cross"
PKGS="gdb time gcc g++ gcc-12-multilib g++-12-multilib libc6-dev linux-libc-dev binutils elfutils python3 python3-venv python3.11 python3.11-venv libpython3.11-dev libc6-dbg python3.11-dbg libstdc++6-12-dbg lua5.4 liblua5.4-0-dbg lldb-22 python3-lldb-22 nodejs llvm openjdk-17-jdk-headless perl tcl sqlite3 xz-utils gzip bash strace gcc-12-aarch64-linux-gnu g++-12-aarch64-linux-gnu binutils-aarch64-linux-gnu libc6-dev-arm64-cross linux-libc-dev-arm64-cross qemu-user gdb-multiarch $CROSS_PKGS"
missing=""
for p in $PKGS; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "swk setup: installing$missing"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi

# GDB's embedded Python: its prefix and version pick the interpreter for the venv.
read -r GDB_PREFIX GDB_PYVER < <(gdb -nx -batch -ex \
  'python import sys; print(sys.base_exec_prefix, "%d.%d" % sys.version_info[:2])' 2>/dev/null | tail -n 1)
PY="$GDB_PREFIX/bin/python$GDB_PYVER"
if [ ! -x "$PY" ]; then
  echo "swk setup: GDB embeds Python $GDB_PYVER but $PY does not exist" >&2
  exit 1
fi
if [ -x .venv/bin/python ] && ! .venv/bin/python -c "import sys; sys.exit(0 if '%d.%d' % sys.version_info[:2] == '$GDB_PYVER' else 1)"; then
  echo "swk setup: .venv was made with another Python; recreating it with $PY"
  rm -rf .venv
fi
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
if ! .venv/bin/python -c "import elftools, capstone, pytest, hypothesis" 2>/dev/null; then
  .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt
fi
# Make the project importable from the venv (a .pth file) and give it an `swk` command.
SITE=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$PWD" > "$SITE/swk-project.pth"
cat > .venv/bin/swk <<EOS
#!/bin/sh
exec env -u PYTHONDONTWRITEBYTECODE "$PWD/.venv/bin/python" -m swk_plugin "\$@"
EOS
chmod +x .venv/bin/swk
# Debian source packages, fetched with a private apt sources list (deb-src) under the build dir,
# never the machine's apt configuration, and never committed.
BUILD_DIR="${SWK_TEST_BUILD:-$PWD/tests/_build}"
fetch_source() {  # fetch_source DIR PACKAGE: the package's source files in DIR
  local dir="$1" pkg="$2"
  mkdir -p "$dir/lists/partial" "$dir/parts" "$dir/cache/archives/partial"
  echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main" \
    > "$dir/sources.list"
  local opts="-o Dir::Etc::SourceList=$dir/sources.list -o Dir::Etc::SourceParts=$dir/parts -o Dir::State::Lists=$dir/lists -o Dir::Cache=$dir/cache"
  (cd "$dir" && $SUDO apt-get $opts update -qq && $SUDO apt-get $opts source --download-only -qq "$pkg" >/dev/null 2>&1)
}
# GDB 13.1's own test programs (tests/test_gdb_suite.py).
GSRC="$BUILD_DIR/gdb-src"
if [ ! -d "$GSRC/gdb-13.1/gdb/testsuite/lib" ]; then
  if fetch_source "$GSRC" gdb \
      && tar -xJf "$GSRC"/gdb_13.1.orig.tar.xz -C "$GSRC" gdb-13.1/gdb/testsuite/gdb.arch gdb-13.1/gdb/testsuite/gdb.opt \
         gdb-13.1/gdb/testsuite/gdb.dwarf2 gdb-13.1/gdb/testsuite/gdb.base gdb-13.1/gdb/testsuite/gdb.python \
         gdb-13.1/gdb/testsuite/lib; then
    echo "swk setup: GDB 13.1's testsuite programs in $GSRC"
  else
    echo "swk setup: could not fetch Debian's gdb source package (tests/test_gdb_suite.py needs it)" >&2
  fi
fi
# elfutils' test cores of many architectures (backtrace.*.core.bz2 and their executables,
# tests/elfutils_cores.py): only the tests/ directory of its upstream tarball is unpacked.
ESRC="$BUILD_DIR/elfutils-src"
if ! ls "$ESRC"/elfutils-*/tests/backtrace.x86_64.core.bz2 >/dev/null 2>&1; then
  if fetch_source "$ESRC" elfutils \
      && orig=$(ls "$ESRC"/elfutils_*.orig.tar.* | grep -v '\.asc$' | head -n 1) \
      && top=$(basename "$orig" | sed 's/^elfutils_\(.*\)\.orig\.tar\..*$/elfutils-\1/') \
      && tar -xf "$orig" -C "$ESRC" "$top/tests"; then
    echo "swk setup: elfutils' test cores in $ESRC/$top/tests"
  else
    echo "swk setup: could not fetch Debian's elfutils source package (tests/test_elfutils_cores.py needs it)" >&2
  fi
fi
# pystack (Bloomberg): a comparison oracle for the Python frames (tests/test_python_pystack.py),
# in a venv of its own under the build dir, never in swk's.
PYSTACK_VENV="$BUILD_DIR/pystack-venv"
if [ ! -x "$PYSTACK_VENV/bin/pystack" ]; then
  mkdir -p "$BUILD_DIR"
  if python3.11 -m venv "$PYSTACK_VENV" \
      && "$PYSTACK_VENV/bin/python" -m pip install -q --disable-pip-version-check pystack; then
    echo "swk setup: pystack in $PYSTACK_VENV"
  else
    echo "swk setup: could not install pystack (tests/test_python_pystack.py needs it)" >&2
  fi
fi
echo "swk setup: ready (.venv with GDB's Python $GDB_PYVER)"
