/* add, sub, mul, div with broadcasting; scale and add-scalar (affine). */
#include "autograd/ops.h"
#include "autograd/tape.h"

/* the op of binop k is QKV_OP_ADD + k */
_Static_assert(QKV_BIN_ADD == 0 && QKV_OP_SUB == QKV_OP_ADD + QKV_BIN_SUB && QKV_OP_MUL == QKV_OP_ADD + QKV_BIN_MUL &&
                   QKV_OP_DIV == QKV_OP_ADD + QKV_BIN_DIV,
               "QKV_OP_ADD..DIV out of step with qkv_binop");

static qkv_tensor *binary(qkv_ctx *ctx, qkv_binop op, qkv_tensor *a, qkv_tensor *b) {
    const char *name = qkv_op_name((qkv_op)(QKV_OP_ADD + op));
    if (!a || !b || !qkv__check_pair(ctx, name, a, b)) return NULL;
    qkv_bcast bc;
    int nd;
    int64_t shape[QKV_MAX_DIMS];
    if (qkv__bcast_init(&bc, a->ndim, a->shape, b->ndim, b->shape, &nd, shape))
        return qkv_ctx_fail(ctx, "%s: shapes %s and %s do not broadcast", name, qkv__shp(a),
                            qkv__shp(b));
    qkv_tensor *y = qkv__out(ctx, a->dtype, nd, shape);
    if (!y) return NULL;
    bool flat = a->numel == y->numel && b->numel == y->numel;
    if (flat) QKV_KCALL(ctx, a->dtype, binary_flat, op, y->numel, a->data, b->data, y->data);
    else QKV_KCALL(ctx, a->dtype, binary, op, &bc, a->data, b->data, y->data);
    qkv_tensor *in[2] = {a, b};
    qkv_record *r = qkv__record(ctx, (qkv_op)(QKV_OP_ADD + op), y, 2, in);
    if (r) {
        r->p.binary.op = op;
        r->p.binary.bc = bc;
    }
    return y;
}

qkv_tensor *qkv_add(qkv_ctx *ctx, qkv_tensor *a, qkv_tensor *b) { return binary(ctx, QKV_BIN_ADD, a, b); }
qkv_tensor *qkv_sub(qkv_ctx *ctx, qkv_tensor *a, qkv_tensor *b) { return binary(ctx, QKV_BIN_SUB, a, b); }
qkv_tensor *qkv_mul(qkv_ctx *ctx, qkv_tensor *a, qkv_tensor *b) { return binary(ctx, QKV_BIN_MUL, a, b); }
qkv_tensor *qkv_div(qkv_ctx *ctx, qkv_tensor *a, qkv_tensor *b) { return binary(ctx, QKV_BIN_DIV, a, b); }

int qkv__binary_backward(qkv_ctx *ctx, const qkv_record *r) {
    qkv_tensor *a = r->in[0], *b = r->in[1];
    if (a->numel == r->out->numel && b->numel == r->out->numel) { /* new gradients: zeroed by the kernel */
        bool fa, fb;
        void *da = qkv__grad_fresh(ctx, a, &fa), *db = qkv__grad_fresh(ctx, b, &fb);
        if (!qkv_ctx_ok(ctx)) return -1;
        QKV_KCALL(ctx, a->dtype, binary_flat_backward, r->p.binary.op, a->numel, a->data, b->data,
                  r->out->grad, da, db, (fa ? 1 : 0) | (fb ? 2 : 0));
        return 0;
    }
    void *da = qkv__grad(ctx, a), *db = qkv__grad(ctx, b);
    if (!qkv_ctx_ok(ctx)) return -1;
    else
        QKV_KCALL(ctx, a->dtype, binary_backward, r->p.binary.op, &r->p.binary.bc, a->data, b->data,
                  r->out->grad, da, db);
    return 0;
}

static qkv_tensor *affine(qkv_ctx *ctx, const char *name, qkv_tensor *x, double alpha, double beta) {
    if (!x || !qkv__check_float(ctx, name, x)) return NULL;
    qkv_tensor *y = qkv__out(ctx, x->dtype, x->ndim, x->shape);
    if (!y) return NULL;
    QKV_KCALL(ctx, x->dtype, affine, x->numel, x->data, alpha, beta, y->data);
    qkv_record *r = qkv__record(ctx, QKV_OP_AFFINE, y, 1, &x);
    if (r) r->p.affine.alpha = alpha;
    return y;
}

qkv_tensor *qkv_scale(qkv_ctx *ctx, qkv_tensor *x, double s) { return affine(ctx, "scale", x, s, 0); }
qkv_tensor *qkv_add_scalar(qkv_ctx *ctx, qkv_tensor *x, double c) { return affine(ctx, "add_scalar", x, 1, c); }

int qkv__affine_backward(qkv_ctx *ctx, const qkv_record *r) {
    qkv_tensor *x = r->in[0];
    void *dx = qkv__grad(ctx, x);
    if (!dx) return qkv_ctx_ok(ctx) ? 0 : -1;
    QKV_KCALL(ctx, x->dtype, axpy, x->numel, r->p.affine.alpha, r->out->grad, dx);
    return 0;
}
