"""A synthetic target for debugger-free tests: registers, sparse memory, fake modules."""
from swk_plugin.arch import X86_64
from swk_plugin.cache import ModuleCache
from swk_plugin.errors import MemoryReadError
from swk_plugin.procstate import Library, LibraryState, MemoryRegion, ProcessState

RAX, RDX, RCX, RBX, RSI, RDI, RBP, RSP = range(8)
R12, R13, R14, R15, RIP = 12, 13, 14, 15, 16


class FakeSection:
    def __init__(self, name, addr, data):
        self.name, self.addr, self.data, self.size = name, addr, data, len(data)


class FakeSymbol:
    def __init__(self, name, value, size):
        self.name = self.demangled = name
        self.value, self.size = value, size
        self.kind, self.binding = "func", "global"


class FakeSymbols:
    def __init__(self, syms):
        self.syms = sorted(syms, key=lambda s: s.value)

    def lookup(self, addr):
        for s in self.syms:
            if s.value <= addr < s.value + s.size:
                return s, addr - s.value
        return None

    def __len__(self):
        return len(self.syms)


class FakeModule:
    """What steppers need of an ElfModule: sections, spans, symbols (unbiased), its byte order."""
    ptr_size = 8
    machine = "EM_X86_64"
    elfclass = 64
    byteorder = "little"

    def __init__(self, name, text=(0x1000, 0x9000), sections=(), symbols=()):
        self.name = self.path = name
        self._text = text
        self._sections = {s.name: s for s in sections}
        self.cache = ModuleCache()
        self.cache.set("symbols", FakeSymbols([FakeSymbol(*s) for s in symbols]))
        self.cache.set("lines", None)
        self.debug_file = None
        self._debug_file_resolved = True

    def section(self, name):
        return self._sections.get(name)

    def load_spans(self):
        return [self._text]

    def exec_spans(self):
        return [self._text]


class FakeLibraryState(LibraryState):
    def __init__(self, libs):
        super().__init__()
        self.libs = libs

    def scan(self):
        return list(self.libs)


def fake_library(module, base=0):
    lib = Library(module.path, base, lambda _l: module)
    lib.is_aout = True
    return lib


class FakeProcess(ProcessState):
    """Memory is a dict of address -> bytes blobs; every other byte is unreadable."""

    def __init__(self, regs_by_thread, libs=(), blobs=None, regions=None):
        super().__init__(X86_64(), FakeLibraryState(list(libs)))
        self.regs_by_thread = regs_by_thread
        self.blobs = dict(blobs or {})
        self.regions = regions
        self.reads = 0

    def write(self, addr, data):
        self.blobs[addr] = bytes(data)

    def write_words(self, addr, *words):
        self.write(addr, b"".join(w.to_bytes(8, "little") for w in words))

    def read_raw(self, addr, size):
        self.reads += 1
        out = bytearray()
        a = addr
        while a < addr + size:
            for start, blob in self.blobs.items():
                if start <= a < start + len(blob):
                    n = min(addr + size, start + len(blob)) - a
                    out += blob[a - start:a - start + n]
                    a += n
                    break
            else:
                raise MemoryReadError(a)
        return bytes(out)

    def read_thread_registers(self, thread):
        return self.regs_by_thread[thread]

    def get_thread_ids(self):
        return list(self.regs_by_thread)

    def memory_regions(self):
        return self.regions
