"""The stack-height dataflow engine (swk_plugin/arch/dataflow.py) on its own: the executable
spec a new architecture's author reads.

A made-up instruction set, Toy, is all an architecture has to write: ``decode`` turning
machine code into Insn records (size, effects, flow, target, padding) and a few facts
(registers, callee-saved set, whether a call pushes the return address).  Each Toy
instruction is one 4-byte word: opcode, register, signed 16-bit immediate (a target is an
absolute address).  The tests assemble small functions and check what the engine makes of
them: the heights per instruction, the saves, loops, joins, calls that do not return, tail
jumps, jump tables, padding, and the rules the steppers get.

The last tests feed the real x86 and A64 decoders their prologue idioms and check they speak
the same vocabulary.
"""
import struct
from types import SimpleNamespace

import pytest

from swk_plugin.arch import dataflow as D
from swk_plugin.arch.heights import NOT_REACHED, AnalysisError, StackHeight
from swk_plugin.rule import OFFSET

#: Toy's registers: DWARF-like numbers and an 8-byte slot.
R3, R4, R5, FP, SP, LR, RA = 3, 4, 5, 6, 7, 14, 16
X86ISH = SimpleNamespace(sp=SP, fp=FP, ra=RA, ptr_size=8)       # a call pushes the return address
LINKISH = SimpleNamespace(sp=SP, fp=FP, ra=LR, ptr_size=8)      # a call leaves it in LR

BASE = 0x1000

# Toy opcodes: name -> (opcode, how its register and immediate become (effects, flow, target)).
OPS = {
    "nop":   (0, lambda r, k: ((), D.FALL, None)),
    "push":  (1, lambda r, k: (((D.SP_ADD, -8), (D.SAVE_SP, r, 0)), D.FALL, None)),
    "pop":   (2, lambda r, k: (((D.RESTORE, r), (D.SP_ADD, 8)), D.FALL, None)),
    "addsp": (3, lambda r, k: (((D.SP_ADD, k),), D.FALL, None)),
    "fp=sp": (4, lambda r, k: (((D.FP_FROM_SP, k),), D.FALL, None)),
    "sp=fp": (5, lambda r, k: (((D.SP_FROM_FP, k),), D.FALL, None)),
    "andsp": (6, lambda r, k: (((D.SP_UNKNOWN,),), D.FALL, None)),
    "store": (7, lambda r, k: (((D.SAVE_SP, r, k),), D.FALL, None)),
    "stfp":  (8, lambda r, k: (((D.SAVE_FP, r, k),), D.FALL, None)),
    "load":  (9, lambda r, k: (((D.RESTORE, r),), D.FALL, None)),
    "clobfp": (10, lambda r, k: (((D.FP_UNKNOWN,),), D.FALL, None)),
    "sign":  (11, lambda r, k: (((D.RA_SIGNED,),), D.FALL, None)),
    "auth":  (12, lambda r, k: (((D.RA_PLAIN,),), D.FALL, None)),
    "copy":  (13, lambda r, k: (((D.COPY, r, k),), D.FALL, None)),     # r = register k
    "clob":  (14, lambda r, k: (((D.CLOBBER, r),), D.FALL, None)),
    "sp=cfa": (15, lambda r, k: (((D.SP_TO_CFA,),), D.FALL, None)),
    "jmp":   (20, lambda r, k: ((), D.JUMP, k)),
    "jcc":   (21, lambda r, k: ((), D.COND, k)),
    "call":  (22, lambda r, k: ((), D.CALL, k)),
    "callr": (23, lambda r, k: ((), D.CALL, None)),
    "jmpr":  (24, lambda r, k: ((), D.IJUMP, None)),
    "ret":   (25, lambda r, k: ((), D.STOP, None)),
    "other": (26, lambda r, k: ((), D.FALL, None)),
}
BY_CODE = {code: (name, how) for name, (code, how) in OPS.items()}


class Toy(D.InstructionSet):
    """The whole of an architecture's part: the facts, and decode()."""

    def __init__(self, regs=X86ISH, noreturn_by_clash=True):
        super().__init__(regs, {R3, R4, FP}, ra_on_stack=regs is X86ISH, align=4,
                         noreturn_by_clash=noreturn_by_clash)

    def decode(self, data, addr, known):
        for off in range(0, len(data) - 3, 4):
            code, reg, imm = struct.unpack_from("<BBh", data, off)
            if code not in BY_CODE:
                return                      # undecodable: the run ends here
            name, how = BY_CODE[code]
            effects, flow, target = how(reg, imm)
            yield addr + off, D.insn(4, effects, flow, target, padding=name == "nop")


def assemble(src, base=BASE):
    """Toy text -> (code bytes, {label: address}).  One instruction or ``label:`` a line;
    operands are a register (r3, fp, lr), a number, or @label."""
    lines = [ln.split("#")[0].strip() for ln in src.strip().splitlines()]
    lines = [ln for ln in lines if ln]
    labels, a = {}, base
    for ln in lines:
        if ln.endswith(":"):
            labels[ln[:-1]] = a
        else:
            a += 4
    code = b""
    for ln in lines:
        if ln.endswith(":"):
            continue
        name, *args = ln.split()
        reg, imm = 0, 0
        for arg in args:
            if arg.startswith("@"):
                imm = labels[arg[1:]]
            elif arg in ("fp", "lr") or arg.startswith("r"):
                reg = {"fp": FP, "lr": LR}.get(arg) or int(arg[1:])
            else:
                imm = int(arg, 0)
        code += struct.pack("<BBh", OPS[name][0], reg, imm)
    return code, labels


def analyze(src, isa=None, end=True, **kw):
    code, labels = assemble(src)

    def read(addr, n):
        if BASE <= addr < BASE + len(code):
            return code[addr - BASE:addr - BASE + n]
        return b""
    fa = (isa or Toy()).analyze(read, BASE, BASE + len(code) if end else None, **kw)
    return fa, labels


def state(fa, addr):
    """(CFA - sp, CFA - fp, {reg: offset}) at addr before it runs; None unknown; NOT_REACHED."""
    h = fa.rule_at(addr, True)
    if h is None or h is NOT_REACHED:
        return h
    return h.sp_offset, h.fp_offset, h.saved


# --- straight-line code -------------------------------------------------------------------------

FRAME = """
    push fp             # the caller's fp saved at CFA-16
    fp=sp 0             # fp = sp: a frame base 16 below the CFA
    push r3
    addsp -32
    other
    addsp 32
    pop r3
    pop fp
    ret
"""


def test_heights_and_saves_through_prologue_body_and_epilogue():
    fa, _ = analyze(FRAME)
    got = [state(fa, a) for a in fa.addrs]
    assert got == [
        (8, None, {}),                          # entry: the return address pushed by the call
        (16, None, {FP: -16}),
        (16, 16, {FP: -16}),
        (24, 16, {FP: -16, R3: -24}),
        (56, 16, {FP: -16, R3: -24}),
        (56, 16, {FP: -16, R3: -24}),
        (24, 16, {FP: -16, R3: -24}),
        (16, 16, {FP: -16}),                    # the pop restored r3 and freed its slot
        (8, None, {}),                          # pop fp: fp is no frame base any more
    ]
    assert fa.sizes == [4] * 9 and not fa.calls


def test_the_rule_is_sp_based_with_the_return_address_below_the_cfa():
    fa, _ = analyze(FRAME)
    h = fa.rule_at(BASE + 16, True)
    assert isinstance(h, StackHeight)
    rule = h.rule
    assert (rule.cfa.reg, rule.cfa.offset) == (SP, 56)
    assert rule.saved_offsets() == {FP: -16, R3: -24, RA: -8}
    assert rule.ra_reg == RA and not rule.ra_signed
    assert fa.rule_at(BASE + 18, True) is NOT_REACHED           # not an instruction's start
    assert fa.rule_at(BASE + 18, False) is NOT_REACHED          # inside no call


def test_sp_unknown_leaves_fp_the_frame_base():
    fa, _ = analyze("""
        push fp
        fp=sp 0
        andsp               # realignment: only fp locates the CFA
        stfp r3 -8          # a save relative to fp
        push r4             # a push at an unknown height saves nothing
        sp=fp 0             # sp known again
        pop fp
        ret
    """)
    assert state(fa, BASE + 12) == (None, 16, {FP: -16})
    assert fa.rule_at(BASE + 12, True).rule.cfa.reg == FP
    assert state(fa, BASE + 16) == (None, 16, {FP: -16, R3: -24})
    assert state(fa, BASE + 20) == (None, 16, {FP: -16, R3: -24})
    assert state(fa, BASE + 24) == (16, 16, {FP: -16})                    # r3's slot is below sp now
    assert state(fa, BASE + 28) == (8, None, {})


def test_the_first_save_of_a_register_is_the_callers_value():
    fa, _ = analyze("""
        push r3
        push r3             # a second copy: r3 still saved at CFA-16
        store r4 8          # r4 into the slot r3 was saved in: r3 keeps it
        store r4 -8         # r4 below sp: still a save
        addsp 16            # frees both pushed slots: their saves are forgotten
        ret
    """)
    assert state(fa, BASE + 8) == (24, None, {R3: -16})
    assert state(fa, BASE + 12) == (24, None, {R3: -16})
    assert state(fa, BASE + 16) == (24, None, {R3: -16, R4: -32})
    assert state(fa, BASE + 20) == (8, None, {})


def test_load_restores_a_register():
    fa, _ = analyze("""
        push fp
        fp=sp 0
        push r3
        load r3             # r3 holds the caller's value again: its save is forgotten
        load fp             # and fp is no frame base
        ret
    """)
    assert state(fa, BASE + 16) == (24, 16, {FP: -16})
    assert state(fa, BASE + 20) == (24, None, {})


# --- control flow --------------------------------------------------------------------------------

def test_a_loop_reaches_its_fixpoint():
    fa, labels = analyze("""
        push r3
    loop:
        push r4
        other
        pop r4
        jcc @loop           # balanced: the loop head keeps one height
        pop r3
        ret
    """)
    assert state(fa, labels["loop"]) == (16, None, {R3: -16})
    assert state(fa, labels["loop"] + 8) == (24, None, {R3: -16, R4: -24})


def test_a_loop_moving_sp_makes_its_heights_unknown():
    fa, labels = analyze("""
        fp=sp 0
    loop:
        addsp -16           # alloca in a loop
        jcc @loop
        sp=fp 0
        ret
    """)
    assert state(fa, labels["loop"]) == (None, 8, {})
    assert state(fa, labels["loop"] + 12) == (8, 8, {})                    # after sp=fp


def test_a_join_of_different_heights_is_unknown_and_keeps_the_saves_of_every_path():
    fa, labels = analyze("""
        push fp
        fp=sp 0
        push r3
        jcc @other
        push r4
        jmp @join
    other:
        addsp -8
    join:
        other               # 32 one way, 32 the other: agreed
        jcc @skew
        addsp -8
    skew:
        other               # 40 one way, 32 the other: unknown, fp is the base
        ret
    """)
    assert state(fa, labels["join"]) == (32, 16, {FP: -16, R3: -24})      # r4's save only one way
    assert state(fa, labels["skew"]) == (None, 16, {FP: -16, R3: -24})
    assert fa.rule_at(labels["skew"], True).rule.cfa.reg == FP


def test_a_join_with_no_frame_base_has_no_height():
    fa, labels = analyze("""
        jcc @join
        addsp -8
    join:
        ret
    """)
    assert fa.rule_at(labels["join"], True) is None                         # reached, unknown


def test_a_call_that_does_not_return_ends_its_path():
    fa, labels = analyze("""
        addsp -8
        jcc @fail
        addsp 8
        ret
    fail:
        call 0x7000         # abort
    after:
        other               # only the call's fall-through would reach it
        ret
    """, noreturn=lambda t: t == 0x7000)
    assert state(fa, labels["fail"]) == (16, None, {})
    assert fa.rule_at(labels["fail"], False).sp_offset == 16                 # a return address in it
    assert fa.calls == {labels["fail"]}
    assert fa.rule_at(labels["after"], True) is NOT_REACHED


SILENT_NORETURN = """
    push r3
    jcc @tail
    addsp -16
    call 0x7000             # a call to a function nobody said does not return
tail:
    pop r3                  # 16 from the jcc, 32 from the call's fall-through
    ret
"""


def test_a_call_whose_fall_through_clashes_is_taken_not_to_return():
    fa, labels = analyze(SILENT_NORETURN)
    assert state(fa, labels["tail"]) == (16, None, {R3: -16})
    assert state(fa, labels["tail"] + 4) == (8, None, {})
    assert labels["tail"] - 4 in fa.calls


def test_without_noreturn_by_clash_the_clash_makes_heights_unknown():
    fa, labels = analyze(SILENT_NORETURN, Toy(noreturn_by_clash=False))
    assert fa.rule_at(labels["tail"], True) is None


def test_a_clash_of_the_codes_own_does_not_blame_the_call():
    fa, labels = analyze("""
        call 0x7000         # returns: what clashes below is the loop moving sp
    loop:
        addsp -8
        jcc @loop
        ret
    """)
    assert fa.rule_at(labels["loop"], True) is None                         # reached, unknown
    assert fa.rule_at(labels["loop"] + 4, True) is None


def test_a_tail_jump_leaves_the_function_and_a_cold_part_is_followed():
    src = """
        push r3
        jcc 0x3000          # into the function's .cold part (its own range)
        pop r3
        jmp 0x2000          # a tail call: another function's code
    """
    fa, _ = analyze(src)
    assert len(fa) == 4 and fa.extras == ()
    cold, _ = assemble("""
        other
        pop r3
        ret
    """, 0x3000)
    code, _ = assemble(src)

    def read(addr, n):
        for base, blob in ((BASE, code), (0x3000, cold)):
            if base <= addr < base + len(blob):
                return blob[addr - base:addr - base + n]
        return b""
    fa = Toy().analyze(read, BASE, BASE + len(code), follow=lambda t: (0x3000, 0x3000 + len(cold)) if t == 0x3000
                       else None)
    assert fa.extras == ((0x3000, 0x300c),)
    assert [state(fa, a) for a in (0x3000, 0x3004, 0x3008)] == [(16, None, {R3: -16}), (16, None, {R3: -16}),
                                                                 (8, None, {})]
    assert fa.rule_at(0x2000, True) is NOT_REACHED


def test_jump_table_blocks_and_padding_are_given_states_by_the_sweep():
    fa, labels = analyze("""
        push r3
        jmpr                # a jump table: its cases are reached by no edge
    case1:
        pop r3
        ret
        nop                 # padding after the ret
    case2:
        other
        pop r3
        ret
    """)
    assert state(fa, labels["case1"]) == (16, None, {R3: -16})
    assert state(fa, labels["case2"]) == (16, None, {R3: -16})
    assert state(fa, labels["case2"] - 4) == (8, None, {})                 # the ret's state
    fa, labels = analyze("""
        push r3
        jmpr
    case1:
        pop r3
        ret
    """, end=False)
    assert fa.rule_at(labels["case1"], True) is NOT_REACHED                 # no end: no sweep


def test_without_an_end_code_is_followed_up_to_hi():
    code, _ = assemble("""
        addsp -8
        other
        other
        addsp 8
        ret
    """)
    fa = Toy().analyze(lambda a, n: code[a - BASE:a - BASE + n] if a >= BASE else b"", BASE, None, hi=BASE + 8)
    assert fa.addrs == [BASE, BASE + 4] and fa.end is None


# --- a return address in a register --------------------------------------------------------------

def test_a_link_register_is_tracked_until_it_is_stored():
    fa, labels = analyze("""
        sign                # paciasp
        addsp -16
        store fp 0
        store lr 8
        fp=sp 0
    body:
        other
        load fp
        load lr
        addsp 16
        auth
        ret
    """, Toy(LINKISH))
    leaf = fa.rule_at(BASE, True)
    assert (leaf.sp_offset, leaf.saved) == (0, {})                          # CFA = sp at entry
    assert LR not in leaf.rule.regs and not leaf.rule.ra_signed             # the return address is in lr
    body = fa.rule_at(labels["body"], True)
    assert (body.sp_offset, body.fp_offset, body.saved) == (16, 16, {FP: -16, LR: -8})
    assert body.rule.saved_offsets() == {FP: -16, LR: -8} and body.rule.ra_signed
    assert body.rule.ra_reg == LR
    assert state(fa, labels["body"] + 12) == (16, None, {})
    assert fa.rule_at(labels["body"] + 16, True).rule.ra_signed
    assert not fa.rule_at(labels["body"] + 20, True).rule.ra_signed


def test_a_copy_of_the_link_register_is_saved_by_its_store():
    fa, labels = analyze("""
        copy r0 14          # r0 = lr (Power's mflr r0)
        store r0 16         # std r0,16(r1): the return address saved above the CFA
        addsp -32
    body:
        other
        copy r5 0           # r5 = r0 = lr
        clob r0
        store r0 8          # r0 holds something else: no save
        store r5 24         # lr is saved already: the first save holds the caller's value
        ret
    """, Toy(LINKISH))
    body = fa.rule_at(labels["body"], True)
    assert (body.sp_offset, body.saved) == (32, {LR: 16})
    assert body.rule.saved_offsets() == {LR: 16}
    assert state(fa, labels["body"] + 20) == (32, None, {LR: 16})
    fa, _ = analyze("""
        copy r0 14
        clob r0
        store r0 16
        copy r3 14          # r3 = lr: a store of r3 saves lr, not the caller's r3
        store r3 -8
        ret
    """, Toy(LINKISH))
    assert state(fa, BASE + 20) == (0, None, {LR: -8})


def test_sp_reloaded_from_a_back_chain_is_the_cfa():
    fa, labels = analyze("""
        store lr 16         # Power: the return address in the caller's frame
        addsp -48           # stdu r1,-48(r1)
        store r3 -8         # std r31,-8(r1): 56 below the CFA -- in the frame
        andsp               # alloca: the height is lost
    out:
        sp=cfa              # ld r1,0(r1): the back chain
        ret
    """, Toy(LINKISH))
    assert fa.rule_at(labels["out"], True) is None                          # reached, unknown
    assert state(fa, labels["out"] + 4) == (0, None, {LR: 16})               # r3's slot is freed


# --- what the engine refuses ---------------------------------------------------------------------

def test_errors():
    code, _ = assemble("ret")
    read = lambda a, n: code[a - BASE:a - BASE + n] if BASE <= a < BASE + len(code) else b""  # noqa: E731
    with pytest.raises(AnalysisError, match="aligned"):
        Toy().analyze(read, BASE + 2)
    with pytest.raises(AnalysisError, match="unreadable"):
        Toy().analyze(read, BASE + 0x100)
    with pytest.raises(AnalysisError, match="too large"):
        Toy().analyze(read, BASE, BASE + D.MAX_CODE + 4)
    fa = Toy().analyze(read, BASE, None)
    assert len(fa) == 1


def test_effects_are_padded_to_three_fields():
    assert D.insn(4, [(D.SP_UNKNOWN,), (D.SP_ADD, 8)]) == \
        (4, ((D.SP_UNKNOWN, None, None), (D.SP_ADD, 8, None)), D.FALL, None, False)


# --- the real decoders speak the vocabulary ------------------------------------------------------

def _effects(isa, code, addr=0x400000):
    return [(a, ins[1], ins[2]) for a, ins in isa.decode(code, addr, {})]


def test_x86_64_prologue_and_epilogue_in_the_vocabulary():
    from swk_plugin.arch.x86_64 import analysis as x86
    from swk_plugin.arch.x86_64 import registers as regs
    code = bytes.fromhex("55" "4889e5" "53" "4883e4f0" "c9" "c3" "c8100000")
    got = _effects(x86.X86_64, code)
    a = 0x400000
    assert got == [
        (a, ((D.SP_ADD, -8, None), (D.SAVE_SP, regs.fp, 0)), D.FALL),        # push rbp
        (a + 1, ((D.FP_FROM_SP, 0, None),), D.FALL),                          # mov rbp, rsp
        (a + 4, ((D.SP_ADD, -8, None), (D.SAVE_SP, 3, 0)), D.FALL),          # push rbx
        (a + 5, ((D.SP_UNKNOWN, None, None),), D.FALL),                       # and rsp, -16
        (a + 9, ((D.SP_FROM_FP, 0, None), (D.RESTORE, regs.fp, None), (D.SP_ADD, 8, None)), D.FALL),  # leave
        (a + 10, (), D.STOP),                                                 # ret
        (a + 11, ((D.SP_ADD, -8, None), (D.SAVE_SP, regs.fp, 0), (D.FP_FROM_SP, 0, None),
                  (D.SP_ADD, -16, None)), D.FALL),                            # enter 0x10, 0
    ]


def test_i386_call_to_the_next_instruction_only_pushes():
    from swk_plugin.arch.i386 import analysis as i386
    code = bytes.fromhex("e800000000" "5b")                                    # call 1f; 1: pop ebx
    got = _effects(i386.I386, code, 0x8048000)
    assert got == [(0x8048000, ((D.SP_ADD, -4, None),), D.FALL),
                   (0x8048005, ((D.SP_ADD, 4, None),), D.FALL)]


def test_a64_frame_record_in_the_vocabulary():
    from swk_plugin.arch.aarch64 import analysis as a64
    words = [0xd503233f, 0xa9be7bfd, 0x910003fd, 0xa90153f3, 0xa8c27bfd, 0xd50323bf, 0xd65f03c0]
    code = b"".join(w.to_bytes(4, "little") for w in words)
    got = [(eff, flow) for _a, eff, flow in _effects(a64._A64, code)]
    assert got == [
        (((D.RA_SIGNED, None, None),), D.FALL),                                     # paciasp
        (((D.SP_ADD, -32, None), (D.SAVE_SP, 29, 0), (D.SAVE_SP, 30, 8)), D.FALL),  # stp x29, x30, [sp, #-32]!
        (((D.FP_FROM_SP, 0, None),), D.FALL),                                       # mov x29, sp
        (((D.SAVE_SP, 19, 16), (D.SAVE_SP, 20, 24)), D.FALL),                       # stp x19, x20, [sp, #16]
        (((D.RESTORE, 29, None), (D.RESTORE, 30, None), (D.SP_ADD, 32, None)), D.FALL),  # ldp x29, x30, [sp], #32
        (((D.RA_PLAIN, None, None),), D.FALL),                                      # autiasp
        ((), D.STOP),                                                               # ret
    ]
    fa = a64.analyze(lambda a, n: code[a - 0x400000:a - 0x400000 + n], 0x400000, 0x400000 + len(code))
    body = fa.rule_at(0x400010, True)
    assert (body.sp_offset, body.fp_offset, body.saved) == (32, 32, {29: -32, 30: -24, 19: -16, 20: -8})
    assert body.rule.ra_signed and body.rule.regs[30].kind == OFFSET
    assert state(fa, 0x400014) == (0, None, {})                             # ldp restored both, sp back
