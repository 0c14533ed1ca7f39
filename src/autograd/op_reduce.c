/* sum and mean over one axis (and over everything). */
#include "autograd/ops.h"
#include "autograd/tape.h"

static qkv_tensor *reduce(qkv_ctx *ctx, qkv_op op, qkv_tensor *x, int axis, bool keepdim) {
    const char *name = qkv_op_name(op);
    if (!x || !qkv__check_float(ctx, name, x)) return NULL;
    int ax = axis < 0 ? axis + x->ndim : axis;
    if (ax < 0 || ax >= x->ndim)
        return qkv_ctx_fail(ctx, "%s: axis %d is out of range for shape %s", name, axis, qkv__shp(x));
    int64_t outer = 1, inner = 1, n = x->shape[ax];
    for (int i = 0; i < ax; i++) outer *= x->shape[i];
    for (int i = ax + 1; i < x->ndim; i++) inner *= x->shape[i];
    int64_t shape[QKV_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < x->ndim; i++) {
        if (i != ax) shape[nd++] = x->shape[i];
        else if (keepdim) shape[nd++] = 1;
    }
    double scale = op == QKV_OP_MEAN ? 1.0 / (double)n : 1.0;
    qkv_tensor *y = qkv__out(ctx, x->dtype, nd, shape);
    if (!y) return NULL;
    QKV_KCALL(ctx, x->dtype, sum_axis, outer, n, inner, x->data, scale, y->data);
    qkv_record *r = qkv__record(ctx, op, y, 1, &x);
    if (r) {
        r->p.reduce.outer = outer;
        r->p.reduce.n = n;
        r->p.reduce.inner = inner;
        r->p.reduce.scale = scale;
    }
    return y;
}

qkv_tensor *qkv_sum(qkv_ctx *ctx, qkv_tensor *x, int axis, bool keepdim) {
    return reduce(ctx, QKV_OP_SUM, x, axis, keepdim);
}
qkv_tensor *qkv_mean(qkv_ctx *ctx, qkv_tensor *x, int axis, bool keepdim) {
    return reduce(ctx, QKV_OP_MEAN, x, axis, keepdim);
}

static qkv_tensor *flat(qkv_ctx *ctx, qkv_tensor *x) {
    if (!x) return NULL;
    int64_t n = x->numel;
    return qkv_reshape(ctx, x, 1, &n);
}

qkv_tensor *qkv_sum_all(qkv_ctx *ctx, qkv_tensor *x) { return qkv_sum(ctx, flat(ctx, x), 0, false); }
qkv_tensor *qkv_mean_all(qkv_ctx *ctx, qkv_tensor *x) { return qkv_mean(ctx, flat(ctx, x), 0, false); }

int qkv__reduce_backward(qkv_ctx *ctx, const qkv_record *r) {
    qkv_tensor *x = r->in[0];
    void *dx = qkv__grad(ctx, x);
    if (!dx) return qkv_ctx_ok(ctx) ? 0 : -1;
    QKV_KCALL(ctx, x->dtype, sum_axis_backward, r->p.reduce.outer, r->p.reduce.n, r->p.reduce.inner, r->out->grad,
              r->p.reduce.scale, dx);
    return 0;
}
