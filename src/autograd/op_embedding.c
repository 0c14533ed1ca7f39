/* embedding: rows of a table picked by integer indices. */
#include "autograd/ops.h"
#include "autograd/tape.h"

qkv_tensor *qkv_embedding(qkv_ctx *ctx, qkv_tensor *table, const qkv_tensor *idx) {
    if (!table || !idx || !qkv__check_float(ctx, "embedding", table)) return NULL;
    // table: (V,D), idx: I32 (...) -> y: (...,D)
    if (table->ndim != 2)
        return qkv_ctx_fail(ctx, "embedding: table must be 2-D (rows, dim), got %s", qkv__shp(table));
    if (idx->dtype != QKV_I32)
        return qkv_ctx_fail(ctx, "embedding: indices must be I32, got %s", qkv_dtype_name(idx->dtype));
    if (idx->ndim >= QKV_MAX_DIMS)
        return qkv_ctx_fail(ctx, "embedding: indices %s leave no room for the embedding axis",
                            qkv__shp(idx));
    const int32_t *ix = idx->data;
    int64_t V = table->shape[0], D = table->shape[1];
    for (int64_t i = 0; i < idx->numel && !ctx->counting; i++)
        if (ix[i] < 0 || ix[i] >= V)
            return qkv_ctx_fail(ctx, "embedding: index %d at position %lld is out of range for a "
                                "table of %lld rows %s", ix[i], (long long)i, (long long)V,
                                qkv__shp(table));
    int64_t shape[QKV_MAX_DIMS];
    for (int i = 0; i < idx->ndim; i++) shape[i] = idx->shape[i];
    shape[idx->ndim] = D;
    qkv_tensor *y = qkv__out(ctx, table->dtype, idx->ndim + 1, shape);
    if (!y) return NULL;
    QKV_KCALL(ctx, table->dtype, embedding, idx->numel, D, table->data, ix, y->data);
    qkv_record *r = qkv__record(ctx, QKV_OP_EMBEDDING, y, 1, &table);
    if (r) r->p.embedding.idx = idx;
    return y;
}

int qkv__embedding_backward(qkv_ctx *ctx, const qkv_record *r) {
    qkv_tensor *table = r->in[0];
    void *dt = qkv__grad(ctx, table);
    if (!dt) return qkv_ctx_ok(ctx) ? 0 : -1;
    /* dtable[idx[i]] += dy[i], in order */
    QKV_KCALL(ctx, table->dtype, embedding_backward, r->p.embedding.idx->numel, table->shape[1], r->p.embedding.idx->data,
              r->out->grad, dt);
    return 0;
}
