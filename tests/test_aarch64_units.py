"""AArch64 facts, piece by piece, against independent oracles (issue 15): the CFI's
return-address signing state against readelf's decoding; pointer-authentication
stripping; the signal frame's layout against the kernel's headers (compiled for
AArch64 and run under qemu); the frame-record prologue, epilogue and the stack-height
analysis of A64 code against GCC's own CFI of the very same code; call sites and PLT
entries against objdump; NT_PRSTATUS and NT_ARM_PAC_MASK of a synthetic core.

Only the cross toolchain and qemu-user are needed (no debugger); tests/test_aarch64.py
runs the corpus under qemu in gdb-multiarch and LLDB.
"""

from __future__ import annotations

import re
import struct
import subprocess

import pytest

import aarch64_lib as A
import swk_suite as S
import swk_testlib as T
from swk_plugin.analysis import frame_rule_at
from swk_plugin.arch import AArch64, get_architecture
from swk_plugin.arch.aarch64 import a64, calls, pauth, prologue, regsets, registers
from swk_plugin.arch.aarch64 import signal as sig
from swk_plugin.backends.core import CoreProcessState
from swk_plugin.dwarf.cfi import CfiTable
from swk_plugin.elf.module import ElfModule
from swk_plugin.elf.symbols import module_symbols
from swk_plugin.errors import MemoryReadError
from swk_plugin.linux.coredump import NT_ARM_PAC_MASK, NT_PRPSINFO, NT_PRSTATUS, CoreFile
from swk_plugin.procstate import Library, LibraryState, ProcessState
from swk_plugin.rule import OFFSET, CfaRule, RegRule, UnwindRule
from swk_plugin.steppergroup import StepperGroup
from swk_plugin.unwind.apply import apply_rule
from swk_plugin.walker import Walker
from test_cfi import EhFrame, advance_loc, def_cfa, def_cfa_offset, offset, restore
from test_corefile import _note, _prpsinfo, write_core

ARCH = AArch64()
SP, FP, LR, PC = 31, 29, 30, 32
NEGATE = b"\x2d"
REMEMBER, RESTORE_STATE = b"\x0a", b"\x0b"


# --------------------------------------------------------------------------
# the architecture's tables
# --------------------------------------------------------------------------

def test_register_tables():
    """AADWARF64's numbers, sizes, and the names GDB and LLDB give (x29/x30 are fp/lr in LLDB)."""
    assert get_architecture("aarch64") == get_architecture("arm64") == ARCH
    assert [ARCH.reg_number(f"x{i}") for i in range(31)] == list(range(31))
    assert (ARCH.sp, ARCH.fp, ARCH.ra, ARCH.pc) == (SP, FP, LR, PC)
    assert ARCH.ra != ARCH.pc and not ARCH.return_address_pushed
    assert [ARCH.reg_name(64 + i) for i in (0, 31)] == ["v0", "v31"]
    assert ARCH.reg_size(64) == ARCH.reg_size(95) == 16 and ARCH.reg_size(0) == ARCH.reg_size(PC) == 8
    assert ARCH.gdb_names[FP] == "x29" and ARCH.lldb_names[FP] == "fp" and ARCH.lldb_names[LR] == "lr"
    assert ARCH.callee_saved == frozenset(range(19, 30))
    assert ARCH.general[-2:] == ("sp", "pc") and len(ARCH.general) == 33
    assert ARCH.long_double_format == "ieee128"


# --------------------------------------------------------------------------
# CFI: DW_CFA_AARCH64_negate_ra_state
# --------------------------------------------------------------------------

def _a64_rows(ins, cie_ins=def_cfa(SP, 0)):
    eh = EhFrame()
    c = eh.cie(ins=cie_ins, code_align=4, data_align=-8, ra=LR)
    eh.fde(c, 0x1000, 0x1100, ins)
    eh.terminate()
    t = eh.table()
    return t.rows(t.find_fde(0x1000))


def test_negate_ra_state_flips_each_row():
    rows = _a64_rows(advance_loc(1) + NEGATE + def_cfa_offset(16) + offset(FP, 2) + offset(LR, 1)
                     + advance_loc(4) + restore(LR) + restore(FP) + def_cfa_offset(0)
                     + advance_loc(1) + NEGATE)
    assert [(r.address, r.ra_signed) for r in rows] == [(0x1000, False), (0x1004, True), (0x1014, True),
                                                       (0x1018, False)]
    assert rows[1].regs[LR] == RegRule(OFFSET, -8) and rows[1].cfa == CfaRule(SP, 16)


def test_negate_ra_state_is_remembered_and_restored():
    rows = _a64_rows(NEGATE + advance_loc(1) + REMEMBER + NEGATE + advance_loc(1) + RESTORE_STATE
                     + advance_loc(1) + REMEMBER + advance_loc(1) + NEGATE + RESTORE_STATE)
    assert [(r.address, r.ra_signed) for r in rows] == [(0x1000, True), (0x1004, False), (0x1008, True),
                                                       (0x100c, True), (0x1010, True)]


def _readelf_states(path):
    """{(fde start, address): signed} as readelf --debug-dump=frames decodes the FDEs, the
    signing state followed through remember/restore by this test itself."""
    out = subprocess.run(["aarch64-linux-gnu-readelf", "--debug-dump=frames", str(path)],
                         capture_output=True, text=True, check=True).stdout
    states = {}
    start = None
    for line in out.splitlines():
        m = re.search(r"FDE cie=\S+ pc=([0-9a-f]+)\.\.", line)
        if m:
            start = int(m.group(1), 16)
            loc, signed, stack = start, False, []
            states[(start, loc)] = signed
            continue
        if start is None:
            continue
        m = re.search(r"DW_CFA_advance_loc\d?: \d+ to ([0-9a-f]+)", line)
        if m:
            loc = int(m.group(1), 16)
        elif "DW_CFA_AARCH64_negate_ra_state" in line:
            signed = not signed
        elif "DW_CFA_remember_state" in line:
            stack.append(signed)
        elif "DW_CFA_restore_state" in line:
            signed = stack.pop()
        elif not line.strip():
            start = None
            continue
        else:
            continue
        states[(start, loc)] = signed
    return states


@pytest.mark.parametrize("what", ["chain-O2-pac", "cxx-O2-pac", "signal-raise-O2-pac"])
def test_signed_state_matches_readelf(what):
    """swk's row at every location readelf names has the signing state readelf's instructions
    give."""
    S.need_tool("aarch64-linux-gnu-readelf", "binutils-aarch64-linux-gnu")
    path = _corpus_exe(what)
    mod = ElfModule(str(path))
    eh, hdr = mod.section(".eh_frame"), mod.section(".eh_frame_hdr")
    table = CfiTable.from_eh_frame(eh.data, eh.addr, hdr.data, hdr.addr)
    states = _readelf_states(path)
    signed = [k for k, v in states.items() if v]
    assert signed, "no signed row: the build has no pac-ret"
    bad = [(hex(start), hex(loc), want) for (start, loc), want in states.items()
           if table.row_at(loc) is not None and table.row_at(loc).ra_signed != want]
    assert not bad, bad[:20]


def _corpus_exe(case_id):
    from aarch64_cases import A64_BY_ID
    return A64_BY_ID[case_id].exe()


# --------------------------------------------------------------------------
# pointer authentication
# --------------------------------------------------------------------------

def test_strip_masks():
    signed = 0x0059005500000848
    assert pauth.strip(signed) == 0x5500000848                       # every bit above 48
    assert pauth.strip(signed, 0x007f000000000000) == 0x5500000848   # the kernel's mask (VA 48)
    assert pauth.strip(0x5500000848) == 0x5500000848                 # nothing to strip
    assert pauth.strip(0x0080ffff12345678, 0x007f000000000000) == 0x00ffffff12345678   # bit 55: set
    assert pauth.usable_mask(0xff00000000000000) is None             # LLDB's TBI-only mask
    assert pauth.usable_mask(0x007f000000000000) == 0x007f000000000000
    note = struct.pack("<QQ", 0x007f000000000000, 0x007f000000000000)
    assert pauth.mask_from_note(note) == 0x007f000000000000 and pauth.mask_from_note(b"\0" * 8) is None
    assert get_architecture("x86_64").strip_pointer_auth(signed) == signed


def test_a_signed_rule_strips_the_return_address_only():
    rule = UnwindRule.at_cfa(SP, 16, LR, -8, {FP: -16}, ra_signed=True)
    mem = {0x7000: 0x7100, 0x7008: 0x0041005500000848}
    res = apply_rule(rule, {SP: 0x7000, FP: 0x7000, LR: 1, PC: 0x5500000900},
                     lambda a, n: mem[a].to_bytes(8, "little"), ARCH)
    assert res.ra == 0x5500000848 and res.regs[LR] == 0x0041005500000848 and res.cfa == 0x7010
    unsigned = UnwindRule.at_cfa(SP, 16, LR, -8, {FP: -16})
    assert apply_rule(unsigned, {SP: 0x7000}, lambda a, n: mem[a].to_bytes(8, "little"), ARCH).ra == \
        0x0041005500000848


# --------------------------------------------------------------------------
# the signal frame against the kernel's headers
# --------------------------------------------------------------------------

LAYOUT_C = r"""
#include <stdio.h>
#include <stddef.h>
#include <signal.h>
#include <asm/sigcontext.h>
#include <asm/ucontext.h>
int main(void) {
    printf("%zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu\n",
           sizeof(siginfo_t), offsetof(struct ucontext, uc_mcontext), sizeof(struct ucontext),
           offsetof(struct sigcontext, regs), offsetof(struct sigcontext, sp),
           offsetof(struct sigcontext, pc), offsetof(struct sigcontext, pstate),
           offsetof(struct sigcontext, __reserved), sizeof(struct fpsimd_context),
           offsetof(struct fpsimd_context, vregs), offsetof(struct ucontext, uc_sigmask));
    printf("%x %x %x %x\n", FPSIMD_MAGIC, ESR_MAGIC, EXTRA_MAGIC, SVE_MAGIC);
    return 0;
}
"""


def test_signal_frame_layout_is_the_kernels(tmp_path):
    A.need_machine()
    src = tmp_path / "layout.c"
    src.write_text(LAYOUT_C)
    exe = tmp_path / "layout"
    subprocess.run([A.CROSS[0], "-O0", str(src), "-o", str(exe)], check=True, capture_output=True)
    out = subprocess.run([A.QEMU, "-L", A.SYSROOT, str(exe)], capture_output=True, text=True, timeout=60,
                         check=True).stdout.split("\n")
    nums = [int(x) for x in out[0].split()]
    assert nums == [sig.SIGINFO_SIZE, sig.UC_MCONTEXT, sig.UCONTEXT_SIZE, sig.SC_REGS, sig.SC_SP, sig.SC_PC,
                    sig.SC_PSTATE, sig.SC_RESERVED, sig.FPSIMD_SIZE, sig.FPSIMD_VREGS, sig.UC_SIGMASK]
    assert [int(x, 16) for x in out[1].split()] == [sig.FPSIMD_MAGIC, sig.ESR_MAGIC, sig.EXTRA_MAGIC,
                                                    sig.SVE_MAGIC]


def test_reserved_records_and_frame_size():
    """The records of __reserved, an extra_context followed into its data, the frame's end."""
    sp = 0x10000
    sc = sig.sigcontext_address(sp)
    mem = bytearray(0x4000)

    def put(addr, data):
        mem[addr - sp:addr - sp + len(data)] = data

    res = sc + sig.SC_RESERVED
    put(res, struct.pack("<II", sig.FPSIMD_MAGIC, sig.FPSIMD_SIZE))
    put(res + sig.FPSIMD_SIZE, struct.pack("<II", sig.ESR_MAGIC, 16))
    read = lambda a, n: bytes(mem[a - sp:a - sp + n])  # noqa: E731
    recs = sig.reserved_records(read, sc)
    assert [(m, a - res, s) for m, a, s in recs] == [(sig.FPSIMD_MAGIC, 0, 528), (sig.ESR_MAGIC, 528, 16)]
    assert sig.frame_size(read, sp) == sig.RT_SIGFRAME_SIZE
    assert sig.fpsimd_vreg_address(read, sp, 3) == res + 16 + 48
    # an extra_context whose data lies beyond the rt_sigframe (SVE state that does not fit)
    extra = sp + sig.RT_SIGFRAME_SIZE
    put(res + 544, struct.pack("<IIQI", sig.EXTRA_MAGIC, 32, extra, 0x200))
    put(extra, struct.pack("<II", sig.SVE_MAGIC, 0x1f0))
    recs = sig.reserved_records(read, sc)
    assert [m for m, _a, _s in recs] == [sig.FPSIMD_MAGIC, sig.ESR_MAGIC, sig.EXTRA_MAGIC, sig.SVE_MAGIC]
    assert sig.frame_size(read, sp) == sig.RT_SIGFRAME_SIZE + 0x1f0
    rule = sig.rule_at(read, sp)
    assert rule.signal_frame and rule.ra_reg == PC and rule.cfa == CfaRule(SP, sig.RT_SIGFRAME_SIZE + 0x1f0 + 16)
    assert sig.is_trampoline_code(bytes.fromhex("681180d2010000d4"))       # mov x8, #139; svc #0


# --------------------------------------------------------------------------
# prologue, epilogue and analysis against GCC's CFI
# --------------------------------------------------------------------------

def _w(*insns):
    return b"".join(i.to_bytes(4, "little") for i in insns)


STP_PRE = 0xa9bd7bfd          # stp x29, x30, [sp, #-48]!
MOV_FP = 0x910003fd           # mov x29, sp
STP_19 = 0xa90153f3           # stp x19, x20, [sp, #16]
SUB_SP = 0xd10103ff           # sub sp, sp, #64
STP_OFF = 0xa9027bfd          # stp x29, x30, [sp, #32]
ADD_FP = 0x910083fd           # add x29, sp, #32
LDP_POST = 0xa8c37bfd         # ldp x29, x30, [sp], #48
ADD_SP = 0x910103ff           # add sp, sp, #64
RET = 0xd65f03c0


def test_prologue_shapes():
    p = prologue.parse_prologue(_w(a64.PACIASP, STP_PRE, MOV_FP, STP_19, RET), 0x1000)
    assert (p.body_at, p.k, p.signed) == (0x100c, 48, True)
    assert p.saved == {FP: -48, LR: -40, 19: -32, 20: -24}
    assert p.rule_at(0x1000, True) == UnwindRule.at_cfa(SP, 0, LR, None)                      # not signed yet
    assert p.rule_at(0x1004, True) == UnwindRule.at_cfa(SP, 0, LR, None, ra_signed=True)
    assert p.rule_at(0x1008, True) == UnwindRule.at_cfa(SP, 48, LR, None, {FP: -48, LR: -40}, ra_signed=True)
    assert p.rule_at(0x1020, False).cfa == CfaRule(FP, 48)
    q = prologue.parse_prologue(_w(SUB_SP, STP_OFF, ADD_FP, RET), 0x2000)
    assert (q.k, q.saved) == (32, {FP: -32, LR: -24})
    assert prologue.parse_prologue(_w(SUB_SP, STP_19, RET), 0x3000) is None       # no frame record


def test_epilogue_shapes():
    e = prologue.is_return(_w(0xa94153f3, LDP_POST, a64.AUTIASP, 0x11000400, RET))
    assert e.rule == UnwindRule(None, CfaRule(SP, 48), {19: RegRule(OFFSET, -32), 20: RegRule(OFFSET, -24),
                                                        FP: RegRule(OFFSET, -48), LR: RegRule(OFFSET, -40)},
                                False, LR, ra_signed=True)
    assert prologue.is_return(_w(a64.AUTIASP, RET)).rule == UnwindRule.at_cfa(SP, 0, LR, None, ra_signed=True)
    assert prologue.is_return(_w(ADD_SP, RET)).rule == UnwindRule.at_cfa(SP, 64, LR, None)
    assert prologue.is_return(_w(0x910003bf, LDP_POST, RET)).rule.cfa == CfaRule(FP, 48)   # mov sp, x29
    assert prologue.is_return(_w(0x94000010, RET)) is None                                # a call first


ANALYSIS_FLAGS = [("-O2",), ("-O1",), ("-Os",), ("-O2", *A.PAC), ("-O0",)]


class A64File(ProcessState):
    """An AArch64 executable's code as a process (no registers): for the analysis."""

    def __init__(self, path):
        mod = ElfModule(str(path))
        lib = Library(str(path), 0, lambda _l: mod)
        lib.is_aout = True

        class Libs(LibraryState):
            def scan(self):
                return [lib]
        super().__init__(ARCH, Libs())
        self.mod = mod
        self.blobs = {lo: mod.read_vaddr(lo, hi - lo) for lo, hi in mod.exec_spans()}

    def read_raw(self, addr, size):
        for lo, blob in self.blobs.items():
            if lo <= addr and addr + size <= lo + len(blob):
                return blob[addr - lo:addr - lo + size]
        raise MemoryReadError(addr, size)

    def read_thread_registers(self, thread):
        return {}

    def get_thread_ids(self):
        return [1]


def _twins(tmp_path, flags):
    """PROGRAM of tests/test_analysis.py cross-built with and without unwind tables: the same code."""
    from test_analysis import NO_CFI, PROGRAM, WITH_CFI
    src = tmp_path / "p.c"
    src.write_text(PROGRAM)
    out = []
    for variant, tables in (("nocfi", NO_CFI), ("cfi", WITH_CFI)):
        exe = tmp_path / f"p-{variant}"
        subprocess.run([A.CROSS[0], *flags, "-g0", *tables, str(src), "-o", str(exe)], check=True,
                       capture_output=True)
        out.append(exe)
    texts = []
    for p in out:
        sec = ElfModule(str(p)).section(".text")
        texts.append((sec.addr, bytes(sec.data)))
    if texts[0] != texts[1]:
        S.toolchain_quirk("the cross gcc made different code with and without unwind tables")
    return out


def _functions(path):
    table = module_symbols(ElfModule(str(path)))
    crt = {"_start", "call_weak_fn", "deregister_tm_clones", "register_tm_clones", "__do_global_dtors_aux",
           "frame_dummy", "_init", "_fini"}
    return sorted({(s.value, s.size, s.name) for s in table
                   if s.kind == "func" and s.size and s.section == ".text" and s.name not in crt})


@pytest.mark.parametrize("flags", ANALYSIS_FLAGS, ids=[" ".join(f) for f in ANALYSIS_FLAGS])
def test_analysis_and_prologues_agree_with_gcc_cfi(tmp_path, flags):
    """At every instruction of every function: the analysis of the code built without CFI gives
    the CFA (from sp), the saved registers at call sites and the signing state GCC's CFI of
    the same code gives; where a function builds a frame record, its prologue's rules (top
    frame: prologue rows and the epilogue) agree with the CFI too, and its CFA = x29 + K with
    the analysis' x29."""
    A.need_machine()
    S.need_tool("aarch64-linux-gnu-objdump", "binutils-aarch64-linux-gnu")
    nocfi, withcfi = _twins(tmp_path, flags)
    mod = ElfModule(str(withcfi))
    eh, hdr = mod.section(".eh_frame"), mod.section(".eh_frame_hdr")
    cfi = CfiTable.from_eh_frame(eh.data, eh.addr, hdr.data, hdr.addr)
    ps = A64File(nocfi)
    Walker(ps, stepper_group=StepperGroup())
    funcs = _functions(nocfi)
    assert {"sw", "with_vla", "aligned", "checked", "main"} <= {f[2] for f in funcs}
    insns = agree = calls_n = calls_ok = pro_n = pro_ok = 0
    bad = []
    for start, size, name in funcs:
        code = ps.read_memory(start, size)
        pro = prologue.parse_prologue(code[:prologue.READ_SIZE], start)
        for off in range(0, size, 4):
            a = start + off
            row = cfi.row_at(a)
            if row is None or row.cfa.expr is not None or row.cfa.reg != SP:
                continue
            h = frame_rule_at(ps, a, True)
            insns += 1
            saved = {r: rr.arg for r, rr in row.regs.items() if rr.kind == "offset" and r in registers.CALLEE_SAVED | {LR}}
            ok = h is not None and h.sp_offset == row.cfa.offset and h.rule.ra_signed == row.ra_signed
            agree += ok
            if not ok:
                bad.append((name, hex(a), row, h))
            insn = a64.word(code, off)
            if calls.is_bl(insn) or calls.is_indirect_call(insn):
                hc = frame_rule_at(ps, a + 3, False)
                calls_n += 1
                good = hc is not None and hc.sp_offset == row.cfa.offset and hc.saved == saved
                calls_ok += good
                if not good:
                    bad.append(("CALL", name, hex(a), row, hc))
            if pro is not None and h is not None:
                at_ret = prologue.epilogue_at(code[off:off + prologue.EPILOGUE_READ], a, (start, start + size))
                r = pro.rule_at(a, True, at_ret)
                pro_n += 1
                # the CFA as the CFI says (through the analysis' x29 where the rule uses it), and
                # where the registers are as the analysis says (it follows restores, which GCC's
                # CFI leaves out until the frame record's: both are right there)
                pro_saved = {k: v.arg for k, v in r.regs.items()}
                if r.cfa.reg == SP:
                    good = r.cfa.offset == row.cfa.offset
                else:
                    good = h.fp_offset == r.cfa.offset
                good = good and r.ra_signed == row.ra_signed and pro_saved == \
                    {k: v for k, v in h.saved.items() if k in pro_saved or k in (FP, LR)}
                pro_ok += good
                if not good:
                    bad.append(("PROLOGUE", name, hex(a), row, r, h))
    print(f"\n{' '.join(flags)}: {len(funcs)} functions, analysis {agree}/{insns}, call sites "
          f"{calls_ok}/{calls_n}, frame-record rules {pro_ok}/{pro_n}")
    assert insns and agree / insns >= 0.99, bad[:10]
    assert calls_ok == calls_n, bad[:10]
    assert pro_ok == pro_n, [b for b in bad if b[0] == "PROLOGUE"][:10]
    if "-O0" in flags:
        assert pro_n, "no frame record at -O0"


# --------------------------------------------------------------------------
# call sites and PLT entries against objdump
# --------------------------------------------------------------------------

def _objdump(path):
    return subprocess.run(["aarch64-linux-gnu-objdump", "-d", str(path)], capture_output=True, text=True,
                          check=True).stdout


@pytest.mark.parametrize("case_id", ["chain-O2-pac", "cxx-O2-pac", "threads-O2"])
def test_call_sites_match_objdump(case_id):
    S.need_tool("aarch64-linux-gnu-objdump", "binutils-aarch64-linux-gnu")
    exe = _corpus_exe(case_id)
    want = set()
    for m in re.finditer(r"^\s*([0-9a-f]+):\s+[0-9a-f]{8}\s+(bl|blr|blraaz?|blrabz?)\s", _objdump(exe), re.M):
        want.add(int(m.group(1), 16) + 4)
    mod = ElfModule(str(exe))
    text = mod.section(".text")
    sites, end = calls.return_sites(text.data, text.addr)
    assert set(sites) == {r for r in want if text.addr < r <= text.addr + text.size}
    assert end == text.addr + text.size
    for ra in sorted(want)[:50]:
        code = mod.read_vaddr(ra - 4, 4)
        (call,) = calls.calls_ending_at(code, ra)
        assert call.end == ra
    assert not calls.calls_ending_at(_w(RET), 0x1004)


def test_plt_symbols_match_objdump():
    S.need_tool("aarch64-linux-gnu-objdump", "binutils-aarch64-linux-gnu")
    exe = _corpus_exe("crash-abort-O2")
    want = {int(a, 16): n for a, n in re.findall(r"^([0-9a-f]+) <(\w+@plt)>:", _objdump(exe), re.M)}
    assert "abort@plt" in want.values()
    got = {s.value: s.name for s in module_symbols(ElfModule(str(exe))) if s.name.endswith("@plt")}
    assert got == want


# --------------------------------------------------------------------------
# a synthetic AArch64 core: NT_PRSTATUS, NT_ARM_PAC_MASK
# --------------------------------------------------------------------------

def _a64_prstatus(tid, regs, sig_no=6):
    d = bytearray(regsets.PRSTATUS_SIZE)
    struct.pack_into("<h", d, 12, sig_no)
    struct.pack_into("<i", d, 32, tid)
    for i, name in enumerate(regsets.USER_REGS):
        struct.pack_into("<Q", d, regsets.PRSTATUS_REG_OFFSET + 8 * i, regs.get(name, 0))
    return bytes(d)


def test_synthetic_core_registers_and_pac_mask(tmp_path):
    regs = {name: 0x1000 + i for i, name in enumerate(regsets.USER_REGS)}
    mask = 0x00ff000000000000                # a target whose VA is 48 bits, TBI off
    notes = [_note(b"CORE", NT_PRPSINFO, _prpsinfo(9, b"a64", b"a64 x")),
             _note(b"CORE", NT_PRSTATUS, _a64_prstatus(9, regs)),
             _note(b"LINUX", NT_ARM_PAC_MASK, struct.pack("<QQ", mask, mask))]
    path = write_core(tmp_path / "core", notes, [(0x400000, 0x1000, 0x1000, 5, b"\x1f\x20\x03\xd5" * 4)])
    with open(path, "r+b") as fh:           # write_core makes x86-64 cores: an AArch64 one here
        fh.seek(18)
        fh.write(struct.pack("<H", 183))
    core = CoreFile(path)
    assert core.arch == ARCH and core.pac_mask == mask
    r = core.threads[0].regs
    assert [r[i] for i in range(31)] == [regs[f"x{i}"] for i in range(31)]
    assert (r[SP], r[PC], r["pstate"]) == (regs["sp"], regs["pc"], regs["pstate"])
    ps = CoreProcessState(path)
    assert ps.code_address_mask() == mask
    # the note's mask (bits 48-55) is used, not the default (every bit above 48): the top byte stays
    assert ps.strip_return_address(0x1a37005500001234) == 0x1a00005500001234
    assert ARCH.strip_pointer_auth(0x1a37005500001234) == 0x0000005500001234
    assert core.read(0x400000, 4) == b"\x1f\x20\x03\xd5"
