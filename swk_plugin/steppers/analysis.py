"""AnalysisStepper: stack-height analysis for code without CFI (spec: AnalysisStepper).

Tried after the CFI stepper: for code built without unwind tables, stripped
or not, and for JIT code in anonymous memory.  The rule at the frame's pc
(see swk_plugin.analysis) gives the CFA; the return address is just below
it and the callee-saved registers the function saved are read back from
their slots, so frames further up get their true values too.
"""
from ..analysis import analyzer_for
from ..frame import Frame, Location
from ..stepper import FrameStepper, Gcf, PRIORITY_ANALYSIS
from .context import is_executable


class AnalysisStepper(FrameStepper):
    name = "AnalysisStepper"
    priority = PRIORITY_ANALYSIS
    trust = "analysis"

    def new_library_notification(self, library, change):
        if self.walker is not None:
            analyzer_for(self.walker).clear()

    def get_caller_frame(self, frame):
        walker = self.walker
        ps = self.process_state
        arch = ps.arch
        exact = frame.is_top or frame.non_call
        rule, why = analyzer_for(walker).lookup(frame.lookup_pc, exact)
        if rule is None:
            return Gcf.NOT_ME, why
        regs = dict(frame.regs)
        regs[arch.sp] = frame.sp
        regs.setdefault(arch.fp, frame.fp)
        cfa = rule.cfa(regs)
        ptr = arch.ptr_size
        if cfa is None or cfa % ptr or cfa < frame.sp + ptr:
            return Gcf.NOT_ME, f"analysis gives an impossible CFA ({rule!r})"
        ra_at = cfa + rule.ra_offset
        ra = ps.read_pointer(ra_at)             # MemoryReadError: the walker's not_me
        if ra != 0 and not is_executable(walker, ra):
            return Gcf.NOT_ME, f"return address 0x{ra:x} at 0x{ra_at:x} is not in executable memory"
        caller = Frame(ra, cfa, 0, walker=walker,
                       regs={r: v for r, v in frame.regs.items() if r in arch.callee_saved})
        for r in caller.regs:
            caller.reg_locations[r] = frame.reg_locations.get(r, Location.register(r))
        for r, off in rule.saved.items():
            caller.regs[r] = ps.read_pointer(cfa + off)
            caller.reg_locations[r] = Location.address(cfa + off)
        caller.fp = caller.regs.get(arch.fp, frame.fp)
        caller.regs[arch.fp] = caller.fp
        caller.regs[arch.sp] = cfa
        caller.regs[arch.pc] = ra
        caller.ra_location = Location.address(ra_at)
        caller.fp_location = caller.reg_locations.get(arch.fp, Location.register(arch.fp))
        caller.cfa = cfa
        frame.cfa = cfa
        return Gcf.SUCCESS, caller
