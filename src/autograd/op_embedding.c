/* embedding: rows of a table picked by integer indices. With a run axis (table: (R,V,D)), the
 * indices are R equal groups, group r picking rows of table[r] (each group by the calls a model
 * of one run makes: docs/performance.md, "Batched runs"). */
#include "autograd/ops.h"
#include "autograd/tape.h"

qkv_tensor *qkv_embedding(qkv_ctx *ctx, qkv_tensor *table, const qkv_tensor *idx) {
    if (!table || !idx || !qkv__check_float(ctx, "embedding", table)) return NULL;
    if (table->ndim != 2 && table->ndim != 3)
        return qkv_ctx_fail(ctx, "embedding: table must be ([runs,] rows, dim), got %s", qkv__shp(table));
    if (idx->dtype != QKV_I32)
        return qkv_ctx_fail(ctx, "embedding: indices must be I32, got %s", qkv_dtype_name(idx->dtype));
    if (idx->ndim >= QKV_MAX_DIMS)
        return qkv_ctx_fail(ctx, "embedding: indices %s leave no room for the embedding axis",
                            qkv__shp(idx));
    int64_t runs = table->ndim == 3 ? table->shape[0] : 1;
    if (idx->numel % runs)
        return qkv_ctx_fail(ctx, "embedding: the %lld indices %s cannot be split among %lld runs",
                            (long long)idx->numel, qkv__shp(idx), (long long)runs);
    const int32_t *ix = idx->data;
    int64_t V = table->shape[table->ndim - 2], D = table->shape[table->ndim - 1], per = idx->numel / runs;
    for (int64_t i = 0; i < idx->numel; i++)
        if (ix[i] < 0 || ix[i] >= V)
            return qkv_ctx_fail(ctx, "embedding: index %d at position %lld is out of range for a "
                                "table of %lld rows %s", ix[i], (long long)i, (long long)V,
                                qkv__shp(table));
    int64_t shape[QKV_MAX_DIMS];
    for (int i = 0; i < idx->ndim; i++) shape[i] = idx->shape[i];
    shape[idx->ndim] = D;
    qkv_tensor *y = qkv__out(ctx, table->dtype, idx->ndim + 1, shape);
    if (!y) return NULL;
    qkv_dtype dt = table->dtype;
    for (int64_t r = 0; r < runs; r++)
        QKV_KCALL(dt, embedding, per, D, qkv__at(table->data, r * V * D, dt), ix + r * per,
                  qkv__at(y->data, r * per * D, dt));
    qkv_record *r = qkv__record(ctx, QKV_OP_EMBEDDING, y, 1, &table);
    if (r) {
        r->p.embedding.idx = idx;
        r->p.embedding.runs = runs;
    }
    return y;
}

int qkv__embedding_backward(qkv_ctx *ctx, const qkv_record *r) {
    qkv_tensor *table = r->in[0];
    void *dt = qkv__grad(ctx, table);
    if (!dt) return qkv_ctx_ok(ctx) ? 0 : -1;
    int64_t runs = r->p.embedding.runs, n = r->p.embedding.idx->numel / runs;
    int64_t V = table->shape[table->ndim - 2], D = table->shape[table->ndim - 1];
    const int32_t *ix = r->p.embedding.idx->data;
    for (int64_t k = 0; k < runs; k++) /* dtable[k][idx[i]] += dy[i] over run k's indices, in order */
        QKV_KCALL(table->dtype, embedding_backward, n, D, ix + k * n, qkv__at(r->out->grad, k * n * D, table->dtype),
                  qkv__at(dt, k * V * D, table->dtype));
    return 0;
}
