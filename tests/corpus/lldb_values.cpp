/* Arguments of many types, for swk's rendering of LLDB's frame lines against LLDB's own
 * (tests/test_lldb.py: test_lldb_values_rendered_by_swk): integers of every size, characters
 * printable and not, bool, float / double / long double, strings, pointers (null too), a struct of
 * scalars, a struct holding a struct, a union, enums (named value and not), a reference.
 */
#include <cstdint>

struct In { int x; char c; };
struct Flat { int a; short b; };
struct Pair { int a; In in; double d; };
union U { int i; float f; };
enum Color { RED, GREEN = 5 };

volatile int sink;

__attribute__((noinline)) void leaf(int n, unsigned u, long l, short sh, unsigned char uc, signed char sc, char c,
                                    char nl, bool b, float f, double d, double tenth, const char *s,
                                    const char *nul, void *p, int *ip, Flat fl, Pair pr, U un, Color col,
                                    Color odd, int &ref, int8_t i8, uint64_t big, long double ld,
                                    const unsigned char *us)
{
    sink++;
}

__attribute__((noinline)) int mid(int k)
{
    Pair pr = {1, {2, 'z'}, 3.25};
    Flat fl = {4, -5};
    U un;
    un.i = 7;
    int r = k;
    leaf(-3, 4000000000u, -5, -6, 200, -7, 'x', '\n', true, 1.5f, 2.5, 0.1, "hi\"x\t", 0, &r, &r, fl, pr, un,
         GREEN, (Color)3, r, -8, 18446744073709551615ull, 1.25L, (const unsigned char *)"ab");
    return r;
}

int main()
{
    return mid(9) == 0;
}
