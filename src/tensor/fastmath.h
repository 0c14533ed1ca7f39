/* Vectorisable float exp and normal CDF for the float kernels' hot loops.
 *
 * libm's expf/erff are scalar calls the compiler cannot vectorise; these use only
 * arithmetic, selects and an integer bit trick, so a loop over them vectorises.
 * Accuracy (checked in tests/test_tensor.c against double libm): exp within 2 ulp;
 * Phi(x) within 5e-7 relative for x >= -5 (below, absolutely within 1e-11); phi(x) within
 * 2.5e-7 relative for |x| <= 5. The double kernels (gradient checks) keep libm. */
#ifndef QKV_FASTMATH_H
#define QKV_FASTMATH_H

#include <stdint.h>
#include <string.h>

/* e^x for float x; 0 below -87.3 (also for -inf); saturates at e^88 above 88 */
static inline float qkv_expf_fast(float x) {
    float xc = x > 88.0f ? 88.0f : x; /* e^88 = 1.65e38: still finite after 2^n scaling */
    xc = xc < -87.3f ? -87.3f : xc;
    xc = xc == xc ? xc : 0.0f; /* NaN: a harmless n below (converting NaN to int is undefined) */
    /* n = round(x / ln 2) by the 1.5 * 2^23 trick (no rounding instruction needed) */
    float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    float r = xc - n * 0.693359375f + n * 2.12194440e-4f; /* ln 2 split in two: exact first product */
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    int32_t bits = ((int32_t)n + 127) << 23; /* 2^n */
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    float y = p * scale;
    return x < -87.3f ? 0.0f : x == x ? y : x;
}

/* Phi(x) = P(N(0,1) <= x) = erfc(-x / sqrt 2) / 2 and, through *pdf, the density
 * phi(x) = e^(-x^2/2) / sqrt(2 pi), which shares its Gaussian factor (GELU needs both).
 * erfc(z) = t F(t) e^(-z^2) for z = |x| / sqrt 2 >= 0, t = 1 / (1 + z/2), with F(t) =
 * erfcx(z) / t a smooth function on (0, 1] fitted by a degree-10 polynomial (relative error
 * 1.1e-8; scripts/fit_normal_cdf.py): no second exp. */
static inline float qkv_normal_cdf_pdf_fast(float x, float *pdf) {
    float a = x < 0 ? -x : x;
    a = a > 14.0f ? 14.0f : a; /* e^(-98): below the fast exp's range, so phi = 0; NaN stays NaN */
    float t = 1.0f / (1.0f + 0.35355339059327376f * a); /* 1 / (1 + z/2) */
    float f = 0.042352661f;
    f = f * t - 0.23085797f;
    f = f * t + 0.48617952f;
    f = f * t - 0.44697817f;
    f = f * t + 0.12708994f;
    f = f * t - 0.057232672f;
    f = f * t + 0.093000630f;
    f = f * t + 0.17537682f;
    f = f * t + 0.24688059f;
    f = f * t + 0.28209385f;
    f = f * t + 0.28209479f;
    /* -x^2/2 rounded in float would cost |x|^2 ulps of relative error: split a = ah + al with
     * ah of 12 significant bits, so ah^2/2 is exact, and e^(-a^2/2) = e^(-ah^2/2) e^u with
     * u = -al (a + ah)/2, |u| <= a^2 2^-11 <= 0.1: e^u from its Taylor series to u^4
     * (relative error < u^5/120 <= 1e-7, and < 3e-9 for |x| <= 5) */
    float ah;
    uint32_t ab;
    memcpy(&ab, &a, sizeof ab);
    ab &= 0xFFFFF000u;
    memcpy(&ah, &ab, sizeof ah);
    float u = -0.5f * ((a - ah) * (a + ah));
    float eu = 1.0f + u * (1.0f + u * (0.5f + u * (0.16666667f + u * 0.041666668f)));
    float g = qkv_expf_fast(-0.5f * (ah * ah)) * eu; /* e^(-x^2/2) */
    *pdf = 0.39894228040143268f * g;
    float erfc = t * f * g;
    return x < 0 ? 0.5f * erfc : 1.0f - 0.5f * erfc;
}

/* Phi(x) alone (the same bits as qkv_normal_cdf_pdf_fast's) */
static inline float qkv_normal_cdf_fast(float x) {
    float pdf;
    return qkv_normal_cdf_pdf_fast(x, &pdf);
}

#endif
