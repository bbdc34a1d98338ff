/* hard_asm: main -> asm_keep_frame -> asm_reuse_rbp -> asm_push_saved
 * (hard_asm.S, no CFI at all) -> c_leaf -> stop_here.  The C functions may
 * have CFI; see hard_asm.S for what each assembly frame does.
 * Stop: "break stop_here", "run".
 * Known chain: stop_here c_leaf asm_push_saved asm_reuse_rbp asm_keep_frame
 * main <libc start> _start. */
#include "swk_corpus.h"

volatile int swk_sink;

int asm_keep_frame(int x);

SWK_FN int stop_here(int x) { swk_sink += x; SWK_KEEP(); return x + 1; }
SWK_FN int c_leaf(int x) { int r = stop_here(x + 1); SWK_KEEP(); return r + 1; }

int main(int argc, char **argv)
{
    (void)argv;
    int r = asm_keep_frame(argc);
    SWK_KEEP();
    return r == 0 ? 1 : 0;
}
