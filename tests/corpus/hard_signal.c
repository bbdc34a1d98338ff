/* hard_signal: a timer signal lands in a frameless busy loop, and the
 * handler crashes.  Meant to be built with NO CFI and no frame pointer:
 *   -O2 -fomit-frame-pointer -g0 -fno-asynchronous-unwind-tables -fno-unwind-tables
 *
 *   main -> a -> b -> loop()        loop() spins until the handler runs; it
 *                                   pushes %rbx, %r12, %r13 (no frame
 *                                   pointer), so the interrupted pc sits 24
 *                                   bytes below the return address
 *   SIGALRM (setitimer ITIMER_REAL, one shot, 20 ms; re-armed by the
 *   handler if it came before loop() was entered) -> handler -> h1
 *                                   -> fault(): stores through a NULL
 *                                   pointer; gdb stops on that SIGSEGV.
 * Stop: "handle SIGALRM nostop noprint pass", "run".
 * Known chain (top->bottom):
 *   fault h1 handler <signal handler called> loop b a main <libc start> _start */
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include "swk_corpus.h"

#if defined(__aarch64__)
/* AArch64 (tests/test_aarch64.py): callee-saved x19-x21 in every place, so each
 * function still saves registers and moves sp without a frame record. */
#define CLOBBER(...) __asm__ __volatile__("" ::: "x19", "x20", "x21", "memory")
#else
#define CLOBBER(...) __asm__ __volatile__("" ::: __VA_ARGS__, "memory")
#endif

volatile int swk_sink;
int *volatile null_ptr;     /* volatile: gcc can't prove it is NULL -> a real store */
static volatile sig_atomic_t got_signal;
static volatile sig_atomic_t in_loop;   /* set by loop() once its frame is built */

static void arm_timer(void)
{
    struct itimerval it;
    memset(&it, 0, sizeof it);
    it.it_value.tv_usec = 20000;        /* one shot, 20 ms */
    setitimer(ITIMER_REAL, &it, NULL);
}

SWK_FN int fault(int x)
{
    *null_ptr = x;
    SWK_KEEP();
    return x + 1;
}

SWK_FN int h1(int x)
{
    volatile int pad[5];
    pad[x & 3] = x;
    int r = fault(x + 1);
    SWK_KEEP();
    return r + pad[x & 3];
}

SWK_FN void handler(int sig)
{
    CLOBBER("rbx", "r12");
    if (!in_loop) {             /* too early (a slow machine): try again */
        arm_timer();
        return;
    }
    int r = h1(sig);
    SWK_KEEP();
    swk_sink = r;
    got_signal = 1;
}

SWK_FN int loop(int x)
{
    CLOBBER("rbx", "r12", "r13");
    in_loop = 1;
    while (!got_signal)
        swk_sink++;
    return x + 1;
}

SWK_FN int b(int x)
{
    volatile char buf[40];
    buf[x & 31] = (char)x;
    int r = loop(x + 1);
    SWK_KEEP();
    return r + buf[x & 31];
}

SWK_FN int a(int x)
{
    CLOBBER("rbp", "r14");
    int r = b(x + 1);
    SWK_KEEP();
    return r + 1;
}

int main(int argc, char **argv)
{
    struct sigaction sa;
    (void)argv;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGALRM, &sa, NULL) != 0)
        return 3;
    arm_timer();
    int r = a(argc);
    SWK_KEEP();
    return r == 0 ? 1 : 0;
}
