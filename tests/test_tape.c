/* Autograd mechanics: gradient summation over multiple uses, accumulation across steps,
 * no-grad mode, error reporting, the arena's steady state, and the custom-op API.
 * Expected gradients are derived by hand and evaluated with naive double loops. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/arena.h"
#include "autograd/ops.h"
#include "suites.h"
#include "tensor/tensor.h"
#include "testutil.h"

/* loop tests run once per float dtype: _i = 0 is F32, _i = 1 is F64 */
#define DT ((_i) == 0 ? QKV_F32 : QKV_F64)

/* test data: qkv_test_seed and qkv_test_uniform (testutil.h); closeness: qkv_test_near, with
 * these tolerances (float gradients vs a double reference, or double vs double) */
#define TOL(dt) ((dt) == QKV_F32 ? 1e-4 : 1e-11)

#define ASSERT_HAS(msg, sub)                                                                   \
    ck_assert_msg(strstr((msg), (sub)) != NULL, "message \"%s\" does not contain \"%s\"", (msg), \
                  (sub))

/* a heap leaf with random values (rounded to dt, written back into vals); grad optional */
static qkv_tensor *leaf(qkv_dtype dt, int nd, const int64_t *shape, double *vals, double lo,
                        double hi, bool grad) {
    qkv_tensor *t = qkv_tensor_zeros(dt, nd, shape);
    ck_assert_ptr_nonnull(t);
    for (int64_t i = 0; i < t->numel; i++) {
        qkv_tensor_set(t, i, qkv_test_uniform(lo, hi));
        vals[i] = qkv_tensor_get(t, i);
    }
    if (grad) ck_assert_int_eq(qkv_tensor_require_grad(t), 0);
    return t;
}

static void expect_grad(const qkv_tensor *t, const double *ref, int64_t n, double tol,
                        const char *what) {
    ck_assert_msg(t->grad != NULL, "%s: no gradient", what);
    for (int64_t i = 0; i < n; i++) {
        double g = qkv_tensor_grad_get(t, i);
        if (!qkv_test_near(g, ref[i], tol))
            ck_abort_msg("%s [%s] grad %lld: got %.17g, expected %.17g", what,
                         qkv_dtype_name(t->dtype), (long long)i, g, ref[i]);
    }
}

static void expect_ok(const qkv_ctx *ctx) {
    ck_assert_msg(qkv_ctx_ok(ctx), "unexpected error: %s", qkv_ctx_error(ctx));
}

/* ---- one tensor used several times ------------------------------------------------------ */

START_TEST(test_cube_via_two_muls) {
    qkv_test_seed(1);
    const int64_t s[2] = {2, 5};
    double xv[10], wv[10], ref[10];
    qkv_tensor *x = leaf(DT, 2, s, xv, -2, 2, true);
    qkv_tensor *w = leaf(DT, 2, s, wv, 0.5, 1.5, false);
    qkv_ctx *ctx = qkv_ctx_new();
    /* L = sum(w * x*x*x): x enters three times, dL/dx = 3 x^2 w */
    qkv_tensor *y = qkv_mul(ctx, qkv_mul(ctx, x, x), x);
    qkv_tensor *loss = qkv_sum_all(ctx, qkv_mul(ctx, y, w));
    expect_ok(ctx);
    for (int i = 0; i < 10; i++)
        ck_assert(qkv_test_near(qkv_tensor_get(y, i), xv[i] * xv[i] * xv[i], TOL(DT)));
    ck_assert_int_eq(qkv_backward(ctx, loss), 0);
    for (int i = 0; i < 10; i++) ref[i] = 3 * xv[i] * xv[i] * wv[i];
    expect_grad(x, ref, 10, TOL(DT), "d/dx sum(w x^3)");
    ck_assert_ptr_null(w->grad); /* w never asked for a gradient */
    qkv_ctx_free(ctx);
    qkv_tensor_free(x);
    qkv_tensor_free(w);
}
END_TEST

START_TEST(test_qkv_self_attention_style) {
    /* y = (x x^T) x, L = sum(G * y): with S = x x^T,
     * dL/dx = S G + G (x^T x) + x (G^T x) (three uses of x: as Q, as K, as V) */
    qkv_test_seed(2);
    enum { M = 4, D = 3 };
    const int64_t s[2] = {M, D};
    double xv[M * D], gv[M * D];
    qkv_tensor *x = leaf(DT, 2, s, xv, -1, 1, true);
    qkv_tensor *g = leaf(DT, 2, s, gv, -1, 1, false);
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_tensor *S = qkv_matmul(ctx, x, x, false, true);
    qkv_tensor *y = qkv_matmul(ctx, S, x, false, false);
    qkv_tensor *loss = qkv_sum_all(ctx, qkv_mul(ctx, y, g));
    expect_ok(ctx);
    ck_assert_int_eq(qkv_backward(ctx, loss), 0);

    double Sr[M][M], xtx[D][D], gtx[D][D], ref[M * D];
    for (int i = 0; i < M; i++)
        for (int j = 0; j < M; j++) {
            Sr[i][j] = 0;
            for (int k = 0; k < D; k++) Sr[i][j] += xv[i * D + k] * xv[j * D + k];
        }
    for (int a = 0; a < D; a++)
        for (int b = 0; b < D; b++) {
            xtx[a][b] = gtx[a][b] = 0;
            for (int i = 0; i < M; i++) {
                xtx[a][b] += xv[i * D + a] * xv[i * D + b];
                gtx[a][b] += gv[i * D + a] * xv[i * D + b];
            }
        }
    for (int i = 0; i < M; i++)
        for (int k = 0; k < D; k++) {
            double v = 0;
            for (int j = 0; j < M; j++) v += Sr[i][j] * gv[j * D + k];
            for (int b = 0; b < D; b++) v += gv[i * D + b] * xtx[b][k] + xv[i * D + b] * gtx[b][k];
            ref[i * D + k] = v;
        }
    expect_grad(x, ref, M * D, TOL(DT), "Q=K=V gradient");
    qkv_ctx_free(ctx);
    qkv_tensor_free(x);
    qkv_tensor_free(g);
}
END_TEST

START_TEST(test_same_tensor_both_operands) {
    /* add(x, x) and sub(x, x): dL/dx = 2 and 0; matmul(x^T, x) on a (3,2) x */
    qkv_test_seed(3);
    const int64_t s[2] = {3, 2};
    double xv[6], ref[6];
    qkv_tensor *x = leaf(DT, 2, s, xv, -1, 1, true);
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_tensor *loss = qkv_add(ctx, qkv_sum_all(ctx, qkv_add(ctx, x, x)),
                               qkv_sum_all(ctx, qkv_scale(ctx, qkv_sub(ctx, x, x), 5)));
    ck_assert_int_eq(qkv_backward(ctx, loss), 0);
    for (int i = 0; i < 6; i++) ref[i] = 2;
    expect_grad(x, ref, 6, TOL(DT), "add(x,x) + 5 sub(x,x)");
    /* L = sum(x^T x) = sum_ab sum_i x_ia x_ib: dL/dx_ia = 2 sum_b x_ib */
    qkv_tensor_zero_grad(x);
    qkv_ctx_reset(ctx);
    loss = qkv_sum_all(ctx, qkv_matmul(ctx, x, x, true, false));
    ck_assert_int_eq(qkv_backward(ctx, loss), 0);
    for (int i = 0; i < 3; i++)
        for (int a = 0; a < 2; a++) ref[i * 2 + a] = 2 * (xv[i * 2] + xv[i * 2 + 1]);
    expect_grad(x, ref, 6, TOL(DT), "sum(x^T x)");
    qkv_ctx_free(ctx);
    qkv_tensor_free(x);
}
END_TEST

/* ---- accumulation, zero_grad ------------------------------------------------------------- */

static qkv_tensor *weighted_sum(qkv_ctx *ctx, qkv_tensor *x, qkv_tensor *w) {
    return qkv_sum_all(ctx, qkv_mul(ctx, x, w));
}

START_TEST(test_grad_accumulates_across_steps) {
    qkv_test_seed(4);
    const int64_t s[1] = {6};
    double xv[6], wv[6], ref[6];
    qkv_tensor *x = leaf(DT, 1, s, xv, -1, 1, true);
    qkv_tensor *w = leaf(DT, 1, s, wv, -2, 2, false);
    for (int i = 0; i < 6; i++) ck_assert(qkv_tensor_grad_get(x, i) == 0); /* require_grad zeroes */
    qkv_ctx *ctx = qkv_ctx_new();
    for (int step = 1; step <= 3; step++) {
        ck_assert_int_eq(qkv_backward(ctx, weighted_sum(ctx, x, w)), 0);
        qkv_ctx_reset(ctx);
        for (int i = 0; i < 6; i++) ref[i] = step * wv[i];
        expect_grad(x, ref, 6, TOL(DT), "accumulated over steps");
    }
    qkv_tensor_zero_grad(x);
    for (int i = 0; i < 6; i++) ck_assert(qkv_tensor_grad_get(x, i) == 0.0);
    ck_assert_ptr_nonnull(x->grad); /* zeroed, not dropped */
    ck_assert(x->requires_grad);
    ck_assert_int_eq(qkv_backward(ctx, weighted_sum(ctx, x, w)), 0);
    expect_grad(x, wv, 6, TOL(DT), "after zero_grad");
    qkv_tensor_zero_grad(w); /* no grad buffer: a no-op */
    ck_assert_ptr_null(w->grad);
    /* require_grad on an I32 tensor is refused */
    int32_t iv[2] = {1, 2};
    const int64_t s2[1] = {2};
    qkv_tensor *it = qkv_tensor_from_buffer(QKV_I32, 1, s2, iv);
    ck_assert_int_eq(qkv_tensor_require_grad(it), -1);
    ck_assert(!it->requires_grad);
    qkv_tensor_free(it);
    qkv_ctx_free(ctx);
    qkv_tensor_free(x);
    qkv_tensor_free(w);
}
END_TEST

/* ---- no-grad mode ------------------------------------------------------------------------- */

START_TEST(test_no_grad_mode) {
    qkv_test_seed(5);
    const int64_t s[2] = {3, 4};
    double xv[12];
    qkv_tensor *x = leaf(DT, 2, s, xv, -1, 1, true);
    qkv_ctx *ctx = qkv_ctx_new();
    ck_assert(qkv_ctx_grad_enabled(ctx));
    ck_assert(qkv_ctx_set_grad_enabled(ctx, false) == true); /* returns the previous mode */
    ck_assert(!qkv_ctx_grad_enabled(ctx));
    qkv_tensor *h = qkv_tanh(ctx, qkv_matmul(ctx, x, x, false, true));
    qkv_tensor *r = qkv_reshape(ctx, h, 1, (const int64_t[]){9});
    qkv_tensor *loss = qkv_sum_all(ctx, qkv_softmax(ctx, r));
    expect_ok(ctx);
    ck_assert_int_eq(qkv_ctx_tape_len(ctx), 0);
    ck_assert(!h->requires_grad && !r->requires_grad && !loss->requires_grad);
    ck_assert(qkv_test_near(qkv_tensor_get(loss, 0), 1.0, TOL(DT))); /* values still computed */
    ck_assert_int_eq(qkv_backward(ctx, loss), -1);
    ASSERT_HAS(qkv_ctx_error(ctx), "requires grad");
    ck_assert_ptr_nonnull(x->grad);
    for (int i = 0; i < 12; i++) ck_assert(qkv_tensor_grad_get(x, i) == 0.0);
    /* back on: records again */
    ck_assert(qkv_ctx_set_grad_enabled(ctx, true) == false);
    qkv_ctx_reset(ctx);
    ck_assert(qkv_ctx_grad_enabled(ctx)); /* reset keeps the mode */
    h = qkv_tanh(ctx, x);
    ck_assert(h->requires_grad);
    ck_assert_int_eq(qkv_ctx_tape_len(ctx), 1);
    qkv_ctx_free(ctx);
    qkv_tensor_free(x);
}
END_TEST

START_TEST(test_inputs_without_grad_record_nothing) {
    qkv_test_seed(6);
    const int64_t s[2] = {2, 3};
    double av[6], bv[6];
    qkv_tensor *a = leaf(DT, 2, s, av, -1, 1, false);
    qkv_tensor *b = leaf(DT, 2, s, bv, -1, 1, false);
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_tensor *y = qkv_exp(ctx, qkv_mul(ctx, qkv_add(ctx, a, b), b));
    qkv_tensor *l = qkv_mean_all(ctx, qkv_transpose(ctx, y, 0, 1));
    expect_ok(ctx);
    ck_assert_int_eq(qkv_ctx_tape_len(ctx), 0);
    ck_assert(!y->requires_grad && !l->requires_grad);
    /* one input that requires grad is enough to record, and only from there on */
    ck_assert_int_eq(qkv_tensor_require_grad(b), 0);
    qkv_tensor *z = qkv_mul(ctx, a, a); /* nothing requires grad */
    ck_assert_int_eq(qkv_ctx_tape_len(ctx), 0);
    qkv_tensor *z2 = qkv_add(ctx, z, b);
    ck_assert_int_eq(qkv_ctx_tape_len(ctx), 1);
    ck_assert(!z->requires_grad && z2->requires_grad);
    ck_assert_int_eq(qkv_backward(ctx, qkv_sum_all(ctx, z2)), 0);
    ck_assert_ptr_null(a->grad);
    double ones[6] = {1, 1, 1, 1, 1, 1};
    expect_grad(b, ones, 6, TOL(DT), "d sum(a*a + b) / db");
    qkv_ctx_free(ctx);
    qkv_tensor_free(a);
    qkv_tensor_free(b);
}
END_TEST

/* ---- errors ------------------------------------------------------------------------------- */

static qkv_tensor *ctx_rand(qkv_ctx *ctx, qkv_dtype dt, int nd, const int64_t *shape, bool grad) {
    qkv_tensor *t = qkv_ctx_tensor(ctx, dt, nd, shape);
    ck_assert_ptr_nonnull(t);
    for (int64_t i = 0; i < t->numel; i++) qkv_tensor_set(t, i, qkv_test_uniform(-1, 1));
    if (grad) t->requires_grad = true; /* an arena leaf: its gradient lives in the arena too */
    return t;
}

START_TEST(test_err_matmul_inner) {
    qkv_ctx *ctx = qkv_ctx_new();
    const int64_t sa[2] = {2, 3}, sb[2] = {4, 5};
    qkv_tensor *a = ctx_rand(ctx, QKV_F32, 2, sa, true), *b = ctx_rand(ctx, QKV_F32, 2, sb, true);
    ck_assert(qkv_ctx_ok(ctx));
    ck_assert_str_eq(qkv_ctx_error(ctx), "");
    ck_assert_ptr_null(qkv_matmul(ctx, a, b, false, false));
    ck_assert(!qkv_ctx_ok(ctx));
    const char *m = qkv_ctx_error(ctx);
    ASSERT_HAS(m, "matmul");
    ASSERT_HAS(m, "(2,3)");
    ASSERT_HAS(m, "(4,5)");
    ck_assert_int_eq(qkv_ctx_tape_len(ctx), 0);
    /* the same shapes with a transpose that does not fit either */
    qkv_ctx_clear_error(ctx);
    ck_assert(qkv_ctx_ok(ctx));
    ck_assert_ptr_null(qkv_matmul(ctx, a, b, true, true)); /* (3,2) x (5,4) */
    ASSERT_HAS(qkv_ctx_error(ctx), "matmul");
    /* batch dims that differ, and a 1-D operand */
    qkv_ctx_clear_error(ctx);
    const int64_t b1[3] = {2, 3, 4}, b2[3] = {3, 4, 5}, v1[1] = {3};
    ck_assert_ptr_null(qkv_matmul(ctx, ctx_rand(ctx, QKV_F32, 3, b1, false),
                                  ctx_rand(ctx, QKV_F32, 3, b2, false), false, false));
    ASSERT_HAS(qkv_ctx_error(ctx), "(2,3,4)");
    ASSERT_HAS(qkv_ctx_error(ctx), "(3,4,5)");
    qkv_ctx_clear_error(ctx);
    ck_assert_ptr_null(qkv_matmul(ctx, a, ctx_rand(ctx, QKV_F32, 1, v1, false), false, false));
    ASSERT_HAS(qkv_ctx_error(ctx), "matmul");
    qkv_ctx_free(ctx);
}
END_TEST

START_TEST(test_err_add_broadcast) {
    qkv_ctx *ctx = qkv_ctx_new();
    const int64_t sa[3] = {2, 3, 4}, sb[2] = {2, 4};
    qkv_tensor *a = ctx_rand(ctx, QKV_F64, 3, sa, true), *b = ctx_rand(ctx, QKV_F64, 2, sb, true);
    ck_assert_ptr_null(qkv_add(ctx, a, b));
    const char *m = qkv_ctx_error(ctx);
    ASSERT_HAS(m, "add");
    ASSERT_HAS(m, "broadcast");
    ASSERT_HAS(m, "(2,3,4)");
    ASSERT_HAS(m, "(2,4)");
    ck_assert_int_eq(qkv_ctx_tape_len(ctx), 0);
    qkv_ctx_free(ctx);
}
END_TEST

START_TEST(test_err_backward_non_scalar) {
    qkv_ctx *ctx = qkv_ctx_new();
    const int64_t s[2] = {2, 3};
    qkv_tensor *y = qkv_exp(ctx, ctx_rand(ctx, QKV_F32, 2, s, true));
    ck_assert_int_eq(qkv_backward(ctx, y), -1);
    ASSERT_HAS(qkv_ctx_error(ctx), "scalar");
    ASSERT_HAS(qkv_ctx_error(ctx), "(2,3)");
    /* a one-element tensor of any rank is accepted */
    qkv_ctx_reset(ctx);
    const int64_t s1[2] = {1, 1};
    qkv_tensor *x = ctx_rand(ctx, QKV_F32, 2, s1, true);
    ck_assert_int_eq(qkv_backward(ctx, qkv_exp(ctx, x)), 0);
    ck_assert(qkv_test_near(qkv_tensor_grad_get(x, 0), exp(qkv_tensor_get(x, 0)), 1e-6));
    /* NULL loss */
    qkv_ctx_reset(ctx);
    ck_assert_int_eq(qkv_backward(ctx, NULL), -1);
    ASSERT_HAS(qkv_ctx_error(ctx), "backward");
    qkv_ctx_free(ctx);
}
END_TEST

START_TEST(test_err_backward_after_reset) {
    qkv_test_seed(7);
    const int64_t s[1] = {4};
    double xv[4];
    qkv_tensor *x = leaf(QKV_F64, 1, s, xv, -1, 1, true);
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_tensor *loss = qkv_sum_all(ctx, qkv_mul(ctx, x, x));
    expect_ok(ctx);
    qkv_ctx_reset(ctx);
    ck_assert_int_eq(qkv_backward(ctx, loss), -1);
    ASSERT_HAS(qkv_ctx_error(ctx), "released");
    for (int i = 0; i < 4; i++) ck_assert(qkv_tensor_grad_get(x, i) == 0.0);
    /* also when a new (smaller) step has started in the same arena */
    qkv_ctx_reset(ctx);
    qkv_tensor *loss1 = qkv_sum_all(ctx, qkv_mul(ctx, x, x));
    qkv_ctx_reset(ctx);
    qkv_tensor *fresh = qkv_exp(ctx, x);
    ck_assert_ptr_nonnull(fresh);
    ck_assert_int_eq(qkv_backward(ctx, loss1), -1);
    ASSERT_HAS(qkv_ctx_error(ctx), "released");
    for (int i = 0; i < 4; i++) ck_assert(qkv_tensor_grad_get(x, i) == 0.0);
    qkv_ctx_free(ctx);
    qkv_tensor_free(x);
}
END_TEST

START_TEST(test_err_backward_twice) {
    qkv_test_seed(8);
    const int64_t s[1] = {3};
    double xv[3], ref[3];
    qkv_tensor *x = leaf(QKV_F64, 1, s, xv, -1, 1, true);
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_tensor *loss = qkv_sum_all(ctx, qkv_mul(ctx, x, x));
    ck_assert_int_eq(qkv_backward(ctx, loss), 0);
    ck_assert_int_eq(qkv_backward(ctx, loss), -1);
    ASSERT_HAS(qkv_ctx_error(ctx), "already");
    for (int i = 0; i < 3; i++) ref[i] = 2 * xv[i]; /* not doubled */
    expect_grad(x, ref, 3, 1e-12, "after a refused second backward");
    /* another loss on the same tape is refused too */
    qkv_ctx_clear_error(ctx);
    qkv_tensor *loss2 = qkv_sum_all(ctx, qkv_exp(ctx, x));
    ck_assert_int_eq(qkv_backward(ctx, loss2), -1);
    ASSERT_HAS(qkv_ctx_error(ctx), "already");
    /* after a reset it works again */
    qkv_ctx_reset(ctx);
    ck_assert_int_eq(qkv_backward(ctx, qkv_sum_all(ctx, qkv_mul(ctx, x, x))), 0);
    for (int i = 0; i < 3; i++) ref[i] = 4 * xv[i];
    expect_grad(x, ref, 3, 1e-12, "second step");
    qkv_ctx_free(ctx);
    qkv_tensor_free(x);
}
END_TEST

START_TEST(test_err_embedding_out_of_range) {
    qkv_ctx *ctx = qkv_ctx_new();
    const int64_t st[2] = {5, 3}, si[1] = {4};
    qkv_tensor *table = ctx_rand(ctx, QKV_F32, 2, st, true);
    const int32_t idx[4] = {0, 4, 7, 1};
    ck_assert_ptr_null(qkv_embedding(ctx, table, qkv_ctx_tensor_from(ctx, QKV_I32, 1, si, idx)));
    const char *m = qkv_ctx_error(ctx);
    ASSERT_HAS(m, "embedding");
    ASSERT_HAS(m, "out of range");
    ASSERT_HAS(m, "7");
    qkv_ctx_clear_error(ctx);
    const int32_t neg[4] = {0, -3, 1, 1};
    ck_assert_ptr_null(qkv_embedding(ctx, table, qkv_ctx_tensor_from(ctx, QKV_I32, 1, si, neg)));
    ASSERT_HAS(qkv_ctx_error(ctx), "out of range");
    ASSERT_HAS(qkv_ctx_error(ctx), "-3");
    qkv_ctx_clear_error(ctx);
    const int32_t edge[4] = {5, 0, 0, 0}; /* == rows */
    ck_assert_ptr_null(qkv_embedding(ctx, table, qkv_ctx_tensor_from(ctx, QKV_I32, 1, si, edge)));
    ASSERT_HAS(qkv_ctx_error(ctx), "out of range");
    qkv_ctx_clear_error(ctx);
    /* float indices are refused */
    ck_assert_ptr_null(qkv_embedding(ctx, table, ctx_rand(ctx, QKV_F32, 1, si, false)));
    ASSERT_HAS(qkv_ctx_error(ctx), "I32");
    ck_assert_int_eq(qkv_ctx_tape_len(ctx), 0);
    qkv_ctx_free(ctx);
}
END_TEST

START_TEST(test_err_cross_entropy_target) {
    qkv_ctx *ctx = qkv_ctx_new();
    const int64_t sl[2] = {3, 5}, st[1] = {3};
    qkv_tensor *logits = ctx_rand(ctx, QKV_F64, 2, sl, true);
    const int32_t t[3] = {0, 5, 2};
    ck_assert_ptr_null(qkv_cross_entropy(ctx, logits, qkv_ctx_tensor_from(ctx, QKV_I32, 1, st, t), -100));
    const char *m = qkv_ctx_error(ctx);
    ASSERT_HAS(m, "cross_entropy");
    ASSERT_HAS(m, "out of range");
    ASSERT_HAS(m, "5");
    qkv_ctx_clear_error(ctx);
    const int32_t tn[3] = {0, 1, -1}; /* negative and not the ignore index */
    ck_assert_ptr_null(qkv_cross_entropy(ctx, logits, qkv_ctx_tensor_from(ctx, QKV_I32, 1, st, tn), -100));
    ASSERT_HAS(qkv_ctx_error(ctx), "-1");
    qkv_ctx_clear_error(ctx);
    /* a target count that does not match the rows */
    const int64_t s4[1] = {4};
    const int32_t t4[4] = {0, 0, 0, 0};
    ck_assert_ptr_null(qkv_cross_entropy(ctx, logits, qkv_ctx_tensor_from(ctx, QKV_I32, 1, s4, t4), -100));
    ASSERT_HAS(qkv_ctx_error(ctx), "(3,5)");
    ASSERT_HAS(qkv_ctx_error(ctx), "(4)");
    qkv_ctx_free(ctx);
}
END_TEST

START_TEST(test_err_reshape_count) {
    qkv_ctx *ctx = qkv_ctx_new();
    const int64_t s[2] = {2, 3};
    qkv_tensor *x = ctx_rand(ctx, QKV_F32, 2, s, true);
    ck_assert_ptr_null(qkv_reshape(ctx, x, 2, (const int64_t[]){4, 2}));
    const char *m = qkv_ctx_error(ctx);
    ASSERT_HAS(m, "reshape");
    ASSERT_HAS(m, "(2,3)");
    ASSERT_HAS(m, "(4,2)");
    qkv_ctx_clear_error(ctx);
    ck_assert_ptr_null(qkv_reshape(ctx, x, 2, (const int64_t[]){4, -1})); /* 6 % 4 != 0 */
    ASSERT_HAS(qkv_ctx_error(ctx), "reshape");
    qkv_ctx_clear_error(ctx);
    ck_assert_ptr_null(qkv_reshape(ctx, x, 2, (const int64_t[]){-1, -1}));
    ASSERT_HAS(qkv_ctx_error(ctx), "reshape");
    qkv_ctx_clear_error(ctx);
    ck_assert_ptr_null(qkv_reshape(ctx, x, 2, (const int64_t[]){6, 0}));
    ASSERT_HAS(qkv_ctx_error(ctx), "reshape");
    qkv_ctx_clear_error(ctx);
    ck_assert_ptr_null(qkv_reshape(ctx, x, 5, (const int64_t[]){1, 1, 2, 3, 1}));
    ASSERT_HAS(qkv_ctx_error(ctx), "reshape");
    ck_assert_int_eq(qkv_ctx_tape_len(ctx), 0);
    qkv_ctx_free(ctx);
}
END_TEST

START_TEST(test_err_slice_range) {
    qkv_ctx *ctx = qkv_ctx_new();
    const int64_t s[2] = {2, 3};
    qkv_tensor *x = ctx_rand(ctx, QKV_F32, 2, s, true);
    const int64_t bad[][3] = {{1, 2, 2}, {1, -1, 1}, {1, 0, 0}, {0, 2, 1}, {1, 3, 1}, {2, 0, 1}, {-3, 0, 1}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        ck_assert_msg(qkv_slice(ctx, x, (int)bad[k][0], bad[k][1], bad[k][2]) == NULL,
                      "slice axis %lld [%lld,+%lld) of (2,3) accepted", (long long)bad[k][0],
                      (long long)bad[k][1], (long long)bad[k][2]);
        ASSERT_HAS(qkv_ctx_error(ctx), "slice");
        ASSERT_HAS(qkv_ctx_error(ctx), "(2,3)");
        qkv_ctx_clear_error(ctx);
    }
    ck_assert_ptr_nonnull(qkv_slice(ctx, x, 1, 1, 2)); /* the edge that fits */
    ck_assert_ptr_nonnull(qkv_slice(ctx, x, -1, 0, 3));
    expect_ok(ctx);
    qkv_ctx_free(ctx);
}
END_TEST

START_TEST(test_err_transpose_axis) {
    qkv_ctx *ctx = qkv_ctx_new();
    const int64_t s[2] = {2, 3};
    qkv_tensor *x = ctx_rand(ctx, QKV_F32, 2, s, true);
    const int axes[][2] = {{0, 2}, {2, 0}, {-3, 1}, {0, -3}, {5, 5}};
    for (size_t k = 0; k < sizeof axes / sizeof axes[0]; k++) {
        ck_assert_ptr_null(qkv_transpose(ctx, x, axes[k][0], axes[k][1]));
        ASSERT_HAS(qkv_ctx_error(ctx), "transpose");
        ASSERT_HAS(qkv_ctx_error(ctx), "(2,3)");
        qkv_ctx_clear_error(ctx);
    }
    ck_assert_int_eq(qkv_ctx_tape_len(ctx), 0);
    qkv_ctx_free(ctx);
}
END_TEST

START_TEST(test_err_null_keeps_first_message) {
    qkv_ctx *ctx = qkv_ctx_new();
    const int64_t sa[2] = {2, 3}, sb[2] = {4, 5};
    qkv_tensor *a = ctx_rand(ctx, QKV_F32, 2, sa, true), *b = ctx_rand(ctx, QKV_F32, 2, sb, true);
    qkv_tensor *bad = qkv_matmul(ctx, a, b, false, false);
    ck_assert_ptr_null(bad);
    char first[512];
    snprintf(first, sizeof first, "%s", qkv_ctx_error(ctx));
    ASSERT_HAS(first, "matmul");
    /* a whole forward written without checks: every op passes NULL along */
    qkv_tensor *h = qkv_add(ctx, bad, a);
    h = qkv_relu(ctx, h);
    h = qkv_softmax(ctx, h);
    h = qkv_layernorm(ctx, h, NULL, NULL, 1e-5);
    h = qkv_transpose(ctx, h, 0, 1);
    h = qkv_reshape(ctx, h, 1, (const int64_t[]){-1});
    h = qkv_slice(ctx, h, 0, 0, 1);
    qkv_tensor *parts[2] = {h, a};
    h = qkv_concat(ctx, parts, 2, 0);
    h = qkv_matmul(ctx, h, a, false, false);
    h = qkv_scale(ctx, h, 2);
    qkv_tensor *loss = qkv_mean_all(ctx, h);
    ck_assert_ptr_null(loss);
    ck_assert_int_eq(qkv_backward(ctx, loss), -1);
    /* a later genuine error does not overwrite the first either */
    ck_assert_ptr_null(qkv_add(ctx, a, b));
    ck_assert_str_eq(qkv_ctx_error(ctx), first);
    ck_assert(!qkv_ctx_ok(ctx));
    /* an op given NULL with no error pending returns NULL */
    qkv_ctx_reset(ctx);
    ck_assert(qkv_ctx_ok(ctx)); /* reset clears the error */
    ck_assert_ptr_null(qkv_exp(ctx, NULL));
    ck_assert_ptr_null(qkv_mul(ctx, NULL, NULL));
    qkv_ctx_free(ctx);
}
END_TEST

START_TEST(test_err_dtype_mismatch) {
    qkv_ctx *ctx = qkv_ctx_new();
    const int64_t s[2] = {2, 3}, st[2] = {3, 2};
    qkv_tensor *a = ctx_rand(ctx, QKV_F32, 2, s, true), *b = ctx_rand(ctx, QKV_F64, 2, s, true);
    ck_assert_ptr_null(qkv_add(ctx, a, b));
    const char *m = qkv_ctx_error(ctx);
    ASSERT_HAS(m, "add");
    ASSERT_HAS(m, "F32");
    ASSERT_HAS(m, "F64");
    qkv_ctx_clear_error(ctx);
    ck_assert_ptr_null(qkv_matmul(ctx, a, ctx_rand(ctx, QKV_F64, 2, st, false), false, false));
    ASSERT_HAS(qkv_ctx_error(ctx), "matmul");
    ASSERT_HAS(qkv_ctx_error(ctx), "F64");
    qkv_ctx_clear_error(ctx);
    qkv_tensor *parts[2] = {a, b};
    ck_assert_ptr_null(qkv_concat(ctx, parts, 2, 0));
    ASSERT_HAS(qkv_ctx_error(ctx), "concat");
    qkv_ctx_clear_error(ctx);
    /* an I32 tensor where a float one is needed */
    qkv_tensor *i = qkv_ctx_tensor(ctx, QKV_I32, 2, s);
    ck_assert_ptr_null(qkv_exp(ctx, i));
    ASSERT_HAS(qkv_ctx_error(ctx), "exp");
    ASSERT_HAS(qkv_ctx_error(ctx), "I32");
    ck_assert_int_eq(qkv_ctx_tape_len(ctx), 0);
    qkv_ctx_free(ctx);
}
END_TEST

/* ---- arena ---------------------------------------------------------------------------------- */

/* a small transformer-ish step: one forward + backward on fixed parameters */
static void one_step(qkv_ctx *ctx, qkv_tensor *x, qkv_tensor *w, qkv_tensor *g, const qkv_tensor *mask) {
    qkv_tensor *h = qkv_matmul(ctx, x, w, false, false);
    h = qkv_layernorm(ctx, qkv_gelu(ctx, h), g, NULL, 1e-5);
    qkv_tensor *att = qkv_matmul(ctx, h, h, false, true);
    att = qkv_softmax(ctx, qkv_masked_fill(ctx, att, mask, -INFINITY));
    qkv_tensor *y = qkv_matmul(ctx, att, h, false, false);
    qkv_tensor *loss = qkv_mean_all(ctx, qkv_mul(ctx, y, y));
    ck_assert_msg(loss != NULL, "forward failed: %s", qkv_ctx_error(ctx));
    ck_assert_int_eq(qkv_backward(ctx, loss), 0);
}

START_TEST(test_arena_steady_state) {
    qkv_test_seed(9);
    enum { T = 8, C = 16 };
    const int64_t sx[2] = {T, C}, sw[2] = {C, C}, sg[1] = {C}, sm[2] = {T, T};
    double buf[C * C];
    qkv_tensor *x = leaf(QKV_F32, 2, sx, buf, -1, 1, false);
    qkv_tensor *w = leaf(QKV_F32, 2, sw, buf, -0.3, 0.3, true);
    qkv_tensor *g = leaf(QKV_F32, 1, sg, buf, 0.5, 1.5, true);
    int32_t mk[T * T];
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++) mk[i * T + j] = j > i;
    qkv_tensor *mask = qkv_tensor_from_buffer(QKV_I32, 2, sm, mk);
    qkv_ctx *ctx = qkv_ctx_new();
    ck_assert_uint_eq(qkv_ctx_arena_used(ctx), 0);
    ck_assert_uint_eq(qkv_ctx_arena_mallocs(ctx), 0); /* nothing until the first allocation */
    one_step(ctx, x, w, g, mask); /* warm-up */
    size_t used = qkv_ctx_arena_used(ctx);
    ck_assert(used > 0);
    ck_assert(qkv_ctx_tape_len(ctx) > 0);
    qkv_ctx_reset(ctx);
    ck_assert_uint_eq(qkv_ctx_arena_used(ctx), 0);
    ck_assert_int_eq(qkv_ctx_tape_len(ctx), 0);
    unsigned long long m0 = qkv_ctx_arena_mallocs(ctx);
    size_t peak0 = qkv_ctx_arena_peak(ctx);
    ck_assert(m0 >= 1);
    ck_assert_uint_eq(peak0, used);
    for (int it = 0; it < 50; it++) {
        one_step(ctx, x, w, g, mask);
        ck_assert_uint_eq(qkv_ctx_arena_used(ctx), used); /* the same graph, the same bytes */
        qkv_ctx_reset(ctx);
        ck_assert_uint_eq(qkv_ctx_arena_used(ctx), 0);
    }
    ck_assert_uint_eq(qkv_ctx_arena_mallocs(ctx), m0);
    ck_assert_uint_eq(qkv_ctx_arena_peak(ctx), peak0);
    /* the parameters' gradients accumulated over 51 steps */
    ck_assert_ptr_nonnull(w->grad);
    qkv_ctx_free(ctx);
    qkv_tensor_free(x);
    qkv_tensor_free(w);
    qkv_tensor_free(g);
    qkv_tensor_free(mask);
}
END_TEST

START_TEST(test_arena_steady_state_many_chunks) {
    /* a step larger than the first chunk (1 MiB), so allocation walks several chunks */
    qkv_test_seed(10);
    const int64_t s[2] = {64, 256};
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_tensor *x = qkv_tensor_full(QKV_F64, 2, s, 0.5);
    ck_assert_int_eq(qkv_tensor_require_grad(x), 0);
    unsigned long long m0 = 0;
    for (int it = 0; it < 51; it++) {
        qkv_tensor *h = qkv_tanh(ctx, qkv_add_scalar(ctx, qkv_scale(ctx, x, 2), 1));
        for (int k = 0; k < 4; k++) h = qkv_mul(ctx, h, qkv_sigmoid(ctx, h));
        ck_assert_int_eq(qkv_backward(ctx, qkv_mean_all(ctx, h)), 0);
        if (it == 0) {
            ck_assert(qkv_ctx_arena_used(ctx) > (2u << 20));
            m0 = qkv_ctx_arena_mallocs(ctx);
            ck_assert(m0 >= 2);
        }
        qkv_ctx_reset(ctx);
        ck_assert_uint_eq(qkv_ctx_arena_used(ctx), 0);
    }
    ck_assert_uint_eq(qkv_ctx_arena_mallocs(ctx), m0);
    qkv_ctx_free(ctx);
    qkv_tensor_free(x);
}
END_TEST

START_TEST(test_arena_tensors_and_alloc) {
    qkv_ctx *ctx = qkv_ctx_new();
    const int64_t s[2] = {3, 5};
    double src[15];
    for (int i = 0; i < 15; i++) src[i] = i - 7.5;
    qkv_tensor *t = qkv_ctx_tensor_from(ctx, QKV_F64, 2, s, src);
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_ne(t->data, src);
    for (int i = 0; i < 15; i++) ck_assert(qkv_tensor_get(t, i) == src[i]);
    ck_assert(t->gen != 0);
    qkv_tensor *z = qkv_ctx_tensor(ctx, QKV_F32, 2, s);
    for (int i = 0; i < 15; i++) ck_assert(qkv_tensor_get(z, i) == 0.0);
    for (int k = 1; k < 200; k += 37) {
        void *p = qkv_ctx_alloc(ctx, (size_t)k);
        ck_assert_ptr_nonnull(p);
        ck_assert_uint_eq((uintptr_t)p % 64, 0);
        memset(p, 0xAB, (size_t)k);
    }
    ck_assert(qkv_ctx_arena_used(ctx) > 0);
    qkv_ctx_reset(ctx);
    ck_assert_uint_eq(qkv_ctx_arena_used(ctx), 0);
    /* after a reset, fresh tensors are zero-filled again even though memory is reused */
    qkv_tensor *z2 = qkv_ctx_tensor(ctx, QKV_F64, 2, s);
    for (int i = 0; i < 15; i++) ck_assert(qkv_tensor_get(z2, i) == 0.0);
    qkv_ctx_free(ctx);
}
END_TEST

/* scratch given back: what follows a mark is reused after release, across chunks too (2 MiB of
 * scratch walks past the first 1 MiB chunk), and what came before it is left alone */
START_TEST(test_arena_mark_release) {
    qkv_arena a;
    qkv__arena_init(&a);
    qkv_arena_mark empty = qkv__arena_mark(&a);
    unsigned char *keep = qkv__arena_alloc(&a, 100);
    ck_assert_ptr_nonnull(keep);
    memset(keep, 7, 100);
    size_t used = a.used;
    for (int round = 0; round < 3; round++) {
        qkv_arena_mark m = qkv__arena_mark(&a);
        void *s1 = qkv__arena_alloc(&a, 1000), *s2 = qkv__arena_alloc(&a, 2u << 20);
        ck_assert(s1 && s2 && a.used > used);
        memset(s1, 0xEE, 1000), memset(s2, 0xEE, 2u << 20);
        qkv__arena_release(&a, m);
        ck_assert_uint_eq(a.used, used);
        ck_assert_ptr_eq(qkv__arena_alloc(&a, 1000), s1); /* the same memory again */
        qkv__arena_release(&a, m);
    }
    ck_assert_uint_eq(a.mallocs, 2); /* the first round's chunks, kept */
    for (int i = 0; i < 100; i++) ck_assert_int_eq(keep[i], 7);
    qkv__arena_release(&a, empty); /* a mark taken before anything: everything given back */
    ck_assert_uint_eq(a.used, 0);
    ck_assert_ptr_eq(qkv__arena_alloc(&a, 100), keep);
    qkv__arena_free(&a);
}
END_TEST

/* ---- custom ops ----------------------------------------------------------------------------- */

typedef struct { int fwd, bwd; } call_count;

static int square_forward(const qkv_tensor *const *in, int n, qkv_tensor *out, void *user) {
    ck_assert_int_eq(n, 1);
    ((call_count *)user)->fwd++;
    for (int64_t i = 0; i < out->numel; i++) {
        double v = qkv_tensor_get(in[0], i);
        qkv_tensor_set(out, i, v * v);
    }
    return 0;
}

static int square_backward(const qkv_tensor *const *in, int n, const qkv_tensor *out,
                           const void *dout, void *const *din, void *user) {
    ck_assert_int_eq(n, 1);
    ((call_count *)user)->bwd++;
    if (!din[0]) return 0;
    for (int64_t i = 0; i < out->numel; i++) {
        double x = qkv_tensor_get(in[0], i);
        if (out->dtype == QKV_F64)
            ((double *)din[0])[i] += 2 * x * ((const double *)dout)[i];
        else
            ((float *)din[0])[i] += (float)(2 * x * ((const float *)dout)[i]);
    }
    return 0;
}

static int failing_backward(const qkv_tensor *const *in, int n, const qkv_tensor *out,
                            const void *dout, void *const *din, void *user) {
    (void)in, (void)n, (void)out, (void)dout, (void)din, (void)user;
    return 1;
}

START_TEST(test_custom_square) {
    qkv_test_seed(11);
    const int64_t s[2] = {2, 4};
    double xv[8], wv[8], ref[8];
    qkv_tensor *x = leaf(DT, 2, s, xv, -2, 2, true);
    qkv_tensor *w = leaf(DT, 2, s, wv, -1, 1, false);
    qkv_ctx *ctx = qkv_ctx_new();
    call_count calls = {0, 0};
    qkv_tensor *in[1] = {x};
    qkv_tensor *y = qkv_custom(ctx, "square", in, 1, 2, s, square_forward, square_backward, &calls);
    expect_ok(ctx);
    ck_assert_ptr_nonnull(y);
    ck_assert_int_eq(y->dtype, DT);
    ck_assert(y->requires_grad);
    ck_assert_int_eq(calls.fwd, 1);
    ck_assert_int_eq(calls.bwd, 0);
    for (int i = 0; i < 8; i++) ck_assert(qkv_test_near(qkv_tensor_get(y, i), xv[i] * xv[i], TOL(DT)));
    /* L = sum(w * x^2): dL/dx = 2 x w; through a following op, so dout is not all ones */
    ck_assert_int_eq(qkv_backward(ctx, qkv_sum_all(ctx, qkv_mul(ctx, y, w))), 0);
    ck_assert_int_eq(calls.bwd, 1);
    for (int i = 0; i < 8; i++) ref[i] = 2 * xv[i] * wv[i];
    expect_grad(x, ref, 8, TOL(DT), "custom square");
    /* composed with itself: (x^2)^2 = x^4, d/dx sum = 4 x^3 */
    qkv_ctx_reset(ctx);
    qkv_tensor_zero_grad(x);
    qkv_tensor *y1 = qkv_custom(ctx, "square", in, 1, 2, s, square_forward, square_backward, &calls);
    qkv_tensor *in2[1] = {y1};
    qkv_tensor *y2 = qkv_custom(ctx, "square", in2, 1, 2, s, square_forward, square_backward, &calls);
    ck_assert_int_eq(qkv_backward(ctx, qkv_sum_all(ctx, y2)), 0);
    for (int i = 0; i < 8; i++) ref[i] = 4 * xv[i] * xv[i] * xv[i];
    expect_grad(x, ref, 8, TOL(DT) * 10, "custom square twice");
    ck_assert_int_eq(calls.fwd, 3);
    ck_assert_int_eq(calls.bwd, 3);
    /* a failing backward is reported with the op's name */
    qkv_ctx_reset(ctx);
    qkv_tensor *yf = qkv_custom(ctx, "sq_broken", in, 1, 2, s, square_forward, failing_backward, &calls);
    ck_assert_int_eq(qkv_backward(ctx, qkv_sum_all(ctx, yf)), -1);
    ASSERT_HAS(qkv_ctx_error(ctx), "sq_broken");
    /* bad arguments */
    qkv_ctx_reset(ctx);
    ck_assert_ptr_null(qkv_custom(ctx, "nocb", in, 1, 2, s, square_forward, NULL, &calls));
    ASSERT_HAS(qkv_ctx_error(ctx), "nocb");
    qkv_ctx_free(ctx);
    qkv_tensor_free(x);
    qkv_tensor_free(w);
}
END_TEST

START_TEST(test_custom_no_grad_input) {
    /* an input that needs no gradient: nothing recorded, backward never called */
    const int64_t s[1] = {3};
    double xv[3];
    qkv_test_seed(12);
    qkv_tensor *x = leaf(QKV_F64, 1, s, xv, -1, 1, false);
    qkv_ctx *ctx = qkv_ctx_new();
    call_count calls = {0, 0};
    qkv_tensor *in[1] = {x};
    qkv_tensor *y = qkv_custom(ctx, "square", in, 1, 1, s, square_forward, square_backward, &calls);
    ck_assert_ptr_nonnull(y);
    ck_assert(!y->requires_grad);
    ck_assert_int_eq(qkv_ctx_tape_len(ctx), 0);
    ck_assert_int_eq(calls.fwd, 1);
    ck_assert_int_eq(calls.bwd, 0);
    qkv_ctx_free(ctx);
    qkv_tensor_free(x);
}
END_TEST

/* ---- a counting context ----------------------------------------------------------------- */

/* loss of a graph through the ops the model does not use (and some it does), with the custom
 * square as one of them; y1 (4,5) kept for the caller */
static qkv_tensor *every_op_loss(qkv_ctx *ctx, qkv_tensor *x, qkv_tensor *w, qkv_tensor *b, qkv_tensor *table,
                                 const qkv_tensor *idx, const qkv_tensor *mask, const qkv_tensor *tgt,
                                 call_count *calls) {
    qkv_tensor *y1 = qkv_linear(ctx, qkv_add(ctx, x, qkv_embedding(ctx, table, idx)), w, b); /* (4,5) */
    qkv_tensor *y2 = qkv_softmax(ctx, qkv_masked_fill(ctx, y1, mask, -1.0));
    qkv_tensor *parts[2] = {y2, qkv_log_softmax(ctx, qkv_tanh(ctx, y1))};
    qkv_tensor *y3 = qkv_concat(ctx, parts, 2, 1); /* (4,10) */
    qkv_tensor *in[1] = {y3};
    int64_t s3[2] = {4, 10};
    qkv_tensor *y4 = qkv_custom(ctx, "square", in, 1, 2, s3, square_forward, square_backward, calls);
    qkv_tensor *y5 = qkv_mean(ctx, qkv_matmul(ctx, y4, y3, false, true), 1, false); /* (4) */
    qkv_tensor *ln = qkv_layernorm(ctx, qkv_transpose(ctx, qkv_slice(ctx, y3, 1, 2, 6), 0, 1), NULL, NULL, 1e-5);
    return qkv_add(ctx, qkv_add(ctx, qkv_sum_all(ctx, qkv_exp(ctx, qkv_scale(ctx, y5, 0.1))),
                                qkv_mean_all(ctx, qkv_sqrt(ctx, qkv_add_scalar(ctx, qkv_mul(ctx, ln, ln), 1.0)))),
                   qkv_cross_entropy(ctx, y1, tgt, -100));
}

/* the same graph in a counting context: exactly the arena the real step takes (peak and what is
 * left at the end), nothing computed (no callback called, no gradient written), every shape the same */
START_TEST(test_counting_matches_arena) {
    qkv_test_seed(13);
    const int64_t sx[2] = {4, 6}, sw[2] = {5, 6}, sb[1] = {5}, st[2] = {7, 6}, si[1] = {4}, sm[2] = {4, 5};
    double xv[24], wv[30], bv[5], tv[42];
    qkv_tensor *x = leaf(DT, 2, sx, xv, -1, 1, true), *w = leaf(DT, 2, sw, wv, -1, 1, true);
    qkv_tensor *b = leaf(DT, 1, sb, bv, -1, 1, true), *table = leaf(DT, 2, st, tv, -1, 1, true);
    qkv_tensor *idx = qkv_tensor_zeros(QKV_I32, 1, si), *tgt = qkv_tensor_zeros(QKV_I32, 1, si);
    qkv_tensor *mask = qkv_tensor_zeros(QKV_I32, 2, sm);
    for (int i = 0; i < 4; i++) ((int32_t *)idx->data)[i] = (i * 3) % 7, ((int32_t *)tgt->data)[i] = i;
    for (int i = 0; i < 20; i++) ((int32_t *)mask->data)[i] = i % 3 == 0;
    size_t peak[2], used[2];
    int tape[2];
    call_count calls[2] = {{0, 0}, {0, 0}};
    for (int counting = 1; counting >= 0; counting--) {
        qkv_ctx *ctx = counting ? qkv_ctx_new_counting() : qkv_ctx_new();
        ck_assert(qkv_ctx_counting(ctx) == counting);
        qkv_tensor *loss = every_op_loss(ctx, x, w, b, table, idx, mask, tgt, &calls[counting]);
        expect_ok(ctx);
        ck_assert_ptr_nonnull(loss);
        ck_assert_int_eq(loss->ndim, 0);
        ck_assert_int_eq(qkv_backward(ctx, loss), 0);
        peak[counting] = qkv_ctx_arena_peak(ctx), used[counting] = qkv_ctx_arena_used(ctx);
        tape[counting] = qkv_ctx_tape_len(ctx);
        if (counting) /* nothing written into the leaves' gradients */
            for (int64_t i = 0; i < x->numel; i++) ck_assert(qkv_tensor_grad_get(x, i) == 0);
        qkv_ctx_free(ctx);
    }
    ck_assert_int_eq(calls[1].fwd + calls[1].bwd, 0);
    ck_assert_int_eq(calls[0].fwd, 1);
    ck_assert_int_eq(calls[0].bwd, 1);
    ck_assert_int_eq(tape[1], tape[0]);
    ck_assert_uint_eq(peak[1], peak[0]);
    ck_assert_uint_eq(used[1], used[0]);
    ck_assert(qkv_tensor_grad_get(x, 0) != 0); /* the real step did write them */
    qkv_tensor *all[] = {x, w, b, table, idx, tgt, mask};
    for (int i = 0; i < 7; i++) qkv_tensor_free(all[i]);
}
END_TEST

/* a counting context counts what would not fit in memory, saturating instead of failing */
START_TEST(test_counting_huge) {
    const int64_t s[2] = {1LL << 29, 1LL << 30}; /* 2^59 elements: 2^62 bytes */
    qkv_tensor x;
    ck_assert_int_eq(qkv_shape_init(&x, QKV_F64, 2, s), 0);
    static const double nothing[1];
    x.data = (void *)nothing;
    x.requires_grad = true;
    qkv_ctx *ctx = qkv_ctx_new_counting();
    qkv_tensor *y = qkv_exp(ctx, qkv_exp(ctx, qkv_exp(ctx, qkv_exp(ctx, &x)))); /* 2^64 bytes, beyond size_t */
    expect_ok(ctx);
    ck_assert_ptr_nonnull(y);
    ck_assert_uint_eq(qkv_ctx_arena_peak(ctx), SIZE_MAX);
    qkv_ctx_free(ctx);
    qkv_ctx *real = qkv_ctx_new(); /* the real one refuses it */
    ck_assert_ptr_null(qkv_exp(real, &x));
    ASSERT_HAS(qkv_ctx_error(real), "out of memory");
    qkv_ctx_free(real);
}
END_TEST

Suite *tape_suite(void) {
    Suite *s = suite_create("tape");

    TCase *tc = tcase_create("gradients");
    tcase_add_loop_test(tc, test_cube_via_two_muls, 0, 2);
    tcase_add_loop_test(tc, test_qkv_self_attention_style, 0, 2);
    tcase_add_loop_test(tc, test_same_tensor_both_operands, 0, 2);
    tcase_add_loop_test(tc, test_grad_accumulates_across_steps, 0, 2);
    tcase_add_loop_test(tc, test_no_grad_mode, 0, 2);
    tcase_add_loop_test(tc, test_inputs_without_grad_record_nothing, 0, 2);
    suite_add_tcase(s, tc);

    tc = tcase_create("errors");
    tcase_add_test(tc, test_err_matmul_inner);
    tcase_add_test(tc, test_err_add_broadcast);
    tcase_add_test(tc, test_err_backward_non_scalar);
    tcase_add_test(tc, test_err_backward_after_reset);
    tcase_add_test(tc, test_err_backward_twice);
    tcase_add_test(tc, test_err_embedding_out_of_range);
    tcase_add_test(tc, test_err_cross_entropy_target);
    tcase_add_test(tc, test_err_reshape_count);
    tcase_add_test(tc, test_err_slice_range);
    tcase_add_test(tc, test_err_transpose_axis);
    tcase_add_test(tc, test_err_null_keeps_first_message);
    tcase_add_test(tc, test_err_dtype_mismatch);
    suite_add_tcase(s, tc);

    tc = tcase_create("arena");
    tcase_add_test(tc, test_arena_steady_state);
    tcase_add_test(tc, test_arena_steady_state_many_chunks);
    tcase_add_test(tc, test_arena_tensors_and_alloc);
    tcase_add_test(tc, test_arena_mark_release);
    suite_add_tcase(s, tc);

    tc = tcase_create("custom");
    tcase_add_loop_test(tc, test_custom_square, 0, 2);
    tcase_add_test(tc, test_custom_no_grad_input);
    suite_add_tcase(s, tc);

    tc = tcase_create("counting");
    tcase_add_loop_test(tc, test_counting_matches_arena, 0, 2);
    tcase_add_test(tc, test_counting_huge);
    suite_add_tcase(s, tc);
    return s;
}
