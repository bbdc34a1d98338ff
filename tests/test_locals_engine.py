"""The locals engine (swk_plugin.locals) against GDB itself, line by line.

Each C/C++ program below is built at test time (-O0, -Og, -O2; DWARF 5 and 4) and
stopped in gdb.  A gdb-Python driver then walks every frame of the stop and, for
every frame GDB shows (inline frames included), compares GDB's ``info args`` /
``info locals`` text with what the engine prints from the same inputs:

* "gdb" registers: every register GDB reports for the frame (GDB's own view: the
  caller-saved ones are "same value" in callers) -- must match exactly;
* "walk" registers: callers get only what a CFI walk recovers (callee-saved
  registers, rsp, rip) -- must match except where the engine says
  ``<optimized out>`` because the value needs a register the walk did not recover
  (GDB then prints the callee's register as if unchanged; swk never guesses).

The CFA comes from GDB ("frame at"), the load bias from ``info proc mappings``,
entry values (DW_OP_entry_value) from the caller's call site as GDB does.  One
known GDB 13 bug is tolerated and reported: a DW_AT_call_value that uses
DW_OP_fbreg is evaluated by GDB against the callee's frame base.

Unit tests cover the formatter (floats, strings, arrays, enums, escapes), type
names, GDB's block-symbol hashing and the ordering of scopes/variables.
"""
import json
import re
import types
import os
import subprocess
from pathlib import Path

import pytest

import swk_suite as suite
import swk_testlib as T

from swk_plugin.locals import format_value, format_float, type_name, VarValue, Type, Field
from swk_plugin.locals import scopes as S
from swk_plugin.locals import format as F

REPO = Path(__file__).resolve().parents[1]
GDB = os.environ.get("SWK_GDB", "gdb")
need_tools = suite.mark_needs(GDB, "gcc", "g++")

# --------------------------------------------------------------------------------------
# programs
# --------------------------------------------------------------------------------------

VALUES1_C = r"""
#include <stdio.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
enum color { RED, GREEN = 5, BLUE };
enum flags { F_A = 1, F_B = 2, F_C = 4 };
struct point { int x, y; };
union u { int i; float f; char c[4]; };
struct nested { struct point p; char name[8]; double d; union u uu; int arr[3]; unsigned bf:3; int sbf:5; };
typedef struct point pt_t;
typedef int myint;
int gvar = 42;
int garr[10];
static int helper(int a) { return a * 2; }
__attribute__((noinline)) int leaf(int q, const char *s) {
  volatile int z = q + 1;
  asm volatile("" ::: "memory");
  return z + (int)strlen(s);
}
int main(int argc, char **argv) {
  signed char sc = -5; unsigned char uc = 200; char c = 'Q';
  short s = -300; unsigned short us = 65000; int i = -3; unsigned u = 4294967295u;
  long l = -1234567890123L; unsigned long ul = 18446744073709551615UL;
  long long ll = -7; unsigned long long ull = 7;
  bool b = true, b2 = false; enum color col = BLUE; enum color col2 = 77; enum flags fl = F_A | F_C; enum flags fl2 = 9;
  float f = 1.5f, f2 = 0.1f; double d = 0.1, d2 = 3.14159265358979323846, dinf = 1.0/0.0; long double ld = 2.5L, ld2 = 0.1L;
  int *ip = &i; const char *str = "hello\tworld\n\"q\""; char buf[16] = "abc"; char rep[40]; memset(rep, 'x', 39); rep[39]=0;
  int arr[20] = {1,2,3}; struct point pt = {7, -3}; pt_t pt2 = {1,2}; myint mi = 9; const int ci = 11; volatile int vi = 12;
  struct nested n = {{1,2}, "nm", 2.0, {.i = 0x41424344}, {4,5,6}, 5, -3};
  union u un; un.f = 1.0f;
  int (*fp)(int) = helper; int *gp = &garr[2]; void *vp = 0; char *nullstr = 0;
  int *badp = (int*)0x10; char *badstr = (char*)0x20;
  uint8_t u8 = 5; int8_t i8 = -1; uint8_t u8arr[4] = {1,2,3,0};
  char esc[6] = {'a', 27, 127, '\\', '\'', 0};
  { int i = 100; int inner = 5; int zeta = 7, alpha = 8;
    leaf(i + inner + zeta + alpha, str); }
  return leaf(sc + uc + c + s + us + i + u + (int)l + (int)ul + (int)ll + (int)ull + b + col + (int)f + (int)d + (int)ld + *ip + buf[0] + arr[0] + pt.x + mi + ci + vi + n.p.x + un.i + fp(1) + *gp + (vp!=0) + (nullstr!=0) + (badp!=0) + (badstr!=0) + u8 + i8 + u8arr[0] + rep[0] + esc[0] + pt2.x + b2 + col2 + fl + fl2 + (int)f2 + (int)d2 + (int)dinf + (int)ld2 + gvar, str);
}
"""

VALUES2_C = r"""
#include <string.h>
#include <wchar.h>
#include <math.h>
#include <complex.h>
#include <stdbool.h>
struct anon { int a; union { int u1; float u2; }; struct { short s1, s2; }; };
struct flex { int n; int data[]; };
enum neg { NA = -2, NB = 0, NC = 7 };
enum big { BIG = 0x80000000u };
char big_str[400];
int ints300[300];
struct pt { int x, y; };
__attribute__((noinline)) void leaf(void *p) { asm volatile("" ::: "memory"); }
__attribute__((noinline)) int f(int n) {
  char s250[260]; memset(s250, 'x', 250); memset(s250 + 250, 'y', 9); s250[259] = 0;
  char alt[300]; for (int i = 0; i < 299; i++) alt[i] = 'a' + (i % 2); alt[299] = 0;
  char nonul[5] = {'a','b','c','d','e'};
  char utf[16] = "h\xc3\xa9llo\xff\xfe z\xe2\x82";
  const char *p_utf = "caf\xc3\xa9 \x80 ok";
  const char *p_long = big_str;
  char *p_rep = big_str + 100;
  wchar_t wbuf[8] = L"w\xe9ide";
  const wchar_t *wp = L"wide str";
  double _Complex cz = 1.5 + 2.0 * I;
  float _Complex cf = -1.0f;
  __int128 i128 = -((__int128)1 << 100);
  unsigned __int128 u128 = ((unsigned __int128)1 << 127) + 5;
  double dnan = NAN, dmnan = -NAN, dnz = -0.0, dden = 4.9e-324, dbig = 1e300, dsmall = 1.5e-7, dint = 123456789012345678.0;
  float fnan = NAN, finf = -INFINITY, fden = 1e-45f, f1e10 = 1e10f;
  long double lnan = NAN, lbig = 1e4000L, lsmall = 3.25e-4000L, lneg = -7.0L;
  bool bb; *(unsigned char*)&bb = 2;
  enum neg en = NA, en2 = -5; enum big eb = BIG;
  int vla[n]; for (int i = 0; i < n; i++) vla[i] = i * i;
  int m2[3][4] = {{1,2,3,4},{5,6,7,8},{0}};
  struct pt pts[12] = {{1,2}};
  struct anon an = {1, {.u1 = 2}, {3, 4}};
  static struct flex fx = {3};
  struct flex *fxp = &fx;
  int *ip300 = ints300;
  enum lcl { LA = 1, LB = 2 } le = LB;
  typedef int lint; lint li = 5;
  struct lst { int q; } lq = {9};
  unsigned char ucs[4] = {200, 201, 202, 0};
  signed char scs[3] = {-1, -2, 0};
  int big_arr[300]; for (int i = 0; i < 300; i++) big_arr[i] = i < 150 ? 0 : i;
  leaf(s250); leaf(alt); leaf(nonul); leaf(utf); leaf(&cz); leaf(&cf); leaf(&i128); leaf(&u128); leaf(&dnan); leaf(&lnan); leaf(&bb); leaf(vla); leaf(m2); leaf(pts); leaf(&an); leaf(wbuf); leaf(big_arr);
  leaf(&dmnan); leaf(&dnz); leaf(&dden);leaf(&dbig);leaf(&dsmall);leaf(&dint);leaf(&fnan);leaf(&finf);leaf(&fden);leaf(&f1e10);leaf(&lbig);leaf(&lsmall);leaf(&lneg);leaf(&en);leaf(&en2);leaf(&eb);leaf(&le);leaf(&li);leaf(&lq);leaf(ucs);leaf(scs);
  return n + (int)(long)p_utf + (int)(long)p_long + (int)(long)p_rep + (int)(long)wp + (int)(long)fxp + (int)(long)ip300;
}
int main(void) { memset(big_str, 'q', 399); for (int i = 0; i < 300; i++) ints300[i] = i / 50; return f(5); }
"""

SCOPES_C = r"""
#include <stdio.h>
#define NI __attribute__((noinline))
#define AI static inline __attribute__((always_inline))
volatile int sink;
int gtab[8] = {1, 2, 3};
NI int stop_here(int code) { sink += code; __asm__ __volatile__("" ::: "memory"); return code + 1; }
NI int opaque(int x) { __asm__ __volatile__("" : "+r"(x)); return x; }

AI int inl_inner(int k, const int *p) {
  int sq = k * 3 + *p;
  int r = stop_here(sq);
  return r + sq + k;
}
AI int inl_outer(int base) {
  int twice = base * 2;
  int res = inl_inner(twice + 1, &gtab[1]);
  return res + twice;
}
NI int host(long seed) {
  int host_local = (int)seed + 3;
  int r = inl_outer(host_local);
  return r + host_local;
}
NI int keep(int a, int b) {
  int x = opaque(a * 7);
  int y = opaque(b + 11);
  long z = (long)x * y;
  int r = host(x + y);
  return r + x + y + (int)z;
}
NI int saver(int a, int b) {
  /* an indirect call: gcc cannot know what it clobbers, so these live in callee-saved
     registers across it (rbx, rbp, r12-r15) */
  int (*volatile kp)(int, int) = keep;
  int kept = a * 13 + 1;
  long kept2 = (long)b << 20;
  int r = kp(a, b);
  return r + kept + (int)kept2;
}
NI int blocks(int n) {
  int v = n;
  static int calls = 0;
  static const char tag[] = "blk";
  calls++;
  enum local_e { LE_A = 3, LE_B } le = LE_B;
  typedef struct { int q; } lq_t;
  lq_t lq = { n };
  int acc = 0;
  { int v = n * 2;
    int alpha = 1, beta = 2, gamma = 3, delta = 4, eps = 5, zeta = 6, eta = 7;
    int kappa = 1, omega = 3, mu = 5, nu = 6, xi = 7, zz = 8, aa = 9, q__x = 10, Xylo = 11, _under = 12;
    acc += v + alpha + beta + gamma + delta + eps + zeta + eta;
    acc += kappa + omega + mu + nu + xi + zz + aa + q__x + Xylo + _under;
    { int v = n * 3; double w = v / 2.0;
      acc += opaque(v) + (int)w;
      acc += saver(acc, v);
    }
  }
  { int unused_block = opaque(5); acc += unused_block; }
  if (n > 100) goto out;
  acc += le + lq.q + tag[0];
out:
  return acc + calls + v;
}
int main(int argc, char **argv) {
  int r = blocks(argc + 4);
  printf("%d\n", r);
  return 0;
}
"""

CXX_CPP = r"""
#include <cstddef>
#define NI __attribute__((noinline))
#define AI inline __attribute__((always_inline))
volatile int sink;
NI int stop_here(int code) { sink += code; __asm__ __volatile__("" ::: "memory"); return code + 1; }
namespace geo {
enum Unscoped { U_ONE = 1, U_TWO };
enum class Color : short { Red, Green = 7, Blue };
struct Point { int x, y; };
struct Base { int b1; virtual ~Base() {} virtual int area() const { return b1; } };
struct Mixin { double m = 2.5; };
struct Shape : Base, Mixin {
  static int count;
  static const int kSides = 4;
  Point corner;
  Color color;
  const char *label;
  union { int iu; float fu; };
  NI int area() const override { return stop_here(b1 + corner.x) + kSides; }
  AI int scaled(int k) const { int t = k * corner.y; return area() + t; }
};
int Shape::count = 11;
struct Empty {};
struct Derived : Empty { };
template <typename T> NI T twice(T v, const T &r) {
  T local = v + r;
  int arr[3] = {1, 2, 3};
  auto fn = [&local, v](int q) { return local + v + q; };
  return fn(stop_here((int)local)) + arr[0];
}
}  // namespace geo
NI int use_refs(int &ri, int &&rr, const geo::Point &pr, geo::Point *pp, geo::Shape &sh) {
  int *np = nullptr;
  geo::Unscoped u = geo::U_TWO;
  geo::Color c = geo::Color::Blue, c2 = (geo::Color)100;
  char16_t c16 = u'B'; char32_t c32 = U'C'; wchar_t wc = L'W';
  bool flag = true;
  geo::Derived dv;
  geo::Empty em;
  int (geo::Shape::*mp) = nullptr;
  geo::Point geo::Shape::*mp2 = &geo::Shape::corner;
  long total = sh.scaled(ri) + rr + pr.x + pp->y + (np == nullptr) + u + (int)c + (int)c2 + c16 + c32 + wc + flag + (mp == nullptr) + (mp2 != nullptr);
  (void)dv; (void)em;
  return (int)total;
}
int main() {
  geo::Shape sh; sh.b1 = 3; sh.corner = {4, 5}; sh.color = geo::Color::Green; sh.label = "square"; sh.iu = 77;
  geo::Point p{1, 2};
  int i = 10;
  int r = use_refs(i, 20, p, &p, sh);
  r += (int)geo::twice<double>(1.25, 2.5);
  r += geo::twice<int>(3, 4);
  return r & 1;
}
"""

STL_CPP = r"""
#include <string>
#include <vector>
#include <map>
volatile int sink;
__attribute__((noinline)) int stop_here(int c) { sink += c; asm volatile("":::"memory"); return c; }
struct VB { int v = 1; virtual ~VB() {} };
struct L : virtual VB { int l = 2; };
struct R : virtual VB { int r = 3; };
struct D : L, R { int d = 4; };
struct Pt { int x; int y; };
int main() {
  std::string s = "hello";
  std::string big(40, 'z');
  std::vector<int> v{1, 2, 3};
  std::map<int, int> m{{1, 2}};
  D dd;
  int Pt::*mp = &Pt::y;
  return stop_here(s.size() + big.size() + v.size() + m.size() + dd.d + (mp != nullptr));
}
"""

QSORT_C = r"""
#include <stdlib.h>
volatile int sink;
int cmp(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  if (x == 3 && y == 7) sink++;
  return (x > y) - (x < y);
}
int main(void) {
  int arr[40];
  for (int i = 0; i < 40; i++) arr[i] = (i * 7) % 40;
  qsort(arr, 40, sizeof(int), cmp);     /* libc frames in between (with libc6-dbg) */
  return arr[0];
}
"""

IMPLICIT_CPP = r"""
volatile int sink;
__attribute__((noinline)) int stop_here(int c) { sink += c; asm volatile("":::"memory"); return c; }
struct P { int a, b; };
static inline __attribute__((always_inline)) int useref(const int &r, const P &p, int *q) {
  return stop_here(r + p.a + *q) + r + p.b;
}
int main(int argc, char **) {
  int v = argc * 5; P p{argc, argc * 2}; int w = argc + 9; int *pw = &w; int &rw = w;
  int res = useref(v, p, pw) + rw + *pw;     /* -O2: references/pointers become implicit */
  return res;
}
"""

CHARS_C = r"""
/* char arrays whose ends are incomplete UTF-8 sequences (GDB runs in C.UTF-8 here) */
volatile int sink;
__attribute__((noinline)) int stop_here(int c) { sink += c; asm volatile("":::"memory"); return c; }
int main(void) {
  char tail_valid[8] = {'h', 'i', 'h', 'i', 'h', 'i', 'h', (char)0xc2};
  char tail_five[8] = {'h', 'i', (char)0x81, 'h', 'i', (char)0xf8, (char)0x88, (char)0x80};
  char tail_six[8] = {'h', 'i', 'h', 'i', 'h', 'i', (char)0xfc, (char)0x80};
  char tail_rep[14] = {'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', (char)0xe0, (char)0x80};
  char tail_mid[8] = {'h', 'i', (char)0xf9, (char)0x93, 0, 0, 0, 0};
  char tail_bad[6] = {'o', 'k', (char)0xe0, 'A', (char)0xf4, (char)0x90};
  char tail_utf[7] = {'x', (char)0xc3, (char)0xa9, (char)0xc3, (char)0xa9, (char)0xe2, (char)0x82};
  char tail_strict[8] = {'h', 'i', 'h', 'i', 'h', 'i', (char)0xed, (char)0xa0};
  char tail_fe[8] = {'h', 'i', 'h', 'i', 'h', 'i', 'h', (char)0xfe};
  char garbage[16] = "hello\0\0\0\0>\016\201\231\206\371\223";
  return stop_here(tail_valid[1] + tail_five[2] + tail_six[1] + tail_rep[3] + tail_mid[3]
                   + tail_bad[3] + tail_utf[4] + tail_strict[1] + tail_fe[1] + garbage[2]);
}
"""

PROGRAMS = {
    "values1": ("values1.c", VALUES1_C, ["leaf"], 0),
    "values2": ("values2.c", VALUES2_C, ["leaf"], 0),
    "scopes": ("scopes.c", SCOPES_C, ["stop_here"], 0),
    "cxx": ("cxx.cpp", CXX_CPP, ["stop_here"], 2),
    "stl": ("stl.cpp", STL_CPP, ["stop_here"], 0),
    "qsort": ("qsort.c", QSORT_C, ["cmp"], 0),
    "implicit": ("implicit.cpp", IMPLICIT_CPP, ["stop_here"], 0),
    "chars": ("chars.c", CHARS_C, ["stop_here"], 0),
}
FLAGS = {
    "O0": ["-O0", "-g"],
    "Og": ["-Og", "-g"],
    "O2": ["-O2", "-g"],
    "O0-dwarf4": ["-O0", "-gdwarf-4"],
    "O2-dwarf4": ["-O2", "-gdwarf-4"],
    "O0-typeunits": ["-O0", "-g", "-fdebug-types-section"],     # DWARF 5 type units
    # i386: arguments on the stack, long long in register pairs, doubles in x87 registers
    "O0-m32": ["-O0", "-g", *T.m32_flags()],
    "O2-m32": ["-O2", "-g", *T.m32_flags()],
}

# --------------------------------------------------------------------------------------
# the gdb-side driver
# --------------------------------------------------------------------------------------

DRIVER = r'''
import gdb, json, os, re, sys
_p = os.path.join(REPO, "gdb_init.py")
_ns = {"__file__": _p, "__name__": "swk_gdb_init"}
exec(compile(open(_p).read().replace("\n_swk_main()", "\n"), _p, "exec"), _ns)
_err = _ns["_swk_setup"]()
if _err:
    raise RuntimeError(_err)
from swk_plugin.elf.module import ElfModule
import swk_plugin.locals as L
from swk_plugin.arch import get_architecture
from swk_plugin.backends.gdb.procstate import value_bytes
inf = gdb.selected_inferior()
ARCH = get_architecture(inf.architecture().name())     # x86-64, or i386 for the -m32 builds

# the general registers by DWARF number; a caller frame's registers in "walk" mode are only
# those a CFI walk recovers: the callee-saved ones, sp and pc
DW = {n: i for i, n in enumerate(ARCH.general) if n}
GPR = list(DW)
CALLEE_SAVED = [ARCH.general[r] for r in sorted(ARCH.callee_saved)] + [ARCH.general[ARCH.sp], ARCH.general[ARCH.pc]]

def read_mem(a, n):
    return bytes(inf.read_memory(a, n))

MAPS = []
for line in gdb.execute("info proc mappings", to_string=True).splitlines():
    p = line.split()
    if len(p) >= 5 and p[0].startswith("0x") and p[-1].startswith("/"):
        MAPS.append((int(p[0], 16), int(p[1], 16), int(p[3], 16), p[-1]))
MODS = {}
for lo, hi, off, path in MAPS:
    if path in MODS or not os.path.exists(path):
        continue
    try:
        m = ElfModule(path)
        base = min(l for l, h, o, pp in MAPS if pp == path and o == 0)
        MODS[path] = (m, base - (m.first_load_vaddr() & ~0xfff))
    except Exception:
        pass
SYM = L.make_symbolizer(list(MODS.values()))

def module_for(pc):
    for lo, hi, off, path in MAPS:
        if lo <= pc < hi and path in MODS:
            return MODS[path]
    return None, 0

def regs_of(f, full):
    out = {}
    for n in GPR if full else CALLEE_SAVED:
        try:
            v = f.read_register(n)
            if not v.is_optimized_out:
                out[DW[n]] = int(v) & ARCH.address_mask
        except gdb.error:
            pass
    if full:       # the FP and vector registers (xmm, x87's st), as bytes, narrowest name
        for regno, (_size, names) in ARCH.fp_registers.items():
            try:
                out[regno] = value_bytes(f.read_register(names[-1]))
            except (gdb.error, ValueError):
                pass
    return out

frames = []
f = gdb.newest_frame()
while f is not None:
    frames.append(f)
    f = f.older()
recs = []
for lvl, f in enumerate(frames):
    gdb.execute("frame %d" % lvl, to_string=True)
    m = re.search(r"frame at (0x[0-9a-f]+)", gdb.execute("info frame", to_string=True))
    sal = f.find_sal()
    recs.append(dict(level=lvl, inline=f.type() == gdb.INLINE_FRAME, name=f.name(), pc=int(f.pc()),
                     cfa=int(m.group(1), 16) if m else None, line=sal.line,
                     file=sal.symtab.filename if sal.symtab else None,
                     args=gdb.execute("info args", to_string=True).splitlines(),
                     locals=gdb.execute("info locals", to_string=True).splitlines()))
groups, cur = [], []
for r, f in zip(recs, frames):
    cur.append((r, f))
    if not r["inline"]:
        groups.append(cur)
        cur = []
if cur:
    groups.append(cur)

results = []
problems = []
whatis_checks = []
for mode in ("gdb", "walk"):
    phys = []
    for gi, g in enumerate(groups):
        r, f = g[-1]
        phys.append(dict(pc=r["pc"], lookup=r["pc"] if gi == 0 else r["pc"] - 1,
                         regs=regs_of(f, gi == 0 or mode == "gdb"), cfa=r["cfa"]))
    # entry values, outermost frame first (a caller's own entry values feed its call sites)
    entries = [None] * len(groups)
    for gi in range(len(groups) - 2, -1, -1):
        P, C = phys[gi], phys[gi + 1]
        mod, bias = module_for(P["pc"])
        cmod, cbias = module_for(C["pc"])
        if mod is None or cmod is None:
            continue
        sc = L.scopes_at(mod, P["lookup"] - bias)
        if not sc:
            continue
        caller = L.FrameVariables(C["lookup"] - cbias, C["regs"], C["cfa"], read_mem, cbias,
                                  entry_regs=entries[gi + 1], reg_size=ARCH.reg_size, ptr_size=ARCH.ptr_size)
        entries[gi] = L.call_site_entry_regs(cmod, caller, callee_entry=sc[-1].function.entry_pc,
                                             callee_module=mod, callee_bias=bias)
    for gi, g in enumerate(groups):
        P = phys[gi]
        mod, bias = module_for(P["pc"])
        if mod is None:
            continue
        addr = P["lookup"] - bias
        scopes = L.scopes_at(mod, addr)
        if not scopes:
            for r, _f in g:
                if r["locals"] != ["No symbol table info available."]:
                    problems.append("#%d %s: no scopes but gdb has symbols" % (r["level"], r["name"]))
            continue
        entry = entries[gi]
        if len(scopes) < len(g) or (gi > 0 and len(scopes) != len(g)):
            problems.append("#%d: %d scopes for gdb frames %s" % (g[0][0]["level"], len(scopes),
                                                                  [x[0]["name"] for x in g]))
            continue
        mine_scopes = scopes[len(scopes) - len(g):]
        for j, ((r, f), sc) in enumerate(zip(g, mine_scopes)):
            if mode == "gdb":
                if sc.name != r["name"]:
                    problems.append("#%d: scope name %r, gdb %r" % (r["level"], sc.name, r["name"]))
                if sc.kind != ("inline" if r["inline"] else "function"):
                    problems.append("#%d: scope kind %s" % (r["level"], sc.kind))
                if sc.kind == "inline":
                    outer = g[j + 1][0]
                    if sc.call_line != outer["line"] or \
                            os.path.basename(sc.call_file or "") != os.path.basename(outer["file"] or ""):
                        problems.append("#%d: call site %s:%s, gdb shows %s:%s for #%d" % (
                            r["level"], sc.call_file, sc.call_line, outer["file"], outer["line"], outer["level"]))
            args, locs = L.frame_variables(sc, addr)
            names = [v.name for v in args + locs]
            for kind, vs, theirs, none in (("args", args, r["args"], "No arguments."),
                                          ("locals", locs, r["locals"], "No locals.")):
                mine = []
                for v in vs:
                    vv = L.read_variable(v, L.FrameVariables(addr, P["regs"], P["cfa"], read_mem, bias,
                                                             entry_regs=entry, libraries=list(MODS.values()),
                                                             reg_size=ARCH.reg_size, ptr_size=ARCH.ptr_size))
                    mine.append(("%s = %s" % (v.name, L.format_value(vv, read_mem, symbolize=SYM)), vv))
                    if mode == "gdb" and names.count(v.name) == 1 and v.tag != 0x0a:   # not labels
                        whatis_checks.append((r["level"], v.name, L.type_name(vv.type)))
                if not mine:
                    mine = [(none, None)]
                for i in range(max(len(mine), len(theirs))):
                    a, vv = mine[i] if i < len(mine) else (None, None)
                    b = theirs[i] if i < len(theirs) else None
                    status, why = "ok", None
                    if a != b:
                        status = "bad"
                        if vv is not None and a is not None and b is not None and \
                                a.split(" = ", 1)[0] == b.split(" = ", 1)[0]:
                            reason = vv.reason or ""
                            # mine may only lack what needs an unrecovered register:
                            # GDB's text with some parts replaced by <optimized out>
                            pat = ".*".join(re.escape(x) for x in a.split("<optimized out>"))
                            if (mode == "walk" and gi > 0 and "<optimized out>" in a
                                    and re.fullmatch(pat, b, re.S)
                                    and ("not recovered" in reason or "entry value" in reason)):
                                status, why = "allowed", "walk: " + reason
                            elif entry is not None and set(vv.entry_used) & entry.from_fbreg:
                                status, why = "allowed", "gdb-bug: DW_OP_fbreg in DW_AT_call_value"
                    results.append(dict(mode=mode, level=r["level"], func=r["name"], kind=kind, idx=i,
                                        mine=a, gdb=b, status=status, why=why, caller=gi > 0,
                                        regs=list(vv.regs_used) if vv is not None else []))
for level, name, tn in whatis_checks:
    gdb.execute("frame %d" % level, to_string=True)
    try:
        out = gdb.execute("whatis " + name, to_string=True).strip()
    except gdb.error as e:
        out = "error: %s" % e
    ok = out == "type = " + tn
    results.append(dict(mode="whatis", level=level, func=name, kind="type", idx=0, mine="type = " + tn,
                        gdb=out, status="ok" if ok else "bad", why=None))
print("SWKENGINE " + json.dumps({"results": results, "problems": problems, "frames": len(recs)}))
'''


def _build(tmp_dir, name, text, flags):
    src = tmp_dir / name
    src.write_text(text)
    exe = tmp_dir / (name.split(".")[0] + "-" + "-".join(f.strip("-") for f in flags if "/" not in f))
    cc = "g++" if name.endswith(".cpp") else "gcc"
    subprocess.run([cc, *flags, "-o", str(exe), str(src)], check=True, capture_output=True, timeout=120)
    return exe


def _run_gdb(exe, breaks, continues, driver, after=()):
    argv = [GDB, "-nx", "-batch", "-iex", "set auto-load python-scripts off",
            "-ex", "set width 0", "-ex", "set height 0", "-ex", "set print pretty off"]
    for b in breaks:
        argv += ["-ex", f"break {b}"]
    argv += ["-ex", "run", "-x", str(driver)]
    for cmd in after:
        argv += ["-ex", cmd]
    for _ in range(continues):
        argv += ["-ex", "continue", "-x", str(driver)]
    argv.append(str(exe))
    env = dict(os.environ, LC_ALL="C.UTF-8", LANG="C.UTF-8")
    argv[3:3] = ["-iex", "set breakpoint pending on"]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env)
    reports = [json.loads(l.split(" ", 1)[1]) for l in p.stdout.splitlines() if l.startswith("SWKENGINE ")]
    if len(reports) != continues + 1:
        raise AssertionError(f"driver did not report ({len(reports)} of {continues + 1}):\n"
                             + p.stdout[-3000:] + p.stderr[-3000:])
    return reports, p.stdout


@pytest.fixture(scope="session")
def engine_driver(tmp_path_factory):
    d = tmp_path_factory.mktemp("locals_engine")
    drv = d / "driver.py"
    drv.write_text(f"REPO = {str(REPO)!r}\n" + DRIVER)
    return d, drv


#: (program, flags) GDB cannot be compared with: values2 has __int128 (none on i386); GDB 13
#: aborts (internal-error in coerce_pieced_ref) printing the i386 -O2 build's lambda in
#: geo::twice<double>, whose captured reference is a DW_OP_implicit_pointer piece beside a
#: second piece — test_i386_lambda_gdb_cannot_print has swk's known values there.
NOT_COMPARABLE = {("values2", "O0-m32"), ("values2", "O2-m32"), ("cxx", "O2-m32")}


@need_tools
@pytest.mark.parametrize("prog,flags", [(p, f) for f in FLAGS for p in PROGRAMS if (p, f) not in NOT_COMPARABLE],
                         ids=[f"{p}-{f}" for f in FLAGS for p in PROGRAMS if (p, f) not in NOT_COMPARABLE])
def test_engine_matches_gdb(engine_driver, prog, flags):
    """Every frame's info args / info locals, and every variable's whatis, equal GDB's."""
    d, drv = engine_driver
    name, text, breaks, continues = PROGRAMS[prog]
    os.environ.setdefault("LC_ALL", "C.UTF-8")
    exe = _build(d, name, text, FLAGS[flags])
    after = ("frame function main", "echo SWKADDR\\n", "p/x &sh") if prog == "cxx" else ()
    reports, stdout = _run_gdb(exe, breaks, continues, drv, after)
    sh_addr = None
    if after:
        lines = stdout.splitlines()
        i = lines.index("SWKADDR")
        sh_addr = lines[i + 1].split(" = ")[1]
    bad, allowed, ok = [], [], 0
    for rep in reports:
        bad += [f"problem: {p}" for p in rep["problems"]]
        for r in rep["results"]:
            if r["status"] == "ok":
                ok += 1
            elif r["status"] == "allowed":
                if "gdb-bug" in r["why"]:
                    # ours must be the object main passed (GDB's value is off by the frame
                    # distance): check it against gdb's own "p &sh" in main
                    assert r["mine"] == "this = " + sh_addr, (r, sh_addr)
                allowed.append(f"[{r['mode']}] #{r['level']} {r['func']}: {r['mine']!r} vs gdb {r['gdb']!r} ({r['why']})")
            else:
                bad.append(f"[{r['mode']}] #{r['level']} {r['func']} {r['kind']}[{r['idx']}]: "
                           f"mine {r['mine']!r} | gdb {r['gdb']!r}")
    if allowed:
        print(f"{prog} {flags}: {len(allowed)} tolerated differences:\n  " + "\n  ".join(allowed))
    assert not bad, "\n".join(bad)
    assert ok >= 10, f"only {ok} lines compared"
    if prog == "scopes" and flags.startswith("O2"):
        # values kept in callee-saved registers across calls are read in caller frames
        # from the registers a CFI walk recovers, and equal GDB's
        kept = [r for rep in reports for r in rep["results"]
                if r["mode"] == "walk" and r["caller"] and r["status"] == "ok"
                and set(r["regs"]) & {3, 6, 12, 13, 14, 15}]
        assert any(r["func"] == "saver" for r in kept), kept


# --------------------------------------------------------------------------------------
# unit tests: formatting
# --------------------------------------------------------------------------------------

def _int(name, size, unsigned=False, kind="int"):
    t = Type(kind, name, size)
    t.unsigned = unsigned
    return t


CHAR = _int("char", 1)
UCHAR = _int("unsigned char", 1, True)
INT = _int("int", 4)


def _arr(elem, n):
    t = Type("array", None, n * elem.size, elem)
    t.count = n
    return t


def _ptr(target):
    return Type("ptr", None, 8, target)


def _vv(t, data, address=None):
    v = VarValue(t, bytes(data), address=address)
    return v


def _mem(blob, base):
    def read(a, n):
        if base <= a and a + n <= base + len(blob):
            return blob[a - base:a - base + n]
        raise OSError("unmapped")
    return read


def test_format_integers_and_chars():
    no = _mem(b"", 0)
    assert format_value(_vv(CHAR, b"Q"), no) == "81 'Q'"
    assert format_value(_vv(_int("signed char", 1), b"\xfb"), no) == "-5 '\\373'"
    assert format_value(_vv(UCHAR, b"\xc8"), no) == "200 '\\310'"
    assert format_value(_vv(CHAR, b"\n"), no) == "10 '\\n'"
    assert format_value(_vv(CHAR, b"'"), no) == "39 '\\''"
    assert format_value(_vv(CHAR, b"\0"), no) == "0 '\\000'"
    assert format_value(_vv(_int("unsigned int", 4, True), b"\xff" * 4), no) == "4294967295"
    assert format_value(_vv(_int("long", 8), (-1234567890123).to_bytes(8, "little", signed=True)), no) \
        == "-1234567890123"
    assert format_value(_vv(_int("__int128", 16), (-(1 << 100)).to_bytes(16, "little", signed=True)), no) \
        == "-1267650600228229401496703205376"
    b = Type("bool", "_Bool", 1)
    assert [format_value(_vv(b, bytes([x])), no) for x in (0, 1, 2)] == ["false", "true", "2"]
    wt = Type("typedef", "wchar_t", 4, _int("int", 4))
    assert format_value(_vv(wt, (87).to_bytes(4, "little")), no) == "87 L'W'"


def test_format_enums():
    e = Type("enum", "flags", 4)
    e.enumerators = [("F_A", 1), ("F_B", 2), ("F_C", 4)]
    e.flag_enum = True
    e.unsigned = True
    no = _mem(b"", 0)
    enc = lambda v: v.to_bytes(4, "little", signed=v < 0)
    assert format_value(_vv(e, enc(2)), no) == "F_B"
    assert format_value(_vv(e, enc(5)), no) == "(F_A | F_C)"
    assert format_value(_vv(e, enc(9)), no) == "(F_A | unknown: 0x8)"
    assert format_value(_vv(e, enc(8)), no) == "(unknown: 0x8)"
    assert format_value(_vv(e, enc(0)), no) == "0"
    c = Type("enum", "color", 4)
    c.enumerators = [("RED", 0), ("GREEN", 5), ("BLUE", 6)]
    assert format_value(_vv(c, enc(77)), no) == "77"
    assert format_value(_vv(c, enc(-5)), no) == "-5"


def test_format_floats():
    import struct
    assert format_float(struct.pack("<f", 1.5), "ieee32") == "1.5"
    assert format_float(struct.pack("<f", 0.1), "ieee32") == "0.100000001"
    assert format_float(struct.pack("<d", 0.1), "ieee64") == "0.10000000000000001"
    assert format_float(struct.pack("<d", 3.14159265358979323846), "ieee64") == "3.1415926535897931"
    assert format_float(struct.pack("<d", float("inf")), "ieee64") == "inf"
    assert format_float(struct.pack("<d", -0.0), "ieee64") == "-0"
    assert format_float(struct.pack("<d", 1e300), "ieee64") == "1.0000000000000001e+300"
    assert format_float(struct.pack("<d", 1.5e-7), "ieee64") == "1.4999999999999999e-07"
    assert format_float(struct.pack("<Q", 0x7ff8000000000000), "ieee64") == "nan(0x8000000000000)"
    assert format_float(struct.pack("<Q", 0xfff8000000000000), "ieee64") == "-nan(0x8000000000000)"
    assert format_float(struct.pack("<I", 0x7fc00000), "ieee32") == "nan(0x400000)"
    assert format_float(struct.pack("<f", 1e-45), "ieee32") == "1.40129846e-45"
    # x87: 2.5, 0.1L, quiet NaN, an invalid encoding (integer bit clear)
    x87 = lambda sign, exp, man: ((sign << 79) | (exp << 64) | man).to_bytes(10, "little") + bytes(6)
    assert format_float(x87(0, 16384, 0xA000000000000000), "x87") == "2.5"
    assert format_float(x87(0, 16379, 0xCCCCCCCCCCCCCCCD), "x87") == "0.100000000000000000001"
    assert format_float(x87(1, 16385, 0xE000000000000000), "x87") == "-7"
    assert format_float(x87(0, 0x7FFF, 0xC000000000000000), "x87") == "nan(0xc000000000000000)"
    assert format_float(x87(0, 16384, 0x2000000000000000), "x87") == "<invalid float value>"


def test_format_char_arrays_and_strings():
    no = _mem(b"", 0)
    assert format_value(_vv(_arr(CHAR, 16), b"abc".ljust(16, b"\0")), no) == '"abc", \'\\000\' <repeats 12 times>'
    assert format_value(_vv(_arr(CHAR, 8), b"nm".ljust(8, b"\0")), no) == '"nm\\000\\000\\000\\000\\000"'
    assert format_value(_vv(_arr(CHAR, 5), b"abcde"), no) == '"abcde"'
    assert format_value(_vv(_arr(CHAR, 40), b"x" * 39 + b"\0"), no) == "'x' <repeats 39 times>"
    assert format_value(_vv(_arr(CHAR, 6), b"a\x1b\x7f\\'\0"), no) == '"a\\033\\177\\\\\'"'
    assert format_value(_vv(_arr(CHAR, 260), b"x" * 250 + b"y" * 9 + b"\0"), no) == "'x' <repeats 250 times>..."
    alt = bytes(b"ab"[i % 2] for i in range(299)) + b"\0"
    assert format_value(_vv(_arr(CHAR, 300), alt), no) == '"' + "ab" * 100 + '"...'
    assert format_value(_vv(_arr(UCHAR, 4), b"\xc8\xc9\xca\0"), no) == '"\\310\\311", <incomplete sequence \\312>'
    # char * to memory: a string, the 200 limit, an unreadable pointer
    base = 0x1000
    blob = b"hello\0" + b"q" * 399 + b"\0"
    read = _mem(blob, base)
    p = _ptr(CHAR)
    assert format_value(_vv(p, base.to_bytes(8, "little")), read) == '0x1000 "hello"'
    assert format_value(_vv(p, (base + 6).to_bytes(8, "little")), read) == "0x1006 'q' <repeats 200 times>..."
    assert format_value(_vv(p, (0x20).to_bytes(8, "little")), read) == \
        "0x20 <error: Cannot access memory at address 0x20>"
    assert format_value(_vv(p, bytes(8)), read) == "0x0"


@need_tools
def test_i386_lambda_gdb_cannot_print(engine_driver):
    """The i386 -O2 build of the C++ program, stopped under geo::twice<double>: GDB 13's own
    `info locals` aborts there (internal-error: coerce_pieced_ref, on the lambda whose captured
    reference is a DW_OP_implicit_pointer piece beside a second piece), so the engine test
    cannot compare this frame.  swk-bt -full prints the whole stack, and the values known
    from the source: v = 1.25, r refers to 2.5, arr = {1, 2, 3}."""
    import swk_testlib as TL
    d, _drv = engine_driver
    name, text, _breaks, _continues = PROGRAMS["cxx"]
    exe = _build(d, name, text, FLAGS["O2-m32"])
    stop = ["set width 0", "set height 0", "break stop_here", "run", "continue"]
    # GDB's abort: no core of GDB itself left behind in the working directory
    quiet_abort = ["maint set internal-error corefile no", "maint set internal-error quit yes"]
    theirs = TL.run_gdb(exe, [*quiet_abort, *stop, "frame 1", "info locals"], timeout=120)
    assert "internal-error" in theirs and "coerce_pieced_ref" in theirs, \
        "GDB prints this frame's locals now: compare it in test_engine_matches_gdb\n" + theirs[-3000:]
    out = TL.run_gdb(exe, [*stop, "swk-bt -full"], swk=True, timeout=120)
    lines = out[out.index("#0  stop_here"):].splitlines()
    assert lines[0].startswith("#0  stop_here (code=3)"), out[-3000:]
    frame = next(i for i, ln in enumerate(lines) if "in geo::twice<double> " in ln)
    assert re.search(r"\(v=1\.25, r=@0x[0-9a-f]+: 2\.5\) at .*cxx\.cpp:30$", lines[frame]), lines[frame]
    body = lines[frame + 1:frame + 4]
    # fn's captured reference is a synthetic pointer (printed as GDB prints one in a struct,
    # test_implicit_pointer_pieces), its captured double is on the stack
    assert body == ["        local = <optimized out>", "        arr = {1, 2, 3}",
                    "        fn = {__local = <synthetic pointer>, __v = 1.25}"], body
    assert any(ln.startswith("#2  ") and " in main () at " in ln for ln in lines), out[-3000:]
    assert "internal-error" not in out and "Traceback" not in out


IMPLPTR_CPP = r"""
#define NI __attribute__((noinline))
volatile int sink;
NI int stop_here(int c) { sink += c; __asm__ __volatile__("" ::: "memory"); return c + 1; }
template <typename T> NI T twice(T v, const T &r) {
  T local = v + r;
  auto fn = [&local](int q) { return local + q; };
  return fn(stop_here((int)local));
}
struct S { int &a; int b; };
NI int two(int x) {
  int y = x * 3;
  S s{y, x};
  return stop_here(s.a + s.b) + s.a;
}
int main() { return (int)twice<double>(1.25, 2.5) + two(4); }
"""


@need_tools
@pytest.mark.parametrize("flags", ["O2", "O2-m32"])
def test_implicit_pointer_pieces(engine_driver, flags):
    """Aggregates whose location has a DW_OP_implicit_pointer piece (-O2: a lambda's or a
    struct's captured reference to a variable that lives nowhere): the struct is printed
    member by member, the reference "<synthetic pointer>", as GDB prints them.  Where the
    implicit pointer is the only piece (i386: the lambda in twice<double>) GDB prints it and
    swk's line equals GDB's; where there are two pieces (struct S in two(), both builds) GDB
    13 aborts (internal-error: coerce_pieced_ref) and swk gives the known values."""
    import swk_testlib as TL
    d, _drv = engine_driver
    exe = _build(d, "implptr.cpp", IMPLPTR_CPP, FLAGS[flags])
    quiet_abort = ["maint set internal-error corefile no", "maint set internal-error quit yes"]
    out = TL.run_gdb(exe, ["set width 0", "break stop_here", "run", "swk-bt -full", "continue", "swk-bt -full"],
                     swk=True, timeout=120)
    assert "internal-error" not in out and "Traceback" not in out, out[-3000:]
    assert "        s = {a = <synthetic pointer>, b = 4}" in out.splitlines(), out[-3000:]
    theirs = TL.run_gdb(exe, [*quiet_abort, "break stop_here", "run", "continue", "frame 1", "info locals"],
                        timeout=120)
    assert "s = {a = " in theirs and "coerce_pieced_ref" in theirs, theirs[-3000:]   # GDB's abort
    if flags == "O2-m32":
        gdb_lines = TL.run_gdb(exe, ["break stop_here", "run", "frame 1", "info locals"], timeout=120)
        assert "fn = {__local = <synthetic pointer>}" in gdb_lines.splitlines(), gdb_lines[-3000:]
        assert "        fn = {__local = <synthetic pointer>}" in out.splitlines(), out[-3000:]


def test_printable_characters_are_glibcs(monkeypatch):
    """A character prints as itself exactly where glibc's iswprint (what GDB asks) says it is
    printable in a UTF-8 locale: every code point, private use (U+F24A in a std::string's
    leftover bytes once printed as \\357\\211\\212 where GDB printed the character), spaces
    and format characters included."""
    import ctypes
    import locale
    monkeypatch.setattr(F, "UTF8", True)
    old = locale.setlocale(locale.LC_CTYPE)
    try:
        locale.setlocale(locale.LC_CTYPE, "C.UTF-8")
        iswprint = ctypes.CDLL("libc.so.6").iswprint
        iswprint.argtypes, iswprint.restype = [ctypes.c_uint], ctypes.c_int
        wrong = [hex(w) for w in range(0x110000) if F._printable(w) != bool(iswprint(w))]
    finally:
        locale.setlocale(locale.LC_CTYPE, old)
    assert not wrong, f"{len(wrong)} code points printed unlike glibc: {wrong[:20]}"
    no = _mem(b"", 0)
    assert format_value(_vv(_arr(CHAR, 4), "\uf24a".encode() + b"\0"), no) == '"\uf24a"'


def test_format_arrays_structs():
    no = _mem(b"", 0)
    a = _arr(INT, 20)
    data = b"".join(v.to_bytes(4, "little") for v in [1, 2, 3] + [0] * 17)
    assert format_value(_vv(a, data), no) == "{1, 2, 3, 0 <repeats 17 times>}"
    big = _arr(INT, 300)
    data = b"".join(i.to_bytes(4, "little") for i in range(300))
    out = format_value(_vv(big, data), no)
    assert out.startswith("{0, 1, 2, ") and out.endswith(", 198, 199...}")
    pt = Type("struct", "point", 8)
    pt.fields = [Field("x", INT, 0), Field("y", INT, 32)]
    enc = lambda *vs: b"".join(v.to_bytes(4, "little", signed=True) for v in vs)
    assert format_value(_vv(pt, enc(7, -3)), no) == "{x = 7, y = -3}"
    pts = _arr(pt, 12)
    assert format_value(_vv(pts, enc(1, 2) + bytes(88)), no) == "{{x = 1, y = 2}, {x = 0, y = 0} <repeats 11 times>}"
    empty = Type("struct", "Empty", 1)
    empty.fields = []
    assert format_value(_vv(empty, b"\0"), no) == "{<No data fields>}"
    # partly optimized out (pieces)
    v = _vv(pt, enc(7, 0))
    v.opt_mask = bytearray([0, 0, 0, 0, 1, 1, 1, 1])
    assert format_value(v, no) == "{x = 7, y = <optimized out>}"
    out_v = VarValue(INT, None, optimized_out=True)
    assert format_value(out_v, no) == "<optimized out>"


def test_type_names():
    cchar = CHAR.with_cv(const=True)
    assert type_name(_ptr(cchar)) == "const char *"
    assert type_name(_ptr(CHAR).with_cv(const=True)) == "char * const"
    fn = Type("func", None, 1, INT)
    fn.params = [INT]
    fn.prototyped = True
    assert type_name(_ptr(fn)) == "int (*)(int)"
    assert type_name(_arr(INT, 4)) == "int [4]"
    assert type_name(_ptr(_arr(INT, 4))) == "int (*)[4]"
    st = Type("struct", "point", 8)
    assert type_name(st.with_cv(const=True)) == "const struct point"
    anon = Type("struct", None, 8)
    assert type_name(anon) == "struct {...}"
    td = Type("typedef", "pt_t", 8, st)
    assert type_name(td) == "pt_t"
    assert type_name(_arr(_arr(INT, 4), 3)) == "int [3][4]"
    noproto = Type("func", None, 1, INT)
    noproto.params = []
    assert type_name(_ptr(noproto)) == "int (*)()"


# --------------------------------------------------------------------------------------
# unit tests: GDB's block dictionaries
# --------------------------------------------------------------------------------------

def test_symbol_hash_order():
    """The order GDB 13 printed for a 12-symbol lexical block (hashed dictionary)."""
    names = "kappa beta omega delta mu nu xi zz aa q__x Xylo _under".split()
    nb = len(names) // 5 + 1
    order = sorted(names, key=lambda s: S._hash_c(s) % nb)
    assert order == "kappa beta delta zz mu q__x _under omega nu xi aa Xylo".split()
    four = ["i", "inner", "zeta", "alpha"]                 # fewer than 5: one bucket, DIE order
    assert sorted(four, key=lambda s: S._hash_c(s) % (len(four) // 5 + 1)) == four
    assert S._hash_c("q__x") == S._hash_c("x")            # GDB's Ada-style "__" rule
    assert S._hash_cplus("ns::name") == S._hash_cplus("name")


@need_tools
def test_scopes_and_variables_order(tmp_path):
    """scopes_at gives the inline chain innermost first with GDB's names and call lines;
    frame_variables gives the innermost block's locals first (shadowed names included)."""
    from swk_plugin.elf.module import ElfModule
    from swk_plugin.locals import scopes_at, frame_variables, function_at
    exe = _build(tmp_path, "scopes.c", SCOPES_C, ["-O2", "-g"])
    mod = ElfModule(str(exe))
    # the call to stop_here inside the inlined inl_inner (inlined into host)
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(exe)], capture_output=True,
                         text=True).stdout
    host_lines = out.split("<host>:")[1].split("\n\n")[0].splitlines()
    call = next(l for l in host_lines if "call" in l and "<stop_here>" in l)
    addr = int(call.split(":")[0], 16)
    chain = scopes_at(mod, addr)
    assert [(s.kind, s.name) for s in chain] == [("inline", "inl_inner"), ("inline", "inl_outer"),
                                                 ("function", "host")]
    src = SCOPES_C.splitlines()
    assert "inl_inner(" in src[chain[0].call_line - 1] and "inl_outer(" in src[chain[1].call_line - 1]
    assert chain[0].call_file.endswith("scopes.c")
    fn = function_at(mod, addr)
    assert fn.name == "host" and fn.low <= addr < fn.high
    args, locs = frame_variables(chain[0], addr)          # (their order is checked against gdb)
    # (GCC describes r and sq twice here; GDB lists both copies, so do we)
    assert sorted(v.name for v in args) == ["k", "p"] and set(v.name for v in locs) == {"r", "sq"}
    assert all(v.is_param for v in args) and not any(v.is_param for v in locs)
    args, locs = frame_variables(chain[2], addr)
    assert [v.name for v in args] == ["seed"] and set(v.name for v in locs) == {"host_local", "r"}
    # blocks(): at -O0 the innermost block's locals come first
    exe0 = _build(tmp_path, "scopes.c", SCOPES_C, ["-O0", "-g"])
    mod0 = ElfModule(str(exe0))
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(exe0)], capture_output=True,
                         text=True).stdout
    blk = out.split("<blocks>:")[1].split("\n\n")[0].splitlines()
    call = next(l for l in blk if "call" in l and "<saver>" in l)
    addr = int(call.split(":")[0], 16)
    (scope,) = scopes_at(mod0, addr)
    args, locs = frame_variables(scope, addr)
    names = [v.name for v in locs]
    # innermost block first; the 18-symbol middle block in GDB's hashed order (4 buckets);
    # the function's own block in DIE order, local enumerators included -- as gdb prints
    assert [v.name for v in args] == ["n"]
    assert names == ["v", "w",
                     "beta", "zeta", "omega", "mu", "zz", "aa", "Xylo", "v", "alpha", "eta", "xi",
                     "_under", "gamma", "kappa", "delta", "eps", "nu", "q__x",
                     "v", "calls", "tag", "LE_A", "LE_B", "le", "lq", "acc"]
    assert "unused_block" not in names
    # the spec's EOUTOFSCOPE test: w's block holds the call, not the function's first byte
    w = locs[1]
    fn0 = function_at(mod0, addr)
    assert w.in_scope(addr) and not w.in_scope(fn0.low) and locs[-1].in_scope(fn0.low)
    # a Function stands for its outermost scope
    a2, l2 = frame_variables(fn0, addr)
    assert [v.name for v in a2] == ["n"] and [v.name for v in l2] == names


# --------------------------------------------------------------------------------------
# unit tests: location lists (every DW_LLE_* kind, .debug_loc base selection)
# --------------------------------------------------------------------------------------

class _FakeSecs:
    def __init__(self, secs):
        self._s = secs

    def get(self, name):
        return self._s.get(name)

    def upto(self, name, end):
        return self._s.get(name)


class _FakeDwarf:
    """Just what find_location_expr reads: sections, .debug_addr, the unit's attributes and
    the module (whose cache keeps the unit's loclists base), its byte order."""
    little = True
    byteorder = "little"

    def __init__(self, secs, addrs, attrs=None):
        from swk_plugin.cache import ModuleCache
        self.module = types.SimpleNamespace(cache=ModuleCache())
        self.secs = _FakeSecs(secs)
        self._addrs = addrs
        self._attrs = attrs or {}

    def address(self, cu, v):
        return self._addrs[v[1]]

    def unit_attrs(self, cu):
        return self._attrs

    def unit_sections(self, cu):
        return self.secs            # a unit of this file (DwarfInfo.unit_sections: a split unit's are its .dwo's)


class _FakeCU:
    def __init__(self, version, low_pc=0x1000):
        self.version = version
        self.addr_size = 8
        self.offsz = 4
        self.low_pc = low_pc
        self.offset = 0
        self.skeleton = None        # not a split unit (dwarf/dwo.py)


def _uleb(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def _lle(kind, *ops, expr=b""):
    return bytes([kind]) + b"".join(ops) + (_uleb(len(expr)) + expr if kind not in (0, 1, 6) else b"")


def test_loclists_dwarf5_all_kinds():
    from swk_plugin.locals.locations import find_location_expr
    q = lambda v: v.to_bytes(8, "little")
    body = b"".join([
        _lle(4, _uleb(0x0), _uleb(0x10), expr=b"\x50"),              # offset_pair from the CU base
        _lle(1, _uleb(1)),                                            # base_addressx -> 0x2000
        _lle(4, _uleb(0x0), _uleb(0x8), expr=b"\x51"),
        _lle(3, _uleb(2), _uleb(0x4), expr=b"\x52"),                  # startx_length 0x3000+4
        _lle(2, _uleb(3), _uleb(4), expr=b"\x53"),                    # startx_endx 0x4000-0x4010
        _lle(6, q(0x5000)),                                           # base_address
        _lle(4, _uleb(0x2), _uleb(0x6), expr=b"\x54"),
        _lle(7, q(0x6000), q(0x6004), expr=b"\x55"),                  # start_end
        _lle(8, q(0x7000), _uleb(2), expr=b"\x56"),                   # start_length
        _lle(5, expr=b"\x57"),                                        # default_location
        _lle(0),
    ])
    header = bytes(12)                                                # unit header (unused here)
    offsets = (4).to_bytes(4, "little")                               # one loclistx slot
    sec = header + offsets + body
    d = _FakeDwarf({".debug_loclists": sec}, {1: 0x2000, 2: 0x3000, 3: 0x4000, 4: 0x4010},
                   {0x8c: (0x17, 12)})
    cu = _FakeCU(5)
    for form, value in ((0x17, 16), (0x22, 0)):                      # sec_offset, loclistx 0
        at = lambda a: find_location_expr(d, cu, form, value, a)
        assert at(0x1008) == b"\x50"
        assert at(0x2004) == b"\x51"
        assert at(0x3003) == b"\x52" and at(0x3004) == b"\x57"
        assert at(0x400f) == b"\x53"
        assert at(0x5002) == b"\x54" and at(0x5001) == b"\x57"
        assert at(0x6000) == b"\x55"
        assert at(0x7001) == b"\x56"
        assert at(0x9999) == b"\x57"                                  # the default entry


def test_debug_loc_dwarf4_base_selection():
    from swk_plugin.locals.locations import find_location_expr
    q = lambda v: v.to_bytes(8, "little")
    ent = lambda lo, hi, e: q(lo) + q(hi) + len(e).to_bytes(2, "little") + e
    sec = (ent(0x0, 0x10, b"\x50")                                     # relative to the CU base 0x1000
           + q(0xFFFFFFFFFFFFFFFF) + q(0x8000)                        # base address selection
           + ent(0x4, 0x8, b"\x51")
           + ent(0x20, 0x20, b"\x52")                                 # empty except at entry pc
           + q(0) + q(0))
    d = _FakeDwarf({".debug_loc": sec}, {})
    cu = _FakeCU(4)
    at = lambda a, entry=None: find_location_expr(d, cu, 0x17, 0, a, entry)
    assert at(0x100f) == b"\x50" and at(0x1010) is None
    assert at(0x8004) == b"\x51" and at(0x8008) is None
    assert at(0x8020) is None and at(0x8020, entry=0x8020) == b"\x52"


def test_self_referencing_const_struct(tmp_path):
    """A struct qualified (const node *) while its own members are being read still prints
    whole when a variable has the qualified type."""
    suite.need_tool("gcc")
    from swk_plugin.elf.module import ElfModule
    from swk_plugin.locals import function_at, scopes_at, frame_variables, read_variable
    src = r"""
    struct node { int v; const struct node *next; };
    const struct node tail = {2, 0};
    int main(void) { const struct node head = {1, &tail}; return head.v + head.next->v; }
    """
    exe = _build(tmp_path, "selfref.c", src, ["-O0", "-g"])
    mod = ElfModule(str(exe))
    from swk_plugin.elf.symbols import module_symbols
    fn = function_at(mod, module_symbols(mod).by_name("main")[0].value)
    (scope,) = scopes_at(mod, fn.low)
    _args, (head,) = frame_variables(scope, fn.low)
    assert type_name(head.type) == "const struct node"
    inner = head.type.strip().fields[1].type.target         # the const node "next" points to
    assert type_name(inner) == "const struct node" and [f.name for f in inner.fields] == ["v", "next"]
    data = (1).to_bytes(4, "little") + bytes(4) + (0x4010).to_bytes(8, "little")
    vv = VarValue(head.type, data)
    assert format_value(vv, _mem(b"", 0)) == "{v = 1, next = 0x4010}"
