/* Internal: the bf16 product kernel on the CPU's AMX tiles (Intel Xeon from Sapphire Rapids on),
 * for tensor/bf16.c's tiles of C. Debian's libxsmm 1.17 has no AMX code (its best bf16 target is
 * "cpx", AVX512_BF16), and oneDNN 2.6, which has, allocated on the heap at every call when tried
 * (about 3,000 times per step of tests/test_allocs.c's bf16 run), which qkv's steady step must not. So the
 * kernel is qkv's own, a few instructions: TDPBF16PS multiplies a 16 x 32 tile of bf16 by a
 * 32 x 16 one (in VNNI pairs, the layout tensor/bf16.c already gives libxsmm) into a 16 x 16
 * float tile. Each element of C is summed over k in steps of 32 in order, so its bits depend on
 * the product's shape alone, whatever qkv's thread count. */
#ifndef QKV_BF16_AMX_H
#define QKV_BF16_AMX_H

#include "qkv_api.h"

#include <stdbool.h>
#include <stdint.h>

/* 1 when the CPU has AMX-BF16 (CPUID, and /proc/cpuinfo's flags when it has them) and Linux let
 * this process use the tiles (arch_prctl ARCH_REQ_XCOMP_PERM); found once, thread safe */
QKV_INTERNAL int qkv__amx_ready(void);

/* C (m,n) = A B + (beta0 ? 0 : C), on the calling thread, after qkv__amx_ready():
 * A: (m, kp) bf16, rows lda apart; B: (kp, n) bf16 in VNNI pairs, element (k, j) at
 * B[(k/2) * 2 ldb + 2 j + k % 2] (ldb: the pairs in a row of pairs); C: rows ldc apart; kp even.
 * The tiles stay configured on the thread afterwards (no TILERELEASE): configuring them again for
 * every product, and releasing them after, took 15% of a bf16 step at the small size (perf) */
QKV_INTERNAL void qkv__amx_gemm(int64_t m, int64_t n, int64_t kp, const uint16_t *A, int64_t lda, const uint16_t *B,
                                int64_t ldb, float *C, int64_t ldc, bool beta0);

#endif
