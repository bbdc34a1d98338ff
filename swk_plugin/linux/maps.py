"""/proc/PID/maps: a live local process's mappings."""
from ..procstate import MemoryRegion


def parse_maps(text):
    """[MemoryRegion] from the text of a maps file."""
    out = []
    for line in text.splitlines():
        parts = line.split(None, 5)
        if len(parts) < 5:
            continue
        try:
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
        except ValueError:
            continue
        perms = parts[1]
        name = parts[5] if len(parts) > 5 else ""
        out.append(MemoryRegion(lo, hi, perms[0] == "r", perms[1] == "w", perms[2] == "x", name))
    return out


def read_proc_maps(pid):
    """The mappings of a live local process, or None when /proc cannot tell."""
    try:
        with open(f"/proc/{pid}/maps") as f:
            text = f.read()
    except OSError:
        return None
    return parse_maps(text)
