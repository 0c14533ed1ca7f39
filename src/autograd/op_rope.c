/* rope: rotary positions (Su et al. 2021), each head's query or key rotated by its position. */
#include "autograd/ops.h"
#include "autograd/tape.h"

#include <math.h>

qkv_tensor *qkv_rope(qkv_ctx *ctx, qkv_tensor *x, int head_dim, double base) {
    if (!x || !qkv__check_float(ctx, "rope", x)) return NULL;
    if (x->ndim != 3 || head_dim < 2 || head_dim % 2 || x->shape[2] % head_dim)
        return qkv_ctx_fail(ctx, "rope: expected x (B,T,heads head_dim) with an even head_dim dividing its last "
                                 "dim, got %s and head_dim %d", qkv__shp(x), head_dim);
    if (!(base > 1) || !isfinite(base)) return qkv_ctx_fail(ctx, "rope: base must be above 1, got %g", base);
    int64_t B = x->shape[0], T = x->shape[1], half = head_dim / 2;
    /* the angles' cos and sin, in double, once per call: (T, hd/2, 2) */
    double *cs = qkv_ctx_alloc(ctx, (size_t)(T * half * 2) * sizeof *cs);
    qkv_tensor *y = cs ? qkv__out(ctx, x->dtype, x->ndim, x->shape) : NULL;
    if (!y) return NULL;
    for (int64_t t = 0; t < T && !ctx->counting; t++)
        for (int64_t k = 0; k < half; k++) {
            double angle = (double)t * pow(base, -2.0 * (double)k / (double)head_dim);
            cs[(t * half + k) * 2] = cos(angle);
            cs[(t * half + k) * 2 + 1] = sin(angle);
        }
    QKV_KCALL(ctx, x->dtype, rope, B, T, x->shape[2] / head_dim, head_dim, cs, 1, x->data, y->data, 1);
    qkv_record *r = qkv__record(ctx, QKV_OP_ROPE, y, 1, &x);
    if (r) {
        r->p.rope.hd = head_dim;
        r->p.rope.cs = cs;
    }
    return y;
}

/* dx += R(-angle) dy: a rotation's transpose is the rotation back */
int qkv__rope_backward(qkv_ctx *ctx, const qkv_record *r) {
    qkv_tensor *x = r->in[0];
    bool fresh;
    void *dx = qkv__grad_fresh(ctx, x, &fresh);
    if (!dx) return qkv_ctx_ok(ctx) ? 0 : -1;
    QKV_KCALL(ctx, x->dtype, rope, x->shape[0], x->shape[1], x->shape[2] / r->p.rope.hd, r->p.rope.hd, r->p.rope.cs, -1,
              r->out->grad, dx, fresh);
    return 0;
}
