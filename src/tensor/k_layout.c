/* Data movement: transpose of two axes, and block copies for slice and concatenate.
 * Every output element is written by one thread, so ranges run on qkv's threads. */
#include "tensor/kernel_prelude.h"

typedef struct {
    int64_t shape[4], xs[4]; /* x's shape; where x's axes step in y */
    const real *x;
    real *y;
    int accumulate;
    int64_t len, inner, src_n, src_at, dst_n, dst_at;
} layout_job;

/* x rows r = (i0, i1, i2) in [r0, r1), each of shape[3] elements, scattered into y */
QKV_VECTOR_CLONES
static void transpose_range(void *p, int64_t r0, int64_t r1) {
    layout_job *j = p;
    const int64_t *s = j->shape, *xs = j->xs;
    for (int64_t r = r0; r < r1; r++) {
        int64_t i2 = r % s[2], i1 = (r / s[2]) % s[1], i0 = r / (s[2] * s[1]);
        const real *xr = j->x + r * s[3];
        real *yp = j->y + i0 * xs[0] + i1 * xs[1] + i2 * xs[2];
        if (j->accumulate)
            for (int64_t k = 0; k < s[3]; k++) yp[k * xs[3]] += xr[k];
        else
            for (int64_t k = 0; k < s[3]; k++) yp[k * xs[3]] = xr[k];
    }
}

void K(transpose)(const int64_t shape[4], int a1, int a2, const real *x, real *y, int accumulate) {
    /* y's shape is x's with a1, a2 swapped; walk x in order and scatter into y */
    layout_job j = {.x = x, .y = y, .accumulate = accumulate};
    int64_t ys[4], ystride[4];
    for (int i = 0; i < 4; i++) ys[i] = j.shape[i] = shape[i];
    ys[a1] = shape[a2];
    ys[a2] = shape[a1];
    ystride[3] = 1;
    for (int i = 2; i >= 0; i--) ystride[i] = ystride[i + 1] * ys[i + 1];
    for (int i = 0; i < 4; i++) j.xs[i] = ystride[i];
    j.xs[a1] = ystride[a2];
    j.xs[a2] = ystride[a1];
    qkv_parallel_for(shape[0] * shape[1] * shape[2], qkv_row_grain(shape[3]), transpose_range, &j);
}

QKV_VECTOR_CLONES
static void copy_block_range(void *p, int64_t o0, int64_t o1) {
    layout_job *j = p;
    int64_t m = j->len * j->inner;
    for (int64_t o = o0; o < o1; o++) {
        const real *s = j->x + (o * j->src_n + j->src_at) * j->inner;
        real *d = j->y + (o * j->dst_n + j->dst_at) * j->inner;
        if (j->accumulate)
            for (int64_t k = 0; k < m; k++) d[k] += s[k];
        else
            for (int64_t k = 0; k < m; k++) d[k] = s[k];
    }
}

void K(copy_block)(int64_t outer, int64_t len, int64_t inner, const real *src, int64_t src_n, int64_t src_at,
                   real *dst, int64_t dst_n, int64_t dst_at, int accumulate) {
    layout_job j = {.x = src, .y = dst, .accumulate = accumulate, .len = len, .inner = inner, .src_n = src_n,
                    .src_at = src_at, .dst_n = dst_n, .dst_at = dst_at};
    qkv_parallel_for(outer, qkv_row_grain(len * inner), copy_block_range, &j);
}
