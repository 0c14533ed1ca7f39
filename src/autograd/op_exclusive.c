/* exclusive: exclusive self attention (Zhai 2026), a head's output without its part along the
 * token's own value. */
#include "autograd/ops.h"
#include "autograd/tape.h"

/* the record's parameters: y (B,T,H hd) and v (B,T,kvH hd) are in[0] and in[1], rows = B T */
typedef struct { int64_t rows, H, kvH, hd; } exclusive_params;

qkv_tensor *qkv_exclusive(qkv_ctx *ctx, qkv_tensor *y, qkv_tensor *v, int head_dim) {
    if (!y || !v || !qkv__check_float(ctx, "exclusive", y) || !qkv__check_float(ctx, "exclusive", v)) return NULL;
    if (y->dtype != v->dtype || y->ndim != 3 || v->ndim != 3 || y->shape[0] != v->shape[0] ||
        y->shape[1] != v->shape[1] || head_dim < 1 || y->shape[2] % head_dim || v->shape[2] % head_dim ||
        v->shape[2] == 0 || (y->shape[2] / head_dim) % (v->shape[2] / head_dim) || y == v)
        return qkv_ctx_fail(ctx, "exclusive: expected y (B,T,H head_dim) and another tensor v (B,T,kvH head_dim) of "
                                 "its dtype, kvH dividing H, got %s, %s and head_dim %d",
                            qkv__shp(y), qkv__shp(v), head_dim);
    int64_t rows = y->shape[0] * y->shape[1], H = y->shape[2] / head_dim, kvH = v->shape[2] / head_dim;
    qkv_tensor *z = qkv__out(ctx, y->dtype, y->ndim, y->shape);
    if (!z) return NULL;
    QKV_KCALL(ctx, y->dtype, exclusive, rows, H, kvH, head_dim, y->data, v->data, z->data);
    qkv_tensor *in[2] = {y, v};
    qkv_record *r = qkv__record(ctx, QKV_OP_EXCLUSIVE, z, 2, in);
    if (r) *QKV_REC_PARAMS(exclusive_params, r) = (exclusive_params){rows, H, kvH, head_dim};
    return z;
}

/* dy += dz - (dz . u) u; dv += the part through u (tensor/k_exclusive.c) */
int qkv__exclusive_backward(qkv_ctx *ctx, const qkv_record *r) {
    qkv_tensor *y = r->in[0], *v = r->in[1];
    bool fy = false, fv = false;
    void *dy = qkv__grad_fresh(ctx, y, &fy), *dv = qkv__grad_fresh(ctx, v, &fv);
    if (!dy && !dv) return qkv_ctx_ok(ctx) ? 0 : -1;
    if ((!dy && y->requires_grad) || (!dv && v->requires_grad)) return -1;
    const exclusive_params *p = QKV_REC_PARAMS(const exclusive_params, r);
    QKV_KCALL(ctx, y->dtype, exclusive_backward, p->rows, p->H, p->kvH, p->hd, y->data, v->data, r->out->grad, dy, fy,
              dv, fv);
    return 0;
}
