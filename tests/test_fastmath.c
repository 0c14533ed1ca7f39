/* The float kernels' vectorisable exp and normal CDF against double-precision libm. */
#include <check.h>
#include <math.h>

#include "tensor/fastmath.h"
#include "suites.h"

START_TEST(test_expf_fast_accuracy) {
    double worst = 0;
    for (double x = -87.0; x <= 88.0; x += 0.001) {
        float xf = (float)x;
        double ref = exp((double)xf), got = qkv_expf_fast(xf);
        double rel = fabs(got - ref) / ref;
        if (rel > worst) worst = rel;
    }
    ck_assert_msg(worst < 2.5e-7, "worst relative error %g", worst); /* ~2 ulp of float */
    ck_assert_float_eq(qkv_expf_fast(-INFINITY), 0.0f);
    ck_assert_float_eq(qkv_expf_fast(-100.0f), 0.0f);
    ck_assert(isfinite(qkv_expf_fast(1000.0f)));
    ck_assert_float_eq(qkv_expf_fast(0.0f), 1.0f);
}
END_TEST

START_TEST(test_normal_cdf_fast_accuracy) {
    double worst = 0;
    double worst_tail = 0;
    for (double x = -12.0; x <= 12.0; x += 0.0007) {
        float xf = (float)x;
        double ref = 0.5 * erfc(-(double)xf / sqrt(2.0)), got = qkv_normal_cdf_fast(xf);
        if (x >= -5) worst = fmax(worst, fabs(got - ref) / ref); /* Phi >= 2.9e-7 */
        else worst_tail = fmax(worst_tail, fabs(got - ref));     /* the far tail: absolute */
    }
    ck_assert_msg(worst < 5e-7, "worst relative error %g", worst);
    /* below x = -5, rounding of -z^2 in float leaves ~1e-5 relative: absolute error tiny */
    ck_assert_msg(worst_tail < 1e-11, "worst absolute tail error %g", worst_tail);
    ck_assert_float_eq(qkv_normal_cdf_fast(0.0f), 0.5f);
}
END_TEST

/* the density GELU's derivative uses, and that Phi is the same bits with or without it */
START_TEST(test_normal_pdf_fast_accuracy) {
    double worst = 0, worst_far = 0;
    for (double x = -16.0; x <= 16.0; x += 0.0007) {
        float xf = (float)x, pdf, cdf = qkv_normal_cdf_pdf_fast(xf, &pdf);
        double ref = exp(-0.5 * (double)xf * (double)xf) / sqrt(2 * 3.14159265358979323846);
        if (fabs(x) <= 5) worst = fmax(worst, fabs(pdf - ref) / ref);
        else worst_far = fmax(worst_far, fabs(pdf - ref));
        ck_assert(cdf == qkv_normal_cdf_fast(xf));
    }
    ck_assert_msg(worst < 2.5e-7, "worst relative error %g", worst); /* ~2 ulp, as exp */
    ck_assert_msg(worst_far < 1e-12, "worst absolute error beyond 5: %g", worst_far);
    float pdf;
    ck_assert(isnan(qkv_normal_cdf_pdf_fast(NAN, &pdf)) && isnan(pdf));
    ck_assert(qkv_normal_cdf_pdf_fast(INFINITY, &pdf) == 1.0f && pdf == 0.0f);
    ck_assert(qkv_normal_cdf_pdf_fast(-INFINITY, &pdf) == 0.0f && pdf == 0.0f);
}
END_TEST

Suite *fastmath_suite(void) {
    Suite *s = suite_create("fastmath");
    TCase *tc = tcase_create("accuracy");
    tcase_add_test(tc, test_expf_fast_accuracy);
    tcase_add_test(tc, test_normal_cdf_fast_accuracy);
    tcase_add_test(tc, test_normal_pdf_fast_accuracy);
    suite_add_tcase(s, tc);
    return s;
}
