/* bf16 products (tensor/bf16.h, qkv_ctx_set_bf16): a product against a double loop over the
 * operands rounded to bf16 (so the rounding is to nearest even and the layout right), and the
 * forward and backward of linear, matmul and attention in bf16 against the float32 path, each
 * element within a bound derived from bf16's precision:
 *
 *   bf16 keeps 8 significant bits (7 stored, one implicit), so its unit roundoff is 2^-8: an
 *   operand rounded to nearest is within 2^-8 of itself (relative), and a product of two within
 *   (1 + 2^-8)^2 - 1 = 2^-7 + 2^-16 of a b. A sum of K products in float32 is within
 *   (K + 1) 2^-24 sum |a b| of the exact one, on either path. So a product's element is within
 *   u(K) sum_k |a_k b_k| of the float32 path's, with u(K) = 2^-7 + 2^-16 + 4 (K + 2) 2^-24 (the
 *   float sums of both paths, with room).
 *
 * Attention chains products through the softmax; its bound is carried through the forward and
 * the backward to first order in the rounding errors (the formulas at attention_bounds), times
 * 5/4 for the second-order terms (each of them a product of two first-order relative errors,
 * which the test asserts are below 1/5). Every bound is an absolute one per element, computed in
 * double from the inputs' magnitudes. On a machine without bf16 products the tests are skipped
 * by name; the refusal itself is a row of tests/test_cli_config.c. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/ctx.h"
#include "autograd/ops.h"
#include "probe.h"
#include "suites.h"
#include "tensor/bf16.h"
#include "tensor/kernels.h"
#include "tensor/rng.h"
#include "tensor/threads.h"
#include "testutil.h"

/* the per-product relative bound u(K) of the header */
static double u_prod(int64_t K) { return 0x1p-7 + 0x1p-16 + 4.0 * (double)(K + 2) * 0x1p-24; }

/* whether bf16 products run here; when not, the check is skipped by name */
static int have_bf16(const char *what) {
    qkv_err why;
    if (qkv_bf16_available(&why)) return 1;
    qkv_test_skip(what, why.msg);
    return 0;
}

/* x rounded to bf16, to nearest even (the test's own: sign, exponent, the 7 upper bits of the
 * fraction; finite normal x) */
static double bf16(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    u += 0x7fffu + ((u >> 16) & 1u);
    u &= 0xffff0000u;
    memcpy(&x, &u, 4);
    return x;
}

static float *randf(qkv_rng *r, int64_t n) {
    float *x = malloc((size_t)(n ? n : 1) * sizeof *x);
    ck_assert_ptr_nonnull(x);
    for (int64_t i = 0; i < n; i++) x[i] = (float)qkv_rng_normal(r);
    return x;
}

/* ---- one product, against the double loop over the rounded operands ------------------------- */

/* _i: 0 the kernel qkv chooses, 1 libxsmm's where that is AMX (tensor/bf16_amx.h): both tested
 * on a machine with AMX, which the machine without tests under its own name */
START_TEST(test_product_rounds_to_nearest_even) {
    if (!have_bf16("bf16 product")) return;
    int was = qkv__bf16_use_amx(-1);
    if (_i == 1 && !was) {
        qkv_test_skip("bf16 product, libxsmm beside AMX", "this CPU or kernel has no AMX tiles: libxsmm is the kernel");
        return;
    }
    if (_i == 1) qkv__bf16_use_amx(0);
    /* ta, tb, M, N, K, padding of each row stride */
    static const int S[][6] = {{0, 0, 7, 5, 3, 0},   {0, 1, 24, 24, 16, 0}, {1, 0, 24, 16, 24, 0}, {1, 1, 9, 13, 17, 2},
                               {0, 0, 1, 1, 1, 0},   {0, 1, 96, 64, 64, 3}, {1, 0, 64, 72, 96, 1}, {0, 0, 130, 70, 2, 5},
                               {0, 1, 33, 257, 65, 0}, {1, 1, 40, 8, 64, 4},
                               /* inner dimensions of several chunks (tensor/bf16.c's K_CHUNK), odd ones */
                               {1, 0, 40, 24, 600, 1}, {0, 0, 20, 30, 515, 2}, {0, 1, 33, 17, 257, 0}, {1, 1, 9, 7, 513, 3},
                               /* several blocks of rows and of columns (tensor/bf16.c's ROW_BLOCK, COL_BLOCK) */
                               {1, 0, 200, 150, 300, 1}, {0, 1, 129, 65, 31, 2},
                               /* inner dimensions longer than M and N: on AMX in blocks of k summed after (KSPLIT) */
                               {1, 0, 20, 12, 1101, 1}, {0, 1, 9, 33, 1030, 2}, {1, 1, 17, 40, 2048, 0}};
    qkv_rng r;
    qkv_rng_seed(&r, 45);
    for (size_t s = 0; s < sizeof S / sizeof S[0]; s++)
        for (int beta = 0; beta <= 1; beta++) {
            int ta = S[s][0], tb = S[s][1], pad = S[s][5];
            int64_t M = S[s][2], N = S[s][3], K = S[s][4];
            int64_t lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad;
            float *A = randf(&r, (ta ? K : M) * lda), *B = randf(&r, (tb ? N : K) * ldb), *C = randf(&r, M * ldc);
            float *C0 = malloc((size_t)(M * ldc) * sizeof *C0);
            memcpy(C0, C, (size_t)(M * ldc) * sizeof *C0);
            void *scratch = aligned_alloc(64, (qkv__bf16_gemm_scratch(ta, tb, M, N, K) + 63) / 64 * 64);
            qkv__bf16_gemm_ld(ta, tb, M, N, K, A, lda, B, ldb, (float)beta, C, ldc, scratch);
            for (int64_t i = 0; i < M; i++)
                for (int64_t j = 0; j < ldc; j++) {
                    if (j >= N) { /* the row stride's padding is left alone */
                        ck_assert_msg(C[i * ldc + j] == C0[i * ldc + j], "shape %zu: padding written", s);
                        continue;
                    }
                    double ref = beta ? C0[i * ldc + j] : 0, mag = fabs(ref);
                    for (int64_t k = 0; k < K; k++) {
                        double a = bf16(ta ? A[k * lda + i] : A[i * lda + k]), b = bf16(tb ? B[j * ldb + k] : B[k * ldb + j]);
                        ref += a * b, mag += fabs(a * b);
                    }
                    /* the float sum alone: a truncating conversion would be off by up to 2^-7 */
                    double tol = 2.0 * (double)(K + 2) * 0x1p-24 * mag;
                    ck_assert_msg(qkv_test_close(C[i * ldc + j], ref, tol, 0),
                                  "shape %zu beta %d: C[%lld,%lld] = %.9g, the rounded operands' product %.9g (bound %.3g)",
                                  s, beta, (long long)i, (long long)j, C[i * ldc + j], ref, tol);
                }
            free(A), free(B), free(C), free(C0), free(scratch);
        }
    qkv__bf16_use_amx(was);
}
END_TEST

/* a product split across threads (large enough to be split) gives the bits of one thread's:
 * each element is one kernel's sum in a fixed order, whatever the tiles around it; shapes split
 * by rows, and by columns when there are few rows (a weight gradient: M <= 128, K = B T) */
START_TEST(test_product_same_bits_any_threads) {
    if (!have_bf16("bf16 product, threads")) return;
    int was = qkv__bf16_use_amx(-1); /* _i as test_product_rounds_to_nearest_even's */
    if (_i == 1 && !was) {
        qkv_test_skip("bf16 product, threads, libxsmm beside AMX", "this CPU or kernel has no AMX tiles: libxsmm is the kernel");
        return;
    }
    if (_i == 1) qkv__bf16_use_amx(0);
    static const int64_t S[][3] = {{301, 200, 66}, {128, 512, 2048}, {64, 130, 600}, {100, 64, 2048}};
    qkv_rng r;
    qkv_rng_seed(&r, 8);
    for (size_t s = 0; s < sizeof S / sizeof S[0]; s++)
        for (int form = 0; form < 3; form++) { /* NT, NN, TN: a linear layer's forward and backward */
            int ta = form == 2, tb = form == 0;
            int64_t M = S[s][0], N = S[s][1], K = S[s][2];
            float *A = randf(&r, M * K), *B = randf(&r, K * N), *C[3];
            void *scratch = aligned_alloc(64, (qkv__bf16_gemm_scratch(ta, tb, M, N, K) + 63) / 64 * 64);
            int old = qkv_get_threads();
            for (int t = 0; t < 3; t++) { /* 1, 2 and 3 threads */
                qkv_set_threads(1 + t);
                C[t] = randf(&r, M * N);
                qkv__bf16_gemm(ta, tb, M, N, K, A, B, 0, C[t], scratch);
            }
            qkv_set_threads(old);
            for (int t = 1; t < 3; t++)
                ck_assert_msg(!memcmp(C[0], C[t], sizeof(float) * M * N), "%lldx%lldx%lld form %d: 1 and %d threads differ",
                              (long long)M, (long long)N, (long long)K, form, 1 + t);
            free(A), free(B), free(C[0]), free(C[1]), free(C[2]), free(scratch);
        }
    qkv__bf16_use_amx(was);
}
END_TEST

/* the fused attention's scratch per part holds every head product it runs, its inner dimension
 * split into blocks or not (a head dimension of 1024 or more longer than the rows splits on AMX):
 * the products of tensor/k_attention.c, whole rows (non-causal) or blocks of 64 (causal) */
START_TEST(test_attention_scratch_holds_its_products) {
    static const int64_t S[][3] = {{700, 1024, 1024}, {40, 2048, 64}, {1100, 64, 2048}, {128, 32, 32},
                                   {64, 1030, 1030}, {1023, 1024, 16}, {600, 3000, 3000}};
    for (size_t c = 0; c < sizeof S / sizeof S[0]; c++) {
        qkv_sdpa_shape sh = {.B = 1, .T = S[c][0], .H = 1, .hd = S[c][1], .vd = S[c][2]};
        size_t part = qkv__sdpa_bf16_part(&sh);
        int64_t T = sh.T, hd = sh.hd, vd = sh.vd;
        for (int causal = 0; causal <= 1; causal++) {
            int64_t r = causal && T > 64 ? 64 : T; /* a block of query rows */
            const int64_t P[][5] = {{0, 1, r, T, hd}, {0, 0, r, vd, T}, {1, 0, T, vd, r},
                                    {0, 1, r, T, vd}, {0, 0, r, hd, T}, {1, 0, T, hd, r}};
            for (size_t i = 0; i < sizeof P / sizeof P[0]; i++) {
                size_t need = qkv__bf16_gemm_scratch((int)P[i][0], (int)P[i][1], P[i][2], P[i][3], P[i][4]);
                ck_assert_msg(need <= part, "T %lld hd %lld vd %lld: product %zu (%lld x %lld x %lld) needs %zu bytes, "
                              "a part has %zu", (long long)T, (long long)hd, (long long)vd, i, (long long)P[i][2],
                              (long long)P[i][3], (long long)P[i][4], need, part);
            }
        }
    }
}
END_TEST

/* ---- ops: the bf16 context against the float32 one ------------------------------------------ */

static qkv_ctx *new_ctx(bool bf16_on) {
    qkv_ctx *c = qkv_ctx_new();
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(qkv_ctx_set_bf16(c, bf16_on), 0);
    ck_assert(qkv_ctx_bf16(c) == bf16_on);
    return c;
}

/* loss = sum(y g) for a fixed g: the backward starts from dy = g */
static void backward_from(qkv_ctx *c, qkv_tensor *y, const float *g) {
    qkv_tensor *gt = qkv_ctx_tensor_from(c, QKV_F32, y->ndim, y->shape, g);
    ck_assert_ptr_nonnull(gt);
    qkv_tensor *loss = qkv_sum_all(c, qkv_mul(c, y, gt));
    ck_assert_msg(loss && qkv_backward(c, loss) == 0, "%s", qkv_ctx_error(c));
}

static float *copy_of(const void *p, int64_t n) {
    float *d = malloc((size_t)n * sizeof *d);
    ck_assert_ptr_nonnull(d);
    memcpy(d, p, (size_t)n * sizeof *d);
    return d;
}

/* got (bf16) against want (float32) within bound[i] each; and not all equal (the option acts) */
static void within(const char *what, const float *got, const float *want, const double *bound, int64_t n) {
    int64_t differ = 0;
    for (int64_t i = 0; i < n; i++) {
        ck_assert_msg(qkv_test_close(got[i], want[i], bound[i], 0), "%s[%lld]: bf16 %.9g, float32 %.9g, bound %.3g",
                      what, (long long)i, got[i], want[i], bound[i]);
        differ += got[i] != want[i];
    }
    ck_assert_msg(differ > 0, "%s: bf16 gave float32's bits everywhere", what);
}

START_TEST(test_linear_against_float32) {
    if (!have_bf16("bf16 linear")) return;
    enum { R = 37, IN = 24, OUT = 20 };
    int64_t xs[2] = {R, IN}, ws[2] = {OUT, IN}, bs[1] = {OUT};
    qkv_rng r;
    qkv_rng_seed(&r, 7);
    qkv_tensor *x = qkv_test_randn(&r, 2, xs, true), *w = qkv_test_randn(&r, 2, ws, true);
    qkv_tensor *b = qkv_test_randn(&r, 1, bs, true);
    float *g = randf(&r, R * OUT), *y[2], *dx[2], *dw[2], *db[2];
    for (int p = 0; p < 2; p++) { /* 0: float32, 1: bf16 */
        qkv_ctx *c = new_ctx(p == 1);
        qkv_tensor_zero_grad(x), qkv_tensor_zero_grad(w), qkv_tensor_zero_grad(b);
        qkv_tensor *yt = qkv_linear(c, x, w, b);
        ck_assert_msg(yt != NULL, "%s", qkv_ctx_error(c));
        y[p] = copy_of(yt->data, R * OUT);
        backward_from(c, yt, g);
        dx[p] = copy_of(x->grad, R * IN), dw[p] = copy_of(w->grad, OUT * IN), db[p] = copy_of(b->grad, OUT);
        qkv_ctx_free(c);
    }
    const float *X = x->data, *W = w->data, *B = b->data;
    double by[R * OUT], bx[R * IN], bw[OUT * IN];
    for (int i = 0; i < R; i++) /* y = x W^T + b: the bias is the sum's first term */
        for (int j = 0; j < OUT; j++) {
            double m = fabs(B[j]);
            for (int k = 0; k < IN; k++) m += fabs((double)X[i * IN + k] * W[j * IN + k]);
            by[i * OUT + j] = u_prod(IN + 1) * m;
        }
    for (int i = 0; i < R; i++) /* dx = g W */
        for (int k = 0; k < IN; k++) {
            double m = 0;
            for (int j = 0; j < OUT; j++) m += fabs((double)g[i * OUT + j] * W[j * IN + k]);
            bx[i * IN + k] = u_prod(OUT) * m;
        }
    for (int j = 0; j < OUT; j++) /* dW = g^T x */
        for (int k = 0; k < IN; k++) {
            double m = 0;
            for (int i = 0; i < R; i++) m += fabs((double)g[i * OUT + j] * X[i * IN + k]);
            bw[j * IN + k] = u_prod(R) * m;
        }
    within("linear y", y[1], y[0], by, R * OUT);
    within("linear dx", dx[1], dx[0], bx, R * IN);
    within("linear dW", dw[1], dw[0], bw, OUT * IN);
    /* db is a sum of dy's rows, no product: the same bits */
    ck_assert_int_eq(memcmp(db[0], db[1], OUT * sizeof(float)), 0);
    for (int p = 0; p < 2; p++) free(y[p]), free(dx[p]), free(dw[p]), free(db[p]);
    free(g);
    qkv_tensor_free(x), qkv_tensor_free(w), qkv_tensor_free(b);
}
END_TEST

/* batched matmul in each transpose form: C = op(A) op(B), A (2,M,K) or (2,K,M), B (2,K,N) or (2,N,K) */
START_TEST(test_matmul_against_float32) {
    if (!have_bf16("bf16 matmul")) return;
    int ta = _i & 1, tb = _i >> 1;
    enum { NB = 2, M = 13, K = 9, N = 11 };
    int64_t as[3] = {NB, ta ? K : M, ta ? M : K}, bs[3] = {NB, tb ? N : K, tb ? K : N};
    qkv_rng r;
    qkv_rng_seed(&r, 11 + (uint64_t)_i);
    qkv_tensor *a = qkv_test_randn(&r, 3, as, true), *b = qkv_test_randn(&r, 3, bs, true);
    float *g = randf(&r, NB * M * N), *c[2], *da[2], *db[2];
    for (int p = 0; p < 2; p++) {
        qkv_ctx *cx = new_ctx(p == 1);
        qkv_tensor_zero_grad(a), qkv_tensor_zero_grad(b);
        qkv_tensor *ct = qkv_matmul(cx, a, b, ta, tb);
        ck_assert_msg(ct != NULL, "%s", qkv_ctx_error(cx));
        c[p] = copy_of(ct->data, NB * M * N);
        backward_from(cx, ct, g);
        da[p] = copy_of(a->grad, NB * M * K), db[p] = copy_of(b->grad, NB * K * N);
        qkv_ctx_free(cx);
    }
    const float *A = a->data, *B = b->data;
#define OPA(n, i, k) ((double)A[(n) * M * K + (ta ? (k) * M + (i) : (i) * K + (k))])
#define OPB(n, k, j) ((double)B[(n) * K * N + (tb ? (j) * K + (k) : (k) * N + (j))])
#define G(n, i, j) ((double)g[(n) * M * N + (i) * N + (j)])
    double bc[NB * M * N], ba[NB * M * K], bb[NB * K * N];
    for (int n = 0; n < NB; n++) {
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) { /* C = op(A) op(B) */
                double m = 0;
                for (int k = 0; k < K; k++) m += fabs(OPA(n, i, k) * OPB(n, k, j));
                bc[n * M * N + i * N + j] = u_prod(K) * m;
            }
        for (int i = 0; i < M; i++) /* d op(A) = g op(B)^T, stored as A is */
            for (int k = 0; k < K; k++) {
                double m = 0;
                for (int j = 0; j < N; j++) m += fabs(G(n, i, j) * OPB(n, k, j));
                ba[n * M * K + (ta ? k * M + i : i * K + k)] = u_prod(N) * m;
            }
        for (int k = 0; k < K; k++) /* d op(B) = op(A)^T g, stored as B is */
            for (int j = 0; j < N; j++) {
                double m = 0;
                for (int i = 0; i < M; i++) m += fabs(OPA(n, i, k) * G(n, i, j));
                bb[n * K * N + (tb ? j * K + k : k * N + j)] = u_prod(M) * m;
            }
    }
#undef OPA
#undef OPB
#undef G
    within("matmul C", c[1], c[0], bc, NB * M * N);
    within("matmul dA", da[1], da[0], ba, NB * M * K);
    within("matmul dB", db[1], db[0], bb, NB * K * N);
    for (int p = 0; p < 2; p++) free(c[p]), free(da[p]), free(db[p]);
    free(g);
    qkv_tensor_free(a), qkv_tensor_free(b);
}
END_TEST

/* Causal attention over (B,T,H hd), the bounds carried to first order, per (batch, head), with
 * P the softmax in double and g = dY:
 *   S = s Q K^T:        eS_ij = u(hd) s sum_k |q_ik k_jk|                        (j <= i)
 *   P = softmax(S):     eP_ij = P_ij (eS_ij + sum_l P_il eS_il) + 16 eps P_ij    (the float exp
 *                       and sums of either path)
 *   Y = P V:            eY_id = u(T) sum_j P_ij |v_jd| + sum_j eP_ij |v_jd|
 *   dV = P^T g:         edV_jd = u(T) sum_i P_ij |g_id| + sum_i eP_ij |g_id|
 *   dP = g V^T:         edP_ij = u(hd) sum_d |g_id v_jd|
 *   dS = s P (dP - r),  r_i = sum_l P_il dP_il:
 *                       edS_ij = s [eP_ij |dP_ij - r_i| + P_ij (edP_ij + sum_l (eP_il |dP_il| + P_il edP_il))]
 *                                + 16 eps s P_ij (|dP_ij| + |r_i|)
 *   dQ = dS K:          edQ_ik = u(T) sum_j |dS_ij k_jk| + sum_j edS_ij |k_jk|
 *   dK = dS^T Q:        edK_jk = u(T) sum_i |dS_ij q_ik| + sum_i edS_ij |q_ik|
 * (eps = 2^-24.) The relative size of eS (the largest first-order error) is asserted below 1/5,
 * so the second-order terms stay below a quarter of the bound: the bounds are these times 5/4. */
enum { AB = 2, AT = 11, AH = 2, AHD = 8, AD = AH * AHD };

static void attention_bounds(const float *Q, const float *Kt, const float *V, const float *g, double s, double *bY,
                             double *bQ, double *bK, double *bV) {
    const double eps = 0x1p-24;
    memset(bQ, 0, sizeof(double) * AB * AT * AD), memset(bK, 0, sizeof(double) * AB * AT * AD);
    memset(bV, 0, sizeof(double) * AB * AT * AD);
    for (int b = 0; b < AB; b++)
        for (int h = 0; h < AH; h++) {
#define AT_(t, c) ((size_t)(b * AT + (t)) * AD + (size_t)h * AHD + (c))
            double S[AT][AT], P[AT][AT], eS[AT][AT], eP[AT][AT], dP[AT][AT], edP[AT][AT], dS[AT][AT], edS[AT][AT];
            for (int i = 0; i < AT; i++) {
                double mx = -INFINITY, z = 0;
                for (int j = 0; j <= i; j++) {
                    double acc = 0, mag = 0;
                    for (int k = 0; k < AHD; k++)
                        acc += (double)Q[AT_(i, k)] * Kt[AT_(j, k)], mag += fabs((double)Q[AT_(i, k)] * Kt[AT_(j, k)]);
                    S[i][j] = s * acc, eS[i][j] = u_prod(AHD) * s * mag;
                    ck_assert_msg(eS[i][j] <= 0.2, "the first-order bound is too wide for 5/4 to cover the rest");
                    if (S[i][j] > mx) mx = S[i][j];
                }
                for (int j = 0; j <= i; j++) z += P[i][j] = exp(S[i][j] - mx);
                double pe = 0;
                for (int j = 0; j <= i; j++) P[i][j] /= z, pe += P[i][j] * eS[i][j];
                for (int j = 0; j <= i; j++) eP[i][j] = P[i][j] * (eS[i][j] + pe) + 16 * eps * P[i][j];
            }
            for (int i = 0; i < AT; i++) {
                for (int d = 0; d < AHD; d++) {
                    double m = 0, e = 0;
                    for (int j = 0; j <= i; j++) m += P[i][j] * fabs(V[AT_(j, d)]), e += eP[i][j] * fabs(V[AT_(j, d)]);
                    bY[AT_(i, d)] = 1.25 * (u_prod(AT) * m + e);
                }
                double r = 0;
                for (int j = 0; j <= i; j++) {
                    double acc = 0, mag = 0;
                    for (int d = 0; d < AHD; d++)
                        acc += (double)g[AT_(i, d)] * V[AT_(j, d)], mag += fabs((double)g[AT_(i, d)] * V[AT_(j, d)]);
                    dP[i][j] = acc, edP[i][j] = u_prod(AHD) * mag, r += P[i][j] * acc;
                }
                double sum = 0;
                for (int l = 0; l <= i; l++) sum += eP[i][l] * fabs(dP[i][l]) + P[i][l] * edP[i][l];
                for (int j = 0; j <= i; j++) {
                    dS[i][j] = s * P[i][j] * (dP[i][j] - r);
                    edS[i][j] = s * (eP[i][j] * fabs(dP[i][j] - r) + P[i][j] * (edP[i][j] + sum)) +
                                16 * eps * s * P[i][j] * (fabs(dP[i][j]) + fabs(r));
                }
            }
            for (int j = 0; j < AT; j++)
                for (int d = 0; d < AHD; d++) {
                    double mV = 0, eV = 0, mK = 0, eK = 0;
                    for (int i = j; i < AT; i++) {
                        mV += P[i][j] * fabs(g[AT_(i, d)]), eV += eP[i][j] * fabs(g[AT_(i, d)]);
                        mK += fabs(dS[i][j] * Q[AT_(i, d)]), eK += edS[i][j] * fabs(Q[AT_(i, d)]);
                    }
                    bV[AT_(j, d)] = 1.25 * (u_prod(AT) * mV + eV);
                    bK[AT_(j, d)] = 1.25 * (u_prod(AT) * mK + eK);
                }
            for (int i = 0; i < AT; i++)
                for (int d = 0; d < AHD; d++) {
                    double m = 0, e = 0;
                    for (int j = 0; j <= i; j++) m += fabs(dS[i][j] * Kt[AT_(j, d)]), e += edS[i][j] * fabs(Kt[AT_(j, d)]);
                    bQ[AT_(i, d)] = 1.25 * (u_prod(AT) * m + e);
                }
#undef AT_
        }
}

START_TEST(test_attention_against_float32) {
    if (!have_bf16("bf16 attention")) return;
    int threads = 1 + _i, old = qkv_get_threads();
    qkv_set_threads(threads);
    int64_t sh[3] = {AB, AT, AD};
    qkv_rng r;
    qkv_rng_seed(&r, 3);
    qkv_tensor *q = qkv_test_randn(&r, 3, sh, true), *k = qkv_test_randn(&r, 3, sh, true);
    qkv_tensor *v = qkv_test_randn(&r, 3, sh, true);
    float *g = randf(&r, AB * AT * AD), *y[2], *dq[2], *dk[2], *dv[2];
    double s = 1 / sqrt((double)AHD);
    for (int p = 0; p < 2; p++) {
        qkv_ctx *c = new_ctx(p == 1);
        qkv_tensor_zero_grad(q), qkv_tensor_zero_grad(k), qkv_tensor_zero_grad(v);
        qkv_tensor *yt = qkv_sdp_attention(c, q, k, v, AH, NULL, true, s, NULL);
        ck_assert_msg(yt != NULL, "%s", qkv_ctx_error(c));
        y[p] = copy_of(yt->data, AB * AT * AD);
        backward_from(c, yt, g);
        dq[p] = copy_of(q->grad, AB * AT * AD), dk[p] = copy_of(k->grad, AB * AT * AD);
        dv[p] = copy_of(v->grad, AB * AT * AD);
        qkv_ctx_free(c);
    }
    static double bY[AB * AT * AD], bQ[AB * AT * AD], bK[AB * AT * AD], bV[AB * AT * AD];
    attention_bounds(q->data, k->data, v->data, g, s, bY, bQ, bK, bV);
    within("attention y", y[1], y[0], bY, AB * AT * AD);
    within("attention dq", dq[1], dq[0], bQ, AB * AT * AD);
    within("attention dk", dk[1], dk[0], bK, AB * AT * AD);
    within("attention dv", dv[1], dv[0], bV, AB * AT * AD);
    for (int p = 0; p < 2; p++) free(y[p]), free(dq[p]), free(dk[p]), free(dv[p]);
    free(g);
    qkv_tensor_free(q), qkv_tensor_free(k), qkv_tensor_free(v);
    qkv_set_threads(old);
}
END_TEST

/* gradient checks run in double: a bf16 context leaves double products double, bit for bit */
START_TEST(test_double_stays_double) {
    if (!have_bf16("bf16 and double")) return;
    int64_t xs[2] = {5, 6}, ws[2] = {4, 6};
    qkv_rng r;
    qkv_rng_seed(&r, 5);
    qkv_tensor *xf = qkv_test_randn(&r, 2, xs, false), *wf = qkv_test_randn(&r, 2, ws, false);
    qkv_tensor *x = qkv_tensor_convert(xf, QKV_F64), *w = qkv_tensor_convert(wf, QKV_F64);
    ck_assert(x && w && qkv_tensor_require_grad(x) == 0 && qkv_tensor_require_grad(w) == 0);
    double out[2][20], gx[2][30];
    for (int p = 0; p < 2; p++) {
        qkv_ctx *c = new_ctx(p == 1);
        qkv_tensor_zero_grad(x), qkv_tensor_zero_grad(w);
        qkv_tensor *y = qkv_linear(c, x, w, NULL);
        ck_assert_msg(y != NULL, "%s", qkv_ctx_error(c));
        memcpy(out[p], y->data, sizeof out[p]);
        ck_assert_int_eq(qkv_backward(c, qkv_sum_all(c, qkv_mul(c, y, y))), 0);
        memcpy(gx[p], x->grad, sizeof gx[p]);
        qkv_ctx_free(c);
    }
    ck_assert_int_eq(memcmp(out[0], out[1], sizeof out[0]), 0);
    ck_assert_int_eq(memcmp(gx[0], gx[1], sizeof gx[0]), 0);
    qkv_tensor_free(x), qkv_tensor_free(w), qkv_tensor_free(xf), qkv_tensor_free(wf);
}
END_TEST

/* a run in bf16: the same config, seed and threads give the same bits; the option is recorded
 * in config.json, the model file's metadata and summary.json's machine */
START_TEST(test_runs_deterministic_and_recorded) {
    if (!have_bf16("bf16 runs")) return;
    char tmp[256], cfg[512], out[4096];
    qkv_test_mkdtemp(tmp, sizeof tmp, "bf16");
    snprintf(cfg, sizeof cfg, "%s/recall.json", tmp);
    qkv_test_write_file(cfg, "{\"model\": {\"d_model\": 16, \"heads\": 2, \"layers\": 2, \"d_ff\": 32},\n"
                             " \"task\": {\"name\": \"recall\", \"pairs\": 3, \"keys\": 8, \"values\": 8},\n"
                             " \"train\": {\"steps\": 30, \"batch\": 8, \"eval_every\": 15, \"eval_examples\": 50}}\n");
    /* runs 0, 1 at one thread, 2, 3 at two, in bf16; 4 in float32 */
    for (int i = 0; i < 5; i++)
        ck_assert_msg(qkv_test_sh(out, sizeof out, true, "%s train %s --out %s/r%d --threads %d --quiet %s", qkv_test_bin(),
                                  cfg, tmp, i, i < 2 || i == 4 ? 1 : 2, i < 4 ? "--set train.precision=bf16" : "") == 0,
                      "%s", out);
    for (int i = 0; i < 4; i += 2)
        ck_assert_msg(qkv_test_sh(out, sizeof out, true, "cmp %s/r%d/model.safetensors %s/r%d/model.safetensors", tmp, i,
                                  tmp, i + 1) == 0,
                      "bf16 at %d thread(s): two runs trained different weights: %s", i ? 2 : 1, out);
    /* micro-batches whole on each thread: one thread and two give the same bits too */
    ck_assert_msg(qkv_test_sh(out, sizeof out, true, "cmp %s/r0/model.safetensors %s/r2/model.safetensors", tmp, tmp) == 0,
                  "bf16: --threads 1 and 2 trained different weights: %s", out);
    ck_assert_msg(qkv_test_sh(out, sizeof out, true, "cmp -s %s/r0/model.safetensors %s/r4/model.safetensors", tmp, tmp) != 0,
                  "bf16 and float32 products trained the same weights");
    char dir[300];
    snprintf(dir, sizeof dir, "%s/r0", tmp);
    char *summary = qkv_test_get(dir, "summary.json"), *config = qkv_test_get(dir, "config.json");
    ck_assert_ptr_nonnull(strstr(summary, "\"machine\":{"));
    /* and which bf16 kernel ran (their last bits differ), the one qkv --version names */
    char kernel[128];
    snprintf(kernel, sizeof kernel, "\"precision\":\"bf16\",\"bf16_kernel\":\"%s\"}", qkv_bf16_kernel());
    ck_assert_msg(strstr(strstr(summary, "\"machine\":{"), kernel), "no %s in %s", kernel, summary);
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "%s --version", qkv_test_bin()), 0);
    snprintf(kernel, sizeof kernel, "bf16 products: %s\n", qkv_bf16_kernel());
    ck_assert_msg(strstr(out, kernel), "%s", out);
    ck_assert_ptr_nonnull(strstr(config, "\"precision\":\t\"bf16\""));
    free(summary), free(config);
    /* the model file's metadata holds the effective config */
    ck_assert_int_eq(qkv_test_sh(out, sizeof out, true, "head -c 8192 %s/model.safetensors | grep -a -c "
                                 "'precision[^,]*bf16'", dir), 0);
    snprintf(dir, sizeof dir, "%s/r4", tmp);
    summary = qkv_test_get(dir, "summary.json");
    ck_assert_ptr_nonnull(strstr(summary, "\"precision\":\"f32\"}")); /* no bf16 kernel named */
    free(summary);
    qkv_test_rmtree(tmp);
}
END_TEST

Suite *bf16_suite(void) {
    Suite *s = suite_create("bf16");
    TCase *tc = tcase_create("bf16");
    tcase_set_timeout(tc, 30);
    tcase_add_loop_test(tc, test_product_rounds_to_nearest_even, 0, 2);
    tcase_add_loop_test(tc, test_product_same_bits_any_threads, 0, 2);
    tcase_add_test(tc, test_attention_scratch_holds_its_products);
    tcase_add_test(tc, test_linear_against_float32);
    tcase_add_loop_test(tc, test_matmul_against_float32, 0, 4);
    tcase_add_loop_test(tc, test_attention_against_float32, 0, 2);
    tcase_add_test(tc, test_double_stays_double);
    tcase_add_test(tc, test_runs_deterministic_and_recorded);
    suite_add_tcase(s, tc);
    return s;
}
