/* jit_register_frame: code written at run time and described to libgcc's unwinder with
 * __register_frame, as a JIT does for its exceptions (tests/test_jit_register_frame.py).
 * main -> call_jit -> [jit_fp stub] -> [jit_nofp stub] -> c_callback -> stop_here.
 *
 * The stubs are hard_jit.c's, copied into an anonymous page made executable:
 *   jit_fp   (page + 0):   push %rbp; mov %rsp,%rbp; add $1,%edi;
 *                          movabs $jit_nofp,%rax; call *%rax; pop %rbp; ret
 *   jit_nofp (page + 64):  sub $8,%rsp; add $1,%edi;
 *                          movabs $c_callback,%rax; call *%rax; add $8,%rsp; ret
 * Their .eh_frame is written here by hand (one CIE, an FDE each, absolute pc_begin) and given
 * to __register_frame unless argv[1] is "noreg".  Built with -static-libgcc, so that libgcc's
 * lists of registered objects are symbols of the program.  With "wait" stop_here says
 * "ready" and waits in pause(); otherwise it is where a breakpoint stops.
 * Known chain: stop_here c_callback ?? ?? call_jit main <libc start> _start. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "swk_corpus.h"

extern void __register_frame(void *);

volatile int swk_sink;
static int waiting;
typedef int (*jit_fn)(int);

SWK_FN int stop_here(int x)
{
    swk_sink += x;
    if (waiting) {
        write(1, "ready\n", 6);
        pause();
    }
    SWK_KEEP();
    return x + 1;
}

SWK_FN int c_callback(int x) { int r = stop_here(x + 1); SWK_KEEP(); return r + 1; }

static unsigned char *put(unsigned char *p, const void *bytes, size_t n)
{
    memcpy(p, bytes, n);
    return p + n;
}

static unsigned char *put_u32(unsigned char *p, uint32_t v) { return put(p, &v, 4); }
static unsigned char *put_u64(unsigned char *p, uint64_t v) { return put(p, &v, 8); }

static unsigned char *put_movabs_rax(unsigned char *p, uint64_t imm)
{
    static const unsigned char op[] = { 0x48, 0xb8 };   /* movabs $imm64,%rax */
    p = put(p, op, sizeof op);
    return put_u64(p, imm);
}

static unsigned char eh_frame[256] __attribute__((aligned(8)));

/* An FDE for [start, start + size) with the CFA instructions ``ins`` (padded with DW_CFA_nop). */
static unsigned char *put_fde(unsigned char *p, unsigned char *cie, uint64_t start, uint64_t size,
                              const unsigned char *ins, size_t n)
{
    unsigned char *len = p;
    p = put_u32(p + 4, (uint32_t)(p + 4 - cie));        /* CIE pointer: back to the CIE */
    p = put_u64(p, start);                               /* pc_begin (DW_EH_PE_absptr) */
    p = put_u64(p, size);                                /* pc_range */
    *p++ = 0;                                            /* augmentation data: none */
    p = put(p, ins, n);
    while ((p - len) % 8)
        *p++ = 0;                                        /* DW_CFA_nop */
    put_u32(len, (uint32_t)(p - len - 4));
    return p;
}

static void describe(unsigned char *page)
{
    /* CIE: version 1, "zR", code align 1, data align -8, return address column 16 (rip),
     * FDE pointers DW_EH_PE_absptr; CFA = rsp+8, rip at CFA-8 */
    static const unsigned char cie_body[] = { 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0,
                                              0x0c, 7, 8, 0x90, 1, 0, 0 };
    /* jit_fp: after push %rbp (1 byte) CFA = rsp+16, rbp at CFA-16; after mov (3) CFA = rbp+16 */
    static const unsigned char fp_ins[] = { 0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6 };
    /* jit_nofp: after sub $8,%rsp (4 bytes) CFA = rsp+16 */
    static const unsigned char nofp_ins[] = { 0x44, 0x0e, 16 };
    unsigned char *p = eh_frame, *cie = eh_frame;
    p = put_u32(p, sizeof cie_body);
    p = put(p, cie_body, sizeof cie_body);
    p = put_fde(p, cie, (uint64_t)(uintptr_t)page, 32, fp_ins, sizeof fp_ins);
    p = put_fde(p, cie, (uint64_t)(uintptr_t)(page + 64), 32, nofp_ins, sizeof nofp_ins);
    put_u32(p, 0);                                       /* the terminator */
}

SWK_FN int call_jit(jit_fn f, int x) { int r = f(x); SWK_KEEP(); return r + 1; }

int main(int argc, char **argv)
{
    unsigned char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    unsigned char *p;
    static const unsigned char fp_head[] = { 0x55, 0x48, 0x89, 0xe5, 0x83, 0xc7, 0x01 };
    static const unsigned char call_rax[] = { 0xff, 0xd0 };
    static const unsigned char fp_tail[] = { 0x5d, 0xc3 };
    static const unsigned char nofp_head[] = { 0x48, 0x83, 0xec, 0x08, 0x83, 0xc7, 0x01 };
    static const unsigned char nofp_tail[] = { 0x48, 0x83, 0xc4, 0x08, 0xc3 };
    if (page == MAP_FAILED)
        return 1;
    waiting = argc > 1 && strcmp(argv[1], "wait") == 0;
    p = put(page, fp_head, sizeof fp_head);
    p = put_movabs_rax(p, (uint64_t)(uintptr_t)(page + 64));
    p = put(p, call_rax, sizeof call_rax);
    put(p, fp_tail, sizeof fp_tail);
    p = put(page + 64, nofp_head, sizeof nofp_head);
    p = put_movabs_rax(p, (uint64_t)(uintptr_t)c_callback);
    p = put(p, call_rax, sizeof call_rax);
    put(p, nofp_tail, sizeof nofp_tail);
    mprotect(page, 4096, PROT_READ | PROT_EXEC);
    describe(page);
    if (!(argc > 1 && strcmp(argv[1], "noreg") == 0))
        __register_frame(eh_frame);
    return call_jit((jit_fn)page, 1) == 0;
}
