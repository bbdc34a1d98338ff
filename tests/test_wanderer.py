"""StepperWanderer: the x86-64 call decoder, the stack scan on synthetic memory,
and a real -O2 program without any unwind information walked in GDB."""
import json
import subprocess

import pytest

import swk_suite as S
import swk_testlib as T

from swk_plugin.arch.x86_64.calls import (CallSite, calls_ending_at, confirm_call, decode_call,
                                          return_sites)
from swk_plugin.frame import Frame, Location
from swk_plugin.procstate import MemoryRegion
from swk_plugin.stepper import Gcf, PRIORITY_WANDERER
from swk_plugin.steppergroup import StepperGroup
from swk_plugin.steppers import BottomOfStackStepper
from swk_plugin.steppers import wanderer
from swk_plugin.steppers.wanderer import SCAN_WORDS, SCAN_WORDS_TOP, StepperWanderer
from swk_plugin.walker import Walker

from synthetic import R12, RBP, RBX, RIP, RSP, FakeModule, FakeProcess, FakeSection, fake_library
from test_cfi import EhFrame, advance_loc, def_cfa_offset, offset

STACK = 0x7ff0000


# --- the call decoder -----------------------------------------------------------------------------------

def h(s):
    return bytes.fromhex(s.replace(" ", ""))


# (bytes, direct target or None, memory slot or None) for a call at 0x1000.
ENCODINGS = [
    ("e8 fb 00 00 00", 0x1100, None),                       # call rel32
    ("e8 fb ef ff ff", 0x0000, None),                       # negative rel32
    ("ff 15 0a 00 00 00", None, 0x1010),                    # call *0xa(%rip)
    ("41 ff 15 f9 ff ff ff", None, 0x1000),                 # REX.B does not change rip-relative
    ("ff 14 25 00 20 00 00", None, 0x2000),                 # call *0x2000 (SIB, no base, no index)
    ("64 ff 14 25 10 00 00 00", None, None),                # call *%fs:0x10: slot is not an address
    ("42 ff 14 25 00 20 00 00", None, None),                # REX.X: index r12, not absolute
    ("ff 14 c5 00 20 00 00", None, None),                   # call *0x2000(,%rax,8)
    ("ff 10", None, None), ("ff 13", None, None), ("ff 17", None, None),   # call *(%reg)
    ("41 ff 10", None, None), ("41 ff 17", None, None),
    ("ff 14 24", None, None),                               # call *(%rsp)
    ("41 ff 14 24", None, None),                            # call *(%r12)
    ("ff 55 00", None, None),                               # call *0(%rbp) (rbp needs a disp8)
    ("41 ff 55 00", None, None),                            # call *0(%r13)
    ("ff 50 08", None, None), ("ff 57 f8", None, None),     # call *disp8(%reg)
    ("ff 54 24 10", None, None),                            # call *0x10(%rsp)
    ("ff 90 00 01 00 00", None, None),                      # call *disp32(%rax)
    ("ff 94 24 00 01 00 00", None, None),                   # call *disp32(%rsp)
    ("4f ff 94 a4 12 34 56 78", None, None),                # call *disp32(%r12,%r12,4), REX.WRXB
    ("3e 41 ff 94 24 e8 00 00 00", None, None),             # notrack, 9 bytes: the longest
    ("f2 e8 fa 00 00 00", 0x1100, None),                    # bnd call
    ("3e ff d0", None, None),                               # notrack call *%rax
] + [(f"ff {0xd0 + r:02x}", None, None) for r in range(8)] \
  + [(f"41 ff {0xd0 + r:02x}", None, None) for r in range(8)]


@pytest.mark.parametrize("code,target,slot", ENCODINGS)
def test_decoder_knows_every_call_encoding(code, target, slot):
    b = h(code)
    call = decode_call(b, 0x1000)
    assert call == CallSite(0x1000, len(b), target, slot)
    assert call.end == 0x1000 + len(b) and call.direct == (target is not None)
    assert confirm_call(b, 0x1000)                           # capstone agrees, from the call's start
    # Behind any junk, the call is found ending at its return address.
    before = h("cc cc cc cc cc cc cc cc cc") + b
    assert call in calls_ending_at(before, 0x1000 + len(b))
    assert decode_call(b[:-1], 0x1000) is None               # truncated


@pytest.mark.parametrize("code", [
    "ff d8",              # ff /3: far call
    "ff e0", "ff 25 00 00 00 00",   # ff /4: jmp
    "ff 30",              # ff /6: push
    "66 ff d0",           # 16-bit operand size: never emitted, not accepted
    "67 ff 10",           # 32-bit addressing: never emitted, not accepted
    "9a 00 00 00 00 00 00",   # far call ptr16:32: invalid in 64-bit mode
    "e9 00 00 00 00",     # jmp rel32
    "ff 14",              # SIB missing
])
def test_decoder_rejects_what_is_not_an_accepted_call(code):
    b = h(code)
    assert decode_call(b, 0x1000) is None or decode_call(b, 0x1000).length != len(b)
    if code.startswith(("66", "67")):      # the prefix-less suffix is still a call ending there
        assert [c.length for c in calls_ending_at(b, 0x1000 + len(b))] == [len(b) - 1]
    else:
        assert calls_ending_at(b, 0x1000 + len(b)) == []


def test_decoder_checks_only_that_a_call_could_end_there():
    # movabs $0x77665544e8332211, %rax: its immediate ends in a valid "call rel32".
    movabs = h("48 b8 11 22 33 e8 44 55 66 77")
    calls = calls_ending_at(movabs, 0x100a)
    assert [(c.addr, c.length) for c in calls] == [(0x1005, 5)]
    assert confirm_call(movabs[5:], 0x1005)                    # a call, decoded from that start...
    assert not confirm_call(movabs, 0x1000)                    # ...but not from the real boundary
    sites, end = return_sites(movabs + h("e8 00 00 00 00"), 0x1000)
    assert sites == {0x100f: 0x100a} and end == 0x100f         # the sweep knows the truth
    # Overlapping decodings are all reported: e8 rel32 and ff d0 both end here.
    both = calls_ending_at(h("e8 11 22 ff d0"), 0x1005)
    assert [(c.addr, c.length) for c in both] == [(0x1003, 2), (0x1000, 5)]
    assert calls_ending_at(b"", 0x1000) == [] and calls_ending_at(h("d0"), 0x1000) == []


# --- synthetic stacks -----------------------------------------------------------------------------------

# Functions (unbiased = absolute here): name, start, size.
SYMS = [("main", 0x1000, 0x100), ("mid", 0x1100, 0x100), ("leaf", 0x1200, 0x100),
        ("other", 0x1300, 0x100), ("_start", 0x1400, 0x100), ("leaf@plt", 0x1500, 0x10)]
GOT_LEAF = 0x30000           # a GOT word holding &leaf
DATA = 0x30100


def call_to(at, target):
    return at, b"\xe8" + (target - at - 5).to_bytes(4, "little", signed=True)


def place(code, at, bytes_):
    code[at - 0x1000:at - 0x1000 + len(bytes_)] = bytes_


def program(extra=()):
    """Text 0x1000-0x1600 of nops with the calls the tests use; returns {name: return address}."""
    code = bytearray(b"\x90" * 0x600)
    ras = {}
    for name, (at, insn) in {
        "main->mid": call_to(0x1080, 0x1100),
        "main->other": call_to(0x1050, 0x1300),
        "mid->leaf": call_to(0x1150, 0x1200),
        "mid->other": call_to(0x1130, 0x1300),
        "mid->leaf@plt": call_to(0x1170, 0x1500),
        "mid->*rax": (0x1190, h("ff d0")),
        "mid->*got": (0x11a0, b"\xff\x15" + (GOT_LEAF - 0x11a6).to_bytes(4, "little", signed=True)),
        "start->main": call_to(0x1410, 0x1000),
        **dict(extra),
    }.items():
        place(code, at, insn)
        ras[name] = at + len(insn)
    # movabs whose immediate ends in "e8 <rel32 to leaf>": a return site only to a byte decoder.
    rel = (0x1200 - 0x11e0).to_bytes(4, "little", signed=True)
    place(code, 0x11d6, h("48 b8 11 22 33 e8") + rel)
    ras["mid:movabs"] = 0x11e0
    # leaf@plt: endbr64; bnd jmp *GOT(%rip)
    place(code, 0x1500, h("f3 0f 1e fa f2 ff 25") + (GOT_LEAF - 0x150b).to_bytes(4, "little", signed=True))
    return bytes(code), ras


def make(stack_words, pc=0x1210, sp=STACK, regs=None, sections=(), regions=None, stack_at=None):
    mod = FakeModule("/bin/prog", text=(0x1000, 0x1600), sections=sections, symbols=SYMS)
    r = {RIP: pc, RSP: sp, RBP: 0x5555, RBX: 0xb0b, R12: 0xc12}
    r.update(regs or {})
    ps = FakeProcess({1: r}, libs=[fake_library(mod)], regions=regions)
    code, ras = program()
    ps.write(0x1000, code)
    ps.write_words(GOT_LEAF, 0x1200)
    ps.write_words(DATA, 1, 2, 3)
    ps.write_words(STACK if stack_at is None else stack_at, *stack_words(ras))
    w = Walker(ps)
    return w, ps, ras


@pytest.fixture(autouse=True)
def no_analysis(monkeypatch):
    """Synthetic tests decide register recovery themselves: no code analysis unless given."""
    monkeypatch.setattr(wanderer, "frame_rule_at", lambda ps, pc, exact: None)


def step(w, frame=None):
    return StepperWanderer(w).get_caller_frame(frame or w.get_initial_frame())


def test_wanderer_identity():
    s = StepperWanderer()
    assert (s.name, s.priority, s.trust) == ("StepperWanderer", PRIORITY_WANDERER, "scan")


def test_picks_the_call_to_the_current_function_past_junk():
    w, ps, ras = make(lambda r: [0x4141414141414141, DATA, 0x1010, r["main->other"], r["mid->leaf"],
                                 r["main->mid"]])
    status, caller = step(w)
    assert status is Gcf.SUCCESS
    assert (caller.ra, caller.sp) == (ras["mid->leaf"], STACK + 40)
    assert caller.ra_location == Location.address(STACK + 32)
    assert caller.regs[RIP] == caller.ra and caller.regs[RSP] == caller.sp
    assert caller.regs[RBX] == 0xb0b and caller.regs[R12] == 0xc12   # carried forward
    assert caller.fp == 0x5555 and caller.callee_cfa == STACK + 40
    assert caller.trust == "scan"


@pytest.mark.parametrize("real", ["mid->leaf@plt", "mid->*got"])
def test_calls_through_plt_and_got_count_as_calls_to_the_current_function(real):
    w, ps, ras = make(lambda r: [r["mid->other"], r["mid->*rax"], r[real]])
    status, caller = step(w)
    assert status is Gcf.SUCCESS and caller.ra == ras[real] and caller.sp == STACK + 24


def test_an_indirect_call_beats_a_direct_call_elsewhere():
    w, ps, ras = make(lambda r: [r["mid->other"], r["main->other"], r["mid->*rax"], r["main->mid"]])
    status, caller = step(w)
    assert status is Gcf.SUCCESS and caller.ra == ras["mid->*rax"] and caller.trust == "scan"


def test_a_direct_call_elsewhere_is_the_last_resort():
    w, ps, ras = make(lambda r: [7, r["mid->other"], r["main->other"]])
    status, caller = step(w)
    assert status is Gcf.SUCCESS and caller.ra == ras["mid->other"] and caller.trust == "scan"


def test_bytes_that_only_look_like_a_call_are_rejected_by_the_sweep():
    w, ps, ras = make(lambda r: [r["mid:movabs"], r["mid->other"], r["mid->leaf"]])
    status, caller = step(w)
    assert status is Gcf.SUCCESS and caller.ra == ras["mid->leaf"]


def test_scan_bounds_normal_and_top_frames():
    pad = SCAN_WORDS
    w, ps, ras = make(lambda r: [0] * pad + [r["mid->leaf"]])
    top = w.get_initial_frame()
    assert step(w, top)[1].ra == ras["mid->leaf"]          # the top frame scans 512 words
    inner = Frame(0x1210 + 1, STACK, 0, walker=w)           # a called frame (ra-1 is in leaf): 64 words
    status, why = step(w, inner)
    assert status is Gcf.NOT_ME and f"{SCAN_WORDS} words" in why
    inner.non_call = True                                   # interrupted by a signal: 512 again
    assert step(w, inner)[0] is Gcf.SUCCESS
    w, ps, ras = make(lambda r: [0] * SCAN_WORDS_TOP + [r["mid->leaf"]])
    assert step(w)[0] is Gcf.NOT_ME


def test_scan_stops_at_unreadable_memory():
    w, ps, ras = make(lambda r: [1, 2, 3])
    ps.write_words(STACK + 0x2000, ras["mid->leaf"])        # beyond an unmapped gap
    status, why = step(w)
    assert status is Gcf.NOT_ME and "unreadable" in why


def test_scan_stays_inside_the_stack_mapping():
    regions = [MemoryRegion(0x1000, 0x1600, executable=True, name="/bin/prog"),
               MemoryRegion(0x30000, 0x31000, writable=True),
               MemoryRegion(STACK - 0x1000, STACK + 0x18, writable=True, name="[stack]"),
               MemoryRegion(STACK + 0x18, STACK + 0x1000, writable=True)]
    w, ps, ras = make(lambda r: [1, 2, 3, r["mid->leaf"]], regions=regions)
    status, why = step(w)
    assert status is Gcf.NOT_ME
    regions[2].end = STACK + 0x1000
    assert step(w)[1].ra == ras["mid->leaf"]
    ps.regs_by_thread[1][RSP] = 0x900000                    # sp in no mapping at all
    ps.invalidate()
    status, why = step(w)
    assert status is Gcf.NOT_ME and "no mapping" in why


def test_code_outside_modules_takes_the_first_candidate():
    jit = 0x50000
    regions = [MemoryRegion(0x1000, 0x1600, executable=True, name="/bin/prog"),
               MemoryRegion(jit, jit + 0x1000, executable=True),
               MemoryRegion(STACK - 0x1000, STACK + 0x1000, writable=True, name="[stack]")]
    w, ps, ras = make(lambda r: [DATA, r["mid->other"], r["mid->leaf"]], pc=jit + 0x10, regions=regions)
    ps.write(jit, b"\x90" * 0x100)
    status, caller = step(w)
    assert status is Gcf.SUCCESS and caller.ra == ras["mid->other"]


def test_callee_saved_registers_from_the_callees_cfi():
    eh = EhFrame(addr=0x20000)
    cie = eh.cie()
    # leaf: push %rbx; push %rbp -> rbx at CFA-16, rbp at CFA-24, ra at CFA-8
    eh.fde(cie, 0x1200, 0x1300, advance_loc(1) + def_cfa_offset(16) + offset(RBX, 2)
           + advance_loc(1) + def_cfa_offset(24) + offset(RBP, 3))
    eh.terminate()
    w, ps, ras = make(lambda r: [0x7777, 0x3333, r["mid->leaf"]],
                      sections=[FakeSection(".eh_frame", 0x20000, eh.data)])
    status, caller = step(w)
    assert status is Gcf.SUCCESS and caller.sp == STACK + 24
    assert caller.regs[RBX] == 0x3333 and caller.reg_locations[RBX] == Location.address(STACK + 8)
    assert caller.regs[RBP] == caller.fp == 0x7777
    assert caller.fp_location == Location.address(STACK)
    assert caller.regs[R12] == 0xc12


def test_frame_pointer_slot_gives_the_callers_rbp():
    fp = STACK + 0x20
    w, ps, ras = make(lambda r: [0, 0, 0, 0, STACK + 0x100, r["mid->leaf"]], regs={RBP: fp})
    status, caller = step(w)
    assert status is Gcf.SUCCESS and caller.sp == fp + 16
    assert caller.fp == caller.regs[RBP] == STACK + 0x100
    assert caller.fp_location == Location.address(fp)


def test_callee_saved_registers_from_code_analysis(monkeypatch):
    class Rule:
        cfa_reg, cfa_offset, ra_offset = RSP, 24, -8
        saved = {RBX: -16, R12: -24}
    asked = []

    def frame_rule_at(ps, pc, exact):
        asked.append((pc, exact))
        return Rule()
    monkeypatch.setattr(wanderer, "frame_rule_at", frame_rule_at)
    w, ps, ras = make(lambda r: [0x1212, 0x3333, r["mid->leaf"]])
    status, caller = step(w)
    assert status is Gcf.SUCCESS and asked == [(0x1210, True)]
    assert caller.regs[RBX] == 0x3333 and caller.regs[R12] == 0x1212
    assert caller.reg_locations[R12] == Location.address(STACK)
    assert caller.fp == 0x5555                              # not saved: carried forward


def test_declines_bottom_functions_and_the_walk_ends_there():
    w, ps, ras = make(lambda r: [r["mid->leaf"], 0, r["main->mid"], 0, r["start->main"], r["main->other"]])
    start = Frame(ras["start->main"], STACK + 40, 0, walker=w)
    status, why = step(w, start)
    assert status is Gcf.NOT_ME and "_start" in why
    g = StepperGroup()
    g.add_stepper(StepperWanderer())
    g.add_stepper(BottomOfStackStepper())
    walk = Walker(ps, stepper_group=g).walk_stack()
    assert [f.name for f in walk] == ["leaf", "mid", "main", "_start"]
    assert walk.complete and "_start" in walk.stop_reason
    assert [f.sp for f in walk] == [STACK, STACK + 8, STACK + 24, STACK + 40]


def test_nothing_found_is_not_me():
    w, ps, ras = make(lambda r: [0, DATA, 0x1010, 0x4141])
    status, why = step(w)
    assert status is Gcf.NOT_ME and "no return address" in why


# --- a real program without unwind information ----------------------------------------------------------

PROGRAM = r"""
#include <stdio.h>
volatile int sink;
__attribute__((noinline)) int leaf(int x) { sink = x; return x * 3 + sink; }
__attribute__((noinline)) int middle(int x) {
    volatile int buf[24];
    for (int i = 0; i < 24; i++) buf[i] = x + i;
    int r = leaf(buf[x & 7]);
    return r + buf[3];
}
int (*volatile indirect)(int) = middle;
__attribute__((noinline)) int upper(int x) {
    volatile long pad[6] = {0x1111, (long)&sink, 0x3333};
    int r = indirect(x + (int)pad[0]);
    return r * 2 + (int)pad[2];
}
int main(int argc, char **argv) { printf("%d\n", upper(argc)); return 0; }
"""

SCRIPT = r"""
import json
from swk_plugin.backends.gdb.session import SESSION
from swk_plugin.steppergroup import StepperGroup
from swk_plugin.steppers import BottomOfStackStepper
from swk_plugin.steppers.wanderer import StepperWanderer
from swk_plugin.walker import Walker
ps = SESSION.walker().process_state
g = StepperGroup()
g.add_stepper(StepperWanderer())
g.add_stepper(BottomOfStackStepper())
walk = Walker(ps, stepper_group=g).walk_stack()
print("SWKWANDER " + json.dumps({"names": [f.name for f in walk], "reason": walk.stop_reason,
                                 "complete": walk.complete, "trust": [f.trust for f in walk]}))
"""


def test_real_program_without_unwind_tables(tmp_path):
    S.need_tools("gdb", "gcc", "readelf")
    src = tmp_path / "nocfi.c"
    src.write_text(PROGRAM)
    exe = tmp_path / "nocfi"
    subprocess.run(["gcc", "-O2", "-fomit-frame-pointer", "-fno-asynchronous-unwind-tables",
                    "-fno-unwind-tables", "-g0", "-o", str(exe), str(src)], check=True)
    readelf = subprocess.run(["readelf", "-wf", str(exe)], capture_output=True, text=True).stdout
    assert "leaf" not in readelf          # (sanity: no CFI names the program's functions)
    script = tmp_path / "walk.py"
    script.write_text(SCRIPT)
    out = subprocess.run(["gdb", "-nx", "-batch", "-ex", f"source {T.GDB_INIT}",
                          "-ex", "break leaf", "-ex", "run", "-ex", f"source {script}", str(exe)],
                         capture_output=True, text=True, timeout=120).stdout
    line = next((l for l in out.splitlines() if l.startswith("SWKWANDER ")), None)
    assert line is not None, out
    res = json.loads(line.split(" ", 1)[1])
    names = res["names"]
    assert names[:4] == ["leaf", "middle", "upper", "main"], res
    assert res["complete"], res
    assert all(n is not None for n in names), res
