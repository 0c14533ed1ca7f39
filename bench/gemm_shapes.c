/* Single-threaded sgemm on the exact products of one recall training step, per library.
 *
 * The calls below are the float matrix products of one training step of configs/recall.json
 * (d_model 64, 4 heads, 2 layers, d_ff 256, vocab 64, batch 32 = 8 micro-batches of 4
 * sequences of 24 tokens), as logged from src/tensor/k_matmul.c's gemm_ld with a temporary
 * hook over 2- and 4-step runs (`qkv train configs/recall.json --threads 1`; the difference
 * divided by 2, so the end-of-run evaluation is not counted). Row-major, alpha = 1, as qkv
 * calls them: C = op(A) op(B) + beta C.
 *
 * Backends: OpenBLAS (cblas_sgemm), BLIS (native bli_sgemm with row strides; Debian's serial
 * build), libxsmm's dispatching frontend (libxsmm_sgemm: JIT for what it supports, otherwise
 * the linked BLAS, here OpenBLAS) and libxsmm's JIT kernels (libxsmm_smmdispatch): xsmm-jit
 * dispatches once per shape before timing, xsmm-jit-d on every call (as qkv's GEMM=libxsmm
 * build does). libxsmm 1.17 has no JIT kernel for qkv's op(B) = B^T (a transposed first
 * column-major operand): for those shapes ("+T") both copy B^T to a scratch buffer with
 * libxsmm_otrans and run the NN kernel, the copy timed with the call.
 *
 *   build/bench/gemm_shapes [--rounds N] [--ms X] [--replay N] [--blis-arch NAME] [--only a,b] [--sweep]
 *
 * Each (shape, backend) is timed as a hot loop of the same call for about X ms (default 2),
 * N rounds (default 9) with the backends interleaved, and the median is kept. The step is
 * the sum of count x time per call; "replay" times the step's whole list of calls in a row
 * (each shape its count of times), the median of --replay runs (default 15). --blis-arch
 * forces a BLIS sub-configuration (BLIS 0.9 does not know recent CPUs and falls back to
 * 'generic'); --sweep adds larger dense products. Results are checked against a
 * double-precision loop: |C - ref| <= 2 (K+1) eps (|A| |B| + |beta C0|) elementwise, and
 * the padding of C's leading dimension must be left alone.
 */
#define _GNU_SOURCE
#include <cblas.h>
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef HAVE_BLIS
#include <blis.h>
#endif
#ifdef HAVE_LIBXSMM
#include <libxsmm.h>
#endif

void openblas_set_num_threads(int);
char *openblas_get_corename(void);
char *openblas_get_config(void);

typedef struct {
    const char *what;
    int ta, tb, M, N, K, lda, ldb, ldc;
    float beta;
    int count; /* calls per training step */
} shape;

static const shape SHAPES[] = {
    /* per-head attention (src/tensor/k_attention.c): 32 sequences x 4 heads x 2 layers */
    {"attn S=QK^T, dP=dY V^T", 0, 1, 24, 24, 16, 64, 64, 24, 0, 512},
    {"attn Y=PV", 0, 0, 24, 16, 24, 24, 64, 64, 0, 256},
    {"attn dQ+=dP K", 0, 0, 24, 16, 24, 24, 64, 64, 1, 256},
    {"attn dV+=P^T dY, dK+=dP^T Q", 1, 0, 24, 16, 24, 24, 64, 64, 1, 512},
    /* linear layers (src/autograd/op_linear.c): 96 rows per micro-batch, 8 micro-batches */
    {"fwd Y=XW^T 64->64 (+bias)", 0, 1, 96, 64, 64, 64, 64, 64, 1, 24},
    {"fwd Y=XW^T 64->64", 0, 1, 96, 64, 64, 64, 64, 64, 0, 48},
    {"fwd Y=XW^T 64->256 (+bias)", 0, 1, 96, 256, 64, 64, 64, 256, 1, 16},
    {"fwd Y=XW^T 256->64 (+bias)", 0, 1, 96, 64, 256, 256, 256, 64, 1, 16},
    {"bwd dX=dY W 64<-64", 0, 0, 96, 64, 64, 64, 64, 64, 0, 40},
    {"bwd dX+=dY W 64<-64", 0, 0, 96, 64, 64, 64, 64, 64, 1, 32},
    {"bwd dX=dY W 64<-256", 0, 0, 96, 64, 256, 256, 64, 64, 0, 16},
    {"bwd dX=dY W 256<-64", 0, 0, 96, 256, 64, 64, 256, 256, 0, 16},
    {"bwd dW+=dY^T X 64x64", 1, 0, 64, 64, 96, 64, 64, 64, 1, 72},
    {"bwd dW+=dY^T X 256x64", 1, 0, 256, 64, 96, 256, 64, 64, 1, 16},
    {"bwd dW+=dY^T X 64x256", 1, 0, 64, 256, 96, 64, 256, 256, 1, 16},
};
enum { NSHAPES = sizeof SHAPES / sizeof SHAPES[0] };

/* --sweep: larger products, to place the limit above which OpenBLAS is kept (the other sizes of
 * `qkv bench`, the end-of-run evaluation's 768-row products, square ones), dense, in the three
 * forms qkv uses: forward NT (Y = X W^T), backward NN (dX = dY W), TN (dW += dY^T X) */
static const int SWEEP[][3] = {{96, 64, 64},    {96, 256, 64},   {192, 128, 128},  {256, 128, 128}, {256, 512, 128},
                               {256, 128, 512}, {768, 64, 64},   {768, 256, 64},   {128, 128, 32},  {256, 256, 256},
                               {256, 1024, 256}, {256, 256, 1024}, {512, 512, 512}};
enum { NSWEEP = sizeof SWEEP / sizeof SWEEP[0] };

enum { B_OPENBLAS, B_BLIS, B_XSMM, B_XSMM_JIT, B_XSMM_JITD, NBACK };
static const char *BACK_NAME[NBACK] = {"openblas", "blis", "xsmm", "xsmm-jit", "xsmm-jit-d"};
static int back_on[NBACK] = {1,
#ifdef HAVE_BLIS
                             1,
#else
                             0,
#endif
#ifdef HAVE_LIBXSMM
                             1, 1, 1
#else
                             0, 0, 0
#endif
};

typedef struct {
    const shape *s;
    float *A, *B, *C, *C0, *Bt; /* Bt: scratch for B^T (xsmm-jit on op(B) = B^T) */
    size_t na, nb, nc;
#ifdef HAVE_LIBXSMM
    libxsmm_smmfunction jit;
    int jit_transposes_b; /* the kernel is NN on a copied B^T */
#endif
} problem;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static float *alloc_f(size_t n) {
    void *p = NULL;
    if (posix_memalign(&p, 64, (n ? n : 1) * sizeof(float))) abort();
    return p;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static float urand(void) { /* [-1, 1) */
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((rng >> 40) * (1.0 / (1ull << 24))) * 2.0f - 1.0f;
}

#ifdef HAVE_LIBXSMM
/* the JIT kernel for s; *transposes_b: NN on a copy of B^T (libxsmm 1.17 has no kernel for
 * qkv's op(B) = B^T, a transposed first column-major operand) */
static libxsmm_smmfunction jit_dispatch(const shape *s, int *transposes_b) {
    /* row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: libxsmm's m, n, a, b
     * are qkv's N, M, B, A */
    libxsmm_blasint m = s->N, n = s->M, k = s->K, la = s->tb ? s->N : s->ldb, lb = s->lda, lc = s->ldc;
    float alpha = 1, beta = s->beta;
    int flags = (s->ta ? LIBXSMM_GEMM_FLAG_TRANS_B : 0) | (s->beta == 0 ? LIBXSMM_GEMM_FLAG_BETA_0 : 0);
    int prefetch = LIBXSMM_GEMM_PREFETCH_NONE;
    *transposes_b = s->tb;
    return libxsmm_smmdispatch(m, n, k, &la, &lb, &lc, &alpha, &beta, &flags, &prefetch);
}
#endif

static void problem_init(problem *p, const shape *s) {
    memset(p, 0, sizeof *p);
    p->s = s;
    p->na = (size_t)(s->ta ? s->K : s->M) * s->lda;
    p->nb = (size_t)(s->tb ? s->N : s->K) * s->ldb;
    p->nc = (size_t)s->M * s->ldc;
    p->A = alloc_f(p->na), p->B = alloc_f(p->nb), p->C = alloc_f(p->nc), p->C0 = alloc_f(p->nc);
    p->Bt = alloc_f((size_t)s->K * s->N);
    for (size_t i = 0; i < p->na; i++) p->A[i] = urand();
    for (size_t i = 0; i < p->nb; i++) p->B[i] = urand();
    for (size_t i = 0; i < p->nc; i++) p->C0[i] = p->C[i] = urand();
#ifdef HAVE_LIBXSMM
    p->jit = jit_dispatch(s, &p->jit_transposes_b);
#endif
}

static void problem_free(problem *p) {
    free(p->A), free(p->B), free(p->C), free(p->C0), free(p->Bt);
}

static void call(int back, problem *p) {
    const shape *s = p->s;
    switch (back) {
    case B_OPENBLAS:
        cblas_sgemm(CblasRowMajor, s->ta ? CblasTrans : CblasNoTrans, s->tb ? CblasTrans : CblasNoTrans, s->M, s->N,
                    s->K, 1.0f, p->A, s->lda, p->B, s->ldb, s->beta, p->C, s->ldc);
        break;
#ifdef HAVE_BLIS
    case B_BLIS: {
        float one = 1, beta = s->beta;
        bli_sgemm(s->ta ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, s->tb ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, s->M, s->N,
                  s->K, &one, p->A, s->lda, 1, p->B, s->ldb, 1, &beta, p->C, s->ldc, 1);
        break;
    }
#endif
#ifdef HAVE_LIBXSMM
    case B_XSMM: {
        const char ta = s->tb ? 'T' : 'N', tb = s->ta ? 'T' : 'N';
        libxsmm_blasint m = s->N, n = s->M, k = s->K, la = s->ldb, lb = s->lda, lc = s->ldc;
        float one = 1, beta = s->beta;
        libxsmm_sgemm(&ta, &tb, &m, &n, &k, &one, p->B, &la, p->A, &lb, &beta, p->C, &lc);
        break;
    }
    case B_XSMM_JIT:
    case B_XSMM_JITD: {
        int tr = p->jit_transposes_b;
        libxsmm_smmfunction f = back == B_XSMM_JIT ? p->jit : jit_dispatch(s, &tr);
        if (tr) { /* B is N x K (ldb): Bt = B^T, K x N dense (column-major: K rows of an N x K) */
            libxsmm_otrans(p->Bt, p->B, sizeof(float), s->K, s->N, s->ldb, s->N);
            f(p->Bt, p->A, p->C);
        } else
            f(p->B, p->A, p->C);
        break;
    }
#endif
    default:
        abort();
    }
}

/* C against the double-precision loop; returns the largest |error| / bound (<= 1 passes) */
static double check(int back, problem *p) {
    const shape *s = p->s;
    memcpy(p->C, p->C0, p->nc * sizeof(float));
    call(back, p);
    double worst = 0;
    for (int i = 0; i < s->M; i++)
        for (int j = 0; j < s->N; j++) {
            double acc = 0, mag = 0;
            for (int k = 0; k < s->K; k++) {
                double a = s->ta ? p->A[(size_t)k * s->lda + i] : p->A[(size_t)i * s->lda + k];
                double b = s->tb ? p->B[(size_t)j * s->ldb + k] : p->B[(size_t)k * s->ldb + j];
                acc += a * b, mag += fabs(a * b);
            }
            double c0 = p->C0[(size_t)i * s->ldc + j];
            acc += s->beta * c0, mag += fabs(s->beta * c0);
            double err = fabs(p->C[(size_t)i * s->ldc + j] - acc), bound = 2.0 * (s->K + 1) * FLT_EPSILON * mag;
            double r = bound > 0 ? err / bound : (err > 0 ? INFINITY : 0);
            if (r > worst) worst = r;
        }
    /* the leading dimension's padding is left alone */
    for (int i = 0; i < s->M; i++)
        for (int j = s->N; j < s->ldc; j++)
            if (p->C[(size_t)i * s->ldc + j] != p->C0[(size_t)i * s->ldc + j]) return INFINITY;
    return worst;
}

/* beta = 1 products accumulate over a timing loop: C is reset before each measurement */
static double time_calls(int back, problem *p, long reps) {
    memcpy(p->C, p->C0, p->nc * sizeof(float));
    double t0 = now();
    for (long r = 0; r < reps; r++) call(back, p);
    return (now() - t0) / reps;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *v, int n) {
    qsort(v, n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double flops(const shape *s) { return 2.0 * s->M * s->N * s->K; }

/* the one-core ceiling: an n x n x n product, best of reps */
static double ceiling(int back, int n, int reps) {
    float *a = alloc_f((size_t)n * n), *b = alloc_f((size_t)n * n), *c = alloc_f((size_t)n * n);
    for (size_t i = 0; i < (size_t)n * n; i++) a[i] = urand(), b[i] = urand(), c[i] = 0;
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        if (back == B_OPENBLAS)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
#ifdef HAVE_BLIS
        else {
            float one = 1, zero = 0;
            bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, n, n, n, &one, a, n, 1, b, n, 1, &zero, c, n, 1);
        }
#endif
        double t = now() - t0;
        if (t < best) best = t;
    }
    free(a), free(b), free(c);
    return 2.0 * n * n * n / best * 1e-9;
}

int main(int argc, char **argv) {
    int rounds = 9, replays = 15, sweep = 0;
    double ms = 2.0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ms") && i + 1 < argc) ms = atof(argv[++i]);
        else if (!strcmp(argv[i], "--replay") && i + 1 < argc) replays = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--sweep")) sweep = 1;
        else if (!strcmp(argv[i], "--blis-arch") && i + 1 < argc) {
            const char *want = argv[++i];
#ifdef HAVE_BLIS
            /* BLIS 0.9 reads BLIS_ARCH_TYPE (an arch_t number) when it first initialises */
            int id = -1;
            for (int a = 0; a < BLIS_NUM_ARCHS; a++)
                if (!strcmp(bli_arch_string((arch_t)a), want)) id = a;
            if (id < 0) {
                fprintf(stderr, "gemm_shapes: BLIS has no sub-configuration '%s'\n", want);
                return 2;
            }
            char num[16];
            snprintf(num, sizeof num, "%d", id);
            setenv("BLIS_ARCH_TYPE", num, 1);
#else
            (void)want;
#endif
        } else if (!strcmp(argv[i], "--only") && i + 1 < argc) { /* comma-separated backend names */
            const char *list = argv[++i];
            for (int b = 0; b < NBACK; b++) {
                const char *f = strstr(list, BACK_NAME[b]);
                int n = (int)strlen(BACK_NAME[b]);
                back_on[b] = back_on[b] && f && (f[n] == 0 || f[n] == ',') && (f == list || f[-1] == ',');
            }
        } else {
            fprintf(stderr, "usage: %s [--rounds N] [--ms X] [--replay N] [--blis-arch NAME] [--only a,b]\n", argv[0]);
            return 2;
        }
    }
    if (rounds < 1) rounds = 1;
    if (replays < 1) replays = 1;
    openblas_set_num_threads(1);
    /* BLIS exports cblas_sgemm and sgemm_ too: make sure the link order gave OpenBLAS's */
    Dl_info di;
    const char *cblas_from = dladdr((void *)cblas_sgemm, &di) && di.dli_fname ? di.dli_fname : "?";
    const char *sgemm_from = dladdr(dlsym(RTLD_DEFAULT, "sgemm_"), &di) && di.dli_fname ? di.dli_fname : "?";
    printf("cblas_sgemm from %s, sgemm_ (libxsmm's fallback) from %s\n", cblas_from, sgemm_from);
    if (!strstr(cblas_from, "openblas") || !strstr(sgemm_from, "openblas")) {
        fprintf(stderr, "gemm_shapes: cblas_sgemm/sgemm_ are not OpenBLAS's: fix the link order\n");
        return 2;
    }
    printf("OpenBLAS: %s, core %s (OPENBLAS_CORETYPE=%s)\n", openblas_get_config(), openblas_get_corename(),
           getenv("OPENBLAS_CORETYPE") ? getenv("OPENBLAS_CORETYPE") : "unset");
#ifdef HAVE_BLIS
    bli_init();
    bli_thread_set_num_threads(1);
    printf("BLIS %s: sub-configuration %s, threading %s\n", bli_info_get_version_str(),
           bli_arch_string(bli_arch_query_id()), bli_info_get_enable_threading() ? "enabled (set to 1)" : "none (serial build)");
#endif
#ifdef HAVE_LIBXSMM
    libxsmm_init();
    printf("libxsmm %s: target %s\n", LIBXSMM_CONFIG_VERSION, libxsmm_get_target_arch());
#endif

    problem P[NSHAPES];
    for (int i = 0; i < NSHAPES; i++) problem_init(&P[i], &SHAPES[i]);

    /* correctness first */
    int bad = 0;
    double worst[NBACK] = {0};
    for (int i = 0; i < NSHAPES; i++)
        for (int b = 0; b < NBACK; b++) {
            if (!back_on[b]) continue;
#ifdef HAVE_LIBXSMM
            if ((b == B_XSMM_JIT || b == B_XSMM_JITD) && !P[i].jit) continue;
#endif
            double r = check(b, &P[i]);
            if (r > worst[b]) worst[b] = r;
            if (!(r <= 1)) {
                printf("WRONG: %s on shape %d (%s): error %.3g x the bound\n", BACK_NAME[b], i, SHAPES[i].what, r);
                bad = 1;
            }
        }

    /* reps per measurement, from a calibration with OpenBLAS */
    long reps[NSHAPES];
    for (int i = 0; i < NSHAPES; i++) {
        double t = time_calls(B_OPENBLAS, &P[i], 50);
        t = time_calls(B_OPENBLAS, &P[i], 200);
        reps[i] = (long)(ms * 1e-3 / t);
        if (reps[i] < 10) reps[i] = 10;
    }
    static double samples[NSHAPES][NBACK][64];
    if (rounds > 64) rounds = 64;
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < NSHAPES; i++)
            for (int b = 0; b < NBACK; b++) {
                if (!back_on[b]) continue;
#ifdef HAVE_LIBXSMM
                if ((b == B_XSMM_JIT || b == B_XSMM_JITD) && !P[i].jit) continue;
#endif
                samples[i][b][r] = time_calls(b, &P[i], reps[i]);
            }
    double t[NSHAPES][NBACK];
    for (int i = 0; i < NSHAPES; i++)
        for (int b = 0; b < NBACK; b++) t[i][b] = back_on[b] ? median(samples[i][b], rounds) : 0;

    printf("\nper call: ns (GFLOP/s); median of %d rounds, ~%.1f ms of calls each\n", rounds, ms);
    printf("%-3s %-30s %-2s %-3s %-13s %-16s %5s", "#", "product", "op", "b", "M x N x K", "lda ldb ldc", "calls");
    for (int b = 0; b < NBACK; b++)
        if (back_on[b]) printf(" %17s", BACK_NAME[b]);
    printf("\n");
    double step[NBACK] = {0}, step_flops = 0;
    for (int i = 0; i < NSHAPES; i++) {
        const shape *s = &SHAPES[i];
        char dims[32], lds[32];
        snprintf(dims, sizeof dims, "%dx%dx%d", s->M, s->N, s->K);
        snprintf(lds, sizeof lds, "%d %d %d", s->lda, s->ldb, s->ldc);
        printf("%-3d %-30s %c%c %-3g %-13s %-16s %5d", i, s->what, s->ta ? 'T' : 'N', s->tb ? 'T' : 'N', s->beta, dims, lds,
               s->count);
        step_flops += s->count * flops(s);
        for (int b = 0; b < NBACK; b++) {
            if (!back_on[b]) continue;
#ifdef HAVE_LIBXSMM
            if ((b == B_XSMM_JIT || b == B_XSMM_JITD) && !P[i].jit) {
                printf(" %17s", "n/a");
                step[b] = NAN;
                continue;
            }
            const char *tag = b >= B_XSMM_JIT && P[i].jit_transposes_b ? "+T" : "";
#else
            const char *tag = "";
#endif
            char cell[40];
            snprintf(cell, sizeof cell, "%.0f (%.1f)%s", t[i][b] * 1e9, flops(s) / t[i][b] * 1e-9, tag);
            printf(" %17s", cell);
            step[b] += s->count * t[i][b];
        }
        printf("\n");
    }

    /* replay: the whole step's list of calls, in a row */
    double rep[NBACK] = {0};
    static double rs[NBACK][64];
    if (replays > 64) replays = 64;
    for (int r = 0; r < replays; r++)
        for (int b = 0; b < NBACK; b++) {
            if (!back_on[b] || isnan(step[b])) continue;
            for (int i = 0; i < NSHAPES; i++) memcpy(P[i].C, P[i].C0, P[i].nc * sizeof(float));
            double t0 = now();
            for (int i = 0; i < NSHAPES; i++)
                for (int c = 0; c < SHAPES[i].count; c++) call(b, &P[i]);
            rs[b][r] = now() - t0;
        }
    for (int b = 0; b < NBACK; b++)
        if (back_on[b] && !isnan(step[b])) rep[b] = median(rs[b], replays);

    int calls = 0;
    for (int i = 0; i < NSHAPES; i++) calls += SHAPES[i].count;
    printf("\nper training step (%d calls, %.1f MFLOP):\n", calls, step_flops * 1e-6);
    printf("%-10s %14s %9s %10s %16s %9s\n", "backend", "sum us/step", "GFLOP/s", "vs openblas", "replay us/step", "GFLOP/s");
    for (int b = 0; b < NBACK; b++) {
        if (!back_on[b]) continue;
        printf("%-10s %14.1f %9.1f %10.2fx %16.1f %9.1f\n", BACK_NAME[b], step[b] * 1e6, step_flops / step[b] * 1e-9,
               step[B_OPENBLAS] / step[b], rep[b] * 1e6, rep[b] > 0 ? step_flops / rep[b] * 1e-9 : NAN);
    }
    /* the best library per shape */
    double best_mix = 0;
    printf("\nfastest per shape:");
    for (int i = 0; i < NSHAPES; i++) {
        int bb = B_OPENBLAS;
        for (int b = 0; b < NBACK; b++)
            if (back_on[b] && t[i][b] > 0 && t[i][b] < t[i][bb]) bb = b;
        printf(" %d:%s", i, BACK_NAME[bb]);
        best_mix += SHAPES[i].count * t[i][bb];
    }
    printf("\nthe fastest for each shape, summed: %.1f us/step (%.2fx openblas)\n", best_mix * 1e6, step[B_OPENBLAS] / best_mix);

    printf("\none-core ceiling, 1024x1024x1024 sgemm, best of 5: openblas %.1f GFLOP/s", ceiling(B_OPENBLAS, 1024, 5));
#ifdef HAVE_BLIS
    if (back_on[B_BLIS]) printf(", blis %.1f GFLOP/s", ceiling(B_BLIS, 1024, 5));
#endif
    printf("\n");
    if (sweep) {
        printf("\nsweep: dense products, ns per call (GFLOP/s), median of %d rounds; forms NT b0, NN b0, TN b1\n", rounds);
        printf("%-16s", "M x N x K");
        for (int f = 0; f < 3; f++)
            for (int b = 0; b < NBACK; b++)
                if (back_on[b] && b != B_XSMM_JIT) printf(" %14s %-5s", BACK_NAME[b], f == 0 ? "NT" : f == 1 ? "NN" : "TN");
        printf("\n");
        for (int z = 0; z < NSWEEP; z++) {
            int M = SWEEP[z][0], N = SWEEP[z][1], Kd = SWEEP[z][2];
            char dims[32];
            snprintf(dims, sizeof dims, "%dx%dx%d", M, N, Kd);
            printf("%-16s", dims);
            for (int f = 0; f < 3; f++) {
                shape sh = {"sweep", f == 2, f == 0, M, N, Kd, f == 2 ? M : Kd, f == 0 ? Kd : N, N, f == 2 ? 1.0f : 0.0f, 0};
                problem q;
                problem_init(&q, &sh);
                double qt = time_calls(B_OPENBLAS, &q, 20);
                long qr = (long)(ms * 1e-3 / qt);
                if (qr < 5) qr = 5;
                double smp[NBACK][64];
                for (int r = 0; r < rounds; r++)
                    for (int b = 0; b < NBACK; b++)
                        if (back_on[b] && b != B_XSMM_JIT) smp[b][r] = time_calls(b, &q, qr);
                for (int b = 0; b < NBACK; b++) {
                    if (!back_on[b] || b == B_XSMM_JIT) continue;
                    double r = check(b, &q);
                    if (!(r <= 1)) {
                        printf("WRONG: %s on %s: error %.3g x the bound\n", BACK_NAME[b], dims, r);
                        bad = 1;
                    }
                    double tm = median(smp[b], rounds);
                    char cell[40];
                    snprintf(cell, sizeof cell, "%.0f (%.0f)", tm * 1e9, flops(&sh) / tm * 1e-9);
                    printf(" %20s", cell);
                }
                problem_free(&q);
            }
            printf("\n");
        }
    }
    printf("\ncorrectness: worst error / bound:");
    for (int b = 0; b < NBACK; b++)
        if (back_on[b]) printf(" %s %.3f", BACK_NAME[b], worst[b]);
    printf(" (%s)\n", bad ? "FAILED" : "all within 2(K+1) eps sum|a||b|");
    for (int i = 0; i < NSHAPES; i++) problem_free(&P[i]);
#ifdef HAVE_LIBXSMM
    libxsmm_finalize();
#endif
    return bad;
}
