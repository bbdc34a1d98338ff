"""The auxiliary vector: what the kernel told a process about itself at exec."""
AT_NULL = 0
AT_PHDR = 3
AT_PAGESZ = 6
AT_BASE = 7
AT_ENTRY = 9
AT_HWCAP = 16
AT_EXECFN = 31
AT_SYSINFO = 32
AT_SYSINFO_EHDR = 33


def parse_auxv(raw, ptr_size, byteorder):
    """{AT_*: value} from the raw vector (pairs of the target's words, in its byte
    order), up to AT_NULL."""
    vec = {}
    step = 2 * ptr_size
    for i in range(0, len(raw) - step + 1, step):
        key = int.from_bytes(raw[i:i + ptr_size], byteorder)
        if key == AT_NULL:
            break
        vec[key] = int.from_bytes(raw[i + ptr_size:i + step], byteorder)
    return vec


def read_proc_auxv(pid, ptr_size, byteorder):
    """{AT_*: value} of a live local process, or None when /proc cannot tell."""
    try:
        with open(f"/proc/{pid}/auxv", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    return parse_auxv(raw, ptr_size, byteorder)
