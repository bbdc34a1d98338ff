/* hard_jit: code written at run time.  main -> call_jit -> [jit_fp stub]
 * -> [jit_nofp stub] -> c_callback -> stop_here.
 *
 * The two stubs are machine code copied into an anonymous
 * mmap(PROT_READ|PROT_WRITE) page that is then mprotect()ed to
 * PROT_READ|PROT_EXEC: no symbol, no CFI, no library - gdb shows "??".
 *   jit_fp   (page + 0):   push %rbp; mov %rsp,%rbp; add $1,%edi;
 *                          movabs $jit_nofp,%rax; call *%rax; pop %rbp; ret
 *   jit_nofp (page + 64):  sub $8,%rsp; add $1,%edi;
 *                          movabs $c_callback,%rax; call *%rax;
 *                          add $8,%rsp; ret
 * Built with -DSWK_TWIN, the same instruction sequences are ordinary
 * functions in .text with CFI (twin_jit_fp, twin_jit_nofp) and call_jit
 * calls those instead: gdb's bt of that twin shows the chain's shape.
 * Stop: "break stop_here", "run".
 * Known chain: stop_here c_callback ?? ?? call_jit main <libc start> _start
 * (twin: stop_here c_callback twin_jit_nofp twin_jit_fp call_jit main ...). */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include "swk_corpus.h"

volatile int swk_sink;
typedef int (*jit_fn)(int);
void *volatile jit_page;        /* for a human in gdb: where the stubs are */

SWK_FN int stop_here(int x) { swk_sink += x; SWK_KEEP(); return x + 1; }
SWK_FN int c_callback(int x) { int r = stop_here(x + 1); SWK_KEEP(); return r + 1; }

#ifdef SWK_TWIN
int twin_jit_fp(int x);
int twin_jit_nofp(int x);
__asm__(
    "        .text\n"
    "        .globl twin_jit_fp\n"
    "        .type twin_jit_fp, @function\n"
    "twin_jit_fp:\n"
    "        .cfi_startproc\n"
    "        pushq %rbp\n"
    "        .cfi_def_cfa_offset 16\n"
    "        .cfi_offset %rbp, -16\n"
    "        movq %rsp, %rbp\n"
    "        .cfi_def_cfa_register %rbp\n"
    "        addl $1, %edi\n"
    "        leaq twin_jit_nofp(%rip), %rax\n"
    "        call *%rax\n"
    "        popq %rbp\n"
    "        .cfi_def_cfa %rsp, 8\n"
    "        ret\n"
    "        .cfi_endproc\n"
    "        .size twin_jit_fp, .-twin_jit_fp\n"
    "        .globl twin_jit_nofp\n"
    "        .type twin_jit_nofp, @function\n"
    "twin_jit_nofp:\n"
    "        .cfi_startproc\n"
    "        subq $8, %rsp\n"
    "        .cfi_def_cfa_offset 16\n"
    "        addl $1, %edi\n"
    "        leaq c_callback(%rip), %rax\n"
    "        call *%rax\n"
    "        addq $8, %rsp\n"
    "        .cfi_def_cfa_offset 8\n"
    "        ret\n"
    "        .cfi_endproc\n"
    "        .size twin_jit_nofp, .-twin_jit_nofp\n");
#endif

static unsigned char *put(unsigned char *p, const void *bytes, size_t n)
{
    memcpy(p, bytes, n);
    return p + n;
}

static unsigned char *put_movabs_rax(unsigned char *p, uint64_t imm)
{
    static const unsigned char op[] = { 0x48, 0xb8 };   /* movabs $imm64,%rax */
    p = put(p, op, sizeof op);
    memcpy(p, &imm, 8);
    return p + 8;
}

/* Returns the entry of jit_fp, or NULL. */
static jit_fn make_stubs(void)
{
    static const unsigned char fp_head[] = {
        0x55,                   /* push %rbp */
        0x48, 0x89, 0xe5,       /* mov %rsp,%rbp */
        0x83, 0xc7, 0x01,       /* add $1,%edi */
    };
    static const unsigned char fp_tail[] = {
        0xff, 0xd0,             /* call *%rax */
        0x5d,                   /* pop %rbp */
        0xc3,                   /* ret */
    };
    static const unsigned char nofp_head[] = {
        0x48, 0x83, 0xec, 0x08, /* sub $8,%rsp */
        0x83, 0xc7, 0x01,       /* add $1,%edi */
    };
    static const unsigned char nofp_tail[] = {
        0xff, 0xd0,             /* call *%rax */
        0x48, 0x83, 0xc4, 0x08, /* add $8,%rsp */
        0xc3,                   /* ret */
    };
    long pagesz = 4096;
    unsigned char *page = mmap(NULL, pagesz, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        return NULL;
    memset(page, 0xcc, pagesz);                     /* int3 filler */
    unsigned char *nofp = page + 64;
    unsigned char *p = put(page, fp_head, sizeof fp_head);
    p = put_movabs_rax(p, (uint64_t)(uintptr_t)nofp);
    put(p, fp_tail, sizeof fp_tail);
    p = put(nofp, nofp_head, sizeof nofp_head);
    p = put_movabs_rax(p, (uint64_t)(uintptr_t)&c_callback);
    put(p, nofp_tail, sizeof nofp_tail);
    if (mprotect(page, pagesz, PROT_READ | PROT_EXEC) != 0)
        return NULL;
    __builtin___clear_cache((char *)page, (char *)page + pagesz);
    jit_page = page;
    return (jit_fn)(void *)page;
}

SWK_FN int call_jit(int x)
{
#ifdef SWK_TWIN
    jit_fn f = twin_jit_fp;
    (void)make_stubs;
#else
    jit_fn f = make_stubs();
    if (!f)
        return -1000;
#endif
    int r = f(x + 1);
    SWK_KEEP();
    return r + 1;
}

int main(int argc, char **argv)
{
    (void)argv;
    int r = call_jit(argc);
    SWK_KEEP();
    return r <= 0 ? 1 : 0;
}
