/* Programmer-error checks (tensor/check.h): each fires (SIGABRT, with its message) where a caller
 * inside qkv breaks a kernel's or the pool's precondition. Compiled in unless NDEBUG, as the
 * test build is; a check that did not fire would let the test end normally, and Check counts
 * that as a failure of a test that expects the signal. */
#include <check.h>
#include <stdio.h>
#include <signal.h>
#include <stdint.h>

#include "autograd/tape.h"
#include "tensor/check.h"
#include "tensor/kernels.h"
#include "tensor/parallel.h"
#include "suites.h"

/* the check's message is expected: not in the test log */
static void quiet_stderr(void) {
    if (!freopen("/dev/null", "w", stderr)) return;
}

/* an int tensor's data sent to a float kernel through the dispatch */
START_TEST(test_kcall_refuses_int_dtype) {
    quiet_stderr();
    int32_t x[4] = {1, 2, 3, 4}, y[4];
    qkv_ctx *ctx = qkv_ctx_new();
    QKV_KCALL(ctx, QKV_I32, softmax, 1, 4, (const void *)x, (void *)y);
    qkv_ctx_free(ctx);
}
END_TEST

/* a row stride shorter than the row it strides over */
START_TEST(test_gemm_short_stride) {
    quiet_stderr();
    float a[6] = {0}, b[6] = {0}, c[4] = {0};
    qkv__k_gemm_ld_f32(0, 0, 2, 2, 3, a, 2, b, 2, 0.0f, c, 2); /* lda 2 < K = 3 */
}
END_TEST

/* query heads that are not a multiple of the key heads */
START_TEST(test_sdpa_heads) {
    quiet_stderr();
    float q[12] = {0}, k[8] = {0}, v[8] = {0}, y[12], p[9];
    qkv_sdpa_shape s = {.B = 1, .T = 1, .H = 3, .hd = 4, .kvH = 2};
    qkv__k_sdpa_f32(&s, q, k, v, p, y);
}
END_TEST

/* a job's function that drives the pool again (without going serial) while its own job is in
 * flight: the one-driver rule */
static void nested(void *arg, int64_t b, int64_t e) {
    (void)arg; (void)b; (void)e;
}
static void drives_again(void *arg, int64_t b, int64_t e) {
    (void)arg; (void)b; (void)e;
    qkv__parallel_for(1024, 1, nested, NULL);
}
START_TEST(test_pool_one_driver) {
    quiet_stderr();
    qkv_set_threads(2);
    qkv__parallel_for(1024, 1, drives_again, NULL);
}
END_TEST

/* the same nesting is allowed once the job's thread computes alone (qkv__serial): no check fires */
static void drives_serially(void *arg, int64_t b, int64_t e) {
    (void)arg; (void)b; (void)e;
    int prev = qkv__serial(1);
    qkv__parallel_for(1024, 1, nested, NULL);
    qkv__serial(prev);
}
START_TEST(test_pool_serial_nesting_allowed) {
    qkv_set_threads(2);
    qkv__parallel_for(1024, 1, drives_serially, NULL);
    qkv__parallel_for(1024, 1, nested, NULL); /* and the pool is free again */
    qkv_set_threads(1);
}
END_TEST

Suite *checks_suite(void) {
    Suite *s = suite_create("checks");
    TCase *tc = tcase_create("checks");
#ifndef NDEBUG
    tcase_add_test_raise_signal(tc, test_kcall_refuses_int_dtype, SIGABRT);
    tcase_add_test_raise_signal(tc, test_gemm_short_stride, SIGABRT);
    tcase_add_test_raise_signal(tc, test_sdpa_heads, SIGABRT);
    tcase_add_test_raise_signal(tc, test_pool_one_driver, SIGABRT);
#endif
    tcase_add_test(tc, test_pool_serial_nesting_allowed);
    suite_add_tcase(s, tc);
    return s;
}
