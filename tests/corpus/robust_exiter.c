/* robust_exiter FLAGFILE: for GDB's non-stop mode (tests/test_session_robustness.py).
 *
 *   thread 2 (leaver)  polls until FLAGFILE exists, then exits
 *   thread 3 (spinner) spins for ever
 *   main               once both run: stop_here(1); joins the leaver; stop_here(2)
 * With "set non-stop on" and "break stop_here", thread 1 stops while threads 2
 * and 3 run; `shell touch FLAGFILE` makes thread 2 exit at a moment the test
 * chooses. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include "swk_corpus.h"

volatile int swk_sink;
static const char *flag_path;
static volatile int started;

SWK_FN int stop_here(int x)
{
    swk_sink += x;
    SWK_KEEP();
    return x + 1;
}

static void *leaver(void *arg)
{
    __sync_fetch_and_add(&started, 1);
    while (access(flag_path, F_OK) != 0)
        usleep(1000);
    return arg;
}

static void *spinner(void *arg)
{
    __sync_fetch_and_add(&started, 1);
    for (;;)
        swk_sink++;
    return arg;
}

int main(int argc, char **argv)
{
    pthread_t a, b;
    if (argc < 2)
        return 2;
    flag_path = argv[1];
    pthread_create(&a, NULL, leaver, NULL);
    pthread_create(&b, NULL, spinner, NULL);
    while (started < 2)
        usleep(1000);
    stop_here(1);
    pthread_join(a, NULL);
    stop_here(2);
    printf("EXITER-DONE\n");
    return 0;
}
