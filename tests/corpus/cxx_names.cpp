/* C++ functions without a linkage name (main, extern "C") whose addresses are printed in a
 * frame line: GDB names them with their parameter types, canonicalized as its C++ parser
 * spells them (dwarf2_canonicalize_name): <fx(unsigned long, char const*, ..., char**)>,
 * <main(int, char**)> (tests/test_gdb_exact.py: test_cxx_computed_names).
 */
#include <cstddef>

extern "C" int fx(unsigned long a, const char *s, long b, int &r, short c, unsigned short d, long long e,
                  unsigned long long f, size_t g, char **h, void (*fp)(int), int arr[3], unsigned char uc,
                  signed char sc, const int *const *cc)
{
    return s[0] + r + (int)a + (int)b + c + d + (int)e + (int)f + (int)g + (h != 0) + (fp != 0) + arr[0] +
           uc + sc + (cc != 0);
}

volatile int sink;

__attribute__((noinline)) void stop(void *p, void *q)
{
    sink += p != q;
}

int main(int argc, char **argv)
{
    (void)argv;
    stop((void *)fx, (void *)main);
    return argc > 100;
}
