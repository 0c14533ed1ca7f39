/* Exclusive self attention (Zhai 2026): each head's output without its component along the
 * token's own value. */
#include "tensor/kernel_prelude.h"
#include "tensor/check.h"

/* F.normalize's floor on a value's length: a zero value leaves the output as it is */
#define EXCL_EPS 1e-12

typedef struct {
    int64_t H, kvH, hd;
    const real *y, *v, *dz;
    real *z, *dy, *dv;
    int assign_y, assign_v;
} excl_job;

/* 1 / max(|v|, eps) of one value head, in double */
static double inv_len(const real *v, int64_t hd, int *floored) {
    double n2 = 0;
    for (int64_t k = 0; k < hd; k++) n2 += (double)v[k] * (double)v[k];
    double len = sqrt(n2);
    *floored = len < EXCL_EPS;
    return 1.0 / (*floored ? EXCL_EPS : len);
}

/* rows [r0, r1) of the (B T) rows: z = y - (y . u) u, u = v / max(|v|, eps) */
static void excl_rows(void *p, int64_t r0, int64_t r1) {
    const excl_job *j = p;
    const int64_t g = j->H / j->kvH, hd = j->hd;
    for (int64_t r = r0; r < r1; r++)
        for (int64_t h = 0; h < j->H; h++) {
            const real *y = j->y + (r * j->H + h) * hd, *v = j->v + (r * j->kvH + h / g) * hd;
            real *z = j->z + (r * j->H + h) * hd;
            int floored;
            double il = inv_len(v, hd, &floored), s = 0;
            for (int64_t k = 0; k < hd; k++) s += (double)y[k] * (double)v[k];
            s *= il * il; /* (y . u) / |v| */
            for (int64_t k = 0; k < hd; k++) z[k] = (real)((double)y[k] - s * (double)v[k]);
        }
}

/* y: (rows, H hd), v: (rows, kvH hd) -> z: (rows, H hd); head h uses value head h / (H / kvH):
 * z = y - (y . u) u, u = v / max(|v|, 1e-12) (exclusive self attention) */
void K(exclusive)(int64_t rows, int64_t H, int64_t kvH, int64_t hd, const real *y, const real *v, real *z) {
    QKV_ASSERT(rows >= 0 && H >= 1 && kvH >= 1 && H % kvH == 0 && hd >= 1 && y && v && z && z != y,
               "exclusive: rows >= 0, kv heads dividing heads, out of place");
    excl_job j = {H, kvH, hd, y, v, NULL, z, NULL, NULL, 1, 1};
    qkv__parallel_for(rows, qkv_row_grain(H * hd), excl_rows, &j);
}

/* rows [r0, r1): with a = dz . u and s = y . u,
 * dy = dz - a u; du = -(a y + s dz); dv = (du - (du . u) u) / |v| (or du / eps when floored) */
static void excl_back_rows(void *p, int64_t r0, int64_t r1) {
    const excl_job *j = p;
    const int64_t g = j->H / j->kvH, hd = j->hd;
    for (int64_t r = r0; r < r1; r++)
        for (int64_t kh = 0; kh < j->kvH; kh++) {
            const real *v = j->v + (r * j->kvH + kh) * hd;
            int floored;
            double il = inv_len(v, hd, &floored);
            for (int64_t h = kh * g; h < (kh + 1) * g; h++) { /* the query heads this value head serves */
                const real *y = j->y + (r * j->H + h) * hd, *dz = j->dz + (r * j->H + h) * hd;
                double a = 0, s = 0, du_u = 0;
                for (int64_t k = 0; k < hd; k++) {
                    a += (double)dz[k] * (double)v[k] * il;
                    s += (double)y[k] * (double)v[k] * il;
                }
                if (j->dy) {
                    real *dy = j->dy + (r * j->H + h) * hd;
                    for (int64_t k = 0; k < hd; k++) QKV_PUT(dy[k], j->assign_y, (real)((double)dz[k] - a * (double)v[k] * il));
                }
                if (!j->dv) continue;
                real *dv = j->dv + (r * j->kvH + kh) * hd;
                for (int64_t k = 0; k < hd; k++) du_u += -(a * (double)y[k] + s * (double)dz[k]) * (double)v[k] * il;
                int assign = j->assign_v && h == kh * g; /* the first of the group assigns, the rest add */
                for (int64_t k = 0; k < hd; k++) {
                    double du = -(a * (double)y[k] + s * (double)dz[k]);
                    double d = floored ? du * il : (du - du_u * (double)v[k] * il) * il;
                    QKV_PUT(dv[k], assign, (real)d);
                }
            }
        }
}

/* its backward: dy (+)= dz - (dz . u) u, dv (+)= the value's share (either may be NULL);
 * assign_*: = instead of += */
void K(exclusive_backward)(int64_t rows, int64_t H, int64_t kvH, int64_t hd, const real *y, const real *v,
                           const real *dz, real *dy, int assign_y, real *dv, int assign_v) {
    QKV_ASSERT(rows >= 0 && H >= 1 && kvH >= 1 && H % kvH == 0 && hd >= 1 && y && v && dz && (dy || dv) &&
                   dy != dv,
               "exclusive_backward: rows >= 0, kv heads dividing heads, distinct gradients");
    excl_job j = {H, kvH, hd, y, v, dz, NULL, dy, dv, assign_y, assign_v};
    qkv__parallel_for(rows, qkv_row_grain(H * hd), excl_back_rows, &j);
}
