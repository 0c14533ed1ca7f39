/* cross_entropy over logits with an ignore index (mean over the counted targets). */
#include "autograd/ops.h"
#include "autograd/tape.h"

qkv_tensor *qkv_cross_entropy(qkv_ctx *ctx, qkv_tensor *logits, const qkv_tensor *targets, int ignore_index) {
    if (!logits || !targets || !qkv__check_float(ctx, "cross_entropy", logits)) return NULL;
    // logits: (rows,V) as (...,V), targets: I32 (rows) as (...) -> y: scalar
    if (targets->dtype != QKV_I32)
        return qkv_ctx_fail(ctx, "cross_entropy: targets must be I32, got %s",
                            qkv_dtype_name(targets->dtype));
    if (logits->ndim < 1 || logits->numel / logits->shape[logits->ndim - 1] != targets->numel)
        return qkv_ctx_fail(ctx, "cross_entropy: logits %s need one target per row (%lld), got "
                            "targets %s", qkv__shp(logits),
                            (long long)(logits->ndim ? logits->numel / logits->shape[logits->ndim - 1] : 0),
                            qkv__shp(targets));
    int64_t V = logits->shape[logits->ndim - 1], rows = targets->numel;
    const int32_t *t = targets->data;
    for (int64_t i = 0; i < rows && !ctx->counting; i++)
        if (t[i] != ignore_index && (t[i] < 0 || t[i] >= V))
            return qkv_ctx_fail(ctx, "cross_entropy: target %d at position %lld is out of range "
                                "for %lld classes", t[i], (long long)i, (long long)V);
    qkv_tensor *y = qkv__out(ctx, logits->dtype, 0, NULL);
    void *lse = y ? qkv_ctx_alloc(ctx, (size_t)rows * qkv_dtype_size(logits->dtype)) : NULL; // (rows)
    if (!lse) return NULL;
    int64_t count = 0; /* counting: no targets read, none counted */
    if (!ctx->counting)
        qkv_tensor_set(y, 0, QKV_KVALUE(logits->dtype, cross_entropy, rows, V, logits->data, t, ignore_index, lse, &count));
    qkv_record *r = qkv__record(ctx, QKV_OP_CROSS_ENTROPY, y, 1, &logits);
    if (r) {
        r->p.cross_entropy.targets = targets;
        r->p.cross_entropy.lse = lse;
        r->p.cross_entropy.rows = rows; r->p.cross_entropy.V = V; r->p.cross_entropy.count = count;
        r->p.cross_entropy.ignore_index = ignore_index;
    }
    return y;
}

int qkv__cross_entropy_backward(qkv_ctx *ctx, const qkv_record *r) {
    qkv_tensor *x = r->in[0];
    void *dx = qkv__grad(ctx, x);
    if (!dx) return qkv_ctx_ok(ctx) ? 0 : -1;
    const int64_t count = r->p.cross_entropy.count;
    if (count == 0) return 0; /* every target ignored: the loss is the constant 0 (counting: none read) */
    double g = qkv_tensor_grad_get(r->out, 0) / (double)count;
    QKV_KCALL(ctx, x->dtype, cross_entropy_backward, r->p.cross_entropy.rows, r->p.cross_entropy.V, x->data,
              r->p.cross_entropy.targets->data, (int32_t)r->p.cross_entropy.ignore_index, r->p.cross_entropy.lse, g,
              dx);
    return 0;
}
