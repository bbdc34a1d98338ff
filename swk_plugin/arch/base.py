"""The architecture interface that i386 and aarch64 will plug into."""


class Architecture:
    name = "?"
    ptr_size = 8
    #: DWARF register names indexed by DWARF number (None where unused).
    dwarf_names = ()
    #: DWARF numbers of the stack pointer, frame pointer and return-address column.
    sp = fp = ra = None
    #: Registers a callee must preserve: their values flow from callee to caller.
    callee_saved = frozenset()
    #: Largest user-space address (canonical form), for validating code addresses.
    max_user_address = (1 << 47) - 1

    def __init__(self):
        self.dwarf_numbers = {n: i for i, n in enumerate(self.dwarf_names) if n}

    def reg_name(self, regno):
        if 0 <= regno < len(self.dwarf_names) and self.dwarf_names[regno]:
            return self.dwarf_names[regno]
        return f"r{regno}"

    def reg_number(self, name):
        return self.dwarf_numbers[name]

    @property
    def pc(self):
        """Where a frame's own pc lives in a register set: the RA column."""
        return self.ra

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
