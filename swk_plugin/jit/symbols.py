"""The JIT symbol source SymbolLookup asks for an address no module holds.

Each stop looks again (ProcessState.cache): a runtime names new code all the time, and
frees or moves old code, so nothing here outlives a stop except the parsed files
themselves (perfmap.open_perf_map, shared while a file is unchanged).
"""
from . import gdbjit, jitdump, perfmap

#: JSON's frame kind for code a JIT source names.
JIT_KIND = "jit"
#: The sources GDB and LLDB read themselves (both load GDB-JIT objects): a debugger's own
#: line for such a frame already names it; for the others only swk's line does.
DEBUGGERS_READ = frozenset({gdbjit.SOURCE})


def named_only_by_swk(frame):
    """Whether ``frame`` is JIT code named from a source no debugger reads (a perf map)."""
    obj = frame.object
    return isinstance(obj, JitSymbol) and obj.source not in DEBUGGERS_READ


class JitSymbol:
    """SymbolLookup's object for a frame in JIT code: the name a runtime published for
    [value, value + size), and which source published it (``perf-map``, ``gdb-jit``)."""
    __slots__ = ("name", "value", "size", "source", "origin")

    def __init__(self, name, value, size, source, origin=None):
        self.name, self.value, self.size, self.source = name, value, size, source
        self.origin = origin        # the file or in-memory object that named it

    def __repr__(self):
        return f"<JitSymbol {self.name!r} @0x{self.value:x}+0x{self.size or 0:x} from {self.source}>"


class JitSymbols:
    """The JIT names of one process.  ``perf_map``: the perf map's path (a core's, copied
    elsewhere: --perf-map); by default the runtime's own, /tmp/perf-PID.map.  ``jitdump``: the
    jitdump's path (--jitdump: a core holds the code but not the file); by default the file
    the process maps."""

    def __init__(self, perf_map=None, jitdump=None):
        self.perf_map = perf_map
        self.jitdump = jitdump

    def perf_map_path(self, ps):
        return self.perf_map if self.perf_map is not None else perfmap.default_path(ps.get_process_id())

    def current_perf_map(self, ps):
        """The perf map as it is at this stop (the file is looked at once per stop), or None."""
        path = self.perf_map_path(ps)
        if path is None:
            return None
        if self.perf_map is None and ps.cache.value(("perf-map-stale", path),
                                                    lambda: perfmap.stale(path, ps.get_process_id())):
            return None
        return ps.cache.value(("perf-map", path), lambda: perfmap.open_perf_map(path))

    def current_jitdump(self, ps):
        """The jitdump as it is at this stop (the file given, else the one the process maps),
        or None."""
        if self.jitdump is None:
            return jitdump.current_jitdump(ps)
        return ps.cache.value(("jitdump", self.jitdump), lambda: jitdump.open_jitdump(self.jitdump))

    def lookup(self, ps, addr):
        """A JitSymbol for ``addr``, or None: from the object the JIT registered for GDB (its
        own symbol table), else from the jitdump (given, or the one the process maps), else from the
        perf map."""
        obj = gdbjit.object_at(ps, addr)
        hit = obj.symbol_at(addr) if obj is not None else None
        if hit is not None:
            sym = hit[0]
            return JitSymbol(sym.demangled, sym.value, sym.size, gdbjit.SOURCE, obj.name)
        dump = self.current_jitdump(ps)
        load = dump.lookup(addr) if dump is not None else None
        if load is not None:
            return JitSymbol(load.name, load.start, load.size, jitdump.SOURCE, dump.path)
        pm = self.current_perf_map(ps)
        entry = pm.lookup(addr) if pm is not None else None
        if entry is not None:
            return JitSymbol(entry.name, entry.start, entry.size, perfmap.SOURCE, pm.path)
        return None


#: The sources of a process whose walker was given none (the runtime's own files).
DEFAULT = JitSymbols()


def jit_sources(ps):
    """The JitSymbols ``ps``'s walker names JIT code with (the files its front end was given:
    the unwinder must read the jitdump the names came from), else DEFAULT."""
    lookup = ps.walker.symbol_lookup if ps.walker is not None else None
    jit = getattr(lookup, "jit", None)
    return jit if isinstance(jit, JitSymbols) else DEFAULT
