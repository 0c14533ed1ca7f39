/* bf16 products through libxsmm (tensor/bf16.h). Measured with bench/bf16_gemm.c on an AMD
 * EPYC (Zen 4, AVX512_BF16): libxsmm's bf16 kernel runs the layer products at about twice its
 * float kernel's rate, and with the conversion of both operands through libxsmm's JIT kernels
 * still 1.3x to 3x faster at the recall and text layer shapes; Debian's OpenBLAS 0.3.21 does
 * not export cblas_sbgemm (built without BUILD_BFLOAT16), so it is not a choice here.
 *
 * libxsmm is column-major: qkv's row-major C = op(A) op(B) is C^T = op(B)^T op(A)^T, so
 * libxsmm's first operand is qkv's B and its second op(A). libxsmm 1.17's bf16 kernels (its
 * "cpx" target) read their first operand in VNNI pairs, (K/2, N, 2): element (k, n) of B at
 * [k/2][n][k%2], and have no transposed operands. So a product is two passes, each split across
 * qkv's threads in blocks of fixed size, every step a libxsmm kernel:
 *   conversion, chunk by chunk of k (K_CHUNK), in blocks of columns of op(B) and rows of op(A):
 *     B^T, (N, kc) floats: B itself when qkv's op(B) = B^T, else B transposed (JIT transpose);
 *     B^T in bf16, (N, kcp) (JIT conversion, round-to-nearest-even; kcp = kc rounded up to
 *     even, the padding zero), then VNNI, the transpose of that seen as an N x kcp/2 matrix of
 *     pairs; op(A) in bf16, (M, kcp): A converted (A^T transposed first as floats);
 *   products, in tiles of C: the bf16 kernel, C (+)= op(A) op(B) in float, the chunks summed
 *     onto the tile in order.
 * The conversion on AVX512_BF16 is vcvtneps2bf16: round-to-nearest-even, a float below bf16's
 * smallest normal (2^-126) flushed to zero. */
#include "tensor/bf16.h"
#include "tensor/bf16_amx.h"
#include "tensor/check.h"
#include "tensor/clock.h"
#include "tensor/kernels.h"
#include "tensor/parallel.h"

#include <stdatomic.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* The inner dimension goes in chunks of at most K_CHUNK (even), each converted and summed onto
 * C in turn: the transposes then move blocks that stay in cache (2048-row weight gradients ran
 * at 0.7x float32 converted whole, bench/bf16_gemm.c) */
#define K_CHUNK 256
static int64_t even(int64_t k) { return k + (k & 1); }
static int64_t chunk_of(int64_t K) { return K < K_CHUNK ? K : K_CHUNK; }

/* the region sizes of one product's scratch, each a multiple of 64 bytes: B in VNNI pairs and
 * op(A) in bf16, both whole (every chunk of k, op(A)'s chunk at k0 (M, kcp) from M k0 on); one
 * chunk of B^T (bf16, and floats when B is transposed first); one chunk of op(A) as floats when
 * A is transposed first. The conversion of a block of rows of op(A) or of columns of op(B) uses
 * those rows of the one-chunk regions alone, their rows the same distance apart in every chunk
 * (a block may be at another chunk than its neighbour), so blocks convert on threads at once. */
static size_t round64(size_t b) { return (b + 63) / 64 * 64; }
typedef struct { size_t bv, a16, bt, bf, af; } layout;
static layout layout_of(int ta, int tb, int64_t M, int64_t N, int64_t K) {
    int64_t kc = chunk_of(K), kcp = even(kc);
    return (layout){round64((size_t)(N * even(K)) * 2), round64((size_t)(M * even(K)) * 2),
                    round64((size_t)(N * kcp) * 2), tb ? 0 : round64((size_t)(N * kc) * 4),
                    ta ? round64((size_t)(M * kc) * 4) : 0};
}

static size_t plain_scratch(int ta, int tb, int64_t M, int64_t N, int64_t K) {
    layout l = layout_of(ta, tb, M, N, K);
    return l.bv + l.a16 + l.bt + l.bf + l.af;
}

/* On AMX, a product whose inner dimension is its longest (a weight gradient, dW = dY^T X with
 * k = B T) goes in blocks of KSPLIT of k, each a product of its own into a partial C on one
 * thread (its conversion and tiles on the same thread, the operands in that core's cache), the
 * partials summed onto C in order after. Its M x N has few tiles (2 at d_model 128), so split by
 * tiles the two threads waited on each other (1.4 to 1.6 threads busy in its conversion and
 * tiles at the small size) and read each other's conversions. The blocks depend on the shape
 * alone, so the bits do not depend on the thread count; libxsmm's path keeps one sum over k (the
 * bits of the bf16 results made with it). */
#define KSPLIT 512
static bool k_split(int64_t M, int64_t N, int64_t K) { return K >= 2 * KSPLIT && K > M && K > N; }
static int64_t k_blocks(int64_t K) { return (K + KSPLIT - 1) / KSPLIT; }
/* a block's scratch: its product's, then its partial C (M, N) */
static size_t split_part(int ta, int tb, int64_t M, int64_t N) {
    return round64(plain_scratch(ta, tb, M, N, KSPLIT)) + round64((size_t)(M * N) * 4);
}
static size_t split_scratch(int ta, int tb, int64_t M, int64_t N, int64_t K) {
    return (size_t)k_blocks(K) * split_part(ta, tb, M, N);
}

size_t qkv__bf16_gemm_scratch(int ta, int tb, int64_t M, int64_t N, int64_t K) {
    size_t plain = plain_scratch(ta, tb, M, N, K); /* either kernel's, so qkv__bf16_use_amx may change it */
    size_t split = k_split(M, N, K) ? split_scratch(ta, tb, M, N, K) : 0;
    return plain > split ? plain : split;
}

size_t qkv__bf16_gemm_batched_scratch(int64_t batch, int ta, int tb, int64_t M, int64_t N, int64_t K, int64_t sc) {
    return (size_t)(sc == 0 || batch == 1 ? 1 : batch) * qkv__bf16_gemm_scratch(ta, tb, M, N, K);
}

int64_t qkv__sdpa_parts(const qkv_sdpa_shape *s) {
    int64_t pairs = s->B * s->H;
    return qkv_get_threads() < pairs ? qkv_get_threads() : pairs;
}

size_t qkv__sdpa_bf16_part(const qkv_sdpa_shape *s) {
    /* every head product's M, N, K is at most D = max(T, hd, vd): at most the scratch of
     * (D, D, D) with A^T and B stored (K, N) (the most), or, where k can be split (K >= 2 KSPLIT,
     * a head dimension longer than the rows), of its blocks with partials of D x D */
    int64_t D = s->T;
    if (s->hd > D) D = s->hd;
    if (s->vd > D) D = s->vd;
    size_t plain = plain_scratch(1, 0, D, D, D);
    size_t split = D >= 2 * KSPLIT ? split_scratch(1, 0, D, D, D) : 0;
    return plain > split ? plain : split;
}

int qkv__cpu_has_avx512_bf16(void) {
    char line[4096];
    int flags = 0, has = 0;
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && !flags && fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) || !strchr(line, ':')) continue;
        flags = 1;
        for (char *t = strtok(strchr(line, ':') + 1, " \t\n"); t && !has; t = strtok(NULL, " \t\n"))
            has = !strcmp(t, "avx512_bf16");
    }
    if (f) fclose(f);
    if (flags) return has;
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512bf16") != 0;
#else
    return 0;
#endif
}

int qkv_bf16_available(qkv_err *why) {
    if (!qkv__cpu_has_avx512_bf16()) {
        qkv_err_set(why, QKV_ERR_USAGE, "this CPU has no avx512_bf16 (AVX512_BF16 instructions)");
        return 0;
    }
#if !QKV_GEMM_LIBXSMM
    qkv_err_set(why, QKV_ERR_USAGE, "this build has no libxsmm (built with GEMM=openblas), which runs the bf16 products");
    return 0;
#else
    return 1;
#endif
}

#if QKV_GEMM_LIBXSMM
#include <immintrin.h>
#include <libxsmm.h>
#include <pthread.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int amx; /* the tiles through tensor/bf16_amx.h's kernel, else libxsmm's */
static void init(void) {
    libxsmm_init();
    amx = qkv__amx_ready();
}

static char kernel_name[64];
static pthread_once_t named = PTHREAD_ONCE_INIT;
static void name_kernel(void) {
    pthread_once(&once, init);
    if (amx) snprintf(kernel_name, sizeof kernel_name, "amx");
    else snprintf(kernel_name, sizeof kernel_name, "libxsmm %s", libxsmm_get_target_arch());
}

const char *qkv_bf16_kernel(void) {
    if (!qkv_bf16_available(NULL)) return "none";
    pthread_once(&named, name_kernel);
    return kernel_name;
}

int qkv__bf16_use_amx(int on) {
    pthread_once(&once, init);
    int was = amx;
    if (on >= 0) amx = on && qkv__amx_ready();
    return was;
}
__attribute__((target("avx"))) static void zeroupper(void) { _mm256_zeroupper(); }

/* libxsmm's JIT kernels, each thread's direct-mapped by kind and shape (libxsmm's own dispatch
 * is a registry lookup about as long as a head-sized product: k_matmul.c) */
enum { KIND_GEMM = 1, KIND_CVT, KIND_TRANS };
#define CACHE 256
typedef struct {
    int kind;
    int64_t a, b, c, d, e, f;
    void *fn;
} entry;
static _Thread_local entry cache[CACHE];

static entry *slot(int kind, int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f, int *hit) {
    uint64_t h = (uint64_t)kind * 31u ^ (uint64_t)a * 73856093u ^ (uint64_t)b * 19349663u ^ (uint64_t)c * 83492791u ^
                 (uint64_t)d * 2654435761u ^ (uint64_t)e * 40503u ^ (uint64_t)f * 97u;
    entry *s = &cache[(h ^ (h >> 17)) % CACHE];
    *hit = s->kind == kind && s->a == a && s->b == b && s->c == c && s->d == d && s->e == e && s->f == f;
    if (!*hit) *s = (entry){kind, a, b, c, d, e, f, NULL};
    return s;
}

/* out = in^T: in (rows, cols) with its rows ldi elements apart, out (cols, rows) with its rows
 * ldo apart, elements of `size` bytes */
static void transpose(int size, int64_t rows, int64_t cols, const void *in, int64_t ldi, void *out, int64_t ldo) {
    int hit;
    entry *e = slot(KIND_TRANS, size, rows, cols, ldo, 0, 0, &hit);
    if (!hit) {
        libxsmm_descriptor_blob blob; /* libxsmm's m x n column-major input: m = cols, n = rows */
        e->fn = (void *)libxsmm_dispatch_trans(
            libxsmm_trans_descriptor_init(&blob, (unsigned)size, (unsigned)cols, (unsigned)rows, (unsigned)ldo));
    }
    if (e->fn) {
        unsigned li = (unsigned)ldi, lo = (unsigned)ldo;
        ((libxsmm_xtransfunction)e->fn)(in, &li, out, &lo);
    } else /* a shape libxsmm's JIT declines: its generic transpose */
        libxsmm_otrans(out, in, (unsigned)size, (libxsmm_blasint)cols, (libxsmm_blasint)rows, (libxsmm_blasint)ldi,
                       (libxsmm_blasint)ldo);
}

/* rows of K floats (ldi apart) into rows of bf16 (ldo apart), round-to-nearest-even; the column
 * after them zero when ldo > K (the padding to an even K) */
static void convert(int64_t rows, int64_t K, const float *in, int64_t ldi, libxsmm_bfloat16 *out, int64_t ldo) {
    int hit;
    entry *e = slot(KIND_CVT, rows, K, ldi, ldo, 0, 0, &hit);
    if (!hit) {
        libxsmm_blasint li = (libxsmm_blasint)ldi, lo = (libxsmm_blasint)ldo;
        e->fn = (void *)libxsmm_dispatch_meltw_cvtfp32bf16((libxsmm_blasint)K, (libxsmm_blasint)rows, &li, &lo,
                                                           LIBXSMM_DATATYPE_F32, LIBXSMM_DATATYPE_BF16);
    }
    if (e->fn)
        ((libxsmm_meltwfunction_cvtfp32bf16)e->fn)(&(libxsmm_meltw_cvtfp32bf16_param){in, out});
    else
        for (int64_t r = 0; r < rows; r++) libxsmm_rne_convert_fp32_bf16(in + r * ldi, out + r * ldo, (unsigned)K);
    if (ldo > K)
        for (int64_t r = 0; r < rows; r++) out[r * ldo + K] = 0;
}

/* the bf16 kernel for C (M,N) (+)= A16 (M,Kp) B (VNNI, its pairs of k ldb pairs apart), C's rows
 * ldc apart */
static libxsmm_bsmmfunction kernel(int64_t M, int64_t N, int64_t Kp, int64_t ldb, int64_t ldc, int beta0) {
    int hit;
    entry *e = slot(KIND_GEMM, M, N, Kp, ldb, ldc, beta0, &hit);
    if (!hit) {
        libxsmm_blasint la = (libxsmm_blasint)ldb, lb = (libxsmm_blasint)Kp, lc = (libxsmm_blasint)ldc;
        float alpha = 1, beta = beta0 ? 0.0f : 1.0f;
        int flags = LIBXSMM_GEMM_FLAG_VNNI_A | (beta0 ? LIBXSMM_GEMM_FLAG_BETA_0 : 0);
        int prefetch = LIBXSMM_GEMM_PREFETCH_NONE;
        e->fn = (void *)libxsmm_bsmmdispatch((libxsmm_blasint)N, (libxsmm_blasint)M, (libxsmm_blasint)Kp, &la, &lb, &lc,
                                             &alpha, &beta, &flags, &prefetch);
    }
    QKV_ASSERT(e->fn, "bf16 gemm: libxsmm has a bf16 kernel for every even K (its cpx target)");
    return (libxsmm_bsmmfunction)e->fn;
}

typedef struct {
    int ta, tb;
    int64_t M, N, K, lda, ldb, ldc;
    const float *A, *B;
    float beta, *C;
    char *scratch;
    layout l;
} job;

static libxsmm_bfloat16 *bv_of(const job *j) { return (libxsmm_bfloat16 *)j->scratch; }
static libxsmm_bfloat16 *a16_of(const job *j) { return (libxsmm_bfloat16 *)(j->scratch + j->l.bv); }
static int64_t kc_at(const job *j, int64_t k0) { return j->K - k0 < K_CHUNK ? j->K - k0 : K_CHUNK; }

/* Products go in blocks of fixed size whatever the threads: libxsmm's kernels for different
 * shapes may sum an element in different orders (a 16-row kernel and a 301-row one differ in
 * the last bit of some elements), so the blocks are the same for every split and a product's
 * bits depend on its shape alone. C in tiles of ROW_BLOCK rows by COL_BLOCK columns (the last
 * of each smaller), so that a product of a few rows (a weight gradient, M = 128) still has
 * tiles for every thread; the conversion in blocks of PREP_BLOCK rows of op(A) or columns of
 * op(B), elementwise, so its split changes no bit. */
#define ROW_BLOCK 128
#define COL_BLOCK 64
#define PREP_BLOCK 128
static int64_t blocks_of(int64_t n, int64_t b) { return (n + b - 1) / b; }
static int64_t end_of(int64_t i, int64_t b, int64_t n) { return (i + 1) * b < n ? (i + 1) * b : n; }

/* columns [n0, n1) of op(B) into VNNI bf16, chunk by chunk of k: B^T's rows n0.. (N, kc) floats
 * (B transposed first when stored (K, N)), into bf16, then the transpose of those rows seen as
 * pairs into columns n0.. of the chunk's pairs */
/* With AMX (whose kernel reads the same VNNI pairs), B stored (K, N) goes into pairs in one pass
 * rather than libxsmm's three (transpose, convert, transpose the pairs): rows k and k+1 of
 * columns [n0, n1), 16 at a time, each converted by VCVTNEPS2BF16 (the instruction libxsmm's
 * conversion runs on these CPUs, so the same bits) and interleaved into 16 pairs; the pair of
 * an odd K's last row with zero. Pair row p of every chunk of k is at bv + 2p N (prepare_b's). */
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) static void pairs_of_rows(const job *j, int64_t n0,
                                                                                         int64_t n1) {
    uint16_t *bv = (uint16_t *)bv_of(j);
    for (int64_t k = 0; k < j->K; k += 2) {
        const float *r0 = j->B + k * j->ldb, *r1 = k + 1 < j->K ? r0 + j->ldb : NULL;
        for (int64_t n = n0; n < n1; n += 16) {
            int rem = n1 - n < 16 ? (int)(n1 - n) : 16;
            __mmask16 m = (__mmask16)((1u << rem) - 1);
            __m256i a = (__m256i)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(m, r0 + n));
            __m256i b = r1 ? (__m256i)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(m, r1 + n)) : _mm256_setzero_si256();
            __m256i lo = _mm256_unpacklo_epi16(a, b), hi = _mm256_unpackhi_epi16(a, b); /* by 128-bit lanes */
            __m512i both = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_permute2x128_si256(lo, hi, 0x20)),
                                              _mm256_permute2x128_si256(lo, hi, 0x31), 1);
            _mm512_mask_storeu_epi16(bv + k * j->N + 2 * n, (__mmask32)((1ull << (2 * rem)) - 1), both);
        }
    }
}

static void prepare_b(const job *j, int64_t n0, int64_t n1) {
    if (amx && !j->tb) {
        pairs_of_rows(j, n0, n1);
        return;
    }
    libxsmm_bfloat16 *bt = (libxsmm_bfloat16 *)(j->scratch + j->l.bv + j->l.a16);
    float *bf = (float *)(j->scratch + j->l.bv + j->l.a16 + j->l.bt);
    int64_t ld = chunk_of(j->K), ld16 = even(ld); /* the regions' row strides, the same for every chunk */
    for (int64_t k0 = 0; k0 < j->K; k0 += K_CHUNK) {
        int64_t kc = kc_at(j, k0), kcp = even(kc);
        const float *src = j->B + n0 * j->ldb + k0;
        int64_t lds = j->ldb;
        if (!j->tb) { /* B stored (K, N): rows k0.., columns n0.. transposed */
            transpose(4, kc, n1 - n0, j->B + k0 * j->ldb + n0, j->ldb, bf + n0 * ld, ld);
            src = bf + n0 * ld, lds = ld;
        }
        convert(n1 - n0, kc, src, lds, bt + n0 * ld16, ld16);
        transpose(4, n1 - n0, kcp / 2, bt + n0 * ld16, ld16 / 2, bv_of(j) + k0 * j->N + 2 * n0, j->N);
    }
}

/* rows [m0, m1) of op(A) into bf16, chunk by chunk of k (A^T transposed first) */
static void prepare_a(const job *j, int64_t m0, int64_t m1) {
    float *af = (float *)(j->scratch + j->l.bv + j->l.a16 + j->l.bt + j->l.bf);
    int64_t ld = chunk_of(j->K);
    for (int64_t k0 = 0; k0 < j->K; k0 += K_CHUNK) {
        int64_t kc = kc_at(j, k0), kcp = even(kc);
        const float *src = j->A + m0 * j->lda + k0;
        int64_t lds = j->lda;
        if (j->ta) { /* A stored (K, M): rows k0.., columns m0.. transposed */
            transpose(4, kc, m1 - m0, j->A + k0 * j->lda + m0, j->lda, af + m0 * ld, ld);
            src = af + m0 * ld, lds = ld;
        }
        convert(m1 - m0, kc, src, lds, a16_of(j) + j->M * k0 + m0 * kcp, kcp);
    }
}

/* conversion blocks [b0, b1): op(A)'s row blocks first, then op(B)'s column blocks */
static void prepare(void *p, int64_t b0, int64_t b1) {
    const job *j = p;
    int64_t na = blocks_of(j->M, PREP_BLOCK);
    for (int64_t b = b0; b < b1; b++)
        if (b < na) prepare_a(j, b * PREP_BLOCK, end_of(b, PREP_BLOCK, j->M));
        else prepare_b(j, (b - na) * PREP_BLOCK, end_of(b - na, PREP_BLOCK, j->N));
    zeroupper();
}

/* tiles [t0, t1) of C, row-block-major: for each chunk of k, the kernel onto the tile */
static void tiles(void *p, int64_t t0, int64_t t1) {
    const job *j = p;
    int64_t nc = blocks_of(j->N, COL_BLOCK);
    for (int64_t t = t0; t < t1; t++) {
        int64_t m0 = t / nc * ROW_BLOCK, m1 = end_of(t / nc, ROW_BLOCK, j->M);
        int64_t n0 = t % nc * COL_BLOCK, n1 = end_of(t % nc, COL_BLOCK, j->N);
        for (int64_t k0 = 0; k0 < j->K; k0 += K_CHUNK) {
            int64_t kcp = even(kc_at(j, k0));
            const libxsmm_bfloat16 *b = bv_of(j) + k0 * j->N + 2 * n0, *a = a16_of(j) + j->M * k0 + m0 * kcp;
            float *c = j->C + m0 * j->ldc + n0;
            bool beta0 = k0 == 0 && j->beta == 0;
            if (amx) qkv__amx_gemm(m1 - m0, n1 - n0, kcp, a, kcp, b, j->N, c, j->ldc, beta0);
            else kernel(m1 - m0, n1 - n0, kcp, j->N, j->ldc, beta0)(b, a, c);
        }
    }
    zeroupper(); /* libxsmm's kernels leave the upper vector halves in use (k_matmul.c) */
}
static int64_t prepare_blocks(const job *j) { return blocks_of(j->M, PREP_BLOCK) + blocks_of(j->N, PREP_BLOCK); }
static int64_t tiles_of(const job *j) { return blocks_of(j->M, ROW_BLOCK) * blocks_of(j->N, COL_BLOCK); }

static job make_job(int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                    int64_t ldb, float beta, float *C, int64_t ldc, void *scratch) {
    QKV_ASSERT(M >= 0 && N >= 0 && K >= 0 && (beta == 0 || beta == 1), "bf16 gemm: dims >= 0, beta 0 or 1");
    QKV_ASSERT(M == 0 || N == 0 || ((uintptr_t)scratch % 64 == 0 && A && B && C), "bf16 gemm: operands, aligned scratch");
    pthread_once(&once, init);
    return (job){ta, tb, M, N, K, lda, ldb, ldc, A, B, beta, C, scratch, layout_of(ta, tb, M, N, K)};
}

static void split_blocks(void *p, int64_t b0, int64_t b1);
__attribute__((target("avx512f"))) static void add_partials(void *p, int64_t r0, int64_t r1);

static void gemm_ld(int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                    int64_t ldb, float beta, float *C, int64_t ldc, void *scratch) {
    if (M <= 0 || N <= 0) return;
    job j = make_job(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc, scratch);
    if (amx && k_split(M, N, K)) {
        split_blocks(&j, 0, k_blocks(K));
        add_partials(&j, 0, M);
        return;
    }
    if (K == 0) { /* an empty sum: C = beta C */
        for (int64_t i = 0; i < M && beta == 0; i++) memset(C + i * ldc, 0, (size_t)N * sizeof *C);
        return;
    }
    prepare(&j, 0, prepare_blocks(&j));
    tiles(&j, 0, tiles_of(&j));
}

/* block b's scratch for its product, and its partial C (rows N apart) after it */
static char *block_scratch(const job *j, int64_t b) {
    return j->scratch + (size_t)b * split_part(j->ta, j->tb, j->M, j->N);
}
static float *partial_of(const job *j, int64_t b) {
    return (float *)(block_scratch(j, b) + round64(plain_scratch(j->ta, j->tb, j->M, j->N, KSPLIT)));
}

/* blocks [b0, b1) of k of a split product, each into its partial C */
static void split_blocks(void *p, int64_t b0, int64_t b1) {
    const job *j = p;
    for (int64_t b = b0; b < b1; b++) {
        int64_t k0 = b * KSPLIT, kb = j->K - k0 < KSPLIT ? j->K - k0 : KSPLIT;
        gemm_ld(j->ta, j->tb, j->M, j->N, kb, j->ta ? j->A + k0 * j->lda : j->A + k0, j->lda,
                j->tb ? j->B + k0 : j->B + k0 * j->ldb, j->ldb, 0, partial_of(j, b), j->N, block_scratch(j, b));
    }
}

/* rows [r0, r1) of C = beta C + the partials, summed in order of k, 16 columns at a time in
 * registers (one pass over C: the partials are memory-bound, 3% of a medium step summed
 * element by element) */
__attribute__((target("avx512f"))) static void add_partials(void *p, int64_t r0, int64_t r1) {
    const job *j = p;
    int64_t nb = k_blocks(j->K);
    for (int64_t r = r0; r < r1; r++)
        for (int64_t n = 0; n < j->N; n += 16) {
            __mmask16 m = j->N - n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (j->N - n)) - 1);
            float *c = j->C + r * j->ldc + n;
            __m512 s = _mm512_maskz_loadu_ps(m, partial_of(j, 0) + r * j->N + n);
            if (j->beta != 0) s = _mm512_add_ps(_mm512_maskz_loadu_ps(m, c), s);
            for (int64_t b = 1; b < nb; b++) s = _mm512_add_ps(s, _mm512_maskz_loadu_ps(m, partial_of(j, b) + r * j->N + n));
            _mm512_mask_storeu_ps(c, m, s);
        }
}

/* with qkv__gemm_timing, the product's wall time into qkv__gemm_ns (as k_matmul.c's) */
void qkv__bf16_gemm_ld(int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                       int64_t ldb, float beta, float *C, int64_t ldc, void *scratch) {
    if (!atomic_load_explicit(&qkv__gemm_timing, memory_order_relaxed)) {
        gemm_ld(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc, scratch);
        return;
    }
    double t0 = qkv_clock_seconds();
    gemm_ld(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc, scratch);
    atomic_fetch_add_explicit(&qkv__gemm_ns, (uint64_t)((qkv_clock_seconds() - t0) * 1e9), memory_order_relaxed);
}

/* fn over [b0, b1), its wall time into qkv__gemm_ns when qkv__gemm_timing: each thread's part
 * timed on that thread, as k_matmul.c times each piece, so qkv bench's products_share counts a
 * product split over two threads as twice its wall time of threads' time (timed once around the
 * split, it counted half) */
static void timed_part(void (*fn)(void *, int64_t, int64_t), void *p, int64_t b0, int64_t b1) {
    if (!atomic_load_explicit(&qkv__gemm_timing, memory_order_relaxed)) {
        fn(p, b0, b1);
        return;
    }
    double t0 = qkv_clock_seconds();
    fn(p, b0, b1);
    atomic_fetch_add_explicit(&qkv__gemm_ns, (uint64_t)((qkv_clock_seconds() - t0) * 1e9), memory_order_relaxed);
}
static void prepare_timed(void *p, int64_t b0, int64_t b1) { timed_part(prepare, p, b0, b1); }
static void tiles_timed(void *p, int64_t b0, int64_t b1) { timed_part(tiles, p, b0, b1); }
static void split_timed(void *p, int64_t b0, int64_t b1) { timed_part(split_blocks, p, b0, b1); }
static void add_timed(void *p, int64_t r0, int64_t r1) { timed_part(add_partials, p, r0, r1); }

/* a product of m*n*k below this runs on one thread (as k_matmul.c) */
#define SPLIT_WORK (1 << 20)

void qkv__bf16_gemm(int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, const float *B, float beta,
                    float *C, void *scratch) {
    qkv__gemm_flops += (uint64_t)(2 * M * N * K);
    if (M <= 0 || N <= 0) return;
    if (K == 0) {
        gemm_ld(ta, tb, M, N, K, A, ta ? M : K, B, tb ? K : N, beta, C, N, scratch);
        return;
    }
    job j = make_job(ta, tb, M, N, K, A, ta ? M : K, B, tb ? K : N, beta, C, N, scratch);
    if (amx && k_split(M, N, K)) {
        int64_t nb = k_blocks(K); /* on threads where there is work enough (bits: the same) */
        qkv__parallel_for(nb, M * N * K >= SPLIT_WORK ? 1 : nb, split_timed, &j);
        qkv__parallel_for(M, M * N >= 65536 ? 16 : M, add_timed, &j);
        return;
    }
    int64_t np = prepare_blocks(&j), nt = tiles_of(&j);
    bool split = M * N * K >= SPLIT_WORK;
    qkv__parallel_for(np, split ? 1 : np, prepare_timed, &j);
    qkv__parallel_for(nt, split ? 1 : nt, tiles_timed, &j);
}

typedef struct {
    int ta, tb;
    int64_t M, N, K, sa, sb, sc;
    const float *A, *B;
    float beta, *C;
    char *scratch;
    size_t per;
} batch_job;

static void batches(void *p, int64_t b0, int64_t b1) {
    const batch_job *j = p;
    for (int64_t i = b0; i < b1; i++)
        qkv__bf16_gemm_ld(j->ta, j->tb, j->M, j->N, j->K, j->A + i * j->sa, j->ta ? j->M : j->K, j->B + i * j->sb,
                          j->tb ? j->K : j->N, j->beta, j->C + i * j->sc, j->N, j->scratch + (size_t)i * j->per);
}

void qkv__bf16_gemm_batched(int64_t batch, int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t sa,
                            const float *B, int64_t sb, float beta, float *C, int64_t sc, void *scratch) {
    QKV_ASSERT(batch >= 1 && sa >= 0 && sb >= 0 && sc >= 0, "bf16 gemm_batched: batch >= 1, strides >= 0");
    if (batch == 1) {
        qkv__bf16_gemm(ta, tb, M, N, K, A, B, beta, C, scratch);
        return;
    }
    qkv__gemm_flops += (uint64_t)(2 * M * N * K * batch);
    if (sc == 0) { /* every product into one C: in order, beta once */
        for (int64_t i = 0; i < batch; i++)
            qkv__bf16_gemm_ld(ta, tb, M, N, K, A + i * sa, ta ? M : K, B + i * sb, tb ? K : N, i ? 1 : beta, C, N,
                              scratch);
        return;
    }
    batch_job j = {ta, tb, M, N, K, sa, sb, sc, A, B, beta, C, scratch, qkv__bf16_gemm_scratch(ta, tb, M, N, K)};
    qkv__parallel_for(batch, M * N * K * batch >= SPLIT_WORK ? 1 : batch, batches, &j);
}

#else /* an OpenBLAS-only build: no bf16 kernels */

const char *qkv_bf16_kernel(void) { return "none"; }
int qkv__bf16_use_amx(int on) {
    (void)on;
    return 0;
}


void qkv__bf16_gemm_ld(int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                       int64_t ldb, float beta, float *C, int64_t ldc, void *scratch) {
    (void)ta, (void)tb, (void)M, (void)N, (void)K, (void)A, (void)lda, (void)B, (void)ldb, (void)beta, (void)C;
    (void)ldc, (void)scratch;
    QKV_ASSERT(0, "bf16 gemm: refused by qkv_bf16_available in this build");
}

void qkv__bf16_gemm(int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, const float *B, float beta,
                    float *C, void *scratch) {
    qkv__bf16_gemm_ld(ta, tb, M, N, K, A, 0, B, 0, beta, C, 0, scratch);
}

void qkv__bf16_gemm_batched(int64_t batch, int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t sa,
                            const float *B, int64_t sb, float beta, float *C, int64_t sc, void *scratch) {
    (void)batch, (void)sa, (void)sb, (void)sc;
    qkv__bf16_gemm_ld(ta, tb, M, N, K, A, 0, B, 0, beta, C, 0, scratch);
}
#endif
