"""The debugger-free core on synthetic memory: StepperGroup rules, the walk loop,
and each stepper alone (frame pointer, CFI, bottom of stack)."""
import pytest

from swk_plugin.frame import Frame, FrameKind, Location, Storage
from swk_plugin.procstate import LIBRARY_LOAD, LIBRARY_UNLOAD, Library
from swk_plugin.stepper import FrameStepper, Gcf
from swk_plugin.steppergroup import StepperGroup
from swk_plugin.steppers import BottomOfStackStepper, DebugStepper, FrameFuncStepper
from swk_plugin.walker import Walker

from synthetic import (R12, RBP, RBX, RIP, RSP, FakeModule, FakeProcess, FakeSection,
                       fake_library)
from test_cfi import (EhFrame, advance_loc, def_cfa, def_cfa_offset, def_cfa_register, offset,
                      offset_extended_sf, undefined)

STACK = 0x7ff0000


class Fixed(FrameStepper):
    """A stepper that always answers the same way, and counts calls."""

    def __init__(self, name, priority, answer):
        super().__init__()
        self.name, self.priority, self.answer = name, priority, answer
        self.calls = 0
        self.libs = []

    def get_caller_frame(self, frame):
        self.calls += 1
        return self.answer(frame) if callable(self.answer) else self.answer

    def new_library_notification(self, library, change):
        self.libs.append((library.path, change))


def code_and_stack():
    from swk_plugin.procstate import MemoryRegion
    return [MemoryRegion(0x1000, 0x100000, executable=True, name="code"),
            MemoryRegion(STACK - 0x100000, STACK + 0x100000, writable=True, name="[stack]")]


def empty_walker(*steppers, regs=None, libs=()):
    ps = FakeProcess({1: regs or {RIP: 0x1000, RSP: STACK, RBP: STACK + 0x40}}, libs=libs,
                     regions=code_and_stack())
    group = StepperGroup()
    for s in steppers:
        group.add_stepper(s)
    return Walker(ps, stepper_group=group), ps


# --- StepperGroup ------------------------------------------------------------------------------------

def test_group_ranges_are_half_open_and_ordered_by_priority():
    g = StepperGroup()
    low = Fixed("low", 0x1050, Gcf.NOT_ME)
    high = Fixed("high", 0x1010, Gcf.NOT_ME)
    mid = Fixed("mid", 0x1030, Gcf.NOT_ME)
    g.add_stepper(low)                     # whole space
    g.add_stepper(high, 0x1000, 0x2000)
    g.add_stepper(mid, 0x1800, 0x3000)
    assert g.candidates(0x0fff) == [low]
    assert g.candidates(0x1000) == [high, low]
    assert g.candidates(0x1800) == [high, mid, low]
    assert g.candidates(0x1fff) == [high, mid, low]
    assert g.candidates(0x2000) == [mid, low]
    assert g.candidates(0x3000) == [low]
    assert g.find_stepper_for_addr(0x1800) is high
    assert g.find_stepper_for_addr(0x1800, last_tried=high) is mid
    assert g.find_stepper_for_addr(0x1800, last_tried=mid) is low
    assert g.find_stepper_for_addr(0x1800, last_tried=low) is None
    assert g.get_steppers() == {low, high, mid}
    with pytest.raises(ValueError):
        g.add_stepper(mid, 0x3000, 0x2000)


def test_group_registers_steppers_and_forwards_library_notifications():
    g = StepperGroup()
    s = Fixed("s", 0x1000, Gcf.NOT_ME)
    g.register_stepper(s)
    assert s.group is g
    lib = Library("/lib/x.so", 0x1000)
    g.new_library_notification(lib, LIBRARY_LOAD)
    g.new_library_notification(lib, LIBRARY_UNLOAD)
    assert s.libs == [("/lib/x.so", LIBRARY_LOAD), ("/lib/x.so", LIBRARY_UNLOAD)]


def test_library_state_notifies_loads_and_unloads_through_the_walker():
    mod = FakeModule("/bin/prog")
    s = Fixed("s", 0x1000, Gcf.NOT_ME)
    w, ps = empty_walker(s, libs=[fake_library(mod)])
    ps.library_state.get_libraries()
    assert s.libs == [("/bin/prog", LIBRARY_LOAD)]
    ps.library_state.libs = []
    ps.library_state.notify_of_update()
    assert s.libs[-1] == ("/bin/prog", LIBRARY_UNLOAD)


# --- the walk loop -----------------------------------------------------------------------------------

def caller_at(ra, sp_delta=0x10):
    return lambda f: (Gcf.SUCCESS, Frame(ra, f.sp + sp_delta, f.fp))


def test_not_me_falls_through_to_the_next_stepper():
    first = Fixed("first", 0x1000, (Gcf.NOT_ME, "cannot"))
    calls = iter([0x2000, 0x3000])
    second = Fixed("second", 0x1100, lambda f: (Gcf.SUCCESS, Frame(next(calls, 0), f.sp + 16, 0)))
    w, _ = empty_walker(first, second)
    walk = w.walk_stack()
    assert [f.ra for f in walk] == [0x1000, 0x2000, 0x3000]
    assert walk.complete and "zero" in walk.stop_reason
    assert walk[1].stepper is second and walk[1].trust == second.trust
    assert first.calls == 3 and walk[0].is_top and walk[-1].is_bottom


def test_implausible_caller_is_not_me_and_the_next_stepper_wins():
    liar = Fixed("liar", 0x1000, lambda f: (Gcf.SUCCESS, Frame(0x2000, f.sp - 8, 0)))
    honest = Fixed("honest", 0x1100, lambda f: (Gcf.SUCCESS, Frame(0, f.sp + 8, 0)))
    w, _ = empty_walker(liar, honest)
    walk = w.walk_stack()
    assert len(walk) == 1 and walk.complete
    assert liar.calls == 1 and honest.calls == 1


def test_non_canonical_return_address_is_rejected():
    bad = Fixed("bad", 0x1000, lambda f: (Gcf.SUCCESS, Frame(0xffff800000001000, f.sp + 8, 0)))
    w, _ = empty_walker(bad)
    walk = w.walk_stack()
    assert len(walk) == 1 and not walk.complete
    assert "not a user-space address" in walk.stop_reason
    data = Fixed("data", 0x1000, lambda f: (Gcf.SUCCESS, Frame(0x200000, f.sp + 8, 0)))
    w, _ = empty_walker(data)
    walk = w.walk_stack()
    assert "not in executable memory" in walk.stop_reason


def test_error_aborts_and_stackbottom_completes():
    w, _ = empty_walker(Fixed("e", 0x1000, (Gcf.ERROR, "broken")), Fixed("n", 0x1100, caller_at(0x2000)))
    walk = w.walk_stack()
    assert len(walk) == 1 and not walk.complete and "broken" in walk.stop_reason
    w, _ = empty_walker(Fixed("b", 0x1000, (Gcf.STACKBOTTOM, "the end")))
    walk = w.walk_stack()
    assert walk.complete and walk.stop_reason == "the end" and walk[0].is_bottom


def test_memory_errors_in_a_stepper_mean_not_me():
    from swk_plugin.errors import MemoryReadError

    def boom(_f):
        raise MemoryReadError(0x10)
    w, _ = empty_walker(Fixed("boom", 0x1000, boom), Fixed("ok", 0x1100, (Gcf.STACKBOTTOM, "end")))
    assert w.walk_stack().complete


def test_loops_and_the_frame_cap_end_the_walk():
    def back_again(f):
        f.kind = FrameKind.SIGNAL       # signal frames may move the stack pointer anywhere
        return Gcf.SUCCESS, Frame(0x2000, STACK + 0x100, 0)
    w, _ = empty_walker(Fixed("loop", 0x1000, back_again))
    walk = w.walk_stack()
    assert len(walk) == 2 and "repeats a frame" in walk.stop_reason and not walk.complete
    w, _ = empty_walker(Fixed("stuck", 0x1000, lambda f: (Gcf.SUCCESS, Frame(0x2000, f.sp, 0))))
    walk = w.walk_stack()
    assert len(walk) == 1 and "not above" in walk.stop_reason
    w, _ = empty_walker(Fixed("up", 0x1000, caller_at(0x2000, 8)))
    w.frame_cap = 50
    walk = w.walk_stack()
    assert len(walk) == 50 and "frame cap of 50" in walk.stop_reason
    walk = w.walk_stack(max_frames=5)
    assert len(walk) == 5 and walk.limited


def test_no_stepper_states_why():
    w, _ = empty_walker(Fixed("never", 0x1000, (Gcf.NOT_ME, "not mine")))
    walk = w.walk_stack()
    assert "no stepper could find the caller" in walk.stop_reason and "not mine" in walk.stop_reason


def test_walk_single_frame_and_from_frame():
    w, _ = empty_walker(Fixed("s", 0x1000, caller_at(0x2000)))
    top = w.get_initial_frame()
    caller = w.walk_single_frame(top)
    assert caller.ra == 0x2000 and caller.sp == top.sp + 0x10
    walk = w.walk_stack_from_frame(caller, max_frames=3)
    assert walk[0] is caller and len(walk) == 3
    assert Walker.version() == (0, 1, 0)
    assert w.get_available_threads() == [1]


# --- FrameFuncStepper ----------------------------------------------------------------------------------

PROLOGUE = bytes.fromhex("f30f1efa" "55" "4889e5" "53" "4154" "4883ec10")  # endbr; push rbp; mov; push rbx; push r12; sub
BODY = b"\x90" * 16 + b"\x5b\x41\x5c\x5d\xc3"


def fp_process(pc, sp, fp, extra_regs=None):
    mod = FakeModule("/bin/prog", symbols=[("f", 0x1000, 0x100), ("g", 0x2000, 0x100)])
    regs = {RIP: pc, RSP: sp, RBP: fp, RBX: 0xb0b, R12: 0xc12}
    regs.update(extra_regs or {})
    ps = FakeProcess({1: regs}, libs=[fake_library(mod)])
    ps.write(0x1000, PROLOGUE + BODY)
    ps.write(0x2000, b"\x48\x83\xec\x08" + b"\x90" * 32)     # g: no frame pointer
    return ps


def test_framefunc_follows_the_chain_and_recovers_pushed_registers():
    fp = STACK + 0x40
    ps = fp_process(0x1010, STACK, fp)
    # [fp] = caller's rbp, [fp+8] = ra, [fp-8] = saved rbx, [fp-16] = saved r12
    ps.write_words(fp - 16, 0x12121212, 0x3b3b3b3b, STACK + 0x100, 0x1050)
    w = Walker(ps)
    top = w.get_initial_frame()
    st = FrameFuncStepper(w)
    status, caller = st.get_caller_frame(top)
    assert status is Gcf.SUCCESS
    assert (caller.ra, caller.sp, caller.fp) == (0x1050, fp + 16, STACK + 0x100)
    assert caller.regs[RBX] == 0x3b3b3b3b and caller.regs[R12] == 0x12121212
    assert caller.reg_locations[RBX] == Location.address(fp - 8)
    assert caller.ra_location == Location(Storage.ADDRESS, fp + 8)
    assert caller.fp_location.location is Storage.ADDRESS


@pytest.mark.parametrize("pc,ra_slot,fp_from_stack", [
    (0x1000, 0, False),    # at entry: endbr64 not executed yet
    (0x1004, 0, False),    # at push %rbp
    (0x1005, 8, True),     # after push, before mov
])
def test_framefunc_top_frame_inside_the_prologue(pc, ra_slot, fp_from_stack):
    ps = fp_process(pc, STACK, 0xdead0)
    ps.write_words(STACK, STACK + 0x500 if fp_from_stack else 0x1060, 0x1060)
    w = Walker(ps)
    status, caller = FrameFuncStepper(w).get_caller_frame(w.get_initial_frame())
    assert status is Gcf.SUCCESS
    assert caller.ra == 0x1060 and caller.sp == STACK + ra_slot + 8
    assert caller.fp == (STACK + 0x500 if fp_from_stack else 0xdead0)


def test_framefunc_top_frame_at_ret():
    ret_at = 0x1000 + len(PROLOGUE) + len(BODY) - 1
    ps = fp_process(ret_at, STACK, 0xcafe0)
    ps.write_words(STACK, 0x1070)
    w = Walker(ps)
    status, caller = FrameFuncStepper(w).get_caller_frame(w.get_initial_frame())
    assert status is Gcf.SUCCESS and caller.ra == 0x1070 and caller.fp == 0xcafe0


def test_framefunc_declines_functions_without_a_frame_and_bad_chains():
    w = Walker(fp_process(0x2004, STACK, STACK + 0x40))
    assert FrameFuncStepper(w).get_caller_frame(w.get_initial_frame())[0] is Gcf.NOT_ME
    w = Walker(fp_process(0x1010, STACK, STACK - 0x40))       # fp below sp
    assert FrameFuncStepper(w).get_caller_frame(w.get_initial_frame())[0] is Gcf.NOT_ME
    w = Walker(fp_process(0x1010, STACK, STACK + 0x43))       # misaligned
    assert FrameFuncStepper(w).get_caller_frame(w.get_initial_frame())[0] is Gcf.NOT_ME
    ps = fp_process(0x1010, STACK, STACK + 0x40)
    ps.write_words(STACK + 0x30, 0, 0, STACK + 0x100, 0x99999000)  # ra outside executable memory
    w = Walker(ps)
    status, why = FrameFuncStepper(w).get_caller_frame(w.get_initial_frame())
    assert status is Gcf.NOT_ME and "executable" in why


# --- DebugStepper ------------------------------------------------------------------------------------------

def cfi_module():
    eh = EhFrame(addr=0x20000)
    cie = eh.cie()
    # f: push rbp (1 byte at 0x1000), mov rsp,rbp; CFA = rbp+16 after 0x1004
    eh.fde(cie, 0x1000, 0x1100, advance_loc(1) + def_cfa_offset(16) + offset(RBP, 2)
           + advance_loc(3) + def_cfa_register(RBP))
    # g: frameless, sub $8: CFA = rsp+16 from 0x2004
    eh.fde(cie, 0x2000, 0x2100, advance_loc(4) + def_cfa_offset(16))
    # _start: return address undefined
    eh.fde(cie, 0x3000, 0x3100, undefined(RIP))
    # a signal trampoline: CIE with S; CFA from rsp, rip saved at CFA+0x20
    scie = eh.cie(aug="zRS", ins=def_cfa(RSP, 0x40) + offset(RIP, 0) + offset_extended_sf(RSP, -1))
    eh.fde(scie, 0x4000, 0x4010, b"")
    eh.terminate()
    mod = FakeModule("/bin/cfi", text=(0x1000, 0x5000),
                     sections=[FakeSection(".eh_frame", 0x20000, eh.data)],
                     symbols=[("f", 0x1000, 0x100), ("g", 0x2000, 0x100), ("_start", 0x3000, 0x100),
                              ("__restore_rt", 0x4000, 0x10)])
    return mod


def debug_walker(regs):
    ps = FakeProcess({1: regs}, libs=[fake_library(cfi_module(), base=0x10000000)])
    return Walker(ps), ps


def test_debugstepper_frameless_and_framed_functions():
    B = 0x10000000
    w, ps = debug_walker({RIP: B + 0x2010, RSP: STACK, RBP: STACK + 0x30, RBX: 7})
    ps.write_words(STACK + 8, B + 0x1050)                     # g's return address at CFA-8
    ps.write_words(STACK + 0x30, STACK + 0x80, B + 0x3010)    # f: saved rbp at CFA-16, ra at CFA-8
    step = DebugStepper(w)
    top = w.get_initial_frame()
    status, c1 = step.get_caller_frame(top)
    assert status is Gcf.SUCCESS
    assert (c1.ra, c1.sp, c1.fp) == (B + 0x1050, STACK + 16, STACK + 0x30)
    assert c1.regs[RBX] == 7 and c1.callee_cfa == STACK + 16       # callee-saved carried forward
    assert c1.ra_location == Location.address(STACK + 8)
    c1.walker, c1.thread = w, 1
    status, c2 = step.get_caller_frame(c1)                    # looked up at ra-1, inside f's body
    assert status is Gcf.SUCCESS
    assert (c2.ra, c2.sp, c2.fp) == (B + 0x3010, STACK + 0x40, STACK + 0x80)
    c2.walker = w
    status, why = step.get_caller_frame(c2)
    assert status is Gcf.STACKBOTTOM and "undefined" in why
    walk = w.walk_stack()
    assert [f.name for f in walk] == ["g", "f", "_start"] and walk.complete


def test_debugstepper_signal_frames_mark_the_interrupted_caller():
    B = 0x10000000
    w, ps = debug_walker({RIP: B + 0x4000, RSP: STACK, RBP: 0})
    ps.write_words(STACK + 0x40, B + 0x2000, STACK + 0x400)   # saved rip (at the entry of g) and rsp
    top = w.get_initial_frame()
    status, caller = DebugStepper(w).get_caller_frame(top)
    assert status is Gcf.SUCCESS
    assert caller.callee_kind == FrameKind.SIGNAL and caller.non_call
    assert top.kind == FrameKind.NORMAL          # the stepper left it: the walker records it
    assert caller.ra == B + 0x2000 and caller.sp == STACK + 0x400
    assert caller.lookup_pc == B + 0x2000                     # exact pc: it was interrupted, not a call


def test_debugstepper_declines_without_cfi():
    w, _ = debug_walker({RIP: 0x500, RSP: STACK, RBP: 0})
    status, why = DebugStepper(w).get_caller_frame(w.get_initial_frame())
    assert status is Gcf.NOT_ME and "no module" in why


# --- BottomOfStackStepper --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["_start", "clone", "clone3", "__clone3", "start_thread"])
def test_bottom_stepper_knows_thread_and_process_starts(name):
    mod = FakeModule("/bin/b", symbols=[(name, 0x1000, 0x100), ("other", 0x2000, 0x100)])
    ps = FakeProcess({1: {RIP: 0x1010, RSP: STACK, RBP: 0}}, libs=[fake_library(mod)])
    w = Walker(ps)
    status, why = BottomOfStackStepper(w).get_caller_frame(w.get_initial_frame())
    assert status is Gcf.STACKBOTTOM and name in why
    ps.regs_by_thread[1] = {RIP: 0x2010, RSP: STACK, RBP: STACK + 0x40}
    ps.invalidate()
    assert BottomOfStackStepper(w).get_caller_frame(w.get_initial_frame())[0] is Gcf.NOT_ME


def test_bottom_stepper_zero_frame_pointer():
    """Asked last, where no other stepper found a caller: a zero frame pointer is the ABIs' mark
    of the outermost frame (_start's xorl %ebp, %ebp; GDB's i386 unwinder ends there)."""
    mod = FakeModule("/bin/b", symbols=[("other", 0x2000, 0x100)])
    ps = FakeProcess({1: {RIP: 0x2010, RSP: STACK, RBP: 0}}, libs=[fake_library(mod)])
    w = Walker(ps)
    status, why = BottomOfStackStepper(w).get_caller_frame(w.get_initial_frame())
    assert status is Gcf.STACKBOTTOM and "frame pointer is zero" in why


def test_bottom_stepper_zero_return_address():
    w, _ = empty_walker()
    f = Frame(0, STACK, 0, walker=w)
    assert BottomOfStackStepper(w).get_caller_frame(f)[0] is Gcf.STACKBOTTOM


def test_frame_equality_and_locations():
    a = Frame(1, 2, 3)
    b = Frame(1, 2, 3)
    assert a == b and a != Frame(1, 2, 4)
    assert a.ra_location.location is Storage.UNKNOWN
    a.set_ra_location(Location.register(16))
    assert a.get_ra_location() == Location(Storage.REGISTER, 16)


def test_framefunc_keeps_the_chain_inside_the_stack_mapping():
    from swk_plugin.procstate import MemoryRegion
    ps = fp_process(0x1010, STACK, STACK + 0x2000)
    ps.write_words(STACK + 0x2000 - 16, 0, 0, STACK + 0x3000, 0x1050)
    code = MemoryRegion(0x1000, 0x9000, executable=True)
    ps.regions = [code, MemoryRegion(STACK - 0x1000, STACK + 0x1000, writable=True),
                  MemoryRegion(STACK + 0x1000, STACK + 0x4000, writable=True)]
    w = Walker(ps)
    status, why = FrameFuncStepper(w).get_caller_frame(w.get_initial_frame())
    assert status is Gcf.NOT_ME and "not a frame in this stack" in why, why
    ps.regions = [code, MemoryRegion(STACK - 0x1000, STACK + 0x4000, writable=True)]
    ps.invalidate()
    assert FrameFuncStepper(w).get_caller_frame(w.get_initial_frame())[0] is Gcf.SUCCESS


def test_top_frame_values_come_from_registers():
    w, _ = empty_walker()
    top = w.get_initial_frame()
    assert top.ra_location == Location.register(RIP)
    assert top.sp_location == Location.register(RSP) and top.fp_location == Location.register(RBP)


def test_a_stepper_that_crashes_is_skipped_and_recorded():
    def crash(_f):
        raise ZeroDivisionError("oops")
    w, _ = empty_walker(Fixed("crash", 0x1000, crash), Fixed("ok", 0x1100, (Gcf.STACKBOTTOM, "end")))
    walk = w.walk_stack()
    assert walk.complete and walk.stop_reason == "end"
    assert w.stepper_errors and w.stepper_errors[0][0] == "crash"


def test_a_repeated_frame_makes_the_next_stepper_try():
    def back_again(f):
        f.kind = FrameKind.SIGNAL
        return Gcf.SUCCESS, Frame(0x2000, STACK + 0x100, 0)
    rescue = Fixed("rescue", 0x1100, lambda f: (Gcf.SUCCESS, Frame(0, f.sp + 0x10, 0)))
    w, _ = empty_walker(Fixed("loop", 0x1000, back_again), rescue)
    walk = w.walk_stack()
    assert [f.ra for f in walk] == [0x1000, 0x2000] and walk.complete
    assert walk[1].stepper.name == "loop" and rescue.calls == 1


# --- steppers that decline by pc alone (declines_at) ---------------------------------------------


class ByPc(Fixed):
    """Declines every frame at the pcs in ``mine_not`` (saying so through declines_at)."""

    def __init__(self, name, priority, answer, mine_not):
        super().__init__(name, priority, answer)
        self.mine_not, self.asked = set(mine_not), []

    def declines_at(self, pc, exact):
        self.asked.append((pc, exact))
        return "not at this pc" if pc in self.mine_not else None


def test_a_stepper_declining_a_pc_is_asked_once_per_pc_and_stop():
    # a recursion: every caller at 0x2000, each 16 bytes up; 0x2000 is never the picky one's
    picky = ByPc("picky", 0x1000, lambda f: (Gcf.SUCCESS, Frame(0x2000, f.sp + 16, 0)), {0x2000})
    rest = Fixed("rest", 0x1100, lambda f: (Gcf.SUCCESS, Frame(0x2000 if f.sp < STACK + 0x100 else 0,
                                                                 f.sp + 16, 0)))
    w, ps = empty_walker(picky, rest)
    walk = w.walk_stack()
    assert walk.complete and [f.ra for f in walk][:3] == [0x1000, 0x2000, 0x2000]
    # the top frame (0x1000) was the picky stepper's; every 0x2000 frame was passed to the next
    assert picky.calls == 1 and rest.calls == len(walk) - 1
    assert sorted(set(picky.asked)) == [(0x1000, True), (0x2000, False)]
    assert picky.asked.count((0x2000, False)) == 1
    # at a new stop (the process state's cache dropped) it is asked again
    ps.invalidate()
    w.walk_stack()
    assert picky.asked.count((0x2000, False)) == 2


def test_declining_steppers_still_say_why_when_no_stepper_answers():
    picky = ByPc("picky", 0x1000, (Gcf.SUCCESS, None), {0x1000})
    never = Fixed("never", 0x1100, (Gcf.NOT_ME, "not mine"))
    w, _ = empty_walker(picky, never)
    walk = w.walk_stack()
    assert picky.calls == 0
    assert "picky: not at this pc" in walk.stop_reason and "never: not mine" in walk.stop_reason


def test_a_stepper_added_later_is_asked_at_a_pc_already_seen():
    picky = ByPc("picky", 0x1000, (Gcf.SUCCESS, None), {0x1000})
    w, _ = empty_walker(picky)
    assert not w.walk_stack().complete
    w.add_stepper(Fixed("end", 0x1200, (Gcf.STACKBOTTOM, "the end")))
    assert w.walk_stack(max_frames=3).complete   # a new candidates list: the memo is not reused


def test_the_collector_is_held_off_only_while_walking():
    import gc
    from swk_plugin.cache import collector_paused
    seen = []
    w, _ = empty_walker(Fixed("look", 0x1000, lambda f: (seen.append(gc.isenabled()), (Gcf.STACKBOTTOM, "end"))[1]))
    assert gc.isenabled()
    w.walk_stack()
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()          # left as it was found
    finally:
        gc.enable()
    with pytest.raises(ValueError):
        with collector_paused():
            raise ValueError("inside")
    assert gc.isenabled()
