"""gdb -p PID -x bt_lines.py: GDB's own bt of every thread (before swk is loaded, so swk's
frame unwinder plays no part in it), then swk-bt of every thread, between markers
(tests/test_real_o2.py)."""
import os

import gdb

for setting in ("width 0", "height 0", "pagination off", "confirm off"):
    gdb.execute("set " + setting)
threads = sorted(gdb.selected_inferior().threads(), key=lambda t: t.num)


def each(kind, command):
    for t in threads:
        t.switch()
        print(f"SWKLINES-{kind}-BEGIN {t.num}")
        try:
            gdb.execute(command)
        except gdb.error as exc:
            print(f"SWKLINES-ERROR {exc}")
        print(f"SWKLINES-{kind}-END {t.num}")


each("GDB", "bt")
gdb.execute("source " + os.environ["SWK_GDB_INIT"])
each("SWK", "swk-bt")
