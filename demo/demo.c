/* The demo: a few ordinary frames, a signal handler, and a thread. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static volatile int sink;

__attribute__((noinline)) void stop_here(void) { sink++; asm volatile(""); }
__attribute__((noinline)) static void in_handler(int depth) { stop_here(); sink += depth; }
static void on_signal(int sig) { in_handler(sig); }

__attribute__((noinline)) static int leaf(int n) { raise(SIGUSR1); return n + sink; }
__attribute__((noinline)) static int middle(int n) { return leaf(n * 2) + 1; }
__attribute__((noinline)) static int outer(int n) { return middle(n + 1) + 1; }

static void *worker(void *arg) { (void)arg; for (;;) pause(); return NULL; }

int main(void) {
    pthread_t t;
    signal(SIGUSR1, on_signal);
    pthread_create(&t, NULL, worker, NULL);
    usleep(10000);
    printf("%d\n", outer(20));
    return 0;
}
