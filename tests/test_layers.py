"""The shape of swk_plugin, checked: layers that import one way, no module over 800 lines,
no instruction-set fact (x86-64's or AArch64's) outside swk_plugin/arch/, back-ends independent of each other, no
cache hung on another module's objects (docs/design.md has the map).  And the architecture kit's
interface (issue 26): nothing outside arch/ names an architecture, probes an Architecture or its
kits with getattr/hasattr, or reads a hook arch/base.py does not state.

Read from the source with ast, so these hold for code paths no other test runs.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "swk_plugin"

#: Layers, lowest first: a module may import its own layer and those below, never above.
LAYERS = [
    ("base", ["errors", "rule", "cache", "frame", "venv", "__init__"]),
    ("arch", ["arch"]),
    ("formats", ["elf", "dwarf"]),
    ("procstate", ["procstate"]),
    ("linux", ["linux"]),
    ("services", ["unwind", "analysis", "symlookup", "locals", "jit", "interp"]),
    ("steppers", ["stepper", "steppergroup", "steppers"]),
    ("walker", ["walker"]),
    ("display", ["display", "format", "options", "lldbformat", "lldblines", "stream", "merge", "flamegraph",
                 "sourcelines", "pyframes"]),
    ("frontends", ["frontend"]),
    ("backends", ["backends", "cli", "__main__"]),   # the command line is the core back-end's front end
]
LAYER_OF = {name: i for i, (_layer, names) in enumerate(LAYERS) for name in names}
MAX_LINES = 800

#: x86-64 and i386 register names and the byte patterns of their opcodes, outside comments and docstrings.
X86_NAMES = re.compile(r"\b(rip|rsp|rbp|rax|rbx|rcx|rdx|rsi|rdi|r(?:8|9|1[0-5])|eflags|xmm\d+|st\d|"
                       r"eip|esp|ebp|eax|ebx|ecx|edx|esi|edi)\b")
#: AArch64 register names, pointer-authentication instructions and registers, the vDSO's trampoline.
A64_NAMES = re.compile(r"\b([xw](?:[12]?\d|30)|paciasp|autiasp|pacibsp|autibsp|pauth_[cd]mask|"
                       r"__kernel_rt_sigreturn|ra_sign_state)\b")
#: Where function-level imports of swk's own modules are deliberate (not to dodge cycles):
#: deferring work until a debugger needs it.
LAZY_IMPORTS_OK = {
    "backends/gdb/__init__.py": "install() is called by gdb_init.py once gdb is importable",
    "backends/lldb/__init__.py": "install() runs inside LLDB only",
    "backends/gdb/prewarm.py": "the walk's modules are imported at the first objfile, not at load",
    "walker.py": "Walker.new_walker(pid=) is the spec's signature: the ptrace back-end, only when asked",
    "__init__.py": "swk_plugin.walk_self(): the walker and ptrace back-end only when called",
    "cli.py": "`swk bt --core` (a fresh process each time) imports neither the ptrace back-end nor the profiler",
    "frontend.py": "Python frames' modules (pyframes, interp/: ~12 ms) only for -py, not every command line",
    "backends/gdb/pyframes.py": "CPython's readers (interp/) at GDB's first bt, not when swk is sourced",
    "backends/gdb/procstate.py": "the core reader only for a core loaded in GDB, not when swk is sourced",
}
#: The only imports that go up a layer: entry points the spec (newWalker(pid), newWalker())
#: and the issue (swk_plugin.walk_self) put below the back-ends they open.  Each must be a
#: function-level import (nothing is imported upward when the module loads).
UPWARD_OK = {
    ("walker.py", "backends"): "Walker.new_walker(pid=...) / new_walker(): spec's ProcDebug / ProcSelf",
    ("__init__.py", "backends"): "swk_plugin.walk_self(): the package's entry point for ProcSelf",
}


def modules():
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).as_posix()
        yield rel, path, ast.parse(path.read_text(), str(path))


def top_name(rel):
    first = rel.split("/", 1)[0]
    return first[:-3] if first.endswith(".py") else first


def resolve(rel, node):
    """The swk_plugin top-level name an import refers to, or None (stdlib, third party)."""
    if isinstance(node, ast.ImportFrom):
        if node.level == 0:
            mod = node.module or ""
            return mod.split(".")[1] if mod.startswith("swk_plugin.") else None
        parts = rel.split("/")[:-1]
        up = node.level - 1
        base = parts[:len(parts) - up] if up else parts
        target = base + (node.module.split(".") if node.module else [])
        if not target:                      # "from .. import x" at the top: x itself
            return node.names[0].name
        return target[0]
    for alias in node.names:
        if alias.name.startswith("swk_plugin."):
            return alias.name.split(".")[1]
    return None


def imports(tree):
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node


def test_every_module_has_a_layer():
    missing = sorted({top_name(rel) for rel, _p, _t in modules()} - set(LAYER_OF))
    assert not missing, f"modules with no layer in tests/test_layers.py: {missing}"


def test_layers_import_one_way():
    bad = []
    for rel, _path, tree in modules():
        mine = LAYER_OF[top_name(rel)]
        for node in imports(tree):
            target = resolve(rel, node)
            if target is None or target not in LAYER_OF:
                continue
            if LAYER_OF[target] > mine:
                if (rel, target) in UPWARD_OK and node.col_offset > 0:
                    continue            # a function-level import into an entry point (above)
                bad.append(f"{rel}:{node.lineno} imports {target} "
                           f"({LAYERS[LAYER_OF[target]][0]} is above {LAYERS[mine][0]})")
    assert not bad, "\n".join(bad)


def test_backends_import_nothing_from_each_other():
    bad = []
    for rel, _path, tree in modules():
        if not rel.startswith("backends/"):
            continue
        mine = rel.split("/")[1]
        for node in imports(tree):
            if isinstance(node, ast.ImportFrom) and node.level >= 2 and (node.module or "").split(".")[0] in (
                    "gdb", "lldb", "core") and node.level == 2 and not rel.startswith(f"backends/{node.module}"):
                bad.append(f"{rel}:{node.lineno} imports backends.{node.module}")
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith(
                    "swk_plugin.backends.") and not node.module.startswith(f"swk_plugin.backends.{mine}"):
                bad.append(f"{rel}:{node.lineno} imports {node.module}")
    assert not bad, "\n".join(bad)


def test_formats_and_analysis_import_nothing_from_steppers():
    bad = [f"{rel}:{n.lineno}" for rel, _p, tree in modules()
           if top_name(rel) in ("analysis", "dwarf", "elf", "unwind", "linux", "arch", "jit", "interp")
           for n in imports(tree) if resolve(rel, n) in ("steppers", "stepper", "steppergroup", "walker")]
    assert not bad, bad


def test_no_function_level_imports_of_swk_modules():
    """Imports inside functions only where a deferral is deliberate (LAZY_IMPORTS_OK)."""
    bad = []
    for rel, _path, tree in modules():
        if rel in LAZY_IMPORTS_OK:
            continue
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)) and (
                        getattr(node, "level", 0) > 0 or resolve(rel, node) is not None):
                    bad.append(f"{rel}:{node.lineno}")
    assert not bad, "function-level imports of swk modules: " + ", ".join(bad)


def test_no_module_over_800_lines():
    big = [f"{rel}: {n}" for rel, path, _t in modules()
           if (n := len(path.read_text().splitlines())) > MAX_LINES]
    assert not big, big


def _code_text(path):
    """The source without comments and docstrings (names in prose are fine)."""
    tree = ast.parse(path.read_text())
    doc_lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant) \
                    and isinstance(first.value.value, str):
                doc_lines.update(range(first.lineno, first.end_lineno + 1))
    out = []
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if i in doc_lines:
            continue
        out.append((i, line.split("#", 1)[0]))
    return out


def test_no_x86_register_names_or_opcodes_outside_arch():
    bad = []
    for rel, path, _tree in modules():
        if rel.startswith("arch/"):
            continue
        for i, code in _code_text(path):
            m = X86_NAMES.search(code)
            if m:
                bad.append(f"{rel}:{i}: {m.group(0)!r}: {code.strip()[:80]}")
            if re.search(r'b"\\x(?:f3\\x0f\\x1e\\xfa|55|48\\x89|ff\\x25|e8)', code):
                bad.append(f"{rel}:{i}: opcode bytes: {code.strip()[:80]}")
    assert not bad, "\n".join(bad)


#: Web addresses ("www.w3.org" holds no register w3).
_URL = re.compile(r"[a-z]+://\S+")


def test_no_aarch64_register_names_or_opcodes_outside_arch():
    """Issue 15: what AArch64 is (x0-x30, pointer authentication, its trampoline) is arch/aarch64's;
    the rest of swk asks the Architecture."""
    bad = []
    for rel, path, _tree in modules():
        if rel.startswith("arch/"):
            continue
        for i, code in _code_text(path):
            m = A64_NAMES.search(_URL.sub("", code))
            if m:
                bad.append(f"{rel}:{i}: {m.group(0)!r}: {code.strip()[:80]}")
    assert not bad, "\n".join(bad)


def test_no_cache_hung_on_other_objects():
    """Caches live in the three stores of swk_plugin/cache.py, not as attributes set on another
    module's objects (module._swk_*, walk.__dict__, walker._swk_*)."""
    bad = []
    for rel, path, _tree in modules():
        for i, code in _code_text(path):
            if re.search(r"\._swk_\w+\s*=|__dict__\s*(\[|\.setdefault)|getattr\([^)]*\"_swk_", code):
                bad.append(f"{rel}:{i}: {code.strip()[:80]}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("rel", ["rule.py", "cache.py", "frame.py", "errors.py"])
def test_the_base_layer_imports_only_the_base_layer(rel):
    tree = ast.parse((PKG / rel).read_text())
    targets = {resolve(rel, n) for n in imports(tree)} - {None}
    assert targets <= set(LAYERS[0][1]), targets


@pytest.mark.parametrize("kit", ["calls", "scan", "prologue", "signal", "analysis"])
def test_architectures_offer_one_interface(kit):
    """A function every architecture's ``kit`` module offers under one name takes the same
    parameters in each: the steppers call them alike (a merge once left AArch64's
    plt_slot without the got_base the wanderer passes)."""
    import importlib
    import inspect
    from swk_plugin.arch import ARCHITECTURES
    mods = {}
    for cls in ARCHITECTURES:           # every registered architecture's own package
        try:
            mods[cls.name] = importlib.import_module(f"{cls.__module__}.{kit}")
        except ModuleNotFoundError:
            continue
    names = set.intersection(*({n for n, v in vars(m).items() if inspect.isfunction(v) and not n.startswith("_")
                                and v.__module__ == m.__name__} for m in mods.values()))
    bad = []
    for name in sorted(names):
        sigs = {arch: [p.name for p in inspect.signature(getattr(m, name)).parameters.values()]
                for arch, m in mods.items()}
        # a parameter two architectures take is part of the interface: every one takes it, in
        # the same place (one architecture's own extra, such as x86-64's ``bits`` for the
        # i386 module that reuses it, is its business)
        shared = [p for p in dict.fromkeys(p for s in sigs.values() for p in s)
                  if sum(p in s for s in sigs.values()) > 1]
        for arch, s in sigs.items():
            if [p for p in s if p in shared] != shared:
                bad.append(f"{kit}.{name}: {arch} takes {s}, the interface is {shared}")
    assert not bad, "\n".join(bad)


def test_core_command_imports_only_what_a_core_walk_needs():
    """`swk bt --core` is a fresh Python process each time, and its imports are part of
    what a user waits for: the ptrace back-end, the profiler (statistics, hashlib, html),
    typing and fractions/decimal (a long double's exact value) are not imported with the
    command line."""
    import subprocess
    import sys
    code = ("import sys, swk_plugin.cli; print(' '.join(m for m in ('swk_plugin.backends.ptrace', "
            "'swk_plugin.backends.profiler', 'swk_plugin.linux.ptrace', 'statistics', 'hashlib', 'html', "
            "'typing', 'fractions', 'decimal', 'ctypes', 'elftools') if m in sys.modules))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       cwd=str(PKG.parent))
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == [], f"imported with the command line: {p.stdout.strip()}"


def test_no_architecture_module_probed_with_hasattr():
    """An architecture's modules state every hook their callers ask for (None where it has
    none: AArch64's signal_frame.frame_kind): no code outside swk_plugin/arch/ asks
    hasattr(x, NAME) of a name an architecture module defines (issue 26's kit)."""
    arch_names = set()
    for path in (PKG / "arch").rglob("*.py"):
        for node in ast.parse(path.read_text()).body:
            targets = [t for n in [node] if isinstance(n, (ast.Assign, ast.AnnAssign))
                       for t in (n.targets if isinstance(n, ast.Assign) else [n.target])]
            arch_names.update(t.id for t in targets if isinstance(t, ast.Name))
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                arch_names.add(node.name)
    bad = []
    for rel, _path, tree in modules():
        if rel.startswith("arch/"):
            continue
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "hasattr"
                    and len(node.args) == 2 and isinstance(node.args[1], ast.Constant)
                    and node.args[1].value in arch_names):
                bad.append(f"{rel}:{node.lineno}: hasattr(..., {node.args[1].value!r})")
    assert not bad, "\n".join(bad)


#: Names of architectures (uname's, GDB's, LLDB's, the ELF's, Debian's triplets'), as words:
#: nothing outside swk_plugin/arch/ names one in code (issue 26: an architecture is added in
#: arch/ alone).  "EM_X86_64" names one; "0x32" and "rax" do not.
ARCH_NAMES = re.compile(r"(?<![a-z0-9])(x86[-_]?64|amd64|i[3-6]86|aarch64|arm64|ppc64(?:le)?|powerpc(?:64)?(?:le)?|"
                        r"riscv(?:32|64)?|s390x?|x32)(?![a-z0-9])", re.I)


def _prose(tree):
    """The string constants that are prose: docstrings, and strings standing as statements."""
    return {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
            and isinstance(n.value.value, str)}


def _names_in_code(tree):
    """(line, text) of every identifier and string constant of the code, prose left out."""
    prose = _prose(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
            yield node.lineno, node.value
        elif isinstance(node, ast.Name):
            yield node.lineno, node.id
        elif isinstance(node, ast.Attribute):
            yield node.lineno, node.attr
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node.lineno, node.name
        elif isinstance(node, ast.arg):
            yield node.lineno, node.arg
        elif isinstance(node, ast.keyword) and node.arg:
            yield node.value.lineno, node.arg
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                yield node.lineno, f"{getattr(node, 'module', '') or ''} {alias.name} {alias.asname or ''}"


def test_no_architecture_named_outside_arch():
    """Issue 26: the diff that adds an architecture touches arch/, the registry, docs and tests
    only, so no other module names one (an ELF machine table, a debugger's default
    architecture): they ask arch/ (machine_name, host_architecture)."""
    bad = []
    for rel, _path, tree in modules():
        if rel.startswith("arch/"):
            continue
        for line, text in _names_in_code(tree):
            m = ARCH_NAMES.search(text)
            if m:
                bad.append(f"{rel}:{line}: {m.group(0)!r} in {text[:60]!r}")
    assert not bad, "\n".join(sorted(set(bad)))


def test_the_architecture_name_pattern():
    """What test_no_architecture_named_outside_arch takes for an architecture's name."""
    for name in ("x86_64", "x86-64", "EM_X86_64", "amd64", "i386", "i686", "i386:x86-64", "aarch64", "arm64",
                 "ppc64", "ppc64le", "powerpc64le", "riscv64", "s390x", "x32", "EM_PPC64", "EM_S390"):
        assert ARCH_NAMES.search(name), name
    for other in ("0x32", "rax", "x86", "EM_386", "rip", "s3900", "xmm32", "riscvish"):
        assert not ARCH_NAMES.search(other), other


#: The kits an Architecture points at (arch/base.py), and what builds an Architecture.
KIT_TOPICS = ("signal_frame", "calls", "prologue", "analysis", "scan", "regsets")
ARCH_FACTORIES = ("from_elf_machine", "get_architecture", "host_architecture")


def _arch_kind(node, aliases):
    """"arch" if ``node`` is an Architecture, a kit's topic if it is one of its kits, else None:
    ``arch``, ``x.arch``, ``from_elf_machine(...)``, ``x.arch.calls``, and names bound to them."""
    if isinstance(node, ast.Name):
        return "arch" if node.id == "arch" else aliases.get(node.id)
    if isinstance(node, ast.Attribute):
        if node.attr == "arch":
            return "arch"
        if node.attr in KIT_TOPICS and _arch_kind(node.value, aliases) == "arch":
            return node.attr
        return None
    if isinstance(node, ast.Call):
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        return "arch" if name in ARCH_FACTORIES else None
    return None


def _arch_uses():
    """(rel, node, kind, aliases) for every scope of every module outside arch/: the names
    bound there to an Architecture or a kit (one assignment away, chains followed)."""
    for rel, _path, tree in modules():
        if rel.startswith("arch/"):
            continue
        for scope in [tree] + [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
            aliases = {}
            assigns = [n for n in ast.walk(scope) if isinstance(n, ast.Assign) and len(n.targets) == 1
                       and isinstance(n.targets[0], ast.Name)]
            changed = True
            while changed:
                changed = False
                for n in assigns:
                    kind = _arch_kind(n.value, aliases)
                    if kind is not None and aliases.get(n.targets[0].id) != kind:
                        aliases[n.targets[0].id] = kind
                        changed = True
            yield rel, scope, aliases


def test_no_architecture_probed_with_getattr_or_hasattr():
    """Issue 26's kit: every hook of an Architecture and its kits is stated with a default
    (arch/base.py), so nothing outside swk_plugin/arch/ asks getattr/hasattr of an
    Architecture, ``x.arch``, ``x.arch.<kit>`` or a name bound to one."""
    bad = set()
    for rel, scope, aliases in _arch_uses():
        for node in ast.walk(scope):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("getattr", "hasattr") and node.args
                    and _arch_kind(node.args[0], aliases) is not None):
                bad.add(f"{rel}:{node.lineno}: {ast.unparse(node)[:80]}")
    assert not bad, "\n".join(sorted(bad))


def _stated_hooks():
    """{kind: names} an Architecture and each kit state (arch/base.py, arch/regsets.py)."""
    from swk_plugin.arch import X86_64, base
    stated = {"arch": set(dir(base.Architecture)) | set(vars(base.Architecture()))}
    for kit in base.KITS:
        stated[kit.topic] = set(kit.hooks)
    stated["regsets"] = {n for n in dir(X86_64.regsets) if not n.startswith("_")}
    return stated


def test_only_stated_hooks_are_read_outside_arch():
    """What code outside swk_plugin/arch/ reads of an Architecture or its kits is part of the
    stated interface: a new architecture that states it (its defaults filled in) serves every
    caller; a name only some architectures have would break on the others."""
    stated = _stated_hooks()
    bad = set()
    for rel, scope, aliases in _arch_uses():
        for node in ast.walk(scope):
            if isinstance(node, ast.Attribute):
                kind = _arch_kind(node.value, aliases)
                if kind is not None and node.attr not in stated[kind]:
                    bad.add(f"{rel}:{node.lineno}: {ast.unparse(node)[:60]} ({kind} states no {node.attr})")
    assert not bad, "\n".join(sorted(bad))


def test_every_architecture_states_its_kits():
    """Every registered architecture's kits state their REQUIRED hooks (the lazy ones too,
    imported here), and its register sets agree with it on byte order."""
    from swk_plugin.arch import ARCHITECTURES, base
    for cls in ARCHITECTURES:
        arch = cls()
        for kit in base.KITS:
            view = getattr(arch, kit.topic)
            if view is None:
                assert kit.optional, f"{cls.name} has no {kit.topic}"
                continue
            assert set(kit.hooks) <= set(vars(view)), f"{cls.name}'s {kit.topic}"
        assert arch.regsets.byteorder == arch.byteorder, cls.name
        assert arch.elf_machine is not None and cls.name not in cls.aliases, cls.name


def test_every_signal_layout_states_its_hooks():
    """The hooks the signal-frame stepper and the locals ask of ``arch.signal_frame``, in every
    architecture (None where it has none)."""
    from swk_plugin.arch import ARCHITECTURES
    for cls in ARCHITECTURES:
        layout = cls.signal_frame
        missing = [h for h in ("frame_kind", "rule_at", "SC_OFFSETS", "SC_GREGS_SIZE") if not hasattr(layout, h)]
        assert not missing, f"{cls.name}'s signal_frame lacks {missing}"


def test_one_dwarf_expression_evaluator():
    """Issue 24: one DWARF expression evaluator, for CFI, locations and call sites alike
    (dwarf/expr.py and its parts, exprvalues/exprmachine/exprops/exprlocs/exprerrors):
    no other module defines a module-level evaluate*() or an opcode table of its own."""
    parts = {"dwarf/expr.py", "dwarf/exprvalues.py", "dwarf/exprmachine.py", "dwarf/exprops.py",
             "dwarf/exprlocs.py", "dwarf/exprerrors.py"}
    assert all((PKG / p).exists() for p in parts)
    bad = []
    for rel, _path, tree in modules():
        if rel in parts:
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("evaluate"):
                bad.append(f"{rel}:{node.lineno}: def {node.name}")
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and re.fullmatch(
                    r"(OP_NAMES|HANDLERS|TYPED_OPS)", t.id) for t in node.targets):
                bad.append(f"{rel}:{node.lineno}: an opcode table")
    assert not bad, "\n".join(bad)


def _expr_error_names():
    """ExprError and its subclasses (dwarf/exprerrors.py), by name."""
    tree = ast.parse((PKG / "dwarf" / "exprerrors.py").read_text())
    names = {"ExprError"}
    changed = True
    while changed:
        changed = False
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name not in names and any(
                    isinstance(b, ast.Name) and b.id in names for b in node.bases):
                names.add(node.name)
                changed = True
    return names


def test_expression_errors_are_told_apart_by_class():
    """Issue 24: a caller of the evaluator tells its failures apart by exception class, never
    by their text: in a handler of ExprError (or a subclass), the caught exception's
    str()/args are shown, never compared, searched or matched."""
    classes = _expr_error_names()
    bad = []
    for rel, _path, tree in modules():
        for handler in ast.walk(tree):
            if not isinstance(handler, ast.ExceptHandler) or not handler.name or handler.type is None:
                continue
            caught = [handler.type] if not isinstance(handler.type, ast.Tuple) else handler.type.elts
            if not any((isinstance(c, ast.Name) and c.id in classes) or
                       (isinstance(c, ast.Attribute) and c.attr in classes) for c in caught):
                continue
            name = handler.name

            def is_text(n):
                return (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "str"
                        and n.args and isinstance(n.args[0], ast.Name) and n.args[0].id == name) or \
                       (isinstance(n, ast.Attribute) and n.attr == "args" and isinstance(n.value, ast.Name)
                        and n.value.id == name) or (isinstance(n, ast.Name) and n.id == "msg")
            for node in ast.walk(handler):
                if isinstance(node, ast.Compare) and any(is_text(x) for x in [node.left, *node.comparators]):
                    bad.append(f"{rel}:{node.lineno}: {ast.unparse(node)[:70]}")
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                        "startswith", "endswith", "find", "index", "split", "rsplit") and is_text(node.func.value):
                    bad.append(f"{rel}:{node.lineno}: {ast.unparse(node)[:70]}")
    assert not bad, "\n".join(bad)


#: The one function of swk_plugin/locals/ that reaches a frame's Walker (and through it the
#: process state): every other path from a walk to its frames' variables goes through it.
WALKER_READER = ("locals/frames.py", "walker_of")


def test_locals_reach_the_walker_in_one_place():
    """Issue 24: the locals engine reaches the walk's process state in one place
    (frames.walker_of, which FrameVariables.of_level uses), not through ``frame.walker``
    read wherever a value needs memory or the architecture."""
    bad = []
    for rel, _path, tree in modules():
        if not rel.startswith("locals/"):
            continue
        allowed = set()
        if rel == WALKER_READER[0]:
            fns = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == WALKER_READER[1]]
            assert len(fns) == 1, f"{rel} has no {WALKER_READER[1]}()"
            allowed = {id(n) for n in ast.walk(fns[0])}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "walker" and id(node) not in allowed:
                bad.append(f"{rel}:{node.lineno}: {ast.unparse(node)[:60]}")
    assert not bad, "\n".join(bad)


def test_read_variable_takes_a_frame_variables():
    """Issue 24: a variable's value is read from one FrameVariables (what it needs from its
    frame), not from a dozen keywords each caller spreads again: read_variable takes
    (var, frame_vars) and nothing else, and every call gives it those two (FrameCtx too)."""
    tree = ast.parse((PKG / "locals" / "locations.py").read_text())
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "read_variable")
    a = fn.args
    assert [p.arg for p in a.posonlyargs + a.args] == ["var", "frame_vars"], ast.unparse(a)
    assert not (a.kwonlyargs or a.vararg or a.kwarg or a.defaults), ast.unparse(a)
    bad = []
    for rel, _path, tree in modules():
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and (getattr(node.func, "id", None) == "read_variable"
                                                or getattr(node.func, "attr", None) == "read_variable")
                    and (len(node.args) != 2 or node.keywords)):
                bad.append(f"{rel}:{node.lineno}: {ast.unparse(node)[:70]}")
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "FrameCtx" and (
                    len(node.args) != 2 or node.keywords):
                bad.append(f"{rel}:{node.lineno}: {ast.unparse(node)[:70]} (FrameCtx(var, frame_vars))")
    assert not bad, "\n".join(bad)
