"""The architecture interface: everything swk knows of an instruction set and its ABI.

Above this layer code talks in DWARF register numbers and asks the
Architecture for the rest, so the CFI interpreter, the steppers and the
back-ends hold no register name, opcode or structure layout.  An architecture
fills in the class attributes and points the per-topic attributes at its own
modules (see arch/x86_64/):

``signal_frame``  the kernel's signal frame and sigreturn trampolines, or None;
``calls``         ``MAX_CALL_LEN``, ``calls_ending_at``, ``return_sites``, ``plt_target``;
``prologue``      ``parse_prologue(code, start)`` -> a Prologue with ``rule_at``,
                  and ``is_return(code)``;
``analysis``      ``analyze`` (stack heights without CFI), ``MAX_CODE``;
``scan``          ``split_gap``, ``search_entries``, ``after_call``;
``regsets``       the general-register layout of NT_PRSTATUS / PTRACE_GETREGSET.

and, where the instruction set differs from x86-64's defaults below:
``return_address_pushed`` (False where a call leaves the return address in a register),
``strip_pointer_auth`` (pointer authentication), ``scan_cfa`` (the stack scanner's CFA),
``sysroots`` (where a cross target's libraries live here).
"""
import importlib

from . import x87


class lazy_module:
    """A class attribute naming a module imported on first use: an architecture's
    stack-height analysis and entry scanner cost start-up time, and most walks (code
    with CFI or frame pointers) never need them."""

    def __init__(self, name):
        self.name, self.module = name, None

    def __get__(self, obj, owner):
        if self.module is None:
            self.module = importlib.import_module(self.name)
        return self.module


class Architecture:
    name = "?"
    ptr_size = 8
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
    signal_frame = calls = prologue = analysis = scan = regsets = None
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

    def fp_register_number(self, name):
        for regno, (_size, names) in self.fp_registers.items():
            if name in names:
                return regno
        raise KeyError(name)

    def register_value(self, regno, raw, float_size=None):
        """The bytes a value of ``float_size`` bytes (a floating type; None: any other
        type) has when it lives in register ``regno`` holding ``raw``."""
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
        return int.from_bytes(data[offset:offset + self.ptr_size], "little")

    def is_canonical(self, addr):
        return 0 < addr <= self.max_user_address

    def __eq__(self, other):
        return isinstance(other, Architecture) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return f"<Architecture {self.name}>"
