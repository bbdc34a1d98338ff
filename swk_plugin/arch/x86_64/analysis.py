"""Stack-height analysis of x86-64 machine code: the x86 decoder of arch/dataflow.py.

Without CFI the only way to find a frame's return address is to know, at the
frame's pc, how far rsp is below the CFA.  The engine (arch/dataflow.py)
follows control flow from the entry and runs the dataflow; this module says
what each instruction does, in the engine's vocabulary of effects:

* ``push``/``pop``/``sub``/``add``/``lea`` on %rsp move sp; ``mov %rsp,%rbp``
  (or ``lea``) makes rbp a frame base, ``mov %rbp,%rsp`` and ``leave`` take sp
  back from it, ``and $-N,%rsp`` leaves only rbp locating the CFA;
* a push or ``mov`` of a callee-saved register to the stack saves it;
* a call pushes the return address (the CFA is rsp + 8 at entry), and a call
  to the very next instruction only pushes the pc (i386 PIC code).

Instructions are decoded with ``disasm_lite`` and classified from their Intel
text: about seven times faster than capstone's detail mode, and every
instruction that matters here has one plain textual form.  ``classify`` gives
an x86 class (PUSH, LEAVE, ...: what the bounds scanner and the tests read);
``decode`` turns it into the engine's effects.  Both are memoised, so a
function costs little more than its decode.
"""
from .. import dataflow as D
from ..dataflow import CALL, COND, FALL, IJUMP, JUMP, MAX_CODE, STOP  # noqa: F401 (re-exported)
from ..heights import NOT_REACHED, AnalysisError, FunctionAnalysis, StackHeight  # noqa: F401 (re-exported)
from . import registers as _ARCH

# x86 instruction classes: what classify() says an instruction does.
OTHER, PUSH, POP, ADJ, SP_UNKNOWN, SP_FROM_FP, FP_FROM_SP, FP_CLOBBER, LEAVE, SAVE_SP, SAVE_FP, \
    ENTER = range(12)

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


class X86(D.InstructionSet):
    """One x86 instruction set for the engine: ``regs`` (a registers module: sp, fp, ra,
    ptr_size), capstone's mode, the names of the stack and frame pointers as capstone
    prints them, and the callee-saved registers by name."""

    def __init__(self, regs, mode, sp_name, fp_name, callee_saved):
        self.mode = mode
        self.slot = regs.ptr_size
        self.sp_name, self.fp_name = sp_name, fp_name
        self.fp = regs.fp
        self.callee_saved = {name: regs.DWARF_NAMES.index(name) for name in callee_saved}
        super().__init__(regs, self.callee_saved.values(), ra_on_stack=True)
        self.store = ("qword" if self.slot == 8 else "dword") + " ptr ["
        self.zero_padding = "byte ptr [" + ("rax" if self.slot == 8 else "eax") + "], al"
        self.classes = {}
        self.records = {}
        self.cs = None
        #: ``call`` to the very next instruction: it only pushes the pc (the ``call 1f; 1: pop
        #: %ebx`` way to find it in i386 PIC code).
        self._call_next = ((D.SP_ADD, -self.slot, None),), FALL, None, False

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

    def effects(self, eff, x, y):
        """The engine's effects of an instruction of class ``eff`` (classify's answer)."""
        slot, fp = self.slot, self.fp
        if eff == OTHER:
            return ()
        if eff == PUSH:                     # a push of a callee-saved register saves it
            return ((D.SP_ADD, -slot, None),) + (((D.SAVE_SP, x, 0),) if x is not None else ())
        if eff == POP:                      # no RESTORE: the slot may hold a pushed temporary
            return (((D.FP_UNKNOWN, None, None),) if x == fp else ()) + ((D.SP_ADD, slot, None),)
        if eff == ADJ:
            return ((D.SP_ADD, -x, None),)
        if eff == SP_UNKNOWN:
            return ((D.SP_UNKNOWN, None, None),)
        if eff == SP_FROM_FP:
            return ((D.SP_FROM_FP, x, None),)
        if eff == FP_FROM_SP:
            return ((D.FP_FROM_SP, x, None),)
        if eff == FP_CLOBBER:
            return ((D.FP_UNKNOWN, None, None),)
        if eff == LEAVE:                    # mov %rbp,%rsp; pop %rbp (the frame record's)
            return (D.SP_FROM_FP, 0, None), (D.RESTORE, fp, None), (D.SP_ADD, slot, None)
        if eff == SAVE_SP:
            return ((D.SAVE_SP, x, y),)
        if eff == SAVE_FP:
            return ((D.SAVE_FP, x, y),)
        if eff == ENTER:                    # push %rbp; mov %rsp,%rbp; sub $x,%rsp
            return ((D.SP_ADD, -slot, None), (D.SAVE_SP, fp, 0), (D.FP_FROM_SP, 0, None)) + \
                (((D.SP_ADD, -x, None),) if x else ())
        raise ValueError(f"x86 class {eff}")

    def record(self, mnemonic, op_str):
        """(effects, flow, target, padding) of one instruction text for the engine, memoised."""
        key = (mnemonic, op_str)
        records = self.records
        r = records.get(key)
        if r is None:
            if len(records) > 200_000:
                records.clear()
            eff, x, y, flow, target = self.classify(mnemonic, op_str)
            r = records[key] = (self.effects(eff, x, y), flow, target, self.is_padding(mnemonic, op_str))
        return r

    def decode(self, data, addr, known):
        """The engine's (address, Insn) of the code ``data`` at ``addr``, linearly (those in
        ``known`` as they are)."""
        records = self.records
        record = self.record
        call_next = self._call_next
        for a, size, mn, ops in self.decoder().disasm_lite(data, addr):
            ins = known.get(a)
            if ins is None:
                r = records.get((mn, ops)) or record(mn, ops)
                if r[1] == CALL and r[2] == a + size:
                    r = call_next           # call 1f; 1: pop %reg -- a push of the pc (i386 PIC)
                ins = (size,) + r
            yield a, ins

    def decode_run(self, read, addr, end):
        """Decode linearly from addr up to end: [(address, size, mnemonic, op_str)]."""
        data = read(addr, end - addr)
        return list(self.decoder().disasm_lite(data, addr)) if data else []

    def is_padding(self, mn, ops):
        """nop, int3, or zero bytes (``add %al,(%rax)``) between functions and before jump targets."""
        return mn.rpartition(" ")[2] in PADDING or (mn == "add" and ops == self.zero_padding)


#: x86-64's: callee-saved registers (System V) rbx, rbp, r12-r15.
X86_64 = X86(_ARCH, "CS_MODE_64", "rsp", "rbp", ("rbx", "rbp", "r12", "r13", "r14", "r15"))
CALLEE_SAVED = X86_64.callee_saved
ENTRY = X86_64.entry
classify = X86_64.classify
classify_memo = X86_64.classify_memo
decoder = X86_64.decoder
decode_run = X86_64.decode_run
analyze = X86_64.analyze
is_padding = X86_64.is_padding
