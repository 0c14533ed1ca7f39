/* custom: a differentiable op whose forward and backward come from the caller. */
#include "autograd/ops.h"
#include "autograd/tape.h"

qkv_tensor *qkv_custom(qkv_ctx *ctx, const char *name, qkv_tensor *const *in, int n, int out_ndim,
                       const int64_t *out_shape, qkv_custom_forward_fn forward,
                       qkv_custom_backward_fn backward, void *user) {
    if (n < 1 || n > QKV_REC_MAX_IN || !forward || !backward)
        return qkv_ctx_fail(ctx, "custom op %s: needs 1 to %d inputs and both callbacks", name,
                            QKV_REC_MAX_IN);
    for (int i = 0; i < n; i++)
        if (!in[i] || !qkv__check_pair(ctx, name, in[0], in[i])) return NULL;
    qkv_tensor *y = qkv_ctx_tensor(ctx, in[0]->dtype, out_ndim, out_shape); /* zeroed */
    if (!y) return NULL;
    if (!ctx->counting && forward((const qkv_tensor *const *)in, n, y, user))
        return qkv_ctx_fail(ctx, "custom op %s: forward failed", name);
    qkv_record *r = qkv__record(ctx, QKV_OP_CUSTOM, y, n, in);
    if (r) {
        r->p.custom.backward = backward;
        r->p.custom.user = user;
        r->p.custom.name = name;
    }
    return y;
}

int qkv__custom_backward(qkv_ctx *ctx, const qkv_record *r) {
    void *din[QKV_REC_MAX_IN] = {0};
    for (int i = 0; i < r->n_in; i++) din[i] = qkv__grad(ctx, r->in[i]);
    if (!qkv_ctx_ok(ctx)) return -1;
    if (!ctx->counting && r->p.custom.backward((const qkv_tensor *const *)r->in, r->n_in, r->out, r->out->grad, din,
                             r->p.custom.user)) {
        qkv_ctx_fail(ctx, "custom op %s: backward failed", r->p.custom.name);
        return -1;
    }
    return 0;
}
