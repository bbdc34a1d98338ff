"""Locals at the level of a walk's frames: the scopes at a frame's pc, the entry values of
its parameters (from its caller's call site), and what a variable's value needs from its
frame (FrameVariables: the one way from a frame to its variables).

Frames are used through their attributes only (library, lookup_pc, regs, cfa,
kind), and the process state through the walk (walker_of): this sits below the
walker, which offers these through its spec API.
What is worked out for one walk is kept in the walk's ``derived`` store
(lives one stop, with the walk); what depends only on DWARF (plans.py), in the
module's cache.
"""
import bisect

from ..errors import SwkError
from ..frame import Frame, FrameKind
from ..linux.tls import tls_block
from ..unwind.apply import frame_cfa
from ..unwind.cfi import cfi_rule_at
from ..unwind.modules import function_at as symbol_function_at
from .entry import EntryRegs, OpenEntryRegs, call_site_entry_regs, site_fast_values
from .locations import ENTRY_LOOP, ENTRY_NESTING
from .scopes import function_at, scopes_at, unit_at
from .tailcalls import tail_call_chain


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


def has_symtab(frame):
    """Whether DWARF covers the frame's pc though no function's scope does (a signal
    trampoline inside libc's debug info): GDB prints "No locals." there."""
    lib = frame.library
    if lib is None or lib.module is None:
        return False
    pc = frame.ra if frame.kind == FrameKind.SIGNAL else frame.lookup_pc
    return unit_at(lib.module, pc - lib.base)


def call_levels(walk, upto=None):
    """The walk's frames and, between a callee and its caller, the tail-call frames DWARF's
    call sites show (kind "tailcall"), outermost last: what GDB's bt counts as frames
    before inline calls.  Made once per walk (``walk.derived``), as far as asked:
    ``upto``, the physical frames before it (a backtrace that stops at main does not ask
    the start-up code's DWARF about tail calls); levels once made never move, so a
    level index stays good as the list grows."""
    st = walk.derived.get("levels")
    if st is None:
        st = walk.derived["levels"] = _Levels(walk)
    n = len(walk) if upto is None or upto > len(walk) else upto
    if st.done < n:
        st.extend(n)
    return st.levels


def level_frame(walk, level):
    """call_levels(walk)[level], making no more levels than it takes."""
    st = walk.derived.get("levels")
    if st is None or level >= len(st.levels):
        st = walk.derived.get("levels") or walk.derived.setdefault("levels", _Levels(walk))
        while level >= len(st.levels) and st.done < len(walk):
            st.extend(st.done + 1)
    return st.levels[level]


class _Levels:
    """call_levels's list for one walk, and how many physical frames it covers."""
    __slots__ = ("walk", "levels", "physical", "done", "libraries", "memo")

    def __init__(self, walk):
        self.walk, self.levels, self.physical, self.done = walk, [], [], 0
        self.libraries = self.memo = None

    def extend(self, n):
        """Cover the physical frames before ``n``: each comes after the tail-call frames
        between it and its callee (those after the last frame covered wait for its caller)."""
        walk, levels, physical = self.walk, self.levels, self.physical
        for i in range(self.done, n):
            frame = walk[i]
            if i:
                if self.memo is None:
                    ps = walker_of(walk).process_state
                    self.libraries = [(lib.module, lib.base) for lib in ps.library_state.get_libraries()]
                    self.memo = ps.library_cache.memo("tail-chains")
                tails = _tail_frames(walk, walk[i - 1], frame, self.libraries, self.memo)
                if tails:
                    levels.extend(tails)
            physical.append(len(levels))
            levels.append(frame)
        self.done = max(self.done, n)


class RegisterView(dict):
    """A frame's registers as GDB sees them (see register_view): the general registers
    in the dict; a floating-point or vector register only when a location names one,
    from ``fp_source`` (the thread's own registers for the innermost frames, the fpstate
    of a signal frame for the code it interrupted)."""
    __slots__ = ("fp_source", "lost")

    def __init__(self, regs=(), fp_source=None, lost=frozenset()):
        super().__init__(regs)
        self.fp_source = fp_source
        #: the registers a step marked lost here or in a frame inside it (and none recovered)
        self.lost = lost

    def is_lost(self, regno):
        return regno in self.lost

    def get(self, regno, default=None):
        value = dict.get(self, regno, _MISSING)
        if value is not _MISSING:
            return value
        if self.fp_source is not None:
            value = self.fp_source(regno)
            if value is not None:
                return value
        return default


_MISSING = object()


def _thread_fp_source(ps, thread):
    fp_regs = ps.arch.fp_registers

    def source(regno):
        if regno not in fp_regs:
            return None
        try:
            return ps.get_fpreg_value(regno, thread)
        except SwkError:
            return None
    return source


def _signal_fp_source(ps, trampoline):
    """The FP registers of the code a signal interrupted, from its signal frame (the
    architecture says which frame the trampoline returns from and where its sigcontext is)."""
    layout = ps.arch.signal_frame
    reader = layout.fp_registers if layout is not None else None
    saved = []

    def code_at(addr, n):
        try:
            return ps.read_memory(addr, n)
        except SwkError:
            return None

    def source(regno):
        if reader is None or regno not in ps.arch.fp_registers:
            return None
        if not saved:
            try:
                if layout.frame_kind is not None:
                    kind = layout.frame_kind(code_at, trampoline.ra,
                                             bool(trampoline.is_top or trampoline.non_call),
                                             lambda: trampoline.name)
                    sc = kind.sigcontext_address(trampoline.sp) if kind is not None else None
                else:
                    sc = layout.sigcontext_address(trampoline.sp)
                saved.append(reader(ps.read_memory, sc) if sc is not None else {})
            except (SwkError, ValueError):
                saved.append({})
        return saved[0].get(regno)
    return source


def register_view(walk, level):
    """The registers GDB sees in the frame at ``level`` (of call_levels): what the walk
    recovered there, and for every register it did not, the inner frame's value, except
    those a step marked lost (DW_CFA_undefined: GDB's <not saved>, variables there
    <optimized out>), here and in every frame outside it until a step recovers them.  GDB
    unwinds a register its unwind rules do not mention as unchanged ("same value",
    DWARF2_FRAME_REG_UNSPECIFIED), so a variable its location list still places in a
    caller-saved register prints that register's current value; values shown as GDB
    shows them need the same view.  Floating-point registers go the same way, except
    through a signal frame, whose saved fpstate swk reads (GDB shows the handler's
    registers there).  Kept per walk."""
    views = walk.derived.get("register-views")
    if views is None:
        views = walk.derived["register-views"] = ({}, [])
    views, made = views
    view = views.get(level)
    if view is not None:
        return view
    level_frame(walk, level)
    levels = walk.derived["levels"].levels
    # from the nearest view already made, inward of this level (deep walks ask for a few
    # levels, far apart: no view is made for the levels between)
    i = bisect.bisect_left(made, level)
    start = made[i - 1] if i else None
    bisect.insort(made, level)
    if start is None:
        frame = levels[0]
        regs, source, start = dict(frame.regs), _thread_fp_source(walker_of(walk).process_state, frame.thread), 0
        lost = frozenset()
    else:
        regs, source, lost = dict(views[start]), views[start].fp_source, views[start].lost
    for k in range(start + 1, level + 1):
        if levels[k - 1].kind == FrameKind.SIGNAL:
            source = _signal_fp_source(walker_of(walk).process_state, levels[k - 1])
        own = levels[k].regs
        regs.update(own)
        if lost:
            lost = frozenset(r for r in lost if r not in own)
        if levels[k].lost:                  # undefined by the step: not the inner frame's value
            for r in levels[k].lost:
                regs.pop(r, None)
            lost = lost | levels[k].lost
        if k % CHECKPOINT == 0 and k != level and k not in views:
            # a view kept every CHECKPOINT levels: entry values ask for levels outermost
            # first, and each then starts from one of these, not from level 0
            views[k] = RegisterView(regs, source, lost)
            bisect.insort(made, k)
    view = views[level] = RegisterView(regs, source, lost)
    return view


#: How far apart register_view keeps the views it made on the way to the one asked for.
CHECKPOINT = 64


class LevelRegisters:
    """register_view(walk, level) as far as ``get`` goes, without making the view for a
    register the frame recovered itself (a callee-saved register its callee's CFI
    restored: what -O2 code keeps its variables in); the view is made for any other.
    The frame's own value is the view's (the view is the inner frames' overlaid by it)."""
    __slots__ = ("walk", "level", "own", "view")

    def __init__(self, walk, level):
        self.walk, self.level = walk, level
        self.own = level_frame(walk, level).regs
        self.view = None

    def get(self, regno, default=None):
        v = self.own.get(regno)
        if v is not None:
            return v
        if self.view is None:
            self.view = register_view(self.walk, self.level)
        return self.view.get(regno, default)

    def is_lost(self, regno):
        if regno in self.own:
            return False
        if self.view is None:
            self.view = register_view(self.walk, self.level)
        return self.view.is_lost(regno)

    def __bool__(self):
        return True


def walker_of(walk):
    """The Walker of a walk's frames (every frame of a walk has the same): the one place the
    locals reach the walk's process state (its memory, architecture, libraries, threads)."""
    return walk[0].walker


class FrameVariables:
    """Everything a variable's value needs from its frame (locations.read_variable): the
    unbiased pc its location lists are matched at (``addr``), the registers there (``regs``:
    a missing one makes a value optimized out, never a guess), the CFA, the target's memory,
    the library's load bias, the architecture's facts (pointer and register sizes, its
    conversion of a register's bytes, byte order), the parameters' entry values, the
    process's libraries (<symbol>s of pointers, C++ static members) and a callable giving
    the frame's thread-local block.  of_level makes one for a level of a walk, as GDB sees
    that frame; the constructor takes the values themselves (a call site read in its
    caller, a hand-made frame)."""
    __slots__ = ("addr", "regs", "read_mem", "bias", "ptr_size", "reg_size", "register_value", "byteorder",
                 "entry_regs", "libraries", "tls_base", "_cfa", "_cfa_of")

    def __init__(self, addr, regs, cfa, read_mem, bias, *, ptr_size=8, entry_regs=None, libraries=None,
                 reg_size=None, register_value=None, tls_base=None, byteorder="little"):
        self.addr = addr
        self.regs = regs if regs is not None else {}
        self._cfa, self._cfa_of = cfa, None
        self.read_mem = read_mem
        self.bias = bias or 0
        self.ptr_size = ptr_size
        #: bytes of a register by DWARF number (the architecture's); pointer-sized if unknown
        self.reg_size = reg_size or (lambda _r, n=ptr_size: n)
        #: the architecture's register_value: a float held in an x87 register is converted
        self.register_value = register_value
        #: the target's byte order: of memory, of registers as bytes, of the values read
        self.byteorder = byteorder
        #: {DWARF regno: value on entry} for DW_OP_entry_value (call_site_entry_regs); None:
        #: such values are optimized out
        self.entry_regs = entry_regs
        #: the process's (module, bias) pairs or Library objects; None: the frame's module's only
        self.libraries = libraries
        #: () -> the frame's module's TLS block in its thread (asked for a thread-local only)
        self.tls_base = tls_base

    @classmethod
    def of_level(cls, walk, level, libraries=None, outermost=None):
        """The frame at ``level`` (of call_levels) of ``walk``: its lookup pc, the registers
        GDB sees there (LevelRegisters: the register view only for registers the frame did
        not recover itself), its CFA and its parameters' entry values worked out when first
        asked for (entry_regs is costly, and most frames never ask).  ``libraries``: the
        process's, when the caller has them (a walk's frames share one list); ``outermost``:
        the last level a backtrace shows when it stops short (its frame has no caller)."""
        frame = level_frame(walk, level)
        ps = walker_of(walk).process_state
        arch = ps.arch
        lib = frame.library
        made = cls(frame.lookup_pc - lib.base, LevelRegisters(walk, level), None, ps.read_memory, lib.base,
                   ptr_size=arch.ptr_size, entry_regs=LazyEntryRegs(walk, level, outermost),
                   libraries=libraries if libraries is not None else ps.library_state.get_libraries(),
                   reg_size=arch.reg_size, register_value=arch.register_value,
                   tls_base=lambda: tls_block(ps, lib, frame.thread), byteorder=arch.byteorder)
        made._cfa_of = (frame, ps)
        return made

    @property
    def cfa(self):
        """The frame's CFA, None if unknown (of_level's: worked out when first asked for)."""
        if self._cfa_of is not None:
            frame, ps = self._cfa_of
            self._cfa, self._cfa_of = frame_cfa(frame, ps), None
        return self._cfa


def level_of(walk, index):
    """The level (index into call_levels) of the walk's physical frame ``index``."""
    call_levels(walk, index + 1)
    return walk.derived["levels"].physical[index]


def _tail_frames(walk, callee, caller, libraries, memo):
    """The tail-call frames between ``callee`` and ``caller`` (of ``walk``), innermost first: only where
    GDB looks for them, below a caller that called (not one a signal interrupted) and
    above a callee its CFI unwinds.  ``memo``: (callee pc, caller's return address) ->
    the sites' pcs, what DWARF and CFI say of the pair (it holds while the libraries
    stay: a deep recursion asks the same question thousands of times)."""
    if caller.non_call or callee.kind == FrameKind.SIGNAL or caller.kind == FrameKind.SIGNAL:
        return ()
    key = (callee.lookup_pc, caller.ra)
    pcs = memo.get(key)
    if pcs is None:
        lib, clib = callee.library, caller.library
        if lib is None or lib.module is None or clib is None or clib.module is None:
            return ()
        pcs = memo.put(key, _tail_site_pcs(walk, callee, lib, clib, caller.ra, libraries))
    if not pcs:
        return ()
    out = []
    walker = walker_of(walk)
    arch = walker.process_state.arch
    # Every function of the chain jumped with the stack as it found it on entry: each
    # tail-call frame has the physical callee's CFA; GDB gives it that as its sp, too.
    cfa = callee.cfa
    sp = cfa if cfa is not None else caller.sp
    for pc in pcs:
        regs = dict(caller.regs)
        regs[arch.pc] = pc
        regs[arch.sp] = sp
        tail = Frame(pc, sp, caller.fp, walker, regs, thread=caller.thread, copy=False)
        tail.kind = FrameKind.TAILCALL
        tail.trust = "tailcall"
        tail.cfa = cfa
        out.append(tail)
    return out


def _tail_site_pcs(walk, callee, lib, clib, caller_ra, libraries):
    """The absolute pcs of the tail-call sites between a callee (its frame) and the call
    site at ``caller_ra``, innermost first; () when there are none."""
    pc = callee.lookup_pc - lib.base
    try:
        if cfi_rule_at(lib.module, pc) is None:
            return ()
        fn = function_at(lib.module, pc)
    except Exception:   # unreadable DWARF or CFI: no tail-call frames
        return ()
    if fn is not None:
        entry = fn.entry_pc + lib.base
    else:
        bounds = symbol_function_at(walker_of(walk).process_state, callee.lookup_pc)
        if bounds is None:
            return ()
        entry = bounds[0]
    return tuple(site.abs_pc for site in tail_call_chain(clib.module, clib.base, caller_ra, entry, libraries))


class LazyEntryRegs:
    """The entry values of a frame's parameters, worked out only if a location asks
    (DW_OP_entry_value): most frames never do."""
    __slots__ = ("walk", "level", "outermost", "regs")

    def __init__(self, walk, level, outermost=None):
        self.walk, self.level, self.outermost, self.regs = walk, level, outermost, None

    def _get(self):
        if self.regs is None:
            self.regs = entry_regs(self.walk, self.level, self.outermost)
        return self.regs

    def get(self, regno, default=None):
        return self._get().get(regno, default)

    def __getitem__(self, regno):
        return self._get()[regno]

    def __contains__(self, regno):
        return regno in self._get()

    def __bool__(self):
        return bool(self._get())

    @property
    def data(self):
        """EntryRegs.data: what reference parameters' objects held on entry."""
        return getattr(self._get(), "data", {})

    @property
    def errors(self):
        """EntryRegs.errors: the call-site values GDB reports as errors."""
        return getattr(self._get(), "errors", {})

    @property
    def depth(self):
        """EntryRegs.depth: how deep GDB nests call sites' values to find each."""
        return getattr(self._get(), "depth", {})


def entry_regs(walk, level, outermost=None):
    """{regno: value} the parameters of the frame at ``level`` (of call_levels) had on
    entry, from its caller's call site (DW_TAG_call_site; a tail-call frame's is its jump),
    computed once per walk from the outermost frame inward as GDB does for
    DW_OP_entry_value; {} where the chain of calls is broken (a signal).  ``outermost``:
    the last level shown when a backtrace stops short (past main), which then has no caller."""
    known = walk.derived.get(("entry-regs", outermost))
    if known is not None and level in known:    # every line of a frame asks again
        return known[level]
    if outermost is None:
        levels = call_levels(walk)
    else:       # the levels up to the outermost shown: its callers are not asked about
        level_frame(walk, outermost)
        levels = walk.derived["levels"].levels
    memo = walk.derived.setdefault(("entry-regs", outermost), {})
    if level in memo:
        return memo[level]
    if outermost is not None and level >= outermost:
        memo[level] = {}
        return memo[level]
    todo = []
    j = level
    while j not in memo and j + 1 < len(levels) and (outermost is None or j < outermost):
        todo.append(j)
        j += 1
    if j not in memo:
        # the last frame of a part of a deep walk whose callers come later (stream.py): a
        # chain of entry values reaching it is longer than GDB follows
        memo[j] = OpenEntryRegs() if walk.derived.get("open-end") and j == len(levels) - 1 else {}
    ps = walker_of(walk).process_state
    arch = ps.arch
    entries = ps.library_cache.memo("callee-entries")
    # (callee pc, caller's return address) -> site_fast_values: a deep recursion's frames
    # repeat a few call sites, and most give constants or a caller's register plus an offset
    fast_sites = ps.library_cache.memo("entry-fast-sites")
    mask = (1 << (8 * arch.ptr_size)) - 1
    for i in reversed(todo):
        callee, caller = levels[i], levels[i + 1]
        regs = {}
        if callee.kind == FrameKind.SIGNAL or caller.non_call:
            memo[i] = regs
            continue
        key = (callee.lookup_pc, caller.ra)
        fast = fast_sites.get(key, fast_sites)
        if fast is fast_sites:
            fast = fast_sites.put(key, _fast_site(callee, caller, entries))
        if fast is not None:
            regs = EntryRegs()
            cregs = caller.regs
            for r, reg, off, has_fbreg, passed_on in fast:
                if reg is None:
                    regs[r] = off
                elif passed_on:             # the caller's own parameter: its entry value, nested
                    up = memo.get(i + 1)
                    depth = 1 + getattr(up, "depth", {}).get(reg, 1)
                    if up is not None and depth > ENTRY_NESTING:
                        regs.errors[r] = ENTRY_LOOP       # as deep as GDB goes
                        regs.depth[r] = ENTRY_NESTING
                        continue
                    v = up.get(reg) if up else None
                    if v is None:
                        continue            # unknown there: none here either
                    if not isinstance(v, int):
                        break               # a register's bytes: the general path below
                    regs[r] = ((v & mask) + off) & mask
                    regs.depth[r] = depth
                    if reg in getattr(up, "from_fbreg", ()):
                        regs.from_fbreg.add(r)
                else:
                    v = cregs.get(reg)
                    if v is None or not isinstance(v, int):
                        break               # not the caller's own: the general path below
                    regs[r] = ((v & mask) + off) & mask
                if has_fbreg:
                    regs.from_fbreg.add(r)
            else:
                memo[i] = regs
                continue
            regs = {}
        clib, lib = caller.library, callee.library
        if (clib is not None and clib.module is not None and lib is not None
                and lib.module is not None):
            try:
                entry = _callee_entry(callee, lib, entries)
                # the call site's values are the caller's: read in its frame at the call, with
                # its own entry values (made first: outermost frames come first)
                at_call = FrameVariables(caller.ra - 1 - clib.base, LevelRegisters(walk, i + 1),
                                         frame_cfa(caller, ps), ps.read_memory, clib.base, ptr_size=arch.ptr_size,
                                         entry_regs=memo.get(i + 1), reg_size=arch.reg_size,
                                         byteorder=arch.byteorder)
                regs = call_site_entry_regs(clib.module, at_call, callee_entry=entry, callee_module=lib.module,
                                            callee_bias=lib.base)
            except Exception:
                regs = {}
        memo[i] = regs
    return memo[level]


def _callee_entry(callee, lib, entries):
    """The unbiased entry pc of the callee's function (one DWARF lookup per pc), or None."""
    pc = callee.lookup_pc
    entry = entries.get(pc, entries)
    if entry is entries:
        fn = function_at(lib.module, pc - lib.base)
        entry = entries.put(pc, fn.entry_pc if fn is not None else None)
    return entry


def _fast_site(callee, caller, entries):
    """site_fast_values for the call from ``caller`` into ``callee``: () when the pair gives
    no entry values (no DWARF on either side), None for the general path."""
    clib, lib = caller.library, callee.library
    if clib is None or clib.module is None or lib is None or lib.module is None:
        return ()
    try:
        entry = _callee_entry(callee, lib, entries)
        return site_fast_values(clib.module, caller.ra - clib.base, clib.base, callee_entry=entry,
                                callee_module=lib.module, callee_bias=lib.base)
    except Exception:   # the general path says nothing either (it catches the same)
        return None
