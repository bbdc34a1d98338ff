"""GDB's <symbol+offset> for pointer values: the minimal symbol, or the DWARF function
when it starts no later (build_address_symbolic), for one module or a whole process."""
from ..dwarf.typeprint import TypePrinter, canon
from ..elf.symbols import module_symbols
from .dwarfconst import LANG_CPP
from .scopes import engine_for


def library_pairs(libs):
    """[(module, bias)] of Library objects or (module, bias) pairs that have a module."""
    out = []
    for lib in libs or ():
        if isinstance(lib, tuple):
            module, bias = lib
        else:
            module, bias = getattr(lib, "module", None), getattr(lib, "base", 0)
        if module is not None:
            out.append((module, bias))
    return out


def module_symbolizer(module, bias):
    """GDB's <symbol+offset> for an address in ``module`` (build_address_symbolic: the
    minimal symbol, or the DWARF function when it starts no later), else None."""
    cache = module.cache.memo("symbolizers", 64)
    f = cache.get(bias)
    if f is not None:
        return f

    def symbolize(a):
        off = a - bias
        if off < 0:
            return None
        st = module_symbols(module)
        msym = st.lookup(off) if st is not None else None
        if msym is not None:
            s = msym[0]
            if s.size == 0 and s._mst not in ("text", "file_text", "ifunc"):
                msym = None                       # zero-sized data symbols are not used
        fn = None
        if msym is None or msym[0]._mst in ("text", "file_text"):
            eng = engine_for(module)
            try:
                fn = eng.function_at(off) if eng is not None else None
            except Exception:
                fn = None
        name = loc = None
        if fn is not None:
            loc = fn.entry_pc
            name = fn.name
            if fn.cu.language in LANG_CPP and msym is not None and msym[0].value == loc:
                name = msym[0].demangled          # C++ symbols print with their parameters
                if name == msym[0].name and not name.startswith("_Z"):
                    name = _physname(eng, fn) or name     # not mangled (main): GDB computes them
        if msym is not None:
            s = msym[0]
            if fn is None or s.value > loc or (s.value == off and loc != off):
                name = s.demangled
                loc = s.value
        if name is None:
            return None
        k = off - loc
        return f"{name}+{k}" if k else name

    return cache.put(bias, symbolize)


def _physname(eng, fn):
    """GDB's name of a C++ function without a linkage name (``main()``): its name and
    parameter types, as dwarf2_physname computes them; None if they cannot be read."""
    try:
        params = TypePrinter(eng.d).physname_params(fn.cu, fn.die)
    except Exception:   # malformed DWARF: the minimal symbol's name
        return None
    if params.startswith("(void)"):
        params = "()" + params[6:]      # C++ prints no "void" in an empty parameter list
    return canon(fn.name + params)      # dwarf2_canonicalize_name: main(int, char**)


class Symbolizer:
    """GDB's <symbol+offset> for an address anywhere in a process (``symbolizer(addr)``), and
    whether an address is a function descriptor (``descriptor(addr)``: ELFv1's .opd, where a
    function pointer points; GDB prints such a pointer ``@DESCRIPTOR: ENTRY <function>``)."""
    __slots__ = ("spans", "_names")

    #: Addresses whose text is remembered (threads' walks print the same pointers over and over).
    REMEMBERED = 1 << 14

    def __init__(self, spans):
        self.spans = spans
        self._names = {}

    def _span(self, a):
        for lo, hi, module, bias in self.spans:
            if lo <= a < hi:
                return module, bias
        return None

    def __call__(self, a):
        names = self._names
        if a in names:
            return names[a]
        span = self._span(a)
        name = module_symbolizer(*span)(a) if span is not None else None
        if len(names) >= self.REMEMBERED:
            names.clear()
        names[a] = name
        return name

    def descriptor(self, a):
        span = self._span(a)
        if span is None:
            return False
        st = module_symbols(span[0])
        return st is not None and st.holds_descriptor(a - span[1])


def make_symbolizer(libraries):
    """A process-wide Symbolizer over ``libraries``: (module, bias) pairs (or objects with
    .module and .base), for format_value(..., symbolize=...).  Made once per walk (the walk
    keeps it); each module's own symbolizer is kept in the module's cache."""
    spans = []
    for lib in libraries:
        if isinstance(lib, tuple):
            module, bias = lib
        else:
            module, bias = lib.module, lib.base
        if module is None:
            continue
        try:
            for lo, hi in module.load_spans():
                spans.append((lo + bias, hi + bias, module, bias))
        except Exception:
            continue
    spans.sort(key=lambda s: s[0])
    return Symbolizer(spans)
