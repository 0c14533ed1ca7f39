/* Matrix products through CBLAS (OpenBLAS). */
#include "tensor/kernel_prelude.h"
#include <cblas.h>

void K(gemm)(int ta, int tb, int64_t M, int64_t N, int64_t Kd, const real *A, const real *B,
             real beta, real *C) {
    int lda = (int)(ta ? M : Kd), ldb = (int)(tb ? Kd : N), ldc = (int)N;
    qkv_gemm_flops += (uint64_t)(2 * M * N * Kd);
#if QKV_KERNEL_F64
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                (int)M, (int)N, (int)Kd, 1.0, A, lda, B, ldb, beta, C, ldc);
#else
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                (int)M, (int)N, (int)Kd, 1.0f, A, lda, B, ldb, beta, C, ldc);
#endif
}

void K(gemm_batched)(int64_t batch, int ta, int tb, int64_t M, int64_t N, int64_t Kd,
                     const real *A, int64_t sa, const real *B, int64_t sb, real beta, real *C,
                     int64_t sc) {
    for (int64_t i = 0; i < batch; i++)
        K(gemm)(ta, tb, M, N, Kd, A + i * sa, B + i * sb, beta, C + i * sc);
}

QKV_VECTOR_CLONES
void K(fill_rows)(int64_t rows, int64_t n, const real *b, real *y) {
    for (int64_t r = 0; r < rows; r++, y += n)
        for (int64_t j = 0; j < n; j++) y[j] = b[j];
}

QKV_VECTOR_CLONES
void K(sum_rows)(int64_t rows, int64_t n, const real *dy, real *db) {
    for (int64_t r = 0; r < rows; r++, dy += n)
        for (int64_t j = 0; j < n; j++) db[j] += dy[j];
}
