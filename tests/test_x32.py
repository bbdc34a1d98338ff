"""x32 (issue 26, item 5): x86-64's instructions with 32-bit pointers, in ELF32 cores.  The kernel
here runs no x32 process, so the oracle is elfutils' own x32 cores (made on a real machine,
fetched at set-up): GDB's `thread apply all bt` on backtrace.x32.core, line for line, against
`swk bt --core`'s text; eu-stack's walks of both x32 cores are tests/test_elfutils_cores.py's.
The register-set table against the core's own notes: the compat elf_prstatus and elf_prpsinfo
around x86-64's user_regs_struct."""
from __future__ import annotations

import re
import subprocess

import pytest

import elfutils_cores as EC
import swk_suite as S
import swk_testlib as T

S.need_tool("gdb", "gdb")
if EC.tests_dir() is None:
    S.missing(f"elfutils' source package not unpacked under {EC.SRC}",
              "scripts/setup.sh fetches it (apt-get source elfutils, a private sources list: network at set-up)")


def _core(name: str) -> EC.ElfutilsCore:
    for c in EC.cores():
        if c.id == name:
            return c
    pytest.fail(f"elfutils' {name} not found among {[c.id for c in EC.cores()]}", pytrace=False)


def _blocks(text: str) -> dict[str, list[str]]:
    """{"Thread N (LWP T):": its frame lines} of a `thread apply all bt`-shaped text."""
    out, cur = {}, None
    for line in text.splitlines():
        if re.match(r"^Thread \d+ \(LWP \d+\):$", line):
            cur = out.setdefault(line, [])
        elif cur is not None and line.startswith("#"):
            cur.append(line)
    return out


def test_swk_prints_gdbs_lines_on_an_x32_core():
    core = _core("backtrace.x32")
    gdb = T.run_cmd(["gdb", "-batch", "-nx", "-iex", "set backtrace past-main on", "-ex", f"file {core.exe}",
                     "-ex", f"core {core.core}", "-ex", "thread apply all bt"], timeout=120, cwd=EC.OUT).stdout
    swk = T.run_swk_cli(["bt", "--core", str(core.core), "--exe", str(core.exe), "--all"]).stdout
    want, got = _blocks(gdb), _blocks(swk)
    assert want and len(want) == 2, gdb
    assert got == want, f"gdb:\n{gdb}\n--- swk ---\n{swk}"


def test_register_sets_match_the_core_notes():
    from swk_plugin.arch import from_elf_machine
    core = _core("backtrace.x32")
    arch = from_elf_machine(62, 32, "little")
    assert arch.name == "x32" and arch.ptr_size == 4
    notes = subprocess.run(["readelf", "-n", str(core.core)], check=True, capture_output=True, text=True).stdout
    sizes = {m.group(2): int(m.group(1), 16) for m in re.finditer(r"(0x[0-9a-f]+)\s+(NT_PRSTATUS|NT_PRPSINFO)", notes)}
    assert sizes == {"NT_PRSTATUS": arch.regsets.prstatus_size, "NT_PRPSINFO": arch.regsets.prpsinfo["size"]}
