/* Matrix products through CBLAS (OpenBLAS); in the default build on x86-64 (QKV_GEMM_LIBXSMM:
 * libxsmm installed; `make GEMM=openblas` is OpenBLAS alone), small float products through
 * libxsmm's JIT kernels. */
#include "tensor/kernel_prelude.h"
#include "tensor/check.h"
#include <cblas.h>
#include <limits.h>
#include <stdatomic.h>
#include "tensor/clock.h"

#if QKV_GEMM_LIBXSMM && !QKV_KERNEL_F64
#include <immintrin.h>
#include <libxsmm.h>
#include <libxsmm_generator.h>
#include <pthread.h>

/* The libxsmm build (docs/performance.md, "Small products"): a float product of at most
 * XSMM_MAX_MNK multiply-adds, with beta 0 or 1, is one call of a libxsmm JIT kernel for its
 * exact shape (strides included); larger ones, double, and whatever libxsmm declines (its
 * dispatch returns no kernel: unsupported shape, or no JIT on this machine) go to OpenBLAS.
 * Which library runs a product depends on its shape alone, and a product is one call on the
 * calling thread either way, so a build gives the same bits every run, for any thread count
 * (the kernels differ by CPU: libxsmm generates for the one it runs on). Measured with
 * bench/gemm_shapes.c: faster than OpenBLAS from the recall step's 24x24x16 head products up
 * to 256x128x128 (--sweep), slower at 256x1024x256 and above. */
#define XSMM_MAX_MNK (INT64_C(1) << 22)
/* libxsmm 1.17 has no kernel for qkv's op(B) = B^T (row-major C = A B^T is column-major
 * C^T = op(B^T) A^T: a transposed first operand): B^T is copied to the stack first, when it
 * has at most this many elements (64 KiB), and runs the NN kernel */
#define XSMM_MAX_BT 16384

/* libxsmm's AVX, AVX2 and AVX-512 kernels return with the upper halves of the vector registers in
 * use (no vzeroupper), and qkv outside its vector kernels is SSE code (baseline x86-64): the first
 * SSE instruction after such a kernel then waits on that state. Measured on a Zen 3 (KVM): about
 * 140 ns a call, a 24x16x24 head product 1.35x its own time, and a recall step makes 1848
 * products. So after each kernel the upper halves are cleared, when libxsmm generates AVX code
 * (xsmm_avx; tests/test_tensor.c checks the state after each form). */
static pthread_once_t xsmm_once = PTHREAD_ONCE_INIT;
static int xsmm_avx;
static void xsmm_init(void) {
    libxsmm_init();
    xsmm_avx = libxsmm_get_target_archid() >= LIBXSMM_X86_AVX;
}
__attribute__((target("avx"))) static void xsmm_zeroupper(void) { _mm256_zeroupper(); }

/* libxsmm's dispatch is a hash-table lookup that costs about as much as a 24x24x16 product
 * (perf: 1.2% of a recall step): a step makes the same few dozen shapes over and over, so each
 * thread keeps the kernels it was given, direct-mapped by shape (declined shapes too). With 256
 * entries the recall step's 21 shapes take 21 (with 64, collisions made 64 dispatches a step) */
#define XSMM_CACHE 256
typedef struct {
    libxsmm_blasint m, n, k, la, lb, lc;
    int flags, tb, used;
    libxsmm_smmfunction f;
    libxsmm_xtransfunction t; /* op(B) = B^T: libxsmm's JIT transpose of B for this shape, or NULL */
} xsmm_entry;
static _Thread_local xsmm_entry xsmm_cache[XSMM_CACHE];

static const xsmm_entry *xsmm_kernel(libxsmm_blasint m, libxsmm_blasint n, libxsmm_blasint k, libxsmm_blasint la,
                                     libxsmm_blasint lb, libxsmm_blasint lc, float beta, int flags, int tb) {
    uint64_t h = (uint64_t)m * 73856093u ^ (uint64_t)n * 19349663u ^ (uint64_t)k * 83492791u ^
                 (uint64_t)la * 2654435761u ^ (uint64_t)lb * 40503u ^ (uint64_t)lc * 97u ^ (uint64_t)flags * 31u ^
                 (uint64_t)tb * 7u;
    xsmm_entry *e = &xsmm_cache[(h ^ (h >> 17)) % XSMM_CACHE];
    if (e->used && e->m == m && e->n == n && e->k == k && e->la == la && e->lb == lb && e->lc == lc &&
        e->flags == flags && e->tb == tb)
        return e;
    float alpha = 1;
    int prefetch = LIBXSMM_GEMM_PREFETCH_NONE;
    libxsmm_smmfunction f = libxsmm_smmdispatch(m, n, k, &la, &lb, &lc, &alpha, &beta, &flags, &prefetch);
    libxsmm_xtransfunction t = NULL;
    if (f && tb) { /* B^T: B is (k x m) column-major, into a dense (m x k) */
        libxsmm_descriptor_blob blob;
        t = libxsmm_dispatch_trans(libxsmm_trans_descriptor_init(&blob, sizeof(float), (unsigned)k, (unsigned)m, (unsigned)m));
    }
    *e = (xsmm_entry){m, n, k, la, lb, lc, flags, tb, 1, f, t};
    return e;
}

/* C = B^T A for the cached entry e: B (N,K) with row stride ldb copied to bt (K,N), dense, then the
 * NN kernel. libxsmm_otrans would dispatch its JIT transpose on every call (a registry lookup, about
 * as long as the copy of a 24x16 head); the entry keeps it. In a function of its own, so that the
 * 64 KiB scratch is not in the frame of every product */
static __attribute__((noinline)) void xsmm_bt(const xsmm_entry *e, const float *B, int64_t ldb, const float *A, float *C) {
    _Alignas(64) float bt[XSMM_MAX_BT];
    if (e->t) {
        unsigned ldi = (unsigned)ldb, ldo = (unsigned)e->m;
        e->t(B, &ldi, bt, &ldo);
    } else
        libxsmm_otrans(bt, B, sizeof(float), e->k, e->m, (libxsmm_blasint)ldb, e->m);
    e->f(bt, A, C);
}

/* the product through libxsmm; 0 when it is not one for libxsmm (the caller uses OpenBLAS) */
static int xsmm_gemm(int ta, int tb, int64_t M, int64_t N, int64_t Kd, const float *A, int64_t lda, const float *B,
                     int64_t ldb, float beta, float *C, int64_t ldc) {
    if (Kd < 1 || M * N * Kd > XSMM_MAX_MNK || (beta != 0 && beta != 1) || (tb && N * Kd > XSMM_MAX_BT)) return 0;
    pthread_once(&xsmm_once, xsmm_init);
    /* row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: libxsmm's m, n, a, b are
     * qkv's N, M, B, A, and qkv's op(A) = A^T is libxsmm's transposed second operand */
    libxsmm_blasint m = (libxsmm_blasint)N, n = (libxsmm_blasint)M, k = (libxsmm_blasint)Kd;
    libxsmm_blasint la = (libxsmm_blasint)(tb ? N : ldb), lb = (libxsmm_blasint)lda, lc = (libxsmm_blasint)ldc;
    int flags = (ta ? LIBXSMM_GEMM_FLAG_TRANS_B : 0) | (beta == 0 ? LIBXSMM_GEMM_FLAG_BETA_0 : 0);
    const xsmm_entry *e = xsmm_kernel(m, n, k, la, lb, lc, beta, flags, tb);
    if (!e->f) return 0;
    if (tb)
        xsmm_bt(e, B, ldb, A, C);
    else
        e->f(B, A, C);
    if (xsmm_avx) xsmm_zeroupper();
    return 1;
}
#endif

/* the product itself: libxsmm, else (C)BLAS */
static void gemm_ld_call(int ta, int tb, int64_t M, int64_t N, int64_t Kd, const real *A, int64_t lda, const real *B,
                         int64_t ldb, real beta, real *C, int64_t ldc) {
#if QKV_GEMM_LIBXSMM && !QKV_KERNEL_F64
    if (xsmm_gemm(ta, tb, M, N, Kd, A, lda, B, ldb, beta, C, ldc)) return;
#endif
#if QKV_KERNEL_F64
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                (int)M, (int)N, (int)Kd, 1.0, A, (int)lda, B, (int)ldb, beta, C, (int)ldc);
#else
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                (int)M, (int)N, (int)Kd, 1.0f, A, (int)lda, B, (int)ldb, beta, C, (int)ldc);
#endif
}

/* one BLAS call with explicit row strides (lda, ldb, ldc), on the calling thread; not
 * counted in qkv__gemm_flops (callers that use it count their own) */
void K(gemm_ld)(int ta, int tb, int64_t M, int64_t N, int64_t Kd, const real *A, int64_t lda, const real *B,
                int64_t ldb, real beta, real *C, int64_t ldc) {
    QKV_ASSERT(M >= 0 && N >= 0 && Kd >= 0 && M <= INT_MAX && N <= INT_MAX && Kd <= INT_MAX, "gemm: dims in [0, INT_MAX]");
    QKV_ASSERT(M == 0 || N == 0 || Kd == 0 || (A && B && C), "gemm: operands");
    QKV_ASSERT(lda >= (ta ? M : Kd) && ldb >= (tb ? Kd : N) && ldc >= N, "gemm: a row stride below its row's length");
    if (M <= 0 || N <= 0) return;
    if (!atomic_load_explicit(&qkv__gemm_timing, memory_order_relaxed)) {
        gemm_ld_call(ta, tb, M, N, Kd, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    double t0 = qkv_clock_seconds();
    gemm_ld_call(ta, tb, M, N, Kd, A, lda, B, ldb, beta, C, ldc);
    uint64_t ns = (uint64_t)((qkv_clock_seconds() - t0) * 1e9);
    atomic_fetch_add_explicit(&qkv__gemm_ns, ns, memory_order_relaxed);
}

/* a contiguous product: B's and C's rows are whole */
static void blas(int ta, int tb, int64_t M, int64_t N, int64_t Kd, const real *A, int lda, const real *B,
                 real beta, real *C) {
    K(gemm_ld)(ta, tb, M, N, Kd, A, lda, B, tb ? Kd : N, beta, C, N);
}

/* With several qkv threads, products are split across them, each calling single-threaded
 * BLAS on its share (OpenBLAS is then set to one thread: its own threads would compete for
 * the same cores, and its threaded path allocates on every call). */
typedef struct {
    int ta, tb;
    int64_t M, N, K, sa, sb, sc;
    const real *A, *B;
    real beta, *C;
} gemm_job;

/* rows [m0, m1) of C = op(A) op(B) + beta C */
static void gemm_rows(void *p, int64_t m0, int64_t m1) {
    const gemm_job *j = p;
    int lda = (int)(j->ta ? j->M : j->K);
    const real *A = j->ta ? j->A + m0 : j->A + m0 * j->K; /* op(A)'s rows m0.. */
    blas(j->ta, j->tb, m1 - m0, j->N, j->K, A, lda, j->B, j->beta, j->C + m0 * j->N);
}

/* whole products [b0, b1) of a batch */
static void gemm_batches(void *p, int64_t b0, int64_t b1) {
    const gemm_job *j = p;
    int lda = (int)(j->ta ? j->M : j->K);
    for (int64_t i = b0; i < b1; i++)
        blas(j->ta, j->tb, j->M, j->N, j->K, j->A + i * j->sa, lda, j->B + i * j->sb, j->beta, j->C + i * j->sc);
}

/* a product of m*n*k below this runs on one thread (the split would cost more than it saves) */
#define GEMM_SPLIT_WORK (1 << 20)

/* C (M,N) = op(A) op(B) + beta C;  op(A): (M,K) [A stored (K,M) if ta], op(B): (K,N) [B stored (N,K) if tb] */
void K(gemm)(int ta, int tb, int64_t M, int64_t N, int64_t Kd, const real *A, const real *B, real beta, real *C) {
    QKV_ASSERT(M >= 0 && N >= 0 && Kd >= 0, "gemm: dims >= 0");
    qkv__gemm_flops += (uint64_t)(2 * M * N * Kd);
    gemm_job j = {ta, tb, M, N, Kd, 0, 0, 0, A, B, beta, C};
    int64_t grain = M * N * Kd >= GEMM_SPLIT_WORK ? 16 : M; /* rows per piece */
    qkv__parallel_for(M, grain, gemm_rows, &j);
}

/* the same over `batch` matrices; sa/sb/sc are element strides between them (0 = broadcast) */
void K(gemm_batched)(int64_t batch, int ta, int tb, int64_t M, int64_t N, int64_t Kd, const real *A, int64_t sa,
                     const real *B, int64_t sb, real beta, real *C, int64_t sc) {
    QKV_ASSERT(batch >= 1 && M >= 0 && N >= 0 && Kd >= 0, "gemm_batched: batch >= 1, dims >= 0");
    QKV_ASSERT(sa >= 0 && sb >= 0 && sc >= 0, "gemm_batched: strides >= 0");
    if (batch == 1) {
        K(gemm)(ta, tb, M, N, Kd, A, B, beta, C);
        return;
    }
    qkv__gemm_flops += (uint64_t)(2 * M * N * Kd * batch);
    if (sc == 0) { /* every product accumulates into one C (a shared weight's gradient): in order */
        for (int64_t i = 0; i < batch; i++) /* beta applies once; later products add on */
            blas(ta, tb, M, N, Kd, A + i * sa, (int)(ta ? M : Kd), B + i * sb, i ? 1 : beta, C + i * sc);
        return;
    }
    gemm_job j = {ta, tb, M, N, Kd, sa, sb, sc, A, B, beta, C};
    int64_t per = M * N * Kd, grain = per * batch >= GEMM_SPLIT_WORK ? 1 : batch;
    qkv__parallel_for(batch, grain, gemm_batches, &j);
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

/* y (rows,n): every row = b (n)  (a bias, before a product accumulates onto it) */
void K(fill_rows)(int64_t rows, int64_t n, const real *b, real *y) {
    rows_job j = {rows, n, b, y};
    qkv__parallel_for(rows, qkv_row_grain(n), fill_rows_range, &j);
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

/* db (n) += sum over rows of dy (rows,n) */
void K(sum_rows)(int64_t rows, int64_t n, const real *dy, real *db) {
    rows_job j = {rows, n, dy, db};
    qkv__parallel_for(n, rows >= QKV_GRAIN ? 8 : (QKV_GRAIN / (rows > 0 ? rows : 1) + 7) / 8 * 8, sum_rows_range, &j);
}
