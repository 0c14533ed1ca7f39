/* linear: y = x W^T + b in one op (the bias is written first, the product accumulates on it);
 * linear_act: y = f(x W^T + b), the bias and f applied in one pass after the product. */
#include "autograd/ops.h"
#include "autograd/tape.h"

/* the checks and output of both ops; *in, *out, *rows: the product's sizes */
static qkv_tensor *linear_out(qkv_ctx *ctx, const char *op, qkv_tensor *x, qkv_tensor *w, qkv_tensor *b,
                              int64_t *in_out, int64_t *out_out, int64_t *rows_out) {
    if (!x || !w || !qkv__check_pair(ctx, op, x, w) || (b && !qkv__check_pair(ctx, op, x, b))) return NULL;
    // x: (...,in), w: (out,in), b: (out) or NULL
    if (x->ndim < 1 || w->ndim != 2 || x->shape[x->ndim - 1] != w->shape[1])
        return qkv_ctx_fail(ctx, "%s: input %s does not match weight %s (out, in)", op, qkv__shp(x), qkv__shp(w));
    int64_t in = w->shape[1], out = w->shape[0], rows = x->numel / in;
    if (b && (b->ndim != 1 || b->shape[0] != out))
        return qkv_ctx_fail(ctx, "%s: bias %s, expected (%lld)", op, qkv__shp(b), (long long)out);
    if (rows > INT32_MAX || in > INT32_MAX || out > INT32_MAX)
        return qkv_ctx_fail(ctx, "%s: %s x %s is too large for 32-bit BLAS", op, qkv__shp(x), qkv__shp(w));
    // y: (...,out)
    int64_t shape[QKV_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++) shape[i] = x->shape[i];
    shape[x->ndim - 1] = out;
    *in_out = in, *out_out = out, *rows_out = rows;
    return qkv__out(ctx, x->dtype, x->ndim, shape);
}

qkv_tensor *qkv_linear(qkv_ctx *ctx, qkv_tensor *x, qkv_tensor *w, qkv_tensor *b) {
    int64_t in, out, rows;
    qkv_tensor *y = linear_out(ctx, "linear", x, w, b, &in, &out, &rows);
    if (!y) return NULL;
    qkv_dtype dt = x->dtype;
    if (b) QKV_KCALL(ctx, dt, fill_rows, rows, out, b->data, y->data);
    if (qkv__gemm(ctx, dt, 0, 1, rows, out, in, x->data, w->data, b ? 1 : 0, y->data)) return NULL;
    qkv_tensor *ins[3] = {x, w, b};
    qkv_record *r = qkv__record(ctx, QKV_OP_LINEAR, y, b ? 3 : 2, ins);
    if (r) { r->p.linear.rows = rows; r->p.linear.d_in = in; r->p.linear.d_out = out; r->p.linear.b = b; }
    return y;
}

qkv_tensor *qkv_linear_act(qkv_ctx *ctx, qkv_tensor *x, qkv_tensor *w, qkv_tensor *b, qkv_op act) {
    qkv_unop f = act == QKV_OP_GELU ? QKV_UN_GELU : act == QKV_OP_GELU_TANH ? QKV_UN_GELU_TANH
               : act == QKV_OP_RELU ? QKV_UN_RELU : QKV_UN_COUNT;
    if (f == QKV_UN_COUNT)
        return qkv_ctx_fail(ctx, "linear_act: activation %s, expected gelu, gelu_tanh or relu", qkv_op_name(act));
    int64_t in, out, rows;
    qkv_tensor *y = linear_out(ctx, "linear_act", x, w, b, &in, &out, &rows);
    if (!y) return NULL;
    /* f' is kept for the backward when there will be one (the epilogue computes it in its pass) */
    qkv_tensor *ins[3] = {x, w, b};
    void *d = NULL;
    if (qkv__will_record(ctx, b ? 3 : 2, ins) && !(d = qkv_ctx_alloc(ctx, (size_t)y->numel * qkv_dtype_size(y->dtype))))
        return NULL;
    qkv_dtype dt = x->dtype;
    /* y = x W^T, then y = f(y + b) while in cache */
    if (qkv__gemm(ctx, dt, 0, 1, rows, out, in, x->data, w->data, 0, y->data)) return NULL;
    QKV_KCALL(ctx, dt, bias_act, f, rows, out, b ? b->data : NULL, y->data, d);
    qkv_record *r = qkv__record(ctx, QKV_OP_LINEAR_ACT, y, b ? 3 : 2, ins);
    if (r) {
        r->p.linear.rows = rows; r->p.linear.d_in = in; r->p.linear.d_out = out; r->p.linear.b = b;
        r->p.linear.act = f; r->p.linear.deriv = d;
    }
    return y;
}

/* dX (+)= dY W, dW += dY^T X, db += sum dY; dy: (rows,d_out), the output's gradient (linear) or
 * dY f'(.) (linear_act) */
static int linear_grads(qkv_ctx *ctx, const qkv_record *r, const void *dy) {
    qkv_tensor *x = r->in[0], *w = r->in[1], *b = r->p.linear.b;
    int64_t rows = r->p.linear.rows, in = r->p.linear.d_in, out = r->p.linear.d_out;
    bool fresh; /* a new dX is written, not added to: no zeroing pass */
    void *dx = qkv__grad_fresh(ctx, x, &fresh), *dw = qkv__grad(ctx, w), *db = b ? qkv__grad(ctx, b) : NULL;
    if (!qkv_ctx_ok(ctx)) return -1;
    qkv_dtype dt = x->dtype;
    if (dx && qkv__gemm(ctx, dt, 0, 0, rows, in, out, dy, w->data, !fresh, dx)) return -1; /* dX += dY W */
    if (dw && qkv__gemm(ctx, dt, 1, 0, out, in, rows, dy, x->data, 1, dw)) return -1;      /* dW += dY^T X */
    if (db) QKV_KCALL(ctx, dt, sum_rows, rows, out, dy, db);                         /* db += sum dY */
    return 0;
}

int qkv__linear_backward(qkv_ctx *ctx, const qkv_record *r) { return linear_grads(ctx, r, r->out->grad); }

int qkv__linear_act_backward(qkv_ctx *ctx, const qkv_record *r) {
    qkv_tensor *y = r->out;
    /* dY f'(.) once, into scratch: the three products read it */
    void *g = qkv_ctx_alloc(ctx, (size_t)y->numel * qkv_dtype_size(y->dtype));
    if (!g) return -1;
    QKV_KCALL(ctx, y->dtype, unary_backward, r->p.linear.act, y->numel, NULL, NULL, r->p.linear.deriv, y->grad, g, 1);
    return linear_grads(ctx, r, g);
}
