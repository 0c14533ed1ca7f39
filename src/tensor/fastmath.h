/* Vectorisable float exp and normal CDF for the float kernels' hot loops (softmax, attention,
 * cross-entropy; exact GELU, x Phi(x), and its derivative).
 *
 * libm's expf/erff are scalar calls the compiler cannot vectorise; these use only
 * arithmetic, selects, an integer bit trick and fused multiply-adds written as fmaf(), so a
 * loop over them vectorises. fmaf is exactly rounded by definition, so the result is the same
 * bits wherever it runs: one instruction in the kernels' x86-64-v3 and -v4 clones
 * (kernel_prelude.h), libm's exact software fmaf in the baseline clone and outside the kernels.
 *
 * Error bounds, in ulp of the exact value (an ulp below FLT_MIN is 2^-149), checked over
 * every float by tests/test_fastmath.c against double-precision libm (in `make test` on every
 * 61st bit pattern, and on all 2^32 by `make check-fastmath` in .ci/run):
 *   qkv_expf_fast(x): <= QKV_EXPF_ULP ulp for every x (inf above 88.72, 0 below -103.97, as expf);
 *   qkv_normal_cdf_fast(x): <= QKV_CDF_ULP ulp, its density (*pdf) <= QKV_PDF_ULP ulp, for every x
 *   (Phi misses 2 ulp: the rounding of t and the cancelling terms of F leave up to 5.9 ulp);
 *   qkv_expf_nonpos_fast(x), for x <= 0 or NaN: the bits of qkv_expf_fast;
 *   qkv_gelu_fast(x): GELU and its derivative with the bits of x Phi(x) and Phi + x phi from
 *   qkv_normal_cdf_pdf_fast (the same sweeps compare them bit for bit).
 * The double kernels (the gradient checks) keep libm's exp and erf. */
#ifndef QKV_FASTMATH_H
#define QKV_FASTMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* the bounds the tests hold the functions to (measured: tests/test_fastmath.c prints them) */
#define QKV_EXPF_ULP 2
#define QKV_CDF_ULP 6 /* Phi; its density phi: QKV_PDF_ULP */
#define QKV_PDF_ULP 3

/* always inlined: a kernel's loop vectorises only with the whole function in its body (and in
 * the vector clone it is compiled for) */
#define QKV_FASTMATH_FN static inline __attribute__((always_inline))

/* 2^k for an integer-valued float k in [-126, 127] */
QKV_FASTMATH_FN float qkv_pow2i_fast(float k) {
    int32_t bits = ((int32_t)k + 127) << 23;
    float s;
    memcpy(&s, &bits, sizeof s);
    return s;
}

/* e^r on |r| <= ln2 / 2: e^r - 1 - r = r^2 P(r) (Taylor-fitted minimax degree 5), one Horner
 * chain of fmaf shared by every exp below */
QKV_FASTMATH_FN float qkv__exp_poly(float r) {
    float p = 1.9875691500e-4f;
    p = fmaf(p, r, 1.3981999507e-3f);
    p = fmaf(p, r, 8.3334519073e-3f);
    p = fmaf(p, r, 4.1665795894e-2f);
    p = fmaf(p, r, 1.6666665459e-1f);
    p = fmaf(p, r, 5.0000001201e-1f);
    p = fmaf(p, r * r, r) + 1.0f;
    return p;
}

/* e^x for float x, within QKV_EXPF_ULP ulp everywhere (subnormal results included) */
QKV_FASTMATH_FN float qkv_expf_fast(float x) {
    float xc = x > 89.0f ? 89.0f : x; /* e^89 overflows to inf below, as expf does */
    xc = xc < -104.0f ? -104.0f : xc; /* e^-104 rounds to 0 below, as expf does */
    xc = xc == xc ? xc : 0.0f; /* NaN: a harmless n below (converting NaN to int is undefined) */
    /* n = round(x / ln 2) by the 1.5 * 2^23 trick (no rounding instruction needed); r = x - n ln 2
     * in two fused steps (ln 2 = hi + lo, hi with 16 significant bits: n hi is exact) */
    float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    float r = fmaf(n, -0.693145751953125f, xc);
    r = fmaf(n, -1.42860682030941723e-6f, r);
    float p = qkv__exp_poly(r);
    /* 2^n in two factors, each a normal float for n in [-150, 129]: the first product is exact,
     * the second rounds once (into the subnormals, or to inf, as the exact value would) */
    float n1 = (float)((int32_t)n / 2);
    float y = (p * qkv_pow2i_fast(n1)) * qkv_pow2i_fast(n - n1);
    return x == x ? y : x;
}

/* F(t) = erfcx(z) / t for t = 1 / (1 + z/2) in (0, 1]: the degree-10 fit of
 * qkv_normal_cdf_pdf_fast (scripts/fit_normal_cdf.py), one Horner chain of fmaf */
QKV_FASTMATH_FN float qkv__erfc_poly(float t) {
    float f = 0.042352661f;
    f = fmaf(f, t, -0.23085797f);
    f = fmaf(f, t, 0.48617952f);
    f = fmaf(f, t, -0.44697817f);
    f = fmaf(f, t, 0.12708994f);
    f = fmaf(f, t, -0.057232672f);
    f = fmaf(f, t, 0.093000630f);
    f = fmaf(f, t, 0.17537682f);
    f = fmaf(f, t, 0.24688059f);
    f = fmaf(f, t, 0.28209385f);
    f = fmaf(f, t, 0.28209479f);
    return f;
}

/* Phi(x) = P(N(0,1) <= x) = erfc(-x / sqrt 2) / 2 and, through *pdf, the density
 * phi(x) = e^(-x^2/2) / sqrt(2 pi), which shares its Gaussian factor (GELU needs both).
 * erfc(z) = t F(t) e^(-z^2) for z = |x| / sqrt 2 >= 0, t = 1 / (1 + z/2), with F(t) =
 * erfcx(z) / t a smooth function on (0, 1] fitted by a degree-10 polynomial (relative error
 * 1.1e-8; scripts/fit_normal_cdf.py): no second exp. */
QKV_FASTMATH_FN float qkv_normal_cdf_pdf_fast(float x, float *pdf) {
    float a = x < 0 ? -x : x;
    a = a > 15.0f ? 15.0f : a; /* Phi(-15) = 3.7e-51 and phi(15) = 7.4e-50: both round to 0; NaN stays NaN */
    float t = 1.0f / fmaf(0.35355339059327376f, a, 1.0f); /* 1 / (1 + z/2) */
    float f = qkv__erfc_poly(t);
    /* x^2 = hi + lo exactly (lo = fma(a, a, -hi)), so e^(-x^2/2) = e^(-hi/2) e^(-lo/2) with
     * |lo/2| <= 2^-25 hi: e^(-lo/2) = 1 - lo/2 to within 2^-51 */
    float hi = a * a, lo = fmaf(a, a, -hi);
    float g = qkv_expf_fast(-0.5f * hi);
    g = fmaf(g, -0.5f * lo, g); /* e^(-x^2/2) */
    *pdf = 0.39894228040143268f * g;
    /* erfc / 2 = (t F / 2) g: the normal factors first, so a subnormal result rounds once */
    float half_erfc = (0.5f * (t * f)) * g;
    return x < 0 ? half_erfc : 1.0f - half_erfc;
}

/* Phi(x) alone (the same bits as qkv_normal_cdf_pdf_fast's) */
QKV_FASTMATH_FN float qkv_normal_cdf_fast(float x) {
    float pdf;
    return qkv_normal_cdf_pdf_fast(x, &pdf);
}

/* e^w for w in [-112.5, 0] or NaN (a NaN gives a NaN): qkv_expf_fast's steps without its
 * clamps and blends, the same bits (tests/test_fastmath.c). Its 2^n (n in [-162, 0]) comes from
 * the rounding constant's bits as (p 2^(n+37)) 2^-37, whose first product is a normal float
 * (exact) and whose second rounds once, to the same float as the generic two factors give;
 * below -104, where the generic exp stops at e^-104, both round to 0. */
QKV_FASTMATH_FN float qkv__expf_core(float w) {
    float m = w * 1.44269504088896341f + 12582912.0f; /* 1.5 * 2^23 + n: its bits 0x4B400000 + n */
    float n = m - 12582912.0f;
    float r = fmaf(n, -0.693145751953125f, w);
    r = fmaf(n, -1.42860682030941723e-6f, r);
    float p = qkv__exp_poly(r);
    uint32_t mb;
    memcpy(&mb, &m, sizeof mb);
    uint32_t sb = (mb + 164u) << 23; /* (n + 37 + 127) << 23: 2^(n+37), the low bits of 0x4B400000 being 0 */
    float s;
    memcpy(&s, &sb, sizeof s);
    return (p * s) * 0x1p-37f;
}

/* e^x for x <= 0 (-inf included) or NaN, the bits of qkv_expf_fast: a softmax's exp(x - max) */
QKV_FASTMATH_FN float qkv_expf_nonpos_fast(float x) {
    return qkv__expf_core(x < -104.0f ? -104.0f : x); /* a NaN passes */
}

/* GELU x Phi(x) and (through *d) its derivative Phi(x) + x phi(x): the same bits as from
 * qkv_normal_cdf_pdf_fast (`x * cdf`, `cdf + x * pdf`; every float: tests/test_fastmath.c), with
 * only the steps GELU needs:
 * - no NaN blends: |x| is clamped by a comparison a NaN fails, so Phi(NaN) is Phi(15), a
 *   number, and x Phi(x) and Phi + x phi are NaN through x;
 * - exp's argument -x^2/2 lies in [-112.5, 0]: qkv__expf_core, no clamps. */
QKV_FASTMATH_FN float qkv_gelu_fast(float x, float *d) {
    /* a = min(|x|, 15), a NaN to 15: on the bits, where a NaN's (above inf's) are the largest */
    uint32_t ab;
    memcpy(&ab, &x, sizeof ab);
    ab &= 0x7FFFFFFFu;
    ab = ab < 0x41700000u ? ab : 0x41700000u; /* 15.0f */
    float a;
    memcpy(&a, &ab, sizeof a);
    float t = 1.0f / fmaf(0.35355339059327376f, a, 1.0f);
    float f = qkv__erfc_poly(t);
    float hi = a * a, lo = fmaf(a, a, -hi);
    float g = qkv__expf_core(-0.5f * hi); /* -x^2/2 in [-112.5, 0] */
    g = fmaf(g, -0.5f * lo, g); /* e^(-x^2/2) */
    float pdf = 0.39894228040143268f * g;
    float half_erfc = (0.5f * (t * f)) * g;
    float cdf = x < 0 ? half_erfc : 1.0f - half_erfc;
    *d = cdf + x * pdf;
    return x * cdf;
}

#endif
