/* Real -O2 glibc code under swk-bt, against GDB's own bt (tests/test_gdb_exact.py).
 *
 *   gdb_exact qsort     cmp stops (break cmp) under glibc's qsort: msort_with_tmp's
 *                       recursion, __GI___qsort_r, __GI_qsort, sorter, main.  qsort_r
 *                       pushes callee-saved registers with other instructions between
 *                       the pushes: only CFI recovers them, so sorter's n and scale
 *                       (in callee-saved registers across the call) and qsort's own
 *                       n=n@entry=300 are right only where CFI decides the caller.
 *   gdb_exact condwait  thread 1 waits in pthread_cond_timedwait (glibc keeps the old
 *                       pthread_cond_timedwait@GLIBC_2.2.5 beside the default
 *                       @@GLIBC_2.3.2 version); thread 2 stops in stop_here.  The
 *                       call site's callee named by its bare name is the default
 *                       version: no tail-call frame of the old one.
 *   gdb_exact args      stop_here under changed(k=3 -> 3*k+sink), by_value(a struct by value,
 *                       a string): an argument whose value differs from its entry value,
 *                       one equal to it, an aggregate, for every `print entry-values` and
 *                       `print frame-arguments` setting.
 *   gdb_exact vdso      clock_gettime in a loop: stopped in the vDSO's __vdso_clock_gettime,
 *                       a frame GDB prints with no "from [vdso]".
 *   gdb_exact lost      stop_here under loses_rbx, whose CFI marks %rbx undefined from its
 *                       first instruction on (.cfi_undefined), under keeps_in_rbx, which keeps v
 *                       in %rbx across the call (through a pointer: no inter-procedural register
 *                       allocation): GDB's v = <optimized out>, never the inner frames' %rbx.
 *   gdb_exact decimal   stop_here under decimals(): _Decimal32/64/128 arguments and arrays
 *                       (DW_ATE_decimal_float, BID-encoded on x86): plain and exponent forms,
 *                       trailing zeros, -0, the long coefficient form, Infinity and NaN, as
 *                       GDB's libdecnumber prints them.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile int sink;

__attribute__((noinline)) int cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    sink++;
    return (x > y) - (x < y);
}

__attribute__((noinline)) int sorter(int *v, size_t n, int scale)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (int)((i * 7919) % 1000) * scale;
    qsort(v, n, sizeof *v, cmp);
    return v[0] + v[n - 1] + scale;
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static volatile int waiting;

__attribute__((noinline)) void stop_here(int why)
{
    sink += why;
}

struct pair { int a, b; };

__attribute__((noinline)) int changed(int k, int same)
{
    k = k * 3 + sink;
    stop_here(k + same);
    return k + same;
}

__attribute__((noinline)) int by_value(struct pair p, const char *s, int n)
{
    return changed(n, p.a) + s[0] + p.b;
}

__attribute__((noinline)) int waiter(int secs)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += secs;
    pthread_mutex_lock(&mu);
    waiting = 1;
    int r = pthread_cond_timedwait(&cv, &mu, &ts);
    pthread_mutex_unlock(&mu);
    return r;
}

static void *watcher(void *arg)
{
    (void)arg;
    for (;;) {          /* thread 1 is in the wait once it let go of the mutex */
        pthread_mutex_lock(&mu);
        int w = waiting;
        pthread_mutex_unlock(&mu);
        if (w)
            break;
        usleep(1000);
    }
    usleep(100000);
    stop_here(2);
    return NULL;
}

__attribute__((noinline)) int decimals(_Decimal32 a, _Decimal64 b, _Decimal128 c, int n)
{
    _Decimal64 zero = b - b;
    volatile _Decimal32 d32[] = {a, 1.0DF, -2.50DF, 1.23E20DF, 1E-7DF, 9999999E90DF, 0.000DF, -0.0DF,
                                 1234567E-101DF, 8388608.DF};
    volatile _Decimal64 d64[] = {b, 100.DD, 1.5E-6DD, 123456789012.3456DD, 9999999999999999E369DD,
                                 -7E-398DD, 1 / zero, -1 / zero, zero / zero};
    volatile _Decimal128 d128[] = {c, 1.000000000000000000000000000000001DL, -5E6000DL, 12345E-6150DL,
                                   0.0000001DL, 123.4DL};
    stop_here(n);
    return (int)d32[n % 10] + (int)d64[n % 6] + (int)d128[n % 6];
}

__attribute__((noinline)) void loses_rbx(int k)
{
    asm volatile(".cfi_undefined rbx");
    stop_here(k);
    sink++;
}

static void (*volatile lose_rbx)(int) = loses_rbx;

__attribute__((noinline)) int keeps_in_rbx(int n)
{
    int v = n * 7 + sink;
    lose_rbx(n);
    return v + 1;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "lost") == 0)
        return keeps_in_rbx(argc + 3) == 0;
    if (argc > 1 && strcmp(argv[1], "decimal") == 0)
        return decimals(0.1DF, 2.00DD, -3.000E-10DL, argc) > 1000;
    if (argc > 1 && strcmp(argv[1], "args") == 0) {
        struct pair p = {argc + 5, argc + 6};
        return by_value(p, argv[1], argc + 1) == 0;
    }
    if (argc > 1 && strcmp(argv[1], "vdso") == 0) {
        struct timespec ts;
        long sum = 0;
        for (int i = 0; i < 100; i++) {
            clock_gettime(CLOCK_MONOTONIC, &ts);
            sum += ts.tv_nsec & 1;
        }
        return sum > 100;
    }
    if (argc > 1 && strcmp(argv[1], "condwait") == 0) {
        pthread_t t;
        pthread_create(&t, NULL, watcher, NULL);
        return waiter(60) == 0 ? 0 : 1;
    }
    int *v = malloc(300 * sizeof *v);
    int r = sorter(v, 300, argc + 2);
    printf("%d\n", r);
    return 0;
}
