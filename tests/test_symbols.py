"""Symbols, separate debug files, demangling and file:line, checked against real gdb.

Everything is built into pytest's tmp dirs with gcc/g++; gdb (batch mode) is the
oracle for ``info symbol``, ``info line`` and the frame names ``bt`` prints.
"""
import json
import os
import re
import shutil
import subprocess
import zlib
from pathlib import Path

import pytest

import swk_suite as S

from swk_plugin.elf.module import ElfModule
from swk_plugin.elf.symbols import Symbol, SymbolTable
from swk_plugin.dwarf.lines import LineTable
from swk_plugin.elf.debugfile import find_debug_file, attach_debug_file, file_crc32
from swk_plugin.elf.demangle import (demangle, demangle_cxx, strip_params, gdb_can_parse,
                                     drop_return_type, demangle_many)

GDB = os.environ.get("SWK_GDB", "gdb")
need_gdb = S.mark_needs(GDB)
LIBC = "/lib/x86_64-linux-gnu/libc.so.6"

CXX_SRC = r"""
#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <iostream>
#include <vector>
#include <map>
#include <string>
#include <functional>
#include <stdexcept>
#define NI __attribute__((noinline))
namespace outer { namespace inner {
template <typename T, int N> struct Box {
  T v[N];
  Box() { for (int i = 0; i < N; i++) v[i] = T(i); }
  ~Box() { if (v[0] == T(99)) puts("x"); }
  NI T sum() const { T s{}; for (int i = 0; i < N; i++) s += v[i]; return s; }
  static NI int count() { return N; }
  NI Box& operator+=(const Box& o) { for (int i = 0; i < N; i++) v[i] += o.v[i]; return *this; }
  NI bool operator()(int k) const { return v[k % N] > T(1); }
  template <typename F> NI T apply(F f) const { return f(v[0]); }
};
struct Shape { virtual ~Shape() = default; virtual double area() const = 0; };
struct Sq : Shape { double s; explicit Sq(double x) : s(x) {} NI double area() const override { return s * s; } };
struct Pt { int x, y; };
NI std::ostream& operator<<(std::ostream& os, const Pt& p) { return os << p.x << "," << p.y; }
} }
extern "C" NI int c_linkage(int x) { return x * 3; }
namespace { struct Hidden { NI int go(int x) { return x + 5; } }; NI int hidden_fn(int x) { return Hidden().go(x); } }
struct Outer { struct Nested { NI static int f(int x) { return x - 1; } }; NI operator bool() const { return true; } };
NI int throws(int x) { if (x > 100) throw std::runtime_error("big"); return x; }
NI std::string strfn(const std::string& s) { return s + "!"; }
NI int cold_path(int x) { if (__builtin_expect(x == 12345, 0)) { fprintf(stderr, "bad %d\n", x); abort(); } return x; }
NI int local_user(int x) { struct L { NI int g(int y) { asm volatile(""); return y * 2; } }; return L().g(x); }
int main(int argc, char**) {
  outer::inner::Box<int, 3> b, c; b += c;
  outer::inner::Box<double, 2> d;
  outer::inner::Sq sq(argc); outer::inner::Shape* sh = &sq;
  std::map<int, int> m; m[argc] = 2;
  auto lam = [&](int y) { return y + m[argc]; };
  std::function<int(int)> fn = lam;
  outer::inner::Pt p{1, 2};
  std::cout << p << "\n";
  int r = b.sum() + (int)d.sum() + b.count() + (int)sh->area() + c_linkage(argc) + hidden_fn(argc)
        + Outer::Nested::f(argc) + (Outer() ? 1 : 0) + b(argc) + b.apply([](int q) { return q * 2; })
        + fn(argc) + throws(argc) + cold_path(argc) + local_user(argc);
  r += (int)strfn("a").size();
  std::vector<int> v{1, 2, 3};
  return r + (int)v.size() > 100000;
}
"""

LAMBDA_SRC = r"""
#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>
template <typename... T> int count_args(T...) { return sizeof...(T); }
int main(int argc, char**) {
  std::vector<long> v{3, 1, 2};
  std::sort(v.begin(), v.end(), [](long a, long b) { return a > b; });
  std::map<std::string, std::tuple<>> m; m["x"];
  std::function<int(int)> fn = [argc](int y) { return y + argc; };
  std::thread t([&] { v.push_back(fn(1)); });
  t.join();
  return (int)v.size() + count_args() + count_args(1, 2L) > 100;
}
"""

C_SRC = r"""
#include <stdio.h>
#include <stdlib.h>
#include "helper.h"
struct S { int a[40]; };
static __attribute__((noinline)) int isra_f(struct S *s, int k) { return s->a[3] * k; }
static __attribute__((noinline)) int cp_f(int x, int y) { return x * y + 3; }
__attribute__((noinline)) int f(int x) { if (__builtin_expect(x == 77, 0)) { printf("x %d\n", x); abort(); } return x + 1; }
int main(int c, char **v) {
  struct S s = {0}; s.a[3] = c;
  return f(c) + isra_f(&s, c) + cp_f(c, 5) + cp_f(c + 1, 5) + helper_add(c, 2);
}
"""

HELPER_H = r"""
static inline __attribute__((always_inline)) int helper_add(int a, int b)
{
  int r = a * 2;
  r += b;
  return r;
}
"""

ASM_SRC = r"""
    .text
    .globl sized_fn
    .type sized_fn, @function
sized_fn:
    nop; nop; nop; ret
    .size sized_fn, 4
    nop; nop; nop; nop          # gap after a sized symbol
    .globl label_a
label_a:                        # NOTYPE, size 0: runs to the next symbol
    nop; nop; nop; nop
    .globl label_b
label_b:
    nop; nop; nop; nop
    .type weird.cold, @function
weird.cold:
    nop; nop
    .size weird.cold, 2
    .globl _start
    .type _start, @function
_start:
    xor %edi, %edi
    mov $60, %eax
    syscall
    .size _start, . - _start
    .globl tail_label
tail_label:                     # size 0, last in .text: stops at the section end
    nop; nop; nop; nop
    .section .text.other, "ax", @progbits
other_fn:
    nop; nop; ret
"""


def run(argv, cwd=None, check=True, timeout=300):
    r = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise RuntimeError(f"{argv} failed: {r.stderr[-2000:]}")
    return r


def gdb_batch(prog, commands, extra=(), timeout=300):
    """Run gdb -batch on prog with many commands (through a command file); stdout lines."""
    cmdfile = Path(str(prog) + ".cmds.gdb")
    cmdfile.write_text("\n".join(commands) + "\n")
    argv = [GDB, "-batch", "-nx", *extra, "-x", str(cmdfile), str(prog)]
    out = run(argv, check=False, timeout=timeout).stdout
    return [ln for ln in out.splitlines() if ln.strip()]


def gdb_info_symbol(prog, addrs, extra=()):
    out = gdb_batch(prog, [f"info symbol 0x{a:x}" for a in addrs], extra)
    assert len(out) == len(addrs), out[:5]
    res = []
    for line in out:
        if line.startswith("No symbol matches"):
            res.append(None)
        else:
            res.append(line.split(" in section ")[0])
    return res


_LINE_RE = re.compile(r'^Line (\d+) of "(.*)"')


def gdb_info_line(prog, addrs, extra=()):
    out = gdb_batch(prog, [f"info line *0x{a:x}" for a in addrs], extra)
    assert len(out) == len(addrs), out[:5]
    res = []
    for line in out:
        m = _LINE_RE.match(line)
        res.append((m.group(2), int(m.group(1))) if m else None)
    return res


def mine_info_symbol(st, addr):
    hit = st.lookup(addr)
    if hit is None:
        return None
    sym, off = hit
    return sym.demangled + (f" + {off}" if off else "")


def sample(seq, n):
    seq = list(seq)
    if len(seq) <= n:
        return seq
    step = len(seq) / n
    return [seq[int(i * step)] for i in range(n)]


def probe_addresses(st, section=".text"):
    """Start, middle, end-1, end and just-past-end of every function-like symbol."""
    addrs = set()
    for s in st:
        if s.kind in ("func", "ifunc", "notype") and s.section == section:
            addrs.update({s.value, s.value + max(s.size, 1) // 2, s.value + max(s.size, 1) - 1,
                          s.value + s.size, s.value + s.size + 3})
    return sorted(addrs)


# --- builds -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    S.need_tools("gcc", "g++", "objcopy", "strip")
    d = tmp_path_factory.mktemp("symbuild")
    (d / "prog.cpp").write_text(CXX_SRC)
    (d / "prog.c").write_text(C_SRC)
    (d / "helper.h").write_text(HELPER_H)
    (d / "labels.s").write_text(ASM_SRC)
    out = {}
    for name, flags in {"cxx_O0": ["-O0"], "cxx_O2": ["-O2"], "cxx_O2_d4": ["-O2", "-gdwarf-4"],
                        "cxx_O0_d4": ["-O0", "-gdwarf-4"]}.items():
        run(["g++", "-g", *flags, "-o", name, "prog.cpp"], cwd=d)
        out[name] = d / name
    for name, flags in {"c_O2": ["-O2"], "c_O0_d4": ["-O0", "-gdwarf-4"], "c_O2_d5": ["-O2", "-gdwarf-5"]}.items():
        run(["gcc", "-g", *flags, "-o", name, "prog.c"], cwd=d)
        out[name] = d / name
    (d / "lambdas.cpp").write_text(LAMBDA_SRC)
    run(["g++", "-g", "-O0", "-pthread", "-o", "lambdas", "lambdas.cpp"], cwd=d)
    out["lambdas"] = d / "lambdas"
    run(["g++", "-O2", "-o", "cxx_nodebug", "prog.cpp"], cwd=d)
    out["cxx_nodebug"] = d / "cxx_nodebug"
    run(["gcc", "-nostdlib", "-static", "-g", "-o", "labels", "labels.s"], cwd=d)
    out["labels"] = d / "labels"
    out["dir"] = d
    return out


@pytest.fixture(scope="module")
def stripped(builds, tmp_path_factory):
    """prog (stripped) + prog.debug via --only-keep-debug / --add-gnu-debuglink, placed
    variously; also a build-id-less pair for the CRC check."""
    d = tmp_path_factory.mktemp("stripped")
    src = builds["dir"] / "prog.cpp"
    shutil.copy(src, d / "prog.cpp")
    run(["g++", "-g", "-O2", "-o", "full", "prog.cpp"], cwd=d)
    run(["objcopy", "--only-keep-debug", "full", "prog.debug"], cwd=d)
    shutil.copy(d / "full", d / "prog")
    run(["strip", "--strip-debug", "--strip-unneeded", "prog"], cwd=d)
    run(["objcopy", "--add-gnu-debuglink=prog.debug", "prog"], cwd=d)
    # no build-id: only the CRC can tie the files together
    run(["g++", "-g", "-O2", "-Wl,--build-id=none", "-o", "nobid_full", "prog.cpp"], cwd=d)
    run(["objcopy", "--only-keep-debug", "nobid_full", "nobid.debug"], cwd=d)
    shutil.copy(d / "nobid_full", d / "nobid")
    run(["strip", "-g", "nobid"], cwd=d)
    run(["objcopy", "--add-gnu-debuglink=nobid.debug", "nobid"], cwd=d)
    return d


# --- demangling ----------------------------------------------------------------------------

def test_demangle_cxx_names():
    assert demangle("_ZN2ns3FooIiE3barEi") == "ns::Foo<int>::bar(int)"
    assert demangle("_ZNK2ns3FooIiE3barEi.isra.0") == "ns::Foo<int>::bar(int) const [clone .isra.0]"
    assert demangle("_Z3fooi.cold") == "foo(int) [clone .cold]"
    assert demangle("_Z3fooi.part.0.cold") == "foo(int) [clone .part.0] [clone .cold]"
    # bfd_demangle, which GDB demangles with: a version suffix comes back after the name
    assert demangle("_ZNSolsEi@@GLIBCXX_3.4") == \
        "std::basic_ostream<char, std::char_traits<char> >::operator<<(int)@@GLIBCXX_3.4"
    # gdb prints the standard substitutions in full (c++filt's "verbose" form)
    assert demangle("_ZNKSs4sizeEv") == \
        "std::basic_string<char, std::char_traits<char>, std::allocator<char> >::size() const"
    assert demangle("_ZNKSt4hashISsEclESs").startswith(
        "std::hash<std::basic_string<char, std::char_traits<char>, std::allocator<char> > >::operator()")
    assert demangle("_ZN12_GLOBAL__N_16anon_fEi") == "(anonymous namespace)::anon_f(int)"
    assert demangle("_Znwm@plt") == "operator new(unsigned long)@plt"
    assert demangle("main") == "main"
    assert demangle("__libc_start_main") == "__libc_start_main"
    assert demangle("_Z3badX") == "_Z3badX"            # not valid: unchanged
    assert demangle("") == ""
    assert demangle_cxx("_Z3fooi@GLIBC_2.2.5") == "foo(int)"
    assert demangle_many(["_Z3fooi", "bar"]) == ["foo(int)", "bar"]


def test_demangle_plain_names_like_gdb():
    # gdb lets its Ada decoder rename plain C symbols it can decode
    assert demangle("main.cold") == "main[cold]"
    assert demangle("cp_f.constprop.0") == "cp_f.constprop"
    assert demangle("foo.part.0") == "foo.part"
    assert demangle("foo__bar") == "foo.bar"
    assert demangle("Foo.cold") == "Foo.cold"          # uppercase: not Ada
    assert demangle("__foo.cold") == "__foo.cold"      # leading '_': not Ada
    assert demangle("abc123") == "abc123"


def test_strip_params():
    cases = {
        "ns::Foo<int>::bar(int) const": "ns::Foo<int>::bar",
        "operator()(int)": "operator()",
        "operator<<(std::ostream&, X const&)": "operator<<",
        "(anonymous namespace)::f(int)": "(anonymous namespace)::f",
        "int ns::Foo<int>::conv<int>(int (*)(int)) const": "ns::Foo<int>::conv<int>",
        "Functor::operator()(int) const [clone .isra.0]": "Functor::operator()",
        "ns::Pt::operator<(ns::Pt const&) const": "ns::Pt::operator<",
        "std::vector<int, std::allocator<int> >::operator[](unsigned long)":
            "std::vector<int, std::allocator<int> >::operator[]",
        "Foo::operator bool() const": "Foo::operator bool",
        "operator delete[](void*)": "operator delete[]",
        "X::operator->() const": "X::operator->",
        "bool std::operator< <char>(std::string const&, std::string const&)": "std::operator< <char>",
        "Holder<int (*)(int)>::call(int)": "Holder<int (*)(int)>::call",
        "Ch<(char)97>::get()": "Ch<(char)97>::get",
        "int (*get_fp())(int)": "get_fp",
        "X::~X()": "X::~X",
        "f(int, void (*)(int))": "f",
        "foo": "foo",
        "ns::bar": "ns::bar",
        "Functor::operator()": "Functor::operator()",
        "main[cold]": "main[cold]",
        # names gdb's C++ parser rejects are printed whole by bt
        "std::function<int (int)>::operator()(int) const": "std::function<int (int)>::operator()(int) const",
        "takes_tuple(std::tuple<>)": "takes_tuple(std::tuple<>)",
        "inl(int)::{lambda(int)#1}::operator()(int) const": "inl(int)::{lambda(int)#1}::operator()(int) const",
    }
    for name, want in cases.items():
        assert strip_params(name) == want, name
    assert not gdb_can_parse("Holder<main(int, char**)::<lambda(int)> >::call(int)")
    assert gdb_can_parse("W<(anonymous namespace)::AnonT>::get()")
    assert drop_return_type("int usesfn<int (double)>(int (*)(double))") == "usesfn<int (double)>(int (*)(double))"


@need_gdb
def test_demangle_matches_gdb_msymbols():
    """Every minimal symbol gdb lists for libstdc++ and libc demangles the same way here."""
    pat = re.compile(r"^\[\s*\d+\] (\S) (0x[0-9a-f]+) (\S+)(?: section (\S+))?(.*)$")
    checked = 0
    for lib, pkg in (("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "libstdc++6"), (LIBC, "libc6")):
        S.need_path(lib, pkg)
        out = gdb_batch(lib, ["maint print msymbols"])
        for line in out:
            m = pat.match(line)
            if not m:
                continue
            _t, _a, name, _sec, rest = m.groups()
            if "@" in name and not name.endswith("@plt"):
                continue
            parts = rest.split("  ")[1:] if rest.startswith("  ") else []
            d = demangle(name)
            if d != name:
                assert parts and parts[0] == d, (name, d, parts)
            elif parts:
                assert not any(c in parts[0] for c in "([:"), (name, parts)
            checked += 1
    assert checked > 1000


# --- symbol lookup ----------------------------------------------------------------------------

@need_gdb
@pytest.mark.parametrize("which", ["cxx_O0", "cxx_O2", "cxx_nodebug", "c_O2", "labels"])
def test_lookup_matches_gdb_info_symbol(builds, which):
    prog = builds[which]
    st = SymbolTable.from_module(ElfModule(str(prog)))
    addrs = probe_addresses(st)
    # plus the PLT, where gdb names entries NAME@plt
    m = ElfModule(str(prog))
    for secname in (".plt", ".plt.sec", ".plt.got"):
        sec = m.section(secname)
        if sec is not None:
            addrs += list(range(sec.addr, sec.addr + sec.size, 5))
    addrs = sorted(set(addrs))
    want = gdb_info_symbol(prog, addrs)
    bad = [(hex(a), mine_info_symbol(st, a), g) for a, g in zip(addrs, want) if mine_info_symbol(st, a) != g]
    assert not bad, bad[:10]


_VERSIONED_SRC = r"""
#include <stdexcept>
#include <typeinfo>
const std::type_info *p = &typeid(std::runtime_error);
int main() { try { throw std::runtime_error("x"); } catch (std::exception &e) { return p->name()[0]; } }
"""


@need_gdb
def test_versioned_symbols_named_as_gdb(tmp_path):
    """Symbols written ``name@VER`` / ``name@@VER`` in a .symtab (a copy-relocated typeinfo of
    libstdc++): at their addresses GDB's `info symbol` names them as written, demangled with
    the version after the name; swk's table the same, and by name the version-less twin."""
    (tmp_path / "rt.cpp").write_text(_VERSIONED_SRC)
    run(["g++", "-O0", "-g", "-o", "rt", "rt.cpp"], cwd=tmp_path)
    prog = tmp_path / "rt"
    syms = run(["readelf", "-sW", str(prog)]).stdout
    addrs = sorted({int(m.group(1), 16) for m in re.finditer(r"^\s*\d+: ([0-9a-f]+)\s+\d+ \w+\s+\w+\s+\w+\s+\d+ "
                                                            r"\S+@\S+$", syms, re.M)})
    assert addrs, syms[-2000:]
    st = SymbolTable.from_module(ElfModule(str(prog)))
    want = gdb_info_symbol(prog, addrs)
    assert any(w and "@" in w for w in want), want
    assert [mine_info_symbol(st, a) for a in addrs] == want
    for a, w in zip(addrs, want):
        written = st.lookup(a)[0].name
        assert st.by_name(written.split("@", 1)[0]), written


def _build_id_debug_file(path: str) -> str | None:
    """The separate debug file of ``path`` by its build-id, found with readelf (not swk)."""
    notes = run(["readelf", "-n", path]).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", notes)
    if not m:
        return None
    dbg = f"/usr/lib/debug/.build-id/{m.group(1)[:2]}/{m.group(1)[2:]}.debug"
    return dbg if os.path.exists(dbg) else None


def nm_functions(*paths: str, dynamic: bool = False) -> dict[int, tuple[int, set[str]]]:
    """{address: (size, names)} of the sized code symbols (T, t, W, w, i) binutils' nm lists."""
    out: dict[int, tuple[int, set[str]]] = {}
    for p in paths:
        text = run(["nm", *(["-D"] if dynamic else []), "-S", "--defined-only", p]).stdout
        for line in text.splitlines():
            parts = line.split()
            if len(parts) != 4 or parts[2] not in "TtWwi":
                continue
            # a name as written (``name@@VER`` in a .symtab, kept by GDB and swk) or versionless
            addr, size, name = int(parts[0], 16), int(parts[1], 16), parts[3]
            if size == 0:
                continue
            old = out.get(addr)
            out[addr] = (max(size, old[0]) if old else size,
                         (old[1] if old else set()) | {name, name.split("@", 1)[0]})
    return out


@pytest.mark.parametrize("which", ["cxx_O0", "cxx_O2", "cxx_nodebug", "c_O2", "labels", "libc"])
def test_lookup_matches_nm(builds, which):
    """Every sized function symbol binutils' nm lists (libc: its .dynsym and its debug file's
    .symtab, found by build-id with readelf) is where swk's table says, under one of the
    names nm gives that address, at its start and at its last byte; and every sized
    function of swk's table (PLT entries aside: nm has no names for them) is one of nm's."""
    S.need_tools("nm", "readelf")
    if which == "libc":
        path = S.need_path(LIBC, "libc6")
        dbg = _build_id_debug_file(LIBC)
        if dbg is None:
            S.missing("no separate debug file for libc", S.install_hint("libc6-dbg"))
        want = nm_functions(path, dynamic=True)
        for addr, (size, names) in nm_functions(dbg).items():
            old = want.get(addr)
            want[addr] = (max(size, old[0]) if old else size, (old[1] if old else set()) | names)
    else:
        path = str(builds[which])
        want = nm_functions(path)
    st = SymbolTable.from_module(ElfModule(path))
    starts = sorted(want)
    bad = []
    for i, addr in enumerate(starts):
        size, names = want[addr]
        hit = st.lookup(addr)
        if hit is None or hit[1] != 0 or hit[0].name not in names:
            bad.append((hex(addr), sorted(names)[:3], hit and (hit[0].name, hit[1])))
            continue
        end = addr + size - 1
        nested = i + 1 < len(starts) and starts[i + 1] <= end
        last = st.lookup(end)
        if not nested and (last is None or last[0].value != addr):
            bad.append((hex(end), "last byte of", sorted(names)[:3], last and (last[0].name, last[1])))
    assert len(starts) >= (1000 if which == "libc" else 3), len(starts)
    for s in st:
        if s.kind in ("func", "ifunc") and s.size and not s.name.endswith("@plt"):
            if s.value not in want or s.name not in want[s.value][1]:
                bad.append(("swk only", hex(s.value), s.name))
    assert not bad, f"{len(bad)} differences from nm: {bad[:10]}"


def test_lookup_semantics(builds):
    m = ElfModule(str(builds["labels"]))
    st = SymbolTable.from_module(m)
    sym = {s.name: s for s in st}
    sized = sym["sized_fn"]
    assert sized.kind == "func" and sized.size == 4 and sized.binding == "global"
    assert st.lookup(sized.value) == (sized, 0)
    assert st.lookup(sized.value + 3) == (sized, 3)
    assert st.lookup(sized.value + 4) is None                # gap after a sized symbol
    a, b = sym["label_a"], sym["label_b"]
    assert a.kind == "notype" and a.size == 0
    assert st.lookup(a.value + 3) == (a, 3)                   # size 0 runs up to the next symbol
    assert st.lookup(b.value) == (b, 0)
    cold = sym["weird.cold"]
    assert st.lookup(cold.value + 1)[0].demangled == "weird[cold]"
    tail = sym["tail_label"]
    text = m.section(".text")
    assert st.lookup(tail.value + 3) == (tail, 3)
    assert st.lookup(text.addr + text.size) is None or st.lookup(text.addr + text.size)[0] is not tail
    assert st.lookup(0) is None
    assert st.lookup(1 << 60) is None
    assert [s.name for s in st.by_name("label_b")] == ["label_b"]
    assert len(st) == len(list(st)) >= 6


def test_symbol_table_cxx(builds):
    st = SymbolTable.from_module(ElfModule(str(builds["cxx_O2"])))
    names = {s.demangled for s in st}
    assert "c_linkage" in names
    assert "main" in names
    assert any(n.startswith("(anonymous namespace)::hidden_fn") for n in names)
    assert any(n == "main[cold]" or n.startswith("cold_path(int) [clone .cold]") for n in names)
    assert st.by_name("c_linkage")[0].kind == "func"
    assert st.by_name("(anonymous namespace)::hidden_fn(int)") or st.by_name("(anonymous namespace)::hidden_fn")
    # undefined symbols (imports) never show up
    assert not st.by_name("abort")
    assert st.by_name("abort@plt")
    at_same = {}
    for s in st:
        at_same.setdefault(s.value, {})[s.name] = s.size
    for s in st:
        assert isinstance(s, Symbol)
        assert s.kind in ("func", "object", "notype", "ifunc")
        assert s.binding in ("global", "local", "weak")
        if "@" in s.name and not s.name.endswith("@plt"):
            # name@VER as written, and (GDB's elf_symtab_read) the version-less name beside it
            # without a size, so that at the address the written one is preferred
            assert at_same[s.value].get(s.name.split("@", 1)[0]) == 0, s


def test_libc_symbols():
    """libc's symbol table: exported and (with libc6-dbg) static functions found by name and
    by address.  How fast it is built and searched: benchmarks/bounds.py."""
    S.need_path(LIBC, "libc6")
    m = ElfModule(LIBC)
    st = SymbolTable.from_module(m)
    n = len(st)
    hit = st.by_name("abort")
    assert n > 1000 and hit
    ab = hit[0]
    assert st.lookup(ab.value) == (ab, 0)
    assert st.lookup(ab.value + 5)[0].name == "abort"
    for name in ("malloc", "printf", "__libc_start_main", "memcpy", "exit"):
        syms = st.by_name(name)
        assert syms, name
        s = syms[0]
        got = st.lookup(s.value)
        assert got is not None and got[1] == 0
    if m.debug_file is not None:
        # libc6-dbg installed: static functions from the debug file's .symtab
        s = st.by_name("__libc_start_call_main")
        assert s and st.lookup(s[0].value + 3) == (s[0], 3)


@need_gdb
def test_libc_lookup_matches_gdb():
    S.need_path(LIBC, "libc6")
    st = SymbolTable.from_module(ElfModule(LIBC))
    addrs = sample(probe_addresses(st), 1500)
    want = gdb_info_symbol(LIBC, addrs)
    bad = [(hex(a), mine_info_symbol(st, a), g) for a, g in zip(addrs, want) if mine_info_symbol(st, a) != g]
    assert not bad, bad[:10]


@need_gdb
def test_libc_names_found_as_gdb_lists_them():
    """Lookups by name find entries through the string tables (where a name may be the tail
    of another's string): every minimal symbol GDB lists for libc and its debug file, of the
    kinds swk keeps (text, data, bss, ifunc: `maint print msymbols`), is found by its name at
    GDB's address, versioned names (``name@VER``) included."""
    S.need_path(LIBC, "libc6")
    pat = re.compile(r"^\[\s*\d+\] ([TtDdBbi]) (0x[0-9a-f]+) (\S+) section (\S+)")
    want = {}
    for line in gdb_batch(LIBC, ["maint print msymbols"]):
        m = pat.match(line)
        if m and m.group(4) not in (".tbss", ".tdata"):
            want.setdefault(m.group(3), set()).add(int(m.group(2), 16))
    assert len(want) > 5000 and any("@" in n for n in want), len(want)
    tables = SymbolTable.from_module(ElfModule(LIBC))._ensure()
    # every row of the name (by_linkage_name then prefers a default version to a hidden one);
    # GDB's "*ABS*+0x...@plt" entries (IRELATIVE PLT slots) swk does not make
    bad = [(n, sorted(map(hex, addrs))) for n, addrs in sorted(want.items())
           if not addrs <= {r[0] for t in tables for r in t.named(n)} and not n.startswith("*ABS*")]
    assert not bad, (len(bad), bad[:10])


def test_lookups_decode_only_what_they_reach():
    """Naming a pc decodes the entries at and just below it, not the table (libc's debug
    file: 10,000 entries); a name asked for decodes the entries whose names can be it.  The
    answers are those of the whole table decoded (every row, sorted by address and name)."""
    S.need_path(LIBC, "libc6")
    st = SymbolTable.from_module(ElfModule(LIBC))
    read = st.by_linkage_name("__libc_start_call_main") or st.by_linkage_name("read")
    assert read
    tables = st._ensure()
    decoded = sum(len(src._rows) for t in tables for src in t.sources if hasattr(src, "_rows"))
    total = sum(len(src) for t in tables for src in t.sources)
    assert total > 10000 and decoded < 20, (decoded, total)
    got = st.lookup(read[0].value + 1)
    assert got == (read[0], 1) or got[0].value == read[0].value, got
    decoded = sum(len(src._rows) for t in tables for src in t.sources if hasattr(src, "_rows"))
    assert decoded < 60, decoded
    whole = SymbolTable.from_module(ElfModule(LIBC))
    rows = [t.all_rows() for t in whole._ensure()]
    lazy = SymbolTable.from_module(ElfModule(LIBC))
    for t, every in zip(lazy._ensure(), rows):
        for r in every[::7]:                       # a seventh of the rows, each at its address
            hit = t.lookup(r[0], (r[7], r[3][1]))
            assert hit is not None and hit.value == r[0], (r, hit)


# --- separate debug files -----------------------------------------------------------------------

def test_debuglink_beside_file(stripped):
    m = ElfModule(str(stripped / "prog"))
    assert m.section(".symtab") is None or m.section(".debug_info") is None
    assert m.debuglink[0] == "prog.debug"
    dbg = find_debug_file(m, debug_dirs=[str(stripped / "nodebugdir")])
    assert dbg is not None and Path(dbg.path).resolve() == (stripped / "prog.debug").resolve()
    assert attach_debug_file(m, debug_dirs=[str(stripped / "nodebugdir")]) is not None
    assert m.debug_file is not None
    again = attach_debug_file(m)
    assert again is m.debug_file


def test_debuglink_in_dot_debug_and_debug_dir(stripped, tmp_path):
    shutil.copy(stripped / "prog", tmp_path / "prog")
    (tmp_path / ".debug").mkdir()
    shutil.copy(stripped / "prog.debug", tmp_path / ".debug" / "prog.debug")
    m = ElfModule(str(tmp_path / "prog"))
    dbg = find_debug_file(m, debug_dirs=[str(tmp_path / "none")])
    assert dbg is not None and Path(dbg.path).parent.name == ".debug"
    # <debug_dir>/<dir of file>/<name>
    (tmp_path / ".debug" / "prog.debug").unlink()
    gdir = tmp_path / "global"
    target = Path(str(gdir) + str(tmp_path))
    target.mkdir(parents=True)
    shutil.copy(stripped / "prog.debug", target / "prog.debug")
    m = ElfModule(str(tmp_path / "prog"))
    dbg = find_debug_file(m, debug_dirs=[str(gdir)])
    assert dbg is not None and Path(dbg.path) == target / "prog.debug"


def test_debug_file_by_build_id(stripped, tmp_path):
    shutil.copy(stripped / "prog", tmp_path / "prog")      # no prog.debug beside it
    m = ElfModule(str(tmp_path / "prog"))
    bid = m.build_id
    assert bid and len(bid) >= 8
    ddir = tmp_path / "debug"
    (ddir / ".build-id" / bid[:2]).mkdir(parents=True)
    shutil.copy(stripped / "prog.debug", ddir / ".build-id" / bid[:2] / (bid[2:] + ".debug"))
    assert find_debug_file(m, debug_dirs=[str(tmp_path / "none")]) is None
    dbg = find_debug_file(m, debug_dirs=[str(ddir)])
    assert dbg is not None and dbg.build_id == bid
    # a sysroot prefixes the debug dirs
    sysroot = tmp_path / "sysroot"
    (sysroot / "usr/lib/debug/.build-id" / bid[:2]).mkdir(parents=True)
    shutil.copy(stripped / "prog.debug", sysroot / "usr/lib/debug/.build-id" / bid[:2] / (bid[2:] + ".debug"))
    dbg = find_debug_file(m, sysroot=str(sysroot), debug_dirs=["/usr/lib/debug-none", "/usr/lib/debug"])
    assert dbg is not None and str(sysroot) in dbg.path
    # a file with a different build-id is not taken
    other = tmp_path / "other"
    (other / ".build-id" / bid[:2]).mkdir(parents=True)
    shutil.copy(stripped / "full", other / "x")
    run(["objcopy", "--only-keep-debug", str(stripped / "nobid_full"),
         str(other / ".build-id" / bid[:2] / (bid[2:] + ".debug"))])
    assert find_debug_file(m, debug_dirs=[str(other)]) is None


def test_debuglink_crc(stripped, tmp_path):
    shutil.copy(stripped / "nobid", tmp_path / "nobid")
    shutil.copy(stripped / "nobid.debug", tmp_path / "nobid.debug")
    m = ElfModule(str(tmp_path / "nobid"))
    assert m.build_id is None
    name, crc = m.debuglink
    assert crc == file_crc32(str(tmp_path / "nobid.debug"))
    assert crc == zlib.crc32((tmp_path / "nobid.debug").read_bytes()) & 0xFFFFFFFF
    assert find_debug_file(m, debug_dirs=[]) is not None
    # same name, other contents: rejected
    data = bytearray((tmp_path / "nobid.debug").read_bytes())
    data[-1] ^= 0xFF
    (tmp_path / "nobid.debug").write_bytes(bytes(data))
    assert find_debug_file(ElfModule(str(tmp_path / "nobid")), debug_dirs=[]) is None


def test_never_the_module_itself(stripped, tmp_path):
    shutil.copy(stripped / "nobid", tmp_path / "nobid")
    os.symlink(tmp_path / "nobid", tmp_path / "nobid.debug")    # the link names the file itself
    m = ElfModule(str(tmp_path / "nobid"))
    assert find_debug_file(m, debug_dirs=[]) is None
    assert attach_debug_file(m, debug_dirs=[]) is None
    assert m.debug_file is None and m._debug_file_resolved


@need_gdb
def test_stripped_symbols_and_lines_via_debug_file(stripped):
    prog = stripped / "prog"
    m = ElfModule(str(prog))
    st = SymbolTable.from_module(m)
    assert m.debug_file is not None
    lt = LineTable.from_module(m)
    assert lt.has_dwarf
    # static functions come from the debug file's .symtab
    assert any(s.demangled.startswith("(anonymous namespace)::hidden_fn") for s in st)
    addrs = probe_addresses(st)
    want = gdb_info_symbol(prog, addrs)
    bad = [(hex(a), mine_info_symbol(st, a), g) for a, g in zip(addrs, want) if mine_info_symbol(st, a) != g]
    assert not bad, bad[:10]
    text = m.section(".text")
    addrs = sample(range(text.addr, text.addr + text.size), 400)
    want = gdb_info_line(prog, addrs)
    bad = [(hex(a), lt.lookup(a), g) for a, g in zip(addrs, want) if lt.lookup(a) != g]
    assert not bad, bad[:10]


# --- line tables ----------------------------------------------------------------------------------

@need_gdb
@pytest.mark.parametrize("which", ["cxx_O0", "cxx_O2", "cxx_O2_d4", "cxx_O0_d4", "c_O2", "c_O0_d4", "c_O2_d5"])
def test_line_lookup_matches_gdb(builds, which):
    prog = builds[which]
    m = ElfModule(str(prog))
    lt = LineTable.from_module(m)
    text = m.section(".text")
    addrs = sample(range(text.addr, text.addr + text.size), 700)
    want = gdb_info_line(prog, addrs)
    bad = [(hex(a), lt.lookup(a), g) for a, g in zip(addrs, want) if lt.lookup(a) != g]
    assert not bad, bad[:10]
    files = {g[0] for g in want if g}
    assert any(f.endswith(("prog.cpp", "prog.c")) for f in files)
    if which.startswith("cxx_O0"):
        assert any(f.startswith("/usr/include/") for f in files)     # header functions
    if which.startswith("c_O2"):
        assert "helper.h" in files or any(f.endswith("/helper.h") for f in files)


@need_gdb
def test_libc_lines_match_gdb():
    S.need_path(LIBC, "libc6")
    m = ElfModule(LIBC)
    lt = LineTable.from_module(m)
    if not lt.has_dwarf:
        S.missing("libc's debug info not found", S.install_hint("libc6-dbg"))
    st = SymbolTable.from_module(m)
    ab = st.by_name("abort")[0]
    assert lt.lookup(ab.value + 5) is not None
    text = m.section(".text")
    addrs = sample(range(text.addr, text.addr + text.size, 7), 1500)
    want = gdb_info_line(LIBC, addrs)
    bad = [(hex(a), lt.lookup(a), g) for a, g in zip(addrs, want) if lt.lookup(a) != g]
    assert not bad, bad[:10]


def test_line_table_robustness(builds, tmp_path):
    # no DWARF at all
    lt = LineTable.from_module(ElfModule(str(builds["cxx_nodebug"])))
    assert lt.lookup(0x1100) is None and not lt.has_debug_info(0x1100)
    assert lt.function_name(0x1100) is None
    # garbage in .debug_line / .debug_info: never an exception
    src = builds["cxx_O2"]
    m = ElfModule(str(src))
    data = bytearray(Path(src).read_bytes())
    for secname in (".debug_line", ".debug_info", ".debug_aranges", ".debug_abbrev"):
        sec = m.section(secname)
        if sec is None:
            continue
        bad = bytearray(data)
        for i in range(sec.offset + 7, sec.offset + sec.size, 13):
            bad[i] = (bad[i] * 7 + 91) & 0xFF
        path = tmp_path / f"broken{secname}"
        path.write_bytes(bytes(bad))
        lt = LineTable.from_module(ElfModule(str(path)))
        text = m.section(".text")
        for a in range(text.addr, text.addr + text.size, 61):
            lt.lookup(a)
            lt.has_debug_info(a)
            lt.function_name(a)


def test_has_debug_info(builds):
    m = ElfModule(str(builds["cxx_O2"]))
    lt = LineTable.from_module(m)
    st = SymbolTable.from_module(m)
    main = st.by_name("main")[0]
    assert lt.has_debug_info(main.value)
    start = st.by_name("_start")[0]
    assert not lt.has_debug_info(start.value)
    # an assembler-only unit has lines but no functions
    lt2 = LineTable.from_module(ElfModule(str(builds["labels"])))
    st2 = SymbolTable.from_module(ElfModule(str(builds["labels"])))
    fn = st2.by_name("sized_fn")[0]
    assert lt2.lookup(fn.value) is not None and lt2.lookup(fn.value)[0].endswith("labels.s")
    assert not lt2.has_debug_info(fn.value)


# --- function names as bt prints them ------------------------------------------------------------

BT_SCRIPT = r'''
import gdb, json
gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("starti", to_string=True)
base = None
for line in gdb.execute("info proc mappings", to_string=True).splitlines():
    parts = line.split()
    if len(parts) >= 5 and parts[-1] == PROG:
        base = int(parts[0], 16)
        break
for a in STARTS:
    gdb.Breakpoint("*0x%x" % (base + a), internal=True)
out = []
for i in range(300):
    try:
        gdb.execute("continue", to_string=True)
    except gdb.error:
        break
    if not gdb.selected_inferior().pid:
        break
    f = gdb.newest_frame()
    newer_inline = False
    while f is not None:
        pc = f.pc()
        t = f.type()
        if t == gdb.NORMAL_FRAME and not newer_inline and base <= pc < base + 0x100000:
            sal = f.find_sal()
            out.append((pc - base, f.name(), sal.symtab.filename if sal.symtab else None, sal.line,
                        f.newer() is None, f.function() is not None))
        newer_inline = t == gdb.INLINE_FRAME
        f = f.older()
json.dump(out, open(OUT, "w"))
gdb.execute("kill")
'''


@need_gdb
@pytest.mark.parametrize("which", ["cxx_O0", "cxx_O2", "c_O2"])
def test_function_names_match_gdb_bt(builds, which):
    """Stop at every function of the program and compare each frame's name and file:line with
    gdb's, at every frame: where gdb's frame has no DWARF function (gdb names it from the
    ELF symbol), swk's function_name must be None and its symbol table must name it as gdb."""
    prog = builds[which]
    m = ElfModule(str(prog))
    st = SymbolTable.from_module(m)
    lt = LineTable.from_module(m)
    starts = sorted({s.value for s in st if s.kind == "func" and s.section == ".text" and s.size > 0})
    out = prog.parent / (prog.name + ".bt.json")
    script = prog.parent / (prog.name + ".bt.py")
    script.write_text(f"PROG = {str(prog)!r}\nSTARTS = {starts!r}\nOUT = {str(out)!r}\n" + BT_SCRIPT)
    run([GDB, "-batch", "-nx", "-x", str(script), "--args", str(prog)], check=False, timeout=600)
    frames = json.loads(out.read_text())
    assert len(frames) >= 5
    seen = set()
    bad = []
    from_elf = 0
    for pc, name, fname, line, innermost, has_function in frames:
        if (pc, innermost) in seen:
            continue
        seen.add((pc, innermost))
        q = pc if innermost else pc - 1      # callers are looked up at ra - 1
        want = name if has_function else None
        if lt.function_name(q) != want:
            bad.append((hex(pc), lt.function_name(q), want))
        if not has_function:                 # gdb named it from the ELF symbol: so must swk's table
            from_elf += 1
            hit = st.lookup(q)
            if (hit[0].demangled if hit else None) != name:
                bad.append((hex(pc), "symbol", hit[0].demangled if hit else None, name))
        # a breakpoint at an inlined call's first instruction shows the call site line
        if not innermost and lt.lookup(q) != ((fname, line) if fname else None):
            bad.append((hex(pc), lt.lookup(q), (fname, line)))
    assert not bad, bad[:10]
    names = {n for _pc, n, *_ in frames}
    assert from_elf > 0, "no frame without a DWARF function (_start, the PLT, crt code) was compared"
    if which.startswith("cxx"):
        assert "outer::inner::Box<int, 3>::sum" in names
        assert "(anonymous namespace)::hidden_fn" in names
        assert "L::g" in names


def test_function_name_values(builds):
    m = ElfModule(str(builds["cxx_O0"]))
    st = SymbolTable.from_module(m)
    lt = LineTable.from_module(m)

    def fn(name):
        for s in st:
            if s.demangled == name or s.demangled.startswith(name + "("):
                return lt.function_name(s.value + 1)
        raise AssertionError(name)

    assert fn("main") == "main"
    assert fn("c_linkage") == "c_linkage"
    assert fn("outer::inner::Box<int, 3>::sum") == "outer::inner::Box<int, 3>::sum"
    assert fn("outer::inner::operator<<") == "outer::inner::operator<<"
    assert fn("Outer::operator bool") == "Outer::operator bool"
    assert fn("Outer::Nested::f") == "Outer::Nested::f"
    assert fn("(anonymous namespace)::Hidden::go") == "(anonymous namespace)::Hidden::go"
    assert fn("local_user(int)::L::g") == "L::g"


def test_demangle_cxxfilt_fallback(monkeypatch):
    """Without a usable __cxa_demangle the names come from one c++filt run."""
    import swk_plugin.elf.demangle as dm
    S.need_tool("c++filt")
    monkeypatch.setattr(dm, "_cxa", False)
    monkeypatch.setattr(dm, "_cache", {})
    assert dm.demangle("_ZN2ns3FooIiE3barEi.isra.0") == "ns::Foo<int>::bar(int) [clone .isra.0]"
    assert dm.demangle("_ZNKSs4sizeEv") == \
        "std::basic_string<char, std::char_traits<char>, std::allocator<char> >::size() const"
    assert dm.demangle_many(["_Z1fv", "_Z1gi", "plain"]) == ["f()", "g(int)", "plain"]
    monkeypatch.setattr(dm, "_cxxfilt", False)
    monkeypatch.setattr(dm, "_cache", {})
    assert dm.demangle("_Z1fv") == "_Z1fv"      # last resort: the name itself


BLOCK_SCRIPT = r'''
import gdb, json
out = []
for a in ADDRS:
    try:
        b = gdb.current_progspace().block_for_pc(a)
    except Exception:
        b = None
    f = None
    while b is not None and not b.is_static and not b.is_global:
        if b.function is not None:
            sup = b.superblock
            # the innermost function block that is not an inlined call inside its parent
            if sup is None or sup.is_static or sup.is_global or not (sup.start <= b.start and b.end <= sup.end):
                f = b.function
                break
        b = b.superblock
    out.append(f.print_name if f is not None else None)
json.dump(out, open(OUT, "w"))
'''


@need_gdb
@pytest.mark.parametrize("which", ["lambdas", "cxx_O2", "c_O0_d4"])
def test_function_names_match_gdb_symbols(builds, which):
    """function_name() against gdb's own function symbol at many addresses: the name gdb's
    bt prints is that symbol's print name, without parameters when gdb can parse it."""
    prog = builds[which]
    m = ElfModule(str(prog))
    lt = LineTable.from_module(m)
    text = m.section(".text")
    addrs = sample(range(text.addr, text.addr + text.size), 2500)
    out = prog.parent / (prog.name + ".blocks.json")
    script = prog.parent / (prog.name + ".blocks.py")
    script.write_text(f"ADDRS = {addrs!r}\nOUT = {str(out)!r}\n" + BLOCK_SCRIPT)
    run([GDB, "-batch", "-nx", "-x", str(script), str(prog)], check=False, timeout=600)
    want = json.loads(out.read_text())
    assert len(want) == len(addrs)
    bad = []
    for a, g in zip(addrs, want):
        exp = strip_params(g) if g else None
        if lt.function_name(a) != exp:
            bad.append((hex(a), lt.function_name(a), exp))
    assert not bad, bad[:5]
    if which == "lambdas":
        names = {lt.function_name(a) for a in addrs}
        assert any("<lambda(long int, long int)>" in (n or "") and "(" in (n or "").split(">")[-1]
                   for n in names), "lambda-instantiated templates keep their parameters"


# --- compressed debug sections, inflated lazily -------------------------------------------------

def _libc_debug_module():
    from swk_plugin.elf.module import open_module
    for p in ("/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6"):
        if os.path.exists(p):
            m = open_module(p)
            dbg = attach_debug_file(m)
            return m, dbg
    return None, None


@pytest.mark.parametrize("gz", ["zlib", "zlib-gnu"])
def test_compressed_debug_sections_read_alike(builds, gz):
    """-gz builds (SHF_COMPRESSED and the old .zdebug_ form) give the same lines, function
    names and locals as the uncompressed build, while inflating only what is asked."""
    d = builds["dir"]
    name = f"c_O2_gz_{gz.replace('-', '_')}"
    res = run(["gcc", "-g", "-O2", f"-gz={gz}", "-o", name, "prog.c"], cwd=d, check=False)
    if res.returncode != 0:
        S.toolchain_quirk(f"gcc cannot build -gz={gz}: {res.stderr.strip()[-200:]}")
    plain = ElfModule(str(builds["c_O2"]))
    packed = ElfModule(str(d / name))
    hdrs = {h[0]: h for h in packed.section_headers()}
    assert any(n in hdrs for n in (".zdebug_info",)) or hdrs[".debug_info"][2] & 0x800
    lt_plain, lt_packed = LineTable.from_module(plain), LineTable.from_module(packed)
    st = SymbolTable.from_module(plain)
    addrs = probe_addresses(st)
    assert len(addrs) > 20
    for a in addrs:
        assert lt_packed.lookup(a) == lt_plain.lookup(a), hex(a)
        assert lt_packed.function_name(a) == lt_plain.function_name(a), hex(a)
    from swk_plugin.locals import scopes as sc
    for a in addrs:
        sp, sq = sc.scopes_at(plain, a), sc.scopes_at(packed, a)
        assert [s.name for s in sp] == [s.name for s in sq], hex(a)
        if sp:
            vp, vq = sc.frame_variables(sp[-1], a), sc.frame_variables(sq[-1], a)
            assert [[v.name for v in group] for group in vp] == [[v.name for v in group] for group in vq]


def test_libc_debug_info_inflated_only_as_far_as_needed(monkeypatch):
    """A walk through libc's start frames reads one unit of its 6 MB .debug_info: the
    sections are inflated only as far as the units asked for (the cold cost of a core; swk's
    disk cache, which would hand over the whole section, is off)."""
    monkeypatch.setenv("SWK_CACHE_DIR", "off")
    m, dbg = _libc_debug_module()
    if dbg is None:
        S.missing("no separate debug file for libc", S.install_hint("libc6-dbg"))
    if not dbg.section_headers() or not any(h[0] == ".debug_info" and h[2] & 0x800
                                            for h in dbg.section_headers()):
        S.toolchain_quirk(f"libc's debug info ({dbg.path}) is not compressed, as Debian 12's libc6-dbg's is")
    st = SymbolTable.from_module(m)
    hit = [s for s in st.by_name("__libc_start_main")]
    assert hit
    fresh = ElfModule(dbg.path)
    from swk_plugin.dwarf.info import DwarfInfo as _Dwarf
    dw = _Dwarf(fresh)
    lt = LineTable(dw, name="libc")
    addr = hit[0].value + 8
    name = lt.function_name(addr)
    assert name and "libc_start_main" in name
    assert lt.lookup(addr) is not None
    full = len(_Dwarf(ElfModule(dbg.path)).secs.get(".debug_info"))
    got = len(dw.secs.view(".debug_info"))
    assert 0 < got < full, (got, full)
    # the rest is still there when a reader needs the whole section
    assert len(dw.secs.get(".debug_info")) == full


def test_may_name_never_rules_out_a_definer():
    """elf/strtab.may_name: a module whose string tables lack a name is not read for it; every
    name binutils' nm lists for libc (its .dynsym and its debug file's .symtab, and the
    version-less part of each name@VER: string tables share tails, __pthread_kill is the end of
    __GI___pthread_kill, so a name need not start after a NUL, nor end at one) is one it may
    name, and names none of its tables holds are ruled out."""
    from swk_plugin.elf.strtab import may_name
    S.need_path(LIBC, "libc6")
    mod = ElfModule(LIBC)
    dbg = _build_id_debug_file(LIBC)
    if dbg is None:
        S.missing("no separate debug file for libc", S.install_hint("libc6-dbg"))
    names = set()
    for argv in (["nm", "-D", "--defined-only", LIBC], ["nm", dbg]):
        names |= {ln.split()[-1].split("@")[0] for ln in run(argv).stdout.splitlines() if ln.split()}
    missed = [n for n in names if not may_name(mod, n)]
    assert len(names) > 5000 and not missed, missed[:10]
    for name in ("swk_no_such_function", "__libc_start_main_no"):
        assert not may_name(mod, name)
