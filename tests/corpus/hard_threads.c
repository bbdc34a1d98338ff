/* hard_threads: threads.c again, but meant to be built with NO CFI and no
 * frame pointer (-O2 -fomit-frame-pointer -g0 -fno-asynchronous-unwind-tables
 * -fno-unwind-tables): every start function and chain function below has
 * neither CFI nor a frame pointer, and each keeps a differently shaped frame.
 * Three pthreads, each parked in its own blocking call:
 *   t1_start -> t1_a -> t1_b -> read() on a pipe nobody writes
 *   t2_start -> t2_a -> t2_b -> sem_wait() on a semaphore nobody posts
 *   t3_start -> t3_a -> t3_b -> nanosleep(1000 s)
 * main waits until each thread has announced itself and is asleep in the
 * kernel (/proc/self/task/TID/stat state 'S'), then main -> main_a -> stop_here.
 * Stop: "break stop_here", "run".
 * Known chains: main thread stop_here main_a main <libc start> _start;
 * thread N: <libc blocking frames> tN_b tN_a tN_start start_thread clone3. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "swk_corpus.h"


volatile int swk_sink;
static sem_t ready;          /* posted by each thread just before it blocks */
static sem_t never;          /* never posted */
static int pipefd[2];
static volatile pid_t tids[3];

SWK_FN int stop_here(int x) { swk_sink += x; SWK_KEEP(); return x + 1; }

SWK_FN int main_a(int x)
{
    volatile int pad[7];
    pad[x & 3] = x;
    int r = stop_here(x + 1);
    SWK_KEEP();
    return r + pad[x & 3];
}

static void announce(int i)
{
    tids[i] = gettid();
    sem_post(&ready);
}

SWK_FN int t1_b(int x)
{
    char c[24];
    announce(0);
    ssize_t n = read(pipefd[0], c, 1);
    SWK_KEEP();
    return (int)n + x + c[0];
}
SWK_FN int t1_a(int x)
{
    CLOBBER("rbx", "r12", "r13");
    int r = t1_b(x + 1);
    SWK_KEEP();
    return r + 1;
}
SWK_FN void *t1_start(void *arg)
{
    volatile long pad[3];
    pad[0] = (long)arg;
    int r = t1_a(1);
    SWK_KEEP();
    swk_sink = r;
    return (void *)pad[0];
}

SWK_FN int t2_b(int x)
{
    volatile int pad[9];
    pad[x & 7] = x;
    announce(1);
    while (sem_wait(&never) != 0 && errno == EINTR)
        ;
    SWK_KEEP();
    return x + pad[x & 7];
}
SWK_FN int t2_a(int x)
{
    CLOBBER("rbp", "rbx");
    int r = t2_b(x + 1);
    SWK_KEEP();
    return r + 1;
}
SWK_FN void *t2_start(void *arg)
{
    CLOBBER("r12", "r13", "r14", "r15");
    int r = t2_a(1);
    SWK_KEEP();
    swk_sink = r;
    return arg;
}

SWK_FN int t3_b(int x)
{
    struct timespec ts = { 1000, 0 };
    CLOBBER("rbx");
    announce(2);
    nanosleep(&ts, NULL);
    SWK_KEEP();
    return x + 1;
}
SWK_FN int t3_a(int x)
{
    volatile char buf[200];
    buf[x & 127] = (char)x;
    int r = t3_b(x + 1);
    SWK_KEEP();
    return r + buf[x & 127];
}
SWK_FN void *t3_start(void *arg)
{
    CLOBBER("rbp");
    int r = t3_a(1);
    SWK_KEEP();
    swk_sink = r;
    return arg;
}

/* 1 when /proc says the thread is sleeping (blocked in its syscall). */
static int is_sleeping(pid_t tid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');   /* state follows "(comm) " */
    return p && p[1] == ' ' && p[2] == 'S';
}

int main(void)
{
    pthread_t th[3];
    void *(*starts[3])(void *) = { t1_start, t2_start, t3_start };

    if (pipe(pipefd) != 0 || sem_init(&ready, 0, 0) != 0 || sem_init(&never, 0, 0) != 0)
        return 3;
    for (int i = 0; i < 3; i++) {
        if (pthread_create(&th[i], NULL, starts[i], NULL) != 0)
            return 4;
        while (sem_wait(&ready) != 0)   /* one at a time: thread N is parked */
            ;                           /* before thread N+1 is created */
    }
    for (int i = 0; i < 3; i++) {
        int tries = 0;
        while (!is_sleeping(tids[i])) {
            struct timespec ts = { 0, 1000000 };
            nanosleep(&ts, NULL);
            if (++tries > 10000)
                return 5;
        }
    }
    int r = main_a(1);
    SWK_KEEP();
    return r == 0 ? 1 : 0;
}
