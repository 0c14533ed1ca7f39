/* Elementwise exp, log, tanh, sqrt, relu, gelu, gelu_tanh, sigmoid. */
#include "autograd/ops.h"
#include "autograd/tape.h"

static qkv_tensor *unary(qkv_ctx *ctx, qkv_op op, qkv_unop k, qkv_tensor *x) {
    if (!x || !qkv__check_float(ctx, qkv_op_name(op), x)) return NULL;
    qkv_tensor *y = qkv__out(ctx, x->dtype, x->ndim, x->shape);
    if (!y) return NULL;
    /* GELU keeps its derivative for the backward (one erf per element instead of two) */
    void *d = NULL;
    if ((k == QKV_UN_GELU || k == QKV_UN_GELU_TANH) && qkv__will_record(ctx, 1, &x) &&
        !(d = qkv_ctx_alloc(ctx, (size_t)x->numel * qkv_dtype_size(x->dtype))))
        return NULL;
    QKV_KCALL(ctx, x->dtype, unary, k, x->numel, x->data, y->data, d);
    qkv_record *r = qkv__record(ctx, op, y, 1, &x);
    if (r) { r->p.unary.op = k; r->p.unary.deriv = d; }
    return y;
}

qkv_tensor *qkv_exp(qkv_ctx *ctx, qkv_tensor *x) { return unary(ctx, QKV_OP_EXP, QKV_UN_EXP, x); }
qkv_tensor *qkv_log(qkv_ctx *ctx, qkv_tensor *x) { return unary(ctx, QKV_OP_LOG, QKV_UN_LOG, x); }
qkv_tensor *qkv_tanh(qkv_ctx *ctx, qkv_tensor *x) { return unary(ctx, QKV_OP_TANH, QKV_UN_TANH, x); }
qkv_tensor *qkv_sqrt(qkv_ctx *ctx, qkv_tensor *x) { return unary(ctx, QKV_OP_SQRT, QKV_UN_SQRT, x); }
qkv_tensor *qkv_relu(qkv_ctx *ctx, qkv_tensor *x) { return unary(ctx, QKV_OP_RELU, QKV_UN_RELU, x); }
qkv_tensor *qkv_gelu(qkv_ctx *ctx, qkv_tensor *x) { return unary(ctx, QKV_OP_GELU, QKV_UN_GELU, x); }
qkv_tensor *qkv_gelu_tanh(qkv_ctx *ctx, qkv_tensor *x) {
    return unary(ctx, QKV_OP_GELU_TANH, QKV_UN_GELU_TANH, x);
}
qkv_tensor *qkv_sigmoid(qkv_ctx *ctx, qkv_tensor *x) {
    return unary(ctx, QKV_OP_SIGMOID, QKV_UN_SIGMOID, x);
}

int qkv__unary_backward(qkv_ctx *ctx, const qkv_record *r) {
    qkv_tensor *x = r->in[0];
    bool fresh;
    void *dx = qkv__grad_fresh(ctx, x, &fresh);
    if (!dx) return qkv_ctx_ok(ctx) ? 0 : -1;
    QKV_KCALL(ctx, x->dtype, unary_backward, r->p.unary.op, x->numel, x->data, r->out->data,
              r->p.unary.deriv, r->out->grad, dx, fresh);
    return 0;
}
