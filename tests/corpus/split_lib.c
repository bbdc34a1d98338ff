/* The second unit of split_main.c's program (see there).  relay stores to sink before
 * its inlined scale: GCC 12 writes a DWARF 4 range list's entries from the unit's first
 * address, and an empty first range of scale at relay's entry (offset 0) would read as
 * the list's end (a block GDB then drops, its call sites with it).  bounce passes m on
 * as it came: leaf's b is then k's entry value through the tail call, which GDB 13 (past
 * main) works out from the wrong frame when the tail call's own value is computed
 * (m + 1 gives b@entry=5000 where k is 4). */
#define NI __attribute__((noipa))
extern volatile int sink;
NI void stop_here(int v);
NI int leaf(int a, long b, const char *tag);
NI int relay(int x, int k);
NI int bounce(int n, int m);

NI int bounce(int n, int m)
{
    sink += n;
    return relay(n * 2, m);
}

static inline int scale(int x, int k)
{
    int y = x * k + 1;
    return leaf(y, (long)k * 1000, "scaled") + y;
}

NI int relay(int x, int k)
{
    sink += k;
    int r = scale(x + 2, k);
    sink += r;
    return r - x;
}
