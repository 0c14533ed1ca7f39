/* softmax and log_softmax over the last axis. */
#include "autograd/ops.h"
#include "autograd/tape.h"

static qkv_tensor *softmax_like(qkv_ctx *ctx, qkv_op op, qkv_tensor *x) {
    if (!x || !qkv__check_float(ctx, qkv_op_name(op), x)) return NULL;
    if (x->ndim < 1)
        return qkv_ctx_fail(ctx, "%s: needs at least one axis, got a scalar", qkv_op_name(op));
    int64_t n = x->shape[x->ndim - 1], rows = x->numel / n;
    qkv_tensor *y = qkv__out(ctx, x->dtype, x->ndim, x->shape);
    if (!y) return NULL;
    if (op == QKV_OP_SOFTMAX) QKV_KCALL(ctx, x->dtype, softmax, rows, n, x->data, y->data);
    else QKV_KCALL(ctx, x->dtype, log_softmax, rows, n, x->data, y->data);
    qkv_record *r = qkv__record(ctx, op, y, 1, &x);
    if (r) { r->p.softmax.rows = rows; r->p.softmax.n = n; }
    return y;
}

qkv_tensor *qkv_softmax(qkv_ctx *ctx, qkv_tensor *x) { return softmax_like(ctx, QKV_OP_SOFTMAX, x); }
qkv_tensor *qkv_log_softmax(qkv_ctx *ctx, qkv_tensor *x) { return softmax_like(ctx, QKV_OP_LOG_SOFTMAX, x); }

int qkv__softmax_backward(qkv_ctx *ctx, const qkv_record *r) {
    qkv_tensor *x = r->in[0];
    void *dx = qkv__grad(ctx, x);
    if (!dx) return qkv_ctx_ok(ctx) ? 0 : -1;
    QKV_KCALL(ctx, x->dtype, softmax_backward, r->p.softmax.rows, r->p.softmax.n, r->out->data, r->out->grad, 1.0, dx);
    return 0;
}

int qkv__log_softmax_backward(qkv_ctx *ctx, const qkv_record *r) {
    qkv_tensor *x = r->in[0];
    void *dx = qkv__grad(ctx, x);
    if (!dx) return qkv_ctx_ok(ctx) ? 0 : -1;
    QKV_KCALL(ctx, x->dtype, log_softmax_backward, r->p.softmax.rows, r->p.softmax.n, r->out->data, r->out->grad, dx);
    return 0;
}

qkv_tensor *qkv_masked_softmax(qkv_ctx *ctx, qkv_tensor *x, const qkv_tensor *mask, double scale, double fill) {
    if (!x || !qkv__check_float(ctx, "masked_softmax", x)) return NULL;
    if (x->ndim < 1) return qkv_ctx_fail(ctx, "masked_softmax: needs at least one axis, got a scalar");
    qkv_bcast bc = {0};
    if (mask && !qkv__mask_plan(ctx, "masked_softmax", mask, x->ndim, x->shape, &bc)) return NULL;
    int64_t n = x->shape[x->ndim - 1], rows = x->numel / n;
    qkv_tensor *y = qkv__out(ctx, x->dtype, x->ndim, x->shape);
    if (!y) return NULL;
    QKV_KCALL(ctx, x->dtype, masked_softmax, rows, n, x->data, &bc, mask ? mask->data : NULL, scale, fill, y->data);
    qkv_record *r = qkv__record(ctx, QKV_OP_MASKED_SOFTMAX, y, 1, &x);
    if (r) {
        r->p.masked_softmax.rows = rows;
        r->p.masked_softmax.n = n;
        r->p.masked_softmax.scale = scale;
    }
    return y;
}

int qkv__masked_softmax_backward(qkv_ctx *ctx, const qkv_record *r) {
    qkv_tensor *x = r->in[0];
    void *dx = qkv__grad(ctx, x);
    if (!dx) return qkv_ctx_ok(ctx) ? 0 : -1;
    /* masked positions have y = 0, so they receive no gradient, as they should */
    QKV_KCALL(ctx, x->dtype, softmax_backward, r->p.masked_softmax.rows, r->p.masked_softmax.n, r->out->data, r->out->grad,
              r->p.masked_softmax.scale, dx);
    return 0;
}
