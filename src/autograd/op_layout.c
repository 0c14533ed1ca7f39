/* reshape, transpose, slice, concat: moving data without arithmetic. */
#include "autograd/ops.h"
#include "autograd/tape.h"

#include <string.h>

qkv_tensor *qkv_reshape(qkv_ctx *ctx, qkv_tensor *x, int ndim, const int64_t *shape) {
    if (!x) return NULL;
    char want[96];
    if (ndim < 0 || ndim > QKV_MAX_DIMS)
        return qkv_ctx_fail(ctx, "reshape: %d dims requested, at most %d", ndim, QKV_MAX_DIMS);
    int64_t s[QKV_MAX_DIMS], known = 1;
    int infer = -1;
    for (int i = 0; i < ndim; i++) {
        s[i] = shape[i];
        if (s[i] == -1 && infer < 0) infer = i;
        else if (s[i] < 1 || s[i] > x->numel) /* also keeps `known` from overflowing */
            return qkv_ctx_fail(ctx, "reshape: cannot view %s (%lld elements) as %s", qkv__shp(x),
                                (long long)x->numel, qkv_shape_str(ndim, shape, want, sizeof want));
        else known *= s[i];
        if (known > x->numel)
            return qkv_ctx_fail(ctx, "reshape: cannot view %s (%lld elements) as %s", qkv__shp(x),
                                (long long)x->numel, qkv_shape_str(ndim, shape, want, sizeof want));
    }
    if (infer >= 0) s[infer] = known > 0 && x->numel % known == 0 ? x->numel / known : 0;
    if (qkv_shape_numel(ndim, s) != x->numel)
        return qkv_ctx_fail(ctx, "reshape: cannot view %s (%lld elements) as %s", qkv__shp(x),
                            (long long)x->numel, qkv_shape_str(ndim, shape, want, sizeof want));
    qkv_tensor *y = qkv__ctx_alloc_host(ctx, sizeof *y);
    if (!y) return NULL;
    qkv_shape_init(y, x->dtype, ndim, s);
    y->data = x->data; /* a view: reshape copies nothing */
    y->gen = ctx->gen;
    qkv__record(ctx, QKV_OP_RESHAPE, y, 1, &x);
    return y;
}

int qkv__reshape_backward(qkv_ctx *ctx, const qkv_record *r) {
    qkv_tensor *x = r->in[0];
    void *dx = qkv__grad(ctx, x);
    if (!dx) return qkv_ctx_ok(ctx) ? 0 : -1;
    QKV_KCALL(ctx, x->dtype, axpy, x->numel, 1.0, r->out->grad, dx);
    return 0;
}

/* x's shape right-aligned into 4 dims, and the two axes moved with it */
static void pad4(const qkv_tensor *x, int *a1, int *a2, int64_t s4[4]) {
    int off = 4 - x->ndim;
    for (int i = 0; i < 4; i++) s4[i] = i < off ? 1 : x->shape[i - off];
    *a1 += off;
    *a2 += off;
}

qkv_tensor *qkv_transpose(qkv_ctx *ctx, qkv_tensor *x, int a1, int a2) {
    if (!x || !qkv__check_float(ctx, "transpose", x)) return NULL;
    int b1 = a1 < 0 ? a1 + x->ndim : a1, b2 = a2 < 0 ? a2 + x->ndim : a2;
    if (b1 < 0 || b1 >= x->ndim || b2 < 0 || b2 >= x->ndim)
        return qkv_ctx_fail(ctx, "transpose: axes %d and %d are out of range for shape %s", a1, a2,
                            qkv__shp(x));
    int64_t shape[QKV_MAX_DIMS];
    memcpy(shape, x->shape, sizeof shape);
    shape[b1] = x->shape[b2];
    shape[b2] = x->shape[b1];
    qkv_tensor *y = qkv__out(ctx, x->dtype, x->ndim, shape);
    if (!y) return NULL;
    int64_t s4[4];
    int c1 = b1, c2 = b2;
    pad4(x, &c1, &c2, s4);
    QKV_KCALL(ctx, x->dtype, transpose, s4, c1, c2, x->data, y->data, 0);
    qkv_record *r = qkv__record(ctx, QKV_OP_TRANSPOSE, y, 1, &x);
    if (r) { r->p.transpose.a1 = c1; r->p.transpose.a2 = c2; }
    return y;
}

int qkv__transpose_backward(qkv_ctx *ctx, const qkv_record *r) {
    qkv_tensor *x = r->in[0], *y = r->out;
    void *dx = qkv__grad(ctx, x);
    if (!dx) return qkv_ctx_ok(ctx) ? 0 : -1;
    int c1 = r->p.transpose.a1, c2 = r->p.transpose.a2, d1 = 0, d2 = 0;
    int64_t s4[4];
    pad4(y, &d1, &d2, s4); /* dx = transpose(dy) over y's shape */
    QKV_KCALL(ctx, x->dtype, transpose, s4, c1, c2, y->grad, dx, 1);
    return 0;
}

/* x viewed as (outer, n, inner) around `axis` */
static void split3(const qkv_tensor *x, int axis, int64_t *outer, int64_t *inner) {
    *outer = 1;
    *inner = 1;
    for (int i = 0; i < axis; i++) *outer *= x->shape[i];
    for (int i = axis + 1; i < x->ndim; i++) *inner *= x->shape[i];
}

qkv_tensor *qkv_slice(qkv_ctx *ctx, qkv_tensor *x, int axis, int64_t start, int64_t len) {
    if (!x || !qkv__check_float(ctx, "slice", x)) return NULL;
    int ax = axis < 0 ? axis + x->ndim : axis;
    if (ax < 0 || ax >= x->ndim)
        return qkv_ctx_fail(ctx, "slice: axis %d is out of range for shape %s", axis, qkv__shp(x));
    if (start < 0 || len < 1 || start > x->shape[ax] - len)
        return qkv_ctx_fail(ctx, "slice: [%lld, %lld) is outside axis %d of %s", (long long)start,
                            (long long)(start + len), axis, qkv__shp(x));
    int64_t shape[QKV_MAX_DIMS], outer, inner;
    memcpy(shape, x->shape, sizeof shape);
    shape[ax] = len;
    qkv_tensor *y = qkv__out(ctx, x->dtype, x->ndim, shape);
    if (!y) return NULL;
    split3(x, ax, &outer, &inner);
    QKV_KCALL(ctx, x->dtype, copy_block, outer, len, inner, x->data, x->shape[ax], start, y->data, len, 0, 0);
    qkv_record *r = qkv__record(ctx, QKV_OP_SLICE, y, 1, &x);
    if (r) {
        r->p.slice.outer = outer; r->p.slice.n = x->shape[ax]; r->p.slice.inner = inner;
        r->p.slice.start = start; r->p.slice.len = len;
    }
    return y;
}

int qkv__slice_backward(qkv_ctx *ctx, const qkv_record *r) {
    qkv_tensor *x = r->in[0];
    void *dx = qkv__grad(ctx, x);
    if (!dx) return qkv_ctx_ok(ctx) ? 0 : -1;
    int64_t len = r->p.slice.len; /* dy (outer,len,inner) added into rows start.. of dx (outer,n,inner) */
    QKV_KCALL(ctx, x->dtype, copy_block, r->p.slice.outer, len, r->p.slice.inner, r->out->grad, len, 0, dx, r->p.slice.n,
              r->p.slice.start, 1);
    return 0;
}

qkv_tensor *qkv_concat(qkv_ctx *ctx, qkv_tensor *const *xs, int n, int axis) {
    if (n < 1) return qkv_ctx_fail(ctx, "concat: needs at least one tensor");
    for (int i = 0; i < n; i++)
        if (!xs[i] || !qkv__check_pair(ctx, "concat", xs[0], xs[i])) return NULL;
    const qkv_tensor *x0 = xs[0];
    int ax = axis < 0 ? axis + x0->ndim : axis;
    if (ax < 0 || ax >= x0->ndim)
        return qkv_ctx_fail(ctx, "concat: axis %d is out of range for shape %s", axis, qkv__shp(x0));
    int64_t shape[QKV_MAX_DIMS], total = 0;
    for (int i = 0; i < n; i++) {
        bool ok = xs[i]->ndim == x0->ndim;
        for (int d = 0; ok && d < x0->ndim; d++) ok = d == ax || xs[i]->shape[d] == x0->shape[d];
        if (!ok)
            return qkv_ctx_fail(ctx, "concat: tensor %d has shape %s, incompatible with %s along "
                                "axis %d", i, qkv__shp(xs[i]), qkv__shp(x0), axis);
        total += xs[i]->shape[ax];
    }
    memcpy(shape, x0->shape, sizeof shape);
    shape[ax] = total;
    qkv_tensor *y = qkv__out(ctx, x0->dtype, x0->ndim, shape);
    if (!y) return NULL;
    int64_t outer, inner, at = 0;
    split3(x0, ax, &outer, &inner);
    for (int i = 0; i < n; i++) {
        int64_t len = xs[i]->shape[ax];
        QKV_KCALL(ctx, x0->dtype, copy_block, outer, len, inner, xs[i]->data, len, 0, y->data, total, at, 0);
        at += len;
    }
    qkv_record *r = qkv__record(ctx, QKV_OP_CONCAT, y, n, xs);
    if (r) { r->p.concat.outer = outer; r->p.concat.inner = inner; r->p.concat.total = total; r->p.concat.axis = ax; }
    return y;
}

int qkv__concat_backward(qkv_ctx *ctx, const qkv_record *r) {
    int64_t at = 0;
    for (int i = 0; i < r->n_in; i++) {
        qkv_tensor *x = r->in[i];
        int64_t len = x->shape[r->p.concat.axis];
        void *dx = qkv__grad(ctx, x);
        if (!qkv_ctx_ok(ctx)) return -1;
        if (dx)
            QKV_KCALL(ctx, x->dtype, copy_block, r->p.concat.outer, len, r->p.concat.inner, r->out->grad,
                      r->p.concat.total, at, dx, len, 0, 1);
        at += len;
    }
    return 0;
}
