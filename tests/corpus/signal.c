/* signal MODE [altstack|siginfo|restorer]
 *   MODE raise: main -> sig_a -> sig_b -> raise(SIGUSR1)
 *   MODE alarm: main -> sig_a -> sig_b -> spin() (busy loop, interrupted by
 *               SIGALRM from setitimer at an arbitrary instruction)
 * The handler (installed with sigaction, SA_ONSTACK on a sigaltstack when
 * "altstack" is given) runs on_signal -> h1 -> stop_here.  "siginfo": installed
 * with SA_SIGINFO (the kernel pushes an rt_sigframe on i386 too).  "restorer" (i386
 * only): installed with the raw sigaction system call and SA_RESTORER pointing at the
 * program's own copy of glibc's __restore (pop %eax; mov $0x77,%eax; int $0x80), in
 * .text with no CFI, so the trampoline is known by its code alone.
 * Expected chain: stop_here h1 on_signal <signal handler called>
 *   [raise: libc pthread_kill/raise frames | alarm: spin] sig_b sig_a main ...
 * Stop: "handle SIGUSR1 SIGALRM nostop noprint pass", "break stop_here", "run MODE". */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include "swk_corpus.h"
#if defined(__i386__)
#include <sys/syscall.h>
#include <unistd.h>
__asm__(".text\n.p2align 4\n.type swk_restore, @function\nswk_restore:\n\tpopl %eax\n"
        "\tmovl $0x77, %eax\n\tint $0x80\n\tnop\n.size swk_restore, .-swk_restore\n");
extern char swk_restore[];
struct swk_old_sigaction { void (*handler)(int); unsigned long mask, flags; void *restorer; };
#endif

volatile int swk_sink;
static volatile sig_atomic_t got_signal;
static char altstack_mem[1 << 16];

SWK_FN int stop_here(int x) { swk_sink += x; SWK_KEEP(); return x + 1; }
SWK_FN int h1(int x) { int r = stop_here(x + 1); SWK_KEEP(); return r + 1; }

SWK_FN void on_signal(int sig)
{
    int r = h1(sig);
    SWK_KEEP();
    swk_sink = r;
    got_signal = 1;
}

SWK_FN int spin(int x)
{
    while (!got_signal)
        swk_sink++;
    return x + 1;
}

SWK_FN int sig_b(int mode_alarm)
{
    int r;
    if (mode_alarm) {
        struct itimerval it;
        memset(&it, 0, sizeof it);
        it.it_value.tv_usec = 20000;   /* one shot, 20 ms */
        setitimer(ITIMER_REAL, &it, NULL);
        r = spin(mode_alarm);
    } else {
        r = raise(SIGUSR1);
    }
    SWK_KEEP();
    return r + 1;
}
SWK_FN int sig_a(int mode_alarm) { int r = sig_b(mode_alarm); SWK_KEEP(); return r + 1; }

int main(int argc, char **argv)
{
    int mode_alarm = argc > 1 && strcmp(argv[1], "alarm") == 0;
    int use_alt = argc > 2 && strcmp(argv[2], "altstack") == 0;
    int use_info = argc > 2 && strcmp(argv[2], "siginfo") == 0;
    int use_restorer = argc > 2 && strcmp(argv[2], "restorer") == 0;
    struct sigaction sa;

    if (use_alt) {
        stack_t ss;
        ss.ss_sp = altstack_mem;
        ss.ss_size = sizeof altstack_mem;
        ss.ss_flags = 0;
        if (sigaltstack(&ss, NULL) != 0)
            return 3;
    }
    memset(&sa, 0, sizeof sa);
    if (use_info)
        sa.sa_sigaction = (void (*)(int, siginfo_t *, void *))(void (*)(void))on_signal;
    else
        sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = (use_alt ? SA_ONSTACK : 0) | (use_info ? SA_SIGINFO : 0);
    if (use_restorer) {
#if defined(__i386__)
        struct swk_old_sigaction k = { on_signal, 0, 0x04000000 /* SA_RESTORER */, swk_restore };
        if (syscall(SYS_sigaction, SIGUSR1, &k, NULL) != 0 || syscall(SYS_sigaction, SIGALRM, &k, NULL) != 0)
            return 5;
#else
        return 6;
#endif
    } else if (sigaction(SIGUSR1, &sa, NULL) != 0 || sigaction(SIGALRM, &sa, NULL) != 0)
        return 4;
    int r = sig_a(mode_alarm);
    SWK_KEEP();
    return r == 0 ? 1 : 0;
}
