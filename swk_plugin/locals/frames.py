"""Locals at the level of a walk's frames: the scopes at a frame's pc, the entry values of
its parameters (from its caller's call site), and per-address variable plans.

Frames are used through their attributes only (library, lookup_pc, regs, cfa,
kind): this sits below the walker, which offers these through its spec API.
What is worked out for one walk is kept in the walk's ``derived`` store
(lives one stop, with the walk); what depends only on DWARF (plans.py), in the
module's cache.
"""
from ..frame import FrameKind
from .entry import call_site_entry_regs
from .scopes import function_at, scopes_at


def frame_scopes(frame):
    """The DWARF scopes at a physical frame's pc, innermost first (inline calls,
    then the function), or [] without DWARF."""
    lib = frame.library
    if lib is None or lib.module is None or frame.kind == FrameKind.SIGNAL:
        return []
    try:
        return scopes_at(lib.module, frame.lookup_pc - lib.base)
    except Exception:
        return []


class LazyEntryRegs:
    """The entry values of a frame's parameters, worked out only if a location asks
    (DW_OP_entry_value): most frames never do."""
    __slots__ = ("walk", "index", "regs")

    def __init__(self, walk, index):
        self.walk, self.index, self.regs = walk, index, None

    def _get(self):
        if self.regs is None:
            self.regs = entry_regs(self.walk, self.index)
        return self.regs

    def get(self, regno, default=None):
        return self._get().get(regno, default)

    def __getitem__(self, regno):
        return self._get()[regno]

    def __contains__(self, regno):
        return regno in self._get()

    def __bool__(self):
        return bool(self._get())


def entry_regs(walk, index):
    """{regno: value} the frame's parameters had on entry, from its caller's call site
    (DW_TAG_call_site), computed once per walk from the outermost frame inward as GDB
    does for DW_OP_entry_value; {} where the chain of calls is broken (a signal)."""
    memo = walk.derived.setdefault("entry-regs", {})
    if index in memo:
        return memo[index]
    todo = []
    j = index
    while j not in memo and j + 1 < len(walk):
        todo.append(j)
        j += 1
    if j not in memo:
        memo[j] = {}
    ps = walk[0].walker.process_state
    for i in reversed(todo):
        callee, caller = walk[i], walk[i + 1]
        regs = {}
        clib, lib = caller.library, callee.library
        if (clib is not None and clib.module is not None and lib is not None
                and lib.module is not None and not callee.non_call and callee.kind != FrameKind.SIGNAL
                and not caller.non_call):
            try:
                fn = function_at(lib.module, callee.lookup_pc - lib.base)
                regs = call_site_entry_regs(
                    clib.module, caller.ra - clib.base, regs=caller.regs, cfa=caller.cfa,
                    read_mem=ps.read_memory, bias=clib.base,
                    callee_entry=(fn.entry_pc if fn is not None else None), callee_module=lib.module,
                    callee_bias=lib.base, caller_entry_regs=memo.get(i + 1), ptr_size=ps.arch.ptr_size,
                    reg_size=ps.arch.reg_size)
            except Exception:
                regs = {}
        memo[i] = regs
    return memo[index]
