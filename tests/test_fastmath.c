/* The float kernels' vectorisable exp and normal CDF (tensor/fastmath.h) against
 * double-precision libm, in ulp, over the whole float range: `make test` checks every 61st
 * bit pattern of the 2^32 (and every float near the places where the methods switch),
 * `make check-fastmath` (QKV_FASTMATH_ALL=K/N in N processes; in .ci/run) all of them. The functions are also
 * checked to give the same bits in the kernels' vector clones as in plain scalar code. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/fastmath.h"
#include "tensor/kernels.h"
#include "tensor/vector_clones.h"
#include "suites.h"

static float from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* |got - exact| in ulp of the exact value in float (2^-149 below FLT_MIN); an exact value that
 * rounds to inf must give inf (0 ulp) and a finite one a finite result (else 1e30) */
static double ulp_error(float got, double exact) {
    if (isnan(exact)) return isnan(got) ? 0 : 1e30;
    if (isinf((float)exact)) return got == (float)exact ? 0 : 1e30;
    if (!isfinite(got)) return 1e30;
    uint64_t b;
    memcpy(&b, &exact, sizeof b);
    int e = (int)((b >> 52) & 0x7FF) - 1023 - 23; /* |exact| in [2^(e+23), 2^(e+24)): ulp 2^e */
    e = e < -149 ? -149 : e;
    uint64_t ub = (uint64_t)(e + 1023) << 52; /* 2^e as a double's bits */
    double ulp;
    memcpy(&ulp, &ub, sizeof ulp);
    return fabs((double)got - exact) / ulp;
}

/* the functions as the kernels run them: in the vector clones, over an array */
QKV_VECTOR_CLONES
static void exp_array(int n, const float *x, float *y) {
    for (int i = 0; i < n; i++) y[i] = qkv_expf_fast(x[i]);
}
QKV_VECTOR_CLONES
static void cdf_array(int n, const float *x, float *cdf, float *pdf) {
    for (int i = 0; i < n; i++) cdf[i] = qkv_normal_cdf_pdf_fast(x[i], &pdf[i]);
}
QKV_VECTOR_CLONES
static void exp_nonpos_array(int n, const float *x, float *y) {
    for (int i = 0; i < n; i++) y[i] = qkv_expf_nonpos_fast(x[i]);
}
QKV_VECTOR_CLONES
static void gelu_array(int n, const float *x, float *y, float *d) {
    for (int i = 0; i < n; i++) y[i] = qkv_gelu_fast(x[i], &d[i]);
}

/* GELU from Phi and phi as qkv_gelu_fast promises its bits: x Phi(x) and Phi + x phi */
static void gelu_composed(float x, float cdf, float pdf, float *y, float *d) {
    *y = x * cdf;
    *d = cdf + x * pdf;
}

/* the same float, or both NaN */
static int same_bits(float a, float b) {
    return isnan(a) ? isnan(b) : memcmp(&a, &b, sizeof a) == 0;
}

/* how many of x[0..n) whose GELU (y, d) differs from the composed one's bits (c, p: Phi, phi) */
static uint64_t gelu_mismatches(int n, const float *x, const float *c, const float *p, const float *y, const float *d,
                                float *at) {
    uint64_t bad = 0;
    for (int i = 0; i < n; i++) {
        float gy, gd;
        gelu_composed(x[i], c[i], p[i], &gy, &gd);
        if (!same_bits(gy, y[i]) || !same_bits(gd, d[i])) {
            if (!bad) *at = x[i];
            bad++;
        }
    }
    return bad;
}

#define CHUNK 4096

typedef struct {
    double exp, cdf, pdf;
    float at_exp, at_cdf, at_pdf, at_gelu, at_exp_nonpos;
    uint64_t n, gelu_bad, exp_nonpos_bad;
} worst_t;

static void note(double err, float x, double *worst, float *at) {
    if (err > *worst) { *worst = err; *at = x; }
}

/* the bit patterns u = start, start + stride, ... below end, in chunks */
static void sweep(uint64_t start, uint64_t end, uint64_t stride, worst_t *w) {
    static float x[CHUNK], y[CHUNK], c[CHUNK], p[CHUNK], gy[CHUNK], gd[CHUNK], e0[CHUNK];
    for (uint64_t u = start; u < end;) {
        int n = 0;
        for (; n < CHUNK && u < end; n++, u += stride) x[n] = from_bits((uint32_t)u);
        exp_array(n, x, y);
        cdf_array(n, x, c, p);
        gelu_array(n, x, gy, gd);
        float at = 0;
        uint64_t bad = gelu_mismatches(n, x, c, p, gy, gd, &at);
        if (bad && !w->gelu_bad) w->at_gelu = at;
        w->gelu_bad += bad;
        exp_nonpos_array(n, x, e0); /* its domain: x <= 0 and NaN */
        for (int i = 0; i < n; i++)
            if (!(x[i] > 0) && !same_bits(e0[i], y[i]) && !w->exp_nonpos_bad++) w->at_exp_nonpos = x[i];
        for (int i = 0; i < n; i++) {
            double xd = x[i];
            note(ulp_error(y[i], exp(xd)), x[i], &w->exp, &w->at_exp);
            note(ulp_error(c[i], 0.5 * erfc(-xd / sqrt(2.0))), x[i], &w->cdf, &w->at_cdf);
            note(ulp_error(p[i], exp(-0.5 * xd * xd) / sqrt(2 * 3.14159265358979323846)), x[i], &w->pdf, &w->at_pdf);
        }
        w->n += (uint64_t)n;
    }
}

/* every float within `count` patterns of x, both signs */
static void around(float x, uint32_t count, worst_t *w) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    for (uint64_t sign = 0; sign < 2; sign++) {
        uint64_t c = (u & 0x7FFFFFFFu) | (sign << 31);
        sweep(c >= count ? c - count : 0, c + count, 1, w);
    }
}

START_TEST(test_fastmath_ulp_whole_range) {
    worst_t w = {0};
    /* QKV_FASTMATH_ALL=K/N: the bit patterns K, K + N, K + 2N, ... (N processes cover all 2^32) */
    const char *all_env = getenv("QKV_FASTMATH_ALL");
    unsigned part = 0, parts = 0;
    int all = all_env && sscanf(all_env, "%u/%u", &part, &parts) == 2 && parts > 0 && part < parts;
    ck_assert_msg(!all_env || all, "QKV_FASTMATH_ALL=%s: expected K/N, 0 <= K < N", all_env);
    sweep(all ? part : 0, UINT64_C(1) << 32, all ? parts : 61, &w);
    if (!all) /* where the methods switch: exp's overflow, underflow and 0; Phi's clamp and tails */
        for (size_t i = 0; i < 8; i++)
            around((float[]){88.72f, 103.97f, 87.33f, 0.0f, 1.0f, 15.0f, 12.95f, 5.0f}[i], 1u << 16, &w);
    fprintf(stderr, "fastmath: %llu floats; worst exp %.3f ulp (x = %a), Phi %.3f ulp (x = %a), phi %.3f ulp (x = %a)\n",
            (unsigned long long)w.n, w.exp, (double)w.at_exp, w.cdf, (double)w.at_cdf, w.pdf, (double)w.at_pdf);
    ck_assert_msg(w.exp <= QKV_EXPF_ULP, "exp: %.3f ulp at x = %a", w.exp, (double)w.at_exp);
    ck_assert_msg(w.cdf <= QKV_CDF_ULP, "Phi: %.3f ulp at x = %a", w.cdf, (double)w.at_cdf);
    ck_assert_msg(w.pdf <= QKV_PDF_ULP, "phi: %.3f ulp at x = %a", w.pdf, (double)w.at_pdf);
    ck_assert_msg(w.exp_nonpos_bad == 0, "qkv_expf_nonpos_fast: %llu floats <= 0 differ from qkv_expf_fast (first x = %a)",
                  (unsigned long long)w.exp_nonpos_bad, (double)w.at_exp_nonpos);
    ck_assert_msg(w.gelu_bad == 0, "qkv_gelu_fast: %llu floats differ from x Phi(x), Phi + x phi (first x = %a)",
                  (unsigned long long)w.gelu_bad, (double)w.at_gelu);
}
END_TEST

/* the relative and absolute bounds the earlier versions were held to, kept beside the ulp bounds
 * (an ulp bound alone is up to twice as loose relative to the value) */
START_TEST(test_fastmath_relative_bounds) {
    double worst = 0;
    for (double x = -87.0; x <= 88.0; x += 0.001) {
        float xf = (float)x;
        double ref = exp((double)xf);
        worst = fmax(worst, fabs(qkv_expf_fast(xf) - ref) / ref);
    }
    ck_assert_msg(worst < 2.5e-7, "exp: worst relative error %g", worst);
    double wc = 0, wt = 0;
    for (double x = -12.0; x <= 12.0; x += 0.0007) {
        float xf = (float)x;
        double ref = 0.5 * erfc(-(double)xf / sqrt(2.0)), got = qkv_normal_cdf_fast(xf);
        if (x >= -5) wc = fmax(wc, fabs(got - ref) / ref); /* Phi >= 2.9e-7 */
        else wt = fmax(wt, fabs(got - ref));
    }
    ck_assert_msg(wc < 5e-7, "Phi: worst relative error %g", wc);
    ck_assert_msg(wt < 1e-11, "Phi: worst absolute tail error %g", wt);
    double wp = 0, wf = 0;
    for (double x = -16.0; x <= 16.0; x += 0.0007) {
        float xf = (float)x, pdf, cdf = qkv_normal_cdf_pdf_fast(xf, &pdf);
        double ref = exp(-0.5 * (double)xf * (double)xf) / sqrt(2 * 3.14159265358979323846);
        if (fabs(x) <= 5) wp = fmax(wp, fabs(pdf - ref) / ref);
        else wf = fmax(wf, fabs(pdf - ref));
        ck_assert(cdf == qkv_normal_cdf_fast(xf));
    }
    ck_assert_msg(wp < 2.5e-7, "phi: worst relative error %g", wp);
    ck_assert_msg(wf < 1e-12, "phi: worst absolute error beyond 5: %g", wf);
}
END_TEST

/* the limits and special values, exactly as expf gives them */
START_TEST(test_fastmath_special_values) {
    ck_assert(qkv_expf_fast(-INFINITY) == 0.0f);
    ck_assert(qkv_expf_fast(-1000.0f) == 0.0f);
    ck_assert(qkv_expf_fast(INFINITY) == INFINITY);
    ck_assert(qkv_expf_fast(89.0f) == INFINITY && qkv_expf_fast(1000.0f) == INFINITY);
    ck_assert(qkv_expf_fast(88.7f) < INFINITY);
    ck_assert(qkv_expf_fast(-100.0f) > 0 && qkv_expf_fast(-100.0f) < FLT_MIN); /* subnormal, as expf */
    ck_assert(qkv_expf_fast(0.0f) == 1.0f);
    ck_assert(isnan(qkv_expf_fast(NAN)));
    ck_assert(qkv_expf_nonpos_fast(-INFINITY) == 0.0f && qkv_expf_nonpos_fast(-1000.0f) == 0.0f);
    ck_assert(qkv_expf_nonpos_fast(0.0f) == 1.0f && qkv_expf_nonpos_fast(-0.0f) == 1.0f);
    ck_assert(isnan(qkv_expf_nonpos_fast(NAN)) && isnan(qkv_expf_nonpos_fast(-NAN)));
    float pdf;
    ck_assert(qkv_normal_cdf_fast(0.0f) == 0.5f);
    ck_assert(isnan(qkv_normal_cdf_pdf_fast(NAN, &pdf)) && isnan(pdf));
    ck_assert(qkv_normal_cdf_pdf_fast(INFINITY, &pdf) == 1.0f && pdf == 0.0f);
    ck_assert(qkv_normal_cdf_pdf_fast(-INFINITY, &pdf) == 0.0f && pdf == 0.0f);
}
END_TEST

/* the vector clone the kernels take and plain scalar code (libm's fmaf) give the same bits;
 * and the GELU kernel is x Phi(x) with derivative Phi + x phi, from these functions */
START_TEST(test_fastmath_same_bits_every_path) {
    enum { N = 1 << 16 };
    static float x[N], y[N], c[N], p[N], g[N], d[N];
    uint32_t s = 12345;
    for (int i = 0; i < N; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = i < N / 2 ? from_bits(s) : (float)((int32_t)s) * 1e-8f; /* any pattern; then |x| < 21 */
    }
    exp_array(N, x, y);
    cdf_array(N, x, c, p);
    qkv__k_unary_f32(QKV_UN_GELU, N, x, g, d);
    for (int i = 0; i < N; i++) {
        float pdf, cdf = qkv_normal_cdf_pdf_fast(x[i], &pdf), e = qkv_expf_fast(x[i]);
        ck_assert_msg(memcmp(&e, &y[i], 4) == 0, "exp(%a): scalar %a, vector %a", (double)x[i], (double)e, (double)y[i]);
        ck_assert_msg(memcmp(&cdf, &c[i], 4) == 0 && memcmp(&pdf, &p[i], 4) == 0, "Phi(%a) differs", (double)x[i]);
        float gy = x[i] * cdf, gd = cdf + x[i] * pdf;
        ck_assert_msg(isnan(gy) ? isnan(g[i]) : memcmp(&gy, &g[i], 4) == 0, "GELU(%a)", (double)x[i]);
        ck_assert_msg(isnan(gd) ? isnan(d[i]) : memcmp(&gd, &d[i], 4) == 0, "GELU'(%a)", (double)x[i]);
    }
}
END_TEST

/* GELU whose derivative takes phi as e^(-x^2/2) of the rounded x^2 (without the split x^2 =
 * hi + lo): within a few ulp of the right one, and the bit comparison above must see it */
QKV_VECTOR_CLONES
static void gelu_without_lo_array(int n, const float *x, float *y, float *d) {
    for (int i = 0; i < n; i++) {
        float cdf = qkv_normal_cdf_fast(x[i]), pdf = 0.39894228040143268f * qkv_expf_fast(-0.5f * (x[i] * x[i]));
        y[i] = x[i] * cdf;
        d[i] = cdf + x[i] * pdf;
    }
}

START_TEST(test_fastmath_gelu_mismatch_is_seen) {
    enum { N = 4096 };
    static float x[N], c[N], p[N], y[N], d[N];
    for (int i = 0; i < N; i++) x[i] = -6.0f + 12.0f * (float)i / N;
    cdf_array(N, x, c, p);
    gelu_array(N, x, y, d);
    float at = 0;
    ck_assert_uint_eq(gelu_mismatches(N, x, c, p, y, d, &at), 0);
    gelu_without_lo_array(N, x, y, d);
    ck_assert_uint_gt(gelu_mismatches(N, x, c, p, y, d, &at), N / 100);
}
END_TEST

Suite *fastmath_suite(void) {
    Suite *s = suite_create("fastmath");
    TCase *tc = tcase_create("accuracy");
    tcase_set_timeout(tc, 600); /* QKV_FASTMATH_ALL=1: all 2^32 floats */
    tcase_add_test(tc, test_fastmath_ulp_whole_range);
    tcase_add_test(tc, test_fastmath_special_values);
    tcase_add_test(tc, test_fastmath_relative_bounds);
    tcase_add_test(tc, test_fastmath_same_bits_every_path);
    tcase_add_test(tc, test_fastmath_gelu_mismatch_is_seen);
    suite_add_tcase(s, tc);
    return s;
}
