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

typedef struct { int64_t rows, n; const real *src; real *dst; } rows_job;

QKV_VECTOR_CLONES
static void fill_rows_range(void *p, int64_t r0, int64_t r1) {
    const rows_job *j = p;
    const int64_t n = j->n;
    const real *src = j->src;
    real *dst = j->dst;
    for (int64_t r = r0; r < r1; r++)
        for (int64_t k = 0; k < n; k++) dst[r * n + k] = src[k];
}

void K(fill_rows)(int64_t rows, int64_t n, const real *b, real *y) {
    rows_job j = {rows, n, b, y};
    qkv_parallel_for(rows, qkv_row_grain(n), fill_rows_range, &j);
}

/* columns [k0, k1) of db, each summed over rows in order */
QKV_VECTOR_CLONES
static void sum_rows_range(void *p, int64_t k0, int64_t k1) {
    const rows_job *j = p;
    const int64_t n = j->n, rows = j->rows;
    const real *src = j->src;
    real *dst = j->dst;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t k = k0; k < k1; k++) dst[k] += src[r * n + k];
}

void K(sum_rows)(int64_t rows, int64_t n, const real *dy, real *db) {
    rows_job j = {rows, n, dy, db};
    qkv_parallel_for(n, rows >= QKV_GRAIN ? 8 : (QKV_GRAIN / (rows > 0 ? rows : 1) + 7) / 8 * 8, sum_rows_range, &j);
}
