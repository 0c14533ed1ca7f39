/* Masked fill: replace elements where a broadcast mask is non-zero. */
#include "tensor/kernel_prelude.h"

/* y = mask != 0 ? value : x, mask (int32) broadcast over x by bc (a = x, b = mask) */
void K(masked_fill)(const qkv_bcast *bc, const real *x, const int32_t *mask, double value,
                    real *y) {
    const int64_t *n = bc->n, *sm = bc->sb;
    real v = (real)value;
    int64_t i = 0; /* x has the output's shape: sa is contiguous */
    for (int64_t i0 = 0; i0 < n[0]; i0++)
        for (int64_t i1 = 0; i1 < n[1]; i1++)
            for (int64_t i2 = 0; i2 < n[2]; i2++) {
                const int32_t *m = mask + i0 * sm[0] + i1 * sm[1] + i2 * sm[2];
                for (int64_t j = 0; j < n[3]; j++, i++) y[i] = m[j * sm[3]] ? v : x[i];
            }
}

/* dx += mask != 0 ? 0 : dy */
void K(masked_fill_backward)(const qkv_bcast *bc, const int32_t *mask, const real *dy, real *dx) {
    const int64_t *n = bc->n, *sm = bc->sb;
    int64_t i = 0;
    for (int64_t i0 = 0; i0 < n[0]; i0++)
        for (int64_t i1 = 0; i1 < n[1]; i1++)
            for (int64_t i2 = 0; i2 < n[2]; i2++) {
                const int32_t *m = mask + i0 * sm[0] + i1 * sm[1] + i2 * sm[2];
                for (int64_t j = 0; j < n[3]; j++, i++)
                    if (!m[j * sm[3]]) dx[i] += dy[i];
            }
}
