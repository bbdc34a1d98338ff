"""SigHandlerStepper: signal trampolines on synthetic memory, the layout against the
kernel's headers and glibc's CFI, and every restored register against GDB's."""
import json
import subprocess

import pytest

import swk_suite as S

from swk_plugin.arch.x86_64 import signal as L
from swk_plugin.arch import X86_64
from swk_plugin.frame import Frame, FrameKind, Location
from swk_plugin.procstate import Library, MemoryRegion
from swk_plugin.stepper import FrameStepper, Gcf
from swk_plugin.steppergroup import StepperGroup
from swk_plugin.steppers import DebugStepper
from swk_plugin.steppers.sighandler import SigHandlerStepper
from swk_plugin.walker import Walker

from synthetic import RBP, RIP, RSP, R12, FakeModule, FakeProcess, FakeSection, fake_library
from test_cfi import LIBC, DEREF, EXPRESSION, X86_CIE, EhFrame, RegRule, breg, def_cfa_offset

STACK = 0x7ff0000
UC = STACK + 0x1000            # the trampoline frame's sp: the ucontext
TRAMP = 0x3000                 # trampoline in /lib/libc.so.6 (base 0)
ANON = 0x7f0000001000          # trampoline in anonymous memory
CODE_RAX, CODE_EAX = (code for code, _ in L.TRAMPOLINES)
RFLAGS = L.RFLAGS

#: A distinct value for each of the 18 saved registers.
VALUES = {regno: 0x5157_0000_0000_0000 | (regno << 8) | regno for regno in L.SC_OFFSETS}
INTERRUPTED_PC, INTERRUPTED_SP = 0x2044, STACK + 0x2000
VALUES.update({RIP: INTERRUPTED_PC, RSP: INTERRUPTED_SP, RFLAGS: 0x246})


def write_sigframe(ps, uc, values=VALUES):
    """The kernel's rt_sigframe from &uc on (pretcode already popped), with ``values`` saved."""
    ps.write(uc, bytes(L.UCONTEXT_SIZE + L.SIGINFO_SIZE))
    ps.write_words(uc + L.UC_FLAGS, 0x7)
    sc = bytearray(L.SC_GREGS_SIZE)
    for regno, off in L.SC_OFFSETS.items():
        sc[off:off + 8] = values[regno].to_bytes(8, "little")
    ps.write(uc + L.UC_MCONTEXT, bytes(sc))


def make_process(code=CODE_RAX, at=TRAMP, symbols=(), sections=(), sigframe=True, libs=None):
    """A process with /lib/libc.so.6 at 0 (text 0x1000-0x9000) and a trampoline ``code`` at ``at``."""
    mod = FakeModule("/lib/libc.so.6", symbols=symbols, sections=sections)
    ps = FakeProcess({1: {RIP: 0x1010, RSP: STACK, RBP: 0}},
                     libs=[fake_library(mod)] if libs is None else libs)
    if code is not None:
        ps.write(at, code + b"\x90" * 7)
    if sigframe:
        write_sigframe(ps, UC)
    return ps


def tramp_frame(ps, pc=TRAMP, sp=UC, **kw):
    """The frame a handler's unwind produces: ra = the trampoline, sp = &uc."""
    w = Walker(ps, stepper_group=StepperGroup())
    st = SigHandlerStepper(w)
    w.add_stepper(st)
    f = Frame(pc, sp, 0xf00, walker=w)
    for k, v in kw.items():
        setattr(f, k, v)
    return st, f


def check_restored(caller, uc=UC):
    sc = uc + L.UC_MCONTEXT
    assert len(L.SC_OFFSETS) == 18
    assert caller.regs == VALUES
    for regno, off in L.SC_OFFSETS.items():
        assert caller.reg_locations[regno] == Location.address(sc + off)
    assert (caller.ra, caller.sp, caller.fp) == (INTERRUPTED_PC, INTERRUPTED_SP, VALUES[RBP])
    assert caller.ra_location == Location.address(sc + 128)
    assert caller.sp_location == Location.address(sc + 120)
    assert caller.fp_location == Location.address(sc + 80)
    assert caller.non_call and caller.lookup_pc == INTERRUPTED_PC


# --- recognition -------------------------------------------------------------------------------

@pytest.mark.parametrize("code", [CODE_RAX, CODE_EAX], ids=["mov-rax", "mov-eax"])
@pytest.mark.parametrize("where", ["module", "anonymous"])
def test_trampoline_by_its_code_without_symbols_or_cfi(code, where):
    at = TRAMP if where == "module" else ANON
    ps = make_process(code, at=at)
    st, f = tramp_frame(ps, pc=at)
    assert (ps.library_state.get_library_at_addr(at) is None) == (where == "anonymous")
    status, caller = st.get_caller_frame(f)
    assert status is Gcf.SUCCESS and st.recognise(f) == "code"
    assert caller.callee_kind == FrameKind.SIGNAL
    assert caller.callee_cfa == UC + L.UCONTEXT_SIZE + L.SIGINFO_SIZE
    assert f.kind == FrameKind.NORMAL and f.cfa is None     # the walker records them, not the stepper
    check_restored(caller)


def test_trampoline_by_name_when_its_code_cannot_be_read():
    ps = make_process(code=None, symbols=[("__sigaction", 0x2f00, 0x100), ("__restore_rt", TRAMP, 9)])
    st, f = tramp_frame(ps)
    assert f.name == "__sigaction"              # looked up at ra-1 as an ordinary return address
    status, caller = st.get_caller_frame(f)
    assert status is Gcf.SUCCESS and st.recognise(f) == "symbol"
    st.walker.note_callee(f, caller.callee_kind, caller.callee_cfa)   # the walker accepting it
    assert f.kind == FrameKind.SIGNAL and f.name == "__restore_rt"   # now at its pc
    check_restored(caller)


def test_trampoline_by_an_s_augmented_cie():
    eh = EhFrame(addr=0x20000)
    cie = eh.cie()
    eh.fde(cie, 0x2f00, TRAMP - 1, def_cfa_offset(8))        # the function before it
    # like glibc's: the FDE starts one byte early so that pc-1 finds it too
    eh.fde(eh.cie(aug="zRS"), TRAMP - 1, TRAMP + 9, b"")
    eh.terminate()
    ps = make_process(code=b"\x0f\x0b" * 4, sections=[FakeSection(".eh_frame", 0x20000, eh.data)])
    st, f = tramp_frame(ps)
    status, caller = st.get_caller_frame(f)
    assert status is Gcf.SUCCESS and st.recognise(f) == "cfi"
    check_restored(caller)


@pytest.mark.parametrize("code,syscall_at", L.TRAMPOLINES)
def test_a_frame_stopped_on_the_syscall_is_recognised(code, syscall_at):
    ps = make_process(code)
    st, f = tramp_frame(ps, pc=TRAMP + syscall_at, is_top=True)
    status, caller = st.get_caller_frame(f)
    assert status is Gcf.SUCCESS
    check_restored(caller)
    # ... but a return address there is not the trampoline's
    st, f = tramp_frame(ps, pc=TRAMP + syscall_at)
    assert st.get_caller_frame(f)[0] is Gcf.NOT_ME


def test_other_code_is_not_me():
    ps = make_process(code=bytes.fromhex("48c7c00e0000000f05"),          # mov $14,%rax; syscall
                      symbols=[("__restore_rt_not", TRAMP, 9)])
    st, f = tramp_frame(ps)
    status, why = st.get_caller_frame(f)
    assert status is Gcf.NOT_ME and "not a signal trampoline" in why
    assert f.kind == FrameKind.NORMAL and f.cfa is None
    st, f = tramp_frame(ps, pc=0x5000)                                    # unreadable code
    assert st.get_caller_frame(f)[0] is Gcf.NOT_ME
    st, f = tramp_frame(make_process(), pc=TRAMP + 1)                     # inside, not at, a trampoline
    assert st.get_caller_frame(f)[0] is Gcf.NOT_ME


def test_an_architecture_without_a_signal_layout_is_never_claimed():
    class Bare(X86_64):
        signal_frame = None
    ps = make_process()
    ps.arch = Bare()
    st, f = tramp_frame(ps)
    assert st.get_caller_frame(f)[0] is Gcf.NOT_ME


def test_unreadable_sigframe_is_not_me_with_a_reason():
    ps = make_process(sigframe=False)
    ps.write(UC, bytes(L.UC_MCONTEXT + 64))                              # cut short inside the gregs
    st, f = tramp_frame(ps)
    status, why = st.get_caller_frame(f)
    assert status is Gcf.NOT_ME and "sigcontext is unreadable" in why
    assert why.kind == FrameKind.SIGNAL                                   # still the trampoline
    assert st.walker.step(f).status is Gcf.NOT_ME
    assert f.kind == FrameKind.SIGNAL                                     # as the walker records


def test_recognition_is_cached_per_pc_and_anonymous_code_per_stop():
    ps = make_process(at=ANON)
    ps.write(TRAMP, CODE_RAX)
    st, f = tramp_frame(ps)
    calls = []
    real = st._recognise
    st._recognise = lambda *a: calls.append(a[1]) or real(*a)
    for _ in range(3):
        assert st.recognise(f) == "code"
    g = Frame(ANON, UC, 0, walker=st.walker)
    for _ in range(3):
        assert st.recognise(g) == "code"
    assert calls == [TRAMP, ANON]
    ps.write(ANON, b"\xc3" * 16)                 # the anonymous page is reused ...
    assert st.recognise(g) == "code"             # ... unseen until the target runs
    ps.invalidate()
    assert st.recognise(g) is None and st.recognise(f) == "code"
    assert calls == [TRAMP, ANON, ANON]
    ps.library_state.libs = ps.library_state.libs + [Library("/lib/other.so", 0x300000)]
    ps.library_state.notify_of_update()          # a library comes: module pcs are asked again
    assert st.recognise(f) == "code" and calls[-1] == TRAMP


# --- in a walk -----------------------------------------------------------------------------------

class Recorder(FrameStepper):
    """Takes whatever frame it is given and ends the walk, keeping the frames it saw."""
    name, priority = "Recorder", 0x1ff0

    def __init__(self):
        super().__init__()
        self.seen = []

    def get_caller_frame(self, frame):
        self.seen.append(frame)
        return Gcf.STACKBOTTOM, "recorded"


def handler_module():
    """/bin/prog: handler (CFI: CFA = rsp+8), and interrupted() with neither CFI nor a frame."""
    eh = EhFrame(addr=0x20000)
    eh.fde(eh.cie(ins=X86_CIE), 0x1000, 0x1100, b"")
    eh.terminate()
    return FakeModule("/bin/prog", text=(0x1000, 0x3000),
                      sections=[FakeSection(".eh_frame", 0x20000, eh.data)],
                      symbols=[("handler", 0x1000, 0x100), ("interrupted", 0x2000, 0x100)])


@pytest.mark.parametrize("altstack", [None, 0x4000000, 0x10000000], ids=["main", "alt-below", "alt-above"])
def test_walk_from_handler_through_the_trampoline(altstack):
    """handler -> trampoline in anonymous memory -> interrupted (no CFI, no frame pointer).
    On a sigaltstack the sigframe is elsewhere: below or above the interrupted sp."""
    sp = INTERRUPTED_SP - 0x1000 if altstack is None else altstack + 0x8000
    handler_sp = sp - 8
    regions = [MemoryRegion(0x1000, 0x3000, executable=True, name="/bin/prog"),
               MemoryRegion(ANON & ~0xfff, (ANON & ~0xfff) + 0x1000, executable=True),
               MemoryRegion(STACK - 0x10000, STACK + 0x10000, writable=True, name="[stack]")]
    if altstack is not None:
        regions.append(MemoryRegion(altstack, altstack + 0x10000, writable=True))
    ps = FakeProcess({1: {RIP: 0x1010, RSP: handler_sp, RBP: 0, R12: 1}},
                     libs=[fake_library(handler_module())], regions=regions)
    ps.write(ANON, CODE_RAX)
    ps.write_words(handler_sp, ANON)                 # the handler's return address: the trampoline
    write_sigframe(ps, sp)
    rec = Recorder()
    w = Walker(ps, stepper_group=StepperGroup())
    for s in (SigHandlerStepper(w), DebugStepper(w), rec):
        w.add_stepper(s)
    walk = w.walk_stack()
    assert [f.ra for f in walk] == [0x1010, ANON, INTERRUPTED_PC]
    assert [f.name for f in walk] == ["handler", None, "interrupted"]
    assert [f.kind for f in walk] == [FrameKind.NORMAL, FrameKind.SIGNAL, FrameKind.NORMAL]
    assert walk[1].sp == sp and walk[1].trust == "cfi"
    assert walk[2].stepper.name == "SigHandlerStepper" and walk[2].trust == "signal"
    assert walk.complete and rec.seen[-1] is walk[2]
    check_restored(walk[2], uc=sp)                   # exact registers for whoever steps next


# --- the layout against the kernel's headers and glibc's CFI ---------------------------------

def _cc(tmp_path, name, source, *flags):
    S.need_tool("gcc")
    src = tmp_path / f"{name}.c"
    src.write_text(source)
    exe = tmp_path / name
    subprocess.run(["gcc", *flags, "-o", str(exe), str(src)], check=True, capture_output=True, timeout=120)
    return exe


OFFSETS_C = r"""
#include <stddef.h>
#include <asm/signal.h>
#include <asm/sigcontext.h>
#include <asm/ucontext.h>
#include <asm/siginfo.h>
int printf(const char *, ...);
#define SC(f) printf("%s %zu\n", #f, offsetof(struct sigcontext, f))
int main(void)
{
    printf("UC_MCONTEXT %zu\n", offsetof(struct ucontext, uc_mcontext));
    printf("UC_STACK %zu\n", offsetof(struct ucontext, uc_stack));
    printf("UC_SIGMASK %zu\n", offsetof(struct ucontext, uc_sigmask));
    printf("UCONTEXT_SIZE %zu\n", sizeof(struct ucontext));
    printf("SIGCONTEXT_SIZE %zu\n", sizeof(struct sigcontext));
    printf("SIGINFO_SIZE %zu\n", sizeof(siginfo_t));
    printf("SC_FPSTATE %zu\n", offsetof(struct sigcontext, fpstate));
    SC(r8); SC(r9); SC(r10); SC(r11); SC(r12); SC(r13); SC(r14); SC(r15);
    SC(rdi); SC(rsi); SC(rbp); SC(rbx); SC(rdx); SC(rax); SC(rcx); SC(rsp); SC(rip); SC(eflags);
    return 0;
}
"""


def test_layout_matches_the_kernel_headers(tmp_path):
    S.need_path("/usr/include/asm-generic/ucontext.h", "linux-libc-dev", "Linux kernel headers")
    exe = _cc(tmp_path, "offsets", OFFSETS_C)
    got = dict(line.split() for line in subprocess.run([str(exe)], capture_output=True, text=True,
                                                       check=True).stdout.splitlines())
    got = {k: int(v) for k, v in got.items()}
    for const in ("UC_MCONTEXT", "UC_STACK", "UC_SIGMASK", "UCONTEXT_SIZE", "SIGCONTEXT_SIZE",
                  "SIGINFO_SIZE", "SC_FPSTATE"):
        assert getattr(L, const) == got[const], const
    for name, regno in L.SIGCONTEXT_REGS:
        assert L.SC_OFFSETS[regno] == got[name], name
    assert L.RT_SIGFRAME_SIZE == 8 + got["UCONTEXT_SIZE"] + got["SIGINFO_SIZE"]


@pytest.fixture(scope="module")
def libc():
    S.need_path(LIBC, "libc6", "x86-64 glibc")
    from swk_plugin.elf.module import ElfModule
    return ElfModule(LIBC)


def _libc_trampoline(libc):
    from swk_plugin.unwind.cfi import module_cfi
    for table in module_cfi(libc):
        for fde in table.iter_fdes():
            if fde.signal_frame:
                return table, fde
    pytest.fail(f"{LIBC}'s __restore_rt has no S-augmented FDE (glibc's x86-64 one has)", pytrace=False)


def test_layout_matches_glibcs_cfi_for_restore_rt(libc):
    table, fde = _libc_trampoline(libc)
    start = fde.pc_begin + 1                          # glibc's FDE begins a byte early
    row = table.row_at(start)
    assert row.cfa.expr == breg(RSP, L.UC_MCONTEXT + L.SC_OFFSETS[RSP]) + DEREF
    described = {r for r, rule in row.regs.items() if rule.kind == EXPRESSION}
    assert described == set(L.SC_OFFSETS) - {RFLAGS}   # glibc leaves out eflags, as DWARF may
    for regno in described:
        assert row.regs[regno] == RegRule(EXPRESSION, breg(RSP, L.UC_MCONTEXT + L.SC_OFFSETS[regno]))
    text = libc.section(".text")
    off = start - text.addr
    assert text.data[off:off + 9] == CODE_RAX


@pytest.mark.parametrize("readable_code", [True, False])
def test_stripped_libcs_trampoline_by_code_or_by_cfi_alone(libc, readable_code):
    """The installed libc (no .symtab): with its code in memory, or only its CFI."""
    _table, fde = _libc_trampoline(libc)
    base = 0x7f1234560000
    start = base + fde.pc_begin + 1
    lib = Library(LIBC, base, lambda _l: libc)
    ps = FakeProcess({1: {RIP: 0x1010, RSP: STACK, RBP: 0}}, libs=[lib])
    if readable_code:
        text = libc.section(".text")
        off = fde.pc_begin - 0x40 - text.addr
        ps.write(start - 0x41, text.data[off:off + 0x80])
    write_sigframe(ps, UC)
    st, f = tramp_frame(ps, pc=start)
    status, caller = st.get_caller_frame(f)
    assert status is Gcf.SUCCESS and st.recognise(f) == ("code" if readable_code else "cfi")
    check_restored(caller)


# --- against GDB on a live process -------------------------------------------------------------

SIG_C = r"""
/* sig MODE [altstack]: MODE libc installs the handler with sigaction (glibc's
 * __restore_rt); MODE anon with the raw syscall and SA_RESTORER pointing at a
 * copy of the trampoline in an anonymous page.  The signal interrupts
 * regs_then_kill (no CFI, no frame pointer) at its syscall, with a known value
 * in every register it can choose; the handler calls stop_here. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

volatile int sink;
char altstack_mem[1 << 16];

__attribute__((noinline)) void stop_here(int x) { sink += x; __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) void on_signal(int sig) { stop_here(sig); sink++; }

void regs_then_kill(int pid);
__asm__(
"    .text\n"
"    .globl regs_then_kill\n"
"    .type regs_then_kill,@function\n"
"regs_then_kill:\n"
"    push %rbx\n push %rbp\n push %r12\n push %r13\n push %r14\n push %r15\n"
"    sub $24, %rsp\n"
"    movslq %edi, %rdi\n"
"    mov $10, %esi\n"                               /* SIGUSR1 */
"    movabs $0x5157000000000101, %rdx\n"
"    movabs $0x5157000000000303, %rbx\n"
"    movabs $0x5157000000000606, %rbp\n"
"    movabs $0x5157000000000808, %r8\n"
"    movabs $0x5157000000000909, %r9\n"
"    movabs $0x5157000000000a0a, %r10\n"
"    movabs $0x5157000000000c0c, %r12\n"
"    movabs $0x5157000000000d0d, %r13\n"
"    movabs $0x5157000000000e0e, %r14\n"
"    movabs $0x5157000000000f0f, %r15\n"
"    mov $62, %eax\n"                               /* kill */
"    syscall\n"
"    add $24, %rsp\n"
"    pop %r15\n pop %r14\n pop %r13\n pop %r12\n pop %rbp\n pop %rbx\n"
"    ret\n"
"    .size regs_then_kill, .-regs_then_kill\n");

struct kernel_sigaction { void (*handler)(int); unsigned long flags; void (*restorer)(void); unsigned long mask; };

int main(int argc, char **argv)
{
    int anon = argc > 1 && strcmp(argv[1], "anon") == 0;
    int alt = argc > 2 && strcmp(argv[2], "altstack") == 0;
    if (alt) {
        stack_t ss = { .ss_sp = altstack_mem, .ss_size = sizeof altstack_mem, .ss_flags = 0 };
        if (sigaltstack(&ss, NULL) != 0)
            return 3;
    }
    if (anon) {
        static const unsigned char code[] = { 0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05 };
        unsigned char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (page == MAP_FAILED)
            return 4;
        memcpy(page + 0x100, code, sizeof code);
        mprotect(page, 4096, PROT_READ | PROT_EXEC);
        struct kernel_sigaction ka = { on_signal, 0x04000000 /* SA_RESTORER */ | (alt ? SA_ONSTACK : 0),
                                       (void (*)(void))(page + 0x100), 0 };
        if (syscall(SYS_rt_sigaction, SIGUSR1, &ka, NULL, 8) != 0)
            return 5;
    } else {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sa.sa_flags = alt ? SA_ONSTACK : 0;
        if (sigaction(SIGUSR1, &sa, NULL) != 0)
            return 6;
    }
    regs_then_kill(getpid());
    return sink == 0;
}
"""

GDB_SCRIPT = r"""
import gdb, json
from swk_plugin.backends.gdb.session import SESSION
from swk_plugin.steppers.sighandler import SigHandlerStepper
from swk_plugin.arch.x86_64 import signal as L

f = gdb.newest_frame()
while f is not None and f.type() != gdb.SIGTRAMP_FRAME:
    f = f.older()
tramp_pc, tramp_sp = int(f.pc()), int(f.read_register("rsp"))
older = f.older()
mask = (1 << 64) - 1
want = {str(r): int(older.read_register(n)) & mask for r, n in L.SC_NAMES.items()}
tramp_eflags = int(f.read_register("eflags"))

w = SESSION.walker()
walk = w.walk_stack()
tramp = next(fr for fr in walk if fr.ra == tramp_pc)
st = SigHandlerStepper(w)
status, caller = st.get_caller_frame(tramp)
ps = w.process_state
out = {"status": status.value, "how": st.recognise(tramp), "tramp_pc": tramp_pc, "tramp_sp": tramp_sp,
       "swk_tramp_sp": tramp.sp, "kind": tramp.kind, "in_library": ps.library_state.get_library_at_addr(tramp_pc) is not None,
       "interrupted": older.name(), "altstack": int(gdb.parse_and_eval("(unsigned long)&altstack_mem")),
       "want": want, "tramp_eflags": tramp_eflags}
if status.value == "success":
    out["got"] = {str(r): v for r, v in caller.regs.items()}
    out["locations_hold"] = all(ps.read_pointer(loc.val) == caller.regs[r] for r, loc in caller.reg_locations.items())
    out["ra_sp_fp"] = [caller.ra, caller.sp, caller.fp]
    out["non_call"] = caller.non_call
else:
    out["why"] = caller
print("SWKSIG " + json.dumps(out))
"""


@pytest.fixture(scope="module")
def sig_prog(tmp_path_factory):
    S.need_tool("gdb")
    d = tmp_path_factory.mktemp("sighandler")
    return _cc(d, "sig", SIG_C, "-O0", "-g"), d


@pytest.mark.parametrize("mode", ["libc", "libc altstack", "anon", "anon altstack"])
def test_every_register_matches_gdbs_interrupted_frame(sig_prog, mode):
    from swk_testlib import run_gdb
    prog, d = sig_prog
    script = d / "check_sig.py"
    script.write_text(GDB_SCRIPT)
    out = run_gdb(prog, ["handle SIGUSR1 nostop noprint pass", "break stop_here", f"run {mode}",
                         f"source {script}"], swk=True, timeout=120)
    lines = [ln for ln in out.splitlines() if ln.startswith("SWKSIG ")]
    assert lines, out
    res = json.loads(lines[-1][len("SWKSIG "):])
    assert res["status"] == "success", res
    assert res["kind"] == FrameKind.SIGNAL and res["non_call"] and res["locations_hold"]
    assert res["swk_tramp_sp"] == res["tramp_sp"]
    assert res["interrupted"] == "regs_then_kill"
    got = {int(k): v for k, v in res["got"].items()}
    want = {int(k): v for k, v in res["want"].items()}
    anon = mode.startswith("anon")
    if not anon:
        # GDB unwinds glibc's __restore_rt by its CFI, which leaves eflags out, so GDB
        # carries the handler's eflags over; its own sigtramp unwinder (anon) reads the slot.
        assert want[RFLAGS] == res["tramp_eflags"]
        del got[RFLAGS], want[RFLAGS]
    assert got == want                                     # all 18 (17 with libc), as GDB has them
    got = {int(k): v for k, v in res["got"].items()}
    assert got[RFLAGS] == got[11]                          # syscall put rflags in r11
    assert res["ra_sp_fp"] == [got[RIP], got[RSP], got[RBP]]
    for regno in (1, 3, 6, 8, 9, 10, 12, 13, 14, 15):      # what regs_then_kill set
        assert got[regno] == 0x5157000000000000 | (regno << 8) | regno
    assert got[0] == 0 and got[4] == 10                    # kill's result; SIGUSR1
    assert res["in_library"] == (not anon)
    assert res["how"] == "code"
    on_alt = res["altstack"] <= res["tramp_sp"] < res["altstack"] + (1 << 16)
    assert on_alt == mode.endswith("altstack")
    assert not res["altstack"] <= got[RSP] < res["altstack"] + (1 << 16)
