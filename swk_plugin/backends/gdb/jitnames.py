"""GDB's own bt names JIT code as swk does: a frame filter whose decorator gives a frame GDB
has no name for the name swk's JIT sources give its pc (a perf map, a jitdump: GDB reads
neither; GDB reads the GDB-JIT objects itself).  `bt -no-filters` shows GDB's own names alone."""
import gdb
from gdb.FrameDecorator import FrameDecorator

from ...errors import SwkError
from ...jit.symbols import JitSymbol
from .filters import SwkFrameFilter
from .session import SESSION

#: The filter's name in `info frame-filter`.
NAME = "swk-jit-names"


class JitNameDecorator(FrameDecorator):
    """A frame of GDB's bt, named from swk's JIT sources where GDB has no name."""

    def __init__(self, base, lookup_pc):
        super().__init__(base)
        self._lookup_pc = lookup_pc

    def function(self):
        name = super().function()
        if not isinstance(name, int):           # GDB named it (an int is a bare pc)
            return name
        try:
            walker = SESSION.walker_for(gdb.selected_inferior())
            hit = walker.symbol_lookup.lookup_at_addr(self._lookup_pc)
        except (gdb.error, SwkError, RuntimeError):
            hit = None
        if hit is not None and isinstance(hit[1], JitSymbol):
            return hit[0]
        if self.inferior_frame().name() is None:
            return "??"     # as GDB's own bt says: for a bare pc without a symbol it prints nothing
        return name


class SignalFrameDecorator(FrameDecorator):
    """A signal trampoline's frame printed as GDB prints it without frame filters: no pc."""

    def address(self):
        return None


class JitNameFilter(SwkFrameFilter):
    """Registered in gdb.frame_filters: decorates every frame of a bt.  Active only while the
    inferior has a perf map or a jitdump."""
    name = NAME
    priority = 0          # after any other filter: only frames still without a name

    def active(self):
        walker = SESSION.walker_for(gdb.selected_inferior())
        jit, ps = walker.symbol_lookup.jit, walker.process_state
        return jit.current_perf_map(ps) is not None or jit.current_jitdump(ps) is not None

    def filter(self, frames):
        newer = None                # the type of the frame before this one
        for dec in frames:
            frame = dec.inferior_frame()
            kind = frame.type()
            if kind == gdb.SIGTRAMP_FRAME:
                yield SignalFrameDecorator(dec)
            else:
                # a caller's pc is a return address, looked up in the call (GDB's address in
                # block), unless a signal interrupted it there
                caller = frame.level() > 0 and newer != gdb.SIGTRAMP_FRAME
                yield JitNameDecorator(dec, frame.pc() - 1 if caller else frame.pc())
            newer = kind


def install():
    gdb.frame_filters[NAME] = JitNameFilter()
