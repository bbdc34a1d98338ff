"""The architecture interface: everything swk knows of an instruction set and its ABI.

Above this layer code talks in DWARF register numbers and asks the Architecture for the
rest, so the CFI interpreter, the steppers and the back-ends hold no register name, opcode
or structure layout.  Every hook is stated here with its default: an architecture states
its facts and overrides only what differs, and no caller probes (getattr/hasattr) for a
hook — tests/test_layers.py checks that, and that every name read from an Architecture or
its kits outside swk_plugin/arch/ is stated here.  Adding an architecture is its own
package (arch/<name>/, as arch/x86_64/) and one line of the registry (arch/__init__.py).

Facts (class attributes; the default, who reads them):

``name``, ``aliases``       its name, and what uname, GDB, LLDB's triples call it (registry)
``elf_machine``             ELF e_machine (registry: from_elf_machine); ELF class is 8*ptr_size
``ptr_size``, ``byteorder`` 8, "little" (everyone: unpack_pointer, the register sets)
``dwarf_names``, ``general`` DWARF names by number; general registers as debuggers name them
                            (back-ends' register reads)
``sp fp ra pc``             DWARF numbers of the stack/frame pointer, return-address column,
                            pc (default: ra) (steppers, walker, unwind/apply, back-ends)
``callee_saved``            registers whose values flow from callee to caller (unwind/apply)
``max_user_address``        2**47-1 (is_canonical: the walker, the wanderer)
``syscalls``                {} (linux/ptrace: process_vm_readv's number on this host)
``capstone_mode``           None (the analysis kits)
``fp_registers``, ``x87_registers``  {} and none (procstate, back-ends, locals/frames)
``thread_pointer``, ``tls_variant``  None, 2 (procstate, back-ends, linux/tls)
``tls_tcb_offset``, ``tls_first_block``  0, None (linux/tls: variant 1's TCB end and first block)
``thread_pointer_words``    None (gdb back-end: the two 32-bit registers debuggers show it as)
``return_address_pushed``   True (steppers/analysis, steppers/wanderer, walker)
``zero_fp_is_outermost``    True (steppers/bottom)
``pac_mask_registers``      {} (back-ends, steppers/wanderer)
``sysroots``                () (linux/sysroot, linux/coredump, gdb back-end)
``long_double_format``      "x87" (locals/scopes)
``cfi_renumber``            {} (unwind/cfi)
``sp_below_cfa``            0 (unwind/apply: a caller's sp where no rule recovers it)
``scan_saved_fp``           None (steppers/wanderer: the saved fp beside a scanned return address)
``cfi_undefined``           frozenset() (unwind/cfi: registers a caller loses without a CFI rule)
``function_descriptors``    None (elf/symbols: the section of ELFv1's function descriptors)

Methods (their defaults below): reg_name, reg_number, reg_size (procstate, format, display,
locals); fp_register_name, fp_register_number, register_value (procstate, locals/frames);
fp_register_word (unwind/apply, gdb back-end: an FPR's bits as an integer);
gdb_name, lldb_name (debuggers' register names); strip_pointer_auth, pac_mask_from_note,
usable_pac_mask (procstate, unwind/apply, linux/coredump, back-ends); scan_cfa
(steppers/wanderer); unpack_pointer, unpack_int (back-ends: words the target hands over
as bytes); is_canonical (walker).

Kits: each points at one of the architecture's modules (or a lazy_module, imported on
first use), seen through its topic's ``Kit`` below: a hook the module does not state reads
as the default given there; a REQUIRED one missing fails when the class is made.  A topic
an architecture has none of is None where the Kit is ``optional``; callers check for None,
never for a hook.  Hooks (default; REQUIRED if none given):

``signal_frame`` (optional; steppers/sighandler, steppers/wanderer, unwind/modules,
    locals/frames, backends/selfproc, backends/gdb/unwinder): TRAMPOLINES,
    TRAMPOLINE_NAMES (none), trampoline_start, is_trampoline_code, SC_GREGS_SIZE; the frame:
    frame_kind (None: one kind), else sigcontext_address, rule_at, rule (None each);
    walk_self's SC_OFFSETS, SLOT, UC_MCONTEXT and fp_registers (None each); gdb_knows (None)
``calls`` (steppers/wanderer, backends/gdb/unwinder, elf/symbols): MAX_CALL_LEN,
    calls_ending_at (CallSites, arch/callsite.py), return_sites, PLT_STUB_SIZE, plt_slot,
    PLT0_SIZE, PLT_ENTRY_SIZE, PLT_GOT_ENTRY_SIZE, PLT_RELOCATIONS, plt_entry_slot
``prologue`` (optional; steppers/framefunc): READ_SIZE, parse_prologue, is_return,
    EPILOGUE_READ (1), epilogue_at (None)
``analysis`` (lazy; analysis/): analyze, MAX_CODE
``scan`` (lazy; analysis/): split_gap, search_entries, after_call, CALL_LOOKBACK
``regsets`` (linux/coredump, backends/core, backends/ptrace): not a module but a
    UserRegsetView (arch/regsets.py): the layouts of NT_PRSTATUS, elf_prstatus and
    elf_prpsinfo, one unpack_user_regs, unpack_fp_notes ({}) and thread_pointer (None)
"""
import importlib
import types

from . import x87
from .regsets import UserRegsetView

#: A hook every architecture's kit must state (it has no sensible default).
REQUIRED = type("Required", (), {"__repr__": lambda self: "REQUIRED", "__slots__": ()})()


class Kit:
    """One topic's interface: the hooks its module offers, each with its default (REQUIRED:
    every architecture states it); ``optional``: an architecture may have no such module."""

    def __init__(self, topic, optional=False, **hooks):
        self.topic, self.optional, self.hooks = topic, optional, hooks

    def view(self, module):
        return KitView(self, module)


class KitView:
    """An architecture's module for one topic as its Kit states it: every hook an attribute,
    the module's own or the interface's default.  Names beyond the interface read through to
    the module (arch/'s own code, tests), but nothing outside swk_plugin/arch/ uses them."""

    def __init__(self, kit, module):
        missing = [n for n, default in kit.hooks.items() if default is REQUIRED and not hasattr(module, n)]
        if missing:
            raise TypeError(f"{module.__name__} lacks {', '.join(missing)}: every architecture's "
                            f"{kit.topic} states them (arch/base.py)")
        self.kit, self.module = kit, module
        for name, default in kit.hooks.items():
            setattr(self, name, getattr(module, name, default))

    def __getattr__(self, name):
        module = vars(self).get("module")
        if module is None or name.startswith("__"):        # half-made (copy, pickle): no hooks yet
            raise AttributeError(name)
        return getattr(module, name)

    def __repr__(self):
        return f"<{self.kit.topic} {self.module.__name__}>"


#: steppers/sighandler, steppers/wanderer, unwind/modules, locals/frames, backends/selfproc,
#: backends/gdb/unwinder.  None: the architecture knows no signal frame.
SIGNAL_FRAME = Kit(
    "signal_frame", optional=True,
    TRAMPOLINES=REQUIRED,           # ((the trampoline's code, where its syscall sits), ...)
    TRAMPOLINE_NAMES=frozenset(),   # the symbols a trampoline may have
    trampoline_start=REQUIRED,      # (code_at, pc, exact) -> the trampoline's start or None
    is_trampoline_code=REQUIRED,    # (code) -> whether code starts a trampoline
    SC_GREGS_SIZE=REQUIRED,         # bytes of saved general registers a stepper must read
    frame_kind=None,                # (code_at, pc, exact, name) -> the kind of frame (.rule,
                                    # .sigcontext_address) a trampoline returns from, or None;
                                    # None here: one kind, described by the next three
    sigcontext_address=None,        # (trampoline frame's sp) -> the saved registers' address
    rule_at=None,                   # (read, trampoline sp) -> the rule, for a frame of varying size
    rule=None,                      # () -> the rule, for a frame of fixed size
    SC_OFFSETS=None,                # {regno: offset in the sigcontext}, SLOT (bytes each) and
    SLOT=None,                      # UC_MCONTEXT (the sigcontext in a ucontext): walk_self's
    UC_MCONTEXT=None,               # registers; None: walk_self does not know them
    fp_registers=None,              # (read_mem, sigcontext) -> {regno: bytes} of the FP state
    gdb_knows=None)                 # (code at the trampoline) -> whether GDB 13's own sigtramp
                                    # unwinder takes it (it matches code); None: as GDB's x86
                                    # sniffers, by signal-frame CFI and by name

#: steppers/wanderer, backends/gdb/unwinder, elf/symbols (PLT entries' synthetic symbols).
CALLS = Kit(
    "calls",
    MAX_CALL_LEN=REQUIRED,          # the longest call instruction
    calls_ending_at=REQUIRED,       # (code before end, end) -> [CallSite] (arch/callsite.py)
    return_sites=REQUIRED,          # (a function's code, start) -> ({ra: call}, end decoded)
    PLT_STUB_SIZE=REQUIRED,         # bytes plt_slot reads
    plt_slot=REQUIRED,              # (code, addr, got_base) -> the GOT slot a stub jumps through
    PLT0_SIZE=REQUIRED,             # .plt's first entry, then entries of PLT_ENTRY_SIZE
    PLT_ENTRY_SIZE=REQUIRED,
    PLT_GOT_ENTRY_SIZE=REQUIRED,    # .plt.got's entries
    PLT_RELOCATIONS=REQUIRED,       # relocation types that fill a PLT's GOT slot
    plt_entry_slot=REQUIRED)        # (entry, addr, got_base) -> its GOT slot or None

#: steppers/framefunc.  None: no standard frame the stepper could follow.
PROLOGUE = Kit(
    "prologue", optional=True,
    READ_SIZE=REQUIRED,             # bytes parse_prologue reads at a function's start
    parse_prologue=REQUIRED,        # (code, start) -> a Prologue (.rule_at) or None
    is_return=REQUIRED,             # (code) -> whether code is a return
    EPILOGUE_READ=1,                # bytes read at a pc for epilogue_at / is_return
    epilogue_at=None,               # (code, pc, function bounds) -> is_return's answer, where a
                                    # return is a sequence (AArch64's ldp; ret, or a tail call)
    frame_record=None)              # the rule of a standard frame's body from its frame pointer
                                    # alone, for code that cannot be read (GDB's i386 fallback,
                                    # eu-stack's); None: not followed without its code

#: analysis/ (the Analyzer, bounds): imported on first use.
ANALYSIS = Kit(
    "analysis",
    analyze=REQUIRED,               # stack heights over a function's code (arch/heights.py)
    MAX_CODE=REQUIRED)              # the largest function analysed

#: analysis/ (the Analyzer, bounds): imported on first use.
SCAN = Kit(
    "scan",
    split_gap=REQUIRED,             # (code, lo) -> function starts in a gap between symbols
    search_entries=REQUIRED,        # (code, lo, pc, exact, region_start) -> entries before pc
    after_call=REQUIRED,            # (code) -> whether code ends in a call
    CALL_LOOKBACK=REQUIRED)         # bytes after_call reads

KITS = (SIGNAL_FRAME, CALLS, PROLOGUE, ANALYSIS, SCAN)


class lazy_module:
    """A kit named by its module's name, imported on first use: an architecture's stack-height
    analysis and entry scanner cost start-up time, and most walks (code with CFI or frame
    pointers) never need them."""

    def __init__(self, name):
        self.name = name


class _LazyKit:
    def __init__(self, kit, name):
        self.kit, self.name, self.view = kit, name, None

    def __get__(self, obj, owner):
        if self.view is None:
            self.view = self.kit.view(importlib.import_module(self.name))
        return self.view


class Architecture:
    name = "?"
    #: What uname, GDB (``i386:x86-64``) and LLDB's triples call it, besides ``name``.
    aliases = ()
    #: ELF e_machine of its programs and cores; their ELF class is 8 * ptr_size.
    elf_machine = None
    ptr_size = 8
    #: The byte order of its words (the register sets, unpack_pointer).
    byteorder = "little"
    #: DWARF register names indexed by DWARF number (None where unused).
    dwarf_names = ()
    #: DWARF numbers of the stack pointer, frame pointer and return-address column.
    sp = fp = ra = None
    #: Where a frame's own pc lives in a register set (x86: the RA column itself).
    pc = None
    #: Registers a callee must preserve: their values flow from callee to caller.
    callee_saved = frozenset()
    #: Largest user-space address (canonical form), for validating code addresses.
    max_user_address = (1 << 47) - 1
    #: General registers as the debuggers name them, indexed by DWARF number.
    general = ()
    #: The kits (module docstring): modules (or lazy_module names), seen through their Kit.
    signal_frame = calls = prologue = analysis = scan = None
    #: The register sets of NT_PRSTATUS and PTRACE_GETREGSET (arch/regsets.py).
    regsets = None
    #: Linux system call numbers of the calls swk makes itself on a machine of this
    #: architecture (process_vm_readv, for the ptrace back-end's memory reads).
    syscalls = {}
    capstone_mode = None
    #: Floating-point and vector registers by DWARF number: (bytes, the names debuggers
    #: may give it, widest first).  Back-ends read them only when a value lives in one.
    fp_registers = {}
    #: Those of them in the x87 format: a float or double there is converted (x87.py).
    x87_registers = frozenset()
    #: The thread pointer's name in a general register set (regsets, debuggers), and where
    #: a module's static TLS block lies from it: variant 2 below it (x86), 1 above it.
    thread_pointer = None
    tls_variant = 2
    #: Variant 1: how far below the thread pointer the TCB ends (Power's ABI puts the pointer
    #: 0x7000 past it, so 16-bit offsets reach 64 KiB of TLS), and how far past that end the
    #: static executable's own block starts before its alignment (None: the two-word TCB
    #: {dtv, private} lies there, as on AArch64; 0 where glibc's TLS_TCB_SIZE is 0: the TCB lies
    #: before the pointer).
    tls_tcb_offset = 0
    tls_first_block = None
    #: Where a debugger shows no register for the thread pointer but its two 32-bit halves
    #: (high word first): s390x's access registers a0 and a1.
    thread_pointer_words = None
    #: Whether a call pushes the return address (x86), so a callee's CFA is always above its
    #: sp; False where it is left in a register (AArch64's x30): a leaf's CFA may be its sp.
    return_address_pushed = True
    #: Whether a zero frame pointer marks the outermost frame: the x86-64 psABI ("user code
    #: should mark the deepest stack frame by setting the frame pointer to zero"), i386's
    #: _start (xorl %ebp, %ebp: GDB's i386 unwinder ends there), AAPCS64's frame records.
    zero_fp_is_outermost = True
    #: Pointer authentication: {"gdb": register, "lldb": register} naming the target's code
    #: mask in each debugger; empty where code pointers are never signed.
    pac_mask_registers = {}
    #: Directories that may hold a cross target's libraries on this machine (Debian's
    #: /usr/<triple>), tried after a user's sysroot when a path does not exist as is.
    sysroots = ()
    #: The format of C's ``long double`` (a DW_ATE_float of 10, 12 or 16 bytes): x87's
    #: 80-bit extended precision, or IEEE binary128 (AArch64).
    long_double_format = "x87"
    #: How far a caller's stack pointer is below the CFA where no rule says where it is: 0
    #: where a frame's CFA is its caller's sp; s390x's 160, the register save area a caller
    #: leaves below its r15 (CFA = r15 + 160 at entry).
    sp_below_cfa = 0
    #: Where a function saves its caller's frame pointer relative to the return address the
    #: stack scanner found (a frame record: AArch64's and RISC-V's one slot below, s390x's
    #: r11 24 bytes below r14 in the save area), or None where none lies at a fixed place
    #: (x86, where the frame-pointer chain says it; Power's r31).
    scan_saved_fp = None
    #: {True (.eh_frame) / False (.debug_frame): {column as written: DWARF number}}, where a
    #: producer numbers some registers its own way in CFI (GCC's .eh_frame on Power).
    cfi_renumber = {}
    #: Registers GDB's DWARF unwinder takes as undefined in a caller wherever the CFI gives no
    #: rule for them (its gdbarch's dwarf2 init_reg: Power's volatile registers), so values there
    #: print as <optimized out>, not as the callee's; empty where they keep the callee's value.
    cfi_undefined = frozenset()
    #: The section holding function descriptors (Power ELFv1's ``.opd``), where a function
    #: symbol's value is its descriptor's address and the descriptor's first word its code's;
    #: None where a function symbol is its code's address.
    function_descriptors = None

    def __init_subclass__(cls, **kwargs):
        """Each kit module seen through its Kit; a missing required kit fails here, at import."""
        super().__init_subclass__(**kwargs)
        for kit in KITS:
            value = cls.__dict__.get(kit.topic)
            if isinstance(value, lazy_module):
                setattr(cls, kit.topic, _LazyKit(kit, value.name))
            elif isinstance(value, types.ModuleType):
                setattr(cls, kit.topic, kit.view(value))
            elif not kit.optional and all(vars(k).get(kit.topic) is None for k in cls.__mro__):
                raise TypeError(f"architecture {cls.name} states no {kit.topic} (arch/base.py)")
        if not isinstance(cls.regsets, UserRegsetView):
            raise TypeError(f"architecture {cls.name}: regsets is a UserRegsetView (arch/regsets.py)")

    def __init__(self):
        self.dwarf_numbers = {n: i for i, n in enumerate(self.dwarf_names) if n}
        if self.pc is None:
            self.pc = self.ra
        #: All ones in a pointer: addresses wrap around it.
        self.address_mask = (1 << (8 * self.ptr_size)) - 1

    def reg_name(self, regno):
        if 0 <= regno < len(self.dwarf_names) and self.dwarf_names[regno]:
            return self.dwarf_names[regno]
        return f"r{regno}"

    def reg_number(self, name):
        return self.dwarf_numbers[name]

    def reg_size(self, regno):
        """Bytes of the register with DWARF number ``regno``."""
        return self.ptr_size

    def fp_register_name(self, regno):
        """The narrowest debugger name of FP/vector register ``regno`` (xmm0, st0)."""
        entry = self.fp_registers.get(regno)
        return entry[1][-1] if entry else f"r{regno}"

    def fp_register_word(self, regno, raw):
        """The bits of floating-point register ``regno`` as an integer (its bytes ``raw`` up to
        the register's size, in the target's order: the word a move from a general register
        put there, s390x's ``ldgr``), or None when ``raw`` is short."""
        entry = self.fp_registers.get(regno)
        if entry is None or raw is None or len(raw) < entry[0]:
            return None
        return int.from_bytes(raw[:entry[0]], self.byteorder)

    def fp_register_number(self, name):
        for regno, (_size, names) in self.fp_registers.items():
            if name in names:
                return regno
        raise KeyError(name)

    def register_value(self, regno, raw, float_size=None):
        """The bytes a value of ``float_size`` bytes (a floating type; None: any other
        type) has when it lives in register ``regno`` holding ``raw``.  A value narrower
        than what this returns is its low-order end (GDB's default_value_from_register):
        the first bytes on a little-endian target, the last on a big-endian one; an
        architecture that keeps it elsewhere returns exactly ``float_size`` bytes."""
        if float_size is not None and regno in self.x87_registers:
            return x87.convert(raw, float_size)
        return raw

    def gdb_name(self, regno):
        """GDB's name of the register with DWARF number ``regno`` (None: unknown)."""
        return self.reg_name(regno) if 0 <= regno < len(self.dwarf_names) else None

    def lldb_name(self, regno):
        """LLDB's name of the register with DWARF number ``regno`` (None: unknown)."""
        return self.gdb_name(regno)

    def strip_pointer_auth(self, addr, mask=None):
        """``addr`` without a pointer-authentication code (``mask``: the target's code mask,
        None when unknown).  Nothing to strip on an instruction set without one."""
        return addr

    def pac_mask_from_note(self, desc):
        """The code mask of a core's pointer-authentication note, or None."""
        return None

    def usable_pac_mask(self, mask):
        """A debugger's code address mask if it names pointer-authentication bits, else None."""
        return None

    def scan_cfa(self, slot, read_pointer):
        """The callee's CFA when the stack scanner found its return address at ``slot`` and
        nothing else says where the CFA is: just above the slot where a call pushes it."""
        return slot + self.ptr_size

    def unpack_pointer(self, data, offset=0):
        return int.from_bytes(data[offset:offset + self.ptr_size], self.byteorder)

    def unpack_int(self, data, signed=False):
        """An integer stored in the target's byte order in ``data`` (all of it): a word a
        debugger or the kernel hands over as bytes.  Hot readers bind ``byteorder`` once
        instead of calling this per value."""
        return int.from_bytes(data, self.byteorder, signed=signed)

    def is_canonical(self, addr):
        return 0 < addr <= self.max_user_address

    def __eq__(self, other):
        return isinstance(other, Architecture) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return f"<Architecture {self.name}>"
