/* Single-threaded bf16 matrix products against float32 ones, at the layer shapes of the recall
 * and text models, per library: the measurement that chose the bf16 path of
 * src/tensor/k_matmul.c (docs/performance.md, "bf16 products").
 *
 *   build/bench/bf16_gemm [--rounds N] [--ms X]
 *
 * Products are qkv's: row-major C = op(A) op(B) + beta C, alpha = 1, in the three forms of a
 * linear layer (forward NT: Y = X W^T, backward NN: dX = dY W, TN: dW = dY^T X) and the
 * per-head attention products. Backends:
 *   sgemm      OpenBLAS cblas_sgemm, float32
 *   xsmm-f32   libxsmm's float JIT kernel (libxsmm_smmdispatch; B^T copied first, as qkv does)
 *   sbgemm     OpenBLAS cblas_sbgemm, looked up at run time (Debian's build may not export it)
 *   xsmm-bf16  libxsmm's bf16 JIT kernel (libxsmm_bsmmdispatch, float accumulation) on operands
 *              already in bf16 (its first operand in libxsmm's VNNI pairs): the product alone
 *   +cvt       the same with both operands converted from float32 in the call (libxsmm's JIT
 *              conversion, round-to-nearest-even, and transposes into the layout), what a
 *              training step pays when operands arrive as float32
 *   qkv-bf16   qkv's own bf16 product (src/tensor/bf16.c, from the build's libqkv.a): the same
 *              libraries, the inner dimension in chunks of 256 (what a training step runs), its
 *              tiles on the CPU's AMX tiles where it has them (src/tensor/bf16_amx.c)
 *   qkv-bf16-xsmm  the same with libxsmm's bf16 kernel for the tiles (only where AMX runs
 *              qkv-bf16: elsewhere the two are one)
 * Each (shape, backend) is a hot loop of the same call for about X ms (default 2), N rounds
 * (default 7) with the backends interleaved; the median is kept. Results are checked first
 * against a double loop: float32 within 2 (K+1) eps sum|a b|, bf16 within (2^-7 + 2^-16 +
 * 2 (K+1) eps) sum|a b| (bf16 has 8 significant bits: each operand rounded to it is off by at
 * most 2^-8 of itself, so a product by at most (1 + 2^-8)^2 - 1 = 2^-7 + 2^-16 of itself).
 */
#define _GNU_SOURCE
#include <cblas.h>
#include <dlfcn.h>
#include <float.h>
#include <libxsmm.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tensor/clock.h" /* qkv_clock_seconds */
#include "tensor/bf16.h" /* qkv__bf16_gemm_ld, qkv__bf16_gemm_scratch: libqkv.a's */

void openblas_set_num_threads(int);
char *openblas_get_corename(void);
char *openblas_get_config(void);

typedef struct {
    const char *what;
    int ta, tb, M, N, K;
} shape;

/* rows: 96 (a recall micro-batch, 4 x 24 tokens), 2048 (a text batch, 32 x 64 tokens); layers
 * 64 -> 64, 64 -> 256, 256 -> 64; attention heads of 16 over 24 (recall) and 64 (text) tokens */
static const shape SHAPES[] = {
    {"recall fwd 64->64", 0, 1, 96, 64, 64},    {"recall fwd 64->256", 0, 1, 96, 256, 64},
    {"recall fwd 256->64", 0, 1, 96, 64, 256},  {"recall bwd dX 64<-256", 0, 0, 96, 64, 256},
    {"recall bwd dX 256<-64", 0, 0, 96, 256, 64}, {"recall bwd dW 256x64", 1, 0, 256, 64, 96},
    {"recall bwd dW 64x256", 1, 0, 64, 256, 96}, {"recall attn S=QK^T", 0, 1, 24, 24, 16},
    {"recall attn Y=PV", 0, 0, 24, 16, 24},     {"text fwd 64->64", 0, 1, 2048, 64, 64},
    {"text fwd 64->256", 0, 1, 2048, 256, 64},  {"text fwd 256->64", 0, 1, 2048, 64, 256},
    {"text bwd dX 64<-256", 0, 0, 2048, 64, 256}, {"text bwd dX 256<-64", 0, 0, 2048, 256, 64},
    {"text bwd dW 256x64", 1, 0, 256, 64, 2048}, {"text bwd dW 64x256", 1, 0, 64, 256, 2048},
    {"text attn S=QK^T", 0, 1, 64, 64, 16},     {"text attn Y=PV", 0, 0, 64, 16, 64},
};
enum { NSHAPES = sizeof SHAPES / sizeof SHAPES[0] };

enum { B_SGEMM, B_XSMM_F32, B_SBGEMM, B_XSMM_BF16, B_XSMM_BF16_CVT, B_QKV, B_QKV_XSMM, NBACK };
static const char *BACK_NAME[NBACK] = {"sgemm", "xsmm-f32", "sbgemm", "xsmm-bf16", "xsmm-bf16+cvt", "qkv-bf16",
                                       "qkv-bf16-xsmm"};
static int amx; /* qkv's product runs its AMX kernel (tensor/bf16_amx.h) */

typedef void (*sbgemm_fn)(int, int, int, int, int, int, float, const uint16_t *, int, const uint16_t *, int, float,
                          float *, int);
static sbgemm_fn sbgemm;

/* the operands in bf16, as the bf16 kernel reads them: libxsmm is column-major, so qkv's
 * row-major C = op(A) op(B) is C^T = op(B)^T op(A)^T and libxsmm's first operand is qkv's B, in
 * VNNI pairs (K/2, N, 2); its second is op(A), (M, K) row-major (libxsmm 1.17 has no bf16 kernel
 * for a transposed operand). Every step is a libxsmm JIT kernel: the float transposes, the
 * conversion (round-to-nearest-even), and the VNNI layout, which is the transpose of B^T (N, K)
 * seen as an N x K/2 matrix of 4-byte pairs. */
typedef struct {
    libxsmm_meltwfunction_cvtfp32bf16 cvt_a, cvt_b;
    libxsmm_xtransfunction tr_a, tr_b, tr_pairs; /* A^T -> A, B -> B^T (floats), B^T -> VNNI (pairs) */
} converter;

static libxsmm_xtransfunction trans(unsigned size, unsigned rows, unsigned cols) {
    /* a (rows x cols) row-major matrix into its (cols x rows) transpose; libxsmm's m, n are column-major */
    libxsmm_descriptor_blob blob;
    return libxsmm_dispatch_trans(libxsmm_trans_descriptor_init(&blob, size, cols, rows, rows));
}

static void converter_init(converter *c, const shape *s) {
    libxsmm_blasint M = s->M, N = s->N, K = s->K;
    c->cvt_a = libxsmm_dispatch_meltw_cvtfp32bf16(K, M, &K, &K, LIBXSMM_DATATYPE_F32, LIBXSMM_DATATYPE_BF16);
    c->cvt_b = libxsmm_dispatch_meltw_cvtfp32bf16(K, N, &K, &K, LIBXSMM_DATATYPE_F32, LIBXSMM_DATATYPE_BF16);
    c->tr_a = s->ta ? trans(4, (unsigned)K, (unsigned)M) : NULL;
    c->tr_b = s->tb ? NULL : trans(4, (unsigned)K, (unsigned)N);
    c->tr_pairs = trans(4, (unsigned)N, (unsigned)K / 2);
    if (!c->cvt_a || !c->cvt_b || (s->ta && !c->tr_a) || (!s->tb && !c->tr_b) || !c->tr_pairs) {
        fprintf(stderr, "bf16_gemm: libxsmm declined a conversion kernel for %s\n", s->what);
        exit(1);
    }
}


typedef struct {
    const shape *s;
    float *A, *B, *C, *Bt;                    /* float operands as qkv holds them; Bt: B^T scratch */
    libxsmm_bfloat16 *a16, *b16, *bv;         /* bf16: A (M,K), B^T (N,K), B in VNNI pairs */
    libxsmm_smmfunction f32;
    libxsmm_bsmmfunction bf16;
    converter cv;
    float *fa, *fb; /* float scratch: A, B^T */
    void *qs;       /* qkv's scratch */
} problem;

static void *alloc(size_t bytes) {
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes ? bytes : 1)) abort();
    return p;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static float urand(void) { /* [-1, 1) */
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((rng >> 40) * (1.0 / (1ull << 24))) * 2.0f - 1.0f;
}

static void convert(problem *p) {
    const shape *s = p->s;
    const converter *c = &p->cv;
    unsigned M = (unsigned)s->M, N = (unsigned)s->N, K = (unsigned)s->K, K2 = K / 2;
    const float *a = s->ta ? p->fa : p->A, *bt = s->tb ? p->B : p->fb;
    if (s->ta) c->tr_a(p->A, &M, p->fa, &K);  /* A stored (K, M) */
    if (!s->tb) c->tr_b(p->B, &N, p->fb, &K); /* B stored (K, N) */
    c->cvt_a(&(libxsmm_meltw_cvtfp32bf16_param){a, p->a16});
    c->cvt_b(&(libxsmm_meltw_cvtfp32bf16_param){bt, p->b16});
    c->tr_pairs(p->b16, &K2, p->bv, &N);
}

static void problem_init(problem *p, const shape *s) {
    memset(p, 0, sizeof *p);
    p->s = s;
    size_t na = (size_t)s->M * s->K, nb = (size_t)s->K * s->N, nc = (size_t)s->M * s->N;
    p->A = alloc(na * 4), p->B = alloc(nb * 4), p->C = alloc(nc * 4), p->Bt = alloc(nb * 4);
    p->a16 = alloc(na * 2), p->b16 = alloc(nb * 2), p->bv = alloc(nb * 2);
    p->fa = alloc(na * 4), p->fb = alloc(nb * 4);
    p->qs = alloc(qkv__bf16_gemm_scratch(s->ta, s->tb, s->M, s->N, s->K));
    for (size_t i = 0; i < na; i++) p->A[i] = urand();
    for (size_t i = 0; i < nb; i++) p->B[i] = urand();
    float alpha = 1, beta = 0;
    int pf = LIBXSMM_GEMM_PREFETCH_NONE;
    libxsmm_blasint m = s->N, n = s->M, k = s->K, la = s->N, lb = s->ta ? s->M : s->K, lc = s->N;
    int flags = (s->ta ? LIBXSMM_GEMM_FLAG_TRANS_B : 0) | LIBXSMM_GEMM_FLAG_BETA_0;
    p->f32 = libxsmm_smmdispatch(m, n, k, &la, &lb, &lc, &alpha, &beta, &flags, &pf);
    flags = LIBXSMM_GEMM_FLAG_VNNI_A | LIBXSMM_GEMM_FLAG_BETA_0;
    lb = s->K;
    p->bf16 = libxsmm_bsmmdispatch(m, n, k, &la, &lb, &lc, &alpha, &beta, &flags, &pf);
    converter_init(&p->cv, s);
    convert(p);
}

static int available(int back, const problem *p) {
    return back == B_SGEMM || back == B_QKV || (back == B_QKV_XSMM && amx) || (back == B_XSMM_F32 && p->f32) ||
           (back == B_SBGEMM && sbgemm) || (back >= B_XSMM_BF16 && back <= B_XSMM_BF16_CVT && p->bf16);
}

static void call(int back, problem *p) {
    const shape *s = p->s;
    switch (back) {
    case B_SGEMM:
        cblas_sgemm(CblasRowMajor, s->ta ? CblasTrans : CblasNoTrans, s->tb ? CblasTrans : CblasNoTrans, s->M, s->N,
                    s->K, 1.0f, p->A, s->ta ? s->M : s->K, p->B, s->tb ? s->K : s->N, 0.0f, p->C, s->N);
        break;
    case B_XSMM_F32:
        if (s->tb) { /* B stored (N, K): B^T dense first */
            libxsmm_otrans(p->Bt, p->B, sizeof(float), s->K, s->N, s->K, s->N);
            p->f32(p->Bt, p->A, p->C);
        } else
            p->f32(p->B, p->A, p->C);
        break;
    case B_SBGEMM:
        sbgemm(CblasRowMajor, CblasNoTrans, CblasTrans, s->M, s->N, s->K, 1.0f, p->a16, s->K, p->b16, s->K, 0.0f, p->C,
               s->N);
        break;
    case B_XSMM_BF16_CVT:
        convert(p);
        /* fall through */
    case B_XSMM_BF16:
        p->bf16(p->bv, p->a16, p->C);
        break;
    case B_QKV:
    case B_QKV_XSMM:
        qkv__bf16_use_amx(back == B_QKV && amx);
        qkv__bf16_gemm_ld(s->ta, s->tb, s->M, s->N, s->K, p->A, s->ta ? s->M : s->K, p->B, s->tb ? s->K : s->N, 0,
                          p->C, s->N, p->qs);
        break;
    default:
        abort();
    }
}

/* C against a double loop over the float operands: the largest |error| / bound (<= 1 passes) */
static double check(int back, problem *p) {
    const shape *s = p->s;
    convert(p);
    call(back, p);
    double worst = 0, rel = back >= B_SBGEMM ? ldexp(1, -7) + ldexp(1, -16) : 0;
    for (int i = 0; i < s->M; i++)
        for (int j = 0; j < s->N; j++) {
            double acc = 0, mag = 0;
            for (int k = 0; k < s->K; k++) {
                double a = s->ta ? p->A[(size_t)k * s->M + i] : p->A[(size_t)i * s->K + k];
                double b = s->tb ? p->B[(size_t)j * s->K + k] : p->B[(size_t)k * s->N + j];
                acc += a * b, mag += fabs(a * b);
            }
            double err = fabs(p->C[(size_t)i * s->N + j] - acc), bound = (rel + 2.0 * (s->K + 1) * FLT_EPSILON) * mag;
            double r = bound > 0 ? err / bound : (err > 0 ? INFINITY : 0);
            if (r > worst) worst = r;
        }
    return worst;
}

static double time_calls(int back, problem *p, long reps) {
    double t0 = qkv_clock_seconds();
    for (long r = 0; r < reps; r++) call(back, p);
    return (qkv_clock_seconds() - t0) / reps;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    int rounds = 7;
    double ms = 2.0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ms") && i + 1 < argc) ms = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--rounds N] [--ms X]\n", argv[0]);
            return 2;
        }
    }
    if (rounds < 1) rounds = 1;
    if (rounds > 64) rounds = 64;
    openblas_set_num_threads(1);
    libxsmm_init();
    sbgemm = (sbgemm_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "cblas_sbgemm");
    printf("OpenBLAS: %s, core %s; cblas_sbgemm %s\n", openblas_get_config(), openblas_get_corename(),
           sbgemm ? "exported" : "not exported (built without BUILD_BFLOAT16)");
    printf("libxsmm %s: target %s\n", LIBXSMM_CONFIG_VERSION, libxsmm_get_target_arch());
    amx = qkv__bf16_use_amx(-1);
    printf("qkv's bf16 product: %s\n", amx ? "AMX tiles (qkv-bf16), libxsmm's kernel (qkv-bf16-xsmm)" : "libxsmm's kernel");

    static problem P[NSHAPES];
    for (int i = 0; i < NSHAPES; i++) problem_init(&P[i], &SHAPES[i]);
    int bad = 0;
    for (int i = 0; i < NSHAPES; i++)
        for (int b = 0; b < NBACK; b++) {
            if (!available(b, &P[i])) continue;
            double r = check(b, &P[i]);
            if (!(r <= 1)) {
                printf("WRONG: %s on %s: error %.3g x the bound\n", BACK_NAME[b], SHAPES[i].what, r);
                bad = 1;
            }
        }
    long reps[NSHAPES];
    for (int i = 0; i < NSHAPES; i++) {
        time_calls(B_SGEMM, &P[i], 20);
        reps[i] = (long)(ms * 1e-3 / time_calls(B_SGEMM, &P[i], 50));
        if (reps[i] < 5) reps[i] = 5;
    }
    static double samples[NSHAPES][NBACK][64];
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < NSHAPES; i++)
            for (int b = 0; b < NBACK; b++)
                if (available(b, &P[i])) samples[i][b][r] = time_calls(b, &P[i], reps[i]);
    printf("\nGFLOP/s per call, one thread; median of %d rounds, ~%.1f ms of calls each\n", rounds, ms);
    printf("%-24s %-2s %-14s", "product", "op", "M x N x K");
    for (int b = 0; b < NBACK; b++) printf(" %13s", BACK_NAME[b]);
    printf(" %9s\n", "qkv/f32");
    for (int i = 0; i < NSHAPES; i++) {
        const shape *s = &SHAPES[i];
        char dims[32];
        snprintf(dims, sizeof dims, "%dx%dx%d", s->M, s->N, s->K);
        printf("%-24s %c%c %-14s", s->what, s->ta ? 'T' : 'N', s->tb ? 'T' : 'N', dims);
        double g[NBACK] = {0};
        for (int b = 0; b < NBACK; b++) {
            if (!available(b, &P[i])) {
                printf(" %13s", "n/a");
                continue;
            }
            qsort(samples[i][b], (size_t)rounds, sizeof(double), cmp_d);
            g[b] = 2.0 * s->M * s->N * s->K / samples[i][b][rounds / 2] * 1e-9;
            printf(" %13.1f", g[b]);
        }
        /* qkv's bf16 product against the faster float32 one */
        double f32 = g[B_SGEMM] > g[B_XSMM_F32] ? g[B_SGEMM] : g[B_XSMM_F32];
        printf(" %8.2fx\n", g[B_QKV] / f32);
    }
    if (bad) printf("\nsome results were WRONG (above)\n");
    return bad;
}
