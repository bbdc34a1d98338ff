/* recurse: main -> rec(depth) -> rec(depth-1) ... -> rec(0) -> stop_here.
 * Depth from argv[1], default 10000.  The chain is stop_here, then
 * depth+1 frames of rec, then main. */
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
    if (n <= 0) {
        int r = stop_here(n);
        SWK_KEEP();
        return r + 1;
    }
    int r = rec(n - 1);
    SWK_KEEP();
    return r + 1;
}

int main(int argc, char **argv)
{
    int depth = argc > 1 ? atoi(argv[1]) : 10000;
    int r = rec(depth);
    SWK_KEEP();
    return r == 0 ? 1 : 0;
}
