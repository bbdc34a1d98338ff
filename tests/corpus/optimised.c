/* optimised MODE: optimised code as GDB shows it (issue 16).  Built -O2 -g (and
 * -Og, -gdwarf-4): functions are plain noinline, so gcc may turn a call into a jump.
 *
 *   tail   stop_here <- leaf <- c3 <- c2 <- c1 <- main; c1, c2 and c3 end in tail calls,
 *          so their frames exist only as DWARF call sites (GDB's tail-call frames);
 *          parameters show entry values (x=x@entry=V, x=V, x@entry=E).
 *   amb    stop_here <- leaf <- r <- p|q <- amb <- main: amb jumps to p or to q, both
 *          jump to r: two chains, so GDB shows only what they share.
 *   fp     fp_regs stops on its own int3 with a double, a float, a 4-float vector and a
 *          long double held in xmm/x87 registers (asm constraints pin them there).
 *   sigfp  SIGALRM (setitimer) lands in fp_spin while its double lives in an xmm
 *          register; the handler calls stop_here.  Linux gives a handler fresh FP
 *          registers, so only the signal frame's saved fpstate has the double.
 *   tls    thread 2 runs tls_work (a static __thread local of the program) ->
 *          opt_tls_fn (libopt_tls.so, linked: static TLS) -> in_dl -> opt_dl_fn
 *          (libopt_dl.so from argv[2], dlopen'd: dynamic TLS through the DTV) ->
 *          stop_here; every frame has its own __thread local, different per thread.
 * Stop: "handle SIGALRM nostop noprint pass", "break stop_here", "run MODE [LIB]";
 *       fp: "run fp" stops at the SIGTRAP. */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define NI __attribute__((noinline))
volatile int sink;
volatile double dsink;

int opt_tls_fn(int v, void (*cb)(int));

NI void stop_here(int v) { sink = v; __asm__ volatile("" ::: "memory"); }

/* tail: a unique chain of tail calls */
NI int leaf(int a, int b) { stop_here(a * b); return sink + a; }
NI int c3(int a, int b) { return leaf(a + 1, b - 1); }
NI int c2(int a, int b) { sink += a; return c3(a * 2, b); }
NI int c1(int a, int b) { return c2(a, b + 3); }

/* amb: two chains from amb to r */
NI int r(int a) { return leaf(a, 7); }
NI int p(int a) { return r(a + 1); }
NI int q(int a) { return r(a + 2); }
NI int amb(int a) { if (a & 1) return p(a); return q(a); }

/* fp: values in floating-point and vector registers at the stop */
typedef float v4sf __attribute__((vector_size(16)));
NI double fp_regs(double x, float y)
{
    double d = x * 1.5 + dsink;
    float f = y * 2.0f + (float)dsink;
    v4sf v = {(float)x, y, 3.0f, 4.0f};
    long double ld = (long double)x * 3;
    __asm__ volatile("int3" :: "x"(d), "x"(f), "x"(v), "t"(ld));
    return d + f + v[0] + (double)ld;
}

/* sigfp: a signal interrupts code holding a double in a register */
static volatile sig_atomic_t got_signal;
NI void on_alarm(int sig) { stop_here(sig + 100); got_signal = 1; }
NI int fp_spin(int n)
{
    double acc = n * 2.5 + dsink;
    while (!got_signal)
        __asm__ volatile("" : "+x"(acc));
    return (int)acc;
}

/* tls */
static int (*opt_dl_fn)(int, void (*)(int));
NI void in_dl(int v) { static __thread int hops = 1; hops += v; opt_dl_fn(v, stop_here); }
NI int tls_work(int v) { static __thread int calls = 3; calls += v; return opt_tls_fn(v, in_dl) + calls; }
static void *thread_main(void *arg) { return (void *)(long)tls_work((int)(long)arg); }

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "tail";
    if (strcmp(mode, "tail") == 0)
        return c1(argc, argc + 4) & 1;
    if (strcmp(mode, "amb") == 0)
        return amb(argc + 1) & 1;
    if (strcmp(mode, "fp") == 0)
        return (int)fp_regs(2.25, 1.5f) & 1;
    if (strcmp(mode, "sigfp") == 0) {
        struct sigaction sa;
        struct itimerval it;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_alarm;
        sigaction(SIGALRM, &sa, NULL);
        memset(&it, 0, sizeof it);
        it.it_value.tv_usec = 20000;
        setitimer(ITIMER_REAL, &it, NULL);
        return fp_spin(argc + 3) & 1;
    }
    if (strcmp(mode, "tls") == 0 && argc > 2) {
        void *h = dlopen(argv[2], RTLD_NOW);
        pthread_t t;
        if (!h)
            return 2;
        opt_dl_fn = (int (*)(int, void (*)(int)))dlsym(h, "opt_dl_fn");
        tls_work(1);                        /* the main thread's blocks: other values */
        pthread_create(&t, NULL, thread_main, (void *)7L);
        pthread_join(t, NULL);
        return 0;
    }
    return 2;
}
