"""Stack-height analysis for code without CFI (spec: AnalysisStepper).

``frame_rule_at(walker, pc, exact)`` answers what CFI would: where the CFA,
the return address and the saved callee-saved registers are at ``pc``.  It
finds the function's bounds (bounds.py), analyses the function once
(x86_64.py) and caches the result per walker, keyed by function start, until
a library is loaded or unloaded.  Code outside any module (JIT) is
re-analysed after the target runs, since it may have been rewritten.
"""
from . import bounds
from .rule import FrameRule
from .x86_64 import NOT_REACHED, AnalysisError, FunctionAnalysis, analyze, is_noreturn_name

__all__ = ["FrameRule", "FunctionAnalysis", "Analyzer", "analyzer_for", "frame_rule_at"]

#: Analyses kept per walker before the cache starts over.
MAX_CACHED = 8192


class Analyzer:
    """Function bounds and analyses for one walker's process."""

    def __init__(self, walker):
        self.walker = walker
        self._functions = {}    # (start, end) -> FunctionAnalysis, or str: why it failed
        self._searches = {}     # (pc, exact) -> [Bounds] from the backward search, this generation
        self._noreturn = {}
        self._generation = None
        self.analyses = 0       # functions analysed so far (for tests and benchmarks)
        libs = walker.process_state.library_state
        if libs is not None:
            libs.add_listener(self._library_changed)

    def _library_changed(self, library, change):
        self.clear()

    def clear(self):
        self._functions.clear()
        self._searches.clear()
        self._noreturn.clear()

    # --- queries ----------------------------------------------------------------------------
    def lookup(self, pc, exact):
        """(FrameRule, "") for pc, or (None, why not).  See frame_rule_at."""
        fa, b, res, why = self._find(pc, exact)
        if fa is None:
            return None, why
        if res is None:
            return None, f"stack height unknown at 0x{pc:x} ({b.how} entry 0x{b.start:x})"
        return res, ""

    def function_at(self, pc, exact=True):
        """(FunctionAnalysis, Bounds) of the function whose analysis reaches pc, or (None, None)."""
        fa, b, _res, _why = self._find(pc, exact)
        return fa, b

    def _find(self, pc, exact):
        ps = self.walker.process_state
        if ps.generation != self._generation:
            self._generation = ps.generation
            self._searches.clear()
        why = "no function bounds for this address"
        for b in self._candidates(pc, exact):
            fa = self.analysis(b)
            if isinstance(fa, str):
                why = f"cannot analyse the {b.how} function at 0x{b.start:x}: {fa}"
                continue
            res = fa.rule_at(pc, exact)
            if res is NOT_REACHED:
                why = (f"0x{pc:x} is not {'an instruction' if exact else 'a call'} reached from "
                       f"the {b.how} entry 0x{b.start:x}")
                continue
            return fa, b, res, ""
        return None, None, None, why

    def analysis(self, b):
        """The FunctionAnalysis for Bounds ``b`` (cached), or a str saying why there is none."""
        ps = self.walker.process_state
        key = (b.start, b.end)
        fa = self._functions.get(key)
        if fa is not None and (isinstance(fa, str) or fa.generation in (None, ps.generation)):
            return fa
        follow = None
        if b.how == "symbol" and b.name:
            table = _symbols(b.lib)
            if table is not None:
                follow = lambda t, lib=b.lib, name=b.name: bounds.cold_part(lib, table, name, t)  # noqa: E731
        try:
            fa = analyze(bounds.reader(ps), b.start, b.end, follow, self._is_noreturn, hi=b.hi)
        except AnalysisError as exc:
            fa = str(exc)
        self.analyses += 1
        if len(self._functions) >= MAX_CACHED:
            self._functions.clear()
        if b.how == "search":
            if isinstance(fa, str):
                return fa                   # JIT code may be written later: do not remember
            fa.generation = ps.generation
        self._functions[key] = fa
        return fa

    # --- bounds -----------------------------------------------------------------------------
    def _candidates(self, pc, exact):
        from ..steppers.context import module_at
        from ..steppers.debug import module_cfi
        lib, mod = module_at(self.walker, pc)
        if mod is not None:
            table = _symbols(lib)
            found = bounds.symbol_bounds(lib, mod, table, pc) if table is not None else None
            if found is not None:
                yield from found
                if not found or found[0].sized:
                    return          # a sized symbol (or a .cold part) is the function: no guessing
            try:
                cfi = module_cfi(mod)
            except Exception:
                cfi = []
            b = bounds.fde_bounds(lib, cfi, pc)
            if b is None:
                b = bounds.gap_bounds(self.walker.process_state, lib, mod, table, cfi, pc)
            if b is not None:
                yield b
                return
        if not exact and not self._after_call(pc + 1):
            return
        found = self._searches.get((pc, exact))
        if found is None:
            found = self._searches[(pc, exact)] = bounds.search_bounds(self.walker.process_state, pc, exact)
        yield from found

    def _after_call(self, ra):
        """Whether the bytes before ``ra`` end a call instruction (cheap, before a search)."""
        from .x86_64 import decoder
        n = 10                                  # the longest call: prefixes, REX, SIB, disp32
        code = bounds.reader(self.walker.process_state)(ra - n, n)
        if len(code) < n:
            return False
        md = decoder()
        for k in range(2, n + 1):
            for _a, size, mn, _ops in md.disasm_lite(code[n - k:], 0, 1):
                if size == k and mn.rpartition(" ")[2] == "call":
                    return True
        return False

    def _is_noreturn(self, target):
        r = self._noreturn.get(target)
        if r is None:
            from ..steppers.context import module_at
            lib, mod = module_at(self.walker, target)
            table = _symbols(lib) if mod is not None else None
            hit = table.lookup(target - lib.base) if table is not None else None
            r = self._noreturn[target] = bool(hit is not None and hit[1] == 0
                                              and is_noreturn_name(hit[0].name))
        return r


def _symbols(lib):
    from ..symlookup import module_symbols
    mod = lib.module if lib is not None else None
    return module_symbols(mod) if mod is not None else None


def analyzer_for(walker):
    """The walker's Analyzer, made on first use."""
    an = getattr(walker, "_swk_analyzer", None)
    if an is None:
        an = walker._swk_analyzer = Analyzer(walker)
    return an


def frame_rule_at(walker, pc, exact):
    """The FrameRule at ``pc`` for a frame of ``walker``'s process, or None.

    ``pc`` is what Frame.lookup_pc gives: exact=True for a top or
    signal-interrupted frame (pc is the next instruction to run), exact=False
    for a caller (pc is its return address minus one: the rule is the one of
    the call instruction holding it, and there is none if no call does).
    None when the function cannot be found or analysed, or its stack height
    at pc is unknown.
    """
    return analyzer_for(walker).lookup(pc, exact)[0]
