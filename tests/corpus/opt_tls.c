/* libopt_tls.so: linked by optimised.c, so its TLS block is in the static TLS area. */
__thread int opt_tls_counter = 11;
__attribute__((noinline)) int opt_tls_fn(int v, void (*cb)(int))
{
    static __thread int lib_calls = 40;
    lib_calls += v;
    opt_tls_counter += v;
    cb(lib_calls);
    return lib_calls;
}
