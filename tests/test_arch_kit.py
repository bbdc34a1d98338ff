"""The architecture kit (issue 26): every architecture's register-set table against the C
library's and the kernel's own structures, and the kit's shared parts on real programs.

For each architecture swk walks, a C program built by its compiler (x86-64: gcc; i386:
gcc -m32; the others Debian's gcc-12-<triplet>, run under qemu-user: tests/cross_lib.py)
prints what the headers say:

  * the general registers: ``offsetof`` of every slot the table names, in
    ``struct user_regs_struct`` (<sys/user.h>), ``struct user_pt_regs`` (AArch64's
    <asm/ptrace.h>) or ``struct pt_regs`` (Power's), and ``sizeof(elf_gregset_t)``; then
    the bytes of such a struct with a distinct value stored in each field by name, which
    arch/regsets.py's one reader must unpack back;
  * ``struct elf_prstatus`` (<sys/procfs.h>): where pr_reg starts, its size, C's long there,
    and the fields linux/coredump.py reads itself (pr_cursig, pr_sigpend, pr_pid);
  * ``struct elf_prpsinfo``: pr_uid (and its size), pr_pid, pr_fname, pr_psargs, its size.

And on the same programs: the registry finds each architecture from its ELF header (machine,
class, byte order); every call in ``main`` that objdump shows is a return site of the
architecture's ``calls`` kit, as one CallSite type (arch/callsite.py).
"""
from __future__ import annotations

import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

import cross_lib
import swk_suite as S
import swk_testlib as T

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from swk_plugin.arch import (ARCHITECTURES, AArch64, I386, X86_64, base, from_elf_machine,  # noqa: E402
                             get_architecture, host_architecture, machine_name)
from swk_plugin.arch.callsite import CallSite  # noqa: E402
from swk_plugin.elf.header import ElfHeader  # noqa: E402
from elftools.elf.elffile import ELFFile  # noqa: E402

class Target:
    """How to build and run a program for one architecture, and how its headers name the
    general registers' struct and fields."""

    def __init__(self, compiler, packages, flags=(), run=(), sysroot=None, gregs_struct="struct user_regs_struct",
                 include="#include <sys/user.h>", fields=None, objdump="objdump", calls=("call", "calll", "callq")):
        self.compiler, self.packages, self.flags, self.run, self.sysroot = compiler, packages, flags, run, sysroot
        self.gregs_struct, self.include, self.objdump = gregs_struct, include, objdump
        #: objdump's mnemonics of the calls of this instruction set
        self.calls = frozenset(calls)
        self.fields = fields or {}

    def field(self, name):
        """The C field of the table's slot ``name``."""
        for pattern, c_name in self.fields.items():
            m = re.fullmatch(pattern, name)
            if m:
                return m.expand(c_name)
        return name


def _cross(name, gregs_struct, fields, calls):
    """A target cross-built with Debian's gcc-12-<triplet> and run under qemu-user
    (tests/cross_lib.py's CrossTarget), its struct from the kernel's <asm/ptrace.h>."""
    ct = cross_lib.TARGETS[name]
    return Target(ct.gcc, ct.packages, run=tuple(ct.qemu_argv), sysroot=(ct.sysroot, ct.libc_package),
                  gregs_struct=gregs_struct, include="#include <asm/ptrace.h>", fields=fields,
                  objdump=ct.tool("objdump"), calls=calls)


#: The kernel's names of the general registers: AArch64's user_pt_regs names x0-x30 regs[0..30];
#: Power's pt_regs r0-r31 gpr[0..31], and pc, lr, cr, orig_r3 nip, link, ccr, orig_gpr3.
_POWER = {r"r(\d+)": r"gpr[\1]", "pc": "nip", "lr": "link", "cr": "ccr", "orig_r3": "orig_gpr3"}
TARGETS = {
    "x86_64": lambda: Target("gcc", {"gcc": "gcc", "objdump": "binutils"}),
    "i386": lambda: Target("gcc", {"gcc": "gcc-12-multilib", "objdump": "binutils"}, flags=T.m32_flags()),
    "aarch64": lambda: _cross("aarch64", "struct user_pt_regs", {r"x(\d+)": r"regs[\1]"}, ("bl", "blr")),
    # Power: bl, and calls through ctr or lr (blr alone is a return)
    "ppc64le": lambda: _cross("ppc64le", "struct pt_regs", _POWER, ("bl", "bctrl", "blrl")),
    "ppc64": lambda: _cross("ppc64", "struct pt_regs", _POWER, ("bl", "bctrl", "blrl")),
    # RISC-V: user_regs_struct names x8 s0 (GDB's, and swk's, fp); calls are jal/jalr linking ra
    "riscv64": lambda: _cross("riscv64", "struct user_regs_struct", {"fp": "s0"}, ("jal", "jalr")),
    # s390x: s390_regs holds the access registers as 4-byte fields, two to one of the table's
    # 8-byte slots (a0:a1 is the thread pointer): the struct seen with those pairs as 8-byte
    # words, its layout asserted to be s390_regs'; calls are brasl/bras/basr linking r14
    "s390x": lambda: Target(
        cross_lib.S390X.gcc, cross_lib.S390X.packages, run=tuple(cross_lib.S390X.qemu_argv),
        sysroot=(cross_lib.S390X.sysroot, cross_lib.S390X.libc_package), gregs_struct="swk_s390_regs",
        include="#include <asm/ptrace.h>\n"
                "typedef union { s390_regs k; struct { psw_t psw; unsigned long gprs[16];\n"
                "    unsigned long acr_pairs[8]; unsigned long orig_gpr2; }; } swk_s390_regs;\n"
                "_Static_assert(sizeof(swk_s390_regs) == sizeof(s390_regs), \"size\");\n"
                "_Static_assert(offsetof(swk_s390_regs, acr_pairs) == offsetof(s390_regs, acrs), \"acrs\");\n"
                "_Static_assert(offsetof(swk_s390_regs, orig_gpr2) == offsetof(s390_regs, orig_gpr2), \"orig\");",
        fields={"pswm": "psw.mask", "pc": "psw.addr", r"r(\d+)": r"gprs[\1]", "orig_r2": "orig_gpr2",
                **{f"acr{2 * i}_{2 * i + 1}": f"acr_pairs[{i}]" for i in range(8)}},
        objdump=cross_lib.S390X.tool("objdump"), calls=("brasl", "bras", "basr")),
}


#: Architectures whose tables have another oracle than a program run here, and where it is.
ORACLE_ELSEWHERE = {
    "x32": "tests/test_x32.py: the kernel here runs no x32 program (and Debian's x32 C library is not "
           "installed); the table is checked against elfutils' x32 cores' own notes",
}


def test_every_architecture_has_an_oracle():
    assert {cls.name for cls in ARCHITECTURES} <= set(TARGETS) | set(ORACLE_ELSEWHERE)


#: A value per slot, distinct in every byte position (slot i holds BASE + i, cut to the slot).
BASE = 0x1122334455667700


def _program(t, arch):
    rs = arch.regsets
    fields = [t.field(n) for n in rs.user_regs]
    lines = [f'    printf("off {n} %zu\\n", offsetof({t.gregs_struct}, {f}));' for n, f in zip(rs.user_regs, fields)]
    lines += [f"    r.{f} = (__typeof__(r.{f}))({BASE:#x}ULL + {i});" for i, f in enumerate(fields)]
    size = lambda s, m: f"sizeof((({s} *)0)->{m})"        # noqa: E731
    facts = {
        "gregs_struct": f"sizeof({t.gregs_struct})", "gregset": "sizeof(elf_gregset_t)",
        "pr_reg": "offsetof(struct elf_prstatus, pr_reg)", "prstatus": "sizeof(struct elf_prstatus)",
        "pr_cursig": "offsetof(struct elf_prstatus, pr_cursig)",
        "pr_sigpend": "offsetof(struct elf_prstatus, pr_sigpend)", "pr_pid": "offsetof(struct elf_prstatus, pr_pid)",
        "long": size("struct elf_prstatus", "pr_sigpend"),
        "uid": "offsetof(struct elf_prpsinfo, pr_uid)", "uid_size": size("struct elf_prpsinfo", "pr_uid"),
        "pid": "offsetof(struct elf_prpsinfo, pr_pid)", "fname": "offsetof(struct elf_prpsinfo, pr_fname)",
        "psargs": "offsetof(struct elf_prpsinfo, pr_psargs)", "size": "sizeof(struct elf_prpsinfo)",
    }
    lines += [f'    printf("{k} %zu\\n", (size_t)({v}));' for k, v in facts.items()]
    return "\n".join([
        "#include <stddef.h>", "#include <stdio.h>", "#include <string.h>", "#include <sys/procfs.h>", t.include,
        "int main(void) {", f"    {t.gregs_struct} r;", "    memset(&r, 0, sizeof r);", *lines,
        '    printf("bytes ");',
        "    for (size_t i = 0; i < sizeof r; i++) printf(\"%02x\", ((unsigned char *)&r)[i]);",
        '    printf("\\n");', "    return 0;", "}", ""])


@pytest.fixture(scope="module", params=sorted(cls.name for cls in ARCHITECTURES if cls.name not in ORACLE_ELSEWHERE))
def oracle(request, tmp_path_factory):
    """(target, architecture, {fact: number}, {slot: offset}, the struct's bytes, the program)."""
    t, arch = TARGETS[request.param](), get_architecture(request.param)
    for tool, package in t.packages.items():
        S.need_tool(tool, package)
    if t.sysroot:
        S.need_path(f"{t.sysroot[0]}/lib/libc.so.6", t.sysroot[1], f"the {arch.name} C library")
    d = tmp_path_factory.mktemp(f"kit-{arch.name}")
    src, exe = d / "layout.c", d / "layout"
    src.write_text(_program(t, arch))
    build = subprocess.run([t.compiler, *t.flags, "-O0", "-g", "-o", str(exe), str(src)],
                           capture_output=True, text=True, timeout=120)
    assert build.returncode == 0, build.stderr
    run = subprocess.run([*t.run, str(exe)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    facts, offsets, raw = {}, {}, None
    for line in run.stdout.splitlines():
        key, value = line.split(" ", 1) if not line.startswith("off ") else line[4:].split(" ", 1)
        if line.startswith("off "):
            offsets[key] = int(value)
        elif key == "bytes":
            raw = bytes.fromhex(value)
        else:
            facts[key] = int(value)
    return t, arch, facts, offsets, raw, exe


def test_general_registers_in_order(oracle):
    """Every slot the table names sits where the kernel's struct has that field, one slot
    after another; the set is elf_gregset_t's size."""
    _t, arch, facts, offsets, _raw, _exe = oracle
    rs = arch.regsets
    assert [offsets[n] for n in rs.user_regs] == [rs.slot * i for i in range(len(rs.user_regs))]
    assert facts["gregs_struct"] == rs.slot * len(rs.user_regs)
    assert facts["gregset"] == rs.user_regs_size


def test_the_one_reader_unpacks_the_struct(oracle):
    """The compiler's bytes of a struct with a distinct value in each field, unpacked by
    arch/regsets.py's reader: each value under the field's DWARF number (its name where it
    has none).  The byte order is the target's."""
    _t, arch, _facts, _offsets, raw, _exe = oracle
    rs = arch.regsets
    assert len(raw) == rs.slot * len(rs.user_regs)
    # a register narrower than its slot (Power's cr) keeps its low bytes, as the table says
    want = {arch.dwarf_numbers.get(n, n): (BASE + i) & ((1 << 8 * rs.widths.get(n, rs.slot)) - 1)
            for i, n in enumerate(rs.user_regs)}
    assert rs.unpack_user_regs(raw) == want
    assert rs.byteorder == arch.byteorder
    for regno in (arch.sp, arch.pc):           # what every walk starts from
        assert regno in want


def test_elf_prstatus(oracle):
    """pr_reg's offset and the struct's size in the table; the fields linux/coredump.py
    reads itself where it reads them (pr_cursig at 12, then pr_sigpend and two longs later
    pr_pid), with the table's long."""
    _t, arch, facts, _offsets, _raw, _exe = oracle
    rs = arch.regsets
    assert (facts["pr_reg"], facts["prstatus"], facts["long"]) == \
           (rs.prstatus_reg_offset, rs.prstatus_size, rs.long)
    assert (facts["pr_cursig"], facts["pr_sigpend"], facts["pr_pid"]) == (12, 16, 16 + 2 * rs.long)


def test_elf_prpsinfo(oracle):
    _t, arch, facts, _offsets, _raw, _exe = oracle
    want = {k: facts[k] for k in ("uid", "uid_size", "pid", "fname", "psargs", "size")}
    assert arch.regsets.prpsinfo == want


def test_the_registry_knows_the_program(oracle):
    """from_elf_machine of the program's own ELF header (machine, class, byte order) is the
    architecture; the same machine of another class or byte order is not."""
    _t, arch, _facts, _offsets, _raw, exe = oracle
    hdr = ElfHeader(exe.read_bytes()[:64], str(exe))
    assert from_elf_machine(hdr["e_machine"], hdr.elfclass, hdr.byteorder) == arch
    assert hdr.elfclass == 8 * arch.ptr_size and hdr.byteorder == arch.byteorder
    other = {"little": "big", "big": "little"}[hdr.byteorder]
    try:
        twin = from_elf_machine(hdr["e_machine"], hdr.elfclass, other)
    except ValueError as exc:
        assert machine_name(hdr["e_machine"]) in str(exc)
    else:                               # one machine, two byte orders (Power-64): the other one
        assert twin != arch and twin.byteorder == other and twin.elf_machine == arch.elf_machine


def _objdump_calls(t, exe, func="main"):
    """Addresses of the call instructions objdump shows in ``func`` (BFD names an ELFv1
    function's code ``.func``: ``func`` is its descriptor)."""
    with open(exe, "rb") as fh:
        if ELFFile(fh).get_section_by_name(".opd") is not None:
            func = "." + func
    out = subprocess.run([t.objdump, "-d", "--no-show-raw-insn", f"--disassemble={func}", str(exe)],
                         capture_output=True, text=True, timeout=60).stdout
    calls = []
    for line in out.splitlines():
        m = re.match(r"\s*([0-9a-f]+):\s+(\S+)", line)
        if m and m.group(2) in t.calls:
            calls.append(int(m.group(1), 16))
    return calls


def test_calls_kit_finds_objdumps_calls(oracle):
    """Every call objdump sees in main is a return site of the architecture's calls kit, and
    calls_ending_at finds it there as arch/callsite.py's CallSite."""
    t, arch, _facts, _offsets, _raw, exe = oracle
    start, code = _function(exe, "main")
    want = _objdump_calls(t, exe)
    assert want, "objdump shows no call in main"
    sites, _end = arch.calls.return_sites(code, start)
    assert sorted(sites.values()) == want
    for ra, call_at in sites.items():
        before = code[max(0, ra - start - arch.calls.MAX_CALL_LEN):ra - start]
        found = [c for c in arch.calls.calls_ending_at(before, ra) if c.addr == call_at]
        assert found and all(type(c) is CallSite and c.end == ra for c in found), (hex(ra), found)


def _function(exe, name):
    """(address, code) of a function, by pyelftools' symbol table and .text (an ELFv1 symbol's
    value is its descriptor in .opd, whose first word is the code's address)."""
    with open(exe, "rb") as fh:
        elf = ELFFile(fh)
        text, opd = elf.get_section_by_name(".text"), elf.get_section_by_name(".opd")
        for sym in elf.get_section_by_name(".symtab").iter_symbols():
            if sym.name == name:
                start = sym["st_value"]
                if opd is not None and opd["sh_addr"] <= start < opd["sh_addr"] + opd["sh_size"]:
                    at = start - opd["sh_addr"]
                    start = int.from_bytes(opd.data()[at:at + 8], "little" if elf.little_endian else "big")
                at = start - text["sh_addr"]
                return start, text.data()[at:at + sym["st_size"]]
    raise AssertionError(f"{exe}: no symbol {name}")


# --- the interface itself ---------------------------------------------------------------------

def test_hooks_an_architecture_does_not_state_read_as_their_defaults():
    """x86's prologue kits state no epilogue (AArch64's does): the interface's defaults; and
    register sets without FP notes or a thread pointer answer {} and None."""
    for arch in (X86_64(), I386()):
        assert arch.prologue.EPILOGUE_READ == base.PROLOGUE.hooks["EPILOGUE_READ"]
        assert arch.prologue.epilogue_at is None
    assert AArch64().prologue.epilogue_at is AArch64.prologue.module.epilogue_at
    assert X86_64().regsets.thread_pointer({}, {}) is None
    assert X86_64().regsets.unpack_fp_notes({}) == {}


def test_a_kit_without_a_required_hook_fails_at_import():
    """An architecture whose calls module lacks plt_slot is refused when its class is made,
    naming the hook, not when a walk first needs it."""
    real = X86_64.calls.module
    partial = types.ModuleType("partial_calls")
    partial.__dict__.update({k: v for k, v in vars(real).items() if k != "plt_slot"})
    with pytest.raises(TypeError, match="plt_slot"):
        type("Partial", (X86_64,), {"calls": partial})
    with pytest.raises(TypeError, match="calls"):
        type("NoCalls", (base.Architecture,), {"name": "nocalls", "regsets": X86_64.regsets})


def test_host_architecture_is_the_running_interpreters():
    """The host's Architecture is the one of this Python's own executable."""
    hdr = ElfHeader(Path(sys.executable).resolve().read_bytes()[:64], sys.executable)
    assert host_architecture() == from_elf_machine(hdr["e_machine"], hdr.elfclass, hdr.byteorder)


def test_an_architecture_swk_does_not_walk_one_line_in_gdb(tmp_path):
    """32-bit PowerPC (not one of issue 26's: swk walks 64-bit Power only), a program run under
    qemu-ppc's stub in gdb-multiarch: swk-bt says in one line that it does not walk it, naming
    those it does, and GDB's own bt runs with swk's unwinder installed without a word from it."""
    ppc64 = cross_lib.PPC64
    cross_lib.need_machine(ppc64)
    S.need_tool("qemu-ppc", "qemu-user")
    # the big-endian Power compiler builds 32-bit code too (-m32); static, no C library
    ppc32 = cross_lib.CrossTarget("ppc", ppc64.triplet, ppc64.debian, "ppc")
    src = tmp_path / "spin.S"
    src.write_text(".globl _start\n_start:\n  nop\n  b _start\n")
    exe = tmp_path / "spin"
    subprocess.run([ppc64.gcc, "-m32", "-nostdlib", "-static", str(src), "-o", str(exe)], check=True,
                   capture_output=True)
    with cross_lib.Qemu(ppc32, exe) as q:
        out = T.run_cmd([cross_lib.GDB, "-nx", "-batch", "-q", "-ex", f"source {T.GDB_INIT}", "-ex", f"file {exe}",
                         "-ex", f"target remote :{q.port}", "-ex", "echo SWK-BEGIN\\n", "-ex", "swk-bt",
                         "-ex", "echo SWK-MID\\n", "-ex", "bt", "-ex", "echo SWK-END\\n", "-ex", "kill"],
                        timeout=120).stdout
    first = out.split("SWK-BEGIN\n", 1)[1].split("SWK-MID\n", 1)[0].strip().splitlines()
    names = ", ".join(sorted(cls.name for cls in ARCHITECTURES))
    assert len(first) == 1 and "unsupported architecture 'powerpc:common'" in first[0] and names in first[0], out
    assert "Traceback" not in out
    bt = out.split("SWK-MID\n", 1)[1].split("SWK-END", 1)[0]
    assert "#0" in bt and "_start" in bt and "swk" not in bt, bt
