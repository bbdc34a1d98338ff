"""StepperGroup: which FrameStepper to try for an address (spec: StepperGroup, AddrRange).

Each stepper is registered over address ranges [start, end) or the whole
address space.  For an address, candidates are the steppers whose ranges
contain it, tried in priority order; ``last_tried`` moves to the next one
after a not_me.
"""
import bisect

from .procstate import LIBRARY_LOAD, LIBRARY_UNLOAD

WHOLE_SPACE = (0, 1 << 64)


class StepperGroup:
    def __init__(self, walker=None):
        self.walker = walker
        self._steppers = []           # every stepper, in insertion order
        self._global = []             # steppers over the whole address space
        self._ranges = []             # sorted [(start, end, stepper)]
        self._starts = []
        self._cache = {}              # addr range key -> ordered candidates (cleared on change)

    # --- spec: addStepper / registerStepper ---------------------------------------------
    def add_stepper(self, stepper, start=None, end=None):
        """Add ``stepper`` over [start, end), or over the whole address space when no range is given."""
        if start is None and end is None:
            self.register_stepper(stepper)
            return True
        if start is None or end is None or not (0 <= start < end):
            raise ValueError(f"bad address range [{start!r}, {end!r})")
        self._remember(stepper)
        i = bisect.bisect_left(self._starts, start)
        self._ranges.insert(i, (start, end, stepper))
        self._starts.insert(i, start)
        self._cache.clear()
        return True

    def register_stepper(self, stepper):
        """Use ``stepper`` over the whole address space."""
        self._remember(stepper)
        if stepper not in self._global:
            self._global.append(stepper)
        self._cache.clear()

    def remove_range(self, stepper, start, end):
        self._ranges = [r for r in self._ranges if not (r[2] is stepper and r[0] == start and r[1] == end)]
        self._starts = [r[0] for r in self._ranges]
        self._cache.clear()

    def _remember(self, stepper):
        if stepper not in self._steppers:
            self._steppers.append(stepper)
            stepper.register_stepper_group(self)
            if stepper.walker is None and self.walker is not None:
                stepper.walker = self.walker

    # --- spec: findStepperForAddr ------------------------------------------------------------
    def candidates(self, addr):
        """All steppers covering ``addr``, best priority first (stable for equal priorities)."""
        if not self._ranges:
            found = self._cache.get(None)
            if found is None:
                found = self._cache[None] = sorted(self._global, key=lambda s: s.priority)
            return found
        found = list(self._global)
        if self._ranges:
            i = bisect.bisect_right(self._starts, addr)
            for start, end, stepper in self._ranges[:i]:
                if start <= addr < end and stepper not in found:
                    found.append(stepper)
        found.sort(key=lambda s: s.priority)
        return found

    def find_stepper_for_addr(self, addr, last_tried=None):
        """The stepper to try for ``addr``: the best one, or the one after ``last_tried``.

        Returns None when no stepper is left.
        """
        cands = self.candidates(addr)
        if last_tried is None:
            return cands[0] if cands else None
        try:
            i = cands.index(last_tried)
        except ValueError:
            return None
        return cands[i + 1] if i + 1 < len(cands) else None

    # --- spec: newLibraryNotification, getSteppers, getWalker -----------------------------------
    def new_library_notification(self, library, change):
        assert change in (LIBRARY_LOAD, LIBRARY_UNLOAD)
        for stepper in list(self._steppers):
            stepper.new_library_notification(library, change)

    def get_steppers(self):
        return set(self._steppers)

    @property
    def steppers(self):
        return list(self._steppers)

    def get_walker(self):
        return self.walker
