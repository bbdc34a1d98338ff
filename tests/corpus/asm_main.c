/* asm: main -> asm_fp_nocfi -> asm_realign -> asm_cfi_noframe (asm_frames.S)
 *      -> c_leaf -> stop_here.  See asm_frames.S for what each frame tests. */
#include "swk_corpus.h"

volatile int swk_sink;

int asm_fp_nocfi(int x);

SWK_FN int stop_here(int x) { swk_sink += x; SWK_KEEP(); return x + 1; }
SWK_FN int c_leaf(int x) { int r = stop_here(x + 1); SWK_KEEP(); return r + 1; }

int main(int argc, char **argv)
{
    (void)argv;
    int r = asm_fp_nocfi(argc);
    SWK_KEEP();
    return r == 0 ? 1 : 0;
}
