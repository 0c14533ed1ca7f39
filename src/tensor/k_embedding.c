/* Embedding lookup by integer index (indices are validated by the op before this runs). */
#include "tensor/kernel_prelude.h"
#include <string.h>

void K(embedding)(int64_t n, int64_t dim, const real *table, const int32_t *idx, real *y) {
    for (int64_t i = 0; i < n; i++)
        memcpy(y + i * dim, table + (int64_t)idx[i] * dim, (size_t)dim * sizeof(real));
}

void K(embedding_backward)(int64_t n, int64_t dim, const int32_t *idx, const real *dy,
                           real *dtable) {
    for (int64_t i = 0; i < n; i++) {
        real *row = dtable + (int64_t)idx[i] * dim;
        const real *g = dy + i * dim;
        for (int64_t j = 0; j < dim; j++) row[j] += g[j];
    }
}
