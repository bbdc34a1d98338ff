"""Files a runtime only appends to while it runs (perf maps, jitdumps), read once per process of
swk and continued where they grew: a stop reads only what the runtime wrote since the last one."""
import os
import struct


class AppendedFiles:
    """What ``read(path, previous)`` made of each file, kept while the file is unchanged (its
    mtime, size and inode), continued from ``previous`` when the same file only grew, else read
    afresh; at most ``most`` files held (the oldest dropped first)."""

    def __init__(self, most, read):
        self.most, self.read = most, read
        self.held = {}

    def open(self, path):
        """The file's object as the file is now, or None where it cannot be read."""
        try:
            st = os.stat(path)
        except OSError:
            return None
        key = (st.st_mtime_ns, st.st_size, st.st_ino)
        held = self.held.get(path)
        if held is not None and held[0] == key:
            return held[1]
        grew = held is not None and held[0][2] == st.st_ino and held[1].offset <= st.st_size
        try:
            made = self.read(path, held[1] if grew else None)
        except (OSError, ValueError, struct.error):
            return None
        if len(self.held) >= self.most and path not in self.held:
            self.held.pop(next(iter(self.held)))
        self.held[path] = (key, made)
        return made
