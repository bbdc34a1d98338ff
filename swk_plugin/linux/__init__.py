"""Linux process facts every back-end needs, without a debugger.

auxv.py      the auxiliary vector (/proc/PID/auxv, a core's NT_AUXV)
maps.py      /proc/PID/maps as MemoryRegions
linkmap.py   the dynamic linker's r_debug / link_map list, read from target memory
vdso.py      the vDSO, read from target memory
libraries.py the library list of a process from its executable, auxv and link map
siginfo.py   siginfo_t: the signal that stopped a thread
coredump.py  a Linux core file: threads, registers, mapped files, regions

Instruction-set layouts (register sets in NT_PRSTATUS, signal frames) are the
architecture's (swk_plugin.arch); this package reads them through it.
"""
