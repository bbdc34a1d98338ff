/* locals_c: arguments and locals of every C kind, for swk-bt -full (issue 5).
 *
 * Chain (top->bottom), stopped by "break stop_here":
 *   stop_here(code)                     leaf, no locals
 *   inl_leaf(k, p)        [inline]     \ always_inline, inlined into
 *   inl_mid(base)         [inline]     / inline_host: GDB shows 2 inline frames
 *   inline_host(seed)
 *   keep_regs(seed, mult)               values computed before the call and used
 *                                       after it: in callee-saved registers at -O2
 *   blocks(n)                           lexical blocks, shadowed names, static
 *                                       locals, a block the pc is not in
 *   aggregates(o, pp, n, rp, fl)        arrays (int, char, 2-D, of structs),
 *                                       structs, unions, nested structs, bitfields
 *   scalars(sc, uc, ..., ld)            every integer width, char, bool, enums,
 *                                       float/double/long double, pointers (data,
 *                                       function, char*), typedefs, const/volatile
 *   main(argc, argv)
 *
 * Every value is deterministic (no uninitialised locals at the stop: a result
 * is stored into a variable that was initialised before the call).  Every
 * chain function is SWK_FN (noipa) so arguments are real.  Pointers differ
 * from run to run only with ASLR (gdb turns it off).
 */
#include <stdbool.h>
#include <stddef.h>
#include "swk_corpus.h"

volatile int swk_sink;
int g_int = 1234;
double g_dbl = 6.5;
const char g_msg[] = "global message";

typedef unsigned int u32_t;
typedef int (*binop_t)(int, int);

typedef struct point { int x, y; } point_t;
enum color { RED, GREEN = 5, BLUE = 42 };
typedef enum color color_t;
enum perms { P_R = 1, P_W = 2, P_X = 4 };
union number { int i; float f; unsigned char bytes[4]; };
struct inner { short s; char tag[4]; };
struct outer { int id; struct inner in; point_t pts[2]; double weight; };
struct rec { char name[8]; int vals[3]; };
struct flags { unsigned a : 3; unsigned b : 5; int c : 4; };

SWK_FN int add_fn(int a, int b) { return a + b; }
SWK_FN int mul_fn(int a, int b) { return a * b; }

SWK_FN int stop_here(int code)
{
    swk_sink += code;
    SWK_KEEP();
    return code + 1;
}

/* ---- inline frames -------------------------------------------------------- */

static inline __attribute__((always_inline)) int inl_leaf(int k, const int *p)
{
    int sq = k * 3 + *p;
    int r = 0;
    r += stop_here(sq);
    SWK_KEEP();
    return r + sq + k;              /* k and sq live across the call */
}

static inline __attribute__((always_inline)) int inl_mid(int base)
{
    int twice = base * 2;
    int r = 0;
    r += inl_leaf(twice + 1, &g_int);
    return r + twice;
}

SWK_FN int inline_host(long seed)
{
    int host_local = (int)seed + 3;
    int r = 0;
    r += inl_mid(host_local);
    SWK_KEEP();
    return r + host_local;
}

/* ---- callee-saved registers ------------------------------------------------- */

SWK_FN long keep_regs(long seed, int mult)
{
    long a = seed * 3 + 1;          /* used after the call: callee-saved regs at -O2 */
    long b = seed ^ 0x5555;
    int c = mult * 7;
    unsigned short us = (unsigned short)(c + 11);
    long r = 0;
    r += inline_host(a + b);
    SWK_KEEP();
    return r + a + b * c + us;
}

/* ---- lexical blocks, shadowing, statics ---------------------------------- */

SWK_FN int blocks(int n)
{
    static int counter = 10;
    static const char *label = "static-label";
    int x = n + 100;
    int total = 0;
    counter++;
    {
        int x = n + 200;            /* shadows the outer x */
        int y = n + 300;
        {
            long x = n + 400L;      /* shadows both */
            total += (int)keep_regs(x, y);
            SWK_KEEP();
            total += (int)x;
        }
        total += x + y;
    }
    if (total != 12345) {          /* after the call: a block the stop pc is not in */
        int after = total * 2;
        swk_sink += after;
    }
    return total + x + counter + label[0];
}

/* ---- aggregates ------------------------------------------------------------- */

SWK_FN int aggregates(struct outer o, point_t *pp, union number n, struct rec *rp, struct flags fl)
{
    int arr[5] = {1, 2, 3, 4, 5};
    char cbuf[16] = "abc";
    char word[6] = "hello";
    int grid[2][3] = {{1, 2, 3}, {4, 5, 6}};
    struct rec recs[2] = {{"ab", {1, 2, 3}}, {"cdefg", {-4, -5, -6}}};
    point_t pt = {-7, 8};
    union number un;
    struct outer nested = {99, {-3, "xy"}, {{1, -1}, {2, -2}}, 0.25};
    int zeros[12] = {0};
    /* char arrays ending in an incomplete UTF-8 sequence: GDB prints <incomplete sequence>
       and, as glibc's iconv hands it over, drops the character just before it */
    char tail_valid[8] = {'h', 'i', 'h', 'i', 'h', 'i', 'h', (char)0xc2};
    char tail_five[8] = {'h', 'i', (char)0x81, 'h', 'i', (char)0xf8, (char)0x88, (char)0x80};
    char tail_rep[14] = {'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', (char)0xe0, (char)0x80};
    char tail_mid[8] = {'h', 'i', (char)0xf9, (char)0x93, 0, 0, 0, 0};
    char tail_bad[6] = {'o', 'k', (char)0xe0, 'A', (char)0xf4, (char)0x90};
    char tail_utf[7] = {'x', (char)0xc3, (char)0xa9, (char)0xc3, (char)0xa9, (char)0xe2, (char)0x82};
    /* bounds of 128..255 are one-byte DW_FORM_data1 constants: unsigned, as GDB reads them */
    int big200[200];
    unsigned char bytes255[255];
    for (int k = 0; k < 200; k++)
        big200[k] = k % 7;
    for (int k = 0; k < 255; k++)
        bytes255[k] = (unsigned char)(k * 5);
    un.f = 1.5f;
    int res = 0;
    res += blocks(o.id + pp->x + rp->vals[1] + fl.b);
    SWK_KEEP();
    return res + arr[4] + grid[0][1] + o.pts[1].y + pp->y + recs[0].name[0] + zeros[3]
        + nested.pts[0].x + un.bytes[0] + cbuf[0] + n.bytes[1] + arr[2] + cbuf[1] + grid[1][2]
        + recs[1].vals[0] + pt.y + nested.in.s + word[0] + tail_valid[1] + tail_five[2] + tail_rep[3]
        + tail_mid[3] + tail_bad[3] + tail_utf[4] + big200[pp->x & 127] + bytes255[rp->vals[2] & 127];
}

/* ---- scalars ---------------------------------------------------------------- */

SWK_FN int scalars(signed char sc, unsigned char uc, short s, unsigned short us, int i,
                   unsigned int u, long l, unsigned long ul, long long ll,
                   unsigned long long ull, char ch, bool flag, enum color col, float f,
                   double d, long double ld)
{
    const int ci = 7;
    volatile int vi = -8;
    u32_t td = 0xdeadbeefu;
    color_t tcol = GREEN;
    enum color weird = (enum color)7;
    enum perms pm = P_R | P_X;
    enum perms pm_bad = (enum perms)(P_W | 8);
    const char *str = "hello, swk";
    const char *nul = NULL;
    char *gm = (char *)g_msg;
    int *ip = &g_int;
    double *dp = &g_dbl;
    void *vp = NULL;
    binop_t fp = add_fn;
    int (*fp2)(int, int) = mul_fn;
    bool no = false;
    char nl = '\n';
    unsigned char hi = 0xfe;
    float neg = -2.5f;
    double tenth = 0.1;
    long double third = 1.0L / 3.0L;

    struct outer o = {7, {21, "ok"}, {{3, 4}, {5, 6}}, 2.5};
    point_t pt = {11, -12};
    union number n;
    n.i = 0x41424344;
    struct rec r = {"swk", {10, 20, 30}};
    struct flags fl = {5, 17, -3};
    int res = 0;

    res += aggregates(o, &pt, n, &r, fl);
    SWK_KEEP();
    res += (int)(0u + fp(sc, uc) + fp2(s, i) + (int)us + (int)u + (int)l + (int)ul + (int)ll + (int)ull
        + ch + flag + col + (int)f + (int)d + (int)ld + ci + vi + (int)td + tcol + weird + pm
        + pm_bad + str[0] + (nul == NULL) + gm[0] + *ip + (int)*dp + (vp == NULL) + no + nl
        + hi + (int)neg + (int)(tenth * 10) + (int)(third * 3));
    return res;
}

int main(int argc, char **argv)
{
    int status = argc + 40;
    int out = 0;
    (void)argv;
    out += scalars(-5, 200, -1234, 54321, -100000, 3000000000u, -1234567890123L,
                   12345678901234567890UL, -9876543210987LL, 18000000000000000000ULL,
                   'Q', true, BLUE, 1.5f, 2.718281828, 3.25L);
    SWK_KEEP();
    return out == status ? 1 : 0;
}
