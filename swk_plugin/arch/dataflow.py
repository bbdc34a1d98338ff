"""The stack-height dataflow, one engine for every instruction set.

An instruction set's analysis module is a decoder: an ``InstructionSet`` whose
``decode`` turns machine code into ``Insn`` records (size, effects on the
stack state, how control leaves) plus a few facts (its registers module, the
callee-saved registers, whether a call pushes the return address).  Adding an
architecture means writing that decoder; ``InstructionSet.analyze`` does the
rest: it follows control flow from a function's entry and runs a forward
dataflow over every path.  The state at each instruction is a tuple
(h, fp, saved, signed, held):

* ``h``: CFA - sp (the return address's slot at entry where a call pushes it,
  0 where a call leaves it in a register);
* ``fp``: CFA - fp once an effect makes the frame pointer a frame base; where
  sp moves in ways no effect follows (alloca, realignment) only fp still
  locates the CFA;
* ``saved``: frozenset of (regno, offset from the CFA) where each callee-saved
  register (and the return-address register, where a call leaves it in one)
  was stored while it held the caller's value;
* ``signed``: the return address carries a pointer-authentication code;
* ``held``: frozenset of (reg, tracked): ``reg`` holds the entry value of the
  tracked register ``tracked`` (Power's ``mflr r0`` before ``std r0,16(r1)``).

At joins, disagreeing heights become unknown and only saves made on every path
survive, so the lattice only falls and the fixpoint is reached fast.

Effects, the whole vocabulary a decoder speaks — an instruction's effects are
a tuple of (op, a, b), applied in order:

=================  ==========================================================
(SP_ADD, k)        sp += k (a push of n bytes is SP_ADD -n); k > 0 frees the
                   slots below the new sp: saves there are forgotten
(SP_FROM_FP, k)    sp = fp + k (``mov %rbp,%rsp``, ``mov sp, x29``)
(SP_UNKNOWN,)      sp changed in a way no height follows (``and $-16,%rsp``)
(SP_TO_CFA,)       sp = the CFA, whatever it was (Power's ``ld r1,0(r1)``: the
                   back chain holds the caller's sp)
(FP_FROM_SP, k)    fp = sp + k: fp becomes a frame base
(FP_UNKNOWN,)      fp no longer locates the CFA
(SAVE_SP, r, k)    r is stored at sp + k (a save when r is tracked and not
                   saved yet: the first save holds the caller's value; a
                   store of any other register changes nothing)
(SAVE_FP, r, k)    r is stored at fp + k
(RESTORE, r)       r is loaded with the value it saved: its save is forgotten
                   (and fp stops being a frame base when r is fp).  x86's
                   ``pop`` is no RESTORE: it may reload a pushed temporary
(RA_SIGNED,)       the return address is signed (``paciasp``) ...
(RA_PLAIN,)        ... or authenticated (``autiasp``)
(COPY, d, s)       d = s (``mflr r0``): a store of d is then a save of s
(CLOBBER, r)       r is written with anything else (needed only for a
                   register some COPY made hold a tracked value)
=================  ==========================================================

A push is (SP_ADD, -8), (SAVE_SP, r, 0); ``leave`` is (SP_FROM_FP, 0),
(RESTORE, fp), (SP_ADD, 8); ``stp x29, x30, [sp, #-16]!`` is (SP_ADD, -16),
(SAVE_SP, 29, 0), (SAVE_SP, 30, 8); Power's ``mflr r0; std r0,16(r1)`` is
(COPY, 0, lr), (SAVE_SP, 0, 16).  Control flow (an Insn's ``flow``): FALL
to the next instruction, JUMP to ``target``, COND (both), CALL (falls through
unless the callee does not return), STOP (return, trap), IJUMP (a jump table or
a tail call through a pointer).  tests/test_dataflow.py is the executable spec.
"""
from .heights import AnalysisError, FunctionAnalysis, StackHeight

#: Work bounds per function: bytes of code, decoded instructions, instruction visits.
MAX_CODE = 64 * 1024
MAX_INSNS = 20_000
MAX_VISITS = 200_000
#: Rounds of solving while calls are found not to return (see Dataflow).
MAX_ROUNDS = 8
#: Bytes handed to the decoder per read.
CHUNK = 256
#: A height beyond this is an analysis error, not a frame.
MAX_HEIGHT = 1 << 28

# Effects (see the module doc).
SP_ADD, SP_FROM_FP, SP_UNKNOWN, FP_FROM_SP, FP_UNKNOWN, SAVE_SP, SAVE_FP, RESTORE, RA_SIGNED, \
    RA_PLAIN, COPY, CLOBBER, SP_TO_CFA = range(13)
# Control flow.
FALL, JUMP, COND, CALL, STOP, IJUMP = range(6)
#: Flows after which the next instruction is not reached through this one.
ENDS_RUN = (JUMP, STOP, IJUMP)


def insn(size, effects=(), flow=FALL, target=None, padding=False):
    """An Insn record, the tuple (size, effects, flow, target, padding) a decoder yields:
    ``effects`` a tuple of (op, a, b) (shorter tuples are padded here); ``target`` the
    branch's or call's destination (None: indirect or none); ``padding``: an instruction
    compilers put between functions and before jump targets (nop, int3), which the sweep
    gives the state of the reached code before it.  Decoders on a hot path build the
    tuple themselves (and memoise it: compiled code repeats a few thousand instructions)."""
    return size, tuple((e + (None, None))[:3] for e in effects), flow, target, padding


class InstructionSet:
    """What the engine must know of one instruction set.

    ``regs``: its registers module (``sp``, ``fp``, ``ra``, ``ptr_size``: DWARF numbers and
    the slot size).  ``callee_saved``: the registers whose saves are tracked.
    ``ra_on_stack``: a call pushes the return address (x86: the CFA is sp + slot at entry
    and the return address is at CFA - slot); otherwise it stays in ``regs.ra``, which is
    tracked like a callee-saved register until stored.  ``align``: the entry's alignment and
    the bytes that must be readable there.  ``noreturn_by_clash``: a call whose fall-through
    state clashes with what other paths bring is taken not to return (Dataflow).

    A subclass gives ``decode(data, addr, known)``: the Insns of the bytes ``data`` loaded
    at ``addr``, decoded linearly, as (address, Insn) pairs up to the first undecodable
    bytes.  ``known`` ({address: Insn}) holds those the engine has already: the same bytes
    give the same Insn, so yielding those as they are spares the sweep over a whole
    function decoding it all again.  A generator: the engine stops reading where it has
    decoded before.
    """

    def __init__(self, regs, callee_saved, ra_on_stack, align=1, noreturn_by_clash=True):
        self.regs = regs
        self.ra_on_stack = ra_on_stack
        self.floor = regs.ptr_size if ra_on_stack else 0
        self.savable = frozenset(callee_saved) | (frozenset() if ra_on_stack else {regs.ra})
        self.align = align
        self.noreturn_by_clash = noreturn_by_clash
        self.entry = (self.floor, None, frozenset(), False, frozenset())
        self._heights = {}

    def decode(self, data, addr, known):
        raise NotImplementedError

    # --- the transfer function ------------------------------------------------------------
    def transfer(self, state, effects):
        """The state after an instruction's effects."""
        h, fp, saved, signed, held = state
        for op, a, b in effects:
            if op == SP_ADD:
                if h is not None:
                    h -= a
                    if a > 0:
                        saved = _drop_below(saved, h)
            elif op == SAVE_SP:
                if held:
                    a = _holder(held, a)
                if h is not None and a in self.savable:
                    saved = _with_save(saved, a, b - h)
            elif op == FP_FROM_SP:
                fp = None if h is None else h - a
            elif op == SP_FROM_FP:
                h = None if fp is None else fp - a
                if h is not None:
                    saved = _drop_below(saved, h)
            elif op == RESTORE:
                if a == self.regs.fp:
                    fp = None
                if any(r == a for r, _o in saved):
                    saved = frozenset(p for p in saved if p[0] != a)
            elif op == FP_UNKNOWN:
                fp = None
            elif op == SP_UNKNOWN:
                h = None
            elif op == SAVE_FP:
                if held:
                    a = _holder(held, a)
                if fp is not None and a in self.savable:
                    saved = _with_save(saved, a, b - fp)
            elif op == RA_SIGNED:
                signed = True
            elif op == RA_PLAIN:
                signed = False
            elif op == COPY:
                src = _holder(held, b) if held else b
                held = frozenset(p for p in held if p[0] != a)
                if src in self.savable and src != a:
                    held |= {(a, src)}
            elif op == CLOBBER:
                if held:
                    held = frozenset(p for p in held if p[0] != a)
            elif op == SP_TO_CFA:
                h = 0
                saved = _drop_below(saved, 0)
        if h is not None and not self.floor <= h <= MAX_HEIGHT:
            h = None
        return h, fp, saved, signed, held

    def height(self, state):
        """The StackHeight of a state (None when neither sp nor fp locates the CFA), shared."""
        heights = self._heights
        got = heights.get(state, False)
        if got is not False:
            return got
        h, fp, saved, signed, _held = state
        got = None
        if h is not None or fp is not None:
            got = StackHeight.make(self.regs, h, fp, {r: o for r, o in saved}, self.ra_on_stack, signed)
        if len(heights) > 100_000:
            heights.clear()
        heights[state] = got
        return got

    # --- the analysis ---------------------------------------------------------------------
    def analyze(self, read, start, end=None, follow=None, noreturn=None, hi=None):
        """Analyse the function entered at ``start``; return its FunctionAnalysis.

        read(addr, n) returns up to n readable bytes (b"" when none).  ``end`` is
        the function's end when known (jumps beyond it are tail calls); without
        one, code is followed up to ``hi`` (default start + MAX_CODE).
        follow(target) -> (lo, hi) or None: a range outside [start, end) that is
        still this function's (a .cold part).  noreturn(target) -> bool.
        Raises AnalysisError when the entry is unreadable or the work bounds are hit.
        """
        limit = end if end is not None else (hi if hi is not None else start + MAX_CODE)
        if limit - start > MAX_CODE:
            if end is not None:
                raise AnalysisError(f"function of {limit - start} bytes is too large to analyse")
            limit = start + MAX_CODE
        if start % self.align:
            raise AnalysisError(f"entry 0x{start:x} is not {self.align}-aligned")
        if not read(start, self.align):
            raise AnalysisError(f"code at 0x{start:x} is unreadable")
        flow = Dataflow(self, read, start, limit, follow, noreturn)
        for _round in range(MAX_ROUNDS):
            flow.solve(end)
            if flow.new_blames:                 # calls that seem not to return: solve again without them
                flow.blames.update(flow.new_blames)
                flow.reset(flow.new_blames)
                continue
            # A blame holds if the clash point is still reached with the call dead;
            # else the clash was the code's own (a loop moving sp) and the call returns.
            wrong = {call for call, at in flow.blames.items() if at not in flow.instate}
            if not wrong:
                break
            flow.dead_calls -= wrong
            flow.innocent |= wrong
            for call in wrong:
                del flow.blames[call]
            flow.reset(())
        else:
            flow.innocent |= flow.blames.keys() | flow.new_blames.keys()   # give up guessing
            flow.dead_calls.clear()
            flow.reset(())
            flow.solve(end)
        return flow.result(start, end)


def _drop_below(saved, h):
    """Saves whose slot is still at or above sp (CFA - h)."""
    if any(off < -h for _r, off in saved):
        return frozenset(p for p in saved if p[1] >= -h)
    return saved


def _holder(held, reg):
    """The tracked register whose entry value ``reg`` holds (COPY), else reg itself."""
    for r, tracked in held:
        if r == reg:
            return tracked
    return reg


def _with_save(saved, reg, off):
    for r, o in saved:
        if r == reg or o == off:
            return saved            # the first save of a register is the caller's value
    return saved | {(reg, off)}


def merge(a, b):
    """The state where paths bringing ``a`` and ``b`` join."""
    if a == b:
        return a
    return (a[0] if a[0] == b[0] else None, a[1] if a[1] == b[1] else None, a[2] & b[2], a[3] or b[3],
            a[4] & b[4])


class Dataflow:
    """The worklist solver behind InstructionSet.analyze.

    A call whose fall-through state clashes with what other edges bring to
    the next instruction does not return (``abort``, ``_dl_fatal_printf``,
    ``__cxa_throw`` and anything else a name list misses): analyze solves
    again with such calls ending their paths, and takes a blame back when
    the clash point is then no longer reached (only where the instruction set
    says ``noreturn_by_clash``).
    """

    def __init__(self, isa, read, start, limit, follow, noreturn):
        self.isa = isa
        self.read, self.start = read, start
        self.ranges = [(start, limit)]
        self.follow, self.noreturn = follow, noreturn
        self.insns = {}                 # address -> Insn
        self.refused = set()
        self.returns = {}               # call target -> whether it returns
        self.dead_calls = set()         # calls found not to return
        self.innocent = set()           # calls found to return after all
        self.blames = {}                # call -> where its fall-through clashed
        self.visits = 0
        self.reset(())

    def reset(self, dead_calls):
        self.dead_calls.update(dead_calls)
        self.new_blames = {}
        self.instate = {self.start: self.isa.entry}
        self.origin = {}                # address -> the call whose fall-through first reached it
        self.work = [self.start]
        self.ijumps = []

    # --- code ----------------------------------------------------------------------------
    def range_end(self, a):
        for lo, rhi in self.ranges:
            if lo <= a < rhi:
                return rhi
        return None

    def in_range(self, t):
        if t is None:
            return False
        if self.range_end(t) is not None:
            return True
        if self.follow is None or t in self.refused:
            return False
        extra = self.follow(t)
        if extra is None or not extra[0] <= t < extra[1] or \
                sum(r[1] - r[0] for r in self.ranges) + extra[1] - extra[0] > 2 * MAX_CODE:
            self.refused.add(t)
            return False
        self.ranges.append(extra)
        return True

    def decode(self, a):
        """The Insn at a, decoding the run from a up to known code or a jump; None when
        a is outside the ranges, unreadable or undecodable."""
        rhi = self.range_end(a)
        if rhi is None:
            return None
        data = self.read(a, min(CHUNK, rhi - a))
        if not data:
            return None
        insns = self.insns
        first = None
        for addr, ins in self.isa.decode(data, a, insns):
            if addr in insns:
                break
            insns[addr] = ins
            if first is None:
                first = ins
            if ins[2] in ENDS_RUN:
                break
        if len(insns) > MAX_INSNS:
            raise AnalysisError(f"more than {MAX_INSNS} instructions")
        return first

    def call_returns(self, a, t):
        if a in self.dead_calls:
            return False
        if t is None or self.noreturn is None:
            return True
        r = self.returns.get(t)
        if r is None:
            r = self.returns[t] = not self.noreturn(t)
        return r

    # --- solving ---------------------------------------------------------------------------
    def solve(self, end):
        self.run()
        if end is not None:
            self.sweep(end)

    def run(self):
        instate, insns, work = self.instate, self.insns, self.work
        transfer = self.isa.transfer
        blaming = self.isa.noreturn_by_clash
        while work:
            a = work.pop()
            st = instate[a]
            while True:
                self.visits += 1
                if self.visits > MAX_VISITS:
                    raise AnalysisError(f"more than {MAX_VISITS} instruction visits")
                ins = insns.get(a)
                if ins is None:
                    ins = self.decode(a)
                    if ins is None:
                        break
                size, effects, flow, tgt, _pad = ins
                out = transfer(st, effects) if effects else st
                call = None
                if flow != FALL:
                    if flow == CALL:
                        if not self.call_returns(a, tgt):
                            break
                        if blaming:
                            call = a
                    elif flow == COND:
                        if self.in_range(tgt):
                            self.propagate(tgt, out)
                    elif flow == JUMP:
                        if self.in_range(tgt):
                            self.propagate(tgt, out)
                        break
                    elif flow == IJUMP:
                        self.ijumps.append(out)     # a jump table or a tail call
                        break
                    else:
                        break
                nxt = a + size
                if self.range_end(nxt) is None:
                    break
                old = instate.get(nxt)
                if old is not None:
                    new = merge(old, out)
                    if new == old:
                        break
                    if blaming:
                        self.conflict(nxt, old, out, call)
                    out = new
                elif call is not None:
                    self.origin[nxt] = call
                instate[nxt] = out
                a, st = nxt, out

    def propagate(self, t, state):
        old = self.instate.get(t)
        if old is None:
            self.instate[t] = state
        else:
            new = merge(old, state)
            if new == old:
                return
            if self.isa.noreturn_by_clash:
                self.conflict(t, old, state, None)
            self.instate[t] = new
        self.work.append(t)

    def conflict(self, a, old, new, call):
        """Note the call whose fall-through makes heights disagree at a, if one does."""
        if (old[0] is not None and new[0] is not None and old[0] != new[0]) or \
                (old[1] is not None and new[1] is not None and old[1] != new[1]):
            blame = call if call is not None else self.origin.get(a)
            if blame is not None and blame not in self.innocent:
                self.new_blames.setdefault(blame, a)

    def sweep(self, end):
        """Linear passes over [start, end) for what the control flow did not reach.

        Case blocks are reached only through their jump table: after the
        fixpoint they are the code no path reached, so each unreached run (past
        its padding) is entered in the state of the indirect jumps and the
        dataflow goes on.  Then padding after a reached instruction (a return, a
        jump, a call that does not return) gets that instruction's state, as
        compilers' CFI gives it: it never runs, but a pc may be looked up there.
        """
        instate, isa = self.instate, self.isa
        data = self.read(self.start, end - self.start)
        lines = list(isa.decode(data, self.start, self.insns)) if data else []
        # A jump with a frame is a table's; one without may be either (a leaf's
        # switch, a tail call through a pointer): tables with a frame decide.
        tables = [s for s in self.ijumps if s != isa.entry] or self.ijumps
        if tables:
            seed = tables[0]
            for s in tables[1:]:
                seed = merge(seed, s)
            if seed[0] is not None or seed[1] is not None:
                for _round in range(16):
                    seeds = []
                    starts_run = True       # after reached code, padding, or a jump/return
                    for a, ins in lines:
                        if a in instate or ins[4]:
                            starts_run = True
                        else:
                            if starts_run:
                                seeds.append(a)
                            starts_run = ins[2] in ENDS_RUN
                    if not seeds:
                        break
                    for a in seeds:
                        instate[a] = seed
                        self.work.append(a)
                    self.run()
        prev = None
        for a, ins in lines:
            if a in instate:
                prev = instate[a]
            elif prev is not None and ins[4]:
                instate[a] = prev
                self.insns[a] = ins
            else:
                prev = None

    def result(self, start, end):
        insns, instate = self.insns, self.instate
        addrs = sorted(a for a in instate if a in insns)
        height = self.isa.height
        rules = [height(instate[a]) for a in addrs]
        calls = {a for a in addrs if insns[a][2] == CALL}
        return FunctionAnalysis(start, end, addrs, [insns[a][0] for a in addrs], rules, calls,
                                self.ranges[1:])
