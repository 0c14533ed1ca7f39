/* layernorm over the last axis, with optional affine weight and bias. With a run axis (w, b:
 * (R,n)), x's rows are R equal groups, group r normalised with w[r], b[r], each group by the
 * kernel calls a model of one run makes (so with its bits: docs/performance.md, "Batched runs"). */
#include "autograd/ops.h"
#include "autograd/tape.h"

qkv_tensor *qkv_layernorm(qkv_ctx *ctx, qkv_tensor *x, qkv_tensor *w, qkv_tensor *b, double eps) {
    if (!x || !qkv__check_float(ctx, "layernorm", x)) return NULL;
    if (x->ndim < 1) return qkv_ctx_fail(ctx, "layernorm: needs at least one axis, got a scalar");
    int64_t n = x->shape[x->ndim - 1], rows = x->numel / n;
    qkv_tensor *p[2] = {w, b};
    int64_t runs = w && w->ndim == 2 ? w->shape[0] : b && b->ndim == 2 ? b->shape[0] : 1;
    for (int i = 0; i < 2; i++) {
        if (!p[i]) continue;
        if (!qkv__check_pair(ctx, "layernorm", x, p[i])) return NULL;
        bool ok = runs > 1 ? p[i]->ndim == 2 && p[i]->shape[0] == runs && p[i]->shape[1] == n
                           : p[i]->ndim == 1 && p[i]->shape[0] == n;
        if (!ok)
            return qkv_ctx_fail(ctx, "layernorm: %s has shape %s, expected %s(%lld) for input %s",
                                i ? "bias" : "weight", qkv__shp(p[i]), runs > 1 ? "(runs) x " : "", (long long)n,
                                qkv__shp(x));
    }
    if (rows % runs)
        return qkv_ctx_fail(ctx, "layernorm: the %lld rows of %s cannot be split among %lld runs", (long long)rows,
                            qkv__shp(x), (long long)runs);
    if (!(eps > 0)) return qkv_ctx_fail(ctx, "layernorm: eps must be > 0, got %g", eps);
    qkv_tensor *y = qkv__out(ctx, x->dtype, x->ndim, x->shape);
    size_t es = qkv_dtype_size(x->dtype);
    void *mean = y ? qkv_ctx_alloc(ctx, (size_t)rows * es) : NULL;
    void *rstd = mean ? qkv_ctx_alloc(ctx, (size_t)rows * es) : NULL;
    if (!rstd) return NULL;
    int64_t per = rows / runs;
    qkv_dtype dt = x->dtype;
    for (int64_t r = 0; r < runs; r++)
        QKV_KCALL(dt, layernorm, per, n, qkv__at(x->data, r * per * n, dt), w ? qkv__at(w->data, r * n, dt) : NULL,
                  b ? qkv__at(b->data, r * n, dt) : NULL, eps, qkv__at(y->data, r * per * n, dt),
                  qkv__at(mean, r * per, dt), qkv__at(rstd, r * per, dt));
    qkv_tensor *in[3];
    int k = 0;
    in[k++] = x;
    if (w) in[k++] = w;
    if (b) in[k++] = b;
    qkv_record *r = qkv__record(ctx, QKV_OP_LAYERNORM, y, k, in);
    if (r) {
        r->p.layernorm.rows = rows; r->p.layernorm.n = n; r->p.layernorm.runs = runs;
        r->p.layernorm.w = w; r->p.layernorm.b = b;
        r->p.layernorm.mean = mean; r->p.layernorm.rstd = rstd;
    }
    return y;
}

int qkv__layernorm_backward(qkv_ctx *ctx, const qkv_record *r) {
    qkv_tensor *x = r->in[0], *w = r->p.layernorm.w, *b = r->p.layernorm.b;
    bool fresh;
    void *dx = qkv__grad_fresh(ctx, x, &fresh);
    void *dw = w ? qkv__grad(ctx, w) : NULL, *db = b ? qkv__grad(ctx, b) : NULL;
    if (!qkv_ctx_ok(ctx)) return -1;
    int64_t runs = r->p.layernorm.runs, per = r->p.layernorm.rows / runs, n = r->p.layernorm.n;
    qkv_dtype dt = x->dtype;
    void *scratch = NULL; /* the row sums' partials, for dw and db (one run's at a time) */
    if ((dw || db) && !(scratch = qkv_ctx_alloc(ctx, (size_t)qkv_layernorm_backward_scratch(per, n) * qkv_dtype_size(dt))))
        return -1;
    for (int64_t k = 0; k < runs; k++)
        QKV_KCALL(dt, layernorm_backward, per, n, qkv__at(x->data, k * per * n, dt),
                  w ? qkv__at(w->data, k * n, dt) : NULL, qkv__at(r->p.layernorm.mean, k * per, dt),
                  qkv__at(r->p.layernorm.rstd, k * per, dt), qkv__at(r->out->grad, k * per * n, dt),
                  qkv__at(dx, k * per * n, dt), qkv__at(dw, k * n, dt), qkv__at(db, k * n, dt), fresh, scratch);
    return 0;
}
