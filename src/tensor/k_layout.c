/* Data movement: transpose of two axes, and block copies for slice and concatenate. */
#include "tensor/kernel_prelude.h"

void K(transpose)(const int64_t shape[4], int a1, int a2, const real *x, real *y, int accumulate) {
    /* y's shape is x's with a1, a2 swapped; walk x in order and scatter into y */
    int64_t ys[4], ystride[4], xstride_in_y[4];
    for (int i = 0; i < 4; i++) ys[i] = shape[i];
    ys[a1] = shape[a2];
    ys[a2] = shape[a1];
    ystride[3] = 1;
    for (int i = 2; i >= 0; i--) ystride[i] = ystride[i + 1] * ys[i + 1];
    for (int i = 0; i < 4; i++) xstride_in_y[i] = ystride[i];
    xstride_in_y[a1] = ystride[a2];
    xstride_in_y[a2] = ystride[a1];
    int64_t i = 0;
    for (int64_t i0 = 0; i0 < shape[0]; i0++)
        for (int64_t i1 = 0; i1 < shape[1]; i1++)
            for (int64_t i2 = 0; i2 < shape[2]; i2++) {
                real *yp = y + i0 * xstride_in_y[0] + i1 * xstride_in_y[1] + i2 * xstride_in_y[2];
                int64_t s = xstride_in_y[3];
                if (accumulate)
                    for (int64_t j = 0; j < shape[3]; j++, i++) yp[j * s] += x[i];
                else
                    for (int64_t j = 0; j < shape[3]; j++, i++) yp[j * s] = x[i];
            }
}

QKV_VECTOR_CLONES
void K(copy_block)(int64_t outer, int64_t len, int64_t inner, const real *src, int64_t src_n,
                   int64_t src_at, real *dst, int64_t dst_n, int64_t dst_at, int accumulate) {
    for (int64_t o = 0; o < outer; o++) {
        const real *s = src + (o * src_n + src_at) * inner;
        real *d = dst + (o * dst_n + dst_at) * inner;
        int64_t m = len * inner;
        if (accumulate)
            for (int64_t j = 0; j < m; j++) d[j] += s[j];
        else
            for (int64_t j = 0; j < m; j++) d[j] = s[j];
    }
}
