/* robust_longrun N: stops N times at stop_here, each time under a different
 * depth of descend() frames (tests/test_long_session.py).
 *
 *   main -> descend x (i % 13 + 1)  (librobust_longrun.so: no CFI, no frame
 *           pointer) -> leaf -> stop_here(i)
 * so GDB's own bt needs swk's unwinder for the descend frames.  Prints
 * LONGRUN-DONE <sum> at the end. */
#include <stdio.h>
#include <stdlib.h>
#include "swk_corpus.h"

volatile int swk_sink;
int descend(int depth, int i, int (*leaf)(int, int));

SWK_FN int stop_here(int i)
{
    swk_sink += i;
    SWK_KEEP();
    return i + 1;
}

SWK_FN int leaf(int depth, int i)
{
    volatile char pad[64];
    long local = (long)depth * 1000 + i;
    pad[i & 63] = (char)i;
    int r = stop_here(i);
    SWK_KEEP();
    return r + pad[i & 63] + (int)(local & 1);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100;
    long sum = 0;
    for (int i = 0; i < n; i++)
        sum += descend(i % 13, i, leaf);
    printf("LONGRUN-DONE %ld\n", sum);
    return 0;
}
