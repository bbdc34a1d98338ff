"""Frame: one stack frame of a walk (spec: Frame).

A Frame is a snapshot: ra/sp/fp plus every register value the walk recovered
for it, where ra/sp/fp were found, the stepper that made it, and — resolved
lazily through the walker's SymbolLookup — its name and library.
"""
import enum


class Storage(enum.Enum):
    """Where a value was found (spec: storage_t)."""
    ADDRESS = "address"     # loc_address
    REGISTER = "register"   # loc_register
    UNKNOWN = "unknown"     # loc_unknown


class Location:
    """Spec: location_t.  ``val`` is an address or a DWARF register number."""
    __slots__ = ("location", "val")

    def __init__(self, location=Storage.UNKNOWN, val=None):
        self.location, self.val = location, val

    @classmethod
    def address(cls, addr):
        return cls(Storage.ADDRESS, addr)

    @classmethod
    def register(cls, regno):
        """The location "in register regno" (one shared object per register: immutable)."""
        loc = _REGISTER_LOCATIONS.get(regno)
        if loc is None:
            loc = _REGISTER_LOCATIONS[regno] = cls(Storage.REGISTER, regno)
        return loc

    @classmethod
    def from_tuple(cls, t):
        """From an UnwindResult's ('addr', a) / ('reg', r) pairs."""
        if t is None:
            return UNKNOWN_LOCATION
        kind, val = t
        return cls(Storage.ADDRESS if kind == "addr" else Storage.REGISTER, val)

    def __eq__(self, other):
        return isinstance(other, Location) and (self.location, self.val) == (other.location, other.val)

    def __hash__(self):
        return hash((self.location, self.val))

    def __repr__(self):
        if self.location is Storage.ADDRESS:
            return f"<Location address 0x{self.val:x}>"
        if self.location is Storage.REGISTER:
            return f"<Location register {self.val}>"
        return "<Location unknown>"


UNKNOWN_LOCATION = Location()
_REGISTER_LOCATIONS = {}
ADDRESS = Storage.ADDRESS


class _Lazy:
    """A Frame's location attribute, stored in ``slot``: the locations a step left for later
    (Frame.locations_later) are made before it is first read or written."""
    __slots__ = ("slot",)

    def __init__(self, slot):
        self.slot = slot

    def __get__(self, frame, owner=None):
        if frame is None:
            return self
        if frame._loc_src is not None:
            frame._locations()
        return getattr(frame, self.slot)

    def __set__(self, frame, value):
        if frame._loc_src is not None:
            frame._locations()
        setattr(frame, self.slot, value)


class FrameKind:
    NORMAL = "normal"
    SIGNAL = "signal"     # a signal trampoline frame (__restore_rt): GDB's <signal handler called>
    TAILCALL = "tailcall" # a function that jumped to its callee: known from DWARF call sites only


class Frame:
    """Spec: Frame.  Built by the Walker and by FrameSteppers."""

    __slots__ = ("ra", "sp", "fp", "_ra_loc", "_sp_loc", "_fp_loc", "regs", "_reg_locs", "_loc_src",
                 "walker", "thread", "stepper", "non_call", "is_top", "is_bottom", "kind", "cfa",
                 "trust", "callee_cfa", "callee_kind", "overruled", "lost", "more_regs", "rule", "_sym", "_lib")

    def __init__(self, ra, sp, fp, walker=None, regs=None, thread=None, reg_locations=None, copy=True):
        self.ra, self.sp, self.fp = ra, sp, fp
        self._ra_loc = self._sp_loc = self._fp_loc = UNKNOWN_LOCATION
        #: Every register value known in this frame, by DWARF number (``copy=False``: the
        #: dict given is the frame's own from now on).
        self.regs = (dict(regs) if copy else regs) if regs else {}
        self._reg_locs = {} if reg_locations is None else reg_locations
        self._loc_src = None
        self.walker = walker
        self.thread = thread
        self.stepper = None       # the FrameStepper that produced this frame (None for the top)
        self.non_call = False     # True: ra is not a return address (top frame, or interrupted by a signal)
        self.is_top = False
        self.is_bottom = False
        self.kind = FrameKind.NORMAL
        self.cfa = None           # canonical frame address once the frame has been stepped through
        self.trust = "context"    # how the frame was found: context, cfi, frame-pointer, ...
        #: Why the steppers asked before the one that found this frame failed ("stepper:
        #: why" each): where swk goes past broken CFI, -v and JSON say so.
        self.overruled = ()
        #: Registers the step that found this frame says are lost in it (CFI's
        #: DW_CFA_undefined): not the inner frame's value, unknown (GDB's <not saved>).
        self.lost = frozenset()
        #: What the step that found this frame learned about its callee, recorded on the
        #: callee by the walker once it accepts this frame (steppers never change a callee).
        self.callee_cfa = None
        self.callee_kind = None
        #: Where this frame's registers beyond ``regs`` can be read, ``more_regs(regno)`` ->
        #: int or None: the thread's own floating-point registers for the innermost frame,
        #: which a rule may take a caller's register from (s390x leaves park r11 in f0).
        self.more_regs = None
        #: The UnwindRule the step that found this frame applied to its callee (shared,
        #: never changed): which rule gave each register (unwind.provenance); None for the
        #: innermost frame and frames no rule made.
        self.rule = None
        self._sym = None
        self._lib = False

    # --- where values were found (spec: getRALocation, ...) ------------------------------------
    def locations_later(self, make, *args):
        """Have ``make(*args)`` give (reg_locations, ra, sp, fp locations) when first asked:
        a walk makes thousands of frames whose locations nobody reads."""
        self._loc_src = (make, args)

    def _locations(self):
        make, args = self._loc_src
        self._loc_src = None
        self._reg_locs, self._ra_loc, self._sp_loc, self._fp_loc = make(*args)

    #: Where each recovered register was saved (Location), for callers that write back;
    #: where ra, sp and fp were found (spec: getRALocation, getSPLocation, getFPLocation).
    reg_locations = _Lazy("_reg_locs")
    ra_location = _Lazy("_ra_loc")
    sp_location = _Lazy("_sp_loc")
    fp_location = _Lazy("_fp_loc")

    # --- spec: newFrame ----------------------------------------------------------------
    @classmethod
    def new_frame(cls, ra, sp, fp, walker=None):
        return cls(ra, sp, fp, walker)

    # --- spec getters/setters (Pythonic attributes above; methods kept for the name table) ----
    def get_ra(self):
        return self.ra

    def set_ra(self, val):
        self.ra = val
        self._sym = None
        self._lib = False

    def get_sp(self):
        return self.sp

    def set_sp(self, val):
        self.sp = val

    def get_fp(self):
        return self.fp

    def set_fp(self, val):
        self.fp = val

    def get_ra_location(self):
        return self.ra_location

    def set_ra_location(self, loc):
        self.ra_location = loc

    def get_sp_location(self):
        return self.sp_location

    def set_sp_location(self, loc):
        self.sp_location = loc

    def get_fp_location(self):
        return self.fp_location

    def set_fp_location(self, loc):
        self.fp_location = loc

    def get_stepper(self):
        return self.stepper

    def get_walker(self):
        return self.walker

    def get_thread(self):
        return self.thread

    def is_top_frame(self):
        return self.is_top

    def is_bottom_frame(self):
        return self.is_bottom

    # --- derived ---------------------------------------------------------------------------
    @property
    def pc(self):
        return self.ra

    @property
    def lookup_pc(self):
        """The address to look up unwind info and symbols with.

        A return address points after the call, maybe into the next function
        (noreturn calls at a function's end); pc-1 is inside the call.  The top
        frame and a frame a signal interrupted are at their real pc.
        """
        return self.ra if (self.non_call or self.is_top or self.ra == 0) else self.ra - 1

    def reg(self, regno, default=None):
        return self.regs.get(regno, default)

    # --- symbols (spec: getName, getObject, getLibOffset) -------------------------------------
    def _symbol(self):
        if self._sym is None:
            lookup = self.walker.symbol_lookup if self.walker is not None else None
            self._sym = lookup.lookup_frame(self) if lookup is not None else (None, None, None)
        return self._sym

    @property
    def name(self):
        """The function name, or None when unknown (spec: getName)."""
        return self._symbol()[0]

    @property
    def object(self):
        """The SymbolLookup's opaque object for this frame (spec: getObject)."""
        return self._symbol()[1]

    @property
    def symbol_offset(self):
        return self._symbol()[2]

    def get_name(self):
        return self.name

    def get_object(self):
        return self.object

    @property
    def library(self):
        if self._lib is False:
            ls = self.walker.process_state.library_state if self.walker is not None else None
            self._lib = ls.get_library_at_addr(self.lookup_pc) if ls is not None else None
        return self._lib

    def get_lib_offset(self):
        """(library path, offset of ra in it, library object) or None (spec: getLibOffset)."""
        lib = self.library
        if lib is None:
            return None
        return lib.path, self.ra - lib.base, lib

    # --- equality (spec: operator==) ----------------------------------------------------------
    def __eq__(self, other):
        if not isinstance(other, Frame):
            return NotImplemented
        return (self.ra, self.sp, self.fp, self.walker, self.thread) == \
               (other.ra, other.sp, other.fp, other.walker, other.thread)

    def __hash__(self):
        return hash((self.ra, self.sp, self.fp, self.thread))

    def __repr__(self):
        return f"<Frame ra=0x{self.ra:x} sp=0x{self.sp:x} fp=0x{self.fp:x} {self.name or '??'}>"
