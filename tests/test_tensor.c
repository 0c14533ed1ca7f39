/* Forward values: tensor creation and shape helpers, the seeded RNG, and every op in
 * F32 and F64, each against a naive double-precision reference loop written here (or a
 * hand-derived constant), never against the library's own kernels. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/ops.h"
#include "suites.h"
#include "tensor/kernels.h"
#include "tensor/rng.h"
#include "tensor/tensor.h"
#include "testutil.h"

/* ---- helpers ----------------------------------------------------------------------- */

/* loop tests run once per float dtype: _i = 0 is F32, _i = 1 is F64 */
#define DT ((_i) == 0 ? QKV_F32 : QKV_F64)
#define MAXN 1024

/* test data: qkv_test_seed and qkv_test_uniform (testutil.h); closeness: qkv_test_near, with
 * these tolerances: float kernels vs a double reference, or double vs double */
#define TOL(dt) ((dt) == QKV_F32 ? 2e-5 : 1e-12)

/* an arena tensor holding vals rounded to dt; the rounded values are written back, so
 * reference loops see exactly what the kernels see */
static qkv_tensor *mk(qkv_ctx *ctx, qkv_dtype dt, int nd, const int64_t *shape, double *vals) {
    qkv_tensor *t = qkv_ctx_tensor(ctx, dt, nd, shape);
    ck_assert_ptr_nonnull(t);
    for (int64_t i = 0; i < t->numel; i++) {
        qkv_tensor_set(t, i, vals[i]);
        vals[i] = qkv_tensor_get(t, i);
    }
    return t;
}

static qkv_tensor *mk_rand(qkv_ctx *ctx, qkv_dtype dt, int nd, const int64_t *shape, double *vals,
                           double lo, double hi) {
    int64_t n = qkv_shape_numel(nd, shape);
    ck_assert(n > 0 && n <= MAXN);
    for (int64_t i = 0; i < n; i++) vals[i] = qkv_test_uniform(lo, hi);
    return mk(ctx, dt, nd, shape, vals);
}

static void expect_ok(const qkv_ctx *ctx) {
    ck_assert_msg(qkv_ctx_ok(ctx), "unexpected error: %s", qkv_ctx_error(ctx));
}

static void expect_shape(const qkv_tensor *t, int nd, const int64_t *shape, const char *what) {
    ck_assert_msg(t != NULL, "%s: NULL result", what);
    ck_assert_msg(t->ndim == nd, "%s: ndim %d, expected %d", what, t->ndim, nd);
    int64_t n = 1;
    for (int i = 0; i < nd; i++) {
        ck_assert_msg(t->shape[i] == shape[i], "%s: dim %d is %lld, expected %lld", what, i,
                      (long long)t->shape[i], (long long)shape[i]);
        n *= shape[i];
    }
    for (int i = nd; i < QKV_MAX_DIMS; i++)
        ck_assert_msg(t->shape[i] == 1, "%s: unused dim %d is %lld", what, i, (long long)t->shape[i]);
    ck_assert_msg(t->numel == n, "%s: numel %lld, expected %lld", what, (long long)t->numel,
                  (long long)n);
}

static void expect_vals(const qkv_tensor *t, const double *ref, int64_t n, double tol,
                        const char *what) {
    ck_assert_msg(t != NULL, "%s: NULL result", what);
    ck_assert_msg(t->numel == n, "%s: numel %lld, expected %lld", what, (long long)t->numel,
                  (long long)n);
    for (int64_t i = 0; i < n; i++) { /* one assertion per call: Check marks every pass */
        double g = qkv_tensor_get(t, i);
        if (!qkv_test_near(g, ref[i], tol))
            ck_abort_msg("%s [%s] element %lld: got %.17g, expected %.17g", what,
                         qkv_dtype_name(t->dtype), (long long)i, g, ref[i]);
    }
}

/* bit-for-bit (pure data movement) */
static void expect_exact(const qkv_tensor *t, const double *ref, int64_t n, const char *what) {
    ck_assert_msg(t != NULL, "%s: NULL result", what);
    ck_assert_msg(t->numel == n, "%s: numel %lld, expected %lld", what, (long long)t->numel,
                  (long long)n);
    for (int64_t i = 0; i < n; i++) {
        double g = qkv_tensor_get(t, i);
        if (!(g == ref[i]))
            ck_abort_msg("%s [%s] element %lld: got %.17g, expected %.17g", what,
                         qkv_dtype_name(t->dtype), (long long)i, g, ref[i]);
    }
}

#define ASSERT_HAS(msg, sub)                                                                   \
    ck_assert_msg(strstr((msg), (sub)) != NULL, "message \"%s\" does not contain \"%s\"", (msg), \
                  (sub))

/* shape right-aligned into 4 dims */
static void pad4(int nd, const int64_t *s, int64_t out[4]) {
    for (int i = 0; i < 4; i++) {
        int k = i - (4 - nd);
        out[i] = k >= 0 ? s[k] : 1;
    }
}

static int64_t off4(const int64_t s[4], const int64_t ix[4]) {
    return ((ix[0] * s[1] + ix[1]) * s[2] + ix[2]) * s[3] + ix[3];
}

/* ---- tensor creation and shapes ---------------------------------------------------- */

START_TEST(test_dtype_helpers) {
    ck_assert_uint_eq(qkv_dtype_size(QKV_F32), 4);
    ck_assert_uint_eq(qkv_dtype_size(QKV_F64), 8);
    ck_assert_uint_eq(qkv_dtype_size(QKV_I32), 4);
    ck_assert_str_eq(qkv_dtype_name(QKV_F32), "F32");
    ck_assert_str_eq(qkv_dtype_name(QKV_F64), "F64");
    ck_assert_str_eq(qkv_dtype_name(QKV_I32), "I32");
    ck_assert(qkv_dtype_is_float(QKV_F32) && qkv_dtype_is_float(QKV_F64));
    ck_assert(!qkv_dtype_is_float(QKV_I32));
}
END_TEST

START_TEST(test_zeros_and_full) {
    const int64_t shape[3] = {2, 3, 4};
    const qkv_dtype dts[3] = {QKV_F32, QKV_F64, QKV_I32};
    for (int d = 0; d < 3; d++) {
        qkv_tensor *z = qkv_tensor_zeros(dts[d], 3, shape);
        expect_shape(z, 3, shape, "zeros");
        ck_assert_int_eq(z->dtype, dts[d]);
        ck_assert_ptr_nonnull(z->data);
        ck_assert_ptr_null(z->grad);
        ck_assert(!z->requires_grad);
        ck_assert_uint_eq(z->gen, 0);
        for (int64_t i = 0; i < z->numel; i++) ck_assert(qkv_tensor_get(z, i) == 0.0);
        qkv_tensor_free(z);

        qkv_tensor *f = qkv_tensor_full(dts[d], 3, shape, 7.0);
        expect_shape(f, 3, shape, "full");
        for (int64_t i = 0; i < f->numel; i++) ck_assert(qkv_tensor_get(f, i) == 7.0);
        qkv_tensor_free(f);
    }
    /* value rounding follows the dtype */
    qkv_tensor *f32 = qkv_tensor_full(QKV_F32, 1, shape, 0.1);
    qkv_tensor *f64 = qkv_tensor_full(QKV_F64, 1, shape, 0.1);
    ck_assert(((float *)f32->data)[1] == 0.1f);
    ck_assert(((double *)f64->data)[1] == 0.1);
    qkv_tensor_free(f32);
    qkv_tensor_free(f64);
    /* a scalar: ndim 0, one element */
    qkv_tensor *s = qkv_tensor_full(QKV_F64, 0, NULL, -2.5);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(s->ndim, 0);
    ck_assert_int_eq(s->numel, 1);
    ck_assert(qkv_tensor_get(s, 0) == -2.5);
    qkv_tensor_free(s);
}
END_TEST

START_TEST(test_from_buffer_copies) {
    const int64_t shape[2] = {2, 3};
    float bf[6] = {1, 2, 3, 4, 5, 6.5f};
    double bd[6] = {-1, 0.25, 3, 1e300, -5, 6};
    int32_t bi[6] = {-7, 0, 1, 2, INT32_MAX, INT32_MIN};
    qkv_tensor *tf = qkv_tensor_from_buffer(QKV_F32, 2, shape, bf);
    qkv_tensor *td = qkv_tensor_from_buffer(QKV_F64, 2, shape, bd);
    qkv_tensor *ti = qkv_tensor_from_buffer(QKV_I32, 2, shape, bi);
    expect_shape(tf, 2, shape, "from_buffer F32");
    expect_shape(td, 2, shape, "from_buffer F64");
    expect_shape(ti, 2, shape, "from_buffer I32");
    ck_assert_ptr_ne(tf->data, bf);
    for (int i = 0; i < 6; i++) {
        ck_assert(qkv_tensor_get(tf, i) == bf[i]);
        ck_assert(qkv_tensor_get(td, i) == bd[i]);
        ck_assert(qkv_tensor_get(ti, i) == bi[i]);
    }
    bf[0] = 100; /* a copy: later changes to the buffer do not show */
    bd[0] = 100;
    ck_assert(qkv_tensor_get(tf, 0) == 1.0);
    ck_assert(qkv_tensor_get(td, 0) == -1.0);
    qkv_tensor_free(tf);
    qkv_tensor_free(td);
    qkv_tensor_free(ti);
}
END_TEST

START_TEST(test_wrap_shares_memory) {
    const int64_t shape[2] = {3, 2};
    double *buf = malloc(6 * sizeof *buf);
    ck_assert_ptr_nonnull(buf);
    for (int i = 0; i < 6; i++) buf[i] = i * 1.5;
    qkv_tensor *t = qkv_tensor_wrap(QKV_F64, 2, shape, buf);
    expect_shape(t, 2, shape, "wrap");
    ck_assert_ptr_eq(t->data, buf);
    buf[4] = -9;
    ck_assert(qkv_tensor_get(t, 4) == -9.0);
    qkv_tensor_set(t, 1, 42);
    ck_assert(buf[1] == 42.0);
    qkv_tensor_free(t); /* frees the header only: buf is still ours (ASan catches a double free) */
    buf[0] = 1;
    free(buf);
}
END_TEST

START_TEST(test_convert) {
    const int64_t shape[3] = {2, 1, 3};
    double vals[6] = {0.1, -2.5, 1e-3, 3.0e10, -0.0, 7};
    qkv_tensor *d = qkv_tensor_from_buffer(QKV_F64, 3, shape, vals);
    d->name = "w";
    qkv_tensor *f = qkv_tensor_convert(d, QKV_F32);
    expect_shape(f, 3, shape, "convert to F32");
    ck_assert_int_eq(f->dtype, QKV_F32);
    ck_assert_ptr_ne(f->data, d->data);
    ck_assert_ptr_null(f->grad);
    ck_assert_str_eq(f->name, "w");
    for (int i = 0; i < 6; i++) ck_assert(((float *)f->data)[i] == (float)vals[i]);
    qkv_tensor *back = qkv_tensor_convert(f, QKV_F64);
    expect_shape(back, 3, shape, "convert back to F64");
    for (int i = 0; i < 6; i++) ck_assert(((double *)back->data)[i] == (double)(float)vals[i]);
    /* a deep copy: changing the source leaves the copy alone */
    qkv_tensor_set(d, 0, 5);
    ck_assert(qkv_tensor_get(f, 0) == (float)0.1);
    qkv_tensor_free(d);
    qkv_tensor_free(f);
    qkv_tensor_free(back);
}
END_TEST

START_TEST(test_shape_validation) {
    const int64_t five[5] = {1, 2, 3, 4, 5};
    const int64_t zero_dim[2] = {3, 0};
    const int64_t neg_dim[3] = {2, -4, 3};
    double buf[128] = {0};
    ck_assert_ptr_null(qkv_tensor_zeros(QKV_F32, 5, five));
    ck_assert_ptr_null(qkv_tensor_full(QKV_F64, 5, five, 1));
    ck_assert_ptr_null(qkv_tensor_from_buffer(QKV_F64, 5, five, buf));
    ck_assert_ptr_null(qkv_tensor_wrap(QKV_F64, 5, five, buf));
    ck_assert_ptr_null(qkv_tensor_zeros(QKV_F32, -1, five));
    ck_assert_ptr_null(qkv_tensor_zeros(QKV_F32, 2, zero_dim));
    ck_assert_ptr_null(qkv_tensor_full(QKV_F32, 2, zero_dim, 1));
    ck_assert_ptr_null(qkv_tensor_wrap(QKV_F64, 2, zero_dim, buf));
    ck_assert_ptr_null(qkv_tensor_zeros(QKV_F64, 3, neg_dim));
    ck_assert_ptr_null(qkv_tensor_from_buffer(QKV_F64, 3, neg_dim, buf));
    ck_assert_ptr_null(qkv_tensor_wrap(QKV_I32, 3, neg_dim, buf));

    ck_assert_int_eq(qkv_shape_numel(5, five), -1);
    ck_assert_int_eq(qkv_shape_numel(2, zero_dim), -1);
    ck_assert_int_eq(qkv_shape_numel(3, neg_dim), -1);
    ck_assert_int_eq(qkv_shape_numel(4, five), 24);
    ck_assert_int_eq(qkv_shape_numel(0, NULL), 1);
    const int64_t huge[3] = {INT64_C(1) << 30, INT64_C(1) << 30, INT64_C(1) << 30};
    ck_assert_int_eq(qkv_shape_numel(3, huge), -1); /* overflowing byte count */

    qkv_tensor h;
    ck_assert_int_eq(qkv_shape_init(&h, QKV_F32, 5, five), -1);
    ck_assert_int_eq(qkv_shape_init(&h, QKV_F32, 3, neg_dim), -1);
    ck_assert_int_eq(qkv_shape_init(&h, QKV_F32, 4, five), 0);
    ck_assert_int_eq(h.numel, 24);

    /* the ops context rejects the same shapes */
    qkv_ctx *ctx = qkv_ctx_new();
    ck_assert_ptr_null(qkv_ctx_tensor(ctx, QKV_F32, 2, zero_dim));
    ck_assert(!qkv_ctx_ok(ctx));
    ASSERT_HAS(qkv_ctx_error(ctx), "(3,0)");
    qkv_ctx_free(ctx);
}
END_TEST

START_TEST(test_shape_str) {
    char buf[64];
    const int64_t s3[3] = {2, 3, 4};
    const int64_t s1[1] = {17};
    const int64_t big[2] = {123456789012LL, 5};
    ck_assert_str_eq(qkv_shape_str(3, s3, buf, sizeof buf), "(2,3,4)");
    ck_assert_ptr_eq(qkv_shape_str(3, s3, buf, sizeof buf), buf);
    ck_assert_str_eq(qkv_shape_str(1, s1, buf, sizeof buf), "(17)");
    ck_assert_str_eq(qkv_shape_str(0, NULL, buf, sizeof buf), "()");
    ck_assert_str_eq(qkv_shape_str(2, big, buf, sizeof buf), "(123456789012,5)");
    /* a short buffer truncates but stays terminated, and nothing is written past it */
    char small[8];
    memset(small, 'X', sizeof small);
    qkv_shape_str(2, big, small, 5);
    ck_assert_str_eq(small, "(123");
    ck_assert(small[5] == 'X' && small[7] == 'X');
}
END_TEST

START_TEST(test_tensor_dim_negative) {
    const int64_t shape[3] = {2, 3, 4};
    qkv_tensor *t = qkv_tensor_zeros(QKV_F32, 3, shape);
    ck_assert_int_eq(qkv_tensor_dim(t, 0), 2);
    ck_assert_int_eq(qkv_tensor_dim(t, 2), 4);
    ck_assert_int_eq(qkv_tensor_dim(t, -1), 4);
    ck_assert_int_eq(qkv_tensor_dim(t, -2), 3);
    ck_assert_int_eq(qkv_tensor_dim(t, -3), 2);
    ck_assert_int_eq(qkv_tensor_dim(t, -4), 1); /* out of range -> 1 */
    ck_assert_int_eq(qkv_tensor_dim(t, 3), 1);
    ck_assert_int_eq(qkv_tensor_dim(t, 100), 1);
    const int64_t other[3] = {2, 3, 5};
    qkv_tensor *u = qkv_tensor_zeros(QKV_F32, 3, other);
    qkv_tensor *v = qkv_tensor_zeros(QKV_F64, 3, shape);
    ck_assert(qkv_same_shape(t, v));
    ck_assert(!qkv_same_shape(t, u));
    qkv_tensor *w = qkv_tensor_zeros(QKV_F32, 2, shape); /* (2,3) vs (2,3,4) */
    ck_assert(!qkv_same_shape(t, w));
    qkv_tensor_free(t);
    qkv_tensor_free(u);
    qkv_tensor_free(v);
    qkv_tensor_free(w);
}
END_TEST

/* ---- RNG ----------------------------------------------------------------------------- */

static int count_equal(qkv_rng *a, qkv_rng *b, int n) {
    int same = 0;
    for (int i = 0; i < n; i++) same += qkv_rng_u64(a) == qkv_rng_u64(b);
    return same;
}

START_TEST(test_rng_same_seed) {
    qkv_rng a, b;
    qkv_rng_seed(&a, 123);
    qkv_rng_seed(&b, 123);
    int diff = 0;
    for (int i = 0; i < 1000; i++) diff += qkv_rng_u64(&a) != qkv_rng_u64(&b);
    for (int i = 0; i < 1000; i++) diff += qkv_rng_uniform(&a) != qkv_rng_uniform(&b);
    for (int i = 0; i < 1001; i++) diff += qkv_rng_normal(&a) != qkv_rng_normal(&b);
    ck_assert_int_eq(diff, 0);
    /* re-seeding restarts the sequence and drops a pending spare normal */
    qkv_rng_seed(&a, 9);
    (void)qkv_rng_normal(&a);
    qkv_rng_seed(&a, 9);
    qkv_rng_seed(&b, 9);
    ck_assert(qkv_rng_normal(&a) == qkv_rng_normal(&b));
    qkv_rng_seed_stream(&a, 5, 3);
    qkv_rng_seed_stream(&b, 5, 3);
    ck_assert_int_eq(count_equal(&a, &b, 100), 100);
}
END_TEST

START_TEST(test_rng_seeds_and_streams_differ) {
    qkv_rng a, b;
    qkv_rng_seed(&a, 1);
    qkv_rng_seed(&b, 2);
    ck_assert_int_eq(count_equal(&a, &b, 100), 0);
    qkv_rng_seed(&a, 0);
    qkv_rng_seed(&b, 1);
    ck_assert_int_eq(count_equal(&a, &b, 100), 0);
    qkv_rng_seed_stream(&a, 7, 0);
    qkv_rng_seed_stream(&b, 7, 1);
    ck_assert_int_eq(count_equal(&a, &b, 100), 0);
    qkv_rng_seed_stream(&a, 7, 1);
    qkv_rng_seed_stream(&b, 8, 1);
    ck_assert_int_eq(count_equal(&a, &b, 100), 0);
    qkv_rng_seed_stream(&a, 7, 2); /* a stream is not the plain seed either */
    qkv_rng_seed(&b, 7);
    ck_assert_int_eq(count_equal(&a, &b, 100), 0);
}
END_TEST

START_TEST(test_rng_golden_seed42) {
    /* xoshiro256** seeded through splitmix64(42); computed once by an independent
     * implementation and pinned here so every platform must produce these bits */
    static const uint64_t golden[4] = {0x15780b2e0c2ec716ull, 0x6104d9866d113a7eull,
                                       0xae17533239e499a1ull, 0xecb8ad4703b360a1ull};
    qkv_rng r;
    qkv_rng_seed(&r, 42);
    for (int i = 0; i < 4; i++) {
        uint64_t v = qkv_rng_u64(&r);
        ck_assert_msg(v == golden[i], "output %d: got 0x%016llx, expected 0x%016llx", i,
                      (unsigned long long)v, (unsigned long long)golden[i]);
    }
    /* uniform uses the top 53 bits of the next output */
    qkv_rng_seed(&r, 42);
    ck_assert(qkv_rng_uniform(&r) == (double)(golden[0] >> 11) * 0x1.0p-53);
}
END_TEST

START_TEST(test_rng_uniform_stats) {
    qkv_rng r;
    qkv_rng_seed(&r, 2024);
    const int n = 100000;
    double s = 0, s2 = 0, lo = 1, hi = 0;
    int below_half = 0, outside = 0;
    for (int i = 0; i < n; i++) {
        double u = qkv_rng_uniform(&r);
        outside += !(u >= 0.0 && u < 1.0);
        s += u;
        s2 += u * u;
        lo = fmin(lo, u);
        hi = fmax(hi, u);
        below_half += u < 0.5;
    }
    ck_assert_int_eq(outside, 0);
    double mean = s / n, var = s2 / n - mean * mean;
    ck_assert_msg(fabs(mean - 0.5) < 0.005, "mean %g", mean);
    ck_assert_msg(fabs(var - 1.0 / 12) < 0.002, "var %g", var);
    ck_assert(lo < 1e-3 && hi > 1 - 1e-3);
    ck_assert(abs(below_half - n / 2) < 1500);
}
END_TEST

START_TEST(test_rng_normal_stats) {
    qkv_rng r;
    qkv_rng_seed(&r, 77);
    const int n = 100000;
    double s = 0, s2 = 0, s4 = 0;
    int within1 = 0, bad = 0;
    for (int i = 0; i < n; i++) {
        double z = qkv_rng_normal(&r);
        bad += !isfinite(z);
        s += z;
        s2 += z * z;
        s4 += z * z * z * z;
        within1 += fabs(z) < 1;
    }
    ck_assert_int_eq(bad, 0);
    double mean = s / n, var = s2 / n - mean * mean, kurt = s4 / n;
    ck_assert_msg(fabs(mean) < 0.02, "mean %g", mean);
    ck_assert_msg(fabs(var - 1) < 0.03, "var %g", var);
    ck_assert_msg(fabs(kurt - 3) < 0.15, "fourth moment %g", kurt); /* Gaussian tails */
    ck_assert_msg(fabs((double)within1 / n - 0.6826894921) < 0.01, "P(|z|<1) %g",
                  (double)within1 / n);
}
END_TEST

START_TEST(test_rng_fill) {
    const int64_t shape[2] = {100, 100};
    qkv_tensor *t = qkv_tensor_zeros(QKV_F32, 2, shape);
    qkv_rng r;
    qkv_rng_seed(&r, 5);
    qkv_tensor_fill_uniform(t, &r, -2, 3);
    double s = 0;
    int outside = 0;
    for (int64_t i = 0; i < t->numel; i++) {
        double v = qkv_tensor_get(t, i);
        outside += !(v >= -2 && v <= 3);
        s += v;
    }
    ck_assert_int_eq(outside, 0);
    ck_assert(fabs(s / t->numel - 0.5) < 0.05);
    qkv_tensor_fill_normal(t, &r, 10, 0.5);
    double m = 0, m2 = 0;
    for (int64_t i = 0; i < t->numel; i++) {
        double v = qkv_tensor_get(t, i);
        m += v;
        m2 += v * v;
    }
    m /= t->numel;
    ck_assert(fabs(m - 10) < 0.03);
    ck_assert(fabs(sqrt(m2 / t->numel - m * m) - 0.5) < 0.02);
    qkv_tensor_free(t);
}
END_TEST

static void check_log(double x) {
    double got = qkv_rng_log(x), want = log(x);
    double err = want == 0 ? fabs(got) : fabs(got - want) / fabs(want);
    if (!(err <= 1e-15))
        ck_abort_msg("qkv_rng_log(%.17g) = %.17g, libm %.17g (rel err %.3g)", x, got, want, err);
}

START_TEST(test_rng_log_vs_libm) {
    ck_assert(qkv_rng_log(1.0) == 0.0);
    /* every binade across the double range, several mantissas each */
    for (int e = -1070; e <= 1020; e += 3)
        for (int k = 0; k < 8; k++) check_log(ldexp(1.0 + k / 8.0 + 1.0 / 1024, e));
    /* around 1, where log is small and the relative error is hardest */
    for (int k = 1; k <= 60; k++) {
        check_log(1 + ldexp(1, -k));
        check_log(1 - ldexp(1, -k - 1));
    }
    /* around the sqrt(1/2) and sqrt(2) switch points */
    for (int k = -50; k <= 50; k++) {
        check_log(0.70710678118654752 + k * 1e-9);
        check_log(1.4142135623730951 + k * 1e-9);
    }
    /* random values, and the polar method's range (0, 1) */
    qkv_test_seed(3);
    for (int i = 0; i < 20000; i++) check_log(exp(qkv_test_uniform(-700, 700)));
    for (int i = 0; i < 20000; i++) check_log(qkv_test_uniform(1e-12, 1));
    check_log(DBL_MAX);
    check_log(DBL_MIN);
    check_log(2.0);
    check_log(0.5);
    check_log(10.0);
}
END_TEST

START_TEST(test_rng_below_range) {
    qkv_rng r;
    qkv_rng_seed(&r, 11);
    const uint64_t ns[] = {1, 2, 3, 7, 10, 1000, (1ull << 63) + 1, UINT64_MAX};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
        for (int i = 0; i < 5000; i++) {
            uint64_t v = qkv_rng_below(&r, ns[k]);
            if (v >= ns[k])
                ck_abort_msg("below(%llu) gave %llu", (unsigned long long)ns[k], (unsigned long long)v);
        }
    int hits[7] = {0};
    for (int i = 0; i < 70000; i++) hits[qkv_rng_below(&r, 7)]++;
    for (int j = 0; j < 7; j++) ck_assert_msg(abs(hits[j] - 10000) < 500, "bucket %d: %d", j, hits[j]);
    /* with n = 2^63 + 1 about half the raw outputs are rejected; what is accepted is still
     * uniform over [0, n): half of it at or above 2^62 */
    int high = 0;
    for (int i = 0; i < 2000; i++) high += qkv_rng_below(&r, (1ull << 63) + 1) >= (1ull << 62);
    ck_assert_msg(high > 850 && high < 1150, "%d of 2000 at or above 2^62", high);
    /* no modulo bias: with n = 3 * 2^62, a plain x % n would put half the mass below 2^62 */
    int low = 0;
    for (int i = 0; i < 3000; i++) low += qkv_rng_below(&r, 3ull << 62) < (1ull << 62);
    ck_assert_msg(low > 850 && low < 1150, "%d of 3000 below 2^62 (expected ~1000)", low);
}
END_TEST

/* ---- matmul ------------------------------------------------------------------------ */

/* C[b] = op(A[b]) op(B[b]) with batch dims `lead` (nla of them on a, nlb on b; 0 = shared) */
static void matmul_case(qkv_dtype dt, int nla, int nlb, const int64_t *lead, bool ta, bool tb,
                        int64_t M, int64_t K, int64_t N) {
    qkv_ctx *ctx = qkv_ctx_new();
    int nlo = nla > nlb ? nla : nlb;
    int64_t sa[4], sb[4], so[4], batch = 1;
    for (int i = 0; i < nlo; i++) batch *= lead[i];
    for (int i = 0; i < nla; i++) sa[i] = lead[i];
    for (int i = 0; i < nlb; i++) sb[i] = lead[i];
    for (int i = 0; i < nlo; i++) so[i] = lead[i];
    sa[nla] = ta ? K : M;
    sa[nla + 1] = ta ? M : K;
    sb[nlb] = tb ? N : K;
    sb[nlb + 1] = tb ? K : N;
    so[nlo] = M;
    so[nlo + 1] = N;
    double av[MAXN], bv[MAXN], ref[MAXN];
    qkv_tensor *a = mk_rand(ctx, dt, nla + 2, sa, av, -1, 1);
    qkv_tensor *b = mk_rand(ctx, dt, nlb + 2, sb, bv, -1, 1);
    for (int64_t bi = 0; bi < batch; bi++) {
        const double *A = av + (nla ? bi * M * K : 0), *B = bv + (nlb ? bi * K * N : 0);
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double s = 0;
                for (int64_t k = 0; k < K; k++)
                    s += (ta ? A[k * M + i] : A[i * K + k]) * (tb ? B[j * K + k] : B[k * N + j]);
                ref[(bi * M + i) * N + j] = s;
            }
    }
    char what[96];
    snprintf(what, sizeof what, "matmul nla=%d nlb=%d ta=%d tb=%d M=%lld K=%lld N=%lld", nla, nlb,
             ta, tb, (long long)M, (long long)K, (long long)N);
    qkv_tensor *c = qkv_matmul(ctx, a, b, ta, tb);
    expect_ok(ctx);
    expect_shape(c, nlo + 2, so, what);
    expect_vals(c, ref, batch * M * N, TOL(dt), what);
    qkv_ctx_free(ctx);
}

START_TEST(test_matmul_2d_all_transposes) {
    qkv_test_seed(10);
    for (int t = 0; t < 4; t++) {
        bool ta = t & 1, tb = t >> 1;
        matmul_case(DT, 0, 0, NULL, ta, tb, 3, 5, 4);
        matmul_case(DT, 0, 0, NULL, ta, tb, 1, 7, 2); /* row vector */
        matmul_case(DT, 0, 0, NULL, ta, tb, 4, 3, 1); /* column result */
        matmul_case(DT, 0, 0, NULL, ta, tb, 6, 1, 5); /* outer product */
    }
}
END_TEST

START_TEST(test_matmul_batched_4d) {
    qkv_test_seed(11);
    const int64_t lead[2] = {2, 3};
    for (int t = 0; t < 4; t++) matmul_case(DT, 2, 2, lead, t & 1, t >> 1, 3, 5, 4);
    const int64_t lead3[1] = {4};
    for (int t = 0; t < 4; t++) matmul_case(DT, 1, 1, lead3, t & 1, t >> 1, 2, 3, 5);
}
END_TEST

START_TEST(test_matmul_3d_by_shared_2d) {
    qkv_test_seed(12);
    const int64_t lead[2] = {2, 3};
    for (int t = 0; t < 4; t++) {
        matmul_case(DT, 1, 0, lead, t & 1, t >> 1, 3, 5, 4); /* (2,M,K) x (K,N) */
        matmul_case(DT, 2, 0, lead, t & 1, t >> 1, 3, 4, 2); /* (2,3,M,K) x (K,N) */
    }
    const int64_t one[1] = {1};
    matmul_case(DT, 1, 0, one, false, false, 3, 4, 2); /* a batch of one */
}
END_TEST

START_TEST(test_matmul_2d_by_3d) {
    qkv_test_seed(13);
    const int64_t lead[2] = {3, 2};
    for (int t = 0; t < 4; t++) {
        matmul_case(DT, 0, 1, lead, t & 1, t >> 1, 3, 5, 4); /* (M,K) x (3,K,N) */
        matmul_case(DT, 0, 2, lead, t & 1, t >> 1, 2, 3, 4); /* (M,K) x (3,2,K,N) */
    }
}
END_TEST

START_TEST(test_gemm_kernels_direct) {
    /* hand-computed: [[1,2,3],[4,5,6]] [[7,8],[9,10],[11,12]] = [[58,64],[139,154]] */
    const float A[6] = {1, 2, 3, 4, 5, 6}, B[6] = {7, 8, 9, 10, 11, 12};
    float C[4] = {1, 1, 1, 1};
    qkv__k_gemm_f32(0, 0, 2, 2, 3, A, B, 1.0f, C); /* beta = 1 accumulates */
    ck_assert(C[0] == 59 && C[1] == 65 && C[2] == 140 && C[3] == 155);
    qkv__k_gemm_f32(0, 0, 2, 2, 3, A, B, 0.0f, C); /* beta = 0 overwrites */
    ck_assert(C[0] == 58 && C[1] == 64 && C[2] == 139 && C[3] == 154);
    /* the same product through both transposes: A stored (3,2), B stored (2,3) */
    const double At[6] = {1, 4, 2, 5, 3, 6}; /* (3,2): its transpose is [[1,2,3],[4,5,6]] */
    const double Bt[6] = {7, 9, 11, 8, 10, 12}; /* (2,3): its transpose is [[7,8],[9,10],[11,12]] */
    double D[8] = {0};
    /* two batches sharing B (stride 0), A advancing by 0 too: both equal the product */
    qkv__k_gemm_batched_f64(2, 1, 1, 2, 2, 3, At, 0, Bt, 0, 0.0, D, 4);
    for (int b = 0; b < 2; b++)
        ck_assert(D[4 * b] == 58 && D[4 * b + 1] == 64 && D[4 * b + 2] == 139 && D[4 * b + 3] == 154);
    /* the second batch of A doubled: its product doubles */
    const double A2[12] = {1, 2, 3, 4, 5, 6, 2, 4, 6, 8, 10, 12};
    const double Bn[6] = {7, 8, 9, 10, 11, 12};
    qkv__k_gemm_batched_f64(2, 0, 0, 2, 2, 3, A2, 6, Bn, 0, 0.0, D, 4);
    ck_assert(D[0] == 58 && D[3] == 154 && D[4] == 116 && D[7] == 308);
}
END_TEST

/* qkv__k_gemm_ld_f32 on strided operands, every form, beta 0 and 1, against a double loop: the
 * recall step's shapes (in the libxsmm build, the default on x86-64: libxsmm's kernels) and ones
 * that stay on OpenBLAS in that build (B^T over 16384 elements, over 2^22 multiply-adds, no K); the padding of C's rows
 * is left alone, and the same call gives the same bits twice */
static void gemm_ld_case(int ta, int tb, int64_t M, int64_t N, int64_t Kd, int64_t pad, float beta, qkv_rng *rng) {
    const int64_t lda = (ta ? M : Kd) + pad, ldb = (tb ? Kd : N) + pad, ldc = N + pad;
    const int64_t na = (ta ? Kd : M) * lda, nb = (tb ? N : Kd) * ldb, nc = M * ldc;
    float *A = malloc((size_t)(na + 1) * sizeof *A), *B = malloc((size_t)(nb + 1) * sizeof *B);
    float *C = malloc((size_t)nc * sizeof *C), *C0 = malloc((size_t)nc * sizeof *C0), *C2 = malloc((size_t)nc * sizeof *C2);
    ck_assert(A && B && C && C0 && C2);
    for (int64_t i = 0; i < na; i++) A[i] = (float)(2 * qkv_rng_uniform(rng) - 1);
    for (int64_t i = 0; i < nb; i++) B[i] = (float)(2 * qkv_rng_uniform(rng) - 1);
    for (int64_t i = 0; i < nc; i++) C0[i] = (float)(2 * qkv_rng_uniform(rng) - 1);
    memcpy(C, C0, (size_t)nc * sizeof *C);
    qkv__k_gemm_ld_f32(ta, tb, M, N, Kd, A, lda, B, ldb, beta, C, ldc);
    const int64_t every = M * N * Kd > (1 << 20) ? 7 : 1; /* rows checked against the loop: keep it quick */
    for (int64_t i = 0; i < M; i++) {
        for (int64_t j = 0; j < N && i % every == 0; j++) {
            double acc = beta * (double)C0[i * ldc + j], mag = fabs(acc);
            for (int64_t k = 0; k < Kd; k++) {
                double p = (double)(ta ? A[k * lda + i] : A[i * lda + k]) * (tb ? B[j * ldb + k] : B[k * ldb + j]);
                acc += p, mag += fabs(p);
            }
            ck_assert_msg(fabs(C[i * ldc + j] - acc) <= 2.0 * (Kd + 1) * FLT_EPSILON * mag,
                          "gemm_ld ta=%d tb=%d %lldx%lldx%lld beta=%g: C[%lld,%lld] = %.9g, expected %.9g", ta, tb,
                          (long long)M, (long long)N, (long long)Kd, beta, (long long)i, (long long)j,
                          C[i * ldc + j], acc);
        }
        for (int64_t j = N; j < ldc; j++) ck_assert(C[i * ldc + j] == C0[i * ldc + j]);
    }
    memcpy(C2, C0, (size_t)nc * sizeof *C2);
    qkv__k_gemm_ld_f32(ta, tb, M, N, Kd, A, lda, B, ldb, beta, C2, ldc);
    ck_assert(!memcmp(C, C2, (size_t)nc * sizeof *C));
    free(A), free(B), free(C), free(C0), free(C2);
}

START_TEST(test_gemm_ld_strided) {
    qkv_rng rng;
    qkv_rng_seed(&rng, 0x5eed);
    static const int64_t shapes[][4] = {
        /* M, N, K, row padding */
        {24, 24, 16, 48}, {24, 16, 24, 40}, {96, 64, 64, 0},  {96, 256, 64, 0}, {96, 64, 256, 0}, {64, 64, 96, 3},
        {256, 64, 96, 0}, {1, 7, 2, 1},     {5, 3, 1, 2},     {8, 128, 160, 0}, {128, 256, 160, 0}, {3, 4, 0, 1},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int t = 0; t < 4; t++)
            for (int b = 0; b < 2; b++)
                gemm_ld_case(t & 1, t >> 1, shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3], (float)b, &rng);
}
END_TEST

#if QKV_GEMM_LIBXSMM && defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
/* XINUSE (xgetbv with ecx = 1), bit 2: the upper halves of the vector registers are in use */
static int upper_in_use(void) {
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1));
    return (int)(lo >> 2 & 1);
}
__attribute__((target("avx"))) static void zero_upper(void) { _mm256_zeroupper(); }

/* A libxsmm product returns with the upper halves of the vector registers clear: its AVX kernels
 * leave them in use, and the SSE code after them would wait on that state (k_matmul.c). Every
 * form of the recall step's head and layer products (B^T through the cached transpose too), each
 * with the state clear before it; where the CPU does not report the state (no xgetbv 1, or no
 * AVX), nothing to check */
START_TEST(test_gemm_ld_upper_clear) {
    unsigned a, b, c, d;
    if (!__get_cpuid_count(0xd, 1, &a, &b, &c, &d) || !(a & 4) || !__builtin_cpu_supports("avx")) return;
    zero_upper();
    if (upper_in_use()) return; /* the CPU does not track it */
    static float A[96 * 64], B[96 * 64], C[96 * 96];
    for (int i = 0; i < 96 * 64; i++) A[i] = (float)(i % 13) / 13, B[i] = (float)(i % 7) / 7;
    static const int64_t shapes[][3] = {{24, 24, 16}, {24, 16, 24}, {96, 64, 64}};
    for (int s = 0; s < 3; s++)
        for (int t = 0; t < 4; t++) {
            int ta = t & 1, tb = t >> 1;
            int64_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
            zero_upper();
            qkv__k_gemm_ld_f32(ta, tb, M, N, K, A, ta ? M : K, B, tb ? K : N, 0.0f, C, N);
            ck_assert_msg(!upper_in_use(), "gemm_ld ta=%d tb=%d %lldx%lldx%lld left the upper halves in use", ta, tb,
                          (long long)M, (long long)N, (long long)K);
        }
}
END_TEST
#endif

/* qkv__gemm_timing: while it is set, each product adds its time to qkv__gemm_ns (and gives the
 * same bits); while it is not, nothing is added. The product is large enough (256^3
 * multiply-adds, well over a microsecond) that its time cannot read as 0 */
START_TEST(test_gemm_timing) {
    enum { N = 256 };
    float *A = malloc(N * N * sizeof *A), *B = malloc(N * N * sizeof *B), *C = malloc(N * N * sizeof *C),
          *C2 = malloc(N * N * sizeof *C2);
    ck_assert(A && B && C && C2);
    for (int i = 0; i < N * N; i++) A[i] = (float)(i % 13) / 13, B[i] = (float)(i % 7) / 7;
    ck_assert_int_eq(atomic_load(&qkv__gemm_timing), 0); /* off unless asked */
    uint64_t ns0 = qkv__gemm_ns;
    qkv__k_gemm_f32(0, 0, N, N, N, A, B, 0.0f, C);
    ck_assert_uint_eq(qkv__gemm_ns, ns0);
    atomic_store(&qkv__gemm_timing, 1);
    qkv__k_gemm_f32(0, 0, N, N, N, A, B, 0.0f, C2);
    uint64_t ns1 = qkv__gemm_ns;
    ck_assert(!memcmp(C, C2, N * N * sizeof *C)); /* timing does not change the product */
    qkv__k_gemm_ld_f32(0, 1, N, N, N, A, N, B, N, 0.0f, C2, N); /* the strided entry too */
    atomic_store(&qkv__gemm_timing, 0);
    ck_assert_msg(ns1 > ns0 && qkv__gemm_ns > ns1, "timed: %llu -> %llu -> %llu ns", (unsigned long long)ns0,
                  (unsigned long long)ns1, (unsigned long long)qkv__gemm_ns);
    free(A), free(B), free(C), free(C2);
}
END_TEST

/* ---- elementwise binary ------------------------------------------------------------ */

typedef qkv_tensor *(*binary_fn)(qkv_ctx *, qkv_tensor *, qkv_tensor *);
static const binary_fn BIN_FNS[4] = {qkv_add, qkv_sub, qkv_mul, qkv_div};
static const char *const BIN_NAMES[4] = {"add", "sub", "mul", "div"};

static double bin_ref(int op, double a, double b) {
    switch (op) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    default: return a / b;
    }
}

static void binary_case(qkv_dtype dt, int nda, const int64_t *sa, int ndb, const int64_t *sb,
                        int ndo, const int64_t *so) {
    qkv_ctx *ctx = qkv_ctx_new();
    double av[MAXN], bv[MAXN], ref[MAXN];
    qkv_tensor *a = mk_rand(ctx, dt, nda, sa, av, -2, 2);
    qkv_tensor *b = mk_rand(ctx, dt, ndb, sb, bv, 0.5, 2);
    int64_t a4[4], b4[4], o4[4];
    pad4(nda, sa, a4);
    pad4(ndb, sb, b4);
    pad4(ndo, so, o4);
    for (int op = 0; op < 4; op++) {
        int64_t ix[4], n = 0;
        for (ix[0] = 0; ix[0] < o4[0]; ix[0]++)
            for (ix[1] = 0; ix[1] < o4[1]; ix[1]++)
                for (ix[2] = 0; ix[2] < o4[2]; ix[2]++)
                    for (ix[3] = 0; ix[3] < o4[3]; ix[3]++) {
                        int64_t ia[4], ib[4];
                        for (int d = 0; d < 4; d++) {
                            ia[d] = a4[d] == 1 ? 0 : ix[d];
                            ib[d] = b4[d] == 1 ? 0 : ix[d];
                        }
                        ref[n++] = bin_ref(op, av[off4(a4, ia)], bv[off4(b4, ib)]);
                    }
        char what[64];
        snprintf(what, sizeof what, "%s nda=%d ndb=%d", BIN_NAMES[op], nda, ndb);
        qkv_tensor *y = BIN_FNS[op](ctx, a, b);
        expect_ok(ctx);
        expect_shape(y, ndo, so, what);
        expect_vals(y, ref, n, TOL(dt), what);
    }
    qkv_ctx_free(ctx);
}

START_TEST(test_binary_same_shape) {
    qkv_test_seed(20);
    const int64_t s2[2] = {3, 4}, s4[4] = {2, 3, 2, 5}, s1[1] = {7};
    binary_case(DT, 2, s2, 2, s2, 2, s2);
    binary_case(DT, 4, s4, 4, s4, 4, s4);
    binary_case(DT, 1, s1, 1, s1, 1, s1);
}
END_TEST

START_TEST(test_binary_bias_over_rows) {
    qkv_test_seed(21);
    const int64_t x[2] = {4, 6}, bias[1] = {6}, x3[3] = {2, 4, 6};
    binary_case(DT, 2, x, 1, bias, 2, x);
    binary_case(DT, 3, x3, 1, bias, 3, x3);
    binary_case(DT, 1, bias, 2, x, 2, x); /* the broadcast operand first */
}
END_TEST

START_TEST(test_binary_mask_like_over_4d) {
    qkv_test_seed(22);
    const int64_t x[4] = {2, 3, 4, 4}, m[2] = {4, 4};
    binary_case(DT, 4, x, 2, m, 4, x);
    binary_case(DT, 2, m, 4, x, 4, x);
    const int64_t bh[4] = {2, 1, 4, 4}; /* (B,1,T,T) over (B,H,T,T) */
    binary_case(DT, 4, x, 4, bh, 4, x);
}
END_TEST

START_TEST(test_binary_column_and_outer) {
    qkv_test_seed(23);
    const int64_t x[2] = {5, 3}, col[2] = {5, 1}, row[2] = {1, 3};
    binary_case(DT, 2, x, 2, col, 2, x);
    binary_case(DT, 2, col, 2, row, 2, x); /* (5,1) op (1,3) -> (5,3) */
    const int64_t a[4] = {2, 3, 1, 5}, b[3] = {3, 4, 1}, o[4] = {2, 3, 4, 5};
    binary_case(DT, 4, a, 3, b, 4, o);
    const int64_t mid_a[3] = {2, 1, 4}, mid_b[3] = {2, 3, 4};
    binary_case(DT, 3, mid_a, 3, mid_b, 3, mid_b);
    binary_case(DT, 0, NULL, 2, x, 2, x); /* a scalar tensor */
    binary_case(DT, 2, x, 0, NULL, 2, x);
}
END_TEST

START_TEST(test_binary_incompatible) {
    qkv_ctx *ctx = qkv_ctx_new();
    double av[MAXN], bv[MAXN];
    const int64_t s23[2] = {2, 3}, s43[2] = {4, 3}, s3[1] = {3}, s4[1] = {4};
    qkv_test_seed(24);
    qkv_tensor *a = mk_rand(ctx, DT, 2, s23, av, -1, 1);
    qkv_tensor *b = mk_rand(ctx, DT, 2, s43, bv, -1, 1);
    for (int op = 0; op < 4; op++) {
        ck_assert_ptr_null(BIN_FNS[op](ctx, a, b));
        const char *msg = qkv_ctx_error(ctx);
        ASSERT_HAS(msg, "broadcast");
        ASSERT_HAS(msg, BIN_NAMES[op]);
        ASSERT_HAS(msg, "(2,3)");
        ASSERT_HAS(msg, "(4,3)");
        qkv_ctx_clear_error(ctx);
    }
    qkv_tensor *c = mk_rand(ctx, DT, 1, s3, av, -1, 1);
    qkv_tensor *d = mk_rand(ctx, DT, 1, s4, bv, -1, 1);
    ck_assert_ptr_null(qkv_add(ctx, c, d));
    ASSERT_HAS(qkv_ctx_error(ctx), "broadcast");
    qkv_ctx_free(ctx);
}
END_TEST

START_TEST(test_scale_add_scalar) {
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_test_seed(25);
    const int64_t s[2] = {3, 4};
    double xv[MAXN], ref[MAXN];
    qkv_tensor *x = mk_rand(ctx, DT, 2, s, xv, -3, 3);
    const double factors[3] = {2.5, -0.5, 0};
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < 12; i++) ref[i] = factors[k] * xv[i];
        qkv_tensor *y = qkv_scale(ctx, x, factors[k]);
        expect_shape(y, 2, s, "scale");
        expect_vals(y, ref, 12, TOL(DT), "scale");
    }
    const double shifts[2] = {0.75, -3};
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < 12; i++) ref[i] = xv[i] + shifts[k];
        qkv_tensor *y = qkv_add_scalar(ctx, x, shifts[k]);
        expect_shape(y, 2, s, "add_scalar");
        expect_vals(y, ref, 12, TOL(DT), "add_scalar");
    }
    expect_ok(ctx);
    qkv_ctx_free(ctx);
}
END_TEST

/* ---- reductions ---------------------------------------------------------------------- */

START_TEST(test_sum_mean_each_axis) {
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_test_seed(30);
    const int64_t s[4] = {2, 3, 4, 5};
    double xv[MAXN], ref[MAXN];
    qkv_tensor *x = mk_rand(ctx, DT, 4, s, xv, -2, 2);
    for (int axis = -4; axis < 4; axis++)
        for (int keep = 0; keep < 2; keep++)
            for (int mean = 0; mean < 2; mean++) {
                int ax = axis < 0 ? axis + 4 : axis;
                int64_t ks[4], os[4];
                int ond = 0;
                for (int d = 0; d < 4; d++) {
                    ks[d] = d == ax ? 1 : s[d];
                    if (d != ax) os[ond++] = s[d];
                    else if (keep) os[ond++] = 1;
                }
                for (int i = 0; i < MAXN; i++) ref[i] = 0;
                int64_t ix[4];
                for (ix[0] = 0; ix[0] < s[0]; ix[0]++)
                    for (ix[1] = 0; ix[1] < s[1]; ix[1]++)
                        for (ix[2] = 0; ix[2] < s[2]; ix[2]++)
                            for (ix[3] = 0; ix[3] < s[3]; ix[3]++) {
                                int64_t oi[4] = {ix[0], ix[1], ix[2], ix[3]};
                                oi[ax] = 0;
                                ref[off4(ks, oi)] += xv[off4(s, ix)];
                            }
                int64_t n = 120 / s[ax];
                if (mean)
                    for (int64_t i = 0; i < n; i++) ref[i] /= (double)s[ax];
                char what[64];
                snprintf(what, sizeof what, "%s axis=%d keepdim=%d", mean ? "mean" : "sum", axis, keep);
                qkv_tensor *y = mean ? qkv_mean(ctx, x, axis, keep) : qkv_sum(ctx, x, axis, keep);
                expect_ok(ctx);
                expect_shape(y, ond, os, what);
                expect_vals(y, ref, n, TOL(DT), what);
            }
    /* everything, and a 1-D sum to a scalar */
    double total = 0;
    for (int i = 0; i < 120; i++) total += xv[i];
    qkv_tensor *sa = qkv_sum_all(ctx, x), *ma = qkv_mean_all(ctx, x);
    expect_shape(sa, 0, NULL, "sum_all");
    expect_shape(ma, 0, NULL, "mean_all");
    expect_vals(sa, &total, 1, TOL(DT), "sum_all");
    double m = total / 120;
    expect_vals(ma, &m, 1, TOL(DT), "mean_all");
    const int64_t s1[1] = {6};
    double v[6] = {1, 2, 3, 4, 5, 6.5}, want = 21.5;
    qkv_tensor *y = qkv_sum(ctx, mk(ctx, DT, 1, s1, v), 0, false);
    expect_shape(y, 0, NULL, "1-D sum");
    expect_vals(y, &want, 1, 0, "1-D sum");
    expect_ok(ctx);
    /* axis out of range */
    ck_assert_ptr_null(qkv_sum(ctx, x, 4, false));
    ASSERT_HAS(qkv_ctx_error(ctx), "axis");
    qkv_ctx_clear_error(ctx);
    ck_assert_ptr_null(qkv_mean(ctx, x, -5, true));
    ASSERT_HAS(qkv_ctx_error(ctx), "(2,3,4,5)");
    qkv_ctx_free(ctx);
}
END_TEST

/* ---- unary --------------------------------------------------------------------------- */

typedef qkv_tensor *(*unary_fn)(qkv_ctx *, qkv_tensor *);
static double ref_relu(double x) { return x > 0 ? x : 0; }
static double ref_sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double ref_gelu(double x) { return 0.5 * x * (1 + erf(x / sqrt(2.0))); }
static double ref_gelu_tanh(double x) {
    return 0.5 * x * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
}

START_TEST(test_unary_vs_libm) {
    static const struct {
        const char *name;
        unary_fn f;
        double (*ref)(double);
        double lo, hi;
    } U[] = {
        {"exp", qkv_exp, exp, -5, 5},        {"log", qkv_log, log, 0.01, 50},
        {"tanh", qkv_tanh, tanh, -4, 4},     {"sqrt", qkv_sqrt, sqrt, 0, 100},
        {"relu", qkv_relu, ref_relu, -3, 3}, {"sigmoid", qkv_sigmoid, ref_sigmoid, -12, 12},
        {"gelu", qkv_gelu, ref_gelu, -5, 5}, {"gelu_tanh", qkv_gelu_tanh, ref_gelu_tanh, -5, 5},
    };
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_test_seed(40);
    const int64_t s[3] = {2, 5, 7};
    for (size_t k = 0; k < sizeof U / sizeof U[0]; k++) {
        double xv[MAXN], ref[MAXN];
        qkv_tensor *x = mk_rand(ctx, DT, 3, s, xv, U[k].lo, U[k].hi);
        for (int i = 0; i < 70; i++) ref[i] = U[k].ref(xv[i]);
        qkv_tensor *y = U[k].f(ctx, x);
        expect_ok(ctx);
        expect_shape(y, 3, s, U[k].name);
        expect_vals(y, ref, 70, TOL(DT), U[k].name);
    }
    /* relu is exact, including at zero */
    const int64_t s5[1] = {5};
    double r[5] = {-1, -0.0, 0, 2.5, -1e30}, rr[5] = {0, 0, 0, 2.5, 0};
    expect_exact(qkv_relu(ctx, mk(ctx, DT, 1, s5, r)), rr, 5, "relu exact");
    /* sigmoid far out: no overflow, no NaN */
    const int64_t s7[1] = {7};
    double big[7] = {-1000, -100, -20, 0, 20, 100, 1000}, bref[7];
    for (int i = 0; i < 7; i++) bref[i] = ref_sigmoid(big[i]);
    qkv_tensor *sg = qkv_sigmoid(ctx, mk(ctx, DT, 1, s7, big));
    expect_vals(sg, bref, 7, TOL(DT), "sigmoid extremes");
    ck_assert(qkv_tensor_get(sg, 3) == 0.5);
    expect_ok(ctx);
    qkv_ctx_free(ctx);
}
END_TEST

START_TEST(test_gelu_hand_values) {
    qkv_ctx *ctx = qkv_ctx_new();
    const int64_t s[1] = {3};
    double x[3] = {1, -1, 0};
    double tol = DT == QKV_F32 ? 1e-6 : 1e-14;
    qkv_tensor *g = qkv_gelu(ctx, mk(ctx, DT, 1, s, x));
    qkv_tensor *gt = qkv_gelu_tanh(ctx, mk(ctx, DT, 1, s, x));
    expect_ok(ctx);
    const double want_g[3] = {0.8413447460685429, -0.15865525393145707, 0};
    expect_vals(g, want_g, 3, tol, "gelu hand values");
    ck_assert_msg(qkv_test_near(qkv_tensor_get(gt, 0), 0.8411919906082768, tol), "gelu_tanh(1) = %.17g",
                  qkv_tensor_get(gt, 0));
    ck_assert(qkv_tensor_get(gt, 2) == 0);
    /* the two forms differ (the tanh one is an approximation) */
    ck_assert(fabs(qkv_tensor_get(g, 0) - qkv_tensor_get(gt, 0)) > 1e-4);
    qkv_ctx_free(ctx);
}
END_TEST

/* ---- softmax, log_softmax -------------------------------------------------------------- */

static void ref_softmax(int64_t rows, int64_t n, const double *x, double *y) {
    for (int64_t r = 0; r < rows; r++) {
        double m = -INFINITY, s = 0;
        for (int64_t j = 0; j < n; j++) m = fmax(m, x[r * n + j]);
        for (int64_t j = 0; j < n; j++) s += exp(x[r * n + j] - m);
        for (int64_t j = 0; j < n; j++) y[r * n + j] = exp(x[r * n + j] - m) / s;
    }
}

START_TEST(test_softmax_values) {
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_test_seed(50);
    const int64_t s[3] = {2, 3, 7};
    double xv[MAXN], ref[MAXN];
    qkv_tensor *x = mk_rand(ctx, DT, 3, s, xv, -4, 4);
    ref_softmax(6, 7, xv, ref);
    qkv_tensor *y = qkv_softmax(ctx, x);
    expect_ok(ctx);
    expect_shape(y, 3, s, "softmax");
    expect_vals(y, ref, 42, TOL(DT), "softmax");
    for (int r = 0; r < 6; r++) {
        double sum = 0;
        for (int j = 0; j < 7; j++) {
            double v = qkv_tensor_get(y, r * 7 + j);
            ck_assert(v > 0 && v < 1);
            sum += v;
        }
        ck_assert_msg(fabs(sum - 1) < (DT == QKV_F32 ? 1e-6 : 1e-14), "row %d sums to %.17g", r, sum);
    }
    /* a single column: all ones */
    const int64_t s1[2] = {3, 1};
    double one[3] = {-5, 0, 100}, ones[3] = {1, 1, 1};
    expect_vals(qkv_softmax(ctx, mk(ctx, DT, 2, s1, one)), ones, 3, TOL(DT), "softmax n=1");
    qkv_ctx_free(ctx);
}
END_TEST

START_TEST(test_softmax_shift_invariant) {
    qkv_ctx *ctx = qkv_ctx_new();
    const int64_t s[2] = {4, 6};
    double xv[24], xs[24], ref[24];
    qkv_test_seed(51);
    for (int i = 0; i < 24; i++) {
        xv[i] = floor(qkv_test_uniform(-24, 24)) / 8; /* multiples of 1/8: x + 1000 is exact in float */
        xs[i] = xv[i] + 1000;
    }
    qkv_tensor *y = qkv_softmax(ctx, mk(ctx, DT, 2, s, xv));
    qkv_tensor *ys = qkv_softmax(ctx, mk(ctx, DT, 2, s, xs));
    ref_softmax(4, 6, xv, ref);
    expect_vals(y, ref, 24, TOL(DT), "softmax(x)");
    expect_vals(ys, ref, 24, TOL(DT), "softmax(x + 1000)");
    for (int i = 0; i < 24; i++)
        ck_assert(qkv_test_near(qkv_tensor_get(ys, i), qkv_tensor_get(y, i), TOL(DT)));
    expect_ok(ctx);
    qkv_ctx_free(ctx);
}
END_TEST

START_TEST(test_softmax_huge_and_masked_rows) {
    qkv_ctx *ctx = qkv_ctx_new();
    const int64_t s[2] = {4, 4};
    double xv[16] = {1e4,       1e4 - 1,   1e4 - 2,   -1e4,       /* huge: no overflow */
                     1e4,       1e4,       1e4,       1e4,        /* uniform */
                     -INFINITY, -INFINITY, -INFINITY, -INFINITY,  /* fully masked */
                     -INFINITY, 0.5,       -INFINITY, -INFINITY}; /* one survivor */
    qkv_tensor *y = qkv_softmax(ctx, mk(ctx, DT, 2, s, xv));
    expect_ok(ctx);
    double e1 = exp(-1), e2 = exp(-2), z = 1 + e1 + e2;
    const double ref[16] = {1 / z, e1 / z, e2 / z, 0, 0.25, 0.25, 0.25, 0.25, 0, 0, 0, 0, 0, 1, 0, 0};
    for (int i = 0; i < 16; i++) ck_assert_msg(isfinite(qkv_tensor_get(y, i)), "element %d not finite", i);
    expect_vals(y, ref, 16, TOL(DT), "softmax huge / masked");
    for (int j = 8; j < 12; j++) ck_assert(qkv_tensor_get(y, j) == 0.0);
    qkv_ctx_free(ctx);
}
END_TEST

START_TEST(test_log_softmax_values) {
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_test_seed(52);
    const int64_t s[2] = {5, 6};
    double xv[MAXN], ref[MAXN];
    qkv_tensor *x = mk_rand(ctx, DT, 2, s, xv, -5, 5);
    ref_softmax(5, 6, xv, ref);
    for (int i = 0; i < 30; i++) ref[i] = log(ref[i]);
    qkv_tensor *y = qkv_log_softmax(ctx, x);
    expect_ok(ctx);
    expect_shape(y, 2, s, "log_softmax");
    expect_vals(y, ref, 30, TOL(DT), "log_softmax = log(softmax)");
    for (int r = 0; r < 5; r++) {
        double sum = 0;
        for (int j = 0; j < 6; j++) sum += exp(qkv_tensor_get(y, r * 6 + j));
        ck_assert(fabs(sum - 1) < 1e-5);
    }
    /* huge inputs stay finite: log_softmax([1e4, 1e4-1, 1e4-30]). The kernel forms
     * lse = max + log(sum) before subtracting, so in F32 the result carries the rounding of
     * 1e4 + 0.31 (half an ulp of 1e4, ~5e-4): hence the loose F32 bound here. */
    const int64_t s3[1] = {3};
    double big[3] = {1e4, 1e4 - 1, 1e4 - 30};
    double lse = log(1 + exp(-1) + exp(-30)), bref[3] = {-lse, -1 - lse, -30 - lse};
    qkv_tensor *yb = qkv_log_softmax(ctx, mk(ctx, DT, 1, s3, big));
    for (int j = 0; j < 3; j++) ck_assert(isfinite(qkv_tensor_get(yb, j)));
    expect_vals(yb, bref, 3, DT == QKV_F32 ? 1e-3 : 1e-12, "log_softmax huge");
    qkv_ctx_free(ctx);
}
END_TEST

/* ---- layernorm --------------------------------------------------------------------------- */

START_TEST(test_layernorm_vs_naive) {
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_test_seed(60);
    const int64_t s[3] = {2, 3, 8}, sw[1] = {8};
    double xv[MAXN], wv[8], bv[8], ref[MAXN];
    qkv_tensor *x = mk_rand(ctx, DT, 3, s, xv, -2, 3);
    qkv_tensor *w = mk_rand(ctx, DT, 1, sw, wv, 0.5, 1.5);
    qkv_tensor *b = mk_rand(ctx, DT, 1, sw, bv, -1, 1);
    const double eps = 1e-5;
    for (int c = 0; c < 4; c++) {
        bool hw = c & 1, hb = c >> 1;
        for (int r = 0; r < 6; r++) {
            const double *xr = xv + r * 8;
            double m = 0, v = 0;
            for (int j = 0; j < 8; j++) m += xr[j];
            m /= 8;
            for (int j = 0; j < 8; j++) v += (xr[j] - m) * (xr[j] - m);
            v /= 8; /* biased */
            for (int j = 0; j < 8; j++)
                ref[r * 8 + j] = (xr[j] - m) / sqrt(v + eps) * (hw ? wv[j] : 1) + (hb ? bv[j] : 0);
        }
        char what[48];
        snprintf(what, sizeof what, "layernorm w=%d b=%d", hw, hb);
        qkv_tensor *y = qkv_layernorm(ctx, x, hw ? w : NULL, hb ? b : NULL, eps);
        expect_ok(ctx);
        expect_shape(y, 3, s, what);
        expect_vals(y, ref, 48, TOL(DT), what);
    }
    /* a constant row has zero variance: xhat = 0, so the output is the bias */
    const int64_t s1[2] = {1, 8};
    double cst[8] = {3, 3, 3, 3, 3, 3, 3, 3}, zeros[8] = {0};
    expect_vals(qkv_layernorm(ctx, mk(ctx, DT, 2, s1, cst), w, b, eps), bv, 8, TOL(DT),
                "layernorm constant row");
    expect_vals(qkv_layernorm(ctx, mk(ctx, DT, 2, s1, cst), NULL, NULL, eps), zeros, 8, 0,
                "layernorm constant row, no affine");
    /* eps matters when the variance is tiny: x = (+-1e-3), var = 1e-6 */
    double tiny[8] = {1e-3, -1e-3, 1e-3, -1e-3, 1e-3, -1e-3, 1e-3, -1e-3}, tref[8];
    qkv_tensor *xt = mk(ctx, DT, 2, s1, tiny);
    for (int j = 0; j < 8; j++) tref[j] = tiny[j] / sqrt(tiny[0] * tiny[0] + eps);
    expect_vals(qkv_layernorm(ctx, xt, NULL, NULL, eps), tref, 8, DT == QKV_F32 ? 1e-4 : 1e-9,
                "layernorm eps");
    expect_ok(ctx);
    /* a weight of the wrong length, and eps <= 0, are errors */
    const int64_t s7[1] = {7};
    double w7[7] = {1, 1, 1, 1, 1, 1, 1};
    ck_assert_ptr_null(qkv_layernorm(ctx, x, mk(ctx, DT, 1, s7, w7), NULL, eps));
    ASSERT_HAS(qkv_ctx_error(ctx), "layernorm");
    ASSERT_HAS(qkv_ctx_error(ctx), "(7)");
    qkv_ctx_clear_error(ctx);
    ck_assert_ptr_null(qkv_layernorm(ctx, x, NULL, NULL, 0));
    ASSERT_HAS(qkv_ctx_error(ctx), "eps");
    qkv_ctx_free(ctx);
}
END_TEST

/* ---- embedding, cross-entropy, masked_fill ---------------------------------------------- */

START_TEST(test_embedding_lookup) {
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_test_seed(70);
    const int64_t st[2] = {5, 3}, si[2] = {2, 3};
    double tv[MAXN], ref[MAXN];
    qkv_tensor *table = mk_rand(ctx, DT, 2, st, tv, -1, 1);
    const int32_t idx[6] = {4, 0, 2, 2, 1, 4};
    qkv_tensor *ix = qkv_ctx_tensor_from(ctx, QKV_I32, 2, si, idx);
    for (int i = 0; i < 6; i++)
        for (int d = 0; d < 3; d++) ref[i * 3 + d] = tv[idx[i] * 3 + d];
    qkv_tensor *y = qkv_embedding(ctx, table, ix);
    expect_ok(ctx);
    const int64_t so[3] = {2, 3, 3};
    expect_shape(y, 3, so, "embedding");
    expect_exact(y, ref, 18, "embedding");
    /* 1-D indices -> (n, D) */
    const int64_t s1[1] = {2};
    const int32_t idx1[2] = {3, 3};
    qkv_tensor *y1 = qkv_embedding(ctx, table, qkv_ctx_tensor_from(ctx, QKV_I32, 1, s1, idx1));
    const int64_t so1[2] = {2, 3};
    expect_shape(y1, 2, so1, "embedding 1-D");
    double ref1[6] = {tv[9], tv[10], tv[11], tv[9], tv[10], tv[11]};
    expect_exact(y1, ref1, 6, "embedding 1-D");
    qkv_ctx_free(ctx);
}
END_TEST

static double ref_ce(int64_t rows, int64_t V, const double *x, const int32_t *t, int ignore) {
    double total = 0;
    int64_t count = 0;
    for (int64_t r = 0; r < rows; r++) {
        if (t[r] == ignore) continue;
        double m = -INFINITY, s = 0;
        for (int64_t j = 0; j < V; j++) m = fmax(m, x[r * V + j]);
        for (int64_t j = 0; j < V; j++) s += exp(x[r * V + j] - m);
        total += m + log(s) - x[r * V + t[r]];
        count++;
    }
    return count ? total / (double)count : 0;
}

START_TEST(test_cross_entropy_vs_naive) {
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_test_seed(80);
    const int64_t sl[3] = {2, 3, 5}, st[2] = {2, 3};
    double lv[MAXN];
    qkv_tensor *logits = mk_rand(ctx, DT, 3, sl, lv, -3, 3);
    const int32_t t[6] = {1, 4, -100, 0, 2, 4};
    qkv_tensor *tg = qkv_ctx_tensor_from(ctx, QKV_I32, 2, st, t);
    double want = ref_ce(6, 5, lv, t, -100);
    qkv_tensor *loss = qkv_cross_entropy(ctx, logits, tg, -100);
    expect_ok(ctx);
    expect_shape(loss, 0, NULL, "cross_entropy");
    expect_vals(loss, &want, 1, TOL(DT), "cross_entropy with ignore_index -100");
    /* the ignored row really is left out: it differs from the mean over all 6 rows */
    const int32_t t_all[6] = {1, 4, 3, 0, 2, 4};
    double with_row = ref_ce(6, 5, lv, t_all, -100);
    ck_assert(fabs(with_row - want) > 1e-3);
    /* another ignore value: targets equal to it are skipped */
    want = ref_ce(6, 5, lv, t_all, 4);
    expect_vals(qkv_cross_entropy(ctx, logits, qkv_ctx_tensor_from(ctx, QKV_I32, 2, st, t_all), 4),
                &want, 1, TOL(DT), "cross_entropy ignore 4");
    /* 2-D logits, 1-D targets */
    const int64_t s2[2] = {6, 5}, s6[1] = {6};
    want = ref_ce(6, 5, lv, t_all, -100);
    expect_vals(qkv_cross_entropy(ctx, mk(ctx, DT, 2, s2, lv),
                                  qkv_ctx_tensor_from(ctx, QKV_I32, 1, s6, t_all), -100),
                &want, 1, TOL(DT), "cross_entropy 2-D");
    /* every target ignored -> exactly 0 */
    const int32_t none[6] = {-100, -100, -100, -100, -100, -100};
    qkv_tensor *z = qkv_cross_entropy(ctx, logits, qkv_ctx_tensor_from(ctx, QKV_I32, 2, st, none), -100);
    ck_assert_ptr_nonnull(z);
    ck_assert(qkv_tensor_get(z, 0) == 0.0);
    /* large logits stay finite: [1e4, 0, -1e4] with target 1 -> 1e4 (+ log(1 + e^-1e4 + ...)) */
    const int64_t s13[2] = {1, 3}, s1[1] = {1};
    double big[3] = {1e4, 0, -1e4};
    const int32_t t1[1] = {1};
    double want_big = 1e4;
    expect_vals(qkv_cross_entropy(ctx, mk(ctx, DT, 2, s13, big),
                                  qkv_ctx_tensor_from(ctx, QKV_I32, 1, s1, t1), -100),
                &want_big, 1, TOL(DT), "cross_entropy large logits");
    /* uniform logits: loss = log V */
    double flat[3] = {2, 2, 2}, want_flat = log(3.0);
    expect_vals(qkv_cross_entropy(ctx, mk(ctx, DT, 2, s13, flat),
                                  qkv_ctx_tensor_from(ctx, QKV_I32, 1, s1, t1), -100),
                &want_flat, 1, TOL(DT), "cross_entropy uniform");
    expect_ok(ctx);
    qkv_ctx_free(ctx);
}
END_TEST

START_TEST(test_masked_fill_causal) {
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_test_seed(90);
    const int64_t sx[4] = {2, 3, 4, 4}, sm[2] = {4, 4};
    double xv[MAXN], ref[MAXN];
    qkv_tensor *x = mk_rand(ctx, DT, 4, sx, xv, -2, 2);
    int32_t mask[16];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) mask[i * 4 + j] = j > i ? 1 : 0; /* causal: hide the future */
    qkv_tensor *m = qkv_ctx_tensor_from(ctx, QKV_I32, 2, sm, mask);
    const double fills[2] = {-1e9, -INFINITY};
    for (int f = 0; f < 2; f++) {
        for (int bh = 0; bh < 6; bh++)
            for (int k = 0; k < 16; k++) ref[bh * 16 + k] = mask[k] ? fills[f] : xv[bh * 16 + k];
        qkv_tensor *y = qkv_masked_fill(ctx, x, m, fills[f]);
        expect_ok(ctx);
        expect_shape(y, 4, sx, "masked_fill");
        expect_exact(y, ref, 96, "masked_fill");
    }
    /* the attention pattern: softmax of a -inf causal fill puts no mass on the future */
    qkv_tensor *p = qkv_softmax(ctx, qkv_masked_fill(ctx, x, m, -INFINITY));
    expect_ok(ctx);
    for (int bh = 0; bh < 6; bh++)
        for (int i = 0; i < 4; i++) {
            double sum = 0;
            for (int j = 0; j < 4; j++) {
                double v = qkv_tensor_get(p, bh * 16 + i * 4 + j);
                if (j > i) ck_assert(v == 0.0);
                sum += v;
            }
            ck_assert(fabs(sum - 1) < 1e-6);
        }
    /* a (T,1) mask hides whole query rows; a (B,1,1,T) one hides keys per batch */
    const int64_t srow[2] = {4, 1}, skey[4] = {2, 1, 1, 4};
    const int32_t rows[4] = {0, 1, 0, 1}, keys[8] = {1, 0, 0, 0, 0, 0, 1, 1};
    qkv_tensor *yr = qkv_masked_fill(ctx, x, qkv_ctx_tensor_from(ctx, QKV_I32, 2, srow, rows), 7.5);
    for (int k = 0; k < 96; k++) ref[k] = rows[(k / 4) % 4] ? 7.5 : xv[k];
    expect_exact(yr, ref, 96, "masked_fill (T,1)");
    qkv_tensor *yk = qkv_masked_fill(ctx, x, qkv_ctx_tensor_from(ctx, QKV_I32, 4, skey, keys), -2);
    for (int k = 0; k < 96; k++) ref[k] = keys[(k / 48) * 4 + k % 4] ? -2 : xv[k];
    expect_exact(yk, ref, 96, "masked_fill (B,1,1,T)");
    expect_ok(ctx);
    /* a mask that does not broadcast over x */
    const int64_t bad[2] = {3, 4};
    int32_t zeros[12] = {0};
    ck_assert_ptr_null(qkv_masked_fill(ctx, x, qkv_ctx_tensor_from(ctx, QKV_I32, 2, bad, zeros), 0));
    ASSERT_HAS(qkv_ctx_error(ctx), "masked_fill");
    qkv_ctx_free(ctx);
}
END_TEST

/* ---- layout: reshape, transpose, slice, concat ------------------------------------------ */

START_TEST(test_reshape_shares_data) {
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_test_seed(100);
    const int64_t s[3] = {2, 3, 4};
    double xv[MAXN];
    qkv_tensor *x = mk_rand(ctx, DT, 3, s, xv, -1, 1);
    const struct {
        int nd;
        int64_t in[4], out[4];
    } cases[] = {
        {2, {4, -1}, {4, 6}},     {1, {-1}, {24}},          {3, {2, -1, 3}, {2, 4, 3}},
        {4, {1, 2, 12, 1}, {1, 2, 12, 1}}, {4, {-1, 1, 1, 2}, {12, 1, 1, 2}}, {2, {24, 1}, {24, 1}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        qkv_tensor *y = qkv_reshape(ctx, x, cases[k].nd, cases[k].in);
        expect_ok(ctx);
        expect_shape(y, cases[k].nd, cases[k].out, "reshape");
        ck_assert_ptr_eq(y->data, x->data);
        expect_exact(y, xv, 24, "reshape values");
    }
    /* a view: writes through it show in the source */
    const int64_t flat[1] = {24};
    qkv_tensor *v = qkv_reshape(ctx, x, 1, flat);
    qkv_tensor_set(v, 5, 123);
    ck_assert(qkv_tensor_get(x, 5) == 123);
    /* a one-element tensor to a scalar */
    const int64_t s11[2] = {1, 1};
    double one = 4.5;
    qkv_tensor *sc = qkv_reshape(ctx, mk(ctx, DT, 2, s11, &one), 0, NULL);
    expect_shape(sc, 0, NULL, "reshape to scalar");
    ck_assert(qkv_tensor_get(sc, 0) == 4.5);
    qkv_ctx_free(ctx);
}
END_TEST

/* y = x with padded axes c1, c2 swapped */
static void ref_transpose(const int64_t xs[4], int c1, int c2, const double *x, double *y) {
    int64_t ys[4] = {xs[0], xs[1], xs[2], xs[3]};
    ys[c1] = xs[c2];
    ys[c2] = xs[c1];
    int64_t ix[4];
    for (ix[0] = 0; ix[0] < xs[0]; ix[0]++)
        for (ix[1] = 0; ix[1] < xs[1]; ix[1]++)
            for (ix[2] = 0; ix[2] < xs[2]; ix[2]++)
                for (ix[3] = 0; ix[3] < xs[3]; ix[3]++) {
                    int64_t iy[4] = {ix[0], ix[1], ix[2], ix[3]};
                    iy[c1] = ix[c2];
                    iy[c2] = ix[c1];
                    y[off4(ys, iy)] = x[off4(xs, ix)];
                }
}

START_TEST(test_transpose_bthd) {
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_test_seed(110);
    const int64_t s[4] = {2, 3, 4, 5}; /* (B,T,H,D) */
    double xv[MAXN], ref[MAXN];
    qkv_tensor *x = mk_rand(ctx, DT, 4, s, xv, -1, 1);
    qkv_tensor *y = qkv_transpose(ctx, x, 1, 2);
    expect_ok(ctx);
    const int64_t so[4] = {2, 4, 3, 5}; /* (B,H,T,D) */
    expect_shape(y, 4, so, "transpose(1,2)");
    /* the index mapping spelled out: y[b,h,t,d] = x[b,t,h,d] */
    for (int b = 0; b < 2; b++)
        for (int t = 0; t < 3; t++)
            for (int h = 0; h < 4; h++)
                for (int d = 0; d < 5; d++)
                    ref[((b * 4 + h) * 3 + t) * 5 + d] = xv[((b * 3 + t) * 4 + h) * 5 + d];
    expect_exact(y, ref, 120, "transpose(1,2) of (B,T,H,D)");
    /* twice is the identity */
    qkv_tensor *back = qkv_transpose(ctx, y, 2, 1);
    expect_shape(back, 4, s, "transpose twice");
    expect_exact(back, xv, 120, "transpose twice");
    /* every axis pair, and negative axes */
    for (int a1 = 0; a1 < 4; a1++)
        for (int a2 = 0; a2 < 4; a2++) {
            ref_transpose(s, a1, a2, xv, ref);
            qkv_tensor *t = qkv_transpose(ctx, x, a1 - 4 * (a1 & 1), a2);
            expect_exact(t, ref, 120, "transpose pairs");
            expect_exact(qkv_transpose(ctx, t, a1, a2), xv, 120, "transpose pairs twice");
        }
    /* 2-D and 3-D */
    const int64_t s2[2] = {3, 5}, s2t[2] = {5, 3}, s3[3] = {2, 3, 4}, s3t[3] = {2, 4, 3};
    double v2[15], v3[24];
    qkv_tensor *m2 = mk_rand(ctx, DT, 2, s2, v2, -1, 1);
    qkv_tensor *t2 = qkv_transpose(ctx, m2, -1, -2);
    expect_shape(t2, 2, s2t, "transpose 2-D");
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 5; j++) ref[j * 3 + i] = v2[i * 5 + j];
    expect_exact(t2, ref, 15, "transpose 2-D");
    qkv_tensor *m3 = mk_rand(ctx, DT, 3, s3, v3, -1, 1);
    qkv_tensor *t3 = qkv_transpose(ctx, m3, 1, 2);
    expect_shape(t3, 3, s3t, "transpose 3-D");
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 4; j++) ref[(b * 4 + j) * 3 + i] = v3[(b * 3 + i) * 4 + j];
    expect_exact(t3, ref, 24, "transpose 3-D");
    expect_ok(ctx);
    qkv_ctx_free(ctx);
}
END_TEST

static void ref_slice(const int64_t xs[4], int ax, int64_t start, int64_t len, const double *x,
                      double *y) {
    int64_t ys[4] = {xs[0], xs[1], xs[2], xs[3]};
    ys[ax] = len;
    int64_t iy[4];
    for (iy[0] = 0; iy[0] < ys[0]; iy[0]++)
        for (iy[1] = 0; iy[1] < ys[1]; iy[1]++)
            for (iy[2] = 0; iy[2] < ys[2]; iy[2]++)
                for (iy[3] = 0; iy[3] < ys[3]; iy[3]++) {
                    int64_t ix[4] = {iy[0], iy[1], iy[2], iy[3]};
                    ix[ax] += start;
                    y[off4(ys, iy)] = x[off4(xs, ix)];
                }
}

START_TEST(test_slice_each_axis) {
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_test_seed(120);
    const int64_t s[4] = {3, 4, 5, 2};
    double xv[MAXN], ref[MAXN];
    qkv_tensor *x = mk_rand(ctx, DT, 4, s, xv, -1, 1);
    for (int ax = 0; ax < 4; ax++) {
        const int64_t sl[4][2] = {{0, 1}, {1, s[ax] - 1}, {s[ax] - 1, 1}, {0, s[ax]}};
        for (int k = 0; k < 4; k++) {
            int64_t start = sl[k][0], len = sl[k][1];
            int64_t ys[4] = {s[0], s[1], s[2], s[3]};
            ys[ax] = len;
            ref_slice(s, ax, start, len, xv, ref);
            char what[64];
            snprintf(what, sizeof what, "slice axis %d [%lld,+%lld)", ax, (long long)start, (long long)len);
            qkv_tensor *y = qkv_slice(ctx, x, k & 1 ? ax - 4 : ax, start, len);
            expect_ok(ctx);
            expect_shape(y, 4, ys, what);
            expect_exact(y, ref, 120 / s[ax] * len, what);
        }
    }
    /* a 2-D column slice */
    const int64_t s2[2] = {3, 5}, so[2] = {3, 2};
    double v2[15], r2[6];
    qkv_tensor *m = mk_rand(ctx, DT, 2, s2, v2, -1, 1);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++) r2[i * 2 + j] = v2[i * 5 + 2 + j];
    qkv_tensor *y = qkv_slice(ctx, m, 1, 2, 2);
    expect_shape(y, 2, so, "slice 2-D");
    expect_exact(y, r2, 6, "slice 2-D");
    qkv_ctx_free(ctx);
}
END_TEST

START_TEST(test_concat_each_axis) {
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_test_seed(130);
    const int64_t base[4] = {2, 3, 2, 2};
    const int64_t lens[3] = {1, 2, 3};
    for (int ax = 0; ax < 4; ax++) {
        double v[3][MAXN], ref[MAXN];
        qkv_tensor *xs[3];
        int64_t sh[3][4];
        for (int p = 0; p < 3; p++) {
            for (int d = 0; d < 4; d++) sh[p][d] = d == ax ? lens[p] : base[d];
            xs[p] = mk_rand(ctx, DT, 4, sh[p], v[p], -1, 1);
        }
        int64_t ys[4] = {base[0], base[1], base[2], base[3]};
        ys[ax] = 6;
        int64_t iy[4];
        for (iy[0] = 0; iy[0] < ys[0]; iy[0]++)
            for (iy[1] = 0; iy[1] < ys[1]; iy[1]++)
                for (iy[2] = 0; iy[2] < ys[2]; iy[2]++)
                    for (iy[3] = 0; iy[3] < ys[3]; iy[3]++) {
                        int64_t c = iy[ax], p = 0;
                        while (c >= lens[p]) c -= lens[p++];
                        int64_t ix[4] = {iy[0], iy[1], iy[2], iy[3]};
                        ix[ax] = c;
                        ref[off4(ys, iy)] = v[p][off4(sh[p], ix)];
                    }
        char what[32];
        snprintf(what, sizeof what, "concat axis %d", ax);
        qkv_tensor *y = qkv_concat(ctx, xs, 3, ax == 3 ? -1 : ax);
        expect_ok(ctx);
        expect_shape(y, 4, ys, what);
        int64_t n = ys[0] * ys[1] * ys[2] * ys[3];
        expect_exact(y, ref, n, what);
        /* one tensor: a copy */
        expect_exact(qkv_concat(ctx, xs, 1, ax), v[0], n / 6, "concat of one");
    }
    /* incompatible shapes */
    const int64_t a[2] = {2, 3}, b[2] = {3, 3};
    double va[6], vb[9];
    qkv_tensor *pair[2] = {mk_rand(ctx, DT, 2, a, va, -1, 1), mk_rand(ctx, DT, 2, b, vb, -1, 1)};
    ck_assert_ptr_null(qkv_concat(ctx, pair, 2, 1));
    ASSERT_HAS(qkv_ctx_error(ctx), "concat");
    ASSERT_HAS(qkv_ctx_error(ctx), "(3,3)");
    qkv_ctx_clear_error(ctx);
    ck_assert_ptr_nonnull(qkv_concat(ctx, pair, 2, 0)); /* along axis 0 they do fit */
    qkv_ctx_free(ctx);
}
END_TEST

START_TEST(test_concat_of_slices_is_identity) {
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_test_seed(140);
    const int64_t s[4] = {3, 4, 5, 2};
    double xv[MAXN];
    qkv_tensor *x = mk_rand(ctx, DT, 4, s, xv, -1, 1);
    for (int ax = 0; ax < 4; ax++) {
        /* two pieces [0,1) [1,n), and (when n >= 3) three pieces */
        qkv_tensor *p2[2] = {qkv_slice(ctx, x, ax, 0, 1), qkv_slice(ctx, x, ax, 1, s[ax] - 1)};
        qkv_tensor *y = qkv_concat(ctx, p2, 2, ax);
        expect_ok(ctx);
        expect_shape(y, 4, s, "concat(slices)");
        expect_exact(y, xv, 120, "concat of two slices");
        if (s[ax] >= 3) {
            qkv_tensor *p3[3] = {qkv_slice(ctx, x, ax, 0, 1), qkv_slice(ctx, x, ax, 1, 1),
                                 qkv_slice(ctx, x, ax, 2, s[ax] - 2)};
            expect_exact(qkv_concat(ctx, p3, 3, ax), xv, 120, "concat of three slices");
        }
    }
    expect_ok(ctx);
    qkv_ctx_free(ctx);
}
END_TEST

/* ---- suite ----------------------------------------------------------------------------- */

Suite *tensor_suite(void) {
    Suite *s = suite_create("tensor");

    TCase *tc = tcase_create("create");
    tcase_add_test(tc, test_dtype_helpers);
    tcase_add_test(tc, test_zeros_and_full);
    tcase_add_test(tc, test_from_buffer_copies);
    tcase_add_test(tc, test_wrap_shares_memory);
    tcase_add_test(tc, test_convert);
    tcase_add_test(tc, test_shape_validation);
    tcase_add_test(tc, test_shape_str);
    tcase_add_test(tc, test_tensor_dim_negative);
    suite_add_tcase(s, tc);

    tc = tcase_create("rng");
    tcase_add_test(tc, test_rng_same_seed);
    tcase_add_test(tc, test_rng_seeds_and_streams_differ);
    tcase_add_test(tc, test_rng_golden_seed42);
    tcase_add_test(tc, test_rng_uniform_stats);
    tcase_add_test(tc, test_rng_normal_stats);
    tcase_add_test(tc, test_rng_fill);
    tcase_add_test(tc, test_rng_log_vs_libm);
    tcase_add_test(tc, test_rng_below_range);
    suite_add_tcase(s, tc);

    /* each op test runs twice: _i = 0 (F32 kernels), _i = 1 (F64 kernels) */
    tc = tcase_create("ops");
    tcase_add_loop_test(tc, test_matmul_2d_all_transposes, 0, 2);
    tcase_add_loop_test(tc, test_matmul_batched_4d, 0, 2);
    tcase_add_loop_test(tc, test_matmul_3d_by_shared_2d, 0, 2);
    tcase_add_loop_test(tc, test_matmul_2d_by_3d, 0, 2);
    tcase_add_test(tc, test_gemm_kernels_direct);
    tcase_add_test(tc, test_gemm_ld_strided);
    tcase_add_test(tc, test_gemm_timing);
#if QKV_GEMM_LIBXSMM && defined(__x86_64__)
    tcase_add_test(tc, test_gemm_ld_upper_clear);
#endif
    tcase_add_loop_test(tc, test_binary_same_shape, 0, 2);
    tcase_add_loop_test(tc, test_binary_bias_over_rows, 0, 2);
    tcase_add_loop_test(tc, test_binary_mask_like_over_4d, 0, 2);
    tcase_add_loop_test(tc, test_binary_column_and_outer, 0, 2);
    tcase_add_loop_test(tc, test_binary_incompatible, 0, 2);
    tcase_add_loop_test(tc, test_scale_add_scalar, 0, 2);
    tcase_add_loop_test(tc, test_sum_mean_each_axis, 0, 2);
    tcase_add_loop_test(tc, test_unary_vs_libm, 0, 2);
    tcase_add_loop_test(tc, test_gelu_hand_values, 0, 2);
    tcase_add_loop_test(tc, test_softmax_values, 0, 2);
    tcase_add_loop_test(tc, test_softmax_shift_invariant, 0, 2);
    tcase_add_loop_test(tc, test_softmax_huge_and_masked_rows, 0, 2);
    tcase_add_loop_test(tc, test_log_softmax_values, 0, 2);
    tcase_add_loop_test(tc, test_layernorm_vs_naive, 0, 2);
    tcase_add_loop_test(tc, test_embedding_lookup, 0, 2);
    tcase_add_loop_test(tc, test_cross_entropy_vs_naive, 0, 2);
    tcase_add_loop_test(tc, test_masked_fill_causal, 0, 2);
    tcase_add_loop_test(tc, test_reshape_shares_data, 0, 2);
    tcase_add_loop_test(tc, test_transpose_bthd, 0, 2);
    tcase_add_loop_test(tc, test_slice_each_axis, 0, 2);
    tcase_add_loop_test(tc, test_concat_each_axis, 0, 2);
    tcase_add_loop_test(tc, test_concat_of_slices_is_identity, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}
