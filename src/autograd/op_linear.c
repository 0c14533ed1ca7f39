/* linear: y = x W^T + b in one op (the bias is written first, the product accumulates on it).
 * With a run axis (W: (R,out,in)), x's rows are R equal groups, group r through W[r], b[r]: each
 * group's products are exactly the ones a model of one run makes (same shapes, same calls), so
 * every run's result has the bits it would have alone (docs/performance.md, "Batched runs"). */
#include "autograd/ops.h"
#include "autograd/tape.h"

qkv_tensor *qkv_linear(qkv_ctx *ctx, qkv_tensor *x, qkv_tensor *w, qkv_tensor *b) {
    if (!x || !w || !qkv__check_pair(ctx, "linear", x, w) || (b && !qkv__check_pair(ctx, "linear", x, b)))
        return NULL;
    if (x->ndim < 1 || (w->ndim != 2 && w->ndim != 3) || x->shape[x->ndim - 1] != w->shape[w->ndim - 1])
        return qkv_ctx_fail(ctx, "linear: input %s does not match weight %s ([runs,] out, in)", qkv__shp(x),
                            qkv__shp(w));
    int64_t runs = w->ndim == 3 ? w->shape[0] : 1;
    int64_t in = w->shape[w->ndim - 1], out = w->shape[w->ndim - 2], rows = x->numel / in;
    if (b && (b->ndim != w->ndim - 1 || b->shape[b->ndim - 1] != out || (runs > 1 && b->shape[0] != runs)))
        return qkv_ctx_fail(ctx, "linear: bias %s, expected %s(%lld)", qkv__shp(b), runs > 1 ? "(runs) x " : "",
                            (long long)out);
    if (rows % runs)
        return qkv_ctx_fail(ctx, "linear: the %lld rows of %s cannot be split among %lld runs", (long long)rows,
                            qkv__shp(x), (long long)runs);
    if (rows > INT32_MAX || in > INT32_MAX || out > INT32_MAX)
        return qkv_ctx_fail(ctx, "linear: %s x %s is too large for 32-bit BLAS", qkv__shp(x), qkv__shp(w));
    int64_t shape[QKV_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++) shape[i] = x->shape[i];
    shape[x->ndim - 1] = out;
    qkv_tensor *y = qkv__out(ctx, x->dtype, x->ndim, shape);
    if (!y) return NULL;
    int64_t per = rows / runs; /* each run's rows */
    qkv_dtype dt = x->dtype;
    for (int64_t r = 0; r < runs; r++) {
        void *yr = qkv__at(y->data, r * per * out, dt);
        if (b) QKV_KCALL(dt, fill_rows, per, out, qkv__at(b->data, r * out, dt), yr);
        QKV_KCALL(dt, gemm, 0, 1, per, out, in, qkv__at(x->data, r * per * in, dt), qkv__at(w->data, r * out * in, dt),
                  b ? 1 : 0, yr);
    }
    qkv_tensor *ins[3] = {x, w, b};
    qkv_record *r = qkv__record(ctx, QKV_OP_LINEAR, y, b ? 3 : 2, ins);
    if (r) {
        r->p.linear.rows = rows; r->p.linear.d_in = in; r->p.linear.d_out = out; r->p.linear.b = b;
        r->p.linear.runs = runs;
    }
    return y;
}

int qkv__linear_backward(qkv_ctx *ctx, const qkv_record *r) {
    qkv_tensor *x = r->in[0], *w = r->in[1], *b = r->p.linear.b;
    int64_t runs = r->p.linear.runs, per = r->p.linear.rows / runs, in = r->p.linear.d_in, out = r->p.linear.d_out;
    bool fresh; /* a new dX is written, not added to: no zeroing pass */
    void *dx = qkv__grad_fresh(ctx, x, &fresh), *dw = qkv__grad(ctx, w), *db = b ? qkv__grad(ctx, b) : NULL;
    if (!qkv_ctx_ok(ctx)) return -1;
    qkv_dtype dt = x->dtype;
    for (int64_t k = 0; k < runs; k++) { /* run k: rows [k per, (k + 1) per), W[k], b[k] */
        void *dy = qkv__at(r->out->grad, k * per * out, dt), *xk = qkv__at(x->data, k * per * in, dt);
        void *wk = qkv__at(w->data, k * out * in, dt);
        if (dx) QKV_KCALL(dt, gemm, 0, 0, per, in, out, dy, wk, !fresh, qkv__at(dx, k * per * in, dt)); /* dX += dY W */
        if (dw) QKV_KCALL(dt, gemm, 1, 0, out, in, per, dy, xk, 1, qkv__at(dw, k * out * in, dt));       /* dW += dY^T X */
        if (db) QKV_KCALL(dt, sum_rows, per, out, dy, qkv__at(db, k * out, dt));                          /* db += sum dY */
    }
    return 0;
}
