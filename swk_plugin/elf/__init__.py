"""ELF and DWARF reading on top of pyelftools, lazily and per module."""
