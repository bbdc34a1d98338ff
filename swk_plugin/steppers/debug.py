"""DebugStepper: DWARF call-frame information (spec: DebugStepper).

CFI comes from the module's .eh_frame (found through .eh_frame_hdr) and
from .debug_frame, the module's own or its separate debug file's; the row at
the frame's pc is an UnwindRule (cached per pc in the module).  Every
register the CFI describes is recovered; callee-saved registers it does not
mention carry over from the callee.  A CIE with the S augmentation marks a
signal trampoline: that frame is a signal frame and its caller was
interrupted, so the caller is looked up at its pc, not pc-1.
"""
from ..dwarf.cfi import CfiError
from ..errors import MemoryReadError, RuleError
from ..frame import FrameKind
from ..stepper import FrameStepper, Gcf, Note, PRIORITY_DEBUG
from ..unwind.apply import caller_by_rule
from ..unwind.cfi import cfi_rule_at
from ..unwind.modules import module_at


class DebugStepper(FrameStepper):
    name = "DebugStepper"
    priority = PRIORITY_DEBUG
    trust = "cfi"

    def get_caller_frame(self, frame):
        ps = self.process_state
        pc = frame.lookup_pc
        # (rule, why not) per pc while the library list holds: a deep stack repeats a few pcs
        libs = ps.library_state
        if libs is not None:
            libs.ensure_current()       # a changed list empties its cache first
        memo = ps.library_cache.memo("cfi-step")
        hit = memo.get(pc)
        if hit is None:
            hit = memo.put(pc, self._rule_for(ps, pc))
        rule = hit[0]
        if rule is None:
            return Gcf.NOT_ME, hit[1]
        kind = FrameKind.SIGNAL if rule.signal_frame else None
        try:
            caller, cfa = caller_by_rule(frame, rule, ps)
        except MemoryReadError as exc:
            return Gcf.NOT_ME, Note(f"CFI rule read unreadable memory ({exc})", kind,
                                    gdb=f"Cannot access memory at address 0x{exc.addr:x}")
        except (KeyError, RuleError, CfiError) as exc:
            return Gcf.NOT_ME, Note(f"CFI needs a register this frame lacks ({exc})", kind)
        except Exception as exc:  # a malformed expression disables this step only
            return Gcf.NOT_ME, Note(f"CFI could not be evaluated ({exc})", kind)
        if caller is None:
            return Gcf.STACKBOTTOM, Note("bottom of the stack (CFI marks the return address undefined)",
                                        kind, cfa)
        return Gcf.SUCCESS, caller

    @staticmethod
    def _rule_for(ps, pc):
        lib, mod = module_at(ps, pc)
        if mod is None:
            return None, "no module with CFI at this address"
        rule = cfi_rule_at(mod, pc - lib.base)
        return (rule, None) if rule is not None else (None, "no CFI covers this address")
