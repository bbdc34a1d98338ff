#!/usr/bin/env bash
# Set everything up, build the demo program and show swk-bt beside GDB's own bt.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p build
gcc -O2 -g -fno-omit-frame-pointer -pthread -o build/demo demo/demo.c
run_gdb() {
  gdb -nx -q -batch -iex 'set debuginfod enabled off' -ex 'set pagination off' \
      -ex "source $PWD/gdb_init.py" -ex 'handle SIGUSR1 nostop noprint pass' \
      -ex 'break stop_here' -ex run "$@" build/demo 2>&1 | grep -v '^\[\|^Using host\|^Download'
}
echo "=== GDB's own bt, then swk-bt, then swk-bt -compare (side by side) ==="
run_gdb -ex 'echo \n--- bt ---\n' -ex bt \
        -ex 'echo \n--- swk-bt ---\n' -ex swk-bt \
        -ex 'echo \n--- swk-bt -v ---\n' -ex 'swk-bt -v' \
        -ex 'echo \n--- swk-bt -compare ---\n' -ex 'swk-bt -compare' \
        -ex 'echo \n--- swk-bt -all ---\n' -ex 'swk-bt -all'
