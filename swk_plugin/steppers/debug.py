"""DebugStepper: DWARF call-frame information (spec: DebugStepper).

CFI comes from the module's .eh_frame (found through .eh_frame_hdr) and
from .debug_frame, the module's own or its separate debug file's.  Every
register the CFI describes is recovered; callee-saved registers it does not
mention carry over from the callee.  A CIE with the S augmentation marks a
signal trampoline: that frame is a signal frame and its caller was
interrupted, so the caller is looked up at its pc, not pc-1.
"""
from ..dwarf.cfi import CfiError, CfiTable, unwind_row
from ..errors import MemoryReadError
from ..frame import Frame, FrameKind, Location
from ..stepper import FrameStepper, Gcf, PRIORITY_DEBUG
from .context import module_at


def module_cfi(module):
    """The module's CFI tables, [eh_frame, debug_frame], built once per module."""
    tables = getattr(module, "_swk_cfi", None)
    if tables is not None:
        return tables
    tables = []
    eh = module.section(".eh_frame")
    if eh is not None and eh.size:
        hdr = module.section(".eh_frame_hdr")
        try:
            tables.append(CfiTable.from_eh_frame(eh.data, eh.addr, hdr.data if hdr else None,
                                                 hdr.addr if hdr else None, ptr_size=module.ptr_size))
        except CfiError:
            pass
    for mod in (module, _debug_file(module)):
        if mod is None:
            continue
        df = mod.section(".debug_frame")
        if df is not None and df.size:
            try:
                tables.append(CfiTable.from_debug_frame(df.data, 0, ptr_size=module.ptr_size))
            except CfiError:
                pass
            break
    module._swk_cfi = tables
    return tables


def _debug_file(module):
    try:
        from ..elf.debugfile import attach_debug_file
        return attach_debug_file(module)
    except Exception:
        return None


def find_row(module, addr):
    """The CFI row for unbiased ``addr``, from the first table that covers it."""
    for table in module_cfi(module):
        try:
            row = table.row_at(addr)
        except CfiError:
            continue
        if row is not None:
            return row
    return None


class DebugStepper(FrameStepper):
    name = "DebugStepper"
    priority = PRIORITY_DEBUG
    trust = "cfi"

    def get_caller_frame(self, frame):
        walker = self.walker
        ps = self.process_state
        arch = ps.arch
        pc = frame.lookup_pc
        lib, mod = module_at(walker, pc)
        if mod is None:
            return Gcf.NOT_ME, "no module with CFI at this address"
        row = find_row(mod, pc - lib.base)
        if row is None:
            return Gcf.NOT_ME, "no CFI covers this address"
        try:
            res = unwind_row(row, frame.regs, ps.read_memory, arch.ptr_size, arch.sp, arch.callee_saved)
        except MemoryReadError as exc:
            return Gcf.NOT_ME, f"CFI rule read unreadable memory ({exc})"
        except (KeyError, CfiError) as exc:
            return Gcf.NOT_ME, f"CFI needs a register this frame lacks ({exc})"
        except Exception as exc:  # a malformed expression disables this step only
            return Gcf.NOT_ME, f"CFI could not be evaluated ({exc})"
        frame.cfa = res.cfa
        if row.signal_frame:
            frame.kind = FrameKind.SIGNAL
        if res.ra_undefined or res.ra is None:
            return Gcf.STACKBOTTOM, "bottom of the stack (CFI marks the return address undefined)"
        sp = res.regs.get(arch.sp, res.cfa)
        caller = Frame(res.ra, sp, res.regs.get(arch.fp, 0), walker=walker, regs=res.regs)
        caller.regs[arch.sp] = sp
        caller.regs[arch.pc] = res.ra
        for reg, loc in res.locations.items():
            caller.reg_locations[reg] = Location.from_tuple(loc)
        caller.ra_location = caller.reg_locations.get(row.ra_reg, Location())
        caller.fp_location = caller.reg_locations.get(arch.fp, Location())
        caller.sp_location = caller.reg_locations.get(arch.sp, Location())
        if row.signal_frame:
            caller.non_call = True
        return Gcf.SUCCESS, caller
