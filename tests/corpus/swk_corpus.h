/* Shared helpers for the swk test corpus.
 *
 * Every function that is part of an expected call chain is SWK_FN:
 *   noipa  = noinline + noclone + no IPA (so gcc never makes "f.constprop.0"
 *            / "f.isra.0" clones, never devirtualises through it, never drops
 *            the call).
 * Every call in a chain is kept non-tail by using the callee's result after
 * the call and by SWK_KEEP() (an empty asm that the compiler must not move
 * across), so each caller really has a live frame with a return address. */
#ifndef SWK_CORPUS_H
#define SWK_CORPUS_H

#define SWK_FN __attribute__((noipa, noinline, used))
#define SWK_KEEP() __asm__ __volatile__("" ::: "memory")

/* CLOBBER("rbx", "r12", ...): make gcc save these callee-saved registers in the function
 * (frames of different shapes).  The names are x86-64's; in a -m32 build the same call
 * clobbers as many of i386's (%ebx, %esi, %edi, then %ebp), so the frames keep
 * different shapes there too; an AArch64 build clobbers x19-x21. */
#if defined(__i386__)
#define SWK_I386_SAVED_1 "ebx"
#define SWK_I386_SAVED_2 "esi", "edi"
#define SWK_I386_SAVED_3 "ebx", "esi", "edi"
#define SWK_I386_SAVED_4 "ebp", "ebx"
#define SWK_I386_SAVED_5 "ebp", "ebx", "esi", "edi"
#define SWK_NARGS_(a, b, c, d, e, n, ...) n
#define SWK_NARGS(...) SWK_NARGS_(__VA_ARGS__, 5, 4, 3, 2, 1)
#define SWK_CAT_(a, b) a##b
#define SWK_CAT(a, b) SWK_CAT_(a, b)
#define CLOBBER(...) __asm__ __volatile__("" ::: SWK_CAT(SWK_I386_SAVED_, SWK_NARGS(__VA_ARGS__)), "memory")
#elif defined(__aarch64__)
/* AArch64 (tests/test_aarch64.py): callee-saved x19-x21 in every place, so each function
 * still saves registers and moves sp without a frame record. */
#define CLOBBER(...) __asm__ __volatile__("" ::: "x19", "x20", "x21", "memory")
#elif defined(__powerpc64__)
/* Power-64 (tests/test_ppc64.py): callee-saved r14-r16. */
#define CLOBBER(...) __asm__ __volatile__("" ::: "r14", "r15", "r16", "memory")
#elif defined(__riscv)
#define CLOBBER(...) __asm__ __volatile__("" ::: "s1", "s2", "s3", "memory")
#elif defined(__s390x__)
#define CLOBBER(...) __asm__ __volatile__("" ::: "r6", "r7", "r8", "memory")
#else
#define CLOBBER(...) __asm__ __volatile__("" ::: __VA_ARGS__, "memory")
#endif

/* A breakpoint instruction of the machine's own (SIGTRAP), for stops without symbols. */
#if defined(__aarch64__)
#define SWK_TRAP() __asm__ __volatile__("brk #0")
#elif defined(__powerpc64__)
#define SWK_TRAP() __asm__ __volatile__("trap")
#elif defined(__riscv)
#define SWK_TRAP() __asm__ __volatile__("ebreak")
#elif defined(__s390x__)
#define SWK_TRAP() __asm__ __volatile__(".short 0x0001")
#else
#define SWK_TRAP() __asm__ __volatile__("int3")
#endif

#ifdef __cplusplus
extern "C" {
#endif
extern volatile int swk_sink;
#ifdef __cplusplus
}
#endif

#endif
