/* Rotary positions (RoPE, Su et al. 2021): each head's dimension pairs rotated by an angle that
 * grows with the position. */
#include "tensor/kernel_prelude.h"
#include "tensor/check.h"

typedef struct {
    int64_t T, nh, hd;
    const double *cs;
    double sign;
    const real *x;
    real *y;
    int assign;
} rope_job;

/* rows [r0, r1) of the (B T) rows */
static void rope_rows(void *p, int64_t r0, int64_t r1) {
    const rope_job *j = p;
    const int64_t half = j->hd / 2, w = j->nh * j->hd;
    for (int64_t r = r0; r < r1; r++) {
        const double *cs = j->cs + (r % j->T) * half * 2; /* position t = r mod T */
        const real *x = j->x + r * w;
        real *y = j->y + r * w;
        for (int64_t h = 0; h < j->nh; h++)
            for (int64_t k = 0; k < half; k++) {
                real c = (real)cs[2 * k], s = (real)(j->sign * cs[2 * k + 1]);
                int64_t a = h * j->hd + 2 * k;
                real u = c * x[a] - s * x[a + 1], v = s * x[a] + c * x[a + 1];
                QKV_PUT(y[a], j->assign, u);
                QKV_PUT(y[a + 1], j->assign, v);
            }
    }
}

/* x, y: (B,T,nh hd), cs: (T, hd/2, 2) the cos and sin of angle t theta_k (qkv_rope builds it):
 * each head's pair (2k, 2k+1) at position t rotated by sign * angle,
 * y[2k] = c x[2k] - s x[2k+1], y[2k+1] = s x[2k] + c x[2k+1] (s = sign sin); assign: y =, else y += */
void K(rope)(int64_t B, int64_t T, int64_t nh, int64_t hd, const double *cs, int sign, const real *x, real *y,
             int assign) {
    QKV_ASSERT(B >= 0 && T >= 1 && nh >= 1 && hd >= 2 && hd % 2 == 0 && cs && x && y && x != y,
               "rope: B >= 0, T, nh >= 1, an even head_dim, out of place");
    rope_job j = {T, nh, hd, cs, sign < 0 ? -1.0 : 1.0, x, y, assign};
    qkv__parallel_for(B * T, qkv_row_grain(nh * hd), rope_rows, &j);
}
