/* Values GCC -O2 describes with DWARF expressions that compute (tests/test_dwarf_expr.py):
   typed operations (DW_OP_const_type, DW_OP_regval_type, DW_OP_convert), arithmetic on
   them, and DW_OP_entry_value of parameters whose registers the calls below clobber. */
#include <stdlib.h>

volatile long sink;

__attribute__((noinline)) void stop(long v) { sink = v; __asm__ volatile("" ::: "memory"); }

__attribute__((noinline)) double mix(double x, float y, int n, long k, unsigned u)
{
    double half = x / 2.0;
    double sum = x + y;
    float third = y / 3.0f;
    long twice = k * 2 + 1;
    int neg = -n;
    unsigned shifted = u >> 3;
    long prod = (long)n * k;
    int quot = n / 7;
    stop(k);
    stop(n);
    return 0;
}

__attribute__((noinline)) long chain(long a, int b)
{
    long c = a + 100;
    int d = b * 3 - 1;
    stop(a);
    return c + d;
}

int main(int argc, char **argv)
{
    (void)argv;
    mix(argc * 1.5, argc + 0.25f, argc + 41, argc * 1000L, argc * 81u);
    chain(argc + 6L, argc - 10);
    return 0;
}
