/* hard_smash: main -> a -> smash -> deeper -> stop_here, built with frame
 * pointers (-fno-omit-frame-pointer), where smash() overwrites the saved
 * %rbp slot of its own frame - its caller a()'s frame pointer - before it
 * calls on, and puts it back only after deeper() returns.  While stopped in
 * stop_here the frame-pointer chain is therefore broken at a(): the slot
 * points at a fake frame record {next = 0, return address = 0} inside
 * smash's own frame, so a naive frame-pointer walk ends "cleanly" after a
 * (a wrong, short chain), and a CFI walk that restores a()'s %rbp from that
 * slot computes a()'s CFA from garbage.  Return addresses are all intact:
 * only stack-height analysis (or a scan) finds main.
 * Variants: with CFI (-O2 -g -fno-omit-frame-pointer) and without
 * (-g0 -fno-asynchronous-unwind-tables -fno-unwind-tables).
 * Built with -DSWK_TWIN, smash() leaves the slot alone (the sanity twin).
 * Stop: "break stop_here", "run".
 * Known chain: stop_here deeper smash a main <libc start> _start. */
#include "swk_corpus.h"

volatile int swk_sink;

SWK_FN int stop_here(int x) { swk_sink += x; SWK_KEEP(); return x + 1; }

SWK_FN int deeper(int x)
{
    volatile int pad[3];
    pad[x & 1] = x;
    int r = stop_here(x + 1);
    SWK_KEEP();
    return r + pad[x & 1];
}

SWK_FN int smash(int x)
{
    volatile void *fake[4] = { 0, 0, 0, 0 };   /* a fake frame record */
    void **slot = (void **)__builtin_frame_address(0);  /* saved caller %rbp */
    void *saved = *slot;
#ifndef SWK_TWIN
    *slot = (void *)&fake[0];
#endif
    SWK_KEEP();
    int r = deeper(x + 1);
    SWK_KEEP();
    *slot = saved;
    SWK_KEEP();
    return r + (fake[x & 3] != 0);
}

SWK_FN int a(int x)
{
    volatile char buf[40];
    buf[x & 31] = (char)x;
    int r = smash(x + 1);
    SWK_KEEP();
    return r + buf[x & 31];
}

int main(int argc, char **argv)
{
    (void)argv;
    int r = a(argc);
    SWK_KEEP();
    return r == 0 ? 1 : 0;
}
