/* twice: stop_here is reached twice through different chains, so a test can
 * check that swk forgets the first stop's registers and memory:
 *   first:  stop_here first_b first_a main
 *   second: stop_here second_c second_b second_a main */
#include "swk_corpus.h"

volatile int swk_sink;

SWK_FN int stop_here(int x) { swk_sink += x; SWK_KEEP(); return x + 1; }
SWK_FN int first_b(int x) { int r = stop_here(x); SWK_KEEP(); return r + 1; }
SWK_FN int first_a(int x) { int r = first_b(x); SWK_KEEP(); return r + 1; }
SWK_FN int second_c(int x) { int r = stop_here(x); SWK_KEEP(); return r + 1; }
SWK_FN int second_b(int x) { int r = second_c(x); SWK_KEEP(); return r + 1; }
SWK_FN int second_a(int x) { int r = second_b(x); SWK_KEEP(); return r + 1; }

int main(void)
{
    int r = first_a(1);
    r += second_a(2);
    SWK_KEEP();
    return r == 0;
}
