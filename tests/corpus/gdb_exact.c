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

int main(int argc, char **argv)
{
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
