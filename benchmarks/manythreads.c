/* manythreads N [STACK_KIB]: a live process of N threads parked in a few distinct places, for
 * benchmarks/threads.py (issue 25: many threads).  Thread i waits
 *   i % 3 == 0   sem_thread -> sem_outer -> sem_middle -> sem_inner -> sem_wait
 *   i % 3 == 1   cond_thread -> cond_park -> pthread_cond_wait
 *   i % 3 == 2   sleep_thread -> nanosleep (i % 6 == 2) or pause (i % 6 == 5)
 * each on a stack of STACK_KIB KiB (default 64, so that thousands fit).  Once every thread is
 * asleep in the kernel (its /proc/self/task/TID/stat says S) it prints "ready PID" and the main
 * thread waits in pause() for ever; SIGTERM ends it.  Build: gcc -O2 -g -pthread. */
#include <dirent.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FN __attribute__((noipa, noinline, used))
#define KEEP() __asm__ __volatile__("" ::: "memory")

volatile int sink;
static sem_t never, started;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

FN int sem_inner(int i) { sem_wait(&never); KEEP(); return i + sink; }
FN int sem_middle(int i) { int r = sem_inner(i + 1); KEEP(); return r + 1; }
FN int sem_outer(int i) { int r = sem_middle(i + 1); KEEP(); return r + 1; }
FN void *sem_thread(void *a) { sem_post(&started); sink += sem_outer((int)(long)a); KEEP(); return a; }

FN int cond_park(int i)
{
    pthread_mutex_lock(&mu);
    for (;;)
        pthread_cond_wait(&cv, &mu);   /* never signalled */
    return i;
}
FN void *cond_thread(void *a) { sem_post(&started); sink += cond_park((int)(long)a); KEEP(); return a; }

FN void *sleep_thread(void *a)
{
    struct timespec ts = {100000, 0};
    long i = (long)a;
    sem_post(&started);
    for (;;) {
        if (i % 6 == 2)
            nanosleep(&ts, NULL);
        else
            pause();
        KEEP();
    }
    return a;
}

/* How many of this process's threads are not asleep ('S') in the kernel. */
static int awake(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int n = 0;
    char path[300], buf[256];
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.' || atoi(e->d_name) == getpid())
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = 0;
        char *p = strrchr(buf, ')');
        if (p && p[1] == ' ' && p[2] != 'S')
            n++;
    }
    if (d)
        closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100;
    long kib = argc > 2 ? atol(argv[2]) : 64;
    pthread_attr_t attr;
    pthread_t t;
    void *(*kinds[3])(void *) = {sem_thread, cond_thread, sleep_thread};
    sem_init(&never, 0, 0);
    sem_init(&started, 0, 0);
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, kib * 1024);
    for (long i = 0; i < n; i++) {
        int err = pthread_create(&t, &attr, kinds[i % 3], (void *)i);
        if (err) {
            fprintf(stderr, "manythreads: thread %ld: %s\n", i, strerror(err));
            return 1;
        }
    }
    for (long i = 0; i < n; i++)
        sem_wait(&started);
    struct timespec ms = {0, 10 * 1000 * 1000};
    for (int tries = 0; awake() && tries < 1000; tries++)
        nanosleep(&ms, NULL);
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    for (;;)
        pause();
}
