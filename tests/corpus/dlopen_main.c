/* dlopen_main LIBPATH: main -> load_and_call -> dlopen(LIBPATH), dlsym
 * "dlib_entry" -> dlib_entry -> dlib_mid -> dlib_inner (all in the lib)
 * -> main_callback -> stop_here.
 * Without an argument the library is looked for beside the executable. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "swk_corpus.h"

volatile int swk_sink;
typedef int (*swk_cb)(int);
typedef int (*entry_fn)(swk_cb, int);

SWK_FN int stop_here(int x) { swk_sink += x; SWK_KEEP(); return x + 1; }
SWK_FN int main_callback(int x) { int r = stop_here(x + 1); SWK_KEEP(); return r + 1; }

SWK_FN int load_and_call(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen_main: %s\n", dlerror());
        return -1;
    }
    entry_fn f = (entry_fn)dlsym(h, "dlib_entry");
    if (!f) {
        fprintf(stderr, "dlopen_main: %s\n", dlerror());
        return -1;
    }
    int r = f(main_callback, 1);
    SWK_KEEP();
    return r + 1;
}

int main(int argc, char **argv)
{
    char buf[PATH_MAX];
    const char *path = argc > 1 ? argv[1] : NULL;
    if (!path) {
        ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 32);
        if (n <= 0)
            return 3;
        buf[n] = 0;
        char *slash = strrchr(buf, '/');
        strcpy(slash ? slash + 1 : buf, "libdlib.so");
        path = buf;
    }
    int r = load_and_call(path);
    SWK_KEEP();
    return r < 0 ? 1 : 0;
}
