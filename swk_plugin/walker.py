"""Walker: walks the call stacks of one process (spec: Walker).

The walk loop asks the StepperGroup for steppers in priority order, checks
every caller frame a stepper proposes, and falls back to the next stepper
when a result is implausible — Dyninst aborts the walk there instead.  Every
walk ends with a stated reason and within a frame cap.
"""
from . import __version__
from itertools import islice

from .cache import collector_paused
from .errors import MemoryReadError, SwkError
from .frame import Frame, FrameKind, Location
from .locals import (FrameVariables, function_at as dwarf_function_at, frame_variables as dwarf_frame_variables,
                     read_variable)
from .locals.frames import frame_scopes, level_of
from .stepper import Gcf, Note
from .steppergroup import StepperGroup
from .steppers import default_steppers as make_default_steppers
from .symlookup import ElfSymbolLookup
from .unwind.apply import thread_register_source
from .unwind.modules import is_executable

#: Frames a walk may have (LLDB's own cap is 300,000; an 8 MiB stack holds at most 524,288
#: 16-byte frames).
DEFAULT_FRAME_CAP = 1_000_000


class Glvv:
    """getLocalVariableValue's results (spec: glvv_Success ... glvv_EUnknown)."""
    SUCCESS = 0
    EPARAM = -1
    EOUTOFSCOPE = -2
    EBUFFERSIZE = -3
    EUNKNOWN = -4


class StackWalk(list):
    """The frames of one walk, top first (spec: std::vector<Frame>), plus why it ended."""

    def __init__(self, frames=(), thread=None, stop_reason="", complete=False):
        super().__init__(frames)
        self.thread = thread
        self.stop_reason = stop_reason
        #: True when the walk reached the bottom of the stack.
        self.complete = complete
        #: True when the walk stopped at a frame count the caller asked for.
        self.limited = False
        #: GDB's words for why the walk stopped, where GDB stops for the same cause (its
        #: "Backtrace stopped: Cannot access memory at address 0x..."); None otherwise.
        self.gdb_stop_reason = None
        #: How many of the inlined calls at the top frame's pc the debugger shows (GDB hides
        #: those a breakpoint stopped at the first instruction of); None: all of them.
        self.top_inlines = None
        #: What display and locals work out about this walk (shown frames, entry values,
        #: texts): it lives as long as the walk, which the process state keeps one stop.
        self.derived = {}


class WalkRest:
    """The frames of a walk after its first ones (Walker.walk_stack_head), found as they are
    iterated; once they are all found, why the walk ended (as a StackWalk says it)."""

    def __init__(self, thread):
        self.thread = thread
        self.stop_reason, self.complete, self.limited, self.gdb_stop_reason = "", False, False, None
        self._frames = iter(())

    @classmethod
    def after(cls, walk):
        """The (no) frames after a whole walk, which ended as ``walk`` says."""
        rest = cls(walk.thread)
        rest.stop_reason, rest.complete, rest.limited = walk.stop_reason, walk.complete, walk.limited
        rest.gdb_stop_reason = walk.gdb_stop_reason
        return rest

    def follow(self, frames):
        self._frames = frames
        return self

    def __iter__(self):
        return self._frames

    def ended(self, walk):
        """``walk`` (a StackWalk) given why this walk ended."""
        walk.stop_reason, walk.complete, walk.limited = self.stop_reason, self.complete, self.limited
        walk.gdb_stop_reason = self.gdb_stop_reason
        return walk


def _seen(frame):
    """A frame's (pc, sp) as one int: a deep walk keeps one per frame."""
    return frame.sp << 64 | frame.ra


class StepResult:
    """What happened when stepping through one frame (``gdb_reason``: GDB's words for why
    there is no caller, where GDB stops for the same cause)."""
    __slots__ = ("status", "caller", "reason", "gdb_reason")

    def __init__(self, status, caller=None, reason="", gdb_reason=None):
        self.status, self.caller, self.reason, self.gdb_reason = status, caller, reason, gdb_reason


class Walker:
    SUCCESS, EPARAM, EOUTOFSCOPE, EBUFFERSIZE, EUNKNOWN = (Glvv.SUCCESS, Glvv.EPARAM, Glvv.EOUTOFSCOPE,
                                                           Glvv.EBUFFERSIZE, Glvv.EUNKNOWN)

    def __init__(self, process_state, stepper_group=None, symbol_lookup=None,
                 frame_cap=DEFAULT_FRAME_CAP, default_steppers=True):
        self.process_state = process_state
        process_state.walker = self
        if stepper_group is None:
            stepper_group = StepperGroup(self)
            if default_steppers:
                for stepper in make_default_steppers(self):
                    stepper_group.add_stepper(stepper)
        stepper_group.walker = self
        for stepper in stepper_group.steppers:  # a group built before its walker
            if stepper.walker is None:
                stepper.walker = self
        self.stepper_group = stepper_group
        if symbol_lookup is None:
            symbol_lookup = ElfSymbolLookup(self)
        symbol_lookup.walker = self
        self.symbol_lookup = symbol_lookup
        self.frame_cap = frame_cap
        #: (stepper name, exception) for every unexpected error a stepper raised (swk debug shows them).
        self.stepper_errors = []
        #: A debugger's own value formatting, asked for the values of structs and classes
        #: (display.PrintRequest -> text, or None to keep swk's), so GDB's pretty-printers
        #: and LLDB's data formatters apply; None: swk prints every value itself.
        self.value_printer = None
        libs = process_state.library_state
        if libs is not None:
            libs.add_listener(stepper_group.new_library_notification)

    # --- spec: newWalker ------------------------------------------------------------------
    @classmethod
    def new_walker(cls, process_state=None, stepper_group=None, symbol_lookup=None, *, pid=None, **kw):
        """A Walker over ``process_state``; or, with ``pid`` (spec: newWalker(pid), ProcDebug),
        over that live process, attached with ptrace and stopped until
        ``walker.process_state.detach()``; or, with neither (spec: newWalker(), ProcSelf),
        over the calling thread, captured now (swk_plugin.walk_self walks it at once)."""
        if process_state is None:
            # the spec's signature names a back-end: it is imported only when asked for
            from .backends import attach
            process_state = attach.process_state(pid)
        return cls(process_state, stepper_group, symbol_lookup, **kw)

    @staticmethod
    def version():
        """(major, minor, maintenance) of swk (spec: version)."""
        return tuple(int(x) for x in __version__.split(".")[:3])

    # --- spec getters ---------------------------------------------------------------------
    def get_process_state(self):
        return self.process_state

    def get_stepper_group(self):
        return self.stepper_group

    def get_symbol_lookup(self):
        return self.symbol_lookup

    def add_stepper(self, stepper, start=None, end=None):
        return self.stepper_group.add_stepper(stepper, start, end)

    def get_available_threads(self):
        return list(self.process_state.get_thread_ids())

    # --- frames ---------------------------------------------------------------------------------
    def get_initial_frame(self, thread=None):
        """The top frame of ``thread`` (default: the process state's default thread)."""
        ps = self.process_state
        if thread is None:
            thread = ps.get_default_thread()
        regs = ps.get_registers(thread)
        arch = ps.arch
        try:
            pc, sp = regs[arch.pc], regs[arch.sp]
        except KeyError:
            raise SwkError(f"thread {thread}: the pc and stack pointer are unavailable") from None
        frame = Frame(pc, sp, regs.get(arch.fp, 0), walker=self, regs=regs, thread=thread)
        frame.is_top = True
        frame.more_regs = thread_register_source(ps, thread)
        frame.trust = "context"
        frame.ra_location = Location.register(arch.pc)
        frame.sp_location = Location.register(arch.sp)
        frame.fp_location = Location.register(arch.fp)
        return frame

    def step(self, frame, seen=None):
        """Try steppers in order for ``frame``; return a StepResult.

        ``seen``: the (pc, sp) pairs of the walk so far (as _seen makes them); a caller repeating one is
        implausible like any other and the next stepper is asked.  Once a caller is
        accepted, what its step found about ``frame`` (its CFA, a signal trampoline)
        is recorded on ``frame``: steppers never change it themselves."""
        steppers = _steppers_for(self.stepper_group, frame.lookup_pc)
        if type(steppers) is list:
            steppers, notes = self._past_decliners(steppers, frame)
        else:
            notes = []
        passed = len(notes)        # notes past this are of steppers asked for this frame that failed
        gdb_reason = None
        for stepper in steppers:
            try:
                out = stepper.get_caller_frame(frame)
            except MemoryReadError as exc:
                notes.append(f"{stepper.name}: {exc}")
                continue
            except SwkError as exc:
                notes.append(f"{stepper.name}: {exc}")
                continue
            except Exception as exc:  # a broken stepper costs only its own answer
                self.stepper_errors.append((stepper.name, exc))
                notes.append(f"{stepper.name}: internal error ({exc.__class__.__name__}: {exc})")
                continue
            status, caller = out if isinstance(out, tuple) else (out, None)
            if status is Gcf.SUCCESS:
                problem = self.check_caller(frame, caller)
                if not problem and seen is not None and _seen(caller) in seen:
                    problem = f"pc 0x{caller.ra:x} sp 0x{caller.sp:x} repeats a frame of this walk"
                if problem:
                    notes.append(f"{stepper.name}: {problem}")
                    continue
                if caller.callee_cfa is not None:
                    frame.cfa = caller.callee_cfa
                if caller.callee_kind is not None:
                    self.note_callee(frame, caller.callee_kind, None)
                caller.stepper = stepper
                if len(notes) > passed:
                    caller.overruled = tuple(notes[passed:])
                caller.walker = self
                caller.thread = frame.thread
                if caller.trust in (None, "context"):
                    caller.trust = stepper.trust
                return StepResult(Gcf.SUCCESS, caller)
            if isinstance(caller, Note):
                self.note_callee(frame, caller.kind, caller.cfa)
                if caller.gdb and gdb_reason is None:
                    gdb_reason = caller.gdb
            if status is Gcf.STACKBOTTOM:
                return StepResult(Gcf.STACKBOTTOM, reason=caller if isinstance(caller, str) else
                                  f"{stepper.name}: bottom of the stack")
            if status is Gcf.ERROR:
                return StepResult(Gcf.ERROR, reason=f"{stepper.name}: {caller or 'error'}")
            if isinstance(caller, str) and caller:
                notes.append(f"{stepper.name}: {caller}")
        why = "; ".join(notes) if notes else "no stepper covers this address"
        return StepResult(Gcf.NOT_ME, reason=f"no stepper could find the caller of 0x{frame.ra:x} ({why})",
                          gdb_reason=gdb_reason)

    def _past_decliners(self, steppers, frame):
        """(the steppers from the first that may answer at the frame's pc, the others'
        reasons): those that decline every frame at a pc (declines_at) are asked once
        per pc and stop, not once per frame; those that are only a fallback there
        (defers_at) come right after the first stepper that neither declines nor defers."""
        exact = bool(frame.is_top or frame.non_call)
        memo = self.process_state.cache.memo("decliners")
        key = (frame.ra, exact)
        known = memo.get(key)
        if known is None or known[0] is not steppers:
            notes, held, order = [], [], None
            for i, stepper in enumerate(steppers):
                try:
                    why = stepper.declines_at(frame.ra, exact)
                    defers = not why and stepper.defers_at(frame.ra, exact)
                except Exception:     # a stepper that cannot say is asked for each frame
                    why, defers = None, False
                if why:
                    notes.append(f"{stepper.name}: {why}")
                elif defers:
                    held.append(stepper)
                else:
                    order = [stepper, *held, *steppers[i + 1:]]
                    break
            if order is None:
                order = held
            known = memo.put(key, (steppers, order, tuple(notes)))
        return known[1], list(known[2])

    @staticmethod
    def note_callee(frame, kind, cfa):
        """What a step found about ``frame`` itself: its CFA, and whether it is a signal
        trampoline (then it is named at its pc, not pc-1)."""
        if cfa is not None:
            frame.cfa = cfa
        if kind is not None and kind != frame.kind:
            frame.kind = kind
            frame.set_ra(frame.ra)

    def check_caller(self, callee, caller):
        """Why ``caller`` cannot be the caller of ``callee``, or '' if it is plausible."""
        arch = self.process_state.arch
        if caller is None:
            return "no caller frame"
        callee_kind = caller.callee_kind or callee.kind
        if callee_kind != FrameKind.SIGNAL and caller.sp <= callee.sp and not (
                caller.sp == callee.sp and self._may_share_sp(callee, arch)) and not _splits_stack(callee):
            return f"caller's stack pointer 0x{caller.sp:x} is not above 0x{callee.sp:x}"
        if caller.ra == 0:
            return ""  # a zero return address ends the walk; the loop handles it
        if not arch.is_canonical(caller.ra):
            return f"return address 0x{caller.ra:x} is not a user-space address"
        if not is_executable(self.process_state, caller.ra):
            return f"return address 0x{caller.ra:x} is not in executable memory"
        return ""

    @staticmethod
    def _may_share_sp(callee, arch):
        """Whether a caller may have the callee's own stack pointer: where a call leaves the
        return address in a register (AArch64), a frame stopped before it moved sp — the top
        frame, or one a signal interrupted, in a leaf or before its prologue — has its
        caller's sp."""
        return not arch.return_address_pushed and (callee.is_top or callee.non_call)

    def walk_single_frame(self, frame):
        """The caller of ``frame`` (spec: walkSingleFrame); raises SwkError when there is none."""
        res = self.step(frame)
        if res.status is not Gcf.SUCCESS:
            raise SwkError(res.reason or "no caller")
        return res.caller

    def walk_stack(self, thread=None, max_frames=None):
        """Walk ``thread``'s stack from its top frame (spec: walkStack).

        A walk is kept until the target changes (the process state's generation:
        every stop, resume or write) or libraries change, so asking twice at
        one stop walks once."""
        walk, rest = self.walk_stack_head(thread, max_frames, None)
        return walk

    def walk_stack_head(self, thread=None, max_frames=None, head=None):
        """(walk, rest): the whole walk (as walk_stack's, and kept as it is) and None when it
        has at most ``head`` frames (None: any number); else the first ``head`` + 1 frames and a
        WalkRest that finds the others only as they are asked for, so that a deep walk is
        printed as it is found, in memory flat in its depth (stream.py)."""
        ps = self.process_state
        if thread is None:
            thread = ps.get_default_thread()
        libs = ps.library_state
        walks = ps.cache.memo("walks", 64)
        key = (id(self), thread, max_frames, self.frame_cap, libs.generation if libs else None)
        walk = walks.get(key)
        if walk is not None:
            return walk, None
        frame = self.get_initial_frame(thread)
        rest = WalkRest(thread)
        found = self.frames_from(frame, max_frames, rest)
        with collector_paused():
            frames = list(found) if head is None else list(islice(found, head + 1))
        if head is not None and len(frames) > head:
            return StackWalk(frames, thread=thread), rest.follow(found)
        return walks.put(key, rest.ended(StackWalk(frames, thread=thread))), None

    def walk_stack_from_frame(self, frame, max_frames=None):
        """Walk from ``frame`` to the bottom of the stack (spec: walkStackFromFrame)."""
        walk = StackWalk(thread=frame.thread)
        walk.extend(self.frames_from(frame, max_frames, walk))
        return walk

    def frames_from(self, frame, max_frames=None, outcome=None):
        """``frame`` and its callers, outward, each as it is found: the walk loop.  When it
        ends, ``outcome`` (a StackWalk, a WalkRest) is given why (stop_reason, complete,
        limited, gdb_stop_reason).  A frame's own record may still change until its caller
        is found (the caller's step states its CFA, whether it is a signal trampoline)."""
        cap = self.frame_cap if max_frames is None else min(max_frames, self.frame_cap)
        seen = {_seen(frame)}
        n = 1
        yield frame
        while True:
            if n >= cap:
                outcome.limited = cap != self.frame_cap
                outcome.stop_reason = (f"stopped after {cap} frames as asked" if outcome.limited
                                       else f"frame cap of {cap} reached")
                self.step(frame)  # the step records what the last frame is (a signal trampoline?)
                return
            res = self.step(frame, seen)
            if res.status is Gcf.STACKBOTTOM:
                frame.is_bottom = True
                outcome.stop_reason = res.reason or "bottom of the stack"
                outcome.complete = True
                return
            if res.status is not Gcf.SUCCESS:
                outcome.stop_reason = res.reason or "the walk could not go on"
                outcome.gdb_stop_reason = res.gdb_reason
                return
            caller = res.caller
            if caller.ra == 0:
                frame.is_bottom = True
                outcome.stop_reason = "bottom of the stack (the return address is zero)"
                outcome.complete = True
                return
            seen.add(_seen(caller))
            n += 1
            yield caller
            frame = caller

    # --- local variables (spec: "Accessing Local Variables") ---------------------------------
    def get_function_for_frame(self, frame):
        """The DWARF function holding a frame's pc (spec: getFunctionForFrame), or None."""
        lib = frame.library
        if lib is None or lib.module is None:
            return None
        try:
            return dwarf_function_at(lib.module, frame.lookup_pc - lib.base)
        except Exception:
            return None

    def frame_scopes(self, walk, index):
        """The DWARF scopes at walk[index]'s pc: inlined calls innermost first, then the function."""
        return frame_scopes(walk[index])

    def frame_variables(self, walk, index, scope=None):
        """(arguments, locals) of walk[index] in the function (or the given inline scope)
        — the Variables GDB's `info args` / `info locals` list, in its order."""
        frame = walk[index]
        lib = frame.library
        if scope is None:
            scope = self.get_function_for_frame(frame)
        if scope is None or lib is None:
            return [], []
        return dwarf_frame_variables(scope, frame.lookup_pc - lib.base)

    def get_local_variable_value(self, variable, walk, frame_index, buffer_size=None):
        """(code, bytes) for a variable in walk[frame_index] (spec: getLocalVariableValue).

        Codes: Glvv.SUCCESS; EPARAM when frame_index is outside the walk or the variable is
        not of that frame's function; EOUTOFSCOPE when it is, but not live at the pc;
        EBUFFERSIZE when ``buffer_size`` is smaller than the value; EUNKNOWN when its value
        cannot be known (optimized out, or a register the walk could not recover)."""
        if not isinstance(frame_index, int) or not 0 <= frame_index < len(walk):
            return Glvv.EPARAM, None
        frame = walk[frame_index]
        lib = frame.library
        fn = self.get_function_for_frame(frame)
        scope = getattr(variable, "scope", None)
        owner = getattr(scope, "function", None) or scope
        if fn is None or owner is None or getattr(owner, "die", None) != fn.die:
            return Glvv.EPARAM, None
        addr = frame.lookup_pc - lib.base
        in_scope = getattr(variable, "in_scope", None)
        if in_scope is not None and not in_scope(addr):
            return Glvv.EOUTOFSCOPE, None
        try:
            vv = read_variable(variable, FrameVariables.of_level(walk, level_of(walk, frame_index)))
        except Exception:
            return Glvv.EUNKNOWN, None
        if vv.data is None or vv.optimized_out or vv.unavailable or vv.error or getattr(vv, "opt_mask", None):
            return Glvv.EUNKNOWN, None
        if buffer_size is not None and buffer_size < len(vv.data):
            return Glvv.EBUFFERSIZE, None
        return Glvv.SUCCESS, bytes(vv.data)


#: Functions that move a stack to another block of memory: their caller's stack may be
#: anywhere (gcc -fsplit-stack's __morestack, which GDB exempts from its inner-frame check).
STACK_SWITCHERS = frozenset({"__morestack"})


def _splits_stack(frame):
    return frame.name in STACK_SWITCHERS


def _steppers_for(group, addr):
    """The steppers to try at ``addr``, in order: those find_stepper_for_addr hands out one
    after another (spec: findStepperForAddr with last_tried), or, when the group does not
    override it, its candidates list straight away (one call per frame, not one per stepper)."""
    if type(group).find_stepper_for_addr is StepperGroup.find_stepper_for_addr:
        return group.candidates(addr)
    return _one_by_one(group, addr)


def _one_by_one(group, addr):
    stepper = group.find_stepper_for_addr(addr)
    while stepper is not None:
        yield stepper
        stepper = group.find_stepper_for_addr(addr, last_tried=stepper)
