"""Locals and inline frames (issue 5): the corpus cases and the harness.

Programs ``tests/corpus/locals_c.c`` and ``tests/corpus/locals_cxx.cpp`` stop
at ``stop_here`` under a chain whose frames hold arguments and locals of
every kind (see the header of each source and tests/corpus/README.md,
"Locals and inline frames").  Each is built at -O0, -Og and -O2 with -g.

What GDB prints is read in the very session (live, or gdb on the same core)
where swk runs, frame by frame: frame N selected (gdb.Frame.select(), as
``frame N`` does), then ``info args`` /
``info locals`` (gdb's inline frames count as levels); the ``name = value``
lines are parsed by ``parse_var_lines``.  swk's side is
``swk-bt -full -json`` (or ``swk bt --core ... --json --full``) whose frames
carry ``args`` and ``locals``: lists of {"name", "type", "value"}.
``compare_locals`` gives every difference.

``API_SCRIPT`` is a gdb-Python probe of the walker-level API
(get_function_for_frame, frame_variables, get_local_variable_value) that
prints what swk returned beside what gdb reads for the same variable;
tests/test_locals.py asserts on it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from pathlib import Path
from typing import Sequence

import swk_testlib as T

#: gdb settings for both sides of every comparison: one line per variable.
GDB_SETTINGS = ("set print pretty off", "set width 0", "set height 0",
                "set backtrace past-main off")

#: swk's commands, as the feature defines them.
SWK_FULL_JSON = "swk-bt -full -json"
SWK_FULL_TEXT = "swk-bt -full"
CLI_FULL = ("--json", "--full")

#: what info args / info locals print instead of variables.
NO_VARS = ("No arguments.", "No locals.", "No symbol table info available.")

LOCALS_TAG = "SWKLOCALS "
API_TAG = "SWKAPI "
BEGIN, END = "SWK-LOCALS-BEGIN", "SWK-LOCALS-END"

#: the spec's return codes of getLocalVariableValue (glvv_*).
CODES = {"SUCCESS": 0, "EPARAM": -1, "EOUTOFSCOPE": -2, "EBUFFERSIZE": -3, "EUNKNOWN": -4}

O0 = ("-O0", "-g")
OG = ("-Og", "-g")
O2 = ("-O2", "-g")


# --------------------------------------------------------------------------
# cases
# --------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class LocalsCase:
    """A locals program + build flags.  ``chain``: gdb's frames top->bottom
    down to main as (function, type) with type "normal" or "inline" - the
    same at every optimisation level (checked by test_native_chain)."""
    id: str
    src: str
    cflags: tuple[str, ...]
    chain: tuple[tuple[str, str], ...]
    pre: tuple[str, ...] = ("break stop_here",)
    run_args: str = ""
    #: (function, source line marker, variable): a block of ``function`` the
    #: stop pc is not in (for EOUTOFSCOPE), when the build keeps the block.
    out_of_scope: tuple[str, str, str] | None = None
    timeout: float = 120

    @property
    def exe_name(self) -> str:
        return self.id.replace("/", "_")

    @property
    def opt(self) -> str:
        return self.cflags[0]

    @property
    def m32(self) -> bool:
        """An i386 build (of the same program and chain)."""
        return "-m32" in self.cflags

    def stop_cmds(self) -> list[str]:
        return [*self.pre, f"run {self.run_args}".rstrip()]


_C_CHAIN = (("stop_here", "normal"), ("inl_leaf", "inline"), ("inl_mid", "inline"),
            ("inline_host", "normal"), ("keep_regs", "normal"), ("blocks", "normal"),
            ("aggregates", "normal"), ("scalars", "normal"), ("main", "normal"))
_CXX_CHAIN = (("stop_here", "normal"), ("zoo::mix", "inline"), ("zoo::Ring<long, 3>::sum", "normal"),
              ("zoo::Dog::speak", "normal"), ("zoo::visit<double>", "normal"), ("main", "normal"))

#: the marker of a line inside the block of blocks() that the stop pc is not in
AFTER_BLOCK_MARKER = "int after = total * 2;"

LOCALS_CASES: list[LocalsCase] = [
    *(LocalsCase(f"locals-c-{tag}", "locals_c.c", cf, _C_CHAIN,
                 out_of_scope=("blocks", AFTER_BLOCK_MARKER, "after"))
      for tag, cf in (("O0g", O0), ("Og", OG), ("O2g", O2))),
    *(LocalsCase(f"locals-cxx-{tag}", "locals_cxx.cpp", cf, _CXX_CHAIN)
      for tag, cf in (("O0g", O0), ("Og", OG), ("O2g", O2))),
    # i386 (-m32): the same programs and chains, arguments on the stack, values in x87 and SSE
    *(LocalsCase(f"locals-c-m32-{tag}", "locals_c.c", (*cf, *T.m32_flags()), _C_CHAIN,
                 out_of_scope=("blocks", AFTER_BLOCK_MARKER, "after"))
      for tag, cf in (("O0g", O0), ("Og", OG), ("O2g", O2))),
    *(LocalsCase(f"locals-cxx-m32-{tag}", "locals_cxx.cpp", (*cf, *T.m32_flags()), _CXX_CHAIN)
      for tag, cf in (("O0g", O0), ("Og", OG), ("O2g", O2))),
]
LOCALS_BY_ID = {c.id: c for c in LOCALS_CASES}


# --------------------------------------------------------------------------
# gdb's side: info args / info locals of every frame, in gdb's Python
# --------------------------------------------------------------------------

_DUMP_SCRIPT = r'''
import gdb, json

_SWKL_TYPES = {}
for _n, _s in (("NORMAL_FRAME", "normal"), ("INLINE_FRAME", "inline"), ("SIGTRAMP_FRAME", "sigtramp"),
               ("TAILCALL_FRAME", "tailcall"), ("DUMMY_FRAME", "dummy"), ("ARCH_FRAME", "arch")):
    if hasattr(gdb, _n):
        _SWKL_TYPES[getattr(gdb, _n)] = _s

# the address classes info locals prints (gdb's iterate_block_locals)
_SWKL_LOCAL_CLASSES = set(getattr(gdb, _n) for _n in (
    "SYMBOL_LOC_CONST", "SYMBOL_LOC_LOCAL", "SYMBOL_LOC_REGISTER", "SYMBOL_LOC_STATIC",
    "SYMBOL_LOC_COMPUTED", "SYMBOL_LOC_OPTIMIZED_OUT") if hasattr(gdb, _n))


def swkl_symbols(frame):
    """(args, locals) of frame as gdb.Symbol lists, in the order info args /
    info locals print them: locals from the innermost block at the frame's
    pc out to the function's (or inlined function's) block; args of that
    function block, each looked up by name as info args does."""
    try:
        b = frame.block()
    except RuntimeError:
        return None, None
    args, locs = [], []
    while b is not None:
        for s in b:
            if s.addr_class in _SWKL_LOCAL_CLASSES and not s.is_argument:
                locs.append(s)
        if b.function is not None:
            for s in b:
                if s.is_argument:
                    try:
                        t = gdb.lookup_symbol(s.name, b, gdb.SYMBOL_VAR_DOMAIN)[0]
                    except gdb.error:
                        t = None
                    args.append(t if t is not None else s)
            break
        b = b.superblock
    return args, locs


def _swkl_cmd(cmd):
    try:
        return gdb.execute(cmd, to_string=True)
    except gdb.error as e:
        return "ERROR: %%s\n" %% e


def swk_locals_dump():
    frames = []
    try:
        f = gdb.newest_frame()
    except gdb.error as e:
        print(%(tag)r + json.dumps({"error": str(e)}))
        return
    level = 0
    while f is not None:
        d = {"level": level, "function": None, "type": None, "pc": None}
        try:
            d["function"] = f.name()
            d["type"] = _SWKL_TYPES.get(f.type(), str(f.type()))
            d["pc"] = int(f.pc())
        except gdb.error:
            pass
        f.select()          # = "frame N" (which prints the frame even to a string)
        d["args_text"] = _swkl_cmd("info args")
        d["locals_text"] = _swkl_cmd("info locals")
        a, l = swkl_symbols(f)
        d["arg_syms"] = None if a is None else [[s.print_name, str(s.type)] for s in a]
        d["local_syms"] = None if l is None else [[s.print_name, str(s.type)] for s in l]
        frames.append(d)
        try:
            f = f.older()
        except gdb.error:
            break
        level += 1
    gdb.newest_frame().select()
    print(%(tag)r + json.dumps({"frames": frames}))
'''


def _script_file(text: str, stem: str) -> Path:
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    path = T.BUILD / f"{stem}_{digest}.py"
    if not path.exists():
        T.BUILD.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(text)
        os.replace(tmp, path)
    return path


def dump_commands() -> list[str]:
    """gdb commands printing every frame's info args / info locals as one
    ``SWKLOCALS {json}`` line (with gdb's symbol types beside)."""
    return [f"source {_script_file(_DUMP_SCRIPT % {'tag': LOCALS_TAG}, '_gdb_locals')}",
            "python swk_locals_dump()"]


_ENTRY = re.compile(r"^([A-Za-z_$][\w$]*(?:@entry)?) = (.*)$")


def parse_var_lines(text: str) -> list[tuple[str, str]] | None:
    """``name = value`` entries of an ``info args`` / ``info locals`` output
    (or of the indented lines of one ``bt full`` frame).  An entry starts at
    the beginning of a line with ``identifier = ``; any other line continues
    the value before it.  [] for "No arguments." / "No locals."; None for
    "No symbol table info available." (no debug info)."""
    lines = [ln[8:] if ln.startswith(" " * 8) else ln for ln in text.splitlines()]
    body = [ln for ln in lines if ln.strip()]
    if not body:
        return []
    if len(body) == 1 and body[0].strip() in NO_VARS:
        return None if body[0].strip() == NO_VARS[2] else []
    res: list[list[str]] = []
    for ln in lines:
        m = _ENTRY.match(ln)
        if m:
            res.append([m.group(1), m.group(2)])
        elif res:
            res[-1][1] += "\n" + ln
        elif ln.strip():
            raise T.OutputError(f"unparsable variable line {ln!r} in:\n{text}")
    return [(n, v.rstrip("\n")) for n, v in res]


@dataclasses.dataclass
class GdbFrame:
    """One frame of gdb (inline frames included) with what info args /
    info locals printed.  ``args``/``locals`` are None when gdb has no symbol
    table for the frame.  ``arg_types``/``local_types``: (name, type) from
    gdb's symbols, in the same order."""
    level: int
    function: str | None
    type: str | None
    pc: int | None
    args: list[tuple[str, str]] | None
    locals: list[tuple[str, str]] | None
    arg_types: list[tuple[str, str]] | None
    local_types: list[tuple[str, str]] | None
    args_text: str
    locals_text: str


def parse_dump(output: str) -> list[GdbFrame]:
    for line in output.splitlines():
        if line.startswith(LOCALS_TAG):
            obj = json.loads(line[len(LOCALS_TAG):])
            if "error" in obj:
                raise T.OutputError(f"gdb locals dump failed: {obj['error']}\n{output[-3000:]}")
            res = []
            for d in obj["frames"]:
                res.append(GdbFrame(
                    d["level"], d["function"], d["type"], d["pc"],
                    parse_var_lines(d["args_text"]), parse_var_lines(d["locals_text"]),
                    None if d["arg_syms"] is None else [tuple(x) for x in d["arg_syms"]],
                    None if d["local_syms"] is None else [tuple(x) for x in d["local_syms"]],
                    d["args_text"], d["locals_text"]))
            return res
    raise T.OutputError(f"no {LOCALS_TAG.strip()} line in gdb output\n--- gdb output ---\n{output[-6000:]}")


def format_gdb_frames(frames: Sequence[GdbFrame]) -> str:
    out = []
    for f in frames:
        out.append(f"#{f.level} {f.function} [{f.type}] pc={T._hex(f.pc)}")
        for kind, vals in (("arg", f.args), ("local", f.locals)):
            if vals is None:
                out.append(f"    ({kind}s: no symbol table)")
                continue
            for n, v in vals:
                out.append(f"    {kind} {n} = {v}")
    return "\n".join(out)


# --------------------------------------------------------------------------
# running both sides
# --------------------------------------------------------------------------

def _swk_source() -> str:
    return f"source {T.GDB_INIT}"


def gdb_and_swk_locals(prog: Path, stop_cmds: Sequence[str], core: Path | None = None,
                       timeout: float = 180) -> tuple[list[GdbFrame], list[dict] | None, str]:
    """One gdb session: stop (or load the core), gdb's info args / info
    locals of every frame, then swk loaded and ``swk-bt -full -json``.
    gdb's side is read before gdb_init.py is sourced, so swk's unwinder
    plays no part in it.  Returns (gdb frames, swk threads or None, output)."""
    cmds = [*GDB_SETTINGS, *stop_cmds, *dump_commands(), _swk_source(), SWK_FULL_JSON]
    out = T.run_gdb(prog, cmds, core=core, timeout=timeout)
    gdb_frames = parse_dump(out)
    try:
        swk = T.parse_swk_json(out)
    except T.OutputError:
        swk = None
    return gdb_frames, swk, out


def gdb_locals(prog: Path, stop_cmds: Sequence[str], core: Path | None = None,
               timeout: float = 180) -> list[GdbFrame]:
    """gdb's side only."""
    out = T.run_gdb(prog, [*GDB_SETTINGS, *stop_cmds, *dump_commands()], core=core, timeout=timeout)
    return parse_dump(out)


def bt_full_texts(prog: Path, stop_cmds: Sequence[str], core: Path | None = None,
                  timeout: float = 180) -> tuple[str, str, str]:
    """(gdb's ``bt full``, swk's ``swk-bt -full``, whole output) from one session."""
    b1, e1, b2, e2 = BEGIN + "-GDB", END + "-GDB", BEGIN + "-SWK", END + "-SWK"
    cmds = [*GDB_SETTINGS, *stop_cmds, f"echo {b1}\\n", "bt full", f"echo {e1}\\n",
            _swk_source(), f"echo {b2}\\n", SWK_FULL_TEXT, f"echo {e2}\\n"]
    out = T.run_gdb(prog, cmds, core=core, timeout=timeout)

    def between(a, b):
        lines = out.splitlines()
        try:
            i, j = lines.index(a), lines.index(b)
        except ValueError:
            raise T.OutputError(f"markers {a}/{b} missing\n--- output ---\n{out[-6000:]}")
        return "\n".join(lines[i + 1:j])

    return between(b1, e1), between(b2, e2), out


_HEADER = re.compile(r"^#(\d+)\s")


def split_bt_full(text: str) -> list[tuple[str, list[str]]]:
    """``bt full`` text -> [(header line, [the lines after it])]; the closing
    ``Backtrace stopped: ...`` / ``(More stack frames follow...)`` lines are
    dropped."""
    res: list[tuple[str, list[str]]] = []
    for ln in text.splitlines():
        if _HEADER.match(ln):
            res.append((ln, []))
        elif ln.startswith(("Backtrace stopped", "(More stack frames follow")):
            continue
        elif res:
            res[-1][1].append(ln)
    return res


# --------------------------------------------------------------------------
# comparing
# --------------------------------------------------------------------------

OPT_OUT = "<optimized out>"
#: Values swk found where GDB prints <optimized out> (reported, not failures).
KNOWS_MORE: list[str] = []


def _swk_vars(frame: dict, key: str) -> list[tuple[str, str]] | None:
    vals = frame.get(key)
    if not isinstance(vals, list):
        return None
    res = []
    for v in vals:
        if not isinstance(v, dict):
            res.append((repr(v), "<not an object>"))
        else:
            res.append((v.get("name"), v.get("value")))
    return res


def _kind_of(g: GdbFrame) -> str:
    return {"inline": "inline", "sigtramp": "signal"}.get(g.type or "", "normal")


def compare_var_lists(tag: str, gdb_vals: list[tuple[str, str]] | None,
                      swk_vals: list[tuple[str, str]] | None) -> list[str]:
    """Differences between gdb's and swk's (name, value) lists of one frame."""
    if gdb_vals is None:      # gdb has no symbol table here: swk must show nothing
        if swk_vals:
            return [f"{tag}: gdb has no symbol table, swk printed {swk_vals!r}"]
        return []
    if swk_vals is None:
        return [f"{tag}: missing in swk's frame (gdb has {len(gdb_vals)})"]
    errs = []
    gn, sn = [n for n, _ in gdb_vals], [n for n, _ in swk_vals]
    if gn != sn:
        errs.append(f"{tag}: names {sn} != gdb's {gn}")
    for i, ((n, gv), (m, sv)) in enumerate(zip(gdb_vals, swk_vals)):
        if n != m:
            continue
        if gv == sv:
            continue
        if gv == OPT_OUT:
            # swk may know more than GDB: an argument's entry value from its caller's call
            # site that GDB 13 does not resolve (e.g. main's argv, called through a pointer)
            KNOWS_MORE.append(f"{tag} {n}: {sv!r} where gdb prints <optimized out>")
        elif sv == OPT_OUT:
            errs.append(f"{tag} {n}: swk says <optimized out>, gdb {gv!r}")
        else:
            errs.append(f"{tag} {n}: swk {sv!r} != gdb {gv!r}")
    return errs


def compare_locals(gdb_frames: Sequence[GdbFrame], swk_frames: Sequence[dict],
                   exact_count: bool = True) -> list[str]:
    """Every difference between gdb's frames (with info args / info locals)
    and swk's -full JSON frames, level by level: function name (after
    strip_params), kind (gdb's inline frames must be swk "inline" frames),
    then the args and locals lists (names, order, value strings).
    exact_count: swk has exactly gdb's frames (swk-bt in gdb hides the
    frames below main as gdb does); else swk may have more (the CLI)."""
    errs = []
    by_level = {}
    for f in swk_frames:
        by_level.setdefault(f.get("level"), f)
    levels = [f.get("level") for f in swk_frames]
    if levels != list(range(len(swk_frames))):
        errs.append(f"swk levels are not 0..{len(swk_frames) - 1}: {levels}")
    if exact_count and len(swk_frames) != len(gdb_frames):
        errs.append(f"swk has {len(swk_frames)} frames, gdb {len(gdb_frames)} (inline frames counted)")
    elif len(swk_frames) < len(gdb_frames):
        errs.append(f"swk has {len(swk_frames)} frames, fewer than gdb's {len(gdb_frames)}")
    for g in gdb_frames:
        s = by_level.get(g.level)
        tag = f"#{g.level} {g.function}"
        if s is None:
            errs.append(f"{tag}: no swk frame at this level")
            continue
        if not T.strict_same_name(s.get("function"), g.function):
            errs.append(f"{tag}: swk's frame is {s.get('function')!r} (kind {s.get('kind')!r})")
            continue
        if s.get("kind") != _kind_of(g):
            errs.append(f"{tag}: kind {s.get('kind')!r}, gdb's frame is {g.type!r}")
        errs += compare_var_lists(f"{tag} args", g.args, _swk_vars(s, "args"))
        errs += compare_var_lists(f"{tag} locals", g.locals, _swk_vars(s, "locals"))
    return errs


def compare_types(gdb_frames: Sequence[GdbFrame], swk_frames: Sequence[dict]) -> list[str]:
    """swk's "type" of each variable == str(gdb.Symbol.type) (gdb's own type
    name: ``u32_t``, ``int [5]``, ``int (*)(int, int)``, ``const zoo::Tag &``).
    Only where both list the same names."""
    errs = []
    by_level = {f.get("level"): f for f in swk_frames}
    for g in gdb_frames:
        s = by_level.get(g.level)
        if s is None:
            continue
        for key, gt in (("args", g.arg_types), ("locals", g.local_types)):
            sv = s.get(key)
            if gt is None or not isinstance(sv, list):
                continue
            st = [(v.get("name"), v.get("type")) for v in sv if isinstance(v, dict)]
            if [n for n, _ in st] != [n for n, _ in gt]:
                continue
            for (n, a), (_, b) in zip(st, gt):
                if a != b:
                    errs.append(f"#{g.level} {g.function} {key} {n}: swk type {a!r} != gdb {b!r}")
    return errs


def format_swk_frames(frames: Sequence[dict]) -> str:
    out = []
    for f in frames:
        out.append(f"#{f.get('level')} {f.get('function')} [{f.get('kind')}] pc={T._hex(f.get('pc'))}")
        for key in ("args", "locals"):
            vals = f.get(key)
            if not isinstance(vals, list):
                out.append(f"    ({key}: {vals!r})")
                continue
            for v in vals:
                if isinstance(v, dict):
                    out.append(f"    {key[:-1] if key == 'args' else 'local'} {v.get('name')} = "
                               f"{v.get('value')}   [{v.get('type')}]")
                else:
                    out.append(f"    {key} {v!r}")
    return "\n".join(out)


# --------------------------------------------------------------------------
# the walker-level API, probed from gdb's Python
# --------------------------------------------------------------------------

_API_SCRIPT = r'''
import gdb, json, struct

_SWKA_TAG = %(tag)r


def _swka_exc(e):
    return "%%s: %%s" %% (type(e).__name__, e)


def _swka_name(obj):
    """A readable name of whatever get_function_for_frame returns."""
    if obj is None:
        return None
    for attr in ("name", "pretty_name", "get_name", "getName"):
        v = getattr(obj, attr, None)
        if callable(v):
            try:
                v = v()
            except Exception:
                continue
        if isinstance(v, str):
            return v
    return str(obj)


def _swka_var_name(v):
    for attr in ("name", "get_name", "getName"):
        n = getattr(v, attr, None)
        if callable(n):
            try:
                n = n()
            except Exception:
                continue
        if isinstance(n, str):
            return n
    return repr(v)


def _swka_pack(val):
    """The bytes of a value gdb holds outside memory (registers, pieces,
    DW_OP_stack_value): scalars packed, arrays and structs put together
    element by element; None when that cannot be done (bitfields, long double)."""
    t = val.type.strip_typedefs()
    size = t.sizeof
    if t.code in (gdb.TYPE_CODE_INT, gdb.TYPE_CODE_ENUM, gdb.TYPE_CODE_BOOL, gdb.TYPE_CODE_CHAR,
                  gdb.TYPE_CODE_PTR):
        return (int(val) & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
    if t.code == gdb.TYPE_CODE_FLT and size in (4, 8):
        return struct.pack("<f" if size == 4 else "<d", float(val))
    if t.code == gdb.TYPE_CODE_ARRAY:
        lo, hi = t.range()
        parts = [_swka_pack(val[i]) for i in range(lo, hi + 1)]
        return None if any(p is None for p in parts) else b"".join(parts)
    if t.code == gdb.TYPE_CODE_STRUCT:
        buf = bytearray(size)
        for f in t.fields():
            if f.bitsize or not hasattr(f, "bitpos"):
                return None
            p = _swka_pack(val[f])
            if p is None:
                return None
            buf[f.bitpos // 8:f.bitpos // 8 + len(p)] = p
        return bytes(buf)
    return None


def _swka_gdb_bytes(val):
    """("value", hex) | ("optimized_out", None) | ("synthetic", None) | ("unknown", why)"""
    try:
        if val.is_optimized_out:
            return "optimized_out", None
        text = val.format_string()
        if "<synthetic pointer>" in text:
            return "synthetic", None
        if "<optimized out>" in text:
            return "optimized_out", None
        size = val.type.sizeof
        if val.address is not None:
            mem = gdb.selected_inferior().read_memory(int(val.address), size)
            return "value", bytes(mem).hex()
        data = _swka_pack(val)
        if data is None or len(data) != size:
            return "unknown", "a %%d-byte %%s not in memory" %% (size, val.type)
        return "value", data.hex()
    except Exception as e:
        return "unknown", _swka_exc(e)


def _swka_physical_gdb_frames():
    """[(gdb.Frame of the physical frame, innermost gdb.Frame sharing it, has_inline)]"""
    res = []
    f = gdb.newest_frame()
    top = None
    while f is not None:
        if top is None:
            top = f
        if f.type() != gdb.INLINE_FRAME:
            res.append((f, top, top != f))
            top = None
        f = f.older()
    return res


def swk_api_probe(spec_json):
    spec = json.loads(spec_json)
    out = {"frames": [], "checks": {}}
    try:
        from swk_plugin.backends.gdb.session import SESSION
        import swk_plugin.locals as L
        w = SESSION.walker()
        walk = w.walk_stack()
    except Exception as e:
        out["fatal"] = _swka_exc(e)
        print(_SWKA_TAG + json.dumps(out))
        return
    out["codes"] = {n: getattr(L, n, getattr(w, n, None)) for n in %(codes)r}
    out["walk_len"] = len(walk)
    phys = _swka_physical_gdb_frames()
    vars_by_frame = {}
    for i, (gf, inner, has_inline) in enumerate(phys):
        if i >= len(walk):
            break
        rec = {"i": i, "gdb_function": gf.name(), "has_inline": has_inline,
               "walk_name": getattr(walk[i], "name", None)}
        try:
            rec["function"] = _swka_name(w.get_function_for_frame(walk[i]))
        except Exception as e:
            rec["function_error"] = _swka_exc(e)
        try:
            args, locs = w.frame_variables(walk, i)
            args, locs = list(args), list(locs)
        except Exception as e:
            rec["variables_error"] = _swka_exc(e)
            out["frames"].append(rec)
            continue
        vars_by_frame[i] = args + locs
        rec["args"] = [_swka_var_name(v) for v in args]
        rec["locals"] = [_swka_var_name(v) for v in locs]
        gargs, glocs = swkl_symbols(gf)
        rec["gdb_args"] = None if gargs is None else [s.print_name for s in gargs]
        rec["gdb_locals"] = None if glocs is None else [s.print_name for s in glocs]
        rec["values"] = []
        if has_inline or gargs is None or rec["args"] != rec["gdb_args"] or rec["locals"] != rec["gdb_locals"]:
            out["frames"].append(rec)
            continue
        for v, sym in zip(args + locs, gargs + glocs):
            vr = {"name": _swka_var_name(v)}
            try:
                gv = gf.read_var(sym)
                vr["size"] = gv.type.sizeof
                vr["gdb"], vr["gdb_hex"] = _swka_gdb_bytes(gv)
            except Exception as e:
                vr["size"], vr["gdb"], vr["gdb_hex"] = None, "unknown", _swka_exc(e)
            size = vr["size"] or 0
            for key, bufsize in (("big", size + 64), ("exact", size), ("small", size - 1 if size else None)):
                if bufsize is None:
                    continue
                try:
                    code, data = w.get_local_variable_value(v, walk, i, bufsize)
                    vr[key] = [code, None if data is None else bytes(data).hex()]
                except Exception as e:
                    vr[key] = ["exception", _swka_exc(e)]
            rec["values"].append(vr)
        out["frames"].append(rec)

    checks = out["checks"]
    # EPARAM: a frame index past the walk; a variable of another function
    first = next(((i, vs[0]) for i, vs in sorted(vars_by_frame.items()) if vs), None)
    if first is not None:
        i, v = first
        for key, idx in (("past_walk", len(walk)), ("far_past_walk", len(walk) + 100)):
            try:
                checks[key] = [w.get_local_variable_value(v, walk, idx, 4096)[0], _swka_name(v)]
            except Exception as e:
                checks[key] = ["exception", _swka_exc(e)]
        other = next((j for j in sorted(vars_by_frame) if j != i
                      and phys[j][0].name() != phys[i][0].name()), None)
        if other is not None:
            try:
                checks["other_function"] = [w.get_local_variable_value(v, walk, other, 4096)[0],
                                            "%%s of %%s in frame %%d (%%s)" %% (_swka_var_name(v), phys[i][0].name(),
                                                                       other, phys[other][0].name())]
            except Exception as e:
                checks["other_function"] = ["exception", _swka_exc(e)]
    # EOUTOFSCOPE: a variable of the function, in a block the pc is not in
    oos = spec.get("out_of_scope")
    if oos:
        fn, line, name = oos
        k = next((i for i, (gf, _, _) in enumerate(phys) if gf.name() == fn), None)
        try:
            sal = gdb.decode_line("%%s:%%d" %% (spec["file"], line))[1][0]
            addr = int(sal.pc)
            scope = w.get_function_for_frame(walk[k])
            a2, l2 = L.frame_variables(scope, addr - walk[k].library.base)   # the engine is unbiased
            cand = [v for v in list(a2) + list(l2) if _swka_var_name(v) == name]
            block_there = gdb.block_for_pc(addr)
            has_block = any(s.name == name for s in block_there) if block_there is not None else False
            checks["out_of_scope"] = {"addr": addr, "gdb_has_block": has_block,
                                      "found": [_swka_var_name(v) for v in list(a2) + list(l2)]}
            if cand:
                checks["out_of_scope"]["code"] = w.get_local_variable_value(cand[0], walk, k, 4096)[0]
        except Exception as e:
            checks["out_of_scope"] = {"exception": _swka_exc(e)}
    print(_SWKA_TAG + json.dumps(out))
'''


def api_commands(case: LocalsCase) -> list[str]:
    """gdb commands (after the stop) that load swk and print one ``SWKAPI {json}`` line."""
    spec: dict = {"file": case.src}
    if case.out_of_scope:
        fn, marker, name = case.out_of_scope
        spec["out_of_scope"] = [fn, marker_line(case.src, marker), name]
    dump = _script_file(_DUMP_SCRIPT % {"tag": LOCALS_TAG}, "_gdb_locals")
    api = _script_file(_API_SCRIPT % {"tag": API_TAG, "codes": tuple(CODES)}, "_gdb_locals_api")
    return [f"source {dump}", _swk_source(), f"source {api}",
            f"python swk_api_probe({json.dumps(json.dumps(spec))})"]


def parse_api(output: str) -> dict:
    for line in output.splitlines():
        if line.startswith(API_TAG):
            return json.loads(line[len(API_TAG):])
    raise T.OutputError(f"no {API_TAG.strip()} line in gdb output\n--- gdb output ---\n{output[-6000:]}")


def marker_line(src: str, marker: str) -> int:
    for i, ln in enumerate((T.CORPUS / src).read_text().splitlines(), 1):
        if marker in ln:
            return i
    raise T.HarnessError(f"marker {marker!r} not in {src}")


# --------------------------------------------------------------------------
# per-session cache
# --------------------------------------------------------------------------

class LocalsCorpus:
    """Builds, cores and the sessions of each case, made once per test session."""

    def __init__(self):
        self._exe: dict[str, Path] = {}
        self._core: dict[str, Path] = {}
        self._live: dict[str, tuple] = {}
        self._gdb_core: dict[str, tuple] = {}
        self._api: dict[str, tuple] = {}

    def exe(self, case: LocalsCase) -> Path:
        if case.id not in self._exe:
            self._exe[case.id] = T.build([case.src], case.exe_name, case.cflags)
        return self._exe[case.id]

    def core(self, case: LocalsCase) -> Path:
        if case.id not in self._core:
            self._core[case.id] = T.make_core(self.exe(case), case.stop_cmds(), timeout=case.timeout)
        return self._core[case.id]

    def live(self, case: LocalsCase) -> tuple[list[GdbFrame], list[dict] | None, str]:
        """(gdb frames, swk threads, output) of one live session."""
        if case.id not in self._live:
            self._live[case.id] = gdb_and_swk_locals(self.exe(case), case.stop_cmds(), timeout=case.timeout)
        return self._live[case.id]

    def gdb_core(self, case: LocalsCase) -> tuple[list[GdbFrame], list[dict] | None, str]:
        """(gdb frames, swk threads, output) of one session on the core."""
        if case.id not in self._gdb_core:
            self._gdb_core[case.id] = gdb_and_swk_locals(self.exe(case), [], core=self.core(case),
                                                         timeout=case.timeout)
        return self._gdb_core[case.id]

    def api(self, case: LocalsCase) -> dict:
        """The API probe's result (parse_api) of one live session."""
        if case.id not in self._api:
            out = T.run_gdb(self.exe(case), [*GDB_SETTINGS, *case.stop_cmds(), *api_commands(case)],
                            timeout=case.timeout)
            try:
                self._api[case.id] = parse_api(out)
            except T.OutputError as e:
                self._api[case.id] = {"fatal": str(e)}
        return self._api[case.id]
