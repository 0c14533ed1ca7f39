/* Sum and mean over one axis. */
#include "tensor/kernel_prelude.h"
#include "tensor/check.h"

/* x viewed as (outer, n, inner): y[o,j] = scale * sum_i x[o,i,j] */
void K(sum_axis)(int64_t outer, int64_t n, int64_t inner, const real *x, double scale, real *y) {
    QKV_ASSERT(outer >= 0 && n >= 0 && inner >= 0 && x && y, "sum_axis: dims >= 0");
    for (int64_t o = 0; o < outer; o++) {
        real *yo = y + o * inner;
        for (int64_t j = 0; j < inner; j++) yo[j] = 0;
        for (int64_t i = 0; i < n; i++) {
            const real *xi = x + (o * n + i) * inner;
            for (int64_t j = 0; j < inner; j++) yo[j] += xi[j];
        }
        for (int64_t j = 0; j < inner; j++) yo[j] *= (real)scale;
    }
}

/* dx[o,i,j] += scale * dy[o,j] */
void K(sum_axis_backward)(int64_t outer, int64_t n, int64_t inner, const real *dy, double scale,
                          real *dx) {
    real s = (real)scale;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < n; i++) {
            real *dxi = dx + (o * n + i) * inner;
            const real *dyo = dy + o * inner;
            for (int64_t j = 0; j < inner; j++) dxi[j] += s * dyo[j];
        }
}
