"""Tail-call frames: functions that jumped instead of calling, rebuilt from DWARF call sites.

A caller's call site says which function it called; when the frame below is a
different function, the called one must have reached it through tail calls
(``jmp``).  As GDB does (call_site_find_chain), every chain of tail-call sites
(DW_TAG_call_site with DW_AT_call_tail_call) leading from the called function
to the callee's is followed; the chains are intersected, keeping the
common outermost part (callers) and the common innermost part (callees), and
when they share nothing the answer is ambiguous and no frame is made.  Any
doubt — a call site with no known target, a target without DWARF function —
gives no frames at all, never a guess.

Addresses given to and returned by this module are absolute; ``libraries`` is the
process's [(module, bias)], searched in order for a callee named only by its
linkage name (a call into another library), as GDB's minimal symbols are.
"""
from ..elf.strtab import may_name
from ..elf.symbols import module_symbols
from .entry import call_site_at, call_sites, call_target, is_tail_call
from .scopes import engine_for

#: Bounds on the search: tail-call sites visited, chains compared.
MAX_SITES = 4096
MAX_CHAINS = 4096


class NoChain(Exception):
    """There is no unambiguous chain (GDB's NO_ENTRY_VALUE_ERROR)."""


class TailSite:
    """One tail-call site: a tail-call frame's function and its pc (the site's return pc)."""
    __slots__ = ("module", "bias", "function", "pc", "node")

    def __init__(self, module, bias, function, pc, node):
        self.module, self.bias, self.function, self.pc, self.node = module, bias, function, pc, node

    @property
    def abs_pc(self):
        return self.pc + self.bias

    def __repr__(self):
        return f"<TailSite {self.function.name} 0x{self.abs_pc:x}>"


class _Resolver:
    def __init__(self, libraries):
        self.libraries = [(m, b) for m, b in libraries if m is not None]
        self.functions = {}

    def library_at(self, addr):
        for module, bias in self.libraries:
            try:
                if any(lo + bias <= addr < hi + bias for lo, hi in module.exec_spans()):
                    return module, bias
            except Exception:   # an unreadable module holds nothing
                continue
        return None, None

    def targets(self, module, bias, site):
        """The absolute entry addresses a call site may call; NoChain when unknown."""
        eng = engine_for(module)
        tgt = call_target(eng, site) if eng is not None else None
        if tgt is None or tgt[0] == "expr":
            # an indirect call: its target needs the caller's registers, which a chain
            # of tail-call frames does not have (GDB gives up there too)
            raise NoChain("a call site without a known target")
        kind, value = tgt
        if kind == "addr":
            return [value + bias]
        if kind == "addrs":                          # every part of a split function, as GDB
            return [a + bias for a in value]
        for other, obias in self.libraries:          # ("name", linkage name): the first definer
            if not may_name(other, value):          # (its string tables lack the name)
                continue
            table = module_symbols(other)
            for hit in (table.by_name(value) if table is not None else ()):
                if hit._mst in ("text", "file_text"):
                    return [hit.value + obias]
        raise NoChain(f"no function {value}")

    def tail_sites(self, addr):
        """The tail-call sites of the function entered at ``addr`` (GDB's
        func_addr_to_tail_call_list: NoChain unless DWARF has a function starting there)."""
        found = self.functions.get(addr)
        if found is None:
            module, bias = self.library_at(addr)
            eng = engine_for(module) if module is not None else None
            fn = eng.function_head_at(addr - bias) if eng is not None else None
            if fn is None or fn.entry_pc != addr - bias:
                raise NoChain(f"no DWARF function starts at 0x{addr:x}")
            sites = [TailSite(module, bias, fn, pc, node) for pc, node in sorted(call_sites(fn).items())
                     if is_tail_call(node)]
            found = self.functions[addr] = sites
        return found


def tail_call_chain(caller_module, caller_bias, caller_ra, callee_entry, libraries):
    """The tail-call frames between a caller (its return address ``caller_ra``) and a
    callee entered at ``callee_entry``, innermost first, as [TailSite]; [] when there
    are none or they cannot be told unambiguously."""
    eng = engine_for(caller_module)
    if eng is None:
        return []
    try:
        fn = eng.function_at(caller_ra - caller_bias - 1)
        site = call_site_at(fn, caller_ra - caller_bias) if fn is not None else None
        if site is None:
            return []
        resolver = _Resolver(libraries)
        result = _search(resolver, caller_module, caller_bias, site, callee_entry)
    except (NoChain, RecursionError):
        return []
    except Exception:   # malformed DWARF: no tail-call frames, never an error
        return []
    if result is None:
        return []
    chain, callers, callees = result
    n = len(chain)
    if not n:
        return []
    if callers == n and callees == n:
        return list(reversed(chain))
    return list(reversed(chain[n - callees:])) + list(reversed(chain[:callers]))


def _search(resolver, module, bias, site, callee_entry):
    """call_site_find_chain: every chain of tail-call sites from ``site``'s targets to
    the callee, intersected; (chain, callers, callees) or None (ambiguous)."""
    state = {"result": None, "chains": 0, "sites": 0}
    chain = []
    visited = set()

    def candidate():
        state["chains"] += 1
        if state["chains"] > MAX_CHAINS:
            raise NoChain("too many chains")
        res = state["result"]
        if res is None:
            state["result"] = [list(chain), len(chain), len(chain)]
            return True
        old, callers, callees = res
        callers = min(callers, len(chain))
        for i in range(callers):
            if old[i] is not chain[i]:
                callers = i
                break
        callees = min(callees, len(chain))
        for i in range(callees):
            if old[len(old) - 1 - i] is not chain[len(chain) - 1 - i]:
                callees = i
                break
        if callers == 0 and callees == 0:
            state["result"] = False          # ambiguous: nothing in common
            return False
        res[1], res[2] = callers, callees
        return True

    def visit(mod, b, s):
        addrs = resolver.targets(mod, b, s)
        if callee_entry in addrs:
            return candidate()
        for addr in addrs:
            for tsite in resolver.tail_sites(addr):
                key = tsite.abs_pc
                if key in visited:
                    continue
                state["sites"] += 1
                if state["sites"] > MAX_SITES:
                    raise NoChain("too many tail-call sites")
                visited.add(key)
                chain.append(tsite)
                if not visit(tsite.module, tsite.bias, tsite.node):
                    return False
                visited.discard(key)
                chain.pop()
        return True

    visit(module, bias, site)
    res = state["result"]
    if not res:
        return None
    return res[0], res[1], res[2]
