"""Stack-height analysis for code without CFI (spec: AnalysisStepper).

``frame_rule_at(ps, pc, exact)`` answers what CFI would: where the CFA, the
return address and the saved callee-saved registers are at ``pc`` (a
StackHeight, whose ``rule`` is the UnwindRule).  It finds the function's
bounds (bounds.py), has the architecture analyse the function once
(``arch.analysis.analyze``) and keeps the result per function start: for
module code until a library is loaded or unloaded (LibraryState.cache), for
code outside any module (JIT) only for the stop (ProcessState.cache), since
it may be rewritten.
"""
import weakref

from ..arch.heights import NOT_REACHED, AnalysisError, FunctionAnalysis, StackHeight
from ..elf.symbols import module_symbols
from ..unwind.cfi import module_cfi
from ..unwind.modules import module_at, read_code
from . import bounds
from .noreturn import is_noreturn_name

__all__ = ["StackHeight", "FunctionAnalysis", "Analyzer", "analyzer_for", "frame_rule_at",
           "is_noreturn_name"]

#: Analyses kept per library list before the cache starts over.
MAX_CACHED = 8192


class Analyzer:
    """Function bounds and analyses for one process: a view over its caches."""

    def __init__(self, ps):
        self.ps = ps
        self.analyses = 0       # functions analysed so far (for tests and benchmarks)

    @property
    def _functions(self):
        """(start, end) -> FunctionAnalysis, or str: why it failed (module code)."""
        return self.ps.library_cache.memo("analysis-functions", MAX_CACHED)

    def clear(self):
        self._functions.clear()
        self.ps.library_cache.memo("analysis-noreturn").clear()

    # --- queries ----------------------------------------------------------------------------
    def lookup(self, pc, exact):
        """(StackHeight, "") for pc, or (None, why not).  See frame_rule_at."""
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
        ps = self.ps
        key = (b.start, b.end)
        jit = b.how == "search"
        store = ps.cache.memo("analysis-jit", MAX_CACHED) if jit else self._functions
        fa = store.get(key)
        if fa is not None:
            return fa
        follow = None
        if b.how == "symbol" and b.name:
            table = _symbols(b.lib)
            if table is not None:
                follow = lambda t, lib=b.lib, name=b.name: bounds.cold_part(lib, table, name, t)  # noqa: E731
        try:
            fa = ps.arch.analysis.analyze(bounds.reader(ps), b.start, b.end, follow, self._is_noreturn,
                                          hi=b.hi)
        except AnalysisError as exc:
            fa = str(exc)
        self.analyses += 1
        if jit and isinstance(fa, str):
            return fa                   # JIT code may be written later: do not remember
        return store.put(key, fa)

    # --- bounds -----------------------------------------------------------------------------
    def _candidates(self, pc, exact):
        ps = self.ps
        lib, mod = module_at(ps, pc)
        if mod is not None:
            table = _symbols(lib)
            found = bounds.symbol_bounds(ps.arch, lib, mod, table, pc) if table is not None else None
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
                b = bounds.gap_bounds(ps, lib, mod, table, cfi, pc)
            if b is not None:
                yield b
                return
        if not exact and not self._after_call(pc + 1):
            return
        searches = ps.cache.memo("analysis-searches")
        found = searches.get((pc, exact))
        if found is None:
            found = searches.put((pc, exact), bounds.search_bounds(ps, pc, exact))
        yield from found

    def _after_call(self, ra):
        """Whether the bytes before ``ra`` end a call instruction (cheap, before a search)."""
        scan = self.ps.arch.scan
        return scan.after_call(read_code(self.ps, ra - scan.CALL_LOOKBACK, scan.CALL_LOOKBACK))

    def _is_noreturn(self, target):
        memo = self.ps.library_cache.memo("analysis-noreturn")
        r = memo.get(target)
        if r is None:
            lib, mod = module_at(self.ps, target)
            table = _symbols(lib) if mod is not None else None
            hit = table.lookup(target - lib.base) if table is not None else None
            r = memo.put(target, bool(hit is not None and hit[1] == 0 and is_noreturn_name(hit[0].name)))
        return r


def _symbols(lib):
    mod = lib.module if lib is not None else None
    return module_symbols(mod) if mod is not None else None


_ANALYZERS = weakref.WeakKeyDictionary()


def analyzer_for(ps):
    """The process's Analyzer: a view over the process's caches (its analyses live in
    the library cache, those of JIT code in the stop cache), one per process state."""
    an = _ANALYZERS.get(ps)
    if an is None:
        an = _ANALYZERS[ps] = Analyzer(ps)
    return an


def frame_rule_at(ps, pc, exact):
    """The StackHeight at ``pc`` for a frame of ``ps``'s process, or None; its ``rule``
    is the UnwindRule.

    ``pc`` is what Frame.lookup_pc gives: exact=True for a top or
    signal-interrupted frame (pc is the next instruction to run), exact=False
    for a caller (pc is its return address minus one: the answer is that of the
    call instruction holding it, and there is none if no call does).  None when
    the function cannot be found or analysed, or its stack height at pc is
    unknown.
    """
    return analyzer_for(ps).lookup(pc, exact)[0]
