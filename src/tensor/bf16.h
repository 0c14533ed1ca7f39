/* bf16 matrix products with float32 operands and results (docs/performance.md, "bf16
 * products"): each operand is rounded to bf16 (round-to-nearest-even) at the product, the
 * product accumulates in float32. Through libxsmm's bf16 kernels (measured against float32 and
 * OpenBLAS's sbgemm with bench/bf16_gemm.c), on CPUs with the AVX512_BF16 instructions.
 *
 * Products take their conversion buffers from the caller (the per-step arena): `scratch` of at
 * least the bytes the *_scratch function names, 64-byte aligned. Each output element is one
 * libxsmm kernel's float sum over k in a fixed order, so the bits depend on the shape and the
 * CPU, never on the thread count. */
#ifndef QKV_BF16_H
#define QKV_BF16_H

#include "qkv_api.h"
#include "tensor/buildinfo.h" /* qkv_bf16_available */

#include <stddef.h>
#include <stdint.h>

/* the CPU's avx512_bf16: the kernel's /proc/cpuinfo flags when it has a flags line (so a CPU the
 * kernel does not enable it on counts as without), else the cpuid bit */
QKV_INTERNAL int qkv__cpu_has_avx512_bf16(void);

/* tests: on = 1 runs the tiles on AMX (tensor/bf16_amx.h) where qkv__amx_ready() says so, 0 on
 * libxsmm's kernels, -1 leaves it; returns the kernel in use before (1 AMX). The default is
 * AMX where it is ready: set it before any thread multiplies, never while one does */
QKV_INTERNAL int qkv__bf16_use_amx(int on);
/* bytes of scratch for one product C (M,N) = op(A) (M,K) op(B) (K,N) */
QKV_INTERNAL size_t qkv__bf16_gemm_scratch(int ta, int tb, int64_t M, int64_t N, int64_t K);
/* C = op(A) op(B) + beta C (beta 0 or 1) in bf16 on the calling thread; rows of A, B, C lda,
 * ldb, ldc floats apart, as qkv__k_gemm_ld_f32 */
QKV_INTERNAL void qkv__bf16_gemm_ld(int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                                    const float *B, int64_t ldb, float beta, float *C, int64_t ldc, void *scratch);
/* the same for contiguous operands, the conversion and tiles of C split across qkv's threads */
QKV_INTERNAL void qkv__bf16_gemm(int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, const float *B,
                                 float beta, float *C, void *scratch);
/* bytes of scratch for qkv__bf16_gemm_batched */
QKV_INTERNAL size_t qkv__bf16_gemm_batched_scratch(int64_t batch, int ta, int tb, int64_t M, int64_t N, int64_t K,
                                                   int64_t sc);
/* batch products C_i = op(A_i) op(B_i) + beta C_i, operands sa, sb, sc floats apart (sc 0: all
 * into one C, in order, as qkv__k_gemm_batched_f32) */
QKV_INTERNAL void qkv__bf16_gemm_batched(int64_t batch, int ta, int tb, int64_t M, int64_t N, int64_t K,
                                         const float *A, int64_t sa, const float *B, int64_t sb, float beta, float *C,
                                         int64_t sc, void *scratch);

#endif
