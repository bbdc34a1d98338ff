"""Rust symbol names as GDB shows them without DWARF (libiberty's rust-demangle, verbose).

Two manglings: the legacy one (``_ZN4core3ops8function6FnOnce40call_once$u7b$$u7b$vtable.shim
$u7d$$u7d$17hbb47afadaeb9b6e7E``: Itanium-shaped paths whose last component is the hash
``h`` + 16 hex digits, ``$..$`` escapes for punctuation) and v0 (``_RNvNtCs..._3std9panicking
15panic_with_hook``: RFC 2603's grammar of paths, types and back-references).  GDB prints the
legacy hash and v0's crate disambiguators (``std[e28293b1aa0f68bd]::panicking::panic_with_hook``).
``demangle_rust`` returns None for a name in neither form, or one it cannot parse.
"""
from ..cache import LazyPattern

_LEGACY_HASH = LazyPattern(r"h[0-9a-f]{16}")
_LLVM_SUFFIX = LazyPattern(r"\.llvm\.[0-9]+$")
_ESCAPES = {"SP": "@", "BP": "*", "RF": "&", "LT": "<", "GT": ">", "LP": "(", "RP": ")", "C": ","}

#: v0's basic types, by their letter
_BASIC = {"a": "i8", "b": "bool", "c": "char", "d": "f64", "e": "str", "f": "f32", "h": "u8", "i": "isize",
          "j": "usize", "l": "i32", "m": "u32", "n": "i128", "o": "u128", "s": "i16", "t": "u16", "u": "()",
          "v": "...", "x": "i64", "y": "u64", "z": "!", "p": "_"}
_SIGNED = {"a", "i", "l", "n", "s", "x"}
_MAX_DEPTH = 100


def demangle_rust(name):
    """GDB's name for a Rust symbol (``name`` without a symbol version), or None."""
    name = _LLVM_SUFFIX.sub("", name)      # LLVM's ".llvm.NNN" clone suffix: not printed
    try:
        if name.startswith("_R"):
            return _V0(name).symbol()
        if name.startswith("_ZN") and name.endswith("E"):
            return _legacy(name)
    except (_Bad, IndexError, ValueError, RecursionError):
        return None
    return None


class _Bad(Exception):
    pass


# --- legacy -------------------------------------------------------------------------------------
def _legacy(name):
    i, parts = 3, []
    while name[i] != "E":
        j = i
        while name[j].isdigit():
            j += 1
        if j == i:
            return None
        n = int(name[i:j])
        parts.append(name[j:j + n])
        i = j + n
        if i >= len(name):
            return None
    if i != len(name) - 1 or len(parts) < 2 or not _LEGACY_HASH.fullmatch(parts[-1]):
        return None
    return "::".join(_legacy_ident(p) for p in parts)


def _legacy_ident(p):
    if p.startswith("_$"):
        p = p[1:]
    out, i = [], 0
    while i < len(p):
        c = p[i]
        if c == "$":
            j = p.index("$", i + 1)
            code = p[i + 1:j]
            if code in _ESCAPES:
                out.append(_ESCAPES[code])
            elif code.startswith("u") and code[1:]:
                out.append(chr(int(code[1:], 16)))
            else:
                raise _Bad(code)
            i = j + 1
        elif p.startswith("..", i):
            out.append("::")
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


# --- v0 -----------------------------------------------------------------------------------------
class _V0:
    """A recursive-descent printer of one v0 symbol (RFC 2603), as libiberty prints it."""

    def __init__(self, name):
        self.s = name
        self.i = 2
        self.depth = 0
        self.bound = 0          # lifetimes bound by the enclosing for<...> binders

    def peek(self):
        return self.s[self.i] if self.i < len(self.s) else ""

    def eat(self, c):
        if self.peek() == c:
            self.i += 1
            return True
        return False

    def next(self):
        c = self.s[self.i]
        self.i += 1
        return c

    def symbol(self):
        if self.peek().isdigit():           # an encoding version: only 0 exists
            self.decimal()
        return self.path(True)

    # numbers
    def decimal(self):
        """RFC 2603's <decimal-number>: "0" alone, or digits not starting with 0."""
        if self.eat("0"):
            return 0
        j = self.i
        while self.peek().isdigit():
            self.i += 1
        if j == self.i:
            raise _Bad("decimal")
        return int(self.s[j:self.i])

    def base62(self):
        if self.eat("_"):
            return 0
        x = 0
        while True:
            c = self.next()
            if c == "_":
                return x + 1
            if c.isdigit():
                d = ord(c) - 48
            elif c.islower():
                d = ord(c) - 97 + 10
            elif c.isupper():
                d = ord(c) - 65 + 36
            else:
                raise _Bad("base62")
            x = x * 62 + d

    def opt62(self, tag):
        return self.base62() + 1 if self.eat(tag) else 0

    def ident(self):
        dis = self.opt62("s")
        return self.bare_ident(), dis

    def bare_ident(self):
        puny = self.eat("u")
        n = self.decimal()
        self.eat("_")
        text = self.s[self.i:self.i + n]
        if len(text) != n:
            raise _Bad("ident")
        self.i += n
        return ("punycode{" + text + "}") if puny else text

    def backref(self, fn):
        at = self.base62() + 2
        if at >= self.i - 1:
            raise _Bad("backref")
        saved, self.i = self.i, at
        try:
            return fn()
        finally:
            self.i = saved

    def nested(fn):
        def wrapped(self, *a):
            self.depth += 1
            if self.depth > _MAX_DEPTH:
                raise _Bad("too deep")
            try:
                return fn(self, *a)
            finally:
                self.depth -= 1
        return wrapped

    # paths
    @nested
    def path(self, value):
        """``value``: in an expression (generic arguments as ``::<..>``), not a type."""
        c = self.next()
        if c == "C":
            name, dis = self.ident()
            return f"{name}[{dis:x}]" if dis else name
        if c == "N":
            ns = self.next()
            prefix = self.path(value)
            name, dis = self.ident()
            if ns.isupper():
                kind = {"C": "closure", "S": "shim"}.get(ns, ns)
                return f"{prefix}::{{{kind}{':' + name if name else ''}#{dis}}}"
            return f"{prefix}::{name}" if name else prefix
        if c == "M":
            self.opt62("s")
            self.path(False)                 # the impl's own path: not printed
            return f"<{self.type()}>"
        if c == "X":
            self.opt62("s")
            self.path(False)
            t = self.type()
            return f"<{t} as {self.path(False)}>"
        if c == "Y":
            t = self.type()
            return f"<{t} as {self.path(False)}>"
        if c == "I":
            prefix = self.path(value)
            args = []
            while not self.eat("E"):
                args.append(self.generic_arg())
            return prefix + ("::" if value else "") + "<" + ", ".join(args) + ">"
        if c == "B":
            return self.backref(lambda: self.path(value))
        raise _Bad("path")

    def generic_arg(self):
        if self.eat("L"):
            return self.lifetime(self.base62())
        if self.eat("K"):
            return self.const()
        return self.type()

    def lifetime(self, n):
        """A lifetime by its de Bruijn index among the bound ones ('_ for the erased 0)."""
        if n == 0:
            return "'_"
        depth = self.bound - n
        if depth < 0:
            raise _Bad("lifetime")
        return "'" + chr(ord("a") + depth) if depth < 26 else f"'_{depth}"

    def binder(self):
        """``for<'a, 'b> `` of a G binder (its lifetimes then bound), or ""."""
        if not self.eat("G"):
            return ""
        count = self.base62() + 1
        names = []
        for _ in range(count):
            self.bound += 1
            names.append(self.lifetime(1))
        return "for<" + ", ".join(names) + "> "

    @nested
    def type(self):
        c = self.peek()
        if c in _BASIC:
            self.i += 1
            return _BASIC[c]
        self.i += 1
        if c == "R" or c == "Q":
            lt = ""
            if self.eat("L"):
                n = self.base62()
                lt = self.lifetime(n) + " " if n else ""
            return "&" + lt + ("mut " if c == "Q" else "") + self.type()
        if c == "P":
            return "*const " + self.type()
        if c == "O":
            return "*mut " + self.type()
        if c == "A":
            t = self.type()
            return f"[{t}; {self.const()}]"
        if c == "S":
            return f"[{self.type()}]"
        if c == "T":
            items = []
            while not self.eat("E"):
                items.append(self.type())
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        if c == "F":
            return self.fn_sig()
        if c == "D":
            return self.dyn()
        if c == "B":
            return self.backref(self.type)
        self.i -= 1
        return self.path(False)

    def fn_sig(self):
        saved = self.bound
        try:
            return self._fn_sig(self.binder())
        finally:
            self.bound = saved

    def _fn_sig(self, bound):
        unsafe = self.eat("U")
        abi = ""
        if self.eat("K"):
            if self.eat("C"):
                abi = "C"
            else:
                abi = self.bare_ident().replace("_", "-")
        params = []
        while not self.eat("E"):
            params.append(self.type())
        ret = self.type()
        head = bound + ("unsafe " if unsafe else "") + (f'extern "{abi}" ' if abi else "")
        return head + "fn(" + ", ".join(params) + ")" + ("" if ret == "()" else " -> " + ret)

    def dyn(self):
        saved = self.bound
        try:
            bound = self.binder()
            traits = self._dyn_traits()
        finally:
            self.bound = saved
        if not self.eat("L"):
            raise _Bad("dyn lifetime")
        n = self.base62()
        return "dyn " + bound + " + ".join(traits) + (" + " + self.lifetime(n) if n else "")

    def _dyn_traits(self):
        traits = []
        while not self.eat("E"):
            t = self.path(False)
            binds = []
            while self.eat("p"):
                name = self.bare_ident()
                binds.append(f"{name} = {self.type()}")
            if binds:
                t = (t[:-1] + ", " if t.endswith(">") else t + "<") + ", ".join(binds) + ">"
            traits.append(t)
        return traits

    @nested
    def const(self):
        if self.eat("B"):
            return self.backref(self.const)
        c = self.next()
        if c == "p":
            return "_"
        neg = c in _SIGNED and self.eat("n")
        j = self.i
        while self.peek() != "_":
            self.i += 1
        digits = self.s[j:self.i]
        self.i += 1
        v = int(digits, 16) if digits else 0
        if c == "b":
            text = "true" if v else "false"
        elif c == "c":
            text = repr(chr(v))
        else:
            text = ("-" if neg else "") + str(v)
        return f"{text}: {_BASIC.get(c, '?')}"       # verbose, as GDB's libiberty prints it

    nested = staticmethod(nested)


__all__ = ["demangle_rust"]
