/* vector_regs.c: a thread parked in pause() with known bytes in its vector registers (the
 * program's own record of them, for tests/test_ptrace.py: what a live walk copies of its FP
 * and vector state must be these bytes).
 *
 * Register r's byte b is (37 * r + 3 * b + 11) & 0xff: all of ymm0-ymm15 (ymm0-ymm7 on i386)
 * where the CPU has AVX, else the xmm registers (their 16 bytes).  It prints "ready PID avx"
 * or "ready PID sse", then loads the registers and calls pause in a loop in one asm statement,
 * so no compiled code runs between the loads and the stop.
 */
#include <stdio.h>
#include <unistd.h>

static unsigned char pat[16][32] __attribute__((aligned(32)));

int main(void)
{
    for (int r = 0; r < 16; r++)
        for (int b = 0; b < 32; b++)
            pat[r][b] = (unsigned char)(37 * r + 3 * b + 11);
    __builtin_cpu_init();
    int avx = __builtin_cpu_supports("avx");
    printf("ready %d %s\n", (int)getpid(), avx ? "avx" : "sse");
    fflush(stdout);
#ifdef __x86_64__
    if (avx)
        __asm__ volatile(
        "vmovdqu 0(%0), %%ymm0\n\t"
        "vmovdqu 32(%0), %%ymm1\n\t"
        "vmovdqu 64(%0), %%ymm2\n\t"
        "vmovdqu 96(%0), %%ymm3\n\t"
        "vmovdqu 128(%0), %%ymm4\n\t"
        "vmovdqu 160(%0), %%ymm5\n\t"
        "vmovdqu 192(%0), %%ymm6\n\t"
        "vmovdqu 224(%0), %%ymm7\n\t"
        "vmovdqu 256(%0), %%ymm8\n\t"
        "vmovdqu 288(%0), %%ymm9\n\t"
        "vmovdqu 320(%0), %%ymm10\n\t"
        "vmovdqu 352(%0), %%ymm11\n\t"
        "vmovdqu 384(%0), %%ymm12\n\t"
        "vmovdqu 416(%0), %%ymm13\n\t"
        "vmovdqu 448(%0), %%ymm14\n\t"
        "vmovdqu 480(%0), %%ymm15\n\t"
        "1: movl $34, %%eax\n\t"          /* SYS_pause */
        "syscall\n\t"
        "jmp 1b\n\t" : : "r"(pat) : "rax", "rcx", "r11", "memory");
    __asm__ volatile(
        "movdqu 0(%0), %%xmm0\n\t"
        "movdqu 32(%0), %%xmm1\n\t"
        "movdqu 64(%0), %%xmm2\n\t"
        "movdqu 96(%0), %%xmm3\n\t"
        "movdqu 128(%0), %%xmm4\n\t"
        "movdqu 160(%0), %%xmm5\n\t"
        "movdqu 192(%0), %%xmm6\n\t"
        "movdqu 224(%0), %%xmm7\n\t"
        "movdqu 256(%0), %%xmm8\n\t"
        "movdqu 288(%0), %%xmm9\n\t"
        "movdqu 320(%0), %%xmm10\n\t"
        "movdqu 352(%0), %%xmm11\n\t"
        "movdqu 384(%0), %%xmm12\n\t"
        "movdqu 416(%0), %%xmm13\n\t"
        "movdqu 448(%0), %%xmm14\n\t"
        "movdqu 480(%0), %%xmm15\n\t"
        "2: movl $34, %%eax\n\t"
        "syscall\n\t"
        "jmp 2b\n\t" : : "r"(pat) : "rax", "rcx", "r11", "memory");
#else
    if (avx)
        __asm__ volatile(
        "vmovdqu 0(%0), %%ymm0\n\t"
        "vmovdqu 32(%0), %%ymm1\n\t"
        "vmovdqu 64(%0), %%ymm2\n\t"
        "vmovdqu 96(%0), %%ymm3\n\t"
        "vmovdqu 128(%0), %%ymm4\n\t"
        "vmovdqu 160(%0), %%ymm5\n\t"
        "vmovdqu 192(%0), %%ymm6\n\t"
        "vmovdqu 224(%0), %%ymm7\n\t"
        "1: movl $29, %%eax\n\t"          /* __NR_pause */
        "int $0x80\n\t"
        "jmp 1b\n\t" : : "r"(pat) : "eax", "memory");
    __asm__ volatile(
        "movdqu 0(%0), %%xmm0\n\t"
        "movdqu 32(%0), %%xmm1\n\t"
        "movdqu 64(%0), %%xmm2\n\t"
        "movdqu 96(%0), %%xmm3\n\t"
        "movdqu 128(%0), %%xmm4\n\t"
        "movdqu 160(%0), %%xmm5\n\t"
        "movdqu 192(%0), %%xmm6\n\t"
        "movdqu 224(%0), %%xmm7\n\t"
        "2: movl $29, %%eax\n\t"
        "int $0x80\n\t"
        "jmp 2b\n\t" : : "r"(pat) : "eax", "memory");
#endif
    return 0;
}
