/* crash: "crash abort": main -> abort_a -> abort_b -> do_abort -> abort()
 *        "crash segv":  main -> segv_a -> segv_b -> write_null (NULL store)
 * Stop: "run abort" / "run segv"; gdb stops on SIGABRT / SIGSEGV. */
#include <stdlib.h>
#include <string.h>
#include "swk_corpus.h"

volatile int swk_sink;
int *volatile null_ptr;   /* volatile: gcc can't prove it is NULL -> a real store */

SWK_FN int do_abort(int x)
{
    swk_sink = x;
    abort();
}
SWK_FN int abort_b(int x) { int r = do_abort(x + 1); SWK_KEEP(); return r + 1; }
SWK_FN int abort_a(int x) { int r = abort_b(x + 1); SWK_KEEP(); return r + 1; }

SWK_FN int write_null(int x)
{
    *null_ptr = x;
    SWK_KEEP();
    return x + 1;
}
SWK_FN int segv_b(int x) { int r = write_null(x + 1); SWK_KEEP(); return r + 1; }
SWK_FN int segv_a(int x) { int r = segv_b(x + 1); SWK_KEEP(); return r + 1; }

int main(int argc, char **argv)
{
    int r = 0;
    if (argc > 1 && strcmp(argv[1], "abort") == 0)
        r = abort_a(argc);
    else if (argc > 1 && strcmp(argv[1], "segv") == 0)
        r = segv_a(argc);
    SWK_KEEP();
    return r == 0 ? 2 : 0;
}
