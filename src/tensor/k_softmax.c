/* Softmax and log-softmax over the last axis, numerically stable (max subtracted).
 * Rows are independent: ranges of rows run on qkv's threads. */
#include "tensor/kernel_prelude.h"
#include "tensor/check.h"
#include <math.h>
#include "tensor/fastmath.h"
#include "tensor/lanes.h"

#if QKV_KERNEL_F64
#define EXP(v) exp(v)
#else
#define EXP(v) qkv_expf_fast(v) /* vectorisable */
#endif

static real row_max(int64_t n, const real *x) {
    real m;
    QKV_LANE_MAX(m, n, j, x[j]);
    return m;
}

/* one row: y = softmax(x); x may equal y */
QKV_VECTOR_CLONES
static void softmax_row(int64_t n, const real *x, real *y) {
    real m = row_max(n, x);
    if (m == -INFINITY) { /* fully masked row: no mass anywhere, output zeros (not NaN) */
        for (int64_t j = 0; j < n; j++) y[j] = 0;
        return;
    }
    real s;
    for (int64_t j = 0; j < n; j++) y[j] = EXP(x[j] - m);
    QKV_LANE_SUM(s, n, j, y[j]);
    real inv = 1 / s;
    for (int64_t j = 0; j < n; j++) y[j] *= inv;
}

typedef struct {
    int64_t n;
    const real *x, *y, *dy;
    real *out;
    const qkv_bcast *bc;
    const int32_t *mask;
    real scale, fill;
} softmax_job;

static void softmax_range(void *p, int64_t b, int64_t e) {
    softmax_job *j = p;
    for (int64_t r = b; r < e; r++) softmax_row(j->n, j->x + r * j->n, j->out + r * j->n);
}

/* x, y: (rows, n): y = exp(x - max) / sum exp(x - max); a row of all -inf gives zeros */
void K(softmax)(int64_t rows, int64_t n, const real *x, real *y) {
    QKV_ASSERT(rows >= 0 && n >= 1 && x && y, "softmax: rows >= 0, n >= 1");
    softmax_job j = {.n = n, .x = x, .out = y};
    qkv__parallel_for(rows, qkv_row_grain(n), softmax_range, &j);
}

static void masked_softmax_range(void *p, int64_t b, int64_t e) {
    softmax_job *j = p;
    const qkv_bcast *bc = j->bc;
    int64_t n = j->n;
    for (int64_t r = b; r < e; r++) {
        const real *xr = j->x + r * n;
        real *yr = j->out + r * n;
        if (j->mask) { /* the mask row for x's row r */
            const int32_t *m = j->mask + qkv_bcast_row_b(bc, r);
            int64_t s3 = bc->sb[3];
            for (int64_t k = 0; k < n; k++) yr[k] = m[k * s3] ? j->fill : j->scale * xr[k];
        } else {
            for (int64_t k = 0; k < n; k++) yr[k] = j->scale * xr[k];
        }
        softmax_row(n, yr, yr); /* in place: reads a value before writing it */
    }
}

/* x, y: (rows, n), mask (int32) broadcast over x by bc (a = x, b = mask), or NULL:
 * y = softmax over each row of (mask != 0 ? fill : scale x); an all -inf row gives zeros */
void K(masked_softmax)(int64_t rows, int64_t n, const real *x, const qkv_bcast *bc,
                       const int32_t *mask, double scale, double fill, real *y) {
    QKV_ASSERT(rows >= 0 && n >= 1 && x && y && (!mask || bc), "masked_softmax: rows >= 0, n >= 1, a mask with its broadcast");
    softmax_job j = {.n = n, .x = x, .out = y, .bc = bc, .mask = mask, .scale = (real)scale, .fill = (real)fill};
    qkv__parallel_for(rows, qkv_row_grain(n), masked_softmax_range, &j);
}

QKV_VECTOR_CLONES
static void softmax_backward_row(int64_t n, const real *y, const real *dy, real sc, real *dx) {
    real dot;
    QKV_LANE_SUM(dot, n, j, dy[j] * y[j]);
    if (sc == 1)
        for (int64_t j = 0; j < n; j++) dx[j] += y[j] * (dy[j] - dot);
    else
        for (int64_t j = 0; j < n; j++) dx[j] += sc * (y[j] * (dy[j] - dot));
}

static void softmax_backward_range(void *p, int64_t b, int64_t e) {
    softmax_job *j = p;
    for (int64_t r = b; r < e; r++)
        softmax_backward_row(j->n, j->y + r * j->n, j->dy + r * j->n, j->scale, j->out + r * j->n);
}

/* dx += scale y (dy - sum(dy y))  (scale: for the fused masked softmax; 1 otherwise) */
void K(softmax_backward)(int64_t rows, int64_t n, const real *y, const real *dy, double scale, real *dx) {
    QKV_ASSERT(rows >= 0 && n >= 1 && y && dy && dx, "softmax_backward: rows >= 0, n >= 1");
    softmax_job j = {.n = n, .y = y, .dy = dy, .out = dx, .scale = (real)scale};
    qkv__parallel_for(rows, qkv_row_grain(n), softmax_backward_range, &j);
}

static void log_softmax_range(void *p, int64_t b, int64_t e) {
    softmax_job *j = p;
    int64_t n = j->n;
    for (int64_t r = b; r < e; r++) {
        const real *x = j->x + r * n;
        real *y = j->out + r * n;
        real m = row_max(n, x), s;
        QKV_LANE_SUM(s, n, k, EXP(x[k] - m));
        real ls = log(s); /* (x - m) - log s: never form m + log s, which rounds at large m */
        for (int64_t k = 0; k < n; k++) y[k] = (x[k] - m) - ls;
    }
}

/* y = x - max - log sum exp(x - max) */
void K(log_softmax)(int64_t rows, int64_t n, const real *x, real *y) {
    QKV_ASSERT(rows >= 0 && n >= 1 && x && y, "log_softmax: rows >= 0, n >= 1");
    softmax_job j = {.n = n, .x = x, .out = y};
    qkv__parallel_for(rows, qkv_row_grain(n), log_softmax_range, &j);
}

static void log_softmax_backward_range(void *p, int64_t b, int64_t e) {
    softmax_job *j = p;
    int64_t n = j->n;
    for (int64_t r = b; r < e; r++) {
        const real *y = j->y + r * n, *dy = j->dy + r * n;
        real *dx = j->out + r * n, s;
        QKV_LANE_SUM(s, n, k, dy[k]);
        for (int64_t k = 0; k < n; k++) dx[k] += dy[k] - exp(y[k]) * s;
    }
}

/* dx += dy - exp(y) * sum(dy) */
void K(log_softmax_backward)(int64_t rows, int64_t n, const real *y, const real *dy, real *dx) {
    QKV_ASSERT(rows >= 0 && n >= 1 && y && dy && dx, "log_softmax_backward: rows >= 0, n >= 1");
    softmax_job j = {.n = n, .y = y, .dy = dy, .out = dx};
    qkv__parallel_for(rows, qkv_row_grain(n), log_softmax_backward_range, &j);
}
