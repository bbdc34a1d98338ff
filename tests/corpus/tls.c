/* tls: thread-local variables of the program in two threads (tests/test_cross_tls.py).
 * Each thread adds its own v to `calls` and `big` (static __thread locals of work), writes what it
 * left there and its thread id to the file argv[1] ("work(v=V) tid=T: calls = N big = {...}"),
 * and once both have, the main thread (v == 2) stops in stop_here — the thread qemu-user's gdb
 * tests send SIGABRT to for a core — and both then stay in work for ever, spinning (a core dumped
 * a moment later still has them there): the target's own record of both threads' blocks, the
 * oracle where GDB has no libthread_db (qemu-user's stub). */
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "swk_corpus.h"

static FILE *record;
static volatile int swk_spin;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both;

SWK_FN int stop_here(int x) { SWK_KEEP(); return x + 1; }

SWK_FN int work(int v)
{
    static __thread int calls = 3;
    static __thread long big[4] = {1, 2, 3, 4};
    calls += v;
    big[v % 4] += 100 * v;
    pthread_mutex_lock(&lock);
    fprintf(record, "work(v=%d) tid=%ld: calls = %d big = {%ld, %ld, %ld, %ld}\n", v, (long)syscall(SYS_gettid),
            calls, big[0], big[1], big[2], big[3]);
    fflush(record);
    pthread_mutex_unlock(&lock);
    pthread_barrier_wait(&both);            /* both threads' values are set */
    int r = v == 2 ? stop_here(calls) : 0;
    for (;;)                                /* spinning, not blocked in a system call: qemu-user */
        swk_spin += r;                      /* takes the test's SIGABRT at once and dumps the core */
    return r + calls;
}

static void *thread_main(void *arg) { return (void *)(long)work((int)(long)arg); }

int main(int argc, char **argv)
{
    record = fopen(argc > 1 ? argv[1] : "/dev/null", "w");
    pthread_barrier_init(&both, 0, 2);
    pthread_t t;
    pthread_create(&t, 0, thread_main, (void *)5L);
    return work(2) == 0;
}
