/* hard_nocfi [trap]: main -> a -> b -> c -> stop_here, meant to be built
 * with NO CFI at all in the program's own code:
 *   -O2 -fomit-frame-pointer -g0 -fno-asynchronous-unwind-tables -fno-unwind-tables
 * (no .eh_frame / .debug_frame entries for these functions; only the crt
 * objects, e.g. _start, keep theirs).  Each frame has a different shape so
 * that no single guess about the stack height is right everywhere:
 *   stop_here  leaf, no stack use (int3 first when "trap" was given)
 *   c          pushes %rbx, %r12 and keeps a small local array
 *   b          a 100-byte local buffer (sub $N,%rsp only, no pushes)
 *   a          pushes %rbp as an ordinary callee-saved register (it is no
 *              frame pointer), plus %rbx, %r13..%r15
 * Stop: "break stop_here" + "run", or "run trap" (executes an int3 inside
 * stop_here: for the stripped build, where gdb has no symbol to break on).
 * Known chain (top->bottom): stop_here c b a main <libc start> _start */
#include <string.h>
#include "swk_corpus.h"


volatile int swk_sink;
static volatile int trap_mode;

SWK_FN int stop_here(int x)
{
    if (trap_mode)
        __asm__ __volatile__("int3");
    swk_sink += x;
    SWK_KEEP();
    return x + 1;
}

SWK_FN int c(int x)
{
    volatile int pad[6];
    pad[x & 3] = x;
    CLOBBER("rbx", "r12");
    int r = stop_here(x + 1);
    SWK_KEEP();
    return r + pad[x & 3];
}

SWK_FN int b(int x)
{
    volatile char buf[100];
    buf[x & 63] = (char)x;
    int r = c(x + 1);
    SWK_KEEP();
    return r + buf[x & 63];
}

SWK_FN int a(int x)
{
    CLOBBER("rbp", "rbx", "r13", "r14", "r15");
    int r = b(x + 1);
    SWK_KEEP();
    return r + 1;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "trap") == 0)
        trap_mode = 1;
    int r = a(argc);
    SWK_KEEP();
    return r == 0 ? 1 : 0;
}
