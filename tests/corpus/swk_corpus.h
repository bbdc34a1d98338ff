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

#ifdef __cplusplus
extern "C" {
#endif
extern volatile int swk_sink;
#ifdef __cplusplus
}
#endif

#endif
