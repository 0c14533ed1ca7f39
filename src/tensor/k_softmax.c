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

void K(softmax_backward)(int64_t rows, int64_t n, const real *y, const real *dy, real *dx) {
    for (int64_t r = 0; r < rows; r++, y += n, dy += n, dx += n) {
        real dot = 0;
        for (int64_t j = 0; j < n; j++) dot += dy[j] * y[j];
        for (int64_t j = 0; j < n; j++) dx[j] += y[j] * (dy[j] - dot);
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
