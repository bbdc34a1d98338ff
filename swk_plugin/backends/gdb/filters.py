"""What swk's frame filters share: GDB asks each filter in gdb.frame_filters whether it is
enabled before every bt, and any enabled filter makes GDB print every frame its Python way, so
a filter of swk's is enabled only while the inferior has what it shows (``active``); `disable
frame-filter global NAME` turns it off for good."""
import gdb

from ...errors import SwkError


class SwkFrameFilter:
    """A frame filter enabled while ``active()`` and not disabled by the user; subclasses give
    ``name``, ``priority``, ``active`` and ``filter``."""
    name = None
    priority = 0

    def __init__(self):
        self._enabled = True

    def active(self):
        raise NotImplementedError

    @property
    def enabled(self):
        if not self._enabled:
            return False
        try:
            return bool(self.active())
        except (gdb.error, SwkError, RuntimeError, AttributeError):
            return False

    @enabled.setter
    def enabled(self, value):
        self._enabled = bool(value)
