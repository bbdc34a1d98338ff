"""AnalysisStepper and the stack-height analysis behind it (swk_plugin.analysis).

Synthetic functions are assembled with gcc at test time and checked at every
instruction: the rule's heights and the caller the stepper unwinds (its ra,
sp and callee-saved registers).  Real code is compiled twice, with and
without unwind tables, and the analysis of the CFI-less build is compared
with the CFI of the other at every instruction.
"""
import subprocess

import capstone
import pytest

import swk_suite as S

from swk_plugin.analysis import StackHeight, analyzer_for, frame_rule_at, is_noreturn_name
from swk_plugin.arch.x86_64 import analysis as x86
from swk_plugin.arch.x86_64 import scan
from swk_plugin.dwarf.cfi import CfiTable
from swk_plugin.elf.module import ElfModule
from swk_plugin.errors import MemoryReadError
from swk_plugin.frame import Frame, Location
from swk_plugin.procstate import LIBRARY_LOAD, Library, MemoryRegion
from swk_plugin.stepper import Gcf, PRIORITY_ANALYSIS
from swk_plugin.steppergroup import StepperGroup
from swk_plugin.steppers.analysis import AnalysisStepper
from swk_plugin.elf.symbols import module_symbols
from swk_plugin.walker import Walker

from synthetic import (R12, RBP, RBX, RIP, RSP, FakeModule, FakeProcess, FakeSection, FakeSymbol,
                       FakeSymbols, fake_library)
from test_cfi import X86_CIE, EhFrame

R13, R14, R15 = 13, 14, 15
TEXT = 0x401000
CFA = 0x7ff0100
JIT = 0x7f0000200000
CALLER_REGS = {RBX: 0xb0b0b0, RBP: 0x7ff0800, R12: 0x1212, R13: 0x1313, R14: 0x1414, R15: 0x1515}
JUNK = 0xdeadbeef

needs_gcc = S.mark_needs("gcc", "objcopy", "nm", "objdump")


# --- helpers -----------------------------------------------------------------------------------------

class Symbols(FakeSymbols):
    """FakeSymbols that can be iterated and searched by name, as SymbolTable can."""

    def lookup(self, addr):
        best = None
        for s in self.syms:
            if s.value <= addr and (addr < s.value + s.size or not s.size):
                best = s
        if best is not None and not best.size:
            later = [s.value for s in self.syms if s.value > best.value]
            if later and addr >= min(later):
                return None
        return (best, addr - best.value) if best is not None else None

    def by_name(self, name):
        return [s for s in self.syms if s.name == name]

    def __iter__(self):
        return iter(self.syms)


def assemble(tmp_path, source, name="code"):
    """Assemble AT&T ``source`` into .text: (bytes, {label: offset})."""
    src = tmp_path / f"{name}.S"
    obj = tmp_path / f"{name}.o"
    binf = tmp_path / f"{name}.bin"
    src.write_text(".text\n" + source + "\n")
    subprocess.run(["gcc", "-c", str(src), "-o", str(obj)], check=True, capture_output=True)
    subprocess.run(["objcopy", "-O", "binary", "-j", ".text", str(obj), str(binf)], check=True,
                   capture_output=True)
    out = subprocess.run(["nm", str(obj)], check=True, capture_output=True, text=True).stdout
    labels = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tT":
            labels[parts[2]] = int(parts[0], 16)
    return binf.read_bytes(), labels


def function_source(name, lines):
    """Assembly for ``lines`` [(instruction, h, fp, saved)] with a label per instruction."""
    out = [f"{name}:"]
    for i, (insn, *_rest) in enumerate(lines):
        out.append(f"{name}_i{i}: {insn}")
    out.append(f"{name}_end:")
    return "\n".join(out)


def make_process(code, symbols=(), sections=(), regs=None, base=TEXT):
    mod = FakeModule("/bin/synthetic", text=(base, base + len(code)), sections=sections)
    mod.cache.set("symbols", Symbols([FakeSymbol(*s) for s in symbols]))
    ps = FakeProcess({1: regs or {RIP: base, RSP: CFA - 8}}, libs=[fake_library(mod)],
                     blobs={base: code})
    return ps, mod


def analysis_walker(ps):
    group = StepperGroup()
    w = Walker(ps, stepper_group=group)
    stepper = AnalysisStepper(w)
    group.add_stepper(stepper)
    return w, stepper


def frame_at(w, pc, sp, regs, top=True):
    f = Frame(pc, sp, regs.get(RBP, 0), walker=w, regs={**regs, RIP: pc, RSP: sp})
    f.is_top = top
    f.thread = 1
    return f


def callee_regs(h, fp, saved):
    """The callee's registers at a point where ``saved`` registers may have been changed."""
    regs = {}
    for r, v in CALLER_REGS.items():
        regs[r] = JUNK + r if r in saved else v
    if fp is not None:
        regs[RBP] = CFA - fp
    return regs


def sp_for(h):
    return CFA - h if h is not None else ((CFA - 0x40) & ~63) - 0x100     # realigned: below any save


# Synthetic functions: (instruction, h = CFA - rsp before it, fp = CFA - rbp or None,
# callee-saved registers whose caller values are in the stack).  g and caller are helpers.
PROLOGUE_TWO_EPILOGUES = [
    ("push %rbp", 8, None, ""),
    ("push %rbx", 16, None, "rbp"),
    ("push %r12", 24, None, "rbp rbx"),
    ("sub $0x20,%rsp", 32, None, "rbp rbx r12"),
    ("mov %rdi,%rbx", 64, None, "rbp rbx r12"),
    ("test %rdi,%rdi", 64, None, "rbp rbx r12"),
    ("je .Lalt", 64, None, "rbp rbx r12"),
    ("call g", 64, None, "rbp rbx r12"),
    ("mov %rax,%r12", 64, None, "rbp rbx r12"),
    ("add $0x20,%rsp", 64, None, "rbp rbx r12"),
    ("pop %r12", 32, None, "rbp rbx r12"),
    ("pop %rbx", 24, None, "rbp rbx"),
    ("pop %rbp", 16, None, "rbp"),
    ("ret", 8, None, ""),
    (".Lalt: xor %eax,%eax", 64, None, "rbp rbx r12"),
    ("call g", 64, None, "rbp rbx r12"),
    ("add $0x20,%rsp", 64, None, "rbp rbx r12"),
    ("pop %r12", 32, None, "rbp rbx r12"),
    ("pop %rbx", 24, None, "rbp rbx"),
    ("pop %rbp", 16, None, "rbp"),
    ("ret", 8, None, ""),
]
PROLOGUE_SLOTS = {RBP: -16, RBX: -24, R12: -32}

MOV_SAVES_TAIL_CALL = [
    ("sub $0x28,%rsp", 8, None, ""),
    ("mov %rbx,0x10(%rsp)", 48, None, ""),
    ("mov %r12,0x18(%rsp)", 48, None, "rbx"),
    ("mov %rdi,%rbx", 48, None, "rbx r12"),
    ("test %rdi,%rdi", 48, None, "rbx r12"),
    ("jne .Lbig", 48, None, "rbx r12"),
    ("mov 0x10(%rsp),%rbx", 48, None, "rbx r12"),
    ("mov 0x18(%rsp),%r12", 48, None, "rbx r12"),
    ("add $0x28,%rsp", 48, None, "rbx r12"),
    ("jmp g", 8, None, ""),
    (".Lbig: call g", 48, None, "rbx r12"),
    ("mov %rax,%r12", 48, None, "rbx r12"),
    ("mov 0x10(%rsp),%rbx", 48, None, "rbx r12"),
    ("mov 0x18(%rsp),%r12", 48, None, "rbx r12"),
    ("add $0x28,%rsp", 48, None, "rbx r12"),
    ("ret", 8, None, ""),
]
MOV_SLOTS = {RBX: -32, R12: -24}

REALIGN = [
    ("push %rbp", 8, None, ""),
    ("mov %rsp,%rbp", 16, None, "rbp"),
    ("push %rbx", 16, 16, "rbp"),
    ("and $-64,%rsp", 24, 16, "rbp rbx"),
    ("sub $0x80,%rsp", None, 16, "rbp rbx"),
    ("call g", None, 16, "rbp rbx"),
    ("lea -8(%rbp),%rsp", None, 16, "rbp rbx"),
    ("pop %rbx", 24, 16, "rbp rbx"),
    ("pop %rbp", 16, 16, "rbp"),
    ("ret", 8, None, ""),
]
REALIGN_SLOTS = {RBP: -16, RBX: -24}

LEAVE = [
    ("push %rbp", 8, None, ""),
    ("mov %rsp,%rbp", 16, None, "rbp"),
    ("sub $0x10,%rsp", 16, 16, "rbp"),
    ("call g", 32, 16, "rbp"),
    ("leave", 32, 16, "rbp"),
    ("ret", 8, None, ""),
]
LEAVE_SLOTS = {RBP: -16}

LEAF = [
    ("mov %rdi,%rax", 8, None, ""),
    ("add $1,%rax", 8, None, ""),
    ("ret", 8, None, ""),
]

NAMES = {"rbx": RBX, "rbp": RBP, "r12": R12, "r13": R13, "r14": R14, "r15": R15}
CASES = {
    "prologue_two_epilogues": (PROLOGUE_TWO_EPILOGUES, PROLOGUE_SLOTS),
    "mov_saves_tail_call": (MOV_SAVES_TAIL_CALL, MOV_SLOTS),
    "realign": (REALIGN, REALIGN_SLOTS),
    "leave_epilogue": (LEAVE, LEAVE_SLOTS),
    "frameless_leaf": (LEAF, {}),
}
HELPERS = """
caller:
    call f
ret_here:
    ret
    .p2align 4
g:
    ret
    .p2align 4
"""


def build_case(tmp_path, lines, slots):
    code, labels = assemble(tmp_path, HELPERS + function_source("f", lines))
    f, end = TEXT + labels["f"], TEXT + labels["f_end"]
    syms = [("caller", TEXT + labels["caller"], labels["g"] - labels["caller"]),
            ("g", TEXT + labels["g"], 1), ("f", f, end - f)]
    ps, mod = make_process(code, syms)
    ps.write_words(CFA - 8, TEXT + labels["ret_here"])
    for reg, off in slots.items():
        ps.write_words(CFA + off, CALLER_REGS[reg])
    return ps, labels


@needs_gcc
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_instruction_unwinds_to_the_caller(tmp_path, case):
    lines, slots = CASES[case]
    ps, labels = build_case(tmp_path, lines, slots)
    w, stepper = analysis_walker(ps)
    ret_here = TEXT + labels["ret_here"]
    for i, (insn, h, fp, saved) in enumerate(lines):
        pc = TEXT + labels[f"f_i{i}"]
        saved = {NAMES[n] for n in saved.split()}
        rule = frame_rule_at(w.process_state, pc, True)
        where = f"{case} #{i} {insn!r}"
        assert isinstance(rule, StackHeight), where
        assert (rule.sp_offset, rule.fp_offset) == (h, fp), where
        assert rule.rule.cfa.reg == (RSP if h is not None else RBP), where
        assert set(rule.saved) == saved, where
        assert all(rule.saved[r] == slots[r] for r in saved), where
        assert rule.rule.regs[RIP].arg == -8                       # the return address below the CFA
        assert rule.rule.saved_offsets() == {**rule.saved, RIP: -8}, where
        regs = callee_regs(h, fp, saved)
        top = frame_at(w, pc, sp_for(h), regs)
        status, caller = stepper.get_caller_frame(top)
        assert status is Gcf.SUCCESS, (where, caller)
        assert (caller.ra, caller.sp, caller.callee_cfa) == (ret_here, CFA, CFA), where
        for r, v in CALLER_REGS.items():
            assert caller.regs[r] == v, (where, r)
        assert caller.fp == CALLER_REGS[RBP] and caller.regs[RIP] == ret_here
        assert caller.regs[RSP] == CFA
        assert caller.ra_location == Location.address(CFA - 8)
        for r in saved:
            assert caller.reg_locations[r] == Location.address(CFA + slots[r]), where
        assert not set(caller.regs) - {RBX, RBP, R12, R13, R14, R15, RSP, RIP}   # caller-saved dropped
        if "call" in insn.split():
            # the same frame as g's caller: looked up at the return address minus one
            ra = TEXT + labels[f"f_i{i + 1}"]
            mid = frame_at(w, ra, sp_for(h), regs, top=False)
            assert frame_rule_at(w.process_state, mid.lookup_pc, False) is rule
            status, caller2 = stepper.get_caller_frame(mid)
            assert status is Gcf.SUCCESS and caller2.ra == ret_here and caller2.sp == CFA, where
            assert all(caller2.regs[r] == v for r, v in CALLER_REGS.items()), where


@needs_gcc
def test_walk_through_two_analysed_frames(tmp_path):
    lines, slots = PROLOGUE_TWO_EPILOGUES, PROLOGUE_SLOTS
    ps, labels = build_case(tmp_path, lines, slots)
    # g's frame on top of f's: g is a one-instruction leaf at its ret
    g_sp = CFA - 64 - 8
    ps.write_words(g_sp, TEXT + labels["f_i8"])          # return address into f after "call g"
    ps.regs_by_thread[1] = {**callee_regs(64, None, {RBX, RBP, R12}), RIP: TEXT + labels["g"], RSP: g_sp}
    ps.write_words(CFA, 0)                                # the caller's own return address: 0
    w, _ = analysis_walker(ps)
    walk = w.walk_stack(max_frames=3)
    assert [f.ra for f in walk] == [TEXT + labels["g"], TEXT + labels["f_i8"], TEXT + labels["ret_here"]]
    assert [f.trust for f in walk] == ["context", "analysis", "analysis"]
    assert walk[2].regs[RBX] == CALLER_REGS[RBX] and walk[1].regs[RBX] == JUNK + RBX


def test_stepper_identity_and_helper_names():
    s = AnalysisStepper()
    assert (s.name, s.priority, s.trust) == ("AnalysisStepper", PRIORITY_ANALYSIS, "analysis")
    assert is_noreturn_name("abort@plt") and is_noreturn_name("_ZSt20__throw_length_errorPKc")
    assert not is_noreturn_name("printf") and not is_noreturn_name(None)


# --- classification -------------------------------------------------------------------------------

@pytest.mark.parametrize("mn, ops, expect", [
    ("push", "rbx", (x86.PUSH, RBX, None, x86.FALL, None)),
    ("push", "rax", (x86.PUSH, None, None, x86.FALL, None)),
    ("push", "0", (x86.PUSH, None, None, x86.FALL, None)),
    ("pushfq", "", (x86.PUSH, None, None, x86.FALL, None)),
    ("popfq", "", (x86.POP, None, None, x86.FALL, None)),
    ("pop", "rsp", (x86.SP_UNKNOWN, None, None, x86.FALL, None)),
    ("sub", "rsp, 0x18", (x86.ADJ, 0x18, None, x86.FALL, None)),
    ("sub", "rsp, -0x80", (x86.ADJ, -0x80, None, x86.FALL, None)),
    ("add", "rsp, 8", (x86.ADJ, -8, None, x86.FALL, None)),
    ("sub", "rsp, rax", (x86.SP_UNKNOWN, None, None, x86.FALL, None)),
    ("and", "rsp, 0xffffffffffffffc0", (x86.SP_UNKNOWN, None, None, x86.FALL, None)),
    ("lea", "rsp, [rsp + 8]", (x86.ADJ, -8, None, x86.FALL, None)),
    ("lea", "rsp, [rbp - 0x18]", (x86.SP_FROM_FP, -0x18, None, x86.FALL, None)),
    ("mov", "rsp, rbp", (x86.SP_FROM_FP, 0, None, x86.FALL, None)),
    ("mov", "rbp, rsp", (x86.FP_FROM_SP, 0, None, x86.FALL, None)),
    ("lea", "rbp, [rsp + 0x10]", (x86.FP_FROM_SP, 0x10, None, x86.FALL, None)),
    ("mov", "rbp, rdi", (x86.FP_CLOBBER, None, None, x86.FALL, None)),
    ("xor", "ebp, ebp", (x86.FP_CLOBBER, None, None, x86.FALL, None)),
    ("cmp", "rbp, rax", (x86.OTHER, None, None, x86.FALL, None)),
    ("mov", "qword ptr [rsp + 0x18], rbx", (x86.SAVE_SP, RBX, 0x18, x86.FALL, None)),
    ("mov", "qword ptr [rbp - 8], r12", (x86.SAVE_FP, R12, -8, x86.FALL, None)),
    ("mov", "qword ptr [rsp + rax*8], rbx", (x86.OTHER, None, None, x86.FALL, None)),
    ("leave", "", (x86.LEAVE, None, None, x86.FALL, None)),
    ("enter", "0x10, 0", (x86.ENTER, 0x10, None, x86.FALL, None)),
    ("xchg", "rax, rsp", (x86.SP_UNKNOWN, None, None, x86.FALL, None)),
    ("call", "0x1000", (x86.OTHER, None, None, x86.CALL, 0x1000)),
    ("call", "qword ptr [rip + 0x10]", (x86.OTHER, None, None, x86.CALL, None)),
    ("jmp", "0x1000", (x86.OTHER, None, None, x86.JUMP, 0x1000)),
    ("notrack jmp", "rax", (x86.OTHER, None, None, x86.IJUMP, None)),
    ("jne", "0x1000", (x86.OTHER, None, None, x86.COND, 0x1000)),
    ("loop", "0x1000", (x86.OTHER, None, None, x86.COND, 0x1000)),
    ("bnd ret", "", (x86.OTHER, None, None, x86.STOP, None)),
    ("repz ret", "", (x86.OTHER, None, None, x86.STOP, None)),
    ("ud2", "", (x86.OTHER, None, None, x86.STOP, None)),
    ("mov", "rax, qword ptr [rsp + 8]", (x86.OTHER, None, None, x86.FALL, None)),
])
def test_classify(mn, ops, expect):
    assert x86.classify(mn, ops) == expect


def analyse_bytes(code, base=TEXT, end=True, **kw):
    def read(a, n):
        off = a - base
        return code[off:off + n] if 0 <= off < len(code) else b""
    return x86.analyze(read, base, base + len(code) if end else None, **kw)


def heights(fa):
    return {a: (r.sp_offset if r is not None else None) for a, _s, r in fa.instructions()}


@needs_gcc
def test_jump_table_cases_are_reached(tmp_path):
    code, lab = assemble(tmp_path, """
f:  push %rbx
    lea table(%rip),%rdx
    movslq (%rdx,%rdi,4),%rax
    add %rdx,%rax
    jmp *%rax
    .p2align 4
case0: mov $1,%eax
    pop %rbx
    ret
    .p2align 4
case1: call g
    pop %rbx
    ret
g:  ret
table: .long case0-table, case1-table
""")
    fa = analyse_bytes(code[:lab["g"]])
    h = heights(fa)
    assert h[TEXT + lab["case0"]] == 16 and h[TEXT + lab["case1"]] == 16
    assert fa.rule_at(TEXT + lab["case1"] + 4, False).sp_offset == 16   # inside the call


@needs_gcc
def test_a_call_that_does_not_return_is_found_by_its_clash(tmp_path):
    # die has no name to go by; the code after its call is entered with another height
    code, lab = assemble(tmp_path, """
f:  test %rsi,%rsi
    je next
    push %rbx
    test %rdi,%rdi
    jne err
    pop %rbx
    ret
err: call die
next: xor %eax,%eax
    ret
die: hlt
""")
    fa = analyse_bytes(code[:lab["die"]])
    h = heights(fa)
    assert h[TEXT + lab["err"]] == 16 and h[TEXT + lab["next"]] == 8 and h[TEXT + lab["next"] + 2] == 8
    assert fa.rule_at(TEXT + lab["err"] + 1, False).saved == {RBX: -16}


@needs_gcc
def test_a_loop_moving_rsp_after_a_call_does_not_kill_the_call(tmp_path):
    # the clash at the loop head is the loop's own: the call still returns
    code, lab = assemble(tmp_path, """
f:  push %rbx
    call g
loop: sub $0x1000,%rsp
    cmp %rsp,%rdi
    jne loop
    mov %rdi,%rsp
    pop %rbx
    ret
g:  ret
""")
    fa = analyse_bytes(code[:lab["g"]])
    assert fa.rule_at(TEXT + lab["loop"] - 1, False).sp_offset == 16
    assert fa.rule_at(TEXT + lab["loop"], True) is None          # reached, height unknown


@needs_gcc
def test_unknown_heights_and_unreadable_code_are_not_me(tmp_path):
    code, lab = assemble(tmp_path, """
f:  push %rbx
    sub %rdi,%rsp
    call g
    ret
g:  ret
""")
    ps, _ = make_process(code, [("f", TEXT, lab["g"]), ("g", TEXT + lab["g"], 1)])
    w, stepper = analysis_walker(ps)
    assert frame_rule_at(w.process_state, TEXT + 1, True).sp_offset == 16
    pc = TEXT + lab["g"] - 6         # the call: the height is unknown after sub %rdi,%rsp
    status, why = stepper.get_caller_frame(frame_at(w, pc, CFA - 0x40, {}))
    assert status is Gcf.NOT_ME and "unknown" in why
    status, why = stepper.get_caller_frame(frame_at(w, TEXT + 2, CFA - 0x40, {}))   # mid-instruction
    assert status is Gcf.NOT_ME and "not an instruction" in why
    status, why = stepper.get_caller_frame(frame_at(w, 0x900000, CFA - 0x40, {}))
    assert status is Gcf.NOT_ME
    # a caller frame whose return address does not follow a call
    status, why = stepper.get_caller_frame(frame_at(w, TEXT + 2, CFA - 0x40, {}, top=False))
    assert status is Gcf.NOT_ME and "not a call" in why


# --- function bounds ------------------------------------------------------------------------------

@needs_gcc
def test_bounds_from_sized_and_size_zero_symbols_and_cold_parts(tmp_path):
    code, lab = assemble(tmp_path, """
p:  push %rbx
    push %r12
    test %rdi,%rdi
    jne p.cold
    pop %r12
    pop %rbx
    ret
    .p2align 4
q:  sub $8,%rsp
    call p
    add $8,%rsp
    ret
    .p2align 4
nosize:
    push %rbp
    call q
    pop %rbp
    ret
    .p2align 4
p.cold:
    call q
    hlt
end:
orphan.cold:
    push %rbx
    call q
    hlt
"""
)
    syms = [("p", TEXT, lab["q"]), ("q", TEXT + lab["q"], lab["nosize"] - lab["q"]),
            ("nosize", TEXT + lab["nosize"], 0), ("p.cold", TEXT + lab["p.cold"], lab["end"] - lab["p.cold"]),
            ("orphan.cold", TEXT + lab["orphan.cold"], 7)]
    ps, _ = make_process(code, syms)
    w, _ = analysis_walker(ps)
    an = analyzer_for(w.process_state)
    fa, b = an.function_at(TEXT + lab["nosize"] + 1)
    assert (b.how, b.start, b.end) == ("symbol", TEXT + lab["nosize"], TEXT + lab["p.cold"])
    assert frame_rule_at(w.process_state, TEXT + lab["nosize"] + 2, False).sp_offset == 16
    # the cold part is analysed within p: its height is p's at the jump
    fa, b = an.function_at(TEXT + lab["p.cold"])
    assert b.start == TEXT and fa.extras == ((TEXT + lab["p.cold"], TEXT + lab["end"]),)
    assert frame_rule_at(w.process_state, TEXT + lab["p.cold"], True).sp_offset == 24
    assert frame_rule_at(w.process_state, TEXT + lab["p.cold"] + 4, False).saved == {RBX: -16, R12: -24}
    # a cold part without its parent has no entry: no guess from its own start
    assert an.lookup(TEXT + lab["orphan.cold"] + 1, True) == (None, "no function bounds for this address")


GAP_SOURCE = """
a:  sub $8,%rsp
    call b1
    add $8,%rsp
    ret
a_end:
    .p2align 5
b1: push %rbx
    call b2
    pop %rbx
    ret
    .p2align 4
b2: sub $0x18,%rsp
    test %rdi,%rdi
    jne b2_more
    add $0x18,%rsp
    ret
    .p2align 4
b2_more:
    call b1
    add $0x18,%rsp
    ret
    .p2align 4
b3: push %r12
    push %r13
    call b1
    pop %r13
    pop %r12
    ret
    int3
    int3
c:  push %rbp
    call b3
    pop %rbp
    ret
c_end:
"""


@needs_gcc
def test_bounds_from_the_gap_between_fdes(tmp_path):
    code, lab = assemble(tmp_path, GAP_SOURCE)
    eh = EhFrame(addr=0x600000)
    cie = eh.cie(ins=X86_CIE)
    eh.fde(cie, TEXT, TEXT + lab["a_end"], b"")
    eh.fde(cie, TEXT + lab["c"], TEXT + lab["c_end"], b"")
    eh.terminate()
    ps, mod = make_process(code, sections=[FakeSection(".eh_frame", 0x600000, eh.data)])
    w, stepper = analysis_walker(ps)
    an = analyzer_for(w.process_state)
    want = {"b1": "b2", "b2": "b3", "b3": "c"}
    for name, nxt in want.items():
        for pc in range(TEXT + lab[name], TEXT + lab[nxt]):
            fa, b = an.function_at(pc)
            if fa is None:      # not an instruction boundary
                continue
            assert b.how == "gap" and b.start == TEXT + lab[name], (name, hex(pc))
    assert frame_rule_at(w.process_state, TEXT + lab["b2_more"], True).sp_offset == 32   # not a function start
    assert frame_rule_at(w.process_state, TEXT + lab["b3"] + 4, True).sp_offset == 24
    # inside an FDE the CFI's range is the function (when there are no symbols)
    fa, b = an.function_at(TEXT + 4)
    assert (b.how, b.start) == ("cfi", TEXT)


def test_split_gap_keeps_jump_targets_inside_functions():
    # f: jne over a ret to an aligned label; then g after padding, called by nobody
    md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    code = bytes.fromhex("90 90 53 85ff 7502 5b c3 5b c3".replace(" ", "")) + b"\xcc" * 5 + \
        bytes.fromhex("4883ec08 4883c408 c3")
    assert [i[2] for i in md.disasm_lite(code, 0)][:4] == ["nop", "nop", "push", "test"]
    starts = scan.split_gap(code, 0x1000)
    assert starts == [0x1002, 0x1010]


@needs_gcc
def test_bounds_by_backward_search_in_anonymous_memory(tmp_path):
    code, lab = assemble(tmp_path, """
stub0:
    push %rbx
    mov $1,%eax
    pop %rbx
    ret
    .p2align 4
stub1:
    push %rbp
    push %r15
    sub $0x28,%rsp
    mov %rdi,%r15
    call *%rax
after_call:
    add $0x28,%rsp
    pop %r15
    pop %rbp
    ret
    .p2align 4, 0xcc
stub2:
    endbr64
    push %r14
    nop
    pop %r14
    ret
""")
    regions = [MemoryRegion(JIT, JIT + 0x1000, executable=True, name="[anon]")]
    ps = FakeProcess({1: {RIP: JIT + lab["after_call"], RSP: CFA - 64}}, blobs={JIT: code.ljust(0x1000, b"\0")},
                     regions=regions)
    ps.write_words(CFA - 8, JIT + lab["stub2"] + 6)        # a return address in the same region
    ps.write_words(CFA - 24, CALLER_REGS[R15])
    ps.write_words(CFA - 16, CALLER_REGS[RBP])
    w, stepper = analysis_walker(ps)
    an = analyzer_for(w.process_state)
    fa, b = an.function_at(JIT + lab["after_call"] + 4)
    assert (b.how, b.start, b.end) == ("search", JIT + lab["stub1"], None)
    top = frame_at(w, JIT + lab["after_call"], CFA - 64, {R15: JUNK, RBP: JUNK})
    status, caller = stepper.get_caller_frame(top)
    assert status is Gcf.SUCCESS
    assert (caller.ra, caller.sp, caller.regs[R15], caller.fp) == \
        (JIT + lab["stub2"] + 6, CFA, CALLER_REGS[R15], CALLER_REGS[RBP])
    # the caller is in the last stub (endbr64 after int3 padding), one push deep at the ra
    rule = frame_rule_at(w.process_state, JIT + lab["stub2"] + 6, True)
    assert rule.sp_offset == 16 and rule.saved == {R14: -16}
    fa, b = an.function_at(JIT + lab["stub2"] + 6)
    assert b.start == JIT + lab["stub2"]
    assert frame_rule_at(w.process_state, JIT + lab["stub0"] + 1, True).sp_offset == 16    # the mapping's start
    # a caller frame in JIT code: its pc is a return address, inside the call at ra-1
    mid = frame_at(w, JIT + lab["after_call"], CFA - 64, {R15: JUNK, RBP: JUNK}, top=False)
    status, caller2 = stepper.get_caller_frame(mid)
    assert status is Gcf.SUCCESS and (caller2.ra, caller2.sp) == (caller.ra, CFA)
    assert an.function_at(JIT + lab["after_call"] - 1, exact=False)[1].start == JIT + lab["stub1"]
    # a return address not after a call is refused before any search
    assert frame_rule_at(w.process_state, JIT + lab["stub1"] + 3, False) is None
    # JIT code may change: analyses are redone after the target ran
    n = an.analyses
    frame_rule_at(w.process_state, JIT + lab["after_call"], True)
    assert an.analyses == n
    ps.invalidate()
    frame_rule_at(w.process_state, JIT + lab["after_call"], True)
    assert an.analyses > n


@needs_gcc
def test_return_address_outside_executable_memory_is_not_me(tmp_path):
    ps, labels = build_case(tmp_path, LEAF, {})
    ps.write_words(CFA - 8, 0x12345678)
    w, stepper = analysis_walker(ps)
    status, why = stepper.get_caller_frame(frame_at(w, TEXT + labels["f_i1"], CFA - 8, {}))
    assert status is Gcf.NOT_ME and "executable" in why
    ps.blobs.pop(CFA - 8)                # an unreadable return-address slot: the walker's not_me
    with pytest.raises(MemoryReadError):
        stepper.get_caller_frame(frame_at(w, TEXT + labels["f_i1"], CFA - 8, {}))


@needs_gcc
def test_cache_is_per_function_and_cleared_by_library_changes(tmp_path):
    lines, slots = PROLOGUE_TWO_EPILOGUES, PROLOGUE_SLOTS
    ps, labels = build_case(tmp_path, lines, slots)
    w, stepper = analysis_walker(ps)
    an = analyzer_for(w.process_state)
    for i in range(len(lines)):
        frame_rule_at(w.process_state, TEXT + labels[f"f_i{i}"], True)
    assert an.analyses == 1
    ps.invalidate()                      # module code is not re-analysed after the target runs
    frame_rule_at(w.process_state, TEXT + labels["f_i3"], True)
    assert an.analyses == 1
    stepper.new_library_notification(Library("/lib/x.so", 0), LIBRARY_LOAD)
    frame_rule_at(w.process_state, TEXT + labels["f_i3"], True)
    assert an.analyses == 2
    ps.library_state.libs = []           # unloading through the library state also clears it
    ps.library_state.notify_of_update()
    assert not an._functions


# --- real code: the analysis against gcc's own CFI ---------------------------------------------------

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <alloca.h>
#include <setjmp.h>

#define NI __attribute__((noinline))
volatile int sink;
static int table[256];

NI int leaf(int a, int b) { return a * b + 3; }
NI long fib(long n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
NI int sw(int k, int v) {
    switch (k) {
    case 0: return v + 1;
    case 1: return leaf(v, 2) * 7;
    case 2: sink = v; return fib(v & 7);
    case 3: return v ^ 0x55;
    case 4: return leaf(v, v) - 9;
    case 5: return (int)strlen((char *)&table[v & 7]);
    case 6: return v << 3;
    case 7: sink = 1; return 2;
    default: return -1;
    }
}
NI int leafsw(int k) {
    switch (k) { case 0: return 4; case 1: return 9; case 2: return 17; case 3: return 1;
                 case 4: return 77; case 5: return 5; default: return 0; }
}
NI int with_vla(int n) {
    char buf[n];
    memset(buf, n, n);
    int s = 0;
    for (int i = 0; i < n; i++) s += buf[i] * leaf(i, s);
    return s;
}
NI int with_alloca(int n) {
    char *p = alloca(n + 16);
    snprintf(p, n + 16, "%d", n);
    return (int)strlen(p) + leaf(n, 1);
}
NI int aligned(int x) {
    _Alignas(64) char buf[128];
    memset(buf, x, sizeof buf);
    sink = buf[x & 63];
    return leaf(buf[1], x);
}
NI int many_regs(int *a, int n) {
    int s1 = 0, s2 = 1, s3 = 2, s4 = 3, s5 = 4, s6 = 5;
    for (int i = 0; i < n; i++) {
        s1 += leaf(a[i], s2); s2 ^= leaf(s1, s3); s3 += leaf(s4, i);
        s4 -= leaf(s5, s6); s5 += leaf(s6, s1); s6 ^= leaf(i, s2);
    }
    return s1 + s2 + s3 + s4 + s5 + s6;
}
NI int checked(int x) {
    if (__builtin_expect(x < 0, 0)) { fprintf(stderr, "negative %d\n", x); abort(); }
    if (x > 1000000) exit(3);
    return leaf(x, x + 1);
}
NI int vsum(int n, ...) {
    va_list ap; va_start(ap, n);
    int s = 0;
    for (int i = 0; i < n; i++) s += va_arg(ap, int);
    va_end(ap);
    return s;
}
struct big { long a[12]; };
NI struct big mkbig(long x) {
    struct big b;
    for (int i = 0; i < 12; i++) b.a[i] = x * i + leaf(i, (int)x);
    return b;
}
NI long usebig(long x) { struct big b = mkbig(x); return b.a[3] + b.a[11]; }
NI int tail(int x) { if (x & 1) return leaf(x, 3); return sw(x & 7, x); }
NI int stackargs(int a, int b, int c, int d, int e, int f, int g, int h, int i) {
    return leaf(a + b + c, d + e) + f * g + h * i;
}
NI int callstackargs(int x) { return stackargs(x, 1, 2, 3, 4, 5, 6, 7, 8) + stackargs(8, 7, 6, 5, 4, 3, 2, 1, x); }
static jmp_buf jb;
NI int jumper(int x) { if (x) longjmp(jb, x); return leaf(x, 2); }
NI int setter(int x) { if (setjmp(jb)) return 7; return jumper(x); }
NI double fp(double *a, int n) { double s = 0; for (int i = 0; i < n; i++) s += a[i] * leaf(i, n); return s; }
NI char *strstuff(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    char *r = malloc(la + lb + 1);
    if (!r) return NULL;
    memcpy(r, a, la); memcpy(r + la, b, lb + 1);
    return r;
}
NI int loops(int n) {
    int s = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if ((i ^ j) & 1) s += table[(i + j) & 255]; else s -= leaf(i, j);
    return s;
}
static NI int by_pointer(int x) { return leaf(x, x) + sink; }
int (*volatile fptr)(int) = by_pointer;
int main(int argc, char **argv) {
    int a[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    double d[3] = {1, 2, 3};
    int s = leaf(argc, 2) + (int)fib(10) + sw(argc, 3) + with_vla(argc + 5) + with_alloca(argc)
        + aligned(argc) + many_regs(a, 8) + checked(argc) + vsum(3, 1, 2, 3) + (int)usebig(argc)
        + tail(argc) + callstackargs(argc) + setter(0) + (int)fp(d, 3) + loops(argc + 10)
        + leafsw(argc) + fptr(argc);
    char *p = strstuff(argv[0], "x");
    printf("%d %s\n", s, p);
    free(p);
    return 0;
}
"""
CFLAGS = ["-fomit-frame-pointer", "-g0"]
NO_CFI = ["-fno-asynchronous-unwind-tables", "-fno-unwind-tables"]
WITH_CFI = ["-fasynchronous-unwind-tables"]
CALLEE_SAVED = (RBX, RBP, R12, R13, R14, R15)


def compile_twice(tmp_path, opt, sources, nocfi_units=None):
    """Build sources with and without unwind tables; return both paths once their code is identical.

    nocfi_units: indices of the sources built without tables in the first binary (default all).
    """
    units = range(len(sources)) if nocfi_units is None else nocfi_units
    out = []
    for variant in ("nocfi", "cfi"):
        objs = []
        for i, text in enumerate(sources):
            src = tmp_path / f"u{i}.c"
            src.write_text(text)
            obj = tmp_path / f"u{i}-{variant}.o"
            tables = NO_CFI if variant == "nocfi" and i in units else WITH_CFI
            subprocess.run(["gcc", opt, *CFLAGS, *tables, "-c", str(src), "-o", str(obj)], check=True)
            objs.append(str(obj))
        exe = tmp_path / f"prog-{variant}"
        subprocess.run(["gcc", opt, *objs, "-o", str(exe)], check=True)
        out.append(exe)
    dis = [subprocess.run(["objdump", "-d", str(p)], capture_output=True, text=True, check=True).stdout
           .split("\n", 3)[3] for p in out]
    if dis[0] != dis[1]:
        S.toolchain_quirk("gcc made different code with and without unwind tables: the comparison "
                          "of the analysis with the CFI needs the very same instructions")
    return out


def load_module(path):
    mod = ElfModule(str(path))
    blobs = {lo: mod.read_vaddr(lo, hi - lo) for lo, hi in mod.exec_spans()}
    lib = Library(str(path), 0, lambda _l: mod)
    lib.is_aout = True
    ps = FakeProcess({1: {RIP: 0, RSP: CFA}}, libs=[lib], blobs=blobs)
    return mod, ps


def cfi_oracle(path):
    mod = ElfModule(str(path))
    eh, hdr = mod.section(".eh_frame"), mod.section(".eh_frame_hdr")
    return CfiTable.from_eh_frame(eh.data, eh.addr, hdr.data, hdr.addr)


def agrees(rule, row):
    if rule is None:
        return False
    if row.cfa.reg == RSP:
        return rule.sp_offset == row.cfa.offset
    return row.cfa.reg == RBP and rule.fp_offset == row.cfa.offset


CRT = {"_start", "deregister_tm_clones", "register_tm_clones", "__do_global_dtors_aux", "frame_dummy",
       "_init", "_fini"}


def compare_with_cfi(nocfi_path, oracle, functions, walker=None):
    """Per-instruction and call-site agreement of the analysis of ``functions`` with ``oracle``."""
    mod, ps = load_module(nocfi_path)
    w = walker or Walker(ps, stepper_group=StepperGroup())
    an = analyzer_for(w.process_state)
    md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    stats = {"insns": 0, "agree": 0, "calls": 0, "calls_agree": 0, "saved_agree": 0,
             "bad": []}
    for start, size, name in functions:
        frame_rule_at(w.process_state, start, True)
        for a, n, mn, _ops in md.disasm_lite(mod.read_vaddr(start, size), start):
            row = oracle.row_at(a)
            if row is None or row.cfa.expr is not None:
                continue
            rule = frame_rule_at(w.process_state, a, True)
            ok = agrees(rule, row)
            stats["insns"] += 1
            stats["agree"] += ok
            if not ok:
                stats["bad"].append((name, hex(a), mn, row.cfa, rule))
            if mn.rpartition(" ")[2] == "call":
                rc = frame_rule_at(w.process_state, a + n - 1, False)
                stats["calls"] += 1
                stats["calls_agree"] += agrees(rc, row)
                cfi_saved = {r: rr.arg for r, rr in row.regs.items() if r in CALLEE_SAVED and rr.kind == "offset"}
                stats["saved_agree"] += rc is not None and rc.saved == cfi_saved
                if rc is None or not agrees(rc, row) or rc.saved != cfi_saved:
                    stats["bad"].append(("CALL", name, hex(a), row, rc))
    return stats


def program_functions(path, exclude=CRT):
    table = module_symbols(ElfModule(str(path)))
    return sorted({(s.value, s.size, s.name) for s in table
                   if s.kind == "func" and s.size and s.section == ".text" and s.name not in exclude})


@needs_gcc
@pytest.mark.parametrize("opt", ["-O2", "-O1", "-O3", "-Os"])
def test_real_code_agrees_with_gcc_cfi(tmp_path, opt):
    nocfi, withcfi = compile_twice(tmp_path, opt, [PROGRAM])
    assert cfi_oracle(nocfi).row_at(program_functions(nocfi)[0][0]) is None   # really no CFI there
    funcs = program_functions(nocfi)
    assert {"sw", "with_vla", "aligned", "checked", "main"} <= {f[2] for f in funcs}
    stats = compare_with_cfi(nocfi, cfi_oracle(withcfi), funcs)
    rate = stats["agree"] / stats["insns"]
    print(f"\n{opt}: {len(funcs)} functions, {stats['agree']}/{stats['insns']} instructions = {rate:.4f}, "
          f"call sites {stats['calls_agree']}/{stats['calls']}, saved registers at call sites "
          f"{stats['saved_agree']}/{stats['calls']} (time per function: benchmarks/bounds.py)")
    assert rate >= 0.99, stats["bad"][:10]
    assert stats["calls_agree"] == stats["calls"] and stats["saved_agree"] == stats["calls"], stats["bad"][:10]


GAP_PROGRAM_A = r"""
extern int b_entry(int);
extern int (*b_pointer)(int);
__attribute__((noinline)) int a_helper(int x) { return x * 3 + 1; }
int main(int argc, char **argv) { return b_entry(argc) + b_pointer(argc) + a_helper(argc) > 1000; }
"""
GAP_PROGRAM_B = r"""
extern int a_helper(int);
volatile int bsink;
__attribute__((noinline)) static int b_leaf(int x) { return x * x + bsink; }
__attribute__((noinline)) static int b_loop(int n) {
    int s = 0;
    for (int i = 0; i < n; i++) { if (i & 1) s += b_leaf(i); else s ^= a_helper(s); }
    return s;
}
__attribute__((noinline)) static int b_only_by_pointer(int x) { return b_loop(x) + b_leaf(x + 1); }
int (*b_pointer)(int) = b_only_by_pointer;
int b_entry(int x) {
    int s = 0;
    switch (x & 7) {
    case 0: s = b_leaf(x); break;
    case 1: s = b_loop(x); break;
    case 2: s = a_helper(x) + 5; break;
    case 3: s = b_leaf(x + 2) * 3; break;
    case 4: bsink = x; s = 11; break;
    case 5: s = b_loop(x * 2) - 1; break;
    default: s = -x; break;
    }
    return s + b_loop(s & 15);
}
"""


@needs_gcc
def test_stripped_code_without_cfi_between_code_with_cfi(tmp_path):
    """An object file built without unwind tables, linked among others that have them, stripped."""
    mixed, full = compile_twice(tmp_path, "-O2", [GAP_PROGRAM_A, GAP_PROGRAM_B], nocfi_units=[1])
    b_funcs = [f for f in program_functions(mixed) if f[2].startswith("b_")]
    assert len(b_funcs) >= 4
    stripped = tmp_path / "prog-stripped"
    subprocess.run(["strip", "-s", str(mixed), "-o", str(stripped)], check=True)
    mod, ps = load_module(stripped)
    w = Walker(ps, stepper_group=StepperGroup())
    an = analyzer_for(w.process_state)
    md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    right = total = 0
    for start, size, name in b_funcs:
        for a, _n, _mn, _ops in md.disasm_lite(mod.read_vaddr(start, size), start):
            fa, b = an.function_at(a)
            total += 1
            right += b is not None and b.how == "gap" and b.start == start
    print(f"\ngap bounds: {right}/{total} instructions of {[f[2] for f in b_funcs]}")
    assert right / total >= 0.99, (right, total)
    stats = compare_with_cfi(stripped, cfi_oracle(full), b_funcs, walker=w)
    print(f"stripped, no CFI: {stats['agree']}/{stats['insns']} instructions agree with the CFI build, "
          f"call sites {stats['calls_agree']}/{stats['calls']}")
    assert stats["agree"] / stats["insns"] >= 0.99, stats["bad"][:10]
    assert stats["calls_agree"] == stats["calls"] and stats["saved_agree"] == stats["calls"], stats["bad"][:10]
