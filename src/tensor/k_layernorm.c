/* Layer normalisation over the last axis (PyTorch: biased variance, eps inside the sqrt). */
#include "tensor/kernel_prelude.h"

QKV_VECTOR_CLONES
void K(layernorm)(int64_t rows, int64_t n, const real *x, const real *w, const real *b,
                  double eps, real *y, real *mean, real *rstd) {
    for (int64_t r = 0; r < rows; r++, x += n, y += n) {
        real m = 0, v = 0;
        for (int64_t j = 0; j < n; j++) m += x[j];
        m /= (real)n;
        for (int64_t j = 0; j < n; j++) { real d = x[j] - m; v += d * d; }
        v /= (real)n;
        real rs = 1 / sqrt(v + (real)eps);
        for (int64_t j = 0; j < n; j++) {
            real h = (x[j] - m) * rs;
            y[j] = (w ? h * w[j] : h) + (b ? b[j] : 0);
        }
        mean[r] = m;
        rstd[r] = rs;
    }
}

QKV_VECTOR_CLONES
void K(layernorm_backward)(int64_t rows, int64_t n, const real *x, const real *w,
                           const real *mean, const real *rstd, const real *dy, real *dx,
                           real *dw, real *db) {
    for (int64_t r = 0; r < rows; r++, x += n, dy += n) {
        real m = mean[r], rs = rstd[r], sum_g = 0, sum_gh = 0;
        for (int64_t j = 0; j < n; j++) { /* g = dL/dxhat */
            real h = (x[j] - m) * rs, g = w ? dy[j] * w[j] : dy[j];
            sum_g += g;
            sum_gh += g * h;
            if (dw) dw[j] += dy[j] * h;
            if (db) db[j] += dy[j];
        }
        if (!dx) continue;
        real mg = sum_g / (real)n, mgh = sum_gh / (real)n;
        real *dxr = dx + r * n;
        for (int64_t j = 0; j < n; j++) {
            real h = (x[j] - m) * rs, g = w ? dy[j] * w[j] : dy[j];
            dxr[j] += rs * (g - mg - h * mgh);
        }
    }
}
