"""A live process's compressed DWARF inflated while swk's command line starts.

`swk bt --pid` spends its first 20 ms importing itself, and a first walk of a program blocked
in libc then waits about as long for libc6-dbg's .debug_info to be inflated.  Each needs a
processor and machines have two: so before anything else of swk is imported, the files the
process maps executable are named from /proc/PID/maps (read here with nothing but ``os``), and
elf/ahead.py starts inflating their DWARF (their own, or their build-id debug file's) in one
thread: zlib holds no lock while it works.  The walk's readers take those sections from it, or
inflate what they need themselves, as they would have.  Nothing of the process is read but its
maps; only with a processor to spare (the last minute's load under the processors less one
half, as dwarf/lines.py's prefetching asks); SWK_PREFETCH=0 turns it off.
"""
import os

from ..elf import ahead


def inflate_ahead(pids):
    """Start inflating the DWARF of the files mapped executable by each of ``pids``."""
    if not allowed():
        return
    paths = []
    for pid in pids:
        try:
            with open(f"/proc/{int(pid)}/maps", "rb") as f:
                lines = f.read().split(b"\n")
        except (OSError, ValueError):
            continue
        for line in lines:
            # address perms offset dev inode path: a file mapped executable
            parts = line.split(None, 5)
            if len(parts) == 6 and parts[1][2:3] == b"x" and parts[5].startswith(b"/"):
                path = os.fsdecode(parts[5])
                if path not in paths and not path.endswith(" (deleted)"):
                    paths.append(path)
    ahead.start(paths)


def inflate_files(paths):
    """Start inflating the DWARF of ``paths`` (GDB's objfiles when swk is sourced after an
    attach: gdb_init.py), on the same conditions."""
    if allowed():
        ahead.start(paths)


def allowed():
    """Whether inflating ahead may take a processor: one is spare, and SWK_PREFETCH is not 0."""
    return os.environ.get("SWK_PREFETCH", "1") != "0" and _spare_processor()


def _spare_processor():
    try:
        return os.getloadavg()[0] + 0.5 < len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return False
