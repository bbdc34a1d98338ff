"""JIT code named and unwound: what a runtime publishes about the code it generates.

Code a JIT writes into anonymous memory belongs to no module, so ELF symbols and CFI cannot
name or unwind it.  Runtimes publish it elsewhere: a perf map (perfmap.py: /tmp/perf-PID.map,
Node's --perf-basic-prof, Java's ``jcmd PID Compiler.perfmap``), a jitdump (jitdump.py:
jit-PID.dump, found by the process's mapping of it, Node's --perf-prof, with .eh_frame under
--perf-prof-unwinding-info), GDB's JIT interface (gdbjit.py: __jit_debug_descriptor's in-memory
ELF objects, LLVM's lli), and libgcc's lists of frames given to __register_frame (registered.py).
symbols.py is the one source SymbolLookup asks for an address no module holds; modules.py gives
unwind/modules.module_at the module (with its CFI) of JIT code its JIT described, so the CFI
stepper unwinds it like any module's.
"""
