/* overflow: a recursion without end, until the stack overflows (SIGSEGV), for tests/test_deep.py
 * and benchmarks/deep_stacks.py.  `overflow KIB` first sets the stack's limit to KIB KiB (the
 * main thread's stack grows up to its RLIMIT_STACK, read at each fault), so that one program
 * makes small overflows GDB prints in full and the 8 MiB one of a default stack.
 *
 * Each level is a physical frame of rec with an inlined call (descend) at its call, and the
 * tail-call frame of hop, which jumps back into rec: the frame kinds a segment boundary of a
 * streamed walk can cut between.  rec's argument n counts the depth: the frame main called has
 * n = 1, each deeper rec one more (the target's own record of its stack).  At -O2 -g GDB 13's
 * bt of it is quick (no chains of entry values: descend takes no argument, rec keeps n in a
 * callee-saved register); a 16-byte frame (push + return address) makes 8 MiB hold 524,288. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/resource.h>

volatile int overflow_sink;

int rec(int n);

__attribute__((noipa, noinline)) int hop(int n)
{
    return rec(n + 1);
}

static inline __attribute__((always_inline)) int descend(void)
{
    return hop(overflow_sink);
}

__attribute__((noipa, noinline)) int rec(int n)
{
    overflow_sink = n;
    int r = descend();
    __asm__ __volatile__("" ::: "memory");
    return r + n;
}

/* `overflow KIB plain`: one frame per level, 32 bytes each (the return address, rbx, 16 of
 * locals): an 8 MiB stack holds 262,000 of them, the stack overflow. */
__attribute__((noipa, noinline)) int rec_plain(int n)
{
    volatile int pad[2];
    pad[0] = n;
    int r = rec_plain(n + 1);
    return r + pad[0] + pad[1];
}

/* `overflow KIB park DEPTH`: rec_park DEPTH levels deep (main called rec_park(1)), then "ready"
 * on stdout and pause() until killed: a live process with a stack as deep as an overflow's, for
 * swk bt --pid (tests/test_deep.py). */
__attribute__((noipa, noinline)) int rec_park(int n, int depth)
{
    volatile int pad[2];
    pad[0] = n;
    if (n >= depth) {
        printf("ready\n");
        fflush(stdout);
        for (;;)
            pause();
    }
    int r = rec_park(n + 1, depth);
    return r + pad[0] + pad[1];
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        struct rlimit rl;
        getrlimit(RLIMIT_STACK, &rl);
        rl.rlim_cur = strtoul(argv[1], 0, 0) * 1024;
        setrlimit(RLIMIT_STACK, &rl);
    }
    int r = argc > 3 ? rec_park(1, atoi(argv[3])) : argc > 2 ? rec_plain(1) : rec(1);
    __asm__ __volatile__("" ::: "memory");
    return r;
}
