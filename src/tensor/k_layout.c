/* Data movement: transpose of two axes, and block copies for slice and concatenate.
 * Every output element is written by one thread, so ranges run on qkv's threads. */
#include "tensor/kernel_prelude.h"
#include "tensor/check.h"

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
    const layout_job *j = p; /* fields into locals: stores through y cannot change them */
    const int64_t s1 = j->shape[1], s2 = j->shape[2], n = j->shape[3];
    const int64_t xs0 = j->xs[0], xs1 = j->xs[1], xs2 = j->xs[2], xs3 = j->xs[3];
    const real *x = j->x;
    real *y = j->y;
    const int acc = j->accumulate;
    int64_t i2 = r0 % s2, i1 = (r0 / s2) % s1, i0 = r0 / (s2 * s1); /* divide once, then count */
    for (int64_t r = r0; r < r1; r++) {
        const real *xr = x + r * n;
        real *yp = y + i0 * xs0 + i1 * xs1 + i2 * xs2;
        if (acc)
            for (int64_t k = 0; k < n; k++) yp[k * xs3] += xr[k];
        else if (xs3 == 1)
            for (int64_t k = 0; k < n; k++) yp[k] = xr[k];
        else
            for (int64_t k = 0; k < n; k++) yp[k * xs3] = xr[k];
        if (++i2 == s2) {
            i2 = 0;
            if (++i1 == s1) { i1 = 0; i0++; }
        }
    }
}

/* x: shape (4 dims) -> y: x with axes a1 and a2 swapped; accumulate: y += instead of y = */
void K(transpose)(const int64_t shape[4], int a1, int a2, const real *x, real *y, int accumulate) {
    QKV_ASSERT(a1 >= 0 && a1 < 4 && a2 >= 0 && a2 < 4 && x && y, "transpose: axes in [0, 4)");
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
    qkv__parallel_for(shape[0] * shape[1] * shape[2], qkv_row_grain(shape[3]), transpose_range, &j);
}

QKV_VECTOR_CLONES
static void copy_block_range(void *p, int64_t o0, int64_t o1) {
    const layout_job *j = p;
    const int64_t m = j->len * j->inner, inner = j->inner, src_n = j->src_n, src_at = j->src_at;
    const int64_t dst_n = j->dst_n, dst_at = j->dst_at;
    const int acc = j->accumulate;
    for (int64_t o = o0; o < o1; o++) {
        const real *s = j->x + (o * src_n + src_at) * inner;
        real *d = j->y + (o * dst_n + dst_at) * inner;
        if (acc)
            for (int64_t k = 0; k < m; k++) d[k] += s[k];
        else
            for (int64_t k = 0; k < m; k++) d[k] = s[k];
    }
}

/* views (outer, *, inner): dst[o, dst_at + i, j] (+)= src[o, src_at + i, j] for i < len;
 * src_n, dst_n are the middle dims. Slice, concat and their backwards. */
void K(copy_block)(int64_t outer, int64_t len, int64_t inner, const real *src, int64_t src_n, int64_t src_at,
                   real *dst, int64_t dst_n, int64_t dst_at, int accumulate) {
    QKV_ASSERT(outer >= 0 && len >= 0 && inner >= 1 && src_at >= 0 && dst_at >= 0 && src_at + len <= src_n && dst_at + len <= dst_n, "copy_block: the block inside both views");
    layout_job j = {.x = src, .y = dst, .accumulate = accumulate, .len = len, .inner = inner, .src_n = src_n,
                    .src_at = src_at, .dst_n = dst_n, .dst_at = dst_at};
    qkv__parallel_for(outer, qkv_row_grain(len * inner), copy_block_range, &j);
}
