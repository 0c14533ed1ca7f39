/* cross_entropy over logits with an ignore index (mean over the counted targets); over runs,
 * one mean per run's rows, each by the kernel calls a model of one run makes. */
#include "autograd/ops.h"
#include "autograd/tape.h"

/* runs 0: the scalar of qkv_cross_entropy; else (runs) means */
static qkv_tensor *cross_entropy(qkv_ctx *ctx, qkv_tensor *logits, const qkv_tensor *targets, int ignore_index,
                                 int runs) {
    if (!logits || !targets || !qkv__check_float(ctx, "cross_entropy", logits)) return NULL;
    if (targets->dtype != QKV_I32)
        return qkv_ctx_fail(ctx, "cross_entropy: targets must be I32, got %s",
                            qkv_dtype_name(targets->dtype));
    if (logits->ndim < 1 || logits->numel / logits->shape[logits->ndim - 1] != targets->numel)
        return qkv_ctx_fail(ctx, "cross_entropy: logits %s need one target per row (%lld), got "
                            "targets %s", qkv__shp(logits),
                            (long long)(logits->ndim ? logits->numel / logits->shape[logits->ndim - 1] : 0),
                            qkv__shp(targets));
    int64_t V = logits->shape[logits->ndim - 1], rows = targets->numel, R = runs ? runs : 1;
    if (R < 1 || rows % R)
        return qkv_ctx_fail(ctx, "cross_entropy: the %lld rows of %s cannot be split among %d runs",
                            (long long)rows, qkv__shp(logits), runs);
    const int32_t *t = targets->data;
    for (int64_t i = 0; i < rows; i++)
        if (t[i] != ignore_index && (t[i] < 0 || t[i] >= V))
            return qkv_ctx_fail(ctx, "cross_entropy: target %d at position %lld is out of range "
                                "for %lld classes", t[i], (long long)i, (long long)V);
    int64_t one = R;
    qkv_tensor *y = qkv__out(ctx, logits->dtype, runs ? 1 : 0, &one);
    void *lse = y ? qkv_ctx_alloc(ctx, (size_t)rows * qkv_dtype_size(logits->dtype)) : NULL;
    int64_t *counts = lse ? qkv_ctx_alloc(ctx, (size_t)R * sizeof *counts) : NULL;
    if (!counts) return NULL;
    int64_t per = rows / R;
    qkv_dtype dt = logits->dtype;
    for (int64_t r = 0; r < R; r++) {
        double loss = QKV_KCALL(dt, cross_entropy, per, V, qkv__at(logits->data, r * per * V, dt), t + r * per,
                                ignore_index, qkv__at(lse, r * per, dt), &counts[r]);
        qkv_tensor_set(y, r, loss);
    }
    qkv_record *rec = qkv__record(ctx, QKV_OP_CROSS_ENTROPY, y, 1, &logits);
    if (rec) {
        rec->p.cross_entropy.targets = targets;
        rec->p.cross_entropy.lse = lse;
        rec->p.cross_entropy.rows = rows; rec->p.cross_entropy.V = V; rec->p.cross_entropy.runs = R;
        rec->p.cross_entropy.counts = counts;
        rec->p.cross_entropy.ignore_index = ignore_index;
    }
    return y;
}

qkv_tensor *qkv_cross_entropy(qkv_ctx *ctx, qkv_tensor *logits, const qkv_tensor *targets, int ignore_index) {
    return cross_entropy(ctx, logits, targets, ignore_index, 0);
}

qkv_tensor *qkv_cross_entropy_runs(qkv_ctx *ctx, qkv_tensor *logits, const qkv_tensor *targets, int ignore_index,
                                   int runs) {
    if (runs < 1) return qkv_ctx_fail(ctx, "cross_entropy: %d runs (at least 1)", runs);
    return cross_entropy(ctx, logits, targets, ignore_index, runs);
}

int qkv__cross_entropy_backward(qkv_ctx *ctx, const qkv_record *r) {
    qkv_tensor *x = r->in[0];
    void *dx = qkv__grad(ctx, x);
    if (!dx) return qkv_ctx_ok(ctx) ? 0 : -1;
    int64_t runs = r->p.cross_entropy.runs, per = r->p.cross_entropy.rows / runs, V = r->p.cross_entropy.V;
    const int32_t *t = r->p.cross_entropy.targets->data;
    qkv_dtype dt = x->dtype;
    for (int64_t k = 0; k < runs; k++) {
        const int64_t count = r->p.cross_entropy.counts[k];
        if (count == 0) continue; /* every target of the run ignored: its loss is the constant 0 */
        double g = qkv_tensor_grad_get(r->out, k) / (double)count;
        QKV_KCALL(dt, cross_entropy_backward, per, V, qkv__at(x->data, k * per * V, dt), t + k * per,
                  (int32_t)r->p.cross_entropy.ignore_index, qkv__at(r->p.cross_entropy.lse, k * per, dt), g,
                  qkv__at(dx, k * per * V, dt));
    }
    return 0;
}
