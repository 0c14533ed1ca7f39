/* masked_fill: constant where a broadcast I32 mask is non-zero. */
#include "autograd/ops.h"
#include "autograd/tape.h"

qkv_tensor *qkv_masked_fill(qkv_ctx *ctx, qkv_tensor *x, const qkv_tensor *mask, double value) {
    if (!x || !mask || !qkv__check_float(ctx, "masked_fill", x)) return NULL;
    qkv_bcast bc;
    if (!qkv__mask_plan(ctx, "masked_fill", mask, x->ndim, x->shape, &bc)) return NULL;
    qkv_tensor *y = qkv__out(ctx, x->dtype, x->ndim, x->shape);
    if (!y) return NULL;
    QKV_KCALL(ctx, x->dtype, masked_fill, &bc, x->data, mask->data, value, y->data);
    qkv_record *r = qkv__record(ctx, QKV_OP_MASKED_FILL, y, 1, &x);
    if (r) { r->p.masked_fill.mask = mask; r->p.masked_fill.bc = bc; }
    return y;
}

int qkv__masked_fill_backward(qkv_ctx *ctx, const qkv_record *r) {
    qkv_tensor *x = r->in[0];
    void *dx = qkv__grad(ctx, x);
    if (!dx) return qkv_ctx_ok(ctx) ? 0 : -1;
    QKV_KCALL(ctx, x->dtype, masked_fill_backward, &r->p.masked_fill.bc, r->p.masked_fill.mask->data, r->out->grad, dx);
    return 0;
}
