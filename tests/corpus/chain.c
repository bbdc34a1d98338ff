/* chain: main -> a -> b -> c -> stop_here.
 * Stop: "break stop_here" + "run", or "run trap" which executes the machine's breakpoint
 * instruction (SWK_TRAP: int3, brk #0 on AArch64) inside stop_here (for stripped builds where gdb has no
 * symbol to break on).
 * Expected chain (top->bottom): stop_here c b a main <libc start> _start */
#include <string.h>
#include "swk_corpus.h"

volatile int swk_sink;
static volatile int trap_mode;

SWK_FN int stop_here(int x)
{
    if (trap_mode)
        SWK_TRAP();
    swk_sink += x;
    SWK_KEEP();
    return x + 1;
}

SWK_FN int c(int x) { int r = stop_here(x + 1); SWK_KEEP(); return r + 1; }
SWK_FN int b(int x) { int r = c(x + 1); SWK_KEEP(); return r + 1; }
SWK_FN int a(int x) { int r = b(x + 1); SWK_KEEP(); return r + 1; }

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "trap") == 0)
        trap_mode = 1;
    int r = a(argc);
    SWK_KEEP();
    return r == 0 ? 1 : 0;
}
