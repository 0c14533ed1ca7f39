/* layernorm over the last axis, with optional affine weight and bias. */
#include "autograd/ops.h"
#include "autograd/tape.h"

qkv_tensor *qkv_layernorm(qkv_ctx *ctx, qkv_tensor *x, qkv_tensor *w, qkv_tensor *b, double eps) {
    if (!x || !qkv__check_float(ctx, "layernorm", x)) return NULL;
    if (x->ndim < 1) return qkv_ctx_fail(ctx, "layernorm: needs at least one axis, got a scalar");
    // x: (rows,n) as (...,n); w, b: (n) or NULL
    int64_t n = x->shape[x->ndim - 1], rows = x->numel / n;
    qkv_tensor *p[2] = {w, b};
    for (int i = 0; i < 2; i++) {
        if (!p[i]) continue;
        if (!qkv__check_pair(ctx, "layernorm", x, p[i])) return NULL;
        if (p[i]->ndim != 1 || p[i]->shape[0] != n)
            return qkv_ctx_fail(ctx, "layernorm: %s has shape %s, expected (%lld) for input %s",
                                i ? "bias" : "weight", qkv__shp(p[i]), (long long)n, qkv__shp(x));
    }
    if (!(eps > 0)) return qkv_ctx_fail(ctx, "layernorm: eps must be > 0, got %g", eps);
    // y: x's shape; mean, rstd: (rows), kept for the backward
    qkv_tensor *y = qkv__out(ctx, x->dtype, x->ndim, x->shape);
    size_t es = qkv_dtype_size(x->dtype);
    void *mean = y ? qkv_ctx_alloc(ctx, (size_t)rows * es) : NULL;
    void *rstd = mean ? qkv_ctx_alloc(ctx, (size_t)rows * es) : NULL;
    if (!rstd) return NULL;
    QKV_KCALL(ctx, x->dtype, layernorm, rows, n, x->data, w ? w->data : NULL, b ? b->data : NULL, eps,
              y->data, mean, rstd);
    qkv_tensor *in[3];
    int k = 0;
    in[k++] = x;
    if (w) in[k++] = w;
    if (b) in[k++] = b;
    qkv_record *r = qkv__record(ctx, QKV_OP_LAYERNORM, y, k, in);
    if (r) {
        r->p.layernorm.rows = rows; r->p.layernorm.n = n;
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
    int64_t rows = r->p.layernorm.rows, n = r->p.layernorm.n;
    void *scratch = NULL; /* the row sums' partials, for dw and db */
    if ((dw || db) &&
        !(scratch = qkv_ctx_alloc(ctx, (size_t)qkv_layernorm_backward_scratch(rows, n) * qkv_dtype_size(x->dtype))))
        return -1;
    QKV_KCALL(ctx, x->dtype, layernorm_backward, rows, n, x->data, w ? w->data : NULL, r->p.layernorm.mean,
              r->p.layernorm.rstd, r->out->grad, dx, dw, db, fresh, scratch);
    return 0;
}
