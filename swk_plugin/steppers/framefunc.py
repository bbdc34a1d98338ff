"""FrameFuncStepper: the frame-pointer chain (spec: FrameFuncStepper).

Used only for functions that keep a standard frame, recognised by their
prologue (``[endbr64] push %rbp; mov %rsp,%rbp``), so it never follows an
%rbp that an optimised function uses as a general register.  The prologue
also tells where the callee-saved registers pushed right after it live, so
callers get their true values, and where a top frame stopped inside the
prologue or at its ``ret`` keeps its return address.
"""
from ..errors import MemoryReadError
from ..frame import Frame, Location
from ..stepper import FrameStepper, Gcf, PRIORITY_FRAMEFUNC
from .context import function_at, is_executable

ENDBR64 = b"\xf3\x0f\x1e\xfa"
PUSH_RBP = b"\x55"
MOV_RSP_RBP = (b"\x48\x89\xe5", b"\x48\x8b\xec")
# push %reg encodings -> DWARF number (x86-64).
_PUSH = {0x53: 3, 0x55: 6}
_PUSH_REX = {0x54: 12, 0x55: 13, 0x56: 14, 0x57: 15}
RET = (0xc3, 0xc2)
MAX_FRAME = 1 << 28  # a frame larger than 256 MiB is not a frame


class Prologue:
    """Where the standard frame is set up in one function."""
    __slots__ = ("start", "push_at", "mov_at", "body_at", "saved")

    def __init__(self, start, push_at, mov_at, body_at, saved):
        self.start = start          # function entry
        self.push_at = push_at      # address of push %rbp
        self.mov_at = mov_at        # address of mov %rsp,%rbp
        self.body_at = body_at      # first address with %rbp = frame base
        self.saved = saved          # [(dwarf regno, offset from %rbp)]


def parse_prologue(code, start):
    """A Prologue if ``code`` (bytes at ``start``) opens a standard frame, else None."""
    i = 0
    if code.startswith(ENDBR64):
        i = 4
    if code[i:i + 1] != PUSH_RBP:
        return None
    push_at = start + i
    i += 1
    if code[i:i + 3] not in MOV_RSP_RBP:
        return None
    mov_at = start + i
    i += 3
    body_at = start + i
    saved = []
    off = 0
    while i < len(code):
        b = code[i]
        if b in _PUSH and b != 0x55:
            off -= 8
            saved.append((_PUSH[b], off))
            i += 1
        elif b == 0x41 and i + 1 < len(code) and code[i + 1] in _PUSH_REX:
            off -= 8
            saved.append((_PUSH_REX[code[i + 1]], off))
            i += 2
        else:
            break
    return Prologue(start, push_at, mov_at, body_at, saved)


def same_region(ps, a, b):
    """Whether a and b lie in one mapping (true when the back-end knows no mappings)."""
    r = ps.region_at(a)
    return r is None or r.start <= b < r.end


class FrameFuncStepper(FrameStepper):
    name = "FrameFuncStepper"
    priority = PRIORITY_FRAMEFUNC
    trust = "frame-pointer"

    def __init__(self, walker=None):
        super().__init__(walker)
        self._prologues = {}
        self._by_addr = {}

    def new_library_notification(self, library, change):
        self._prologues.clear()
        self._by_addr.clear()

    def prologue_for(self, addr):
        """The Prologue of the function holding addr (or None), cached by address."""
        pro = self._by_addr.get(addr, self._by_addr)
        if pro is self._by_addr:
            pro = self._by_addr[addr] = self._prologue_for(addr)
        return pro

    def _prologue_for(self, addr):
        bounds = function_at(self.walker, addr)
        if bounds is None:
            return None
        start = bounds[0]
        if start in self._prologues:
            return self._prologues[start]
        try:
            code = self.process_state.read_memory(start, 32)
        except MemoryReadError:
            code = b""
        pro = parse_prologue(code, start) if code else None
        self._prologues[start] = pro
        return pro

    def get_caller_frame(self, frame):
        ps = self.process_state
        arch = ps.arch
        pc = frame.lookup_pc
        pro = self.prologue_for(pc)
        if pro is None:
            return Gcf.NOT_ME, "no standard frame-pointer prologue"
        exact = frame.is_top or frame.non_call
        sp, fp = frame.sp, frame.fp
        ptr = arch.ptr_size
        saved_fp_at = None
        if exact and frame.ra <= pro.push_at:
            ra_at, caller_sp, caller_fp = sp, sp + ptr, fp          # nothing pushed yet
            saved = []
        elif exact and frame.ra <= pro.mov_at:
            ra_at, caller_sp = sp + ptr, sp + 2 * ptr                # %rbp pushed, not yet set
            saved_fp_at = sp
            saved = []
        elif exact and self._at_ret(frame.ra):
            ra_at, caller_sp, caller_fp = sp, sp + ptr, fp          # epilogue done
            saved = []
        else:
            if fp % ptr or fp < sp or fp - sp > MAX_FRAME or not same_region(ps, sp, fp):
                return Gcf.NOT_ME, f"frame pointer 0x{fp:x} is not a frame in this stack"
            ra_at, caller_sp, saved_fp_at = fp + ptr, fp + 2 * ptr, fp
            saved = pro.saved
        try:
            ra = ps.read_pointer(ra_at)
            if saved_fp_at is not None:
                caller_fp = ps.read_pointer(saved_fp_at)
            values = [(reg, fp + off, ps.read_pointer(fp + off)) for reg, off in saved]
        except MemoryReadError as exc:
            return Gcf.NOT_ME, str(exc)
        if ra != 0 and not is_executable(self.walker, ra):
            return Gcf.NOT_ME, f"return address 0x{ra:x} is not in executable memory"
        regs = {r: v for r, v in frame.regs.items() if r in arch.callee_saved}
        caller = Frame(ra, caller_sp, caller_fp, walker=self.walker, regs=regs)
        for reg, addr, val in values:
            caller.regs[reg] = val
            caller.reg_locations[reg] = Location.address(addr)
        caller.regs[arch.sp] = caller_sp
        caller.regs[arch.fp] = caller_fp
        caller.regs[arch.pc] = ra
        caller.ra_location = Location.address(ra_at)
        if saved_fp_at is not None:
            caller.fp_location = caller.reg_locations[arch.fp] = Location.address(saved_fp_at)
        else:
            caller.fp_location = Location.register(arch.fp)
        caller.cfa = caller_sp
        frame.cfa = caller_sp
        return Gcf.SUCCESS, caller

    def _at_ret(self, pc):
        try:
            return self.process_state.read_memory(pc, 1)[0] in RET
        except MemoryReadError:
            return False
