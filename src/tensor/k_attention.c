/* Scaled dot-product attention over heads, fused (the sdp_attention op).
 *
 * Why fused: the composed form (split heads, Q K^T, masked softmax, P V, merge heads) copies
 * Q, K, V and Y between the (B,T,d) and (B,H,T,d/H) layouts, materialises the scores and,
 * in the backward, two (B,H,T,T) gradients that must be zeroed, written and read back. Here
 * the per-head products read Q, K, V and write Y in the (B,T,d) layout directly (strided
 * BLAS calls: the leading dimension is d), the backward keeps dP and dS of one head at a
 * time in a per-thread (T,T) scratch that stays in cache, and with a causal mask the products
 * skip the blocks above the diagonal and the softmax touches only keys j <= i.
 *
 * Each (b,h) pair is computed whole by one thread (in the backward, each key/value head with
 * all the query heads that use it), in the same order whatever the thread count, so results
 * are the same bits for any number of threads. */
#include "tensor/kernel_prelude.h"
#include "tensor/check.h"
#include <math.h>
#include "tensor/fastmath.h"
#include "tensor/lanes.h"
#include "tensor/bf16.h"

#if QKV_KERNEL_F64
#define EXP(v) exp(v)
#else
#define EXP(v) qkv_expf_nonpos_fast(v) /* vectorisable; its argument is never positive (x - max) */
#endif

/* causal products are computed in row blocks of this many queries: block r needs keys
 * [0, r1) only, so for T = 256 the products do 10/16 of the dense work */
#define SDPA_BLOCK 64

/* keys of the query rows [r0, r1) that the products must cover */
static int64_t block_keys(const qkv_sdpa_shape *s, int64_t r1) { return s->causal ? r1 : s->T; }
/* keys row i may see: the causal limit (the mask may block more) */
static int64_t row_keys(const qkv_sdpa_shape *s, int64_t i) { return s->causal ? i + 1 : s->T; }
static int64_t block_rows(const qkv_sdpa_shape *s) { return s->causal ? SDPA_BLOCK : s->T; }

/* the mask row of (b, h, i), or NULL */
static const int32_t *mask_row(const qkv_sdpa_shape *s, int64_t pair, int64_t i, int64_t *stride) {
    if (!s->mask) return NULL;
    *stride = s->bc->sb[3];
    return s->mask + qkv_bcast_row_b(s->bc, pair * s->T + i);
}

/* Causal rows have i + 1 keys: a short row would run mostly in the loops' scalar remainders.
 * The row loops run over n rounded up to a whole vector (keys past n act as blocked: -inf
 * scores, zero weights), which adds only exact zeros to every sum. */
static int64_t padded(int64_t n, int64_t ncols) {
    int64_t nv = (n + QKV_LANES - 1) / QKV_LANES * QKV_LANES;
    return nv < ncols ? nv : ncols;
}

/* one row i, in place: p[0..n) = softmax(blocked ? -inf : scale p - slope |i - j|),
 * p[n..ncols) = 0 (inlined into the rows' loop below, which is the vector-cloned function:
 * one dispatched call per block of rows, not per row) */
static inline __attribute__((always_inline)) void softmax_row(int64_t n, int64_t ncols, real *p, real scale, const int32_t *m, int64_t ms, real slope,
                        int64_t i) {
    real mx, sum;
    int64_t nv = padded(n, ncols);
    if (slope != 0) { /* ALiBi: a distance penalty per head (no parameters, so no gradient) */
        for (int64_t j = 0; j < n; j++) {
            real dist = (real)(j > i ? j - i : i - j);
            p[j] = m && m[j * ms] ? -INFINITY : scale * p[j] - slope * dist;
        }
        scale = 1;
        for (int64_t j = n; j < nv; j++) p[j] = -INFINITY;
        QKV_LANE_MAX(mx, nv, j, p[j]);
    } else if (m || !(scale > 0)) {
        if (m)
            for (int64_t j = 0; j < n; j++) p[j] = m[j * ms] ? -INFINITY : scale * p[j];
        else
            for (int64_t j = 0; j < n; j++) p[j] = scale * p[j];
        scale = 1;
        for (int64_t j = n; j < nv; j++) p[j] = -INFINITY;
        QKV_LANE_MAX(mx, nv, j, p[j]);
    } else { /* rounding is monotonic: max(scale p) = scale max(p), the same bits, one pass fewer */
        for (int64_t j = n; j < nv; j++) p[j] = -INFINITY;
        QKV_LANE_MAX(mx, nv, j, p[j]);
        mx *= scale;
    }
    if (mx == -INFINITY) { /* every key blocked: no mass anywhere, a zero row (not NaN) */
        for (int64_t j = 0; j < ncols; j++) p[j] = 0;
        return;
    }
    QKV_LANE_SUM(sum, nv, j, (p[j] = EXP(scale * p[j] - mx)));
    real inv = 1 / sum;
    for (int64_t j = 0; j < nv; j++) p[j] *= inv;
    for (int64_t j = nv; j < ncols; j++) p[j] = 0;
}

/* one row, in place over dp: dS = scale P (dP - sum(P dP)) on [0, n), 0 on [n, ncols)
 * (P is 0 past n, so the padded loops add and write only zeros there) */
static inline __attribute__((always_inline)) void softmax_backward_row(int64_t n, int64_t ncols, const real *p, real *dp, real scale) {
    real dot;
    int64_t nv = padded(n, ncols);
    QKV_LANE_SUM(dot, nv, j, dp[j] * p[j]);
    for (int64_t j = 0; j < nv; j++) dp[j] = scale * (p[j] * (dp[j] - dot));
    for (int64_t j = nv; j < ncols; j++) dp[j] = 0;
}

typedef struct {
    const qkv_sdpa_shape *s;
    const real *q, *k, *v, *p, *dy;
    real *pw, *y, *dq, *dk, *dv, *scratch;
    int64_t parts;
    int zero;
} sdpa_job;

/* C = op(A) op(B) + beta C, a head's product: in bf16 with scratch when s->bf16 (float only) */
static void product(const qkv_sdpa_shape *s, void *scratch, int ta, int tb, int64_t M, int64_t N, int64_t Kd,
                    const real *A, int64_t lda, const real *B, int64_t ldb, real beta, real *C, int64_t ldc) {
#if !QKV_KERNEL_F64
    if (s->bf16) {
        qkv__bf16_gemm_ld(ta, tb, M, N, Kd, A, lda, B, ldb, beta, C, ldc, scratch);
        return;
    }
#endif
    (void)s, (void)scratch;
    K(gemm_ld)(ta, tb, M, N, Kd, A, lda, B, ldb, beta, C, ldc);
}

/* part p's bf16 scratch */
static void *part_scratch(const qkv_sdpa_shape *s, int64_t part) {
    return s->bf16 ? (char *)s->bf16 + (size_t)part * s->bf16_part : NULL;
}

/* rows (T) x hd of a head's gradient in the (B,T,d) layout = 0 (as a loop: as memset calls,
 * one per row of hd elements, it would cost more than the zeros) */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
static void zero_head(real *g, int64_t T, int64_t hd, int64_t d) {
    for (int64_t t = 0; t < T; t++)
        for (int64_t c = 0; c < hd; c++) g[t * d + c] = 0;
}

/* key heads, and query heads per key head; value heads (vH, default the key heads), their width
 * (vd, default hd) and query heads per value head */
static int64_t kv_heads(const qkv_sdpa_shape *s) { return s->kvH > 0 ? s->kvH : s->H; }
static int64_t group(const qkv_sdpa_shape *s) { return s->H / kv_heads(s); }
static int64_t v_heads(const qkv_sdpa_shape *s) { return s->vH > 0 ? s->vH : kv_heads(s); }
static int64_t v_dim(const qkv_sdpa_shape *s) { return s->vd > 0 ? s->vd : s->hd; }
static int64_t v_group(const qkv_sdpa_shape *s) { return s->H / v_heads(s); }

/* the first element of query head h of batch b (pair = b H + h) in a (B,T,H hd) array */
static int64_t head_at(const qkv_sdpa_shape *s, int64_t pair) {
    int64_t b = pair / s->H, h = pair % s->H;
    return b * s->T * s->H * s->hd + h * s->hd;
}

/* the first element of the key/value head that pair's query head uses, in a (B,T,kvH hd) array */
static int64_t kv_at(const qkv_sdpa_shape *s, int64_t pair) {
    int64_t b = pair / s->H, h = pair % s->H;
    return b * s->T * kv_heads(s) * s->hd + h / group(s) * s->hd;
}

/* the first element of the value head that pair's query head uses, in a (B,T,vH vd) array */
static int64_t v_at(const qkv_sdpa_shape *s, int64_t pair) {
    int64_t b = pair / s->H, h = pair % s->H;
    return b * s->T * v_heads(s) * v_dim(s) + h / v_group(s) * v_dim(s);
}

/* the first element of query head h's output in the (B,T,H vd) array */
static int64_t y_at(const qkv_sdpa_shape *s, int64_t pair) {
    int64_t b = pair / s->H, h = pair % s->H;
    return b * s->T * s->H * v_dim(s) + h * v_dim(s);
}

/* head h's ALiBi slope (0: none) */
static real slope_of(const qkv_sdpa_shape *s, int64_t pair) { return s->slopes ? (real)s->slopes[pair % s->H] : 0; }

/* rows [r0, r1) of pair's (T,T) scores P, in place: the masked, scaled softmax */
QKV_VECTOR_CLONES
static void softmax_rows(const qkv_sdpa_shape *s, int64_t pair, int64_t r0, int64_t r1, real *P, real slope) {
    for (int64_t i = r0; i < r1; i++) {
        int64_t ms = 0;
        const int32_t *m = mask_row(s, pair, i, &ms);
        softmax_row(row_keys(s, i), s->T, P + i * s->T, (real)s->scale, m, ms, slope, i);
    }
}

/* rows [r0, r1) of dP, in place: dS (the first nk columns; the rest are not read) */
QKV_VECTOR_CLONES
static void softmax_backward_rows(const qkv_sdpa_shape *s, int64_t r0, int64_t r1, int64_t nk, const real *P,
                                  real *dP) {
    for (int64_t i = r0; i < r1; i++)
        softmax_backward_row(row_keys(s, i), nk, P + i * s->T, dP + i * s->T, (real)s->scale);
}

static void forward_pairs_in(const sdpa_job *j, int64_t p0, int64_t p1, void *bs) {
    const qkv_sdpa_shape *s = j->s;
    int64_t T = s->T, hd = s->hd, d = s->H * hd, dkv = kv_heads(s) * hd, rb = block_rows(s);
    int64_t vd = v_dim(s), dv = v_heads(s) * vd, dy = s->H * vd;
    for (int64_t pair = p0; pair < p1; pair++) {
        int64_t at = head_at(s, pair), kat = kv_at(s, pair);
        const real *Q = j->q + at, *Kh = j->k + kat, *V = j->v + v_at(s, pair);
        real *P = j->pw + pair * T * T, *Y = j->y + y_at(s, pair), slope = slope_of(s, pair);
        for (int64_t r0 = 0; r0 < T; r0 += rb) {
            int64_t r1 = r0 + rb < T ? r0 + rb : T, nk = block_keys(s, r1);
            /* S[r0:r1, :nk] = Q[r0:r1] K[:nk]^T */
            product(s, bs, 0, 1, r1 - r0, nk, hd, Q + r0 * d, d, Kh, dkv, 0, P + r0 * T, T);
            softmax_rows(s, pair, r0, r1, P, slope);
            /* Y[r0:r1] = P[r0:r1, :nk] V[:nk] */
            product(s, bs, 0, 0, r1 - r0, vd, nk, P + r0 * T, T, V, dv, 0, Y + r0 * dy, dy);
        }
    }
}

static void forward_pairs(void *arg, int64_t p0, int64_t p1) { forward_pairs_in(arg, p0, p1, NULL); }

/* bf16: parts [b, e) of `parts`, each a contiguous share of the pairs and its own scratch */
static void forward_parts(void *arg, int64_t b, int64_t e) {
    const sdpa_job *j = arg;
    int64_t pairs = j->s->B * j->s->H;
    for (int64_t part = b; part < e; part++)
        forward_pairs_in(j, part * pairs / j->parts, (part + 1) * pairs / j->parts, part_scratch(j->s, part));
}

/* 2 M N K of every product a pass makes, for the benchmark's FLOP counter: qk products of
 * width hd (Q K^T, dQ, dK) and v products of width vd (P V, dP, dV) */
static uint64_t pass_flops(const qkv_sdpa_shape *s, int qk_products, int v_products) {
    uint64_t f = 0;
    for (int64_t r0 = 0; r0 < s->T; r0 += block_rows(s)) {
        int64_t r1 = r0 + block_rows(s) < s->T ? r0 + block_rows(s) : s->T;
        f += (uint64_t)(2 * (r1 - r0) * block_keys(s, r1));
    }
    return f * (uint64_t)((qk_products * s->hd + v_products * v_dim(s)) * s->B * s->H);
}

/* q: (B,T,H hd), k: (B,T,kvH hd), v: (B,T,vH vd), y: (B,T,H vd), p: (B,H,T,T): per head h,
 * P = softmax(blocked ? -inf : scale Q_h K_h'^T) (a fully blocked row gives zeros), Y_h = P V_h''
 * (h' = h / (H/kvH), h'' = h / (H/vH)) */
void K(sdpa)(const qkv_sdpa_shape *s, const real *q, const real *k, const real *v, real *p, real *y) {
    QKV_ASSERT(s->B > 0 && s->T > 0 && s->H > 0 && s->hd > 0, "sdpa: B, T, H, hd > 0");
    QKV_ASSERT(s->H % (s->kvH > 0 ? s->kvH : s->H) == 0, "sdpa: H a multiple of the key heads");
    QKV_ASSERT(s->H % (s->vH > 0 ? s->vH : s->kvH > 0 ? s->kvH : s->H) == 0, "sdpa: H a multiple of the value heads");
    QKV_ASSERT(q && k && v && y && (!s->mask || s->bc), "sdpa: operands");
    qkv__gemm_flops += pass_flops(s, 1, 1);
    sdpa_job j = {.s = s, .q = q, .k = k, .v = v, .pw = p, .y = y, .parts = qkv__sdpa_parts(s)};
    if (s->bf16) qkv__parallel_for(j.parts, 1, forward_parts, &j);
    else qkv__parallel_for(s->B * s->H, 1, forward_pairs, &j);
}

/* the query heads of groups [g0, g1) (a group: the query heads b H + c S .. b H + c S + S - 1,
 * S = qkv_sdpa_group_size: whole key groups and whole value groups), in that order: a key or
 * value head's gradients are added to by its query heads one after another, on one thread (no
 * two threads write one head, and the order is fixed) */
static void backward_groups(const sdpa_job *j, int64_t g0, int64_t g1, real *dP, void *bs) {
    const qkv_sdpa_shape *s = j->s;
    int64_t T = s->T, hd = s->hd, d = s->H * hd, dkv = kv_heads(s) * hd, rb = block_rows(s), G = group(s);
    int64_t vd = v_dim(s), dv = v_heads(s) * vd, dy = s->H * vd, vG = v_group(s), S = qkv_sdpa_group_size(s);
    for (int64_t g = g0; g < g1; g++)
        for (int64_t pair = g * S; pair < (g + 1) * S; pair++) {
            int64_t at = head_at(s, pair), kat = kv_at(s, pair), vat = v_at(s, pair);
            const real *Q = j->q + at, *Kh = j->k + kat, *V = j->v + vat, *dY = j->dy + y_at(s, pair);
            const real *P = j->p + pair * T * T;
            /* the first query head of its key (value) group: that head's gradients start here */
            bool first_k = pair % G == 0, first_v = pair % vG == 0;
            if (j->zero & 1) zero_head(j->dq + at, T, hd, d); /* before any product adds to it (q may be k) */
            if (first_k && (j->zero & 2)) zero_head(j->dk + kat, T, hd, dkv);
            if (first_v && (j->zero & 4)) zero_head(j->dv + vat, T, vd, dv);
            for (int64_t r0 = 0; r0 < T; r0 += rb) {
                int64_t r1 = r0 + rb < T ? r0 + rb : T, nk = block_keys(s, r1), m = r1 - r0;
                /* dV[:nk] += P[r0:r1, :nk]^T dY[r0:r1] */
                if (j->dv) product(s, bs, 1, 0, nk, vd, m, P + r0 * T, T, dY + r0 * dy, dy, 1, j->dv + vat, dv);
                if (!j->dq && !j->dk) continue;
                /* dP[r0:r1, :nk] = dY[r0:r1] V[:nk]^T, then dS in place */
                product(s, bs, 0, 1, m, nk, vd, dY + r0 * dy, dy, V, dv, 0, dP + r0 * T, T);
                softmax_backward_rows(s, r0, r1, nk, P, dP);
                /* dQ[r0:r1] += dS[r0:r1, :nk] K[:nk];  dK[:nk] += dS[r0:r1, :nk]^T Q[r0:r1] */
                if (j->dq) product(s, bs, 0, 0, m, hd, nk, dP + r0 * T, T, Kh, dkv, 1, j->dq + at + r0 * d, d);
                if (j->dk) product(s, bs, 1, 0, nk, hd, m, dP + r0 * T, T, Q + r0 * d, d, 1, j->dk + kat, dkv);
            }
        }
}

/* part p of `parts` takes a contiguous share of the key/value groups and scratch (T,T) number p */
static void backward_parts(void *arg, int64_t b, int64_t e) {
    const sdpa_job *j = arg;
    int64_t groups = j->s->B * j->s->H / qkv_sdpa_group_size(j->s), TT = j->s->T * j->s->T;
    for (int64_t part = b; part < e; part++)
        backward_groups(j, part * groups / j->parts, (part + 1) * groups / j->parts, j->scratch + part * TT,
                        part_scratch(j->s, part));
}

/* dv += P^T dY, dq += dS K, dk += dS^T Q, with dS = scale P (dP - rowsum(P dP)), dP = dY V^T;
 * any of dq, dk, dv may be NULL (or the same array); scratch: (parts, T, T), parts >= 1;
 * zero: 1 = dq, 2 = dk, 4 = dv start as garbage (kernels.h) */
void K(sdpa_backward)(const qkv_sdpa_shape *s, const real *q, const real *k, const real *v, const real *p,
                      const real *dy, real *dq, real *dk, real *dv, real *scratch, int64_t parts, int zero) {
    QKV_ASSERT(s->B > 0 && s->T > 0 && s->H > 0 && s->hd > 0, "sdpa_backward: B, T, H, hd > 0");
    QKV_ASSERT(s->H % (s->kvH > 0 ? s->kvH : s->H) == 0, "sdpa_backward: H a multiple of the key heads");
    QKV_ASSERT(q && k && v && p && dy, "sdpa_backward: operands");
    qkv__gemm_flops += pass_flops(s, (dq ? 1 : 0) + (dk ? 1 : 0), (dv ? 1 : 0) + (dq || dk ? 1 : 0));
    sdpa_job j = {.s = s, .q = q, .k = k, .v = v, .p = p, .dy = dy, .dq = dq, .dk = dk, .dv = dv,
                  .scratch = scratch, .parts = parts, .zero = zero};
    qkv__parallel_for(parts, 1, backward_parts, &j);
}
