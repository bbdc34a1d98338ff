"""Stack-height analysis of x86-64 machine code.

Without CFI the only way to find a frame's return address is to know, at the
frame's pc, how far rsp is below the CFA.  ``analyze`` decodes a function
with capstone, following control flow from its entry, and runs a forward
dataflow over every path.  The state at each instruction is:

* ``h``: the stack height CFA - rsp (8 at entry: just the return address);
* ``fp``: CFA - rbp once ``mov %rsp,%rbp`` (or ``enter``/``lea``) makes rbp a
  frame base; after ``and $-N,%rsp`` only rbp still locates the CFA;
* ``saved``: where each callee-saved register holding the caller's value was
  pushed or stored, as an offset from the CFA.

At joins, disagreeing heights become unknown and only saves made on every
path survive, so the lattice only falls and the fixpoint is reached fast.

Instructions are decoded with ``disasm_lite`` and classified from their Intel
text: about seven times faster than capstone's detail mode, and every
instruction that matters here has one plain textual form.  Classifications
are memoised, so a function costs little more than its decode.
"""
from ..heights import NOT_REACHED, AnalysisError, FunctionAnalysis, StackHeight  # noqa: F401 (re-exported)
from . import registers as _ARCH

#: Work bounds per function: bytes of code, decoded instructions, instruction visits.
MAX_CODE = 64 * 1024
MAX_INSNS = 20_000
MAX_VISITS = 200_000
#: Rounds of solving while calls are found not to return (see _Dataflow).
MAX_ROUNDS = 8
#: Bytes decoded per capstone call.
CHUNK = 256
#: A height beyond this is an analysis error, not a frame.
MAX_HEIGHT = 1 << 28

# Effects on the state.
OTHER, PUSH, POP, ADJ, SP_UNKNOWN, SP_FROM_FP, FP_FROM_SP, FP_CLOBBER, LEAVE, SAVE_SP, SAVE_FP, \
    ENTER = range(12)
# Control flow.
FALL, JUMP, COND, CALL, STOP, IJUMP = range(6)
#: ``call`` to the very next instruction: it only pushes the pc (the ``call 1f; 1: pop %ebx``
#: way to find it in i386 PIC code).
_CALL_NEXT = (PUSH, None, None, FALL, None)

_SP_NAMES = frozenset({"rsp", "esp", "sp", "spl"})
_BP_NAMES = frozenset({"rbp", "ebp", "bp", "bpl"})
#: Mnemonics whose first operand is only read.
_READS_FIRST = frozenset({"cmp", "test", "bt", "push", "ptest", "ucomiss", "ucomisd", "comiss",
                          "comisd", "prefetcht0", "prefetcht1", "prefetcht2", "prefetchnta",
                          "prefetchw", "nop", "clflush", "clflushopt", "clwb"})
STOPS = frozenset({"ret", "retf", "iretq", "iret", "iretd", "ud2", "ud1", "ud0", "hlt", "int3", "sysret",
                    "sysretq", "sysexit"})
PADDING = frozenset({"nop", "int3"})
_PUSH_FLAGS = frozenset({"push", "pushfq", "pushf", "pushfd"})
_POP_FLAGS = frozenset({"pop", "popfq", "popf", "popfd"})


def _int(s):
    """An immediate as capstone prints it ("8", "0x18", "-0x80"), sign-folded to 64 bits."""
    try:
        v = int(s, 0)
    except ValueError:
        return None
    if v >= 1 << 63:
        v -= 1 << 64
    return v


def _mem(op):
    """(base name, displacement) of ``[base]`` / ``[base +- disp]``, else None."""
    i = op.find("[")
    if i < 0 or ":" in op[:i]:
        return None
    parts = op[i + 1:-1].split(" ")
    if len(parts) == 1:
        return parts[0], 0
    if len(parts) == 3 and parts[1] in "+-":
        d = _int(parts[2])
        if d is None:
            return None
        return parts[0], (d if parts[1] == "+" else -d)
    return None


def _target(op):
    """A direct branch's target, or None for an indirect one."""
    if op.startswith("0x"):
        try:
            return int(op, 16)
        except ValueError:
            return None
    return int(op) if op.isdigit() else None        # capstone prints targets below 10 in decimal


class Isa:
    """What the analysis must know of one x86 instruction set: ``regs`` (a registers
    module: sp, fp, ra, ptr_size), capstone's mode, the names of the stack and frame
    pointers as capstone prints them, and the callee-saved registers by name."""

    def __init__(self, regs, mode, sp_name, fp_name, callee_saved):
        self.regs, self.mode = regs, mode
        self.slot = regs.ptr_size
        self.sp_name, self.fp_name = sp_name, fp_name
        self.fp = regs.fp
        self.callee_saved = {name: regs.DWARF_NAMES.index(name) for name in callee_saved}
        self.store = ("qword" if self.slot == 8 else "dword") + " ptr ["
        self.zero_padding = "byte ptr [" + ("rax" if self.slot == 8 else "eax") + "], al"
        self.entry = (self.slot, None, frozenset())
        self.classes = {}
        self.cs = None

    def decoder(self):
        """The shared capstone decoder (no detail: see the module docstring)."""
        if self.cs is None:
            import capstone   # imported on first use: most walks never need it (33 ms)
            self.cs = capstone.Cs(capstone.CS_ARCH_X86, getattr(capstone, self.mode))
        return self.cs

    def classify(self, mnemonic, op_str):
        """(effect, arg1, arg2, flow, target) of one instruction, from its Intel text."""
        m = mnemonic.rpartition(" ")[2]          # drop rep/bnd/notrack/lock prefixes
        c = m[0]
        if c == "j":
            if m == "jmp":
                t = _target(op_str)
                return (OTHER, None, None, JUMP, t) if t is not None else (OTHER, None, None, IJUMP, None)
            return OTHER, None, None, COND, _target(op_str)
        if m == "call":
            return OTHER, None, None, CALL, _target(op_str)
        if m in STOPS:
            return OTHER, None, None, STOP, None
        saved = self.callee_saved
        if c == "p":
            if m in _PUSH_FLAGS:
                return PUSH, saved.get(op_str), None, FALL, None
            if m in _POP_FLAGS:
                if op_str in _SP_NAMES:
                    return SP_UNKNOWN, None, None, FALL, None
                return POP, saved.get(op_str), None, FALL, None
            if m in ("pushal", "pushad", "popal", "popad"):    # i386: all eight registers
                return ADJ, (8 if m.startswith("push") else -8) * self.slot, None, FALL, None
        if m == "leave":
            return LEAVE, None, None, FALL, None
        if m == "enter":
            n = _int(op_str.split(",", 1)[0])
            return (ENTER, n, None, FALL, None) if n is not None else (SP_UNKNOWN, None, None, FALL, None)
        if m.startswith("loop"):
            return OTHER, None, None, COND, _target(op_str)
        if "sp" not in op_str and "bp" not in op_str:
            return OTHER, None, None, FALL, None
        sp, fp = self.sp_name, self.fp_name
        dest, _, src = op_str.partition(", ")
        if dest == sp:
            if m in _READS_FIRST:
                return OTHER, None, None, FALL, None
            if m == "sub" or m == "add":
                v = _int(src)
                if v is not None:
                    return ADJ, (v if m == "sub" else -v), None, FALL, None
            elif m == "lea":
                mem = _mem(src)
                if mem is not None:
                    if mem[0] == sp:
                        return ADJ, -mem[1], None, FALL, None
                    if mem[0] == fp:
                        return SP_FROM_FP, mem[1], None, FALL, None
            elif m == "mov" and src == fp:
                return SP_FROM_FP, 0, None, FALL, None
            return SP_UNKNOWN, None, None, FALL, None
        if dest in _SP_NAMES:
            return (OTHER if m in _READS_FIRST else SP_UNKNOWN), None, None, FALL, None
        if dest == fp:
            if m in _READS_FIRST:
                return OTHER, None, None, FALL, None
            if m == "mov" and src == sp:
                return FP_FROM_SP, 0, None, FALL, None
            if m == "lea":
                mem = _mem(src)
                if mem is not None and mem[0] == sp:
                    return FP_FROM_SP, mem[1], None, FALL, None
            return FP_CLOBBER, None, None, FALL, None
        if dest in _BP_NAMES:
            return (OTHER if m in _READS_FIRST else FP_CLOBBER), None, None, FALL, None
        if m == "mov" and src in saved and dest.startswith(self.store):
            mem = _mem(dest)
            if mem is not None:
                if mem[0] == sp:
                    return SAVE_SP, saved[src], mem[1], FALL, None
                if mem[0] == fp:
                    return SAVE_FP, saved[src], mem[1], FALL, None
            return OTHER, None, None, FALL, None
        if m in ("xchg", "xadd", "cmpxchg", "cmpxchg8b", "cmpxchg16b"):
            if src in _SP_NAMES:
                return SP_UNKNOWN, None, None, FALL, None
            if src in _BP_NAMES:
                return FP_CLOBBER, None, None, FALL, None
        return OTHER, None, None, FALL, None

    def classify_memo(self, mnemonic, op_str):
        """classify(), memoised: compiled code repeats a few thousand instruction texts."""
        key = (mnemonic, op_str)
        classes = self.classes
        c = classes.get(key)
        if c is None:
            if len(classes) > 200_000:
                classes.clear()
            c = classes[key] = self.classify(mnemonic, op_str)
        return c

    def transfer(self, state, eff, x, y):
        """The state after an instruction with effect (eff, x, y)."""
        h, fp, saved = state
        slot = self.slot
        if eff == PUSH:
            if h is None:
                return state
            h += slot
            if x is not None:
                saved = _with_save(saved, x, -h)
        elif eff == POP:
            if x == self.fp:
                fp = None
            if h is not None:
                h -= slot
                saved = _drop_below(saved, h)
        elif eff == ADJ:
            if h is not None:
                h += x
                if x < 0:
                    saved = _drop_below(saved, h)
        elif eff == SP_UNKNOWN:
            h = None
        elif eff == SP_FROM_FP:
            h = None if fp is None else fp - x
            if h is not None:
                saved = _drop_below(saved, h)
        elif eff == FP_FROM_SP:
            fp = None if h is None else h - x
        elif eff == FP_CLOBBER:
            fp = None
        elif eff == LEAVE:
            h = None if fp is None else fp - slot
            fp = None
            saved = frozenset(p for p in saved if p[0] != self.fp)
            if h is not None:
                saved = _drop_below(saved, h)
        elif eff == SAVE_SP:
            if h is not None:
                saved = _with_save(saved, x, y - h)
        elif eff == SAVE_FP:
            if fp is not None:
                saved = _with_save(saved, x, y - fp)
        elif eff == ENTER:
            if h is None:
                return state
            h += slot
            saved = _with_save(saved, self.fp, -h)
            fp = h
            h += x
        else:
            return state
        if h is not None and not slot <= h <= MAX_HEIGHT:
            h = None
        return h, fp, saved

    def decode_run(self, read, addr, end):
        """Decode linearly from addr up to end: [(address, size, mnemonic, op_str)]."""
        data = read(addr, end - addr)
        return list(self.decoder().disasm_lite(data, addr)) if data else []

    def is_padding(self, mn, ops):
        """nop, int3, or zero bytes (``add %al,(%rax)``) between functions and before jump targets."""
        return mn.rpartition(" ")[2] in PADDING or (mn == "add" and ops == self.zero_padding)

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
        if not read(start, 1):
            raise AnalysisError(f"code at 0x{start:x} is unreadable")
        flow = _Dataflow(self, read, start, limit, follow, noreturn)
        for _round in range(MAX_ROUNDS):
            flow.solve(end)
            if flow.new_blames:                 # calls that seem not to return: solve again without them
                flow.blames.update(flow.new_blames)
                flow.reset(flow.new_blames)
                continue
            # A blame holds if the clash point is still reached with the call dead;
            # else the clash was the code's own (a loop moving rsp) and the call returns.
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
    """Saves whose slot is still at or above rsp (CFA - h)."""
    if any(off < -h for _r, off in saved):
        return frozenset(p for p in saved if p[1] >= -h)
    return saved


def _with_save(saved, reg, off):
    for r, o in saved:
        if r == reg or o == off:
            return saved            # the first save of a register is the caller's value
    return saved | {(reg, off)}


def merge(a, b):
    if a == b:
        return a
    return (a[0] if a[0] == b[0] else None, a[1] if a[1] == b[1] else None, a[2] & b[2])


#: x86-64's: callee-saved registers (System V) rbx, rbp, r12-r15.
X86_64 = Isa(_ARCH, "CS_MODE_64", "rsp", "rbp", ("rbx", "rbp", "r12", "r13", "r14", "r15"))
CALLEE_SAVED = X86_64.callee_saved
ENTRY = X86_64.entry
classify = X86_64.classify
classify_memo = X86_64.classify_memo
transfer = X86_64.transfer
decoder = X86_64.decoder
decode_run = X86_64.decode_run
analyze = X86_64.analyze
is_padding = X86_64.is_padding


class _Dataflow:
    """The worklist solver behind analyze().

    A call whose fall-through state clashes with what other edges bring to
    the next instruction does not return (``abort``, ``_dl_fatal_printf``,
    ``__cxa_throw`` and anything else a name list misses): analyze solves
    again with such calls ending their paths, and takes a blame back when
    the clash point is then no longer reached.
    """

    def __init__(self, isa, read, start, limit, follow, noreturn):
        self.isa = isa
        self.read, self.start = read, start
        self.ranges = [(start, limit)]
        self.follow, self.noreturn = follow, noreturn
        self.insns = {}
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
        rhi = self.range_end(a)
        if rhi is None:
            return None
        data = self.read(a, min(CHUNK, rhi - a))
        if not data:
            return None
        insns = self.insns
        first = None
        classify = self.isa.classify_memo
        for addr, size, mn, ops in self.isa.decoder().disasm_lite(data, a):
            if addr in insns:
                break
            ins = classify(mn, ops)
            if ins[3] == CALL and ins[4] == addr + size:
                ins = _CALL_NEXT            # call 1f; 1: pop %reg -- a push of the pc (i386 PIC)
            ins = insns[addr] = (size,) + ins
            if first is None:
                first = ins
            if ins[4] in (JUMP, STOP, IJUMP):
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
            _sweep(self, end)

    def run(self):
        instate, insns, work = self.instate, self.insns, self.work
        transfer = self.isa.transfer
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
                size, eff, x, y, flow, tgt = ins
                out = transfer(st, eff, x, y) if eff else st
                call = None
                if flow != FALL:
                    if flow == CALL:
                        if not self.call_returns(a, tgt):
                            break
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

    def result(self, start, end):
        insns, instate = self.insns, self.instate
        addrs = sorted(a for a in instate if a in insns)
        interned = {}
        rules = []
        calls = set()
        for a in addrs:
            st = instate[a]
            rule = interned.get(st, False)
            if rule is False:
                rule = interned[st] = (StackHeight.make(self.isa.regs, st[0], st[1], {r: o for r, o in st[2]})
                                       if st[0] is not None or st[1] is not None else None)
            rules.append(rule)
            if insns[a][4] == CALL:
                calls.add(a)
        return FunctionAnalysis(start, end, addrs, [insns[a][0] for a in addrs], rules, calls,
                                self.ranges[1:])


def _sweep(flow, end):
    """Linear passes over [start, end) for what the control flow did not reach.

    Case blocks are reached only through their jump table: after the
    fixpoint they are the code no path reached, so each unreached run (past
    its padding) is entered in the state of the indirect jumps and the
    dataflow goes on.  Then padding after a reached instruction (a ret, a jmp, a call
    that does not return) gets that instruction's state, as compilers' CFI
    gives it: it never runs, but a pc may be looked up there.
    """
    instate, isa = flow.instate, flow.isa
    sweep = isa.decode_run(flow.read, flow.start, end)
    # A jump with a frame is a table's; one without may be either (a leaf's
    # switch, a tail call through a pointer): tables with a frame decide.
    tables = [s for s in flow.ijumps if s != isa.entry] or flow.ijumps
    if tables:
        seed = tables[0]
        for s in tables[1:]:
            seed = merge(seed, s)
        if seed[0] is not None or seed[1] is not None:
            for _round in range(16):
                seeds = []
                starts_run = True       # after reached code, padding, or a jump/ret
                for a, size, mn, ops in sweep:
                    if a in instate:
                        starts_run = True
                    elif isa.is_padding(mn, ops):
                        starts_run = True
                    else:
                        if starts_run:
                            seeds.append(a)
                        starts_run = isa.classify_memo(mn, ops)[3] in (JUMP, STOP, IJUMP)
                if not seeds:
                    break
                for a in seeds:
                    instate[a] = seed
                    flow.work.append(a)
                flow.run()
    prev = None
    for a, size, mn, ops in sweep:
        if a in instate:
            prev = instate[a]
        elif prev is not None and isa.is_padding(mn, ops):
            instate[a] = prev
            flow.insns[a] = (size,) + isa.classify_memo(mn, ops)
        else:
            prev = None
