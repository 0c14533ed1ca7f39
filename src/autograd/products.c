/* The ops' matrix products: float32 (or double) through the gemm kernels, or bf16 with float32
 * sums when the context asks for it (tensor/bf16.h), the conversion buffers from the arena. */
#include "autograd/tape.h"
#include "tensor/bf16.h"

int qkv__gemm(qkv_ctx *ctx, qkv_dtype dt, int ta, int tb, int64_t M, int64_t N, int64_t K, const void *A,
              const void *B, int beta, void *C) {
    if (ctx->bf16 && dt == QKV_F32) { /* the conversion buffers are the product's alone: given back after */
        qkv_arena_mark m = qkv__arena_mark(&ctx->arena);
        void *scratch = qkv_ctx_alloc(ctx, qkv__bf16_gemm_scratch(ta, tb, M, N, K));
        if (!scratch) return -1;
        if (!ctx->counting) qkv__bf16_gemm(ta, tb, M, N, K, A, B, (float)beta, C, scratch);
        qkv__arena_release(&ctx->arena, m);
        return 0;
    }
    if (ctx->counting) return 0;
    if (dt == QKV_F64) qkv__k_gemm_f64(ta, tb, M, N, K, A, B, beta, C);
    else qkv__k_gemm_f32(ta, tb, M, N, K, A, B, (float)beta, C);
    return 0;
}

int qkv__gemm_batched(qkv_ctx *ctx, qkv_dtype dt, int64_t batch, int ta, int tb, int64_t M, int64_t N, int64_t K,
                      const void *A, int64_t sa, const void *B, int64_t sb, int beta, void *C, int64_t sc) {
    if (ctx->bf16 && dt == QKV_F32) {
        qkv_arena_mark m = qkv__arena_mark(&ctx->arena);
        void *scratch = qkv_ctx_alloc(ctx, qkv__bf16_gemm_batched_scratch(batch, ta, tb, M, N, K, sc));
        if (!scratch) return -1;
        if (!ctx->counting) qkv__bf16_gemm_batched(batch, ta, tb, M, N, K, A, sa, B, sb, (float)beta, C, sc, scratch);
        qkv__arena_release(&ctx->arena, m);
        return 0;
    }
    if (ctx->counting) return 0;
    if (dt == QKV_F64) qkv__k_gemm_batched_f64(batch, ta, tb, M, N, K, A, sa, B, sb, beta, C, sc);
    else qkv__k_gemm_batched_f32(batch, ta, tb, M, N, K, A, sa, B, sb, (float)beta, C, sc);
    return 0;
}
