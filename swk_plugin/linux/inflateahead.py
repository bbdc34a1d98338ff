"""A live process's compressed DWARF inflated while swk's command line starts.

`swk bt --pid` spends its first 20 ms importing itself, and a first walk of a program blocked
in libc then waits about as long for libc6-dbg's .debug_info to be inflated.  Each needs a
processor and machines have two: so before the rest of swk is imported, the files the process
maps are opened, and those whose DWARF (their own, or their separate debug file's) is
compressed start inflating in the background (dwarf/lines.py's prefetch_dwarf: zlib holds no
lock while it works).  The walk then finds those sections inflated, or inflates what it needs
itself, as it would have.  Nothing of the process is read but /proc/PID/maps; prefetch_dwarf's
own rules apply (a processor to spare; SWK_PREFETCH=0 turns it off).
"""
from ..dwarf.lines import prefetch_dwarf
from ..elf.module import open_module
from .maps import read_proc_maps


def inflate_ahead(pids):
    """Start inflating the DWARF of the files mapped executable by each of ``pids``."""
    seen = set()
    for pid in pids:
        for region in read_proc_maps(pid) or ():
            path = region.name
            if not region.executable or not path.startswith("/") or path in seen:
                continue
            seen.add(path)
            try:
                prefetch_dwarf(open_module(path))
            except Exception:     # a file that cannot be read: the walk will say so, or not need it
                continue
