"""`swk` / `python -m swk_plugin`: the command line (cli.py).

The process ends by os._exit once its output is flushed: what a walk read (a deep
stack's frames, DWARF, symbol tables) needs no tearing down, and freeing it one object
at a time at exit cost more than a tenth of a second after a 10,000-frame walk.  For
the same reason `swk bt` runs without Python's cyclic garbage collector: it walks each
thread once and exits, and the collector would only go over the walks' objects (tens
of thousands of them, all still in use) again.  `swk profile`, which walks for as long
as it is asked, keeps it."""
import gc
import os
import sys

from .cli import main

if sys.argv[1:2] == ["bt"]:
    gc.disable()
code = main()
try:
    sys.stdout.flush()
    sys.stderr.flush()
except (BrokenPipeError, OSError):   # a reader that went away (`swk bt ... | head`)
    pass
os._exit(code if isinstance(code, int) else 0)
