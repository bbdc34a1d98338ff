"""Locals and inline frames (issue 5) against real gdb.

For every case of locals_cases.LOCALS_CASES (locals_c.c / locals_cxx.cpp at
-O0, -Og, -O2, all -g):

  test_native_*            gdb's own side: the chain (inline frames
                           included), the parser of info args / info locals
                           agrees with gdb's symbols, known values at -O0,
                           live == core (no swk code involved)
  test_swk_locals[CASE-live|gdb-core|cli-core]
                           swk-bt -full -json (or swk bt --core --json --full)
                           frame by frame against gdb's info args / info
                           locals in the same session / on the same core:
                           same levels, names, kinds (gdb's inline frames are
                           swk "inline" frames), the same variables in the
                           same order with the very same value strings;
                           <optimized out> where gdb says so
  test_swk_types[CASE]     each variable's "type" is gdb's name of its type
  test_swk_bt_full_text    swk-bt -full == bt full below the frame headers (-O0)
  test_api_*               the walker API from gdb's Python: get_function_for_frame,
                           frame_variables, get_local_variable_value and its codes
"""

from __future__ import annotations

import re

import pytest

import locals_cases as LC
import swk_suite as S
import swk_testlib as T
from locals_cases import LOCALS_CASES, LocalsCase

pytestmark = [pytest.mark.corpus]

S.need_tool(T.GDB, "gdb")


@pytest.fixture(scope="session")
def lc():
    return LC.LocalsCorpus()


def _params(cases, modes):
    return [pytest.param(c, m, id=f"{c.id}-{m}") for c in cases for m in modes]


def _fail(msgs: list[str], context: str = "") -> None:
    text = "\n".join(msgs)
    if context:
        text += "\n--- context ---\n" + context[-8000:]
    pytest.fail(text, pytrace=False)


C_CASES = [c for c in LOCALS_CASES if c.src.endswith(".c")]
O0_CASES = [c for c in LOCALS_CASES if c.opt == "-O0"]


def _gdb_side(lc, case: LocalsCase, mode: str) -> list[LC.GdbFrame]:
    return lc.live(case)[0] if mode == "live" else lc.gdb_core(case)[0]


# --------------------------------------------------------------------------
# gdb's own side (no swk code): the corpus and the parser are right
# --------------------------------------------------------------------------

@pytest.mark.native
@pytest.mark.parametrize("case,mode", _params(LOCALS_CASES, ["live", "core"]))
def test_native_chain(lc, case: LocalsCase, mode: str):
    """gdb stops in stop_here under the known chain, inline frames included,
    and every frame has its symbol table."""
    frames = _gdb_side(lc, case, mode)
    got = [(T.strip_params(f.function), f.type) for f in frames]
    errs = []
    if got != list(case.chain):
        errs.append(f"gdb's chain {got}\n  != expected {list(case.chain)}")
    for f in frames:
        if f.args is None or f.locals is None:
            errs.append(f"#{f.level} {f.function}: no symbol table")
    if errs:
        _fail(errs, LC.format_gdb_frames(frames))


@pytest.mark.native
@pytest.mark.parametrize("case,mode", _params(LOCALS_CASES, ["live", "core"]))
def test_native_parse(lc, case: LocalsCase, mode: str):
    """The names parsed from info args / info locals are exactly the
    symbols gdb's Python lists for the frame, in the same order (the
    parser splits entries right), and every value is one line."""
    frames = _gdb_side(lc, case, mode)
    errs = []
    for f in frames:
        for what, vals, syms, text in (("args", f.args, f.arg_types, f.args_text),
                                       ("locals", f.locals, f.local_types, f.locals_text)):
            if vals is None or syms is None:
                continue
            if [n for n, _ in vals] != [n for n, _ in syms]:
                errs.append(f"#{f.level} {f.function} {what}: parsed {[n for n, _ in vals]} "
                            f"!= gdb symbols {[n for n, _ in syms]}\n{text}")
            for n, v in vals:
                if "\n" in v or not v:
                    errs.append(f"#{f.level} {f.function} {what} {n}: value {v!r} not one line")
    if errs:
        _fail(errs)


#: What gdb prints at -O0 for a selection of the variables (no addresses):
#: the corpus really covers the kinds the feature must print.  Addresses
#: (0x + 6 or more hex digits) are masked as ADDR.
KNOWN_O0 = {
    "locals-c-O0g": {
        ("stop_here", "args"): [("code", "139351")],
        ("stop_here", "locals"): [],
        ("inl_leaf", "args"): [("p", "ADDR <g_int>"), ("k", "46039")],
        ("inl_leaf", "locals"): [("sq", "139351"), ("r", "0")],
        ("inl_mid", "args"): [("base", "23019")],
        ("inline_host", "locals"): [("host_local", "23019"), ("r", "0")],
        ("keep_regs", "locals"): [("a", "1366"), ("b", "21650"), ("c", "2485"), ("us", "2496"), ("r", "0")],
        ("blocks", "locals"): [("x", "455"), ("x", "255"), ("y", "355"), ("counter", "11"),
                               ("label", 'ADDR "static-label"'), ("x", "155"), ("total", "0")],
        ("aggregates", "locals"): [
            ("arr", "{1, 2, 3, 4, 5}"),
            ("cbuf", "\"abc\", '\\000' <repeats 12 times>"),
            ("word", '"hello"'),
            ("grid", "{{1, 2, 3}, {4, 5, 6}}"),
            ("recs", '{{name = "ab\\000\\000\\000\\000\\000", vals = {1, 2, 3}}, '
                     '{name = "cdefg\\000\\000", vals = {-4, -5, -6}}}'),
            ("pt", "{x = -7, y = 8}"),
            ("un", '{i = 1069547520, f = 1.5, bytes = "\\000\\000\\300?"}'),
            ("nested", '{id = 99, in = {s = -3, tag = "xy\\000"}, pts = {{x = 1, y = -1}, {x = 2, y = -2}}, '
                       'weight = 0.25}'),
            ("zeros", "{0 <repeats 12 times>}"),
            # these runs are in the C locale: every byte above 0x7f is its own escape (the
            # UTF-8 rules, incomplete sequences included, are test_locals_engine's "chars")
            ("tail_valid", '"hihihih\\302"'),
            ("tail_five", '"hi\\201hi\\370\\210\\200"'),
            ("tail_rep", "'a' <repeats 12 times>, \"\\340\\200\""),
            ("tail_mid", '"hi\\371\\223\\000\\000\\000"'),
            ("tail_bad", '"ok\\340A\\364\\220"'),
            ("tail_utf", '"x\\303\\251\\303\\251\\342\\202"'),
            # a one-byte bound of 199 / 254: an array, not an address
            ("big200", "{" + ", ".join(str(k % 7) for k in range(200)) + "}"),
            ("bytes255", None),
            ("res", "0")],
        ("scalars", "args"): [
            ("sc", "-5 '\\373'"), ("uc", "200 '\\310'"), ("s", "-1234"), ("us", "54321"), ("i", "-100000"),
            ("u", "3000000000"), ("l", "-1234567890123"), ("ul", "12345678901234567890"),
            ("ll", "-9876543210987"), ("ull", "18000000000000000000"), ("ch", "81 'Q'"), ("flag", "true"),
            ("col", "BLUE"), ("f", "1.5"), ("d", "2.7182818279999998"), ("ld", "3.25")],
        ("scalars", "locals"): [
            ("ci", "7"), ("vi", "-8"), ("td", "3735928559"), ("tcol", "GREEN"), ("weird", "7"),
            ("pm", "(P_R | P_X)"), ("pm_bad", "(P_W | unknown: 0x8)"),
            ("str", 'ADDR "hello, swk"'), ("nul", "0x0"),
            ("gm", 'ADDR <g_msg> "global message"'), ("ip", "ADDR <g_int>"),
            ("dp", "ADDR <g_dbl>"), ("vp", "0x0"), ("fp", "ADDR <add_fn>"),
            ("fp2", "ADDR <mul_fn>"), ("no", "false"), ("nl", "10 '\\n'"), ("hi", "254 '\\376'"),
            ("neg", "-2.5"), ("tenth", "0.10000000000000001"), ("third", "0.333333333333333333342"),
            ("o", '{id = 7, in = {s = 21, tag = "ok\\000"}, pts = {{x = 3, y = 4}, {x = 5, y = 6}}, weight = 2.5}'),
            ("pt", "{x = 11, y = -12}"), ("n", '{i = 1094861636, f = 12.1414223, bytes = "DCBA"}'),
            ("r", '{name = "swk\\000\\000\\000\\000", vals = {10, 20, 30}}'), ("fl", "{a = 5, b = 17, c = -3}"),
            ("res", "0")],
        ("main", "args"): [("argc", "1"), ("argv", None)],
        ("main", "locals"): [("status", "41"), ("out", "0")],
    },
    "locals-cxx-O0g": {
        ("stop_here", "args"): [("code", "187")],
        ("zoo::mix", "args"): [("b", "7"), ("a", "60")],
        ("zoo::mix", "locals"): [("prod", "187"), ("got", "0")],
        ("zoo::Ring<long, 3>::sum", "args"): [("this", None)],
        ("zoo::Ring<long, 3>::sum", "locals"): [("acc", "60"), ("last", "7"), ("res", "0")],
        ("zoo::Dog::speak", "args"): [("this", None), ("times", "2"),
                                      ("extra", "@ADDR: {code = 84 'T', weight = 77}"), ("counter", "@ADDR: 5")],
        ("zoo::Dog::speak", "locals"): [
            ("ring", "{items = {10, 20, 30}, head = 2}"), ("rref", "@ADDR: {items = {10, 20, 30}, head = 2}"),
            ("k", "zoo::Kind::Eel"), ("wc", "87 L'W'"), ("c16", "66 u'B'"), ("c32", "67 U'C'"), ("got", "0")],
        ("zoo::visit<double>", "args"): [
            ("scale", "1.5"),
            ("animal", "@ADDR: {_vptr.Animal = ADDR <vtable for zoo::Dog+16>, legs_ = 4, kind_ = zoo::Kind::Dog, "
                       "name_ = ADDR \"rex\", tag_ = {code = 90 'Z', weight = 12}}")],
        ("zoo::visit<double>", "locals"): [
            ("visits", "4"), ("tag", "{code = 84 'T', weight = 77}"), ("counter", "5"), ("base", "100"),
            ("add", "{__base = 100, __counter = @ADDR}"), ("result", "0")],
        ("main", "args"): [("argc", "1")],
        ("main", "locals"): [
            ("dog", "{<zoo::Animal> = {_vptr.Animal = ADDR <vtable for zoo::Dog+16>, legs_ = 4, "
                    "kind_ = zoo::Kind::Dog, name_ = ADDR \"rex\", tag_ = {code = 90 'Z', weight = 12}}, "
                    "good_ = true, tricks_ = {3, 1, 4}}"),
            ("ref", None), ("ptr", None), ("yes", "true"), ("out", "0")],
    },
}


def _mask_stack(v: str) -> str:
    return re.sub(r"0x[0-9a-f]{6,}", "ADDR", v)


@pytest.mark.native
@pytest.mark.parametrize("case", [LC.LOCALS_BY_ID[k] for k in KNOWN_O0], ids=list(KNOWN_O0))
def test_native_known_values(lc, case: LocalsCase):
    """What gdb prints at -O0 (None: any value; addresses masked as ADDR)."""
    frames = lc.live(case)[0]
    errs = []
    for (fn, what), want in KNOWN_O0[case.id].items():
        f = next((f for f in frames if T.strip_params(f.function) == fn), None)
        if f is None:
            errs.append(f"no frame {fn}")
            continue
        got = f.args if what == "args" else f.locals
        if [n for n, _ in got] != [n for n, _ in want]:
            errs.append(f"{fn} {what}: names {[n for n, _ in got]} != {[n for n, _ in want]}")
            continue
        for (n, v), (_, w) in zip(got, want):
            if w is None:
                continue
            if _mask_stack(v) != w:
                errs.append(f"{fn} {what} {n}: gdb prints {v!r}, the corpus expects {w!r}")
    if errs:
        _fail(errs, LC.format_gdb_frames(frames))


@pytest.mark.native
@pytest.mark.parametrize("case", LOCALS_CASES, ids=[c.id for c in LOCALS_CASES])
def test_native_core_matches_live(lc, case: LocalsCase):
    """gdb prints the same values on the core as on the live process (values
    are deterministic; ASLR is off)."""
    live, core = lc.live(case)[0], lc.gdb_core(case)[0]
    a = [(f.function, f.type, f.args, f.locals) for f in live]
    b = [(f.function, f.type, f.args, f.locals) for f in core]
    if a != b:
        _fail([f"{case.id}: gdb's locals differ between live and core"],
              "live:\n" + LC.format_gdb_frames(live) + "\ncore:\n" + LC.format_gdb_frames(core))


# --------------------------------------------------------------------------
# swk -full against gdb
# --------------------------------------------------------------------------

def _without_dumps(out: str) -> str:
    return "\n".join(ln for ln in out.splitlines() if not ln.startswith((LC.LOCALS_TAG, LC.API_TAG)))


def _one_thread(swk_threads, out: str) -> list[dict]:
    out = _without_dumps(out)
    if swk_threads is None:
        _fail(["swk printed no JSON line"], out)
    if len(swk_threads) != 1:
        _fail([f"expected one thread, swk printed {len(swk_threads)}"], out)
    frames = swk_threads[0].get("frames")
    if not isinstance(frames, list):
        _fail(["swk's thread has no frames list"], out)
    return frames


@pytest.mark.swk
@pytest.mark.parametrize("case,mode", _params(LOCALS_CASES, ["live", "gdb-core", "cli-core"]))
def test_swk_locals(lc, case: LocalsCase, mode: str):
    if mode == "live":
        gdb_frames, swk, out = lc.live(case)
        exact = True
    elif mode == "gdb-core":
        gdb_frames, swk, out = lc.gdb_core(case)
        exact = True
    else:
        gdb_frames = lc.gdb_core(case)[0]
        p = T.run_swk_cli(["bt", "--core", lc.core(case), "--exe", lc.exe(case), *LC.CLI_FULL],
                          timeout=case.timeout)
        out = p.stdout
        try:
            swk = T.parse_swk_json(out)
        except T.OutputError:
            swk = None
        if swk is not None and p.returncode != 0:
            _fail([f"swk_plugin exited {p.returncode}"], out)
        exact = False       # the CLI shows the frames below main too
    frames = _one_thread(swk, out)
    errs = LC.compare_locals(gdb_frames, frames, exact_count=exact)
    if errs:
        _fail(errs, "gdb:\n" + LC.format_gdb_frames(gdb_frames) + "\n--- swk ---\n"
              + LC.format_swk_frames(frames))


@pytest.mark.swk
@pytest.mark.parametrize("case", LOCALS_CASES, ids=[c.id for c in LOCALS_CASES])
def test_swk_types(lc, case: LocalsCase):
    """Every variable swk prints carries gdb's name of its type."""
    gdb_frames, swk, out = lc.live(case)
    frames = _one_thread(swk, out)
    errs = []
    for f in frames[:len(gdb_frames)]:
        for key in ("args", "locals"):
            for v in f.get(key) or []:
                if not isinstance(v, dict) or set(v) < {"name", "type", "value"}:
                    errs.append(f"#{f.get('level')} {f.get('function')} {key}: {v!r} lacks name/type/value")
    errs += LC.compare_types(gdb_frames, frames)
    if errs:
        _fail(errs, LC.format_swk_frames(frames))


@pytest.mark.swk
@pytest.mark.parametrize("case", O0_CASES, ids=[c.id for c in O0_CASES])
def test_swk_bt_full_text(lc, case: LocalsCase):
    """swk-bt -full prints, below each frame header, the very lines of gdb's
    bt full (8-space indented ``name = value`` lines, "No locals.")."""
    gdb_text, swk_text, out = LC.bt_full_texts(lc.exe(case), case.stop_cmds(), timeout=case.timeout)
    g, s = LC.split_bt_full(gdb_text), LC.split_bt_full(swk_text)
    errs = []
    if not g:
        errs.append("gdb's bt full printed no frames")
    if len(s) != len(g):
        errs.append(f"swk-bt -full printed {len(s)} frames, bt full {len(g)}")
    for i, ((gh, gl), (sh, sl)) in enumerate(zip(g, s)):
        if gl != sl:
            errs.append(f"frame {i}:\n  gdb: {gh}\n" + "\n".join(f"    | {x}" for x in gl)
                        + f"\n  swk: {sh}\n" + "\n".join(f"    | {x}" for x in sl))
    if errs:
        _fail(errs, "--- bt full ---\n" + gdb_text + "\n--- swk-bt -full ---\n" + swk_text)


# --------------------------------------------------------------------------
# the walker API from gdb's Python
# --------------------------------------------------------------------------

def _api(lc, case: LocalsCase) -> dict:
    res = lc.api(case)
    if "fatal" in res:
        _fail([f"the API probe could not start: {res['fatal']}"])
    return res


@pytest.mark.swk
@pytest.mark.parametrize("case", C_CASES, ids=[c.id for c in C_CASES])
def test_api_codes(lc, case: LocalsCase):
    """SUCCESS=0, EPARAM=-1, EOUTOFSCOPE=-2, EBUFFERSIZE=-3, EUNKNOWN=-4 exist
    (in swk_plugin.locals or on the walker)."""
    res = _api(lc, case)
    assert res["codes"] == LC.CODES, res["codes"]


@pytest.mark.swk
@pytest.mark.parametrize("case", C_CASES, ids=[c.id for c in C_CASES])
def test_api_function_for_frame(lc, case: LocalsCase):
    """get_function_for_frame(walk[i]) is the function that made physical
    frame i (gdb's non-inline frame), also where inline frames sit on it."""
    res = _api(lc, case)
    errs = []
    if not res["frames"]:
        errs.append("no frames probed")
    for rec in res["frames"]:
        if "function_error" in rec:
            errs.append(f"walk[{rec['i']}]: {rec['function_error']}")
        elif not T.strict_same_name(rec.get("function"), rec["gdb_function"]):
            errs.append(f"walk[{rec['i']}]: function {rec.get('function')!r} != gdb {rec['gdb_function']!r}")
    if errs:
        _fail(errs)


@pytest.mark.swk
@pytest.mark.parametrize("case", C_CASES, ids=[c.id for c in C_CASES])
def test_api_frame_variables(lc, case: LocalsCase):
    """frame_variables(walk, i) -> (args, locals) names as gdb's info args /
    info locals list them (frames without inline frames on them)."""
    res = _api(lc, case)
    errs = []
    for rec in res["frames"]:
        if "variables_error" in rec:
            errs.append(f"walk[{rec['i']}] {rec['gdb_function']}: {rec['variables_error']}")
            continue
        if rec["has_inline"]:
            continue
        for k in ("args", "locals"):
            if rec.get(k) != rec.get("gdb_" + k):
                errs.append(f"walk[{rec['i']}] {rec['gdb_function']} {k}: {rec.get(k)} != gdb {rec.get('gdb_' + k)}")
    if errs:
        _fail(errs)


def _value_records(res):
    for rec in res["frames"]:
        for vr in rec.get("values", []):
            yield rec, vr


@pytest.mark.swk
@pytest.mark.parametrize("case", C_CASES, ids=[c.id for c in C_CASES])
def test_api_values(lc, case: LocalsCase):
    """get_local_variable_value(var, walk, i, size): SUCCESS with the very
    bytes gdb reads (buffer of the exact size or larger); EUNKNOWN where gdb
    has the variable (or a part of it) optimized out."""
    res = _api(lc, case)
    errs = []
    n_ok = n_opt = 0
    for rec, vr in _value_records(res):
        tag = f"walk[{rec['i']}] {rec['gdb_function']} {vr['name']}"
        for key in ("big", "exact"):
            got = vr.get(key)
            if got is None:
                continue
            code, data = got
            if vr["gdb"] == "value":
                if code != LC.CODES["SUCCESS"] or data != vr["gdb_hex"]:
                    errs.append(f"{tag} [{key} buffer]: ({code}, {data}) != (0, gdb {vr['gdb_hex']})")
                else:
                    n_ok += 1
            elif vr["gdb"] == "optimized_out":
                if code == LC.CODES["EUNKNOWN"]:
                    n_opt += 1
                elif code != LC.CODES["SUCCESS"]:
                    errs.append(f"{tag} [{key} buffer]: gdb has it <optimized out>, swk ({code}, {data})")
                else:   # an entry value GDB does not resolve: swk knows more (see KNOWS_MORE)
                    LC.KNOWS_MORE.append(f"{tag}: swk ({code}, {data}), gdb <optimized out>")
    if not n_ok:
        errs.append("no variable was read successfully")
    if errs:
        _fail(errs)


@pytest.mark.swk
@pytest.mark.parametrize("case", C_CASES, ids=[c.id for c in C_CASES])
def test_api_ebuffersize(lc, case: LocalsCase):
    """A buffer one byte too small: EBUFFERSIZE."""
    res = _api(lc, case)
    errs, n = [], 0
    for rec, vr in _value_records(res):
        if vr["gdb"] != "value" or "small" not in vr:
            continue
        n += 1
        if vr["small"][0] != LC.CODES["EBUFFERSIZE"]:
            errs.append(f"walk[{rec['i']}] {rec['gdb_function']} {vr['name']} ({vr['size']} bytes, "
                        f"buffer {vr['size'] - 1}): {vr['small']}")
    if not n:
        errs.append("no variable probed")
    if errs:
        _fail(errs)


@pytest.mark.swk
@pytest.mark.parametrize("case", C_CASES, ids=[c.id for c in C_CASES])
def test_api_eparam(lc, case: LocalsCase):
    """A frame index past the walk, or a variable of another function: EPARAM."""
    res = _api(lc, case)
    checks = res["checks"]
    errs = []
    for key in ("past_walk", "far_past_walk", "other_function"):
        if key not in checks:
            errs.append(f"{key}: not probed (no variables?)")
        elif checks[key][0] != LC.CODES["EPARAM"]:
            errs.append(f"{key}: {checks[key]}")
    if errs:
        _fail(errs)


@pytest.mark.swk
@pytest.mark.parametrize("case", C_CASES, ids=[c.id for c in C_CASES])
def test_api_eoutofscope(lc, case: LocalsCase):
    """A variable of blocks() from a block the stop pc is not in (found with
    frame_variables(function, pc inside that block)): EOUTOFSCOPE."""
    res = _api(lc, case)
    oos = res["checks"].get("out_of_scope")
    if oos is None:
        _fail(["out-of-scope check not probed"])
    if "exception" in oos:
        _fail([f"out-of-scope probe raised {oos['exception']}"])
    if not oos["gdb_has_block"]:
        S.toolchain_quirk(f"{case.id}: the compiler left no block with 'after' at its line, so there "
                          "is no out-of-scope variable to ask for")
    if "code" not in oos:
        _fail([f"frame_variables(function, {oos['addr']:#x}) did not list 'after': {oos['found']}"])
    assert oos["code"] == LC.CODES["EOUTOFSCOPE"], oos
