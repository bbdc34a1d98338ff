"""Stack-height analysis of i386 machine code: arch/x86_64/analysis.py's x86 decoder in
capstone's 32-bit mode feeding arch/dataflow.py's engine, with 4-byte slots, %esp and
%ebp, and the i386 callee-saved registers %ebx, %ebp, %esi and %edi.

What 32-bit code adds is decoded there too: PIC code finds its own address with
``call __x86.get_pc_thunk.bx`` (an ordinary call that returns) or with ``call 1f; 1:
pop %ebx`` (a call to the next instruction: only a push), and ``pushal``/``popal``
move the stack by 32 bytes.

And one idiom no height can describe: GCC realigns ``main``'s stack on i386 ::

    lea  0x4(%esp),%ecx          ecx = the CFA
    and  $-16,%esp
    push -0x4(%ecx)              a copy of the return address ...
    push %ebp; mov %esp,%ebp     ... under a frame record, for frame-pointer walkers
    [push %edi; push %esi; push %ebx]
    push %ecx                    the CFA, kept below them

After it the CFA is the word at %ebp - 4 (- 4 per register pushed before %ecx), the
caller's %ebp is at %ebp and the registers pushed below it: GCC's CFI says the same
with DW_CFA_def_cfa_expression.  The copy of the return address is why a scanner
must not be left to find this frame's caller: it would take the copy's slot.
"""
from ...rule import EXPRESSION, CfaRule, RegRule, UnwindRule
from ..heights import NOT_REACHED, AnalysisError, FunctionAnalysis, StackHeight  # noqa: F401 (re-exported)
from ..x86_64.analysis import CALL, FALL, LEAVE, MAX_CODE, OTHER, STOP, X86  # noqa: F401 (MAX_CODE: re-exported)
from . import registers

I386 = X86(registers, "CS_MODE_32", "esp", "ebp", ("ebx", "ebp", "esi", "edi"))
CALLEE_SAVED = I386.callee_saved
ENTRY = I386.entry
classify = I386.classify
classify_memo = I386.classify_memo
decoder = I386.decoder
decode_run = I386.decode_run
is_padding = I386.is_padding

_DW_OP_BREG0, _DW_OP_DEREF = 0x70, 0x06


def _breg(reg, off):
    """DW_OP_bregN off (off small and negative or zero: one SLEB128 byte)."""
    return bytes([_DW_OP_BREG0 + reg, off & 0x7f])


def realigned_frame(read, start):
    """(end of the idiom, the UnwindRule in the body) if the function at ``start`` opens with
    GCC's realigning prologue (the module doc), else None.  The scheduler may put other
    instructions among the idiom's (a ``mov $imm,%eax``, the PIC thunk's call and ``add``):
    any that leaves %esp, %ebp and %ecx alone is passed over."""
    insns = decode_run(read, start, start + 64)
    want = [("lea", "ecx, [esp + 4]"), ("and", "esp, "), ("push", "dword ptr [ecx - 4]"),
            ("push", "ebp"), ("mov", "ebp, esp")]
    step = 0
    pushed = []
    for a, n, mn, ops in insns:
        if step < len(want):
            wm, wops = want[step]
            if mn == wm and ops.startswith(wops) and (wm == "and" or ops == wops):
                step += 1
                continue
        elif mn == "push" and ops == "ecx":
            k = -4 * (len(pushed) + 1)
            saved = {registers.fp: RegRule(EXPRESSION, _breg(registers.fp, 0)),
                     registers.ra: RegRule("offset", -4)}
            for i, reg in enumerate(pushed):
                saved[reg] = RegRule(EXPRESSION, _breg(registers.fp, -4 * (i + 1)))
            cfa = CfaRule(None, 0, _breg(registers.fp, k) + bytes([_DW_OP_DEREF]))
            return a + n, UnwindRule(None, cfa, saved, False, registers.ra)
        elif mn == "push" and ops in CALLEE_SAVED and ops != "ebp" and len(pushed) < 3:
            pushed.append(CALLEE_SAVED[ops])
            continue
        eff, _x, _y, flow, _t = classify_memo(mn, ops)
        if eff != OTHER or flow not in (FALL, CALL) or ops.split(",", 1)[0] in ("ecx", "cx", "cl"):
            return None
    return None


class _Realigned:
    """The body rule of a realigned main, shaped as a StackHeight: no height is known
    (sp_offset and fp_offset None), saved registers are not at fixed CFA offsets."""
    __slots__ = ("sp_offset", "fp_offset", "saved", "rule")

    def __init__(self, rule):
        self.sp_offset = self.fp_offset = None
        self.saved = {}
        self.rule = rule

    def __repr__(self):
        return f"<StackHeight cfa=*(ebp{self.rule.cfa.expr[1] - 128 if self.rule.cfa.expr[1] & 64 else 0:+d})>"


def analyze(read, start, end=None, follow=None, noreturn=None, hi=None):
    """The x86 analysis in 32-bit mode (arch/dataflow.InstructionSet.analyze), with the body of
    a realigned main given its rule wherever the heights are unknown — but not in an
    epilogue (from a ``leave`` or ``pop %ebp`` to the next stop), where %ebp is the caller's."""
    fa = I386.analyze(read, start, end, follow, noreturn, hi)
    found = realigned_frame(read, start)
    if found is None:
        return fa
    body_at, rule = found
    height = _Realigned(rule)
    in_epilogue = False
    for i, a in enumerate(fa.addrs):
        data = read(a, fa.sizes[i])
        eff = flow = None
        for _a, _n, mn, ops in decoder().disasm_lite(data, a, 1):
            eff, _x, _y, flow, _t = classify_memo(mn, ops)
            if mn == "pop" and ops == "ebp":
                eff = LEAVE
        if eff == LEAVE:
            in_epilogue = True
        if a >= body_at and fa.rules[i] is None and not in_epilogue:
            fa.rules[i] = height
        if flow == STOP:
            in_epilogue = False
    return fa
