"""FrameStepper: how to walk through one kind of stack frame (spec: FrameStepper)."""
import enum


class Gcf(enum.Enum):
    """Result of get_caller_frame (spec: gcframe_ret_t)."""
    SUCCESS = "success"          # gcf_success: out is the caller
    STACKBOTTOM = "stackbottom"  # gcf_stackbottom: in is the bottom of the stack
    NOT_ME = "not_me"            # gcf_not_me: try the next stepper
    ERROR = "error"              # gcf_error: abort the walk


class Note(str):
    """A stepper's reason for not_me or stackbottom that also says what it found about the
    frame anyway, for the walker to record: a signal trampoline whose saved context is
    unreadable is still a signal frame (``kind``); the outermost frame still has a CFA."""

    def __new__(cls, text, kind=None, cfa=None, gdb=None):
        self = super().__new__(cls, text)
        self.kind, self.cfa = kind, cfa
        #: how GDB words the same failure ("Cannot access memory at address 0x..."), if it has one
        self.gdb = gdb
        return self


class FrameStepper:
    """Base class.  Subclasses set ``name`` and ``priority`` and implement get_caller_frame.

    ``priority``: lower numbers are tried first; swk's own steppers use
    0x1000-0x2000 as the spec's defaults do, in the spec's default order.
    """
    name = "FrameStepper"
    priority = 0x1800
    #: How frames made by this stepper were found ("trust" in swk-bt -v and JSON).
    trust = "unknown"

    def __init__(self, walker=None):
        self.walker = walker
        self.group = None

    def get_caller_frame(self, frame):
        """Return (Gcf, caller Frame) on success, else (Gcf, reason).  ``frame`` is the
        callee: a stepper never changes it (what it learns about it travels on the caller,
        ``callee_cfa``/``callee_kind``, or on a Note)."""
        raise NotImplementedError

    def declines_at(self, pc, exact):
        """Why this stepper declines every frame at ``pc`` whatever its registers (``exact``:
        the frame is looked up at pc itself, not pc-1), or None when it may answer there.
        The walker asks once per (pc, exact) and stop and then passes such steppers by:
        a deep stack meets the same pcs thousands of times.  By default: None."""
        return None

    def defers_at(self, pc, exact):
        """Whether this stepper is only a fallback at ``pc``: it is then tried right after
        the first stepper that neither declines nor defers there, whatever the priorities
        (swk's extension: the frame-pointer chain defers to the module's CFI, which is the
        truth about every register where it covers the pc).  Asked once per (pc, exact) and
        stop, like declines_at.  By default: False."""
        return False

    # --- spec names ------------------------------------------------------------------
    def get_priority(self):
        return self.priority

    def get_name(self):
        return self.name

    def get_walker(self):
        return self.walker

    def get_process_state(self):
        return self.walker.process_state if self.walker is not None else None

    @property
    def process_state(self):
        walker = self.walker
        return walker.process_state if walker is not None else None

    def register_stepper_group(self, group):
        """Called when added to a StepperGroup.  By default: the whole address space."""
        self.group = group
        if self.walker is None:
            self.walker = group.walker

    def new_library_notification(self, library, change):
        """A library was loaded or unloaded (change: procstate.LIBRARY_LOAD/UNLOAD)."""

    def __repr__(self):
        return f"<{self.name} priority=0x{self.priority:x}>"


# Default priorities, in the order of the spec's Linux/x86-64 defaults table.
PRIORITY_FRAMEFUNC = 0x1010
PRIORITY_SIGHANDLER = 0x1020
PRIORITY_DEBUG = 0x1030
PRIORITY_ANALYSIS = 0x1040
PRIORITY_WANDERER = 0x1050
PRIORITY_BOTTOM = 0x1060
