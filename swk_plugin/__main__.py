"""`swk` / `python -m swk_plugin`: the command line (cli.py).

The process ends by os._exit once its output is flushed: what a walk read (a deep
stack's frames, DWARF, symbol tables) needs no tearing down, and freeing it one object
at a time at exit cost more than a tenth of a second after a 10,000-frame walk."""
import os
import sys

from .cli import main

code = main()
try:
    sys.stdout.flush()
    sys.stderr.flush()
except (BrokenPipeError, OSError):   # a reader that went away (`swk bt ... | head`)
    pass
os._exit(code if isinstance(code, int) else 0)
