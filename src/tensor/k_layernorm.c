/* Layer normalisation over the last axis (PyTorch: biased variance, eps inside the sqrt).
 * Rows run on qkv's threads; the weight and bias gradients, sums over rows, are split by
 * column instead, each column summed in row order, so the result never depends on threads. */
#include "tensor/kernel_prelude.h"
#include "tensor/lanes.h"

typedef struct {
    int64_t n;
    const real *x, *w, *b, *mean, *rstd, *dy;
    real *y, *mean_out, *rstd_out, *dx, *dw, *db;
    int64_t rows;
    double eps;
    int zero; /* dx starts as garbage */
} ln_job;

QKV_VECTOR_CLONES
static void layernorm_range(void *p, int64_t r0, int64_t r1) {
    const ln_job *j = p;
    const int64_t n = j->n;
    const real *w = j->w, *bias = j->b, eps = (real)j->eps;
    real *mean_out = j->mean_out, *rstd_out = j->rstd_out;
    for (int64_t r = r0; r < r1; r++) {
        const real *x = j->x + r * n;
        real *y = j->y + r * n, m, v;
        QKV_LANE_SUM(m, n, k, x[k]);
        m /= (real)n;
        QKV_LANE_SUM(v, n, k, (x[k] - m) * (x[k] - m));
        v /= (real)n;
        real rs = 1 / sqrt(v + eps);
        if (w && bias)
            for (int64_t k = 0; k < n; k++) y[k] = (x[k] - m) * rs * w[k] + bias[k];
        else
            for (int64_t k = 0; k < n; k++) {
                real h = (x[k] - m) * rs;
                y[k] = (w ? h * w[k] : h) + (bias ? bias[k] : 0);
            }
        mean_out[r] = m;
        rstd_out[r] = rs;
    }
}

void K(layernorm)(int64_t rows, int64_t n, const real *x, const real *w, const real *b, double eps, real *y,
                  real *mean, real *rstd) {
    ln_job j = {.n = n, .x = x, .w = w, .b = b, .y = y, .mean_out = mean, .rstd_out = rstd, .eps = eps};
    qkv_parallel_for(rows, qkv_row_grain(n), layernorm_range, &j);
}

/* dx += rstd (g - mean(g) - xh mean(g xh)), g = dy w, per row */
QKV_VECTOR_CLONES
static void layernorm_dx_range(void *p, int64_t r0, int64_t r1) {
    const ln_job *j = p;
    const int64_t n = j->n;
    const real *w = j->w;
    for (int64_t r = r0; r < r1; r++) {
        const real *x = j->x + r * n, *dy = j->dy + r * n;
        real m = j->mean[r], rs = j->rstd[r], sum_g, sum_gh;
        QKV_LANE_SUM(sum_g, n, k, w ? dy[k] * w[k] : dy[k]);
        QKV_LANE_SUM(sum_gh, n, k, (w ? dy[k] * w[k] : dy[k]) * ((x[k] - m) * rs));
        real mg = sum_g / (real)n, mgh = sum_gh / (real)n;
        real *dx = j->dx + r * n;
        if (j->zero)
            for (int64_t k = 0; k < n; k++) dx[k] = 0;
        for (int64_t k = 0; k < n; k++) {
            real h = (x[k] - m) * rs, g = w ? dy[k] * w[k] : dy[k];
            dx[k] += rs * (g - mg - h * mgh);
        }
    }
}

/* dw[k] += sum_r dy[r,k] xh[r,k]; db[k] += sum_r dy[r,k], for columns [k0, k1) */
QKV_VECTOR_CLONES
static void layernorm_dwdb_range(void *p, int64_t k0, int64_t k1) {
    const ln_job *j = p;
    const int64_t n = j->n, rows = j->rows;
    real *dw = j->dw, *db = j->db;
    for (int64_t r = 0; r < rows; r++) {
        const real *x = j->x + r * n, *dy = j->dy + r * n;
        real m = j->mean[r], rs = j->rstd[r];
        if (dw)
            for (int64_t k = k0; k < k1; k++) dw[k] += dy[k] * ((x[k] - m) * rs);
        if (db)
            for (int64_t k = k0; k < k1; k++) db[k] += dy[k];
    }
}

void K(layernorm_backward)(int64_t rows, int64_t n, const real *x, const real *w, const real *mean,
                           const real *rstd, const real *dy, real *dx, real *dw, real *db, int zero) {
    ln_job j = {.n = n, .x = x, .w = w, .mean = mean, .rstd = rstd, .dy = dy, .dx = dx, .dw = dw, .db = db,
                .rows = rows, .zero = zero};
    if (dx) qkv_parallel_for(rows, qkv_row_grain(n), layernorm_dx_range, &j);
    if (dw || db) qkv_parallel_for(n, 8, layernorm_dwdb_range, &j);
}
