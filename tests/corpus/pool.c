/* pool [N]: a thread pool of N workers (default 40) parked in two places, for swk-bt -unique
 * (tests/test_unique.py).  Workers with an odd id wait on a semaphore in odd_wait, those with an
 * even id on a condition variable in even_wait; each passes its own id down (arguments differ,
 * stacks do not).  main waits until every worker has blocked (asleep in the kernel, by
 * /proc/self/task: on a loaded machine "about to block" can last long), then calls stop_here.
 * `pool N park`: then prints "ready" and waits in pause() until killed (a live process for
 * swk bt --pid, tests/test_merge.py). */
#include <dirent.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static sem_t never;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static volatile int ready;
volatile int sink;

__attribute__((noinline)) void stop_here(int n)
{
    sink += n;
}

__attribute__((noinline)) void odd_wait(int id)
{
    __atomic_add_fetch(&ready, 1, __ATOMIC_SEQ_CST);
    sem_wait(&never);
    sink += id;
}

__attribute__((noinline)) void even_wait(int id)
{
    pthread_mutex_lock(&mu);
    __atomic_add_fetch(&ready, 1, __ATOMIC_SEQ_CST);
    pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    sink += id;
}

/* Whether every thread but main is asleep (state S in /proc/self/task/TID/stat). */
static int all_asleep(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int asleep = 1;
    if (!d)
        return 1;
    while (asleep && (e = readdir(d)) != NULL) {
        char path[300], buf[512];
        FILE *f;
        if (e->d_name[0] == '.' || atoi(e->d_name) == getpid())
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
        f = fopen(path, "r");
        if (!f)
            continue;
        if (fgets(buf, sizeof buf, f)) {
            char *paren = strrchr(buf, ')');
            asleep = paren && paren[1] == ' ' && paren[2] == 'S';
        }
        fclose(f);
    }
    closedir(d);
    return asleep;
}

static void *worker(void *arg)
{
    int id = (int)(long)arg;
    if (id % 2)
        odd_wait(id);
    else
        even_wait(id);
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 40;
    sem_init(&never, 0, 0);
    for (long i = 0; i < n; i++) {
        pthread_t t;
        pthread_create(&t, NULL, worker, (void *)i);
    }
    while (__atomic_load_n(&ready, __ATOMIC_SEQ_CST) < n)
        usleep(1000);
    for (int i = 0; i < 30000 && !all_asleep(); i++)
        usleep(1000);
    usleep(20000);
    stop_here(n);
    if (argc > 2 && strcmp(argv[2], "park") == 0) {
        printf("ready\n");
        fflush(stdout);
        for (;;)
            pause();
    }
    return 0;
}
