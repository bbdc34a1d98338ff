"""i386 (issue 14): the facts of swk_plugin/arch/i386 against oracles swk did not compute.

The walks themselves are tested with the rest of the corpus (the ``i386-`` cases of
swk_testlib.CASES and hard_cases.HARD_CASES: test_corpus, test_hard_frames, test_lldb).
Here:

  * register names: every GDB and LLDB name of the table exists in GDB's / LLDB's own
    register set of a live -m32 process, and GDB's DWARF-to-register mapping agrees;
  * signal frames: the offsets of both kinds of frame agree with the running kernel's
    vDSO CFI (readelf's decoding of __kernel_sigreturn's and __kernel_rt_sigreturn's
    FDEs) at every instruction of the trampolines;
  * call decoding in 32-bit mode (40-4f are inc/dec, segment prefixes, absolute slots),
    against capstone; the endbr32 prologue; the analysis of PIC idioms and of a realigned
    main at every instruction against gcc's own CFI of the same code;
  * ELF32 cores: a kernel core of a -m32 program read by swk against gdb (threads,
    registers, libraries, auxv, the vDSO) and walked by the CLI as gdb walks it; a
    synthetic core checks the NT_PRSTATUS / NT_PRPSINFO layouts byte by byte;
  * an architecture swk does not know: one clear line from swk-bt, and GDB's unwinder
    steps aside without a word.
"""
from __future__ import annotations

import os
import re
import struct
import subprocess
import sys
from pathlib import Path

import capstone
import pytest

import swk_suite as S
import swk_testlib as T

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from swk_plugin.arch import I386, UnsupportedArchitecture, from_elf_machine, get_architecture  # noqa: E402
from swk_plugin.arch.i386 import analysis as A, calls as C, prologue as P, registers as R  # noqa: E402
from swk_plugin.arch.i386 import regsets as RS, signal as SIG  # noqa: E402
from swk_plugin.linux.coredump import CoreFile  # noqa: E402

pytestmark = [pytest.mark.corpus]

S.need_tool(T.GDB, "gdb")
M32 = T.m32_flags()
CHAIN = T.CASES_BY_ID["i386-chain-O0g"]


@pytest.fixture(scope="module")
def chain_exe(corpus):
    return corpus.exe(CHAIN)


def _gdb(exe, cmds, core=None):
    return T.run_gdb(exe, [*(CHAIN.pre if core is None else ()), *(["run"] if core is None else []), *cmds],
                     core=core, timeout=120)


# --------------------------------------------------------------------------
# registers
# --------------------------------------------------------------------------

def test_register_numbers_and_sizes():
    a = get_architecture("i386")
    assert isinstance(a, I386) and a.ptr_size == 4 and a.max_user_address == 0xFFFFFFFF
    assert [a.reg_name(i) for i in range(9)] == ["eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi", "eip"]
    assert (a.sp, a.fp, a.ra, a.pc) == (4, 5, 8, 8)
    assert a.callee_saved == {3, 5, 6, 7}
    assert [a.reg_size(r) for r in (0, 8, 11, 18, 21, 28, 29)] == [4, 4, 10, 10, 16, 16, 8]
    assert a.address_mask == 0xFFFFFFFF and a.is_canonical(0xFFFFD000) and not a.is_canonical(1 << 32)
    for name in ("i386", "i686", "i386:intel"):
        assert get_architecture(name) == a
    assert from_elf_machine(3) == a and from_elf_machine("EM_386") == a
    with pytest.raises(UnsupportedArchitecture, match="unsupported architecture 'mips'"):
        get_architecture("mips")


def test_gdb_knows_every_register_name_and_dwarf_number(chain_exe):
    """Each GDB name of the table is a register of GDB's i386 (value readable in a live
    -m32 process), and GDB maps each DWARF number to that register (maint print
    register-groups is not enough: gdbarch's dwarf2_reg_to_regnum is asked through a
    DWARF location in a DW_OP_regN expression... i.e. `info registers` by number is not
    exposed, so GDB's own name for the DWARF column comes from the CFI: eip for column 8)."""
    names = [r.gdb for r in R.REGISTERS.values() if r.gdb]
    script = ("python\nimport gdb\nf = gdb.selected_frame()\n"
              f"for n in {names!r}:\n"
              "    try:\n        f.read_register(n); print('SWKREG', n, 'ok')\n"
              "    except Exception as e:\n        print('SWKREG', n, 'bad', e)\n"
              "print('SWKARCH', f.architecture().name())\nend")
    path = T.BUILD / "i386_regs.gdb"
    path.write_text(script + "\n")
    out = _gdb(chain_exe, [f"source {path}", "info frame"])
    got = dict(re.findall(r"^SWKREG (\S+) (ok|bad)", out, re.M))
    assert got == {n: "ok" for n in names}, out[-3000:]
    assert "SWKARCH i386" in out
    # GDB's CFI unwinder names the return-address column 8 eip, esp 4 and ebp 5
    assert re.search(r"Saved registers:\s*\n\s*ebp at 0x[0-9a-f]+, eip at 0x[0-9a-f]+", out), out[-2000:]


def test_lldb_knows_every_register_name(chain_exe):
    choice = S.lldb()
    if choice.path is None:
        S.missing(choice.problem, "scripts/setup.sh installs LLDB")
    names = [r.lldb for r in R.REGISTERS.values() if r.lldb]
    argv = [choice.path, "-b", "-x", "-o", f"target create {chain_exe}", "-o", "breakpoint set -n stop_here",
            "-o", "process launch", "-o",
            "script print('SWKTRIPLE', lldb.target.GetTriple())", "-o",
            f"script [print('SWKREG', n, lldb.frame.FindRegister(n).IsValid()) for n in {names!r}]"]
    out = T.run_cmd(argv, timeout=120).stdout
    got = dict(re.findall(r"^SWKREG (\S+) (True|False)", out, re.M))
    assert got == {n: "True" for n in names}, out[-3000:]
    triple = re.search(r"^SWKTRIPLE (\S+)", out, re.M).group(1)
    assert get_architecture(triple.split("-")[0]) == I386()


# --------------------------------------------------------------------------
# signal frames against the vDSO's own CFI
# --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def vdso(chain_exe, tmp_path_factory):
    """The running kernel's 32-bit vDSO, dumped from a live -m32 process."""
    d = tmp_path_factory.mktemp("vdso")
    path = d / "vdso32.so"
    out = _gdb(chain_exe, ["python import gdb\n", f"python m=[l.split() for l in gdb.execute('info proc mappings', "
                           f"to_string=True).splitlines() if '[vdso]' in l][0]; gdb.execute('dump memory {path} ' "
                           "+ m[0] + ' ' + m[1])"])
    assert path.exists() and path.read_bytes()[:4] == b"\x7fELF", out[-2000:]
    return path


def _readelf_fdes(path):
    """{FDE start: [(row pc, {reg: esp offset}, cfa esp offset)]} of the 'S' FDEs, from readelf."""
    text = subprocess.run(["readelf", "--debug-dump=frames", str(path)], capture_output=True, text=True,
                          check=True).stdout
    fdes, cur, rows, regs, cfa, pc, sig_cies = {}, None, None, None, None, None, set()
    cie = None
    for line in text.splitlines():
        m = re.match(r"^([0-9a-f]+) [0-9a-f]+ [0-9a-f]+ CIE", line)
        if m:
            if cur is not None:
                rows.append((pc, dict(regs), cfa))
            cie, cur = int(m.group(1), 16), None
            continue
        if cie is not None and "Augmentation:" in line and "S" in line.split('"')[1]:
            sig_cies.add(cie)
        m = re.match(r"^[0-9a-f]+ [0-9a-f]+ [0-9a-f]+ FDE cie=([0-9a-f]+) pc=([0-9a-f]+)\.\.", line)
        if m:
            if cur is not None:
                rows.append((pc, dict(regs), cfa))
            cur = int(m.group(2), 16) if int(m.group(1), 16) in sig_cies else None
            if cur is not None:
                rows, regs, cfa, pc = fdes.setdefault(cur, []), {}, None, cur
            continue
        if cur is None:
            continue
        m = re.search(r"DW_CFA_advance_loc: \d+ to ([0-9a-f]+)", line)
        if m:
            rows.append((pc, dict(regs), cfa))
            pc, regs = int(m.group(1), 16), {}
            continue
        m = re.search(r"DW_CFA_def_cfa_expression \(DW_OP_breg4 \(esp\): (-?\d+); DW_OP_deref\)", line)
        if m:
            cfa = int(m.group(1))
        m = re.search(r"DW_CFA_expression: r(\d+) \(\w+\) \(DW_OP_breg4 \(esp\): (-?\d+)\)", line)
        if m:
            regs[int(m.group(1))] = int(m.group(2))
    if cur is not None:
        rows.append((pc, dict(regs), cfa))
    return fdes


def test_signal_frames_agree_with_the_vdso_cfi(vdso):
    from elftools.elf.elffile import ELFFile
    with open(vdso, "rb") as f:
        syms = {s.name.split("@")[0]: s["st_value"] for s in ELFFile(f).get_section_by_name(".dynsym").iter_symbols()}
        code = {}
        for name in ("__kernel_sigreturn", "__kernel_rt_sigreturn"):
            f.seek(syms[name])       # the vDSO's file offsets are its addresses
            code[name] = f.read(16)
    assert code["__kernel_sigreturn"].startswith(SIG.SIGRETURN_CODE)
    assert code["__kernel_rt_sigreturn"].startswith(SIG.RT_SIGRETURN_CODE)
    fdes = _readelf_fdes(vdso)
    checked = 0
    for name in ("__kernel_sigreturn", "__kernel_rt_sigreturn"):
        start = syms[name]
        fde = next(rows for s, rows in fdes.items() if s <= start < s + 2)      # the FDE starts one byte early
        data = code[name]
        for pc, regs, cfa_esp in fde:
            for at in (max(pc, start),):       # the first row holds from one byte before the start
                kind = SIG.frame_kind(lambda a, n: data[a - start:a - start + n] if a >= start else None, at,
                                      True)
                assert kind is not None, (name, hex(at))
                sc = kind.sigcontext_address(0)
                for reg, off in regs.items():
                    assert sc + SIG.SC_OFFSETS[reg] == off, (name, hex(at), kind.name, reg)
                assert sc + SIG.SC_OFFSETS[4] == cfa_esp, (name, hex(at))   # the CFA: the interrupted esp
                rule = kind.rule
                cfa_from_sp = rule.cfa.offset
                for reg, off in regs.items():
                    assert cfa_from_sp + rule.regs[reg].arg == off, (name, reg)
                checked += 1
    assert checked >= 3


def test_trampoline_recognition_and_names():
    base = 0x1000
    mem = {base: SIG.SIGRETURN_CODE, base + 0x20: SIG.RT_SIGRETURN_CODE}

    def code_at(a, n):
        for s, b in mem.items():
            if s <= a and a + n <= s + len(b):
                return b[a - s:a - s + n]
        return None
    assert SIG.frame_kind(code_at, base, False).name == "sigframe"
    assert SIG.frame_kind(code_at, base + 1, True).name == "sigframe-popped"
    assert SIG.frame_kind(code_at, base + 6, True).name == "sigframe-popped"
    assert SIG.trampoline_start(code_at, base + 6, True) == base
    assert SIG.trampoline_start(code_at, base + 6, False) is None       # a return address is the start
    assert SIG.frame_kind(code_at, base + 0x20, False).name == "rt_sigframe"
    assert SIG.frame_kind(code_at, base + 0x25, True).name == "rt_sigframe"
    assert SIG.frame_kind(lambda a, n: None, 0x5000, False, lambda: "__restore_rt").name == "rt_sigframe"
    assert SIG.frame_kind(lambda a, n: None, 0x5000, False, "__kernel_sigreturn@@LINUX_2.5").name == "sigframe"
    assert SIG.frame_kind(lambda a, n: None, 0x5000, False, "main") is None
    assert (SIG.SIGFRAME_SIZE, SIG.RT_SIGFRAME_SIZE, SIG.SIGCONTEXT_SIZE) == (732, 268, 88)


def test_linux_headers_agree_on_sigcontext_32():
    """The kernel's uapi struct sigcontext_32, compiled -m32, has swk's offsets."""
    S.need_path("/usr/include/x86_64-linux-gnu/asm/sigcontext.h", "linux-libc-dev")
    src = T.BUILD / "i386_sigcontext.c"
    fields = {"di": 7, "si": 6, "bp": 5, "sp": 4, "bx": 3, "dx": 2, "cx": 1, "ax": 0, "ip": 8, "flags": 9}
    src.write_text("#include <stdio.h>\n#include <stddef.h>\n#include <asm/sigcontext.h>\nint main(void){\n"
                   + "".join(f'printf("{k} %zu\\n", offsetof(struct sigcontext_32, {k}));\n' for k in fields)
                   + 'printf("size %zu\\n", sizeof(struct sigcontext_32));\nreturn 0;}\n')
    exe = T.BUILD / "i386_sigcontext"
    subprocess.run(["gcc", *M32, str(src), "-o", str(exe)], check=True, capture_output=True)
    got = dict(line.split() for line in subprocess.run([str(exe)], capture_output=True, text=True,
                                                          check=True).stdout.splitlines())
    assert int(got.pop("size")) == SIG.SIGCONTEXT_SIZE
    assert {fields[k]: int(v) for k, v in got.items()} == SIG.SC_OFFSETS


# --------------------------------------------------------------------------
# calls, prologue, analysis
# --------------------------------------------------------------------------

CS32 = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_32)


@pytest.mark.parametrize("hexcode, length, target, slot", [
    ("e8 fb ff ff ff", 5, 0x1000, None),                   # call rel32 to itself - 5
    ("ff d0", 2, None, None),                              # call *%eax
    ("ff 15 10 20 30 40", 6, None, 0x40302010),            # call *0x40302010 (absolute, not rip-relative)
    ("ff 14 25 10 20 30 40", 7, None, 0x40302010),         # call *0x40302010 through SIB
    ("65 ff 15 10 00 00 00", 7, None, None),               # call *%gs:0x10 (glibc's vsyscall)
    ("ff 53 08", 3, None, None),                           # call *0x8(%ebx)
    ("3e ff d2", 3, None, None),                           # notrack call *%edx
])
def test_call_decoding_in_32_bit_mode(hexcode, length, target, slot):
    code = bytes.fromhex(hexcode)
    addr = 0x1000 if code[0] == 0xe8 else 0x2000
    call = C.decode_call(code, addr)
    assert call is not None and (call.length, call.target, call.slot) == (length, target, slot)
    insn = next(CS32.disasm_lite(code, addr, 1))
    assert insn[1] == length and insn[2].endswith("call")
    assert C.confirm_call(code, addr)
    assert call in C.calls_ending_at(code, addr + length)


def test_40_to_4f_are_inc_and_dec_not_rex():
    code = bytes.fromhex("41 ff d0")                       # x86-64: call *%r8; i386: inc %ecx; call *%eax
    assert [c.length for c in C.calls_ending_at(code, 0x1003)] == [2]
    assert [i[2] for i in CS32.disasm_lite(code, 0)] == ["inc", "call"]
    assert C.decode_call(code) is None
    assert C.decode_call(bytes.fromhex("e8 00 00 00 80"), 0x7ffffff0).target == (0x7ffffff5 + 0x80000000) & 0xFFFFFFFF


def test_plt_slots():
    assert C.plt_slot(bytes.fromhex("ff 25 0c a0 04 08 68 00 00 00 00"), 0x8049030) == 0x804a00c
    assert C.plt_slot(bytes.fromhex("ff a3 0c 00 00 00 68 00"), 0x1030, lambda: 0x4000) == 0x400c
    assert C.plt_slot(bytes.fromhex("f3 0f 1e fb ff a3 10 00 00 00"), 0x1030, 0x4000) == 0x4010
    assert C.plt_slot(bytes.fromhex("ff a3 0c 00 00 00"), 0x1030) is None          # PIC: needs the GOT
    assert C.plt_entry_slot(bytes.fromhex("ff a3 14 00 00 00 66 90"), 0x1030, 0x3ff4) == 0x4008


def test_endbr32_prologue_rules():
    code = bytes.fromhex("f3 0f 1e fb 55 89 e5 57 56 53 83 ec 1c")
    p = P.parse_prologue(code, 0x1000)
    assert (p.push_at, p.mov_at, p.body_at) == (0x1004, 0x1005, 0x1007)
    assert p.saved == [(7, -4), (6, -8), (3, -12)]
    body = p.rule_at(0x1010, True)
    assert (body.cfa.reg, body.cfa.offset) == (5, 8)
    assert body.saved_offsets() == {8: -4, 5: -8, 7: -12, 6: -16, 3: -20}
    assert p.rule_at(0x1004, True).saved_offsets() == {8: -4} and p.rule_at(0x1004, True).cfa.offset == 4
    assert p.rule_at(0x1005, True).saved_offsets() == {8: -4, 5: -8}
    assert P.parse_prologue(bytes.fromhex("55 8b ec"), 0).body_at == 3
    assert P.parse_prologue(bytes.fromhex("48 89 e5"), 0) is None


PIC_ASM = r"""
    .text
    .globl f
f:
f_i0: push %ebx
f_i1: call 1f
1:
f_i2: pop %ebx
f_i3: push %esi
f_i4: call __x86.get_pc_thunk.bx
f_i5: add $0x1000, %ebx
f_i6: sub $0x18, %esp
f_i7: pushal
f_i8: popal
f_i9: call g
f_i10: add $0x18, %esp
f_i11: pop %esi
f_i12: pop %ebx
f_i13: ret
g: ret
__x86.get_pc_thunk.bx:
    mov (%esp), %ebx
    ret
"""


def test_analysis_of_pic_idioms(tmp_path):
    """call-to-next is a push; a call to the PIC thunk returns; heights at every instruction."""
    src, obj, binf = tmp_path / "pic.S", tmp_path / "pic.o", tmp_path / "pic.bin"
    src.write_text(PIC_ASM)
    subprocess.run(["gcc", "-m32", "-c", str(src), "-o", str(obj)], check=True, capture_output=True)
    subprocess.run(["objcopy", "-O", "binary", "-j", ".text", str(obj), str(binf)], check=True)
    labels = {}
    for line in subprocess.run(["nm", str(obj)], capture_output=True, text=True, check=True).stdout.splitlines():
        v, _t, n = line.split()
        labels[n] = int(v, 16)
    code = binf.read_bytes()
    fa = A.analyze(lambda a, n: code[a:a + n], 0, labels["g"])
    want = [4, 8, 12, 8, 12, 12, 12, 36, 68, 36, 36, 12, 8, 4]
    got = [fa.rule_at(labels[f"f_i{i}"], True).sp_offset for i in range(len(want))]
    assert got == want
    saved = fa.rule_at(labels["f_i9"], True).saved
    assert saved == {3: -8, 6: -12}     # pop %ebx took the pushed pc: the caller's %ebx is still at CFA-8
    assert fa.rule_at(labels["f_i10"] - 1, False).sp_offset == 36      # looked up as a return address


def _functions(path):
    out = subprocess.run(["nm", "-S", "--defined-only", str(path)], capture_output=True, text=True, check=True).stdout
    res = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tT" and not parts[3].startswith(("_", "deregister", "register",
                                                                                  "frame_dummy")):
            res.append((int(parts[0], 16), int(parts[1], 16), parts[3]))
    return res


@pytest.mark.parametrize("opt", ["-O2", "-O0", "-Os"])
def test_real_code_agrees_with_gcc_cfi(tmp_path, opt):
    """The analysis of a -m32 program built without unwind tables, against gcc's CFI of the
    very same code built with them, at every instruction gcc's CFI describes with an esp or
    ebp offset, and at every call site (callee-saved registers too); main's realigned frame
    against gcc's CFA expression."""
    import test_analysis as TA
    from swk_plugin.dwarf.cfi import CfiTable
    from swk_plugin.elf.module import ElfModule
    exes = []
    for variant, tables in (("nocfi", TA.NO_CFI), ("cfi", TA.WITH_CFI)):
        src = tmp_path / "prog.c"
        src.write_text(TA.PROGRAM)
        exe = tmp_path / f"prog-{variant}"
        subprocess.run(["gcc", *M32, opt, "-fomit-frame-pointer" if opt != "-O0" else "-fno-omit-frame-pointer",
                        "-g0", *tables, str(src), "-o", str(exe)], check=True, capture_output=True)
        exes.append(exe)
    dis = [subprocess.run(["objdump", "-d", str(p)], capture_output=True, text=True).stdout.split("\n", 3)[3]
           for p in exes]
    if dis[0] != dis[1]:
        S.toolchain_quirk("gcc -m32 made other code with and without unwind tables")
    mod = ElfModule(str(exes[1]))
    eh, hdr = mod.section(".eh_frame"), mod.section(".eh_frame_hdr")
    oracle = CfiTable.from_eh_frame(eh.data, eh.addr, hdr.data, hdr.addr, ptr_size=4)
    nocfi = ElfModule(str(exes[0]))

    def read(a, n):
        try:
            return nocfi.read_vaddr(a, n) or b""
        except Exception:
            return b""
    insns = agree = calls = calls_ok = realigned = 0
    bad = []
    for start, size, name in _functions(exes[0]):
        fa = A.analyze(read, start, start + size)
        for a, n, mn, _ops in CS32.disasm_lite(read(start, size), start):
            row = oracle.row_at(a)
            if row is None:
                continue
            h = fa.rule_at(a, True)
            h = None if h is A.NOT_REACHED else h
            if row.cfa.expr is not None or row.cfa.reg not in (4, 5):
                # gcc's CFA in %ecx (a realigning prologue or epilogue) or in memory (its body):
                # the analysis knows the body only
                if row.cfa.expr is not None and h is not None and h.rule.cfa.expr is not None:
                    realigned += 1
                continue
            insns += 1
            ok = h is not None and ((row.cfa.reg == 4 and h.sp_offset == row.cfa.offset) or
                                    (row.cfa.reg == 5 and h.fp_offset == row.cfa.offset))
            agree += ok
            if not ok:
                bad.append((name, hex(a), mn, row.cfa, h))
            if mn.endswith("call"):
                hc = fa.rule_at(a + n - 1, False)
                hc = None if hc is A.NOT_REACHED else hc
                want = {r: rr.arg for r, rr in row.regs.items() if r in (3, 5, 6, 7) and rr.kind == "offset"}
                calls += 1
                good = hc is not None and hc.sp_offset == row.cfa.offset and hc.saved == want \
                    if row.cfa.reg == 4 else hc is not None and hc.fp_offset == row.cfa.offset
                calls_ok += bool(good)
                if not good:
                    bad.append(("CALL", name, hex(a), row, hc))
    print("\n".join(map(str, bad[:12])))
    print(f"\n-m32 {opt}: {agree}/{insns} instructions, {calls_ok}/{calls} call sites, "
          f"{realigned} instructions of main's realigned frame")
    # what disagrees: the instructions of realigning prologues and epilogues, where gcc keeps
    # the CFA in %ecx (no stack height describes them; top frames only)
    assert insns > 300 and agree / insns >= 0.95, bad[:10]
    assert calls_ok == calls, bad[:10]
    assert realigned > 0


# --------------------------------------------------------------------------
# ELF32 cores
# --------------------------------------------------------------------------

def _elf32_core(path, notes, loads=()):
    """A minimal ELF32 i386 core: PT_NOTE with ``notes`` [(name, type, desc)], PT_LOADs [(vaddr, data)]."""
    def note(name, ntype, desc):
        n = name + b"\0"
        pad = lambda b: b + b"\0" * (-len(b) % 4)   # noqa: E731
        return struct.pack("<III", len(n), len(desc), ntype) + pad(n) + pad(desc)
    blob = b"".join(note(*n) for n in notes)
    phnum = 1 + len(loads)
    off = 52 + 32 * phnum
    phdrs = struct.pack("<IIIIIIII", 4, off, 0, 0, len(blob), 0, 0, 4)
    data = blob
    for vaddr, mem in loads:
        phdrs += struct.pack("<IIIIIIII", 1, off + len(data), vaddr, 0, len(mem), len(mem), 6, 4096)
        data += mem
    ident = b"\x7fELF\x01\x01\x01" + b"\0" * 9
    ehdr = ident + struct.pack("<HHIIIIIHHHHHH", 4, 3, 1, 0, 52, 0, 0, 52, 32, phnum, 40, 0, 0)
    path.write_bytes(ehdr + phdrs + data)
    return path


def test_synthetic_elf32_core_layout(tmp_path):
    regs = list(range(0x11110000, 0x11110000 + 17))
    prstatus = bytearray(RS.PRSTATUS_SIZE)
    struct.pack_into("<iii", prstatus, 0, 11, 0, 0)
    struct.pack_into("<h", prstatus, 12, 11)
    struct.pack_into("<II", prstatus, 16, 0x100, 0x200)
    struct.pack_into("<iiii", prstatus, 24, 4242, 4000, 4242, 4001)
    struct.pack_into("<17I", prstatus, RS.PRSTATUS_REG_OFFSET, *regs)
    psinfo = bytearray(RS.PRPSINFO["size"])
    struct.pack_into("<HH", psinfo, 8, 1000, 1001)
    struct.pack_into("<ii", psinfo, 12, 4242, 4000)
    psinfo[28:28 + 5] = b"prog\0"
    psinfo[44:44 + 9] = b"prog -x\0\0"
    auxv = struct.pack("<8I", 6, 4096, 33, 0xf7fc7000, 9, 0x8049000, 0, 0)
    nt_file = struct.pack("<5I", 1, 4096, 0x8048000, 0x8049000, 0) + b"/bin/prog\0"
    core = _elf32_core(tmp_path / "c32", [(b"CORE", 1, bytes(prstatus)), (b"CORE", 3, bytes(psinfo)),
                                          (b"CORE", 6, auxv), (b"CORE", 0x46494C45, nt_file)],
                       [(0xffffd000, b"\xaa" * 4096)])
    with CoreFile(core) as c:
        assert c.arch == I386()
        t = c.threads[0]
        assert (t.tid, t.signal, t.ppid, t.pgrp, t.sid, t.sigpend, t.sighold) == (4242, 11, 4000, 4242, 4001,
                                                                                  0x100, 0x200)
        assert t.regs[3] == regs[0] and t.regs[1] == regs[1] and t.regs[0] == regs[6]
        assert (t.pc, t.sp, t.regs[5]) == (regs[12], regs[15], regs[5])
        assert t.regs["orig_eax"] == regs[11] and t.regs["eflags"] == regs[14]
        assert (c.pid, c.ppid, c.uid, c.gid, c.exe_name, c.psargs) == (4242, 4000, 1000, 1001, "prog", "prog -x")
        assert c.auxv == {6: 4096, 33: 0xf7fc7000, 9: 0x8049000}
        assert c.mappings[0][:3] == (0x8048000, 0x8049000, 0) and c.mappings[0].path == "/bin/prog"
        assert c.read_pointer(0xffffd010) == 0xaaaaaaaa


@pytest.fixture(scope="module")
def kernel_core(corpus, tmp_path_factory):
    """A kernel core of the -m32 segv program (the way tests/test_corefile.py gets one)."""
    import test_corefile as TC
    exe = corpus.exe(T.CASES_BY_ID["i386-crash-segv-O2g"])
    d = tmp_path_factory.mktemp("i386core")
    return exe, TC._kernel_core(exe, d, args=("segv",))


def test_kernel_core_read_as_gdb_reads_it(kernel_core):
    from swk_plugin.backends.core import CoreProcessState
    exe, core = kernel_core
    ps = CoreProcessState(core, exe)
    assert ps.arch == I386() and ps.core.header.elfclass == 32
    out = T.run_gdb(exe, ["info registers eip esp ebp", "info sharedlibrary", "info auxv", "p $_siginfo.si_signo"],
                    core=core)
    want = {m.group(1): int(m.group(2), 16) for m in re.finditer(r"^(eip|esp|ebp)\s+(0x[0-9a-f]+)", out, re.M)}
    regs = ps.get_registers(ps.get_default_thread())
    assert (regs[8], regs[4], regs[5]) == (want["eip"], want["esp"], want["ebp"]), out[-2000:]
    assert ps.core.threads[0].signal == 11 and ps.signal_info.signo == 11
    gdb_libs = {os.path.realpath(p) for p in re.findall(r"^0x[0-9a-f]+\s+0x[0-9a-f]+\s+\S+(?: \(\*\))?\s+(/\S+)$",
                                                          out, re.M)}
    swk_libs = {os.path.realpath(lib.path) for lib in ps.library_state.get_libraries() if lib.path.startswith("/")}
    assert gdb_libs and gdb_libs <= swk_libs, (gdb_libs, swk_libs)
    auxv = {int(k): int(v, 0) for k, v in re.findall(r"^(\d+)\s+\S+\s+.*?\s(0x[0-9a-f]+|\d+)(?:\s+\".*\")?$",
                                                   out, re.M)}
    auxv.pop(0, None)                                  # AT_NULL ends the vector
    assert auxv and {k: ps.core.auxv.get(k) for k in auxv} == auxv
    vdso = [lib for lib in ps.library_state.get_libraries() if lib.path == "[vdso]"]
    assert vdso and vdso[0].module.ptr_size == 4


def test_kernel_core_walked_as_gdb_walks_it(kernel_core):
    exe, core = kernel_core
    native = T.native_frames(exe, [], core=core)
    swk = T.swk_core_frames(core, exe)
    errs = T.compare_swk_to_gdb(native, swk, by_tid=True, check_sp=True)
    assert not errs, "\n".join(errs) + "\n" + T.format_native(native)
    chain = T.chain(swk[0]["frames"])
    assert T.chain_mismatch(chain, T.CASES_BY_ID["i386-crash-segv-O2g"].expected[1]) is None, chain

def test_unknown_core_machine_one_line(tmp_path):
    core = _elf32_core(tmp_path / "m68k", [(b"CORE", 1, bytes(144))])
    data = bytearray(core.read_bytes())
    data[18:20] = struct.pack("<H", 4)                 # EM_68K
    core.write_bytes(data)
    p = T.run_swk_cli(["bt", "--core", core])
    lines = [ln for ln in p.stdout.splitlines() if ln.strip()]
    assert p.returncode != 0 and len(lines) == 1 and "unsupported machine" in lines[0], p.stdout
