/* hard_dlopen LIBPATH: main -> load_and_call -> dlopen(LIBPATH),
 * dlsym("lib_entry") -> lib_entry -> lib_inner (in libhard_dlib.so, built
 * without CFI: see hard_dlib.c) -> main_cb -> stop_here.  The program
 * itself has CFI.
 * Stop: "break stop_here", "run LIBPATH".
 * Known chain: stop_here main_cb lib_inner lib_entry load_and_call main
 * <libc start> _start. */
#include <dlfcn.h>
#include <stdio.h>
#include "swk_corpus.h"

volatile int swk_sink;
typedef int (*swk_cb)(int);
typedef int (*entry_fn)(swk_cb, int);

SWK_FN int stop_here(int x) { swk_sink += x; SWK_KEEP(); return x + 1; }
SWK_FN int main_cb(int x) { int r = stop_here(x + 1); SWK_KEEP(); return r + 1; }

SWK_FN int load_and_call(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "hard_dlopen: %s\n", dlerror());
        return -1;
    }
    entry_fn f = (entry_fn)dlsym(h, "lib_entry");
    if (!f) {
        fprintf(stderr, "hard_dlopen: %s\n", dlerror());
        return -1;
    }
    int r = f(main_cb, 1);
    SWK_KEEP();
    return r + 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: hard_dlopen LIBPATH\n");
        return 2;
    }
    int r = load_and_call(argv[1]);
    SWK_KEEP();
    return r < 0 ? 1 : 0;
}
