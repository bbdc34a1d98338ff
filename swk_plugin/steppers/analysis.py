"""AnalysisStepper: stack-height analysis for code without CFI (spec: AnalysisStepper).

Tried after the CFI stepper: for code built without unwind tables, stripped
or not, and for JIT code in anonymous memory.  The analysis (see
swk_plugin.analysis) gives the UnwindRule at the frame's pc: the CFA, the
return address just below it, and the callee-saved registers the function
saved, so frames further up get their true values too.  Where a call leaves the
return address in a register (AArch64's x30), a leaf's rule leaves it there.
"""
from ..analysis import analyzer_for
from ..errors import RuleError
from ..stepper import FrameStepper, Gcf, PRIORITY_ANALYSIS
from ..unwind.apply import callee_registers, caller_by_rule
from ..unwind.modules import is_executable


class AnalysisStepper(FrameStepper):
    name = "AnalysisStepper"
    priority = PRIORITY_ANALYSIS
    trust = "analysis"

    def new_library_notification(self, library, change):
        if self.walker is not None:
            analyzer_for(self.process_state).clear()

    def get_caller_frame(self, frame):
        ps = self.process_state
        arch = ps.arch
        exact = frame.is_top or frame.non_call
        height, why = analyzer_for(ps).lookup(frame.lookup_pc, exact)
        if height is None:
            return Gcf.NOT_ME, why
        rule = height.rule
        ptr = arch.ptr_size
        # A call that pushes its return address leaves the CFA at least a pointer above sp;
        # one that leaves it in a register (AArch64) may leave the CFA at sp itself.
        lowest = frame.sp + (ptr if arch.return_address_pushed else 0)
        ra_rule = rule.regs.get(rule.ra_reg)
        if rule.cfa.expr is None:
            regs = callee_registers(frame, arch)
            base = regs.get(rule.cfa.reg)
            cfa = None if base is None else base + rule.cfa.offset
            if cfa is None or cfa % ptr or cfa < lowest:
                return Gcf.NOT_ME, f"analysis gives an impossible CFA ({height!r})"
            if ra_rule is not None:
                ra_at = cfa + ra_rule.arg
                ra = ps.read_pointer(ra_at)             # MemoryReadError: the walker's not_me
                if rule.ra_signed:
                    ra = ps.strip_return_address(ra)
                if ra != 0 and not is_executable(ps, ra):
                    return Gcf.NOT_ME, f"return address 0x{ra:x} at 0x{ra_at:x} is not in executable memory"
        try:
            caller, cfa = caller_by_rule(frame, rule, ps)
        except RuleError as exc:
            return Gcf.NOT_ME, str(exc)
        if caller is None:
            return Gcf.NOT_ME, f"analysis finds no return address ({height!r})"
        if rule.cfa.expr is not None:
            # a CFA the frame keeps in memory (i386's realigned main): checked once computed
            if cfa % ptr or cfa < lowest:
                return Gcf.NOT_ME, f"analysis gives an impossible CFA 0x{cfa:x} ({height!r})"
            if caller.ra != 0 and not is_executable(ps, caller.ra):
                return Gcf.NOT_ME, f"return address 0x{caller.ra:x} is not in executable memory"
        elif ra_rule is None and caller.ra != 0 and not is_executable(ps, caller.ra):
            return Gcf.NOT_ME, f"return address 0x{caller.ra:x} in its register is not in executable memory"
        return Gcf.SUCCESS, caller

