"""Symbol names the way GDB prints them.

``demangle(name)`` gives the name GDB 13 shows for a minimal (ELF) symbol:

* Itanium C++ names (``_Z...``) through ``__cxa_demangle`` of libstdc++ (the
  same libiberty demangler GDB uses, without "verbose" expansion), falling back
  to one ``c++filt`` subprocess, then to the name itself.  Clone suffixes come
  out as GDB shows them: ``foo(int) [clone .cold]``.  An ELF version suffix
  (``@GLIBCXX_3.4``, ``@@GLIBC_2.2.5``) is dropped before demangling.
* Other names go through a port of GDB's Ada decoder, because GDB lets the
  Ada language claim any plain name that its decoder changes: ``main.cold`` is
  shown as ``main[cold]``, ``foo.part.0`` as ``foo.part``, ``foo__bar`` as
  ``foo.bar``.  Names it does not change (``main``, ``__libc_start_main``,
  ``Foo.cold``) come back unchanged.

``demangle_cxx(name)`` is the plain C++ demangler (no GDB quirks).
``strip_params(name)`` is GDB's ``cp_remove_params``: what ``bt`` prints for a
function with debug info (no return type, parameters, qualifiers or clone tags).
"""
import threading
from .rustdemangle import demangle_rust
from ..cache import LazyPattern

__all__ = ["demangle", "demangle_cxx", "demangle_many", "strip_params", "drop_return_type",
           "gdb_can_parse", "gdb_plain_name"]

_lock = threading.Lock()
_cache = {}
_CACHE_MAX = 200000

# --- the C++ demangler -----------------------------------------------------------------

_cxa = None          # ctypes function, False when unavailable
_free = None


def _load_cxa():
    global _cxa, _free
    import ctypes   # C++ names only: most C sessions never pay for ctypes
    if _cxa is not None:
        return _cxa
    with _lock:
        if _cxa is not None:
            return _cxa
        fn = False
        def candidates():   # find_library runs ldconfig: only when the usual names fail
            yield "libstdc++.so.6"
            yield "libc++abi.so.1"
            from ctypes import util
            yield util.find_library("stdc++")
            yield util.find_library("c++abi")
        for libname in candidates():
            if not libname:
                continue
            try:
                lib = ctypes.CDLL(libname)
                f = lib.__cxa_demangle
            except (OSError, AttributeError):
                continue
            f.restype = ctypes.c_void_p
            f.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p,
                          ctypes.POINTER(ctypes.c_int)]
            try:
                try:
                    libc = ctypes.CDLL("libc.so.6")
                except OSError:
                    from ctypes import util
                    libc = ctypes.CDLL(util.find_library("c"))
                free = libc.free
                free.argtypes = [ctypes.c_void_p]
                free.restype = None
            except (OSError, AttributeError):
                continue
            fn = f
            _free = free
            break
        _cxa = fn
    return _cxa


# __cxa_demangle prints the standard substitutions Ss/Si/So/Sd in their short form;
# GDB (like c++filt) prints them in full ("verbose").
_SHORT_SUBS = {
    "std::string": "std::basic_string<char, std::char_traits<char>, std::allocator<char> >",
    "std::istream": "std::basic_istream<char, std::char_traits<char> >",
    "std::ostream": "std::basic_ostream<char, std::char_traits<char> >",
    "std::iostream": "std::basic_iostream<char, std::char_traits<char> >",
}
_SHORT_RE = LazyPattern(r"(?<![\w:])std::(?:string|istream|ostream|iostream)(?![\w])")


def _verbose(d):
    if "std::" in d:
        def full(m):
            r = _SHORT_SUBS[m.group(0)]
            # the demangler separates ">>" with a space: keep that when the expansion ends in '>'
            return r + " " if d.startswith(">", m.end()) else r
        return _SHORT_RE.sub(full, d)
    return d


def _cxa_demangle(mangled):
    """The demangled name, or None; raises LookupError when no demangler library exists."""
    import ctypes
    fn = _load_cxa()
    if not fn:
        raise LookupError("no __cxa_demangle")
    status = ctypes.c_int(0)
    try:
        raw = mangled.encode("utf-8", "surrogateescape")
    except UnicodeError:
        return None
    if b"\0" in raw:
        return None
    ptr = fn(raw, None, None, ctypes.byref(status))
    if not ptr:
        return None
    try:
        if status.value != 0:
            return None
        return _verbose(ctypes.string_at(ptr).decode("utf-8", "replace"))
    finally:
        _free(ptr)


_cxxfilt = None   # path or False


def _cxxfilt_batch(names):
    """Demangle many names with one c++filt run: {name: demangled or None}."""
    global _cxxfilt
    if _cxxfilt is None:
        import shutil
        _cxxfilt = shutil.which("c++filt") or False
    out = {n: None for n in names}
    if not _cxxfilt or not names:
        return out
    clean = [n for n in names if "\n" not in n and " " not in n]
    import subprocess
    try:
        res = subprocess.run([_cxxfilt], input="\n".join(clean) + "\n", capture_output=True,
                             text=True, timeout=30, errors="replace")
    except (OSError, subprocess.SubprocessError):
        _cxxfilt = False
        return out
    lines = res.stdout.split("\n")
    if len(lines) >= len(clean):
        for n, d in zip(clean, lines):
            if d and d != n:
                out[n] = d
    return out


def _strip_version(name):
    at = name.find("@")
    if at > 0:
        return name[:at]
    return name


def demangle_cxx(name):
    """The C++ demangling of ``name`` (version suffix dropped), or ``name`` itself."""
    base = _strip_version(name)
    if not base.startswith("_Z"):
        return base if base != name and base else name
    try:
        d = _cxa_demangle(base)
    except LookupError:
        d = _cxxfilt_batch([base]).get(base)
    return d if d else base


def demangle(name):
    """The name GDB shows for an ELF symbol called ``name`` (cached)."""
    if not name:
        return name
    r = _cache.get(name)
    if r is not None:
        return r
    if name.endswith("@plt") and len(name) > 4:
        r = demangle(name[:-4]) + "@plt"
        _cache[name] = r
        return r
    base = _strip_version(name)
    rust = demangle_rust(base) if base.startswith(("_R", "_ZN")) else None
    if rust is not None:
        r = rust
    elif base.startswith("_Z"):
        try:
            r = _cxa_demangle(base)
        except LookupError:
            r = _cxxfilt_batch([base]).get(base)
        # bfd_demangle (GDB's): the version suffix of a name as written comes back after it
        r = r + name[len(base):] if r else name
    else:
        r = gdb_plain_name(name)        # GDB decodes the name as written, version and all
    if len(_cache) < _CACHE_MAX:
        _cache[name] = r
    return r


def demangle_many(names):
    """[demangle(n) for n in names], with at most one c++filt run when ctypes is unusable."""
    names = list(names)
    if not _load_cxa():
        todo = sorted({_strip_version(n) for n in names
                       if n not in _cache and _strip_version(n).startswith("_Z")
                       and demangle_rust(_strip_version(n)) is None})
        if todo:
            got = _cxxfilt_batch(todo)
            for n in names:
                b = _strip_version(n)
                if b in got and n not in _cache:
                    _cache[n] = got[b] or b
    return [demangle(n) for n in names]


# --- GDB's Ada decoder (ada-lang.c ada_decode), which GDB applies to plain names ---------

_ADA_OPS = (
    ("Oabs", "\"abs\""), ("Oand", "\"and\""), ("Omod", "\"mod\""), ("Onot", "\"not\""),
    ("Oor", "\"or\""), ("Orem", "\"rem\""), ("Oxor", "\"xor\""), ("Oeq", "\"=\""),
    ("One", "\"/=\""), ("Olt", "\"<\""), ("Ole", "\"<=\""), ("Ogt", "\">\""),
    ("Oge", "\">=\""), ("Oconcat", "\"&\""), ("Oadd", "\"+\""), ("Osubtract", "\"-\""),
    ("Omultiply", "\"*\""), ("Odivide", "\"/\""), ("Oexpon", "\"**\""),
)


def _isalpha(c):
    return ("a" <= c <= "z") or ("A" <= c <= "Z")


def _isdigit(c):
    return "0" <= c <= "9"


def _isalnum(c):
    return _isalpha(c) or _isdigit(c)


def _islower_alnum(c):
    return _isdigit(c) or ("a" <= c <= "z")


def _ada_decode(enc):
    """GDB 13's ada_decode(enc, wrap=True, operators=True, wide=True); '<...>' when suppressed."""
    if enc.startswith("."):
        enc = enc[1:]
    if enc.startswith("_ada_"):
        enc = enc[5:]
    if enc.startswith("___ghost_"):
        enc = enc[9:]
    if not enc or enc[0] in "_<":
        return None
    len0 = len(enc)
    # remove_compiler_suffix: a trailing ".alpha" (like ".cold")
    suffix = None
    off = len0 - 1
    while off > 0 and _isalpha(enc[off]):
        off -= 1
    if off > 0 and enc[off] == ".":
        len0 = off
        suffix = enc[off + 1:]
    # ada_remove_trailing_digits
    if len0 > 1 and _isdigit(enc[len0 - 1]):
        i = len0 - 2
        while i > 0 and _isdigit(enc[i]):
            i -= 1
        if i >= 0 and enc[i] == ".":
            len0 = i
        elif i >= 0 and enc[i] == "$":
            len0 = i
        elif i >= 2 and enc.startswith("___", i - 2):
            len0 = i - 2
        elif i >= 1 and enc.startswith("__", i - 1):
            len0 = i - 1
    # ada_remove_po_subprogram_suffix
    if len0 > 1 and enc[len0 - 1] == "N" and (_isdigit(enc[len0 - 2]) or enc[len0 - 2].islower()):
        len0 -= 1
    p = enc.find("___")
    if p != -1 and p < len0 - 3:
        if enc[p + 3] == "X":
            len0 = p
        else:
            return None
    if len0 > 3 and enc.startswith("TKB", len0 - 3):
        len0 -= 3
    if len0 > 2 and enc.startswith("TB", len0 - 2):
        len0 -= 2
    if len0 > 1 and enc.startswith("B", len0 - 1):
        len0 -= 1
    if len0 > 1 and _isdigit(enc[len0 - 1]):
        i = len0 - 2
        while (i >= 0 and _isdigit(enc[i])) or (i >= 1 and enc[i] == "_" and _isdigit(enc[i - 1])):
            i -= 1
        if i > 1 and enc[i] == "_" and enc[i - 1] == "_":
            len0 = i - 1
        elif i >= 0 and enc[i] == "$":
            len0 = i
    out = []
    i = 0
    while i < len0 and not _isalpha(enc[i]):
        out.append(enc[i])
        i += 1
    at_start = True

    def ch(k):
        return enc[k] if 0 <= k < len(enc) else "\0"

    while i < len0:
        if at_start and enc[i] == "O":
            matched = False
            for code, dec in _ADA_OPS:
                n = len(code)
                if enc[i + 1:i + n] == code[1:] and not _isalnum(ch(i + n)):
                    out.append(dec)
                    at_start = False
                    i += n
                    matched = True
                    break
            if matched:
                continue
        at_start = False
        if i < len0 - 4 and enc.startswith("TK__", i):
            i += 2
        if (len0 - i > 5 and enc[i] == "_" and ch(i + 1) == "_" and ch(i + 2) == "B"
                and ch(i + 3) == "_" and _isdigit(ch(i + 4))):
            k = i + 5
            while k < len0 and _isdigit(enc[k]):
                k += 1
            if len0 - k > 2 and enc[k] == "_" and enc[k + 1] == "_":
                i = k
        if len0 - i > 3 and enc[i] == "_" and ch(i + 1) == "E" and _isdigit(ch(i + 2)):
            k = i + 3
            while k < len0 and _isdigit(enc[k]):
                k += 1
            if k < len0 and enc[k] in "bs":
                k += 1
                if k == len0 or (k < len0 and enc[k] == "_"):
                    i = k
        if ch(i) == "N" and ch(i + 1) == "_" and ch(i + 2) == "_":
            ptr = i - 1
            while ptr >= 0 and _islower_alnum(enc[ptr]):
                ptr -= 1
            if ptr < 0 or (ptr > 0 and enc[ptr] == "_" and enc[ptr - 1] == "_"):
                i += 1
        c = ch(i)
        if c == "U" and all(x in "0123456789abcdefABCDEF" for x in enc[i + 1:i + 3]) and len(enc[i + 1:i + 3]) == 2:
            out.append(chr(int(enc[i + 1:i + 3], 16)))
            i += 3
            continue
        if c == "W" and ch(i + 1) != "W" and len(enc[i + 1:i + 5]) == 4 and \
                all(x in "0123456789abcdefABCDEF" for x in enc[i + 1:i + 5]):
            out.append(chr(int(enc[i + 1:i + 5], 16)))
            i += 5
            continue
        if c == "W" and ch(i + 1) == "W" and len(enc[i + 2:i + 10]) == 8 and \
                all(x in "0123456789abcdefABCDEF" for x in enc[i + 2:i + 10]):
            try:
                out.append(chr(int(enc[i + 2:i + 10], 16)))
            except ValueError:
                return None
            i += 10
            continue
        if c == "X" and i != 0 and _isalnum(enc[i - 1]):
            i += 1
            while i < len0 and enc[i] in "bn":
                i += 1
            if i < len0:
                return None
        elif i < len0 - 2 and enc[i] == "_" and enc[i + 1] == "_":
            out.append(".")
            at_start = True
            i += 2
        else:
            out.append(enc[i])
            i += 1
    decoded = "".join(out)
    for c in decoded:
        if ("A" <= c <= "Z") or c == " ":
            return None
    if suffix is not None:
        decoded = decoded + "[" + suffix + "]"
    return decoded


def gdb_plain_name(name):
    """What GDB shows for a non-C++ ELF symbol: its Ada decoding when that differs, else the name."""
    if not name or name[0] in "_<":
        return name     # the decoder never changes these
    try:
        d = _ada_decode(name)
    except (IndexError, ValueError):
        return name
    if d is None or d == name or not d or d[0] == "<":
        return name
    return d


# --- cp_remove_params ---------------------------------------------------------------------

_CLONE_RE = LazyPattern(r"(?:\s*\[clone [^\]]*\])+\s*$")
_QUAL_RE = LazyPattern(r"(?:\s*(?:const|volatile|&&|&|noexcept|throw\(\)|transaction_safe))+\s*$")
_OP_SYMBOLS = sorted([
    "<<=", ">>=", "<=>", "->*", "<<", ">>", "<=", ">=", "->", "()", "[]", "==", "!=", "&&", "||",
    "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "+", "-", "*", "/", "%", "^",
    "&", "|", "~", "!", "=", "<", ">", ",", "\"\"",
], key=len, reverse=True)
_OPEN = {"(": ")", "<": ">", "[": "]", "{": "}"}
_CLOSE = {")": "(", ">": "<", "]": "[", "}": "{"}


def _is_ident_char(c):
    return c.isalnum() or c == "_" or c == "$"


def _skip_operator(s, i):
    """s[i:] starts with the keyword 'operator': index just past the operator's symbol, or
    None for conversion / new / delete operators (their name runs to the end)."""
    j = i + len("operator")
    while j < len(s) and s[j] == " ":
        j += 1
    for op in _OP_SYMBOLS:
        if s.startswith(op, j):
            j += len(op)
            if s.startswith(" <", j):      # "operator< <char>": template arguments follow
                j += 1
            return j
    return None


def _split_scope(s):
    """Index of the start of the function name after a return type (last top-level space), 0 if none."""
    depth = []
    last_space = -1
    i = 0
    n = len(s)
    while i < n:
        c = s[i]
        if c.isalpha() or c == "_":
            j = i
            while j < n and _is_ident_char(s[j]):
                j += 1
            word = s[i:j]
            if word == "operator" and (i == 0 or not _is_ident_char(s[i - 1])):
                k = _skip_operator(s, i)
                if k is None:
                    break
                i = k
                continue
            i = j
            continue
        if c in "(<[{":
            depth.append(c)
        elif c in ")>]}":
            if depth and depth[-1] == _CLOSE[c]:
                depth.pop()
            elif c == ">" and i > 0 and s[i - 1] == "-":
                pass
            else:
                return 0     # unbalanced: leave as is
        elif c == " " and not depth:
            rest = s[i + 1:i + 10]
            # "f(int) const::g": a qualifier of an enclosing function, not a return type
            if not (rest.startswith("&") or
                    any(rest.startswith(q) and not _is_ident_char(s[i + 1 + len(q):i + 2 + len(q)] or " ")
                        for q in ("const", "volatile"))):
                last_space = i
        i += 1
    if last_space < 0:
        return 0
    # "unsigned int" style return types or "ret ns::f": the name starts after the last space,
    # unless that space only separates a pointer/reference from a qualifier (not a name start).
    return last_space + 1


def _split_function(s):
    """Split a demangled function name into (start of the name after any return type,
    index of its parameter list); None when there is no parameter list."""
    core = _QUAL_RE.sub("", s) if s.endswith(("const", "volatile", "&", "noexcept", ")", "safe")) else s
    if not core.endswith(")"):
        return None
    # match the trailing parameter list backwards, counting parentheses only
    i = _opening_paren(core, len(core) - 1)
    if i <= 0:
        return None
    head = core[:i].rstrip()
    # "operator()" without parameters: those parentheses are the name
    if head.endswith("operator") and (len(head) == 8 or not _is_ident_char(head[-9])):
        if core[i:] == "()":
            return None
    if not head:
        return None
    return _split_scope(head), len(head)


#: a function type among template arguments ("int (int)", GCC's "int(int)"); in the parameter
#: list of a name GDB computes from DW_AT_name only the demangler's spaced one stops its parser
_FN_TYPE_IN_ARGS = LazyPattern(r"[\w>\]*&]\s?\((?![*&])(?!anonymous namespace\))")
_FN_TYPE_SPACED = LazyPattern(r"[\w>\]*&] \((?![*&])(?!anonymous namespace\))")


def _opening_paren(name, k):
    """Where the parenthesis closed at ``k`` opens (0 if unbalanced)."""
    depth = 0
    for j in range(k, -1, -1):
        c = name[j]
        if c == ")":
            depth += 1
        elif c == "(":
            depth -= 1
            if depth == 0:
                return j
    return 0


def _scope_parens(name, i):
    """Whether the parenthesis at ``i`` closes into "::": a function's parameters in the
    name of something local to it ("run(int)::<lambda(int)>"), not a function type."""
    depth = 0
    for j in range(i, len(name)):
        c = name[j]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return name.startswith("::", j + 1)
    return False


def gdb_can_parse(name, computed=False, params_at=None):
    """False for the C++ names GDB's name parser rejects (so that ``bt`` shows them whole,
    parameters included): empty template argument lists ("std::tuple<>"), the demangler's
    lambdas ("{lambda(int)#1}"; GCC's "<lambda(int)>" in names computed from DW_AT_name is
    read), anonymous types ("{...}"), entities local to a function ("f(int)::X"), and
    function types among template arguments as the demangler spells them ("std::function<int (int)>").
    ``computed``: a name GDB computes from DW_AT_name and its own type printer, whose
    anonymous types ("struct {...}") and function-local types ("run(int)::<lambda(int)>",
    not "main(int, char**)::<lambda(int)>") its parser reads, as it reads GCC's "std::function<int(int)>" in the parameter list
    that starts at ``params_at`` (but not among the name's own template arguments)."""
    if "<>" in name or "{lambda" in name:
        return False
    if "{" in (name.replace("{...}", "") if computed else name):
        return False
    k = name.find(")::")
    while k != -1:
        opening = _opening_paren(name, k)
        if not name.startswith("(anonymous namespace", opening) and (
                not computed or "," in name[opening:k]):
            # GDB reads its own "run(int)::<lambda(int)>", not "main(int, char**)::..."
            return False
        k = name.find(")::", k + 1)
    if "<" in name:
        depth = 0
        i = 0
        n = len(name)
        while i < n:
            c = name[i]
            if c.isalpha() or c == "_":
                j = i
                while j < n and _is_ident_char(name[j]):
                    j += 1
                if name[i:j] == "operator" and (i == 0 or not _is_ident_char(name[i - 1])):
                    k2 = _skip_operator(name, i)
                    if k2 is None:
                        return True
                    i = k2
                    continue
                i = j
                continue
            if c == "<":
                depth += 1
            elif c == ">" and depth:
                depth -= 1
            elif c == "(" and depth:
                rx = _FN_TYPE_SPACED if computed and params_at is not None and i >= params_at \
                    else _FN_TYPE_IN_ARGS
                m = rx.match(name, i - 2 if name[i - 1] == " " else i - 1)
                if m is not None and m.end() == i + 1 and not _scope_parens(name, i) and \
                        not name.endswith("<lambda", 0, i):       # GCC's closure "<lambda(int)>"
                    return False
            i += 1
    return True


def drop_return_type(name):
    """The demangled function name without its leading return type (GDB's DMGL_RET_DROP)."""
    if not name:
        return name
    sp = _split_function(name.rstrip())
    if sp is None:
        return name
    start, plen = sp
    head = name[start:plen]
    if head.startswith("(") and head.endswith(")") and len(head) > 2:
        # the return type is a pointer to function wrapped around the name:
        # "void (*f(int))(char)", "void (X::*&& std::forward<...>(...))()"
        return _unwrap_declarator(head)
    return name[start:] if start else name


_PTR_DECL = LazyPattern(r"^\s*(?:(?:[A-Za-z_]\w*(?:<[^()]*?>)?::)+)?[*&]+(?:\s*(?:const|volatile)\b)*\s*")


def _unwrap_declarator(head):
    """"(*f(int))" / "(X::*&& f<...>(...))" -> the function's own "name(params)"."""
    inner = head[1:-1]
    k = _split_scope(inner)
    inner = inner[k:]
    m = _PTR_DECL.match(inner)
    return inner[m.end():] if m else inner


def strip_params(name):
    """GDB's cp_remove_params as ``bt`` applies it: "ns::Foo<int>::bar(int) const" ->
    "ns::Foo<int>::bar" (return type, parameters, qualifiers and clone tags dropped).
    A name GDB cannot parse is returned whole, since ``bt`` then prints it whole."""
    if not name:
        return name
    s = _CLONE_RE.sub("", name).rstrip()
    sp = _split_function(s)
    if sp is None:
        return s
    if not gdb_can_parse(s):
        return s
    start, plen = sp
    res = s[start:plen]
    # a function returning a function pointer: "int (*get_fp(int))(char)"
    if res.startswith("(") and res.endswith(")") and len(res) > 3:
        inner = strip_params(_unwrap_declarator(res))
        if inner:
            return inner
    return res
