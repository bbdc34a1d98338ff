"""Caches with a stated lifetime: the one rule for what swk may remember and when
it must forget.

Every cache in swk lives in one of three stores, named after what its contents
depend on:

* ``ElfModule.cache`` (a ModuleCache): what one file's bytes decide — symbol
  tables, CFI tables and the rule at each pc, line tables, DWARF scopes and
  variable plans, function bounds in file addresses.  It lives as long as the
  ElfModule; ``open_module`` makes a new one when the file changes (path,
  mtime, size).
* ``LibraryState.cache``: what the loaded files and their load addresses
  decide — names and bounds per absolute address, prologues, analyses of
  module code.  Dropped whenever the library list changes.
* ``ProcessState.cache``: what the target's memory and registers decide at
  one stop — walks, analyses and trampoline checks of anonymous (JIT) code.
  Dropped by ``ProcessState.invalidate()``: every stop, resume and write.

Nothing else may keep target-derived state across calls.  A value is built by
the caller's function the first time it is asked for; tables (per-address
memos) start over when they grow past their limit, so no cache is unbounded.
"""
import contextlib
import gc
import threading

_MISSING = object()


class Memo(dict):
    """A dict that starts over when it holds ``limit`` entries: a per-address memo."""
    __slots__ = ("limit",)

    def __init__(self, limit):
        super().__init__()
        self.limit = limit

    def put(self, key, value):
        if len(self) >= self.limit:
            self.clear()
        self[key] = value
        return value


class Cache:
    """Named values and memos sharing one lifetime (see the module docstring)."""
    __slots__ = ("lifetime", "_values", "_memos", "_lock")

    def __init__(self, lifetime):
        self.lifetime = lifetime
        self._values = {}
        self._memos = {}
        self._lock = threading.Lock()

    def value(self, key, build):
        """The value stored under ``key``, built by ``build()`` the first time (None
        included: a failed build is remembered as its answer)."""
        v = self._values.get(key, _MISSING)
        if v is _MISSING:
            v = build()
            with self._lock:
                v = self._values.setdefault(key, v)
        return v

    def peek(self, key, default=None):
        """The value stored under ``key`` without building it."""
        return self._values.get(key, default)

    def set(self, key, value):
        self._values[key] = value

    def memo(self, name, limit=65536):
        """The Memo called ``name`` (made empty on first use)."""
        m = self._memos.get(name)
        if m is None:
            with self._lock:
                m = self._memos.setdefault(name, Memo(limit))
        return m

    def sizes(self):
        """{memo name: entries} and {"values": count}: what this cache holds now."""
        out = {name: len(m) for name, m in self._memos.items()}
        out["values"] = len(self._values)
        return out

    def clear(self):
        with self._lock:
            self._values.clear()
            for m in self._memos.values():
                m.clear()

    def __repr__(self):
        return f"<Cache {self.lifetime}: {len(self._values)} values, {len(self._memos)} memos>"


class ModuleCache(Cache):
    """What one ELF file decides: lives and dies with its ElfModule."""
    __slots__ = ()

    def __init__(self):
        super().__init__("file")


@contextlib.contextmanager
def collector_paused():
    """Python's cyclic garbage collector held off while a walk or its text is built.

    A deep walk makes tens of thousands of small containers (frames, their registers)
    that reference counting alone frees; the collector, run every few hundred of them,
    would go through all of the debugger's Python objects again and again (a third of
    a 10,000-frame walk).  It runs again, as it was, afterwards."""
    was = gc.isenabled()
    if was:
        gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()



class LazyPattern:
    """A regular expression compiled when first used, not when its module is imported:
    a debugger's start imports a score of swk's patterns that a plain walk never uses
    (1 ms).  Any attribute of the compiled pattern (match, sub, search, ...) is available."""
    __slots__ = ("_args", "_compiled")

    def __init__(self, pattern, flags=0):
        self._args = (pattern, flags)
        self._compiled = None

    def __getattr__(self, name):
        compiled = self._compiled
        if compiled is None:
            import re
            compiled = self._compiled = re.compile(*self._args)
        return getattr(compiled, name)
