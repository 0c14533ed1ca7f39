/* add_layernorm: a pre-LN block's residual add and the layer norm after it, one op with two
 * outputs: the sum h (the residual stream, the record's out2) and its norm y (out). Its rule
 * runs when a gradient reached either, and gives the composed add and layernorm's bits. */
#include "autograd/ops.h"
#include "autograd/tape.h"

qkv_tensor *qkv_add_layernorm(qkv_ctx *ctx, qkv_tensor *x, qkv_tensor *a, qkv_tensor *w, qkv_tensor *b, double eps,
                              qkv_tensor **h_out) {
    if (h_out) *h_out = NULL;
    if (!x || !a || !qkv__check_pair(ctx, "add_layernorm", x, a)) return NULL;
    if (x->ndim < 1) return qkv_ctx_fail(ctx, "add_layernorm: needs at least one axis, got a scalar");
    // x: (rows,n) as (...,n); a: x's trailing axes (a_rows,n); w, b: (n) or NULL
    int64_t n = x->shape[x->ndim - 1], rows = x->numel / n;
    bool trailing = a->ndim >= 1 && a->ndim <= x->ndim;
    for (int i = 0; trailing && i < a->ndim; i++) trailing = a->shape[a->ndim - 1 - i] == x->shape[x->ndim - 1 - i];
    if (!trailing)
        return qkv_ctx_fail(ctx, "add_layernorm: %s is not the shape of trailing axes of %s", qkv__shp(a),
                            qkv__shp(x));
    int64_t a_rows = a->numel / n;
    qkv_tensor *p[2] = {w, b};
    for (int i = 0; i < 2; i++) {
        if (!p[i]) continue;
        if (!qkv__check_pair(ctx, "add_layernorm", x, p[i])) return NULL;
        if (p[i]->ndim != 1 || p[i]->shape[0] != n)
            return qkv_ctx_fail(ctx, "add_layernorm: %s has shape %s, expected (%lld) for input %s",
                                i ? "bias" : "weight", qkv__shp(p[i]), (long long)n, qkv__shp(x));
    }
    if (!(eps > 0)) return qkv_ctx_fail(ctx, "add_layernorm: eps must be > 0, got %g", eps);
    // h, y: x's shape; mean, rstd: (rows), kept for the backward
    size_t es = qkv_dtype_size(x->dtype);
    qkv_tensor *h = qkv__out(ctx, x->dtype, x->ndim, x->shape);
    qkv_tensor *y = h ? qkv__out(ctx, x->dtype, x->ndim, x->shape) : NULL;
    void *mean = y ? qkv_ctx_alloc(ctx, (size_t)rows * es) : NULL;
    void *rstd = mean ? qkv_ctx_alloc(ctx, (size_t)rows * es) : NULL;
    if (!rstd) return NULL;
    QKV_KCALL(ctx, x->dtype, add_layernorm, rows, n, x->data, a->data, a_rows, w ? w->data : NULL, b ? b->data : NULL,
              eps, h->data, y->data, mean, rstd);
    qkv_tensor *in[4];
    int k = 0;
    in[k++] = x;
    in[k++] = a;
    if (w) in[k++] = w;
    if (b) in[k++] = b;
    qkv_record *r = qkv__record(ctx, QKV_OP_ADD_LAYERNORM, y, k, in);
    if (r) {
        r->out2 = h;
        h->requires_grad = true;
        r->p.add_layernorm.rows = rows; r->p.add_layernorm.n = n; r->p.add_layernorm.a_rows = a_rows;
        r->p.add_layernorm.w = w; r->p.add_layernorm.b = b;
        r->p.add_layernorm.mean = mean; r->p.add_layernorm.rstd = rstd;
    }
    if (h_out) *h_out = h;
    return y;
}

int qkv__add_layernorm_backward(qkv_ctx *ctx, const qkv_record *r) {
    qkv_tensor *x = r->in[0], *a = r->in[1], *w = r->p.add_layernorm.w, *b = r->p.add_layernorm.b;
    int64_t rows = r->p.add_layernorm.rows, n = r->p.add_layernorm.n, a_rows = r->p.add_layernorm.a_rows;
    const void *dy = r->out->grad, *dh = r->out2->grad;
    bool fx = false, fa = false, bcast = a_rows < rows;
    /* with a broadcast a, both gradients are zeroed and added to, as qkv_add's broadcasting rule
     * does (a's is a sum over rows) */
    void *dx = bcast ? qkv__grad(ctx, x) : qkv__grad_fresh(ctx, x, &fx);
    void *da = a == x ? NULL : bcast ? qkv__grad(ctx, a) : qkv__grad_fresh(ctx, a, &fa);
    void *dw = w && dy ? qkv__grad(ctx, w) : NULL, *db = b && dy ? qkv__grad(ctx, b) : NULL;
    if (!qkv_ctx_ok(ctx)) return -1;
    if (a == x) da = dx; /* x + x: dx written, then added to */
    int64_t ns = qkv_add_layernorm_backward_scratch(rows, n, a_rows, dy && (dw || db), da != NULL);
    void *scratch = NULL;
    if (ns && !(scratch = qkv_ctx_alloc(ctx, (size_t)ns * qkv_dtype_size(x->dtype)))) return -1;
    QKV_KCALL(ctx, x->dtype, add_layernorm_backward, rows, n, r->out2->data, w ? w->data : NULL, r->p.add_layernorm.mean,
              r->p.add_layernorm.rstd, dy, dh, dx, fx, da, fa, a_rows, dw, db, scratch);
    return 0;
}
