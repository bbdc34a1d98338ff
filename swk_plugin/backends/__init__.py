"""Back-ends that give the walker a target without a debugger (ELF core files)."""
