/* librobust_longrun.so (built without CFI or frame pointer): the recursion of
 * robust_longrun.c, calling back into the program at the bottom. */
#include "swk_corpus.h"

SWK_FN int descend(int depth, int i, int (*leaf)(int, int))
{
    volatile int pad[5];
    pad[depth & 3] = depth;
    if (depth == 0)
        return leaf(depth, i) + pad[0];
    int r = descend(depth - 1, i, leaf);
    SWK_KEEP();
    return r + pad[depth & 3];
}
