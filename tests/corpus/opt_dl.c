/* libopt_dl.so: dlopen'd by optimised.c, so its TLS block is allocated through the DTV. */
__attribute__((noinline)) int opt_dl_fn(int v, void (*cb)(int))
{
    static __thread long dl_calls = 70;
    dl_calls += v;
    cb((int)dl_calls);
    return (int)dl_calls;
}
