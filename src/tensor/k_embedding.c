/* Embedding lookup by integer index (indices are validated by the op before this runs). */
#include "tensor/kernel_prelude.h"
#include "tensor/check.h"
#include <string.h>

typedef struct { int64_t n, dim; const real *table, *dy; const int32_t *idx; real *y, *dtable; } emb_job;

static void embedding_range(void *p, int64_t i0, int64_t i1) {
    emb_job *j = p;
    for (int64_t i = i0; i < i1; i++)
        memcpy(j->y + i * j->dim, j->table + (int64_t)j->idx[i] * j->dim, (size_t)j->dim * sizeof(real));
}

/* table: (V, dim), idx: (n) in [0, V) -> y: (n, dim), y[i] = table[idx[i]] */
void K(embedding)(int64_t n, int64_t dim, const real *table, const int32_t *idx, real *y) {
    QKV_ASSERT(n >= 0 && dim >= 1 && table && idx && y, "embedding: n >= 0, dim >= 1");
    emb_job j = {.n = n, .dim = dim, .table = table, .idx = idx, .y = y};
    qkv__parallel_for(n, qkv_row_grain(dim), embedding_range, &j);
}

/* columns [k0, k1) of every table row: indices may repeat, so split by column, not by index,
 * and add in index order (the serial order) */
static void embedding_backward_range(void *p, int64_t k0, int64_t k1) {
    emb_job *j = p;
    for (int64_t i = 0; i < j->n; i++) {
        real *row = j->dtable + (int64_t)j->idx[i] * j->dim;
        const real *g = j->dy + i * j->dim;
        for (int64_t k = k0; k < k1; k++) row[k] += g[k];
    }
}

/* dtable[idx[i]] += dy[i] */
void K(embedding_backward)(int64_t n, int64_t dim, const int32_t *idx, const real *dy, real *dtable) {
    QKV_ASSERT(n >= 0 && dim >= 1 && idx && dy && dtable, "embedding_backward: n >= 0, dim >= 1");
    emb_job j = {.n = n, .dim = dim, .idx = idx, .dy = dy, .dtable = dtable};
    qkv__parallel_for(dim, n >= QKV_GRAIN ? 8 : (QKV_GRAIN / (n > 0 ? n : 1) + 7) / 8 * 8, embedding_backward_range, &j);
}
