/* Softmax and log-softmax over the last axis, numerically stable (max subtracted). */
#include "tensor/kernel_prelude.h"
#include <math.h>
#include "tensor/fastmath.h"

#if QKV_KERNEL_F64
#define EXP(v) exp(v)
#else
#define EXP(v) qkv_expf_fast(v) /* vectorisable */
#endif

static real row_max(int64_t n, const real *x) {
    real m = -INFINITY;
    for (int64_t j = 0; j < n; j++) m = x[j] > m ? x[j] : m;
    return m;
}

QKV_VECTOR_CLONES
void K(softmax)(int64_t rows, int64_t n, const real *x, real *y) {
    for (int64_t r = 0; r < rows; r++, x += n, y += n) {
        real m = row_max(n, x);
        if (m == -INFINITY) { /* fully masked row: no mass anywhere, output zeros (not NaN) */
            for (int64_t j = 0; j < n; j++) y[j] = 0;
            continue;
        }
        real s = 0;
        for (int64_t j = 0; j < n; j++) y[j] = EXP(x[j] - m);
        for (int64_t j = 0; j < n; j++) s += y[j];
        real inv = 1 / s;
        for (int64_t j = 0; j < n; j++) y[j] *= inv;
    }
}

QKV_VECTOR_CLONES
void K(masked_softmax)(int64_t rows, int64_t n, const real *x, const qkv_bcast *bc,
                       const int32_t *mask, double scale, double fill, real *y) {
    real sc = (real)scale, fv = (real)fill;
    for (int64_t r = 0; r < rows; r++) {
        const real *xr = x + r * n;
        real *yr = y + r * n;
        if (mask) { /* the mask row for x's row r: unravel r over the broadcast plan's outer dims */
            int64_t i2 = r % bc->n[2], i1 = (r / bc->n[2]) % bc->n[1], i0 = r / (bc->n[2] * bc->n[1]);
            const int32_t *m = mask + i0 * bc->sb[0] + i1 * bc->sb[1] + i2 * bc->sb[2];
            int64_t s3 = bc->sb[3];
            for (int64_t j = 0; j < n; j++) yr[j] = m[j * s3] ? fv : sc * xr[j];
        } else {
            for (int64_t j = 0; j < n; j++) yr[j] = sc * xr[j];
        }
        K(softmax)(1, n, yr, yr); /* in place: reads a value before writing it */
    }
}

QKV_VECTOR_CLONES
void K(softmax_backward)(int64_t rows, int64_t n, const real *y, const real *dy, double scale, real *dx) {
    real sc = (real)scale;
    for (int64_t r = 0; r < rows; r++, y += n, dy += n, dx += n) {
        real dot = 0;
        for (int64_t j = 0; j < n; j++) dot += dy[j] * y[j];
        if (sc == 1)
            for (int64_t j = 0; j < n; j++) dx[j] += y[j] * (dy[j] - dot);
        else
            for (int64_t j = 0; j < n; j++) dx[j] += sc * (y[j] * (dy[j] - dot));
    }
}

void K(log_softmax)(int64_t rows, int64_t n, const real *x, real *y) {
    for (int64_t r = 0; r < rows; r++, x += n, y += n) {
        real m = row_max(n, x), s = 0;
        for (int64_t j = 0; j < n; j++) s += EXP(x[j] - m);
        real ls = log(s); /* (x - m) - log s: never form m + log s, which rounds at large m */
        for (int64_t j = 0; j < n; j++) y[j] = (x[j] - m) - ls;
    }
}

void K(log_softmax_backward)(int64_t rows, int64_t n, const real *y, const real *dy, real *dx) {
    for (int64_t r = 0; r < rows; r++, y += n, dy += n, dx += n) {
        real s = 0;
        for (int64_t j = 0; j < n; j++) s += dy[j];
        for (int64_t j = 0; j < n; j++) dx[j] += dy[j] - exp(y[j]) * s;
    }
}
