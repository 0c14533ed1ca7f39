/* Finite-difference gradient checks (see gradcheck.h). */
#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "tensor/rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* f(inputs) reduced to a scalar: sum(out * W), W fixed by the seed */
static qkv_tensor *scalar_of(qkv_ctx *ctx, qkv_gradcheck_fn f, qkv_tensor *const *in, int n,
                             void *user, uint64_t seed) {
    qkv_tensor *y = f(ctx, in, n, user);
    if (!y || y->numel == 1) return y && y->ndim ? qkv_sum_all(ctx, y) : y;
    qkv_tensor *w = qkv_ctx_tensor(ctx, y->dtype, y->ndim, y->shape);
    if (!w) return NULL;
    qkv_rng r;
    qkv_rng_seed_stream(&r, seed, 7);
    qkv_tensor_fill_uniform(w, &r, 0.5, 1.5); /* away from zero: no element is ignored */
    return qkv_sum_all(ctx, qkv_mul(ctx, y, w));
}

/* f failed: its context's error, or that it gave no output; -1 */
static int f_failed(const qkv_ctx *ctx, qkv_err *e) {
    return qkv_err_set(e, QKV_ERR_FAIL, "%s", qkv_ctx_ok(ctx) ? "function returned NULL" : qkv_ctx_error(ctx));
}

static int eval(qkv_ctx *ctx, qkv_gradcheck_fn f, qkv_tensor *const *in, int n, void *user,
                uint64_t seed, double *out, qkv_err *e) {
    qkv_ctx_reset(ctx);
    bool old = qkv_ctx_set_grad_enabled(ctx, false);
    qkv_tensor *y = scalar_of(ctx, f, in, n, user, seed);
    qkv_ctx_set_grad_enabled(ctx, old);
    if (!y || !qkv_ctx_ok(ctx)) return f_failed(ctx, e);
    *out = qkv_tensor_get(y, 0);
    return 0;
}

/* forward + backward with grad mode on; input grads are zeroed first */
static int analytic(qkv_ctx *ctx, qkv_gradcheck_fn f, qkv_tensor *const *in, int n, void *user,
                    uint64_t seed, double *value, qkv_err *e) {
    for (int i = 0; i < n; i++) qkv_tensor_zero_grad(in[i]);
    qkv_ctx_reset(ctx);
    qkv_tensor *y = scalar_of(ctx, f, in, n, user, seed);
    if (y && value) *value = qkv_tensor_get(y, 0);
    if (!y || qkv_backward(ctx, y)) return f_failed(ctx, e);
    return 0;
}

int qkv_gradcheck(qkv_ctx *ctx, qkv_gradcheck_fn f, qkv_tensor *const *in, int n, void *user,
                  const qkv_gradcheck_opts *o, qkv_gradcheck_result *res, qkv_err *e) {
    qkv_gradcheck_opts d = {0};
    if (o) d = *o;
    double eps = d.eps > 0 ? d.eps : 1e-6, atol = d.atol > 0 ? d.atol : 1e-5,
           rtol = d.rtol > 0 ? d.rtol : 1e-3;
    memset(res, 0, sizeof *res);
    res->worst_input = -1;
    for (int i = 0; i < n; i++)
        if (in[i]->dtype != QKV_F64)
            return qkv_err_set(e, QKV_ERR_FAIL, "gradcheck: input %d is %s; checks run in F64", i,
                               qkv_dtype_name(in[i]->dtype));
    if (analytic(ctx, f, in, n, user, d.seed, NULL, e)) return -1;

    qkv_rng pick;
    qkv_rng_seed_stream(&pick, d.seed, 11);
    for (int i = 0; i < n; i++) {
        qkv_tensor *x = in[i];
        qkv_gradcheck_stat *st = d.stats ? &d.stats[i] : NULL;
        if (st) memset(st, 0, sizeof *st);
        if (!x->requires_grad) continue;
        int64_t m = d.max_checks > 0 && d.max_checks < x->numel && x->numel >= d.check_all_below
                        ? d.max_checks : x->numel;
        double *xd = x->data, *gd = x->grad;
        for (int64_t k = 0; k < m; k++) {
            int64_t j = m == x->numel ? k : (int64_t)qkv_rng_below(&pick, (uint64_t)x->numel);
            double keep = xd[j], fp, fm;
            xd[j] = keep + eps;
            int e1 = eval(ctx, f, in, n, user, d.seed, &fp, e);
            xd[j] = keep - eps;
            int e2 = e1 ? 0 : eval(ctx, f, in, n, user, d.seed, &fm, e);
            xd[j] = keep;
            if (e1 || e2) return -1;
            double num = (fp - fm) / (2 * eps), ana = gd ? gd[j] : 0.0;
            double err = fabs(ana - num), excess = err / (atol + rtol * fabs(num));
            res->checked++;
            if (!(excess <= 1)) res->failed++; /* NaN fails too */
            if (st) {
                st->checked++;
                st->failed += !(excess <= 1);
                if (err > st->max_abs_err || isnan(err)) st->max_abs_err = err;
                if (excess > st->max_excess || isnan(excess)) st->max_excess = excess;
            }
            if (err > res->max_abs_err || isnan(err)) res->max_abs_err = err;
            if (excess > res->max_excess || isnan(excess)) {
                res->max_excess = excess;
                res->worst_input = i;
                res->worst_index = j;
                res->worst_analytic = ana;
                res->worst_numeric = num;
            }
        }
    }
    qkv_ctx_reset(ctx);
    return res->failed ? 1 : 0;
}

static double rel_diff(const qkv_tensor *a32, const double *b64, int64_t n, bool grad) {
    double scale = 1, worst = 0;
    for (int64_t i = 0; i < n; i++) scale = fmax(scale, fabs(b64[i]));
    for (int64_t i = 0; i < n; i++) {
        double a = grad ? qkv_tensor_grad_get(a32, i) : qkv_tensor_get(a32, i);
        double d = fabs(a - b64[i]) / scale;
        if (d > worst || isnan(d)) worst = d;
    }
    return worst;
}

int qkv_gradcheck_f32_vs_f64(qkv_ctx *ctx, qkv_gradcheck_fn f, qkv_tensor *const *in, int n,
                             void *user, uint64_t seed, double *out_rel, double *grad_rel,
                             qkv_err *e) {
    qkv_tensor *in32[16];
    if (n > 16) return qkv_err_set(e, QKV_ERR_FAIL, "gradcheck: at most 16 inputs");
    double v64, v32;
    int rc = analytic(ctx, f, in, n, user, seed, &v64, e);
    for (int i = 0; rc == 0 && i < n; i++) {
        in32[i] = qkv_tensor_convert(in[i], QKV_F32);
        if (!in32[i] || (in[i]->requires_grad && qkv_tensor_require_grad(in32[i]))) {
            for (int j = 0; j <= i; j++) qkv_tensor_free(in32[j]);
            return qkv_err_set(e, QKV_ERR_FAIL, "gradcheck: out of memory");
        }
    }
    if (rc) return -1;
    rc = analytic(ctx, f, in32, n, user, seed, &v32, e);
    *out_rel = fabs(v32 - v64) / fmax(1, fabs(v64));
    *grad_rel = 0;
    for (int i = 0; rc == 0 && i < n; i++)
        if (in[i]->requires_grad)
            *grad_rel = fmax(*grad_rel, rel_diff(in32[i], in[i]->grad, in[i]->numel, true));
    for (int i = 0; i < n; i++) qkv_tensor_free(in32[i]);
    qkv_ctx_reset(ctx);
    return rc ? -1 : 0;
}
