/* split_main.c + split_lib.c: split DWARF (gcc -gsplit-dwarf), built by
 * tests/test_split_dwarf.py at -O0 and -O2, DWARF 4 (GNU) and 5, as two units (each
 * -c'd to its own .dwo) and as one (split_one.c includes both), with and without a
 * .dwp package.  The chain: stop_here <- leaf <- scale (inlined into relay at -O2) <-
 * relay <- bounce (ends in a tail call to relay at -O2) <- main.  Arguments, locals
 * (one in a register at -O2, with a location list), a static local and a static
 * __thread local (DW_OP_GNU_const_index; SPLIT_TLS, DWARF 4 only: GDB 13 has no
 * DWARF 5 DW_OP_constx) give bt full something to read.
 * Stop: "break stop_here", "run". */
#define NI __attribute__((noipa))
extern volatile int sink;
NI void stop_here(int v);
NI int leaf(int a, long b, const char *tag);
NI int relay(int x, int k);
NI int bounce(int n, int m);

volatile int sink;

NI void stop_here(int v) { sink = v; __asm__ volatile("" ::: "memory"); }

NI int leaf(int a, long b, const char *tag)
{
    static int calls;
#ifdef SPLIT_TLS
    static __thread int tcalls = 40;
    tcalls += a;
#endif
    int sum = a + (int)b + tag[0];
    calls++;
    stop_here(sum);
    return sum + sink + calls;
}

int main(int argc, char **argv)
{
    (void)argv;
    int r = bounce(argc + 1, argc * 3);
    return r & 1;
}
