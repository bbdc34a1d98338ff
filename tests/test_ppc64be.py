"""Power-64 big-endian (issue 26: ELFv1, the seed's Power-64): the corpus cross-built for ppc64
and run under qemu-user, walked by swk inside gdb-multiarch, LLDB and from qemu's own cores;
what ELFv1 changes checked against the cross toolchain.

The corpus tests are test_ppc64.py's (its helpers: sessions, comparisons) on the big-endian
target, with the same known chains:
  test_gdb_own_walk[CASE]          gdb's own walk is the known chain where the case says gdb is
                                   right, and is not where it says it is wrong (recorded)
  test_swk_in_gdb[CASE]            swk-bt -json -all: the known chain, gdb's pcs and sps
  test_gdb_with_swk_unwinder[CASE] gdb's own bt with swk's unwinder: the known chain
  test_cli_on_qemu_core[CASE]      `swk bt --core` on qemu's core of the guest at that stop
  test_lldb_misplaces_elfv1_programs  LLDB loads an ELFv1 program at a slide of its own (not
                                   gdb's load bias): swk, taking LLDB's modules, stops at frame 0
                                   (recorded; cross_lib.PPC64's note)
Units: what ELFv1 changes, against binutils and the cross compiler —
  * function descriptors: every function symbol in .opd names its code (BFD's synthetic
    ``.NAME`` symbols, nm --synthetic) in swk's symbol tables, and its descriptor still
    (a function pointer's value);
  * the TOC save slot: the word after every call to a linker stub restores r2 from it
    (objdump), 40 under ELFv1 and 24 under ELFv2;
  * pt_regs / elf_prstatus / ucontext offsets (the same as ppc64le's) read big-endian;
  * the back chain's prologue rules, the stack-height analysis and the return sites on
    big-endian words, against GCC's CFI and objdump.
"""
from __future__ import annotations

import dataclasses
import re
import subprocess

import pytest

import cross_lib as C
import cross_suite as X
import swk_suite as S
import swk_testlib as T
import test_ppc64 as LE
from cross_lib import O0, O2, CrossCase

pytestmark = [pytest.mark.corpus]
TARGET = C.PPC64
C.need_machine(TARGET)
CHAIN, LIBC_START, THREAD_START, SIGTRAMP = LE.CHAIN, LE.LIBC_START, LE.THREAD_START, LE.SIGTRAMP


def _case(id, srcs, cflags, expected, **kw) -> CrossCase:
    return CrossCase(id, srcs, cflags, expected, target=TARGET, **kw)


#: test_ppc64.py's cases on the big-endian target (the dlopen library under a name of its own).
CASES = [_case(c.id, c.srcs, c.cflags, c.expected, ldflags=c.ldflags, pre=c.pre, run_args=c.run_args,
               lib=(c.lib[0], c.lib[1], "libppc64bedlib.so") if c.lib else None, gdb_right=c.gdb_right,
               gdb_note=c.gdb_note, interrupted=c.interrupted) for c in LE.CASES]
BY_ID = {c.id: c for c in CASES}
session = LE.session

#: GDB's names of the C library's functions where they are not swk's: GDB names code in a
#: library with no .symtab by BFD's synthetic symbol of its descriptor (``.NAME``, after one of
#: the descriptor's aliases: __clone, not clone) and prints it without the dot only where its
#: demangler takes the name, which it does not before an underscore.  swk names the function
#: as it names ppc64le's (its symbols at the code, GDB's choice among aliases).
GDB_NAMES = {"__libc_start_main": ".__libc_start_main", "clone": ".__clone", "nanosleep": ".__nanosleep"}


def _as_gdb_names(case: CrossCase) -> CrossCase:
    """``case`` with the known chain in GDB's names (GDB_NAMES): what gdb's own bt prints."""
    return dataclasses.replace(case, expected={n: [GDB_NAMES.get(f, f) for f in chain]
                                               for n, chain in case.expected.items()})


@pytest.mark.native
@pytest.mark.parametrize("case", CASES, ids=X.ids(CASES))
def test_gdb_own_walk(case):
    X.check_gdb_own_walk(case, session(case), gdb_case=_as_gdb_names(case))


@pytest.mark.swk
@pytest.mark.parametrize("case", CASES, ids=X.ids(CASES))
def test_swk_in_gdb(case):
    X.check_swk_in_gdb(case, session(case))


@pytest.mark.swk
@pytest.mark.parametrize("case", CASES, ids=X.ids(CASES))
def test_gdb_with_swk_unwinder(case):
    """qemu's trampoline, which swk unwinds for gdb, is a frame without a name there; gdb names
    the C library's frames its own way (GDB_NAMES)."""
    X.check_gdb_with_swk_unwinder(case, session(case), sigtramp_unnamed=True, gdb_case=_as_gdb_names(case))


@pytest.mark.swk
@pytest.mark.parametrize("case", CASES, ids=X.ids(CASES))
def test_cli_on_qemu_core(case):
    X.check_cli_on_core(case, session(case))


@pytest.mark.swk
def test_lldb_misplaces_elfv1_programs():
    """LLDB 22 on qemu-ppc64's stub, stopped at gdb's pc (cross_lib.PPC64's note): LLDB loads
    the ELFv1 executable at a slide of its own, the first word of the entry's descriptor
    (read before ld.so relocates it) minus e_entry, a function descriptor too, not gdb's load
    bias (AT_ENTRY - e_entry).  swk takes its modules from LLDB, so it finds none at the pc:
    its frame 0 is LLDB's pc and it stops there, naming why (recorded: when LLDB places the
    program, this fails and the corpus's LLDB cases can run here as on ppc64le)."""
    from elftools.elf.elffile import ELFFile
    choice = S.lldb()
    if choice.path is None:
        pytest.skip(choice.problem)
    case = BY_ID["chain-O0"]
    s = session(case)
    stop_pc = T.pcs(s.native[1])[0]
    exe = case.exe()
    start, _end = _code_functions(exe)["stop_here"]
    gdb_bias = stop_pc - start
    out = C.lldb_session(case, choice.path, stop_pc=stop_pc, after=[
        f"script print('{C.LLDB_BEGIN}')", "swk-bt -all -json",
        f"script for t in lldb.process: print('{C.PC0_TAG}', t.GetIndexID(), t.GetThreadID(), "
        "t.GetFrameAtIndex(0).GetPC())",
        "script t = lldb.target.FindModule(lldb.target.GetExecutable()).FindSection('.text'); "
        "print('SWK-SLIDE', t.GetLoadAddress(lldb.target) - t.GetFileAddress())",
        f"script print('{C.LLDB_BT}')", "bt all", f"script print('{C.LLDB_END}')"])
    slide = re.search(r"^SWK-SLIDE (-?\d+)", out, re.M)
    assert slide, out[-4000:]
    with open(exe, "rb") as fh:
        elf = ELFFile(fh)
        opd, entry = elf.get_section_by_name(".opd"), elf["e_entry"]
        first_word = int.from_bytes(opd.data()[entry - opd["sh_addr"]:entry - opd["sh_addr"] + 8], "big")
    lldb_slide = int(slide.group(1)) & ((1 << 64) - 1)
    assert lldb_slide != gdb_bias and lldb_slide == (first_word - entry) & ((1 << 64) - 1), \
        (hex(lldb_slide), hex(gdb_bias), hex(first_word), hex(entry))
    swk = T.parse_swk_json(C._segment(out, C.LLDB_BEGIN, C.LLDB_BT))
    pc0 = C.parse_pc0(out)
    assert len(swk) == 1 and pc0 == {swk[0]["tid"]: stop_pc}
    frames = swk[0]["frames"]
    assert [f["pc"] for f in frames] == [stop_pc] and frames[0]["function"] is None, C.format_swk(swk)
    assert "no module with CFI" in swk[0]["stop_reason"], swk[0]["stop_reason"]


# --------------------------------------------------------------------------
# what ELFv1 changes, against binutils and the cross compiler
# --------------------------------------------------------------------------

@pytest.mark.parametrize("target", [C.PPC64, C.PPC64LE], ids=["ppc64", "ppc64le"])
def test_gdb_back_end_picks_by_byte_order(target):
    """GDB names both Power-64s ``powerpc:common64``: the GDB back-end's Architecture is the one
    of the inferior's byte order (``show endian``'s, GDB's own word on it)."""
    case = CrossCase("chain-O0", ("chain.c",), O0, {}, target=target)
    out = C.gdb_commands_session(case, [
        "show endian", f"source {T.GDB_INIT}",
        "python from swk_plugin.backends.gdb.procstate import architecture as a; "
        "print('SWK-ARCH', gdb.selected_inferior().architecture().name(), "
        "a(gdb.selected_inferior().architecture()).name, a(gdb.selected_frame().architecture()).name)"])
    m = re.search(r"^SWK-ARCH (\S+) (\S+) (\S+)$", out, re.M)
    endian = re.search(r"currently (big|little) endian", out)
    assert m and endian, out[-3000:]
    assert m.group(1) == "powerpc:common64"
    assert m.group(2) == m.group(3) == {"big": "ppc64", "little": "ppc64le"}[endian.group(1)] == target.name

def _arch():
    from swk_plugin.arch import get_architecture
    return get_architecture("ppc64")


def _nm(exe, *flags):
    """[(address, type, name without its version, size or None)] of nm's defined symbols."""
    out = subprocess.run([TARGET.tool("nm"), "-S", "--defined-only", *flags, str(exe)], check=True,
                         capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4:
            rows.append((int(parts[0], 16), parts[2], parts[3].split("@")[0], int(parts[1], 16)))
        elif len(parts) == 3:
            rows.append((int(parts[0], 16), parts[1], parts[2].split("@")[0], None))
    return rows


def _code_functions(exe, *flags):
    """{name: (code start, end)} of the program's functions: BFD's synthetic ``.NAME`` symbol
    at each descriptor's code (nm --synthetic), sized by the descriptor's symbol (names whose
    versions differ in size left out: which version BFD named is not said)."""
    sizes = {}
    for _a, kind, name, size in _nm(exe, *flags):
        if kind in "dDwW" and size:
            sizes.setdefault(name, set()).add(size)
    return {name[1:]: (addr, addr + min(sizes[name[1:]])) for addr, kind, name, _s in _nm(exe, "--synthetic", *flags)
            if kind in "tTwW" and name.startswith(".") and len(sizes.get(name[1:], ())) == 1}


@pytest.mark.parametrize("cid", ["chain-O2", "cxx-O2", "dlopen-O2", "libc"])
def test_descriptors_name_their_code(cid):
    """Every function symbol in .opd (its value a descriptor) names its code in swk's symbol
    table, where BFD's synthetic symbol is, with the descriptor's size; the descriptor keeps
    its name (a function pointer's value), as a data symbol.  The programs' .symtab, and the
    cross C library's .dynsym (stripped: nm -D)."""
    from pathlib import Path
    from swk_plugin.elf.module import ElfModule
    from swk_plugin.elf.symbols import SymbolTable
    if cid == "libc":
        files, flags, least = [Path(TARGET.sysroot) / "lib" / "libc.so.6"], ("-D",), 1000
    else:
        files, flags, least = list(filter(None, (BY_ID[cid].exe(), BY_ID[cid].lib_path()))), (), 3
    for exe in files:
        st = SymbolTable.from_module(ElfModule(str(exe)))
        funcs = _code_functions(exe, *flags)
        descriptors = {}                        # name -> its descriptors (one per symbol version)
        for addr, kind, name, _size in _nm(exe, *flags):
            if kind in "dDwW":
                descriptors.setdefault(name, set()).add(addr)
        assert len(funcs) >= least, (exe, funcs)
        # aliases (C++'s D1/D2 destructors, fclose and _IO_fclose) share one code and BFD names
        # it once: any function descriptor's name of the same size names it
        sized = {}
        for _a, kind, nm_name, size in _nm(exe, *flags):
            if kind in "dDwW" and size:
                sized.setdefault(nm_name, set()).add(size)
        for name, (start, end) in funcs.items():
            for pc in (start, end - 4):
                hit = st.lookup(pc)
                assert hit is not None and hit[1] == pc - start and end - start in sized.get(hit[0].name, ()), \
                    (exe.name, name, hit)
            assert hit[0].section != ".opd" and hit[0]._mst in ("text", "file_text"), (exe.name, hit)
            for addr in descriptors[name]:
                desc = st.lookup(addr)
                assert desc is not None and desc[1] == 0 and addr in descriptors.get(desc[0].name, ()), \
                    (exe.name, name, desc)
                assert desc[0].section == ".opd" and desc[0]._mst not in ("text", "file_text")
            if len(descriptors[name]) == 1:        # (a bare name is its default version's)
                assert any(s.value == start and s._mst in ("text", "file_text") for s in st.by_name(name)), name


_STUB_CALL = re.compile(r"^\s*([0-9a-f]+):\s+(?:[0-9a-f]{2} ){4}\s*bl\s+[0-9a-f]+ <[0-9a-f]+\.plt_call\.[^>]*>\s*$\n"
                        r"^\s*[0-9a-f]+:\s+(?:[0-9a-f]{2} ){4}\s*(.*?)\s*$", re.M)


@pytest.mark.parametrize("target", [C.PPC64, C.PPC64LE], ids=["ppc64", "ppc64le"])
def test_toc_save_slot(target):
    """A call to another module goes through a linker stub that saves the caller's TOC in its
    frame header; the word after the call reloads it from there: ``ld r2,TOC_SAVE(r1)``, the
    calls kit's slot (ELFv1 40, ELFv2 24), after every such call objdump shows."""
    from swk_plugin.arch import get_architecture
    arch = get_architecture(target.name)
    exe = CrossCase("chain-O2", ("chain.c",), O2, {}, target=target).exe()
    dis = subprocess.run([target.tool("objdump"), "-d", str(exe)], check=True, capture_output=True,
                         text=True).stdout
    after = [m.group(2) for m in _STUB_CALL.finditer(dis)]
    assert after, "objdump shows no call to a linker stub"
    assert set(after) == {f"ld      r2,{arch.calls.TOC_SAVE}(r1)"}, after


def test_layouts_match_the_toolchain(tmp_path):
    """pt_regs, elf_prstatus, elf_prpsinfo and the ucontext of the big-endian toolchain are
    ppc64le's (the tables swk states once), read here in big-endian words."""
    from swk_plugin.arch.ppc64 import signal
    arch = _arch()
    got = LE._toolchain_offsets(tmp_path, TARGET)
    rs = arch.regsets
    assert rs.byteorder == "big" and arch.byteorder == "big"
    assert (rs.prstatus_reg_offset, rs.prstatus_size, rs.user_regs_size) == \
        (got["pr_reg"], got["prstatus"], got["gregset"])
    assert rs.prpsinfo == {"uid": got["uid"], "uid_size": got["uid_size"], "pid": got["pid"],
                           "fname": got["fname"], "psargs": got["psargs"], "size": got["prpsinfo"]}
    assert (signal.UC_SIGMASK, signal.UC_MCONTEXT, signal.UCONTEXT_SIZE) == \
        (got["uc_sigmask"], got["uc_mcontext"], got["ucontext"])
    assert (signal.SC_REGS_POINTER, signal.SC_GP_REGS, signal.SC_FP_REGS) == \
        (got["regs"], got["gp_regs"], got["fp_regs"])
    slots = dict(zip(rs.user_regs, range(len(rs.user_regs))))
    assert (slots["pc"], slots["ctr"], slots["lr"], slots["xer"], slots["cr"]) == \
        (got["PT_NIP"], got["PT_CTR"], got["PT_LNK"], got["PT_XER"], got["PT_CCR"])
    raw = b"".join((0x1000 + i).to_bytes(8, "big") for i in range(48))
    regs = rs.unpack_user_regs(raw)
    assert regs[arch.sp] == 0x1001 and regs[arch.pc] == 0x1000 + got["PT_NIP"]


def test_signal_trampolines_are_big_endian():
    """The trampolines the kits match are the words of ../signal.py in big-endian order, and
    qemu-ppc64's trampoline in the signal case's guest is one of them (the walk reads it)."""
    arch = _arch()
    sf = arch.signal_frame
    kernel, qemu = (code for code, _sc in sf.TRAMPOLINES)
    assert [int.from_bytes(kernel[i:i + 4], "big") for i in range(0, 12, 4)] == [0x38210080, 0x380000ac, 0x44000002]
    assert qemu == kernel[4:]
    assert sf.is_trampoline_code(qemu + b"\0\0\0\0") and not sf.is_trampoline_code(qemu[::-1])
    assert sf.gdb_knows(kernel) and not sf.gdb_knows(qemu)
    mem = {0x1000: kernel, 0x2000: qemu}
    code_at = lambda a, n: next((c[a - b:a - b + n] for b, c in mem.items() if b <= a < b + len(c)), None)  # noqa
    assert sf.frame_kind(code_at, 0x1000, False).name == "kernel"
    assert sf.frame_kind(code_at, 0x2000, False).name == "qemu-user"
    assert sf.trampoline_start(code_at, 0x2004, True) == 0x2000


def test_back_chain_rules_agree_with_gcc_cfi():
    """The prologue kit's body rule (CFA = *(r1), lr at CFA+16) on big-endian words against the
    CFI GCC wrote for the same functions (test_ppc64.py's check)."""
    from swk_plugin.elf.module import ElfModule
    from swk_plugin.rule import OFFSET
    from swk_plugin.unwind.cfi import cfi_rule_at
    arch = _arch()
    exe = BY_ID["chain-O0"].exe()
    mod = ElfModule(str(exe))
    tstart, data = LE._text(exe)
    checked = 0
    for name, (start, _end) in _code_functions(exe).items():
        if name not in ("stop_here", "a", "b", "c", "main"):
            continue
        pro = arch.prologue.parse_prologue(data[start - tstart:start - tstart + arch.prologue.READ_SIZE], start)
        if name == "stop_here" and pro is None:
            continue
        assert pro is not None, f"{name}: no back-chain prologue parsed"
        cfi = cfi_rule_at(mod, pro.body_at)
        assert cfi is not None and cfi.cfa.reg == arch.sp and cfi.ra_reg == arch.ra, f"{name}: {cfi}"
        assert pro.size == cfi.cfa.offset, f"{name}: frame {pro.size} vs CFI's CFA r1+{cfi.cfa.offset}"
        assert {r: rr.arg for r, rr in cfi.regs.items() if rr.kind == OFFSET} == pro.saved, name
        checked += 1
    assert checked >= 4


def test_return_sites_match_objdump():
    """Every bl / bctrl objdump shows in the program's text is a return site swk decodes from
    big-endian words, and nothing else is."""
    arch = _arch()
    exe = BY_ID["chain-O2"].exe()
    tstart, data = LE._text(exe)
    sites, _end = arch.calls.return_sites(data, tstart)
    dis = subprocess.run([TARGET.tool("objdump"), "-d", "--section=.text", str(exe)], check=True,
                         capture_output=True, text=True).stdout
    calls = {int(m.group(1), 16) for m in re.finditer(r"^\s*([0-9a-f]+):\s+(?:[0-9a-f]{2} ){4}\s*(bl|bctrl|blrl)\b",
                                                       dis, re.M)}
    assert calls, "objdump shows no call"
    assert set(sites.values()) == calls
    from swk_plugin.arch import get_architecture
    assert get_architecture("ppc64le").calls.return_sites(data, tstart)[0] != sites   # the words' order matters


def test_eh_frame_is_renumbered():
    """GCC's big-endian .eh_frame numbers lr 65 as the little-endian one does: swk reads 108."""
    from swk_plugin.elf.module import ElfModule
    from swk_plugin.unwind.cfi import module_cfi
    tables = module_cfi(ElfModule(str(BY_ID["chain-O0"].exe())))
    assert tables, "no CFI"
    for table in tables:
        for fde in table.iter_fdes():
            for row in table.rows(fde):
                assert row.ra_reg == 108 and not set(row.regs) & {65, 66}, (table.section, row)


@pytest.mark.parametrize("cid", ["chain-O0", "chain-O2", "threads-O2", "cxx-O2", "recurse-O0"])
def test_analysis_agrees_with_gcc_cfi(cid):
    """The stack-height analysis on big-endian words against GCC's CFI of the same code, at
    every instruction of every function (test_ppc64.py's check)."""
    from swk_plugin.elf.module import ElfModule
    from swk_plugin.rule import OFFSET
    from swk_plugin.unwind.cfi import cfi_rule_at
    arch = _arch()
    exe = BY_ID[cid].exe()
    mod = ElfModule(str(exe))
    tstart, data = LE._text(exe)
    read = lambda a, n: data[a - tstart:a - tstart + n]       # noqa: E731
    checked = lr_saved = 0
    for name, (start, end) in _code_functions(exe).items():
        if not tstart <= start < tstart + len(data) or end <= start or name.startswith("_start"):
            continue
        fa = arch.analysis.analyze(read, start, end)
        for addr, height in zip(fa.addrs, fa.rules):
            cfi = cfi_rule_at(mod, addr)
            if cfi is None or cfi.cfa.reg != arch.sp:
                continue
            assert height is not None, f"{name}+{addr - start:#x}: the analysis lost the height, CFI {cfi}"
            rule = height.rule
            if rule.cfa.reg == arch.sp:
                assert rule.cfa.offset == cfi.cfa.offset, f"{name}+{addr - start:#x}: {rule} vs {cfi}"
            mine = {r: rr.arg for r, rr in rule.regs.items() if rr.kind == OFFSET}
            theirs = {r: rr.arg for r, rr in cfi.regs.items() if rr.kind == OFFSET}
            for r in set(mine) & set(theirs):
                assert mine[r] == theirs[r], f"{name}+{addr - start:#x} r{r}: {rule} vs {cfi}"
            assert arch.ra not in theirs or arch.ra in mine, f"{name}+{addr - start:#x}: lr's save missed: {rule}"
            lr_saved += arch.ra in mine
            checked += 1
    assert checked > 20 and lr_saved
