/* libdlib.so: dlib_entry -> dlib_mid -> dlib_inner -> callback (in main). */
#include "swk_corpus.h"

typedef int (*swk_cb)(int);
static volatile int dlib_sink;

SWK_FN int dlib_inner(swk_cb cb, int x) { int r = cb(x + 1); SWK_KEEP(); dlib_sink = r; return r + 1; }
SWK_FN int dlib_mid(swk_cb cb, int x) { int r = dlib_inner(cb, x + 1); SWK_KEEP(); return r + 1; }
SWK_FN int dlib_entry(swk_cb cb, int x) { int r = dlib_mid(cb, x + 1); SWK_KEEP(); return r + 1; }
