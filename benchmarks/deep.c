/* deep: main -> rec(n) -> rec(n-1) ... -> rec(0) -> stop_here, for benchmarks/run.py.
 *
 * As tests/corpus/recurse.c, but stop_here spins in a loop, so that `stepi` there
 * makes a new stop at the same depth (GDB and swk drop every frame cache at a stop)
 * without leaving the function.  Built -O0 -g and -O2 -g: at -O2 rec's argument
 * lives in a register and GDB shows it through entry values (n=n@entry=...), the
 * shape of a release build's backtrace. */
#include <stdlib.h>

volatile long deep_sink;

__attribute__((noipa, noinline)) int stop_here(int x)
{
    for (long i = 0; i < 100000000L; i++)
        deep_sink += i + x;
    return x + 1;
}

__attribute__((noipa, noinline)) int rec(int n)
{
    int r = n <= 0 ? stop_here(n) : rec(n - 1);
    __asm__ __volatile__("" ::: "memory");
    return r + n;
}

int main(int argc, char **argv)
{
    int depth = argc > 1 ? atoi(argv[1]) : 10000;
    return rec(depth) == 0;
}
