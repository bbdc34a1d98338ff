/* robust_untouched: proof that a debugger session with swk leaves the target
 * untouched (tests/test_target_untouched.py).
 *
 * Three workers fill a stack buffer with pseudo-random bytes, checksum it,
 * park on a barrier and a condition variable, and checksum the buffer again
 * when released; the main thread does the same in main_work(), then raises
 * SIGUSR1, whose handler (with a buffer of its own) calls stop_here().  Each
 * checksum taken before the stop is held in a callee-saved register or a stack
 * slot across it, so a changed register or stack byte changes the output.
 *
 * Stop: "handle SIGUSR1 nostop noprint pass", "break stop_here", "run": thread
 * 1 in stop_here handler <signal handler called> <libc raise frames> main_work
 * main; threads 2-4 parked in libc (barrier or condition variable) under park
 * worker start_thread clone3.  Continued, it prints one line per checksum
 * (the same on every run, with or without a debugger) and UNTOUCHED-OK, and
 * exits with status 7; any difference: UNTOUCHED-CORRUPTED and status 3. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "swk_corpus.h"

#define NWORKERS 3

volatile int swk_sink;
static pthread_barrier_t parked;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int go;
static unsigned long results[NWORKERS + 1];

static unsigned long fill(volatile unsigned char *buf, unsigned long n, unsigned long seed)
{
    unsigned long x = seed * 0x9e3779b97f4a7c15ul + 1;
    for (unsigned long i = 0; i < n; i++) {
        x = x * 6364136223846793005ul + 1442695040888963407ul;
        buf[i] = (unsigned char)(x >> 56);
    }
    return x;
}

static unsigned long fnv(const volatile unsigned char *buf, unsigned long n)
{
    unsigned long h = 0xcbf29ce484222325ul;
    for (unsigned long i = 0; i < n; i++)
        h = (h ^ buf[i]) * 0x100000001b3ul;
    return h;
}

SWK_FN int stop_here(int x)
{
    swk_sink += x;
    SWK_KEEP();
    return x + 1;
}

SWK_FN void handler(int sig)
{
    volatile unsigned char hbuf[777];
    unsigned long seed = fill(hbuf, sizeof hbuf, 99);
    unsigned long before = fnv(hbuf, sizeof hbuf);
    int r = stop_here(sig);
    unsigned long after = fnv(hbuf, sizeof hbuf);
    results[NWORKERS] = (before == after ? after ^ seed : 0) + (unsigned long)r;
}

SWK_FN unsigned long park(int id)
{
    volatile unsigned char buf[3000];
    unsigned long n = 2000 + 300 * (unsigned long)id;
    unsigned long seed = fill(buf, n, (unsigned long)id + 1);
    unsigned long before = fnv(buf, n);
    pthread_barrier_wait(&parked);
    pthread_mutex_lock(&mu);
    while (!go)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    unsigned long after = fnv(buf, n);
    SWK_KEEP();
    return before == after ? after ^ seed : 0;
}

static void *worker(void *arg)
{
    int id = (int)(long)arg;
    results[id] = park(id);
    return NULL;
}

SWK_FN unsigned long main_work(void)
{
    volatile unsigned char mbuf[5000];
    unsigned long seed = fill(mbuf, sizeof mbuf, 1000);
    unsigned long before = fnv(mbuf, sizeof mbuf);
    raise(SIGUSR1);
    unsigned long after = fnv(mbuf, sizeof mbuf);
    SWK_KEEP();
    return before == after ? after ^ seed : 0;
}

int main(void)
{
    pthread_t th[NWORKERS];
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR1, &sa, NULL) != 0)
        return 2;
    pthread_barrier_init(&parked, NULL, NWORKERS + 1);
    for (long i = 0; i < NWORKERS; i++)
        pthread_create(&th[i], NULL, worker, (void *)i);
    pthread_barrier_wait(&parked);
    unsigned long m = main_work();
    pthread_mutex_lock(&mu);
    go = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    int bad = m == 0;
    for (int i = 0; i < NWORKERS; i++) {
        pthread_join(th[i], NULL);
        printf("worker %d: %016lx\n", i, results[i]);
        bad |= results[i] == 0;
    }
    printf("handler: %016lx\nmain: %016lx\n", results[NWORKERS], m);
    bad |= results[NWORKERS] == 0;
    printf("%s\n", bad ? "UNTOUCHED-CORRUPTED" : "UNTOUCHED-OK");
    return bad ? 3 : 7;
}
