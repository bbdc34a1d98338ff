"""A thread's registers as Linux hands them over, read by one reader from each architecture's table.

The kernel describes an architecture's register sets to user space in one table, its
``struct user_regset_view`` (include/linux/regset.h): the same sets, in the same layout,
are what PTRACE_GETREGSET returns live and what a core dump stores as notes.  The first
is the general registers (NT_PRSTATUS): ``elf_gregset_t``, a row of equal slots
(``struct user_regs_struct`` on x86, ``struct user_pt_regs`` on AArch64), stored in a core
as ``pr_reg`` inside ``struct elf_prstatus``, beside one ``struct elf_prpsinfo`` per process.
Those layouts are facts, so an architecture states them (``UserRegsetView``) and this
reader does the rest; only what is not a row of slots (x86's FXSAVE/XSAVE areas, i386's
TLS descriptors, AArch64's TPIDR_EL0) is the architecture's own code, handed in as functions.
"""
import struct

_FORMAT = {2: "H", 4: "I", 8: "Q"}


class UserRegsetView:
    """One architecture's register sets as Linux lays them out (the kernel's user_regset_view).

    ``user_regs``           the general-register slots' names in order (elf_gregset_t); a
                            name with a DWARF number (``dwarf_names``) is unpacked under it
    ``slot``                bytes per slot (user_regset.size)
    ``nslots``              slots in the set (user_regset.n: ELF_NGREG), where it pads
                            ``user_regs`` (Power's elf_gregset_t: 48 slots for 44 registers)
    ``widths``              {name: bytes} of registers narrower than their slot: masked
    ``byteorder``           the target's ("little" / "big"), as ``Architecture.byteorder``
    ``prstatus_reg_offset`` where pr_reg starts in struct elf_prstatus
    ``prstatus_size``       sizeof(struct elf_prstatus)
    ``long``                sizeof(long) there (pr_sigpend, pr_sighold; elf_prpsinfo's pr_flag)
    ``prpsinfo``            struct elf_prpsinfo: offsets of uid, pid, fname, psargs; uid_size
                            (__kernel_uid_t); size
    ``ptrace_notes``        ((note type, largest size), ...): the further sets ptrace reads
                            besides NT_PRSTATUS, in order, kept by type as a core keeps its notes
    ``ptrace_covered``      {note type: note type}: a set not read when the other was (its
                            bytes are the other's first: the FXSAVE area of an XSAVE area)
    ``fp_notes``            the architecture's unpack_fp_notes (below), or None
    ``tls``                 the architecture's thread_pointer (below), or None
    """

    def __init__(self, user_regs, slot, dwarf_names, *, prstatus_reg_offset, prstatus_size, long, prpsinfo,
                 byteorder="little", nslots=None, widths=None, ptrace_notes=(), fp_notes=None, tls=None, ptrace_covered=None):
        self.user_regs = tuple(user_regs)
        self.slot = slot
        self.byteorder = byteorder
        self.user_regs_size = slot * (nslots or len(self.user_regs))
        self.prstatus_reg_offset = prstatus_reg_offset
        self.prstatus_size = prstatus_size
        self.long = long
        self.prpsinfo = dict(prpsinfo)
        self.ptrace_notes = tuple(ptrace_notes)
        self.ptrace_covered = dict(ptrace_covered or {})
        self._fp_notes, self._tls = fp_notes, tls
        numbers = {}
        for regno, name in enumerate(dwarf_names):
            if name:
                numbers.setdefault(name, regno)
        #: The key of each slot in an unpacked set: its DWARF number, else its name.
        self.keys = tuple(numbers.get(name, name) for name in self.user_regs)
        self._struct = struct.Struct(("<" if byteorder == "little" else ">") + _FORMAT[slot] * len(self.user_regs))
        self.widths = dict(widths or {})
        self._masks = {self.keys[self.user_regs.index(name)]: (1 << 8 * size) - 1
                       for name, size in self.widths.items()}

    def unpack_user_regs(self, raw):
        """{DWARF regno or name: value} from a general register set (pr_reg, or
        PTRACE_GETREGSET(NT_PRSTATUS)'s bytes): names for the slots no DWARF number
        covers (orig_rax, eflags, segment registers, pstate...)."""
        regs = dict(zip(self.keys, self._struct.unpack_from(raw)))
        for key, mask in self._masks.items():
            regs[key] &= mask
        return regs

    def unpack_fp_notes(self, notes):
        """{DWARF regno: bytes} of the FP/vector registers in a thread's notes ({note type:
        bytes}, a core's or ptrace's); {} where the architecture reads none."""
        return self._fp_notes(notes) if self._fp_notes is not None else {}

    def thread_pointer(self, regs, notes):
        """The thread pointer from a thread's registers and notes, or None where they do not
        hold it (``Architecture.thread_pointer`` names it; a debugger may give it itself)."""
        return self._tls(regs, notes) if self._tls is not None else None

    def __repr__(self):
        return f"<UserRegsetView {len(self.user_regs)} x {self.slot} bytes>"
