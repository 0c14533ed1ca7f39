/* Layer normalisation over the last axis (PyTorch: biased variance, eps inside the sqrt).
 * Forward and dx: rows run on qkv's threads. The weight and bias gradients, sums over rows:
 * each fixed block of QKV_LN_BLOCK rows sums its rows in order into its own partial, and the
 * partials are then added in block order, so the result never depends on threads. */
#include "tensor/kernel_prelude.h"
#include "tensor/check.h"
#include "tensor/lanes.h"

typedef struct {
    int64_t n;
    const real *x, *w, *b, *mean, *rstd, *dy;
    real *y, *mean_out, *rstd_out, *dx, *dw, *db;
    int64_t rows;
    double eps;
    int zero;   /* dx starts as garbage */
    real *part; /* backward: partial dw, db per block of rows */
} ln_job;

/* one row: y = (x - m) rs w + b, m and rs returned (inlined: each caller's loop vectorises) */
static inline __attribute__((always_inline)) void ln_row(int64_t n, const real *x, const real *w, const real *bias,
                                                         real eps, real *y, real *m_out, real *rs_out) {
    real m, v;
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
    *m_out = m;
    *rs_out = rs;
}

QKV_VECTOR_CLONES
static void layernorm_range(void *p, int64_t r0, int64_t r1) {
    const ln_job *j = p;
    const int64_t n = j->n;
    for (int64_t r = r0; r < r1; r++)
        ln_row(n, j->x + r * n, j->w, j->b, (real)j->eps, j->y + r * n, &j->mean_out[r], &j->rstd_out[r]);
}

/* x, y: (rows, n); w, b: (n) or NULL: y = (x - mean) * rstd * w + b, rstd = 1/sqrt(var + eps),
 * biased variance; mean, rstd: (rows) saved for backward */
void K(layernorm)(int64_t rows, int64_t n, const real *x, const real *w, const real *b, double eps, real *y,
                  real *mean, real *rstd) {
    QKV_ASSERT(rows >= 0 && n >= 1 && x && y && mean && rstd, "layernorm: rows >= 0, n >= 1, mean and rstd saved");
    ln_job j = {.n = n, .x = x, .w = w, .b = b, .y = y, .mean_out = mean, .rstd_out = rstd, .eps = eps};
    qkv__parallel_for(rows, qkv_row_grain(n), layernorm_range, &j);
}

/* one row: dx += rstd (g - mean(g) - xh mean(g xh)), g = dy w */
static inline void dx_row(int64_t n, const real *x, const real *dy, const real *w, real m, real rs, real *dx,
                          int zero) {
    real sum_g, sum_gh;
    QKV_LANE_SUM(sum_g, n, k, w ? dy[k] * w[k] : dy[k]);
    QKV_LANE_SUM(sum_gh, n, k, (w ? dy[k] * w[k] : dy[k]) * ((x[k] - m) * rs));
    real mg = sum_g / (real)n, mgh = sum_gh / (real)n;
    if (zero)
        for (int64_t k = 0; k < n; k++) dx[k] = 0;
    for (int64_t k = 0; k < n; k++) {
        real h = (x[k] - m) * rs, g = w ? dy[k] * w[k] : dy[k];
        dx[k] += rs * (g - mg - h * mgh);
    }
}

/* The weight and bias gradients are sums over rows. Each block of QKV_LN_BLOCK rows sums its
 * rows (in order) into its own partial, while its rows are in cache for dx; the partials are
 * then added in block order. Blocks are fixed, so the result never depends on threads. */

/* row blocks [b0, b1): dx rows, and the blocks' partial dw, db */
QKV_VECTOR_CLONES
static void backward_blocks(void *p, int64_t b0, int64_t b1) {
    const ln_job *j = p;
    const int64_t n = j->n;
    for (int64_t blk = b0; blk < b1; blk++) {
        int64_t r0 = blk * QKV_LN_BLOCK, r1 = r0 + QKV_LN_BLOCK < j->rows ? r0 + QKV_LN_BLOCK : j->rows;
        real *pw = j->part ? j->part + blk * 2 * n : NULL, *pb = pw ? pw + n : NULL; /* NULL: no dw, db */
        if (pw)
            for (int64_t k = 0; k < 2 * n; k++) pw[k] = 0;
        for (int64_t r = r0; r < r1; r++) {
            const real *x = j->x + r * n, *dy = j->dy + r * n;
            real m = j->mean[r], rs = j->rstd[r];
            if (j->dx) dx_row(n, x, dy, j->w, m, rs, j->dx + r * n, j->zero);
            if (j->dw)
                for (int64_t k = 0; k < n; k++) pw[k] += dy[k] * ((x[k] - m) * rs);
            if (j->db)
                for (int64_t k = 0; k < n; k++) pb[k] += dy[k];
        }
    }
}

/* columns [k0, k1): dw += the blocks' partials, db likewise, in block order */
QKV_VECTOR_CLONES
static void add_partials(void *p, int64_t k0, int64_t k1) {
    const ln_job *j = p;
    const int64_t n = j->n, blocks = (j->rows + QKV_LN_BLOCK - 1) / QKV_LN_BLOCK;
    for (int64_t blk = 0; blk < blocks; blk++) {
        const real *pw = j->part + blk * 2 * n, *pb = pw + n;
        if (j->dw)
            for (int64_t k = k0; k < k1; k++) j->dw[k] += pw[k];
        if (j->db)
            for (int64_t k = k0; k < k1; k++) j->db[k] += pb[k];
    }
}

/* dx += rstd (dxh - mean(dxh) - xh mean(dxh xh)), dxh = dy w; dw += sum dy xh; db += sum dy
 * (dx, dw, db may each be NULL; dw may be db); zero: dx starts as garbage (kernels.h);
 * scratch: qkv_layernorm_backward_scratch(rows, n) elements for the row sums' partials (NULL
 * when dw and db are both NULL) */
void K(layernorm_backward)(int64_t rows, int64_t n, const real *x, const real *w, const real *mean,
                           const real *rstd, const real *dy, real *dx, real *dw, real *db, int zero,
                           real *scratch) {
    QKV_ASSERT(rows >= 0 && n >= 1 && x && mean && rstd && dy, "layernorm_backward: rows >= 0, n >= 1");
    QKV_ASSERT(!(dw || db) || scratch, "layernorm_backward: scratch for the row sums");
    ln_job j = {.n = n, .x = x, .w = w, .mean = mean, .rstd = rstd, .dy = dy, .dx = dx, .dw = dw, .db = db,
                .rows = rows, .zero = zero, .part = scratch};
    int64_t blocks = (rows + QKV_LN_BLOCK - 1) / QKV_LN_BLOCK, per = QKV_LN_BLOCK * n;
    qkv__parallel_for(blocks, per >= QKV_GRAIN ? 1 : QKV_GRAIN / per, backward_blocks, &j);
    if (dw || db) qkv__parallel_for(n, 64, add_partials, &j);
}

/* ---- the residual add and the layer norm after it, fused ------------------------------------ */

typedef struct {
    int64_t n, rows, a_rows;
    const real *x, *a, *w, *b, *mean, *rstd, *dy, *dh;
    const real *hs; /* backward: the saved sum h */
    real *h, *y, *mean_out, *rstd_out, *dx, *da, *dw, *db;
    real *s;    /* backward, broadcast a: the rows of s, summed into da afterwards */
    real *part; /* backward: partial dw, db per block of rows */
    double eps;
    int zero_x, zero_a;
} add_ln_job;

QKV_VECTOR_CLONES
static void add_layernorm_range(void *p, int64_t r0, int64_t r1) {
    const add_ln_job *j = p;
    const int64_t n = j->n;
    for (int64_t r = r0; r < r1; r++) {
        const real *x = j->x + r * n, *a = j->a + (r % j->a_rows) * n;
        real *h = j->h + r * n;
        for (int64_t k = 0; k < n; k++) h[k] = x[k] + a[k];
        ln_row(n, h, j->w, j->b, (real)j->eps, j->y + r * n, &j->mean_out[r], &j->rstd_out[r]);
    }
}

/* The residual add and the layer norm after it in one pass: h = x + a, y = layernorm(h) as above.
 * x, h, y: (rows, n); a: (a_rows, n), row r of x takes row r % a_rows of a (a_rows divides rows:
 * the same shape, or broadcast over the leading axes); mean, rstd: (rows) saved for backward */
void K(add_layernorm)(int64_t rows, int64_t n, const real *x, const real *a, int64_t a_rows, const real *w,
                      const real *b, double eps, real *h, real *y, real *mean, real *rstd) {
    QKV_ASSERT(rows >= 0 && n >= 1 && a_rows >= 1 && rows % a_rows == 0 && x && a && h && y && mean && rstd,
               "add_layernorm: rows >= 0, n >= 1, a_rows dividing rows, h, mean and rstd saved");
    add_ln_job j = {.n = n, .rows = rows, .a_rows = a_rows, .x = x, .a = a, .w = w, .b = b, .h = h, .y = y,
                    .mean_out = mean, .rstd_out = rstd, .eps = eps};
    qkv__parallel_for(rows, qkv_row_grain(n), add_layernorm_range, &j);
}

/* one row of s = dh + layer norm's dx for dy (dh may be NULL: 0), assigned to p: dx_row's
 * arithmetic on a dx holding dh (or 0), so the composed add and layer norm give the same bits */
static inline __attribute__((always_inline)) void add_ln_row(int64_t n, const real *h, const real *dy,
                                                             const real *dh, const real *w, real m, real rs,
                                                             real *p) {
    real sum_g, sum_gh;
    QKV_LANE_SUM(sum_g, n, k, w ? dy[k] * w[k] : dy[k]);
    QKV_LANE_SUM(sum_gh, n, k, (w ? dy[k] * w[k] : dy[k]) * ((h[k] - m) * rs));
    real mg = sum_g / (real)n, mgh = sum_gh / (real)n;
    for (int64_t k = 0; k < n; k++) {
        real hh = (h[k] - m) * rs, g = w ? dy[k] * w[k] : dy[k];
        p[k] = (dh ? dh[k] : 0) + rs * (g - mg - hh * mgh);
    }
}

/* row blocks [b0, b1): s into dx and da (or into the rows of s, for a broadcast a), and the
 * blocks' partial dw, db. s is assigned to one new gradient (or to s's row), then copied or added
 * from there to the others: each loop has one destination, so each vectorises */
QKV_VECTOR_CLONES
static void add_backward_blocks(void *p, int64_t b0, int64_t b1) {
    const add_ln_job *j = p;
    const int64_t n = j->n;
    const int bcast = j->a_rows < j->rows, zx = j->zero_x, za = j->zero_a;
    for (int64_t blk = b0; blk < b1; blk++) {
        int64_t r0 = blk * QKV_LN_BLOCK, r1 = r0 + QKV_LN_BLOCK < j->rows ? r0 + QKV_LN_BLOCK : j->rows;
        real *pw = j->part ? j->part + blk * 2 * n : NULL, *pb = pw ? pw + n : NULL; /* NULL: no dw, db */
        if (pw)
            for (int64_t k = 0; k < 2 * n; k++) pw[k] = 0;
        for (int64_t r = r0; r < r1; r++) {
            const real *h = j->hs + r * n, *dy = j->dy ? j->dy + r * n : NULL, *dh = j->dh ? j->dh + r * n : NULL;
            real m = j->mean[r], rs = j->rstd[r];
            real *dx = j->dx ? j->dx + r * n : NULL, *s = j->s ? j->s + r * n : NULL;
            real *da = j->da && !bcast ? j->da + r * n : NULL;
            /* where s is assigned first: a new gradient, or s's own row */
            real *first = dx && zx ? dx : da && za ? da : s;
            if (first) {
                if (dy) add_ln_row(n, h, dy, dh, j->w, m, rs, first);
                else
                    for (int64_t k = 0; k < n; k++) first[k] = dh[k];
                if (dx && dx != first) /* added to (a new dx was first) */
                    for (int64_t k = 0; k < n; k++) dx[k] += first[k];
                if (da && da != first) { /* da may be dx: then added to */
                    if (za && da != dx)
                        for (int64_t k = 0; k < n; k++) da[k] = first[k];
                    else
                        for (int64_t k = 0; k < n; k++) da[k] += first[k];
                }
                if (s && s != first)
                    for (int64_t k = 0; k < n; k++) s[k] = first[k];
            } else { /* both gradients added to: s element by element */
                real sum_g = 0, sum_gh = 0, mg = 0, mgh = 0;
                const real *w = j->w;
                if (dy) {
                    QKV_LANE_SUM(sum_g, n, k, w ? dy[k] * w[k] : dy[k]);
                    QKV_LANE_SUM(sum_gh, n, k, (w ? dy[k] * w[k] : dy[k]) * ((h[k] - m) * rs));
                    mg = sum_g / (real)n, mgh = sum_gh / (real)n;
                }
                for (int64_t k = 0; k < n; k++) {
                    real v = dh ? dh[k] : 0;
                    if (dy) {
                        real hh = (h[k] - m) * rs, g = w ? dy[k] * w[k] : dy[k];
                        v = v + rs * (g - mg - hh * mgh);
                    }
                    if (dx) dx[k] += v;
                    if (da) da[k] += v;
                }
            }
            if (dy && pw)
                for (int64_t k = 0; k < n; k++) pw[k] += dy[k] * ((h[k] - m) * rs);
            if (dy && pb)
                for (int64_t k = 0; k < n; k++) pb[k] += dy[k];
        }
    }
}

/* columns [k0, k1) of a broadcast a's gradient: da[r % a_rows] += s[r], rows in order */
QKV_VECTOR_CLONES
static void add_bcast_columns(void *p, int64_t k0, int64_t k1) {
    const add_ln_job *j = p;
    const int64_t n = j->n;
    for (int64_t r = 0; r < j->rows; r++) {
        const real *s = j->s + r * n;
        real *da = j->da + (r % j->a_rows) * n;
        for (int64_t k = k0; k < k1; k++) da[k] += s[k];
    }
}

/* Its backward: s = dh + (layer norm's dx for dy), each row at once; dx (+)= s, da (+)= s (row r
 * into row r % a_rows; a broadcast a's rows are summed in the order of r), dw, db as in
 * layernorm_backward. dy or dh may be NULL (no gradient reached y or h; not both); dx, da, dw, db
 * may be NULL, and da may be dx (then dx is written first); zero_x, zero_a: dx, da start as
 * garbage (da only when a_rows = rows). scratch: qkv_add_layernorm_backward_scratch elements. */
void K(add_layernorm_backward)(int64_t rows, int64_t n, const real *h, const real *w, const real *mean,
                               const real *rstd, const real *dy, const real *dh, real *dx, int zero_x, real *da,
                               int zero_a, int64_t a_rows, real *dw, real *db, real *scratch) {
    QKV_ASSERT(rows >= 0 && n >= 1 && a_rows >= 1 && rows % a_rows == 0 && h && mean && rstd && (dy || dh),
               "add_layernorm_backward: rows >= 0, n >= 1, a_rows dividing rows, dy or dh");
    int partials = dy && (dw || db), bcast = da && a_rows < rows;
    QKV_ASSERT(!(partials || bcast) || scratch, "add_layernorm_backward: scratch for the row sums");
    QKV_ASSERT(!(bcast && zero_a), "add_layernorm_backward: a broadcast da is added to");
    add_ln_job j = {.n = n, .rows = rows, .a_rows = a_rows, .w = w, .mean = mean, .rstd = rstd, .dy = dy, .dh = dh,
                    .hs = h, .dx = dx, .da = da, .dw = dy ? dw : NULL, .db = dy ? db : NULL, .zero_x = zero_x,
                    .zero_a = zero_a, .part = partials ? scratch : NULL,
                    .s = bcast ? scratch + (partials ? qkv_layernorm_backward_scratch(rows, n) : 0) : NULL};
    int64_t blocks = (rows + QKV_LN_BLOCK - 1) / QKV_LN_BLOCK, per = QKV_LN_BLOCK * n;
    qkv__parallel_for(blocks, per >= QKV_GRAIN ? 1 : QKV_GRAIN / per, add_backward_blocks, &j);
    if (bcast) qkv__parallel_for(n, 64, add_bcast_columns, &j);
    if (partials) { /* layer norm's own sum of the partials, in block order */
        ln_job lj = {.n = n, .rows = rows, .dw = j.dw, .db = j.db, .part = j.part};
        qkv__parallel_for(n, 64, add_partials, &lj);
    }
}
