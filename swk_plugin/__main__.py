"""`swk` / `python -m swk_plugin`: the command line (cli.py).

The process ends by os._exit once its output is flushed: what a walk read (a deep
stack's frames, DWARF, symbol tables) needs no tearing down, and freeing it one object
at a time at exit cost more than a tenth of a second after a 10,000-frame walk.  For
the same reason `swk bt` runs without Python's cyclic garbage collector: it walks each
thread once and exits, and the collector would only go over the walks' objects (tens
of thousands of them, all still in use) again.  `swk profile`, which walks for as long
as it is asked, keeps it.  For `swk bt --pid`, the DWARF of the files the process maps
starts inflating before the rest of swk is imported (linux/inflateahead.py)."""
import gc
import os
import sys


def _pids_asked(argv):
    """The processes of `swk bt --pid P[,P...]` (argparse checks them properly later)."""
    if argv[:1] != ["bt"]:
        return []
    for i, arg in enumerate(argv):
        value = argv[i + 1] if arg == "--pid" and i + 1 < len(argv) else (
            arg[6:] if arg.startswith("--pid=") else None)
        if value is not None:
            try:
                pids = [int(p, 10) for p in value.split(",")]      # as cli._pid reads them
            except ValueError:
                return []
            return pids if all(p > 0 for p in pids) else []
    return []


_asked = _pids_asked(sys.argv[1:])
if _asked:
    # their DWARF inflating on another processor while the rest of swk is imported
    from .linux.inflateahead import inflate_ahead
    inflate_ahead(_asked)

from .cli import main  # noqa: E402  (after the inflating has started)

if sys.argv[1:2] == ["bt"]:
    gc.disable()
code = main()
try:
    sys.stdout.flush()
    sys.stderr.flush()
except (BrokenPipeError, OSError):   # a reader that went away (`swk bt ... | head`)
    pass
os._exit(code if isinstance(code, int) else 0)
