/* linear: y = x W^T + b in one op (the bias is written first, the product accumulates on it). */
#include "autograd/ops.h"
#include "autograd/tape.h"

qkv_tensor *qkv_linear(qkv_ctx *ctx, qkv_tensor *x, qkv_tensor *w, qkv_tensor *b) {
    if (!x || !w || !qkv__check_pair(ctx, "linear", x, w) || (b && !qkv__check_pair(ctx, "linear", x, b)))
        return NULL;
    if (x->ndim < 1 || w->ndim != 2 || x->shape[x->ndim - 1] != w->shape[1])
        return qkv_ctx_fail(ctx, "linear: input %s does not match weight %s (out, in)", qkv__shp(x), qkv__shp(w));
    int64_t in = w->shape[1], out = w->shape[0], rows = x->numel / in;
    if (b && (b->ndim != 1 || b->shape[0] != out))
        return qkv_ctx_fail(ctx, "linear: bias %s, expected (%lld)", qkv__shp(b), (long long)out);
    if (rows > INT32_MAX || in > INT32_MAX || out > INT32_MAX)
        return qkv_ctx_fail(ctx, "linear: %s x %s is too large for 32-bit BLAS", qkv__shp(x), qkv__shp(w));
    int64_t shape[QKV_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++) shape[i] = x->shape[i];
    shape[x->ndim - 1] = out;
    qkv_tensor *y = qkv__out(ctx, x->dtype, x->ndim, shape);
    if (!y) return NULL;
    if (b) QKV_KCALL(x->dtype, fill_rows, rows, out, b->data, y->data);
    QKV_KCALL(x->dtype, gemm, 0, 1, rows, out, in, x->data, w->data, b ? 1 : 0, y->data);
    qkv_tensor *ins[3] = {x, w, b};
    qkv_record *r = qkv__record(ctx, QKV_OP_LINEAR, y, b ? 3 : 2, ins);
    if (r) { r->p.linear.rows = rows; r->p.linear.d_in = in; r->p.linear.d_out = out; r->p.linear.b = b; }
    return y;
}

int qkv__linear_backward(qkv_ctx *ctx, const qkv_record *r) {
    qkv_tensor *x = r->in[0], *w = r->in[1], *b = r->p.linear.b;
    int64_t rows = r->p.linear.rows, in = r->p.linear.d_in, out = r->p.linear.d_out;
    const void *dy = r->out->grad;
    bool fresh; /* a new dX is written, not added to: no zeroing pass */
    void *dx = qkv__grad_fresh(ctx, x, &fresh), *dw = qkv__grad(ctx, w), *db = b ? qkv__grad(ctx, b) : NULL;
    if (!qkv_ctx_ok(ctx)) return -1;
    if (dx) QKV_KCALL(x->dtype, gemm, 0, 0, rows, in, out, dy, w->data, !fresh, dx);  /* dX += dY W */
    if (dw) QKV_KCALL(x->dtype, gemm, 1, 0, out, in, rows, dy, x->data, 1, dw);  /* dW += dY^T X */
    if (db) QKV_KCALL(x->dtype, sum_rows, rows, out, dy, db);                     /* db += sum dY */
    return 0;
}
