/* GDB 13's nested entry value through a tail-call frame, past main (docs/usage.md): bounce
 * tail-calls relay with m + 1, relay's inlined scale passes k * 1000 on to leaf as b.  With
 * `set backtrace past-main on` GDB works b's entry value out from the wrong frame
 * (b@entry=5000); leaf prints what it was passed (b=4000), the oracle swk-bt is held to.
 * Built -O2 -g -gdwarf-4 by tests/test_gdb_exact.py; stop: "break stop_here", "run". */
#include <stdio.h>
#define NI __attribute__((noipa))
volatile int sink;
NI void stop_here(int v) { sink = v; __asm__ volatile("" ::: "memory"); }
NI int leaf(int a, long b, const char *tag)
{
    printf("leaf a=%d b=%ld\n", a, b);
    fflush(stdout);
    int sum = a + (int)b + tag[0];
    stop_here(sum);
    return sum + sink;
}
static inline int scale(int x, int k)
{
    int y = x * k + 1;
    return leaf(y, (long)k * 1000, "scaled") + y;
}
NI int relay(int x, int k)
{
    int r = scale(x + 2, k);
    sink += r;
    return r - x;
}
NI int bounce(int n, int m)
{
    sink += n;
    return relay(n * 2, m + 1);
}
int main(int argc, char **argv)
{
    (void)argv;
    int r = bounce(argc + 1, argc * 3);
    return r & 1;
}
