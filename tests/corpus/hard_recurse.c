/* hard_recurse [DEPTH]: main -> rec(DEPTH) -> rec(DEPTH-1) ... -> rec(0)
 * -> stop_here, meant to be built with NO CFI and no frame pointer:
 *   -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -g0
 *   -fno-asynchronous-unwind-tables -fno-unwind-tables
 * rec() keeps a local array and saves %rbx (so every frame is 48 bytes and
 * the return address is not at the stack pointer).  DEPTH defaults to 2000.
 * Stop: "break stop_here", "run 2000".
 * Known chain: stop_here, DEPTH+1 frames of rec, main <libc start> _start. */
#include <stdlib.h>
#include "swk_corpus.h"

volatile int swk_sink;

SWK_FN int stop_here(int x)
{
    swk_sink += x;
    SWK_KEEP();
    return x + 1;
}

SWK_FN int rec(int n)
{
    volatile int pad[6];
    pad[n & 3] = n;
    if (n <= 0) {
        int r = stop_here(n);
        SWK_KEEP();
        return r + pad[0];
    }
    int r = rec(n - 1);
    SWK_KEEP();
    return r + pad[n & 3];
}

int main(int argc, char **argv)
{
    int depth = argc > 1 ? atoi(argv[1]) : 2000;
    int r = rec(depth);
    SWK_KEEP();
    return r == 0 ? 1 : 0;
}
