/* parked [DEPTH]: a live process whose threads wait in known chains, for swk bt --pid,
 * swk profile and gdb -p (issue 17).  Prints "ready PID" once every thread is parked.
 *
 *   main      stop_here? no: main -> deep(DEPTH) -> ... -> deep(0) -> park_main -> pause()
 *   thread 2  sem_thread -> sem_wait
 *   thread 3  sleep_thread -> nanosleep
 *   thread 4  sig_thread -> raise(SIGUSR2); its handler on_usr2 -> in_handler -> sigsuspend:
 *             a thread parked inside a signal handler
 *   thread 5  spin_thread -> spin(): busy, never blocking (for the profiler), unless argv[2]
 *             is "quiet"
 *
 * SIGUSR1 (any thread) writes "USR1" to stdout: the process still handles signals after swk.
 * SIGTERM ends it. */
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "swk_corpus.h"

volatile int swk_sink;
static sem_t never, parked;

static void on_usr1(int sig) { (void)sig; write(1, "USR1\n", 5); }

SWK_FN void in_handler(int sig)
{
    sigset_t none;
    sigemptyset(&none);
    sigaddset(&none, SIGUSR2);         /* stay in the handler: SIGUSR2 blocked, others wake it */
    sem_post(&parked);
    for (;;) {
        sigset_t wait_set;
        sigemptyset(&wait_set);
        sigaddset(&wait_set, SIGUSR2);
        sigsuspend(&wait_set);
        swk_sink += sig;
    }
}
SWK_FN void on_usr2(int sig) { in_handler(sig); SWK_KEEP(); }

SWK_FN void *sem_thread(void *a) { sem_post(&parked); sem_wait(&never); SWK_KEEP(); return a; }
SWK_FN void *sleep_thread(void *a)
{
    struct timespec ts = {100000, 0};
    sem_post(&parked);
    for (;;)
        nanosleep(&ts, NULL);
    return a;
}
SWK_FN void *sig_thread(void *a) { raise(SIGUSR2); SWK_KEEP(); return a; }
SWK_FN long spin(long n) { long x = 0; for (long i = 0; i < n; i++) x += i ^ swk_sink; return x; }
SWK_FN void *spin_thread(void *a) { sem_post(&parked); for (;;) swk_sink += (int)spin(100000); return a; }

SWK_FN void park_main(void) { for (;;) pause(); }
SWK_FN int deep(int n)
{
    if (n == 0) {
        park_main();
        return 0;
    }
    int r = deep(n - 1);
    SWK_KEEP();
    return r + 1;
}

int main(int argc, char **argv)
{
    int depth = argc > 1 ? atoi(argv[1]) : 20;
    int quiet = argc > 2 && strcmp(argv[2], "quiet") == 0;
    struct sigaction sa;
    pthread_t t;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    sa.sa_handler = on_usr2;
    sigaction(SIGUSR2, &sa, NULL);
    sem_init(&never, 0, 0);
    sem_init(&parked, 0, 0);
    pthread_create(&t, NULL, sem_thread, NULL);
    pthread_create(&t, NULL, sleep_thread, NULL);
    pthread_create(&t, NULL, sig_thread, NULL);
    if (!quiet)
        pthread_create(&t, NULL, spin_thread, NULL);
    for (int i = 0; i < (quiet ? 3 : 4); i++)
        sem_wait(&parked);
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    return deep(depth);
}
