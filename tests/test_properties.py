"""Property tests (hypothesis) for the walk loop on synthetic targets.

Random and adversarial registers, stack memory and code bytes — frame-pointer
cycles, self pointers, huge / misaligned / non-canonical values, unreadable
pages, prologue- and call-like code, a module with random (or mutated) CFI —
walked with the default steppers.  Properties of every walk:

* ``walk_stack`` never raises;
* ``len(walk) <= frame_cap`` (small caps too) and ``walk.stop_reason`` is a non-empty str;
* stack pointers strictly increase, except right after a frame of kind "signal";
* every caller frame's pc is canonical (the top frame's is whatever the registers say);
* a walk ends (a walk running past HANG_SECONDS is a hang: a failure; how fast
  walks are is measured by benchmarks/bounds.py, not asserted here);
* the target is never written.

SWK_HYPOTHESIS_EXAMPLES (default 200) sets the number of examples per test
(docs/robustness.md: the long local mode).  Hypothesis draws its examples from a
seed per test derived from the suite's seed (SWK_TEST_SEED, fixed under CI;
tests/swk_suite.py): two runs with the same seed try the same examples.
"""
import os

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from swk_plugin.frame import FrameKind
from swk_plugin.procstate import MemoryRegion
from swk_plugin.walker import Walker

from synthetic import (RAX, RBP, RBX, RIP, RSP, R12, FakeModule, FakeProcess, FakeSection,
                       fake_library)
import swk_suite as S
from test_cfi import (EhFrame, advance_loc, def_cfa, def_cfa_offset, def_cfa_register, offset,
                      offset_extended_sf, undefined)

EXAMPLES = int(os.environ.get("SWK_HYPOTHESIS_EXAMPLES", "200"))
#: a synthetic walk running longer than this never ends (they take milliseconds)
HANG_SECONDS = 60

CODE = 0x1000           # the fake module's text: [CODE, CODE_END)
CODE_END = 0x9000
EH_ADDR = 0x20000
STACK = 0x7ff0000       # the stack blob starts here
STACK_WORDS = 64
MAX_USER = (1 << 47) - 0x1000

SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=False,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much], database=None)


# --- strategies --------------------------------------------------------------------------------------

def stack_addr(word_index):
    return STACK + 8 * word_index


interesting_words = st.one_of(
    st.just(0),
    st.integers(0, STACK_WORDS - 1).map(stack_addr),                      # pointers into the stack (cycles)
    st.integers(0, STACK_WORDS * 8).map(lambda o: STACK + o),             # misaligned stack pointers
    st.integers(CODE, CODE_END - 1),                                      # return addresses into code
    st.integers(CODE, CODE + 0x40),                                       # near function starts
    st.sampled_from([(1 << 64) - 1, 1 << 63, 0x8000_0000_0000, 0xffff_8000_0000_0000,
                     0xffff_ffff_ff60_0000, MAX_USER, 1 << 47, 0x4141414141414141, 1, 8]),
    st.integers(0, (1 << 64) - 1),                                        # anything
)

# code bytes that look like prologues, calls, returns, signal trampolines, junk
code_snippets = st.sampled_from([
    b"\x55",                          # push rbp
    b"\x48\x89\xe5",                  # mov rbp, rsp
    b"\x55\x48\x89\xe5",              # both
    b"\x48\x83\xec\x18",              # sub rsp, 0x18
    b"\x48\x81\xec\x00\x10\x00\x00",  # sub rsp, 0x1000
    b"\xe8\x00\x00\x00\x00",          # call next
    b"\xe8\xfb\xff\xff\xff",          # call self
    b"\xff\xd0",                      # call rax
    b"\xff\x15\x00\x00\x00\x00",      # call [rip]
    b"\xc3", b"\xc9\xc3", b"\x5d\xc3",  # ret / leave; ret / pop rbp; ret
    b"\x48\xc7\xc0\x0f\x00\x00\x00\x0f\x05",  # mov rax, 15; syscall (__restore_rt)
    b"\xf3\x0f\x1e\xfa",              # endbr64
    b"\x90", b"\xcc", b"\x0f\x0b",    # nop, int3, ud2
    b"\x41\x54\x53",                  # push r12; push rbx
])

code_blobs = st.one_of(
    st.lists(code_snippets, max_size=40).map(b"".join),
    st.binary(max_size=256),
)


def valid_eh_frame():
    eh = EhFrame(addr=EH_ADDR)
    cie = eh.cie()
    eh.fde(cie, 0x1000, 0x1100, advance_loc(1) + def_cfa_offset(16) + offset(RBP, 2)
           + advance_loc(3) + def_cfa_register(RBP))
    eh.fde(cie, 0x2000, 0x2100, advance_loc(4) + def_cfa_offset(16))
    eh.fde(cie, 0x3000, 0x3100, undefined(RIP))
    scie = eh.cie(aug="zRS", ins=def_cfa(RSP, 0x40) + offset(RIP, 0) + offset_extended_sf(RSP, -1))
    eh.fde(scie, 0x4000, 0x4010, b"")
    eh.terminate()
    return bytes(eh.data)


VALID_EH = valid_eh_frame()


@st.composite
def eh_frames(draw):
    kind = draw(st.sampled_from(["none", "valid", "mutated", "random"]))
    if kind == "none":
        return None
    if kind == "valid":
        return VALID_EH
    if kind == "random":
        return draw(st.binary(max_size=200))
    data = bytearray(VALID_EH)
    for _ in range(draw(st.integers(1, 8))):
        i = draw(st.integers(0, len(data) - 1))
        data[i] = draw(st.integers(0, 255))
    if draw(st.booleans()):
        data = data[:draw(st.integers(0, len(data)))]
    return bytes(data)


@st.composite
def targets(draw):
    """(regs, blobs, regions, module) of one adversarial synthetic target."""
    if draw(st.booleans()):
        # a plausible frame-pointer chain (saved rbp, return address pairs), then corrupted
        step = draw(st.sampled_from([2, 2, 3, 4]))
        words = []
        for i in range(STACK_WORDS):
            if i % step == 0:
                words.append(stack_addr(min(i + step, STACK_WORDS - 1)))
            elif i % step == 1:
                words.append(draw(st.integers(CODE + 4, CODE_END - 1)))
            else:
                words.append(draw(interesting_words))
        for _ in range(draw(st.integers(0, 6))):
            words[draw(st.integers(0, STACK_WORDS - 1))] = draw(interesting_words)
        words = words[:draw(st.integers(1, STACK_WORDS))]
    else:
        words = draw(st.lists(interesting_words, min_size=0, max_size=STACK_WORDS))
    stack = b"".join(w.to_bytes(8, "little") for w in words)
    # optionally punch the stack short / misalign its start
    skew = draw(st.sampled_from([1, 3, 4])) if draw(st.integers(0, 4)) == 0 else 0
    blobs = {}
    if stack:
        blobs[STACK + skew] = stack
    if draw(st.integers(0, 3)):  # most of the time: the whole text is readable, prologue-like code
        pattern = draw(st.lists(code_snippets, min_size=1, max_size=8).map(b"".join))
        blobs[CODE] = (pattern * ((CODE_END - CODE) // len(pattern) + 1))[:CODE_END - CODE]
    # code: a few blobs in the text, with gaps (unreadable code pages)
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.sampled_from([0x1000, 0x1004, 0x2000, 0x3000, 0x4000, 0x5000, 0x8ff0,
                                   0x1000 + 4096 - 3]))
        blob = draw(code_blobs)
        blobs = {at: blob, **{k: v for k, v in blobs.items() if k != at}}  # first match wins: overlays
    if draw(st.booleans()):  # a second, far away, "stack" page that points back
        far = draw(st.sampled_from([0x7ffffffff000, 0x10000, MAX_USER & ~0xfff]))
        blobs.setdefault(far, b"".join(w.to_bytes(8, "little") for w in
                                       draw(st.lists(interesting_words, max_size=8))))
    sp = draw(st.integers(0, 8).map(stack_addr)) if draw(st.integers(0, 3)) else \
        draw(st.one_of(st.integers(STACK - 8, STACK + 8 * STACK_WORDS), interesting_words))
    regs = {
        RIP: draw(st.integers(CODE, CODE + 0x5000)) if draw(st.integers(0, 3)) else draw(interesting_words),
        RSP: sp,
        RBP: draw(st.integers(0, 8).map(stack_addr)) if draw(st.integers(0, 3)) else
        draw(st.one_of(st.just(sp), interesting_words)),
    }
    for r in (RAX, RBX, R12):
        if draw(st.booleans()):
            regs[r] = draw(interesting_words)
    eh = draw(eh_frames())
    sections = [FakeSection(".eh_frame", EH_ADDR, eh)] if eh is not None else []
    if eh is not None and draw(st.booleans()):
        sections.append(FakeSection(".debug_frame", 0, draw(st.binary(max_size=64))))
    symbols = draw(st.sampled_from([
        [("f", 0x1000, 0x100), ("g", 0x2000, 0x100), ("_start", 0x3000, 0x100), ("__restore_rt", 0x4000, 0x10)],
        [("main", 0x1000, 0x8000)],
        [("__libc_start_main", 0x1000, 0x10), ("clone", 0x2000, 0x10), ("start_thread", 0x3000, 0)],
        [],
    ]))
    module = FakeModule("/bin/fuzz", text=(CODE, CODE_END), sections=sections, symbols=symbols)
    regions = draw(st.sampled_from(["none", "good", "noexec"]))
    if regions == "none":
        regions = None
    elif regions == "good":
        regions = [MemoryRegion(CODE, CODE_END, executable=True, name="code"),
                   MemoryRegion(STACK - 0x1000, STACK + 0x1000, writable=True, name="[stack]")]
    else:
        regions = [MemoryRegion(STACK - 0x1000, STACK + 0x1000, writable=True, executable=True,
                                name="[stack]")]
    base = draw(st.sampled_from([0, 0, 0x10000000]))
    if base:  # keep the module's code where the words above point at
        module = FakeModule("/bin/fuzz", text=(CODE - base, CODE_END - base), sections=sections,
                            symbols=[])
    return regs, blobs, regions, module, base


class NoWrites(FakeProcess):
    """A FakeProcess that counts every access to a method whose name contains 'write'."""

    def __init__(self, *a, **kw):
        self.write_calls = 0
        super().__init__(*a, **kw)
        self.armed = True

    def __getattribute__(self, name):
        if "write" in name and name != "write_calls" and object.__getattribute__(self, "__dict__").get("armed"):
            d = object.__getattribute__(self, "__dict__")
            d["write_calls"] = d.get("write_calls", 0) + 1
        return object.__getattribute__(self, name)


def build(target, cap):
    regs, blobs, regions, module, base = target
    ps = NoWrites({1: regs}, libs=[fake_library(module, base=base)], blobs=blobs, regions=regions)
    return Walker(ps, frame_cap=cap), ps


def suite_seed(test):
    """@seed: the test's hypothesis seed, derived from the suite's seed and the test's name."""
    return seed(S.seed_for(f"hypothesis-{test.__name__}"))(test)


def check_walk(walk, cap, ps):
    assert 1 <= len(walk) <= cap
    assert isinstance(walk.stop_reason, str) and walk.stop_reason.strip()
    arch = ps.arch
    for prev, cur in zip(walk, walk[1:]):
        if prev.kind != FrameKind.SIGNAL:
            assert cur.sp > prev.sp, f"sp 0x{cur.sp:x} not above 0x{prev.sp:x} after a {prev.kind} frame"
        assert arch.is_canonical(cur.pc), f"caller pc 0x{cur.pc:x} is not canonical"
    assert ps.write_calls == 0


def walk_it(target, cap, max_frames=None):
    w, ps = build(target, cap)
    with S.hang_guard(HANG_SECONDS, "a synthetic walk"):
        walk = w.walk_stack(max_frames=max_frames)
    check_walk(walk, cap if max_frames is None else min(cap, max_frames), ps)
    return w, ps, walk


# --- properties ---------------------------------------------------------------------------------------

@suite_seed
@SETTINGS
@given(targets(), st.sampled_from([1, 2, 3, 5, 17, 100, 100_000]))
def test_random_targets_walk_safely(target, cap):
    walk_it(target, cap)


@suite_seed
@SETTINGS
@given(targets(), st.integers(1, 6))
def test_max_frames_is_obeyed(target, max_frames):
    _, _, walk = walk_it(target, 50, max_frames=max_frames)
    assert len(walk) <= max_frames


@suite_seed
@SETTINGS
@given(st.integers(0, STACK_WORDS - 1), st.integers(0, STACK_WORDS - 1), st.integers(0, 0x7fff),
       st.sampled_from([1, 4, 100, 100_000]))
def test_frame_pointer_cycles_end(start, back, ra_off, cap):
    """A frame-pointer chain that loops (onto itself or back down) ends the walk, within the cap."""
    words = []
    for i in range(STACK_WORDS):
        nxt = stack_addr(back if i == start else min(i + 2, STACK_WORDS - 1))
        words.append(nxt if i % 2 == 0 else CODE + (ra_off + i) % (CODE_END - CODE))
    words[start] = stack_addr(back)          # saved rbp: self pointer or a pointer back down
    blobs = {STACK: b"".join(w.to_bytes(8, "little") for w in words),
             CODE: b"\x55\x48\x89\xe5\xe8\x00\x00\x00\x00\xc9\xc3" * 300}
    regs = {RIP: CODE + 4 + ra_off % 0x100, RSP: stack_addr(start) - 8, RBP: stack_addr(start)}
    module = FakeModule("/bin/loop", text=(CODE, CODE_END), symbols=[("f", CODE, CODE_END - CODE)])
    walk_it((regs, blobs, None, module, 0), cap)


@suite_seed
@SETTINGS
@given(st.binary(min_size=0, max_size=300), st.integers(CODE, CODE + 0x5000), st.integers(0, 0xff8))
def test_random_cfi_bytes_never_break_a_walk(eh, pc, sp_off):
    """A module whose .eh_frame is random bytes: the DebugStepper declines, the walk goes on."""
    words = [stack_addr(i + 2) if i % 2 == 0 else CODE + 0x10 * i for i in range(STACK_WORDS)]
    blobs = {STACK: b"".join(w.to_bytes(8, "little") for w in words)}
    module = FakeModule("/bin/cfi", text=(CODE, CODE_END), sections=[FakeSection(".eh_frame", EH_ADDR, eh)])
    regs = {RIP: pc, RSP: STACK + sp_off % (8 * STACK_WORDS), RBP: STACK}
    walk_it((regs, blobs, None, module, 0), 100)


def test_the_write_counter_counts():
    """The 'never written' property is meaningful: a write through the process state is seen."""
    ps = NoWrites({1: {RIP: CODE, RSP: STACK, RBP: 0}})
    ps.write(STACK, b"x")
    assert ps.write_calls == 1
