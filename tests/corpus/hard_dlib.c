/* libhard_dlib.so: lib_entry -> lib_inner -> callback (main_cb, in the
 * program).  Meant to be built WITHOUT CFI and without a frame pointer:
 *   -shared -fPIC -O2 -fomit-frame-pointer -g0
 *   -fno-asynchronous-unwind-tables -fno-unwind-tables
 * lib_inner pushes %rbp (as a callee-saved register, not a frame pointer),
 * %rbx and %r12 and keeps a local array; lib_entry keeps a 64-byte buffer. */
#include "swk_corpus.h"


typedef int (*swk_cb)(int);
static volatile int lib_sink;

SWK_FN int lib_inner(swk_cb cb, int x)
{
    volatile int pad[5];
    pad[x & 3] = x;
    CLOBBER("rbp", "rbx", "r12");
    int r = cb(x + 1);
    SWK_KEEP();
    lib_sink = r;
    return r + pad[x & 3];
}

SWK_FN int lib_entry(swk_cb cb, int x)
{
    volatile char buf[64];
    buf[x & 63] = (char)x;
    int r = lib_inner(cb, x + 1);
    SWK_KEEP();
    return r + buf[x & 63];
}
