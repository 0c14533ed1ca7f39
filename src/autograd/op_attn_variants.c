/* Differential and talking-heads attention, composed from recorded ops: neither has a record
 * of its own, so their gradients are those ops' rules, each checked against finite differences
 * (tests/test_grad_ops.c). Differential attention's two maps are one fused sdp_attention over
 * its 2H half-heads, each reading its head's whole value (qkv__sdp_attention_v): P1 V - lambda
 * P2 V is formed on the (B,T,H,hd) outputs, not on the (B,H,T,T) maps (the composed maps remain
 * as the tests' reference: qkv__diff_attention_composed). Talking heads mixes the maps across heads between the products,
 * so it stays composed: docs/performance.md, "Attention options and their cost". */
#include "autograd/ops.h"
#include "autograd/tape.h"

#include <math.h>

/* (B,T,n w) -> (B,n,T,w) */
static qkv_tensor *heads_of(qkv_ctx *ctx, qkv_tensor *x, int64_t n, int64_t w) {
    if (!x) return NULL;
    int64_t s[4] = {x->shape[0], x->shape[1], n, w};
    return qkv_transpose(ctx, qkv_reshape(ctx, x, 4, s), 1, 2);
}

/* (B,n,T,w) -> (B,T,n w) */
static qkv_tensor *merge_heads(qkv_ctx *ctx, qkv_tensor *y) {
    if (!y) return NULL;
    int64_t s[3] = {y->shape[0], y->shape[2], y->shape[1] * y->shape[3]};
    return qkv_reshape(ctx, qkv_transpose(ctx, y, 1, 2), 3, s);
}

/* (B,kvh,T,w) -> (B,H,T,w), query head h taking key/value head h / (H / kvh): x + 0 broadcast over
 * each group (two ops whatever the head count) */
static qkv_tensor *repeat_heads(qkv_ctx *ctx, qkv_tensor *x, int64_t H) {
    if (!x || x->shape[1] == H) return x;
    int64_t B = x->shape[0], kvh = x->shape[1], T = x->shape[2], w = x->shape[3];
    int64_t sx[4] = {B, kvh, 1, T * w}, sz[4] = {1, 1, H / kvh, 1}, sy[4] = {B, H, T, w};
    qkv_tensor *zero = qkv_ctx_tensor(ctx, x->dtype, 4, sz); /* zeros, no gradient */
    if (!zero) return NULL;
    return qkv_reshape(ctx, qkv_add(ctx, qkv_reshape(ctx, x, 4, sx), zero), 4, sy);
}

/* blocked = (causal && j > i) || mask, as an I32 array the masked softmax broadcasts over
 * (B,H,T,T) (in the arena; NULL when nothing is blocked). mask: NULL, or I32 (...,T,T). */
static const qkv_tensor *blocked_of(qkv_ctx *ctx, const qkv_tensor *mask, bool causal, int64_t T, bool *ok) {
    *ok = true;
    if (!causal) return mask;
    if (mask && (mask->ndim < 2 || mask->shape[mask->ndim - 1] != T || mask->shape[mask->ndim - 2] != T)) {
        qkv_ctx_fail(ctx, "attention: a mask with causal needs (...,%lld,%lld)", (long long)T, (long long)T);
        return *ok = false, NULL;
    }
    int64_t s2[2] = {T, T};
    qkv_tensor *b = qkv_ctx_tensor(ctx, QKV_I32, mask ? mask->ndim : 2, mask ? mask->shape : s2);
    if (!b) return *ok = false, NULL;
    int32_t *d = b->data;
    const int32_t *m = mask ? mask->data : NULL;
    for (int64_t e = 0; e < b->numel && !ctx->counting; e++) {
        int64_t i = e / T % T, j = e % T;
        d[e] = j > i || (m && m[e]);
    }
    return b;
}

/* o (B,T,H,hd) -> (1 - lambda_init) RMSNorm(o) w per head and position, as (B,T,H hd) */
static qkv_tensor *diff_out(qkv_ctx *ctx, qkv_tensor *o, int ax, qkv_tensor *norm_w, double eps, double lambda_init) {
    qkv_tensor *rms = qkv_sqrt(ctx, qkv_add_scalar(ctx, qkv_mean(ctx, qkv_mul(ctx, o, o), ax, true), eps));
    qkv_tensor *n = qkv_div(ctx, o, rms);
    if (norm_w) n = qkv_mul(ctx, n, norm_w);
    return qkv_scale(ctx, n, 1 - lambda_init);
}

/* the fused form: Y (B,T,2H hd) = per half-head c of head h, P_{2h+c} V_h; O_h = Y_{2h} - lambda Y_{2h+1}
 * (the same as (P_{2h} - lambda P_{2h+1}) V_h, up to rounding) */
static qkv_tensor *diff_fused(qkv_ctx *ctx, qkv_tensor *q, qkv_tensor *k, qkv_tensor *v, int heads,
                              const qkv_tensor *mask, bool causal, double scale, qkv_tensor *lambda,
                              double lambda_init, qkv_tensor *norm_w, double eps, qkv_tensor **probs) {
    int64_t B = q->shape[0], T = q->shape[1], H = heads, hd = q->shape[2] / H;
    qkv_tensor *p = NULL;
    qkv_tensor *y = qkv__sdp_attention_v(ctx, q, k, v, 2 * heads, 2 * heads, heads, mask, causal, scale, NULL,
                                         probs ? &p : NULL);
    int64_t sy[4] = {B * T, H, 2, hd}, s4[4] = {B, T, H, hd}, s3[3] = {B, T, H * hd};
    qkv_tensor *y4 = qkv_reshape(ctx, y, 4, sy); /* (B T, H, 2, hd): [., h, c, .] is half-head 2h + c's */
    qkv_tensor *o = qkv_sub(ctx, qkv_slice(ctx, y4, 2, 0, 1), qkv_mul(ctx, qkv_slice(ctx, y4, 2, 1, 1), lambda));
    qkv_tensor *out = qkv_reshape(ctx, diff_out(ctx, qkv_reshape(ctx, o, 4, s4), 3, norm_w, eps, lambda_init), 3, s3);
    if (probs && p && out) { /* the maps A = P1 - lambda P2 (B,H,T,T), for whoever looks: not in the graph */
        bool old = qkv_ctx_set_grad_enabled(ctx, false);
        int64_t sp[4] = {B, H, 2, T * T}, sa[4] = {B, H, T, T};
        qkv_tensor *p4 = qkv_reshape(ctx, p, 4, sp);
        *probs = qkv_reshape(ctx, qkv_sub(ctx, qkv_slice(ctx, p4, 2, 0, 1), qkv_mul(ctx, qkv_slice(ctx, p4, 2, 1, 1),
                                                                                 lambda)), 4, sa);
        qkv_ctx_set_grad_enabled(ctx, old);
        if (!*probs) return NULL;
    }
    return out;
}

static bool diff_shapes_ok(qkv_ctx *ctx, const qkv_tensor *q, const qkv_tensor *k, const qkv_tensor *v, int heads) {
    if (q->ndim != 3 || k->ndim != 3 || v->ndim != 3 || heads < 1 || q->shape[2] % (2 * heads) ||
        k->shape[2] != q->shape[2] || v->shape[2] != q->shape[2]) {
        qkv_ctx_fail(ctx, "diff_attention: q, k, v must be (B,T,d) with d a multiple of 2 x %d heads", heads);
        return false;
    }
    return true;
}

qkv_tensor *qkv_diff_attention(qkv_ctx *ctx, qkv_tensor *q, qkv_tensor *k, qkv_tensor *v, int heads,
                               const qkv_tensor *mask, bool causal, double scale, qkv_tensor *lambda,
                               double lambda_init, qkv_tensor *norm_w, double eps, qkv_tensor **probs) {
    if (probs) *probs = NULL;
    if (!q || !k || !v || !lambda || !diff_shapes_ok(ctx, q, k, v, heads)) return NULL;
    return diff_fused(ctx, q, k, v, heads, mask, causal, scale, lambda, lambda_init, norm_w, eps, probs);
}

/* the composed form, the fused one's reference in the tests: both maps materialised (B,2H,T,T),
 * A = P1 - lambda P2 (B,H,T,T), O = A V */
qkv_tensor *qkv__diff_attention_composed(qkv_ctx *ctx, qkv_tensor *q, qkv_tensor *k, qkv_tensor *v, int heads,
                                         const qkv_tensor *mask, bool causal, double scale, qkv_tensor *lambda,
                                         double lambda_init, qkv_tensor *norm_w, double eps, qkv_tensor **probs) {
    if (probs) *probs = NULL;
    if (!q || !k || !v || !lambda || !diff_shapes_ok(ctx, q, k, v, heads)) return NULL;
    int64_t B = q->shape[0], T = q->shape[1], H = heads, hd = q->shape[2] / H;
    bool ok;
    const qkv_tensor *blocked = blocked_of(ctx, mask, causal, T, &ok);
    if (!ok) return NULL;
    // q, k: (B,T,d) -> (B,2H,T,hd/2): half-head 2h + c is component c of head h
    qkv_tensor *qh = heads_of(ctx, q, 2 * H, hd / 2), *kh = k == q ? qh : heads_of(ctx, k, 2 * H, hd / 2);
    qkv_tensor *vh = heads_of(ctx, v, H, hd); /* (B,H,T,hd) */
    // scores (B,2H,T,T) -> both softmaxes, as (B,H,2,T T)
    qkv_tensor *p = qkv_masked_softmax(ctx, qkv_matmul(ctx, qh, kh, false, true), blocked, scale, -INFINITY);
    int64_t s4[4] = {B, H, 2, T * T}, sa[4] = {B, H, T, T};
    p = qkv_reshape(ctx, p, 4, s4);
    // A = P1 - lambda P2: (B,H,T,T)
    qkv_tensor *a = qkv_sub(ctx, qkv_slice(ctx, p, 2, 0, 1), qkv_mul(ctx, qkv_slice(ctx, p, 2, 1, 1), lambda));
    a = qkv_reshape(ctx, a, 4, sa);
    if (probs) *probs = a;
    // O = A V (B,H,T,hd), then (1 - lambda_init) RMSNorm(O) w per head and position
    qkv_tensor *o = qkv_matmul(ctx, a, vh, false, false);
    return merge_heads(ctx, diff_out(ctx, o, 3, norm_w, eps, lambda_init));
}

/* x (B,H,T,T) mixed over heads: y[b,g] = sum_h w[g,h] x[b,h] (one product, w shared by the batch) */
static qkv_tensor *mix_heads(qkv_ctx *ctx, qkv_tensor *x, qkv_tensor *w) {
    if (!x) return NULL;
    int64_t s3[3] = {x->shape[0], x->shape[1], x->shape[2] * x->shape[3]};
    return qkv_reshape(ctx, qkv_matmul(ctx, w, qkv_reshape(ctx, x, 3, s3), false, false), 4, x->shape);
}

qkv_tensor *qkv_talking_heads_attention(qkv_ctx *ctx, qkv_tensor *q, qkv_tensor *k, qkv_tensor *v, int heads,
                                        int kv_heads, const qkv_tensor *mask, bool causal, double scale,
                                        qkv_tensor *w_logits, qkv_tensor *w_weights, qkv_tensor **probs) {
    if (probs) *probs = NULL;
    if (!q || !k || !v || !w_logits || !w_weights) return NULL;
    if (q->ndim != 3 || k->ndim != 3 || v->ndim != 3 || heads < 1 || kv_heads < 1 || heads % kv_heads ||
        q->shape[2] % heads || k->shape[2] != q->shape[2] / heads * kv_heads || v->shape[2] != k->shape[2])
        return qkv_ctx_fail(ctx, "talking_heads_attention: q (B,T,d), k and v (B,T,d kv_heads/heads) with kv_heads "
                            "%d dividing heads %d", kv_heads, heads);
    int64_t T = q->shape[1], H = heads, hd = q->shape[2] / H;
    bool ok;
    const qkv_tensor *blocked = blocked_of(ctx, mask, causal, T, &ok);
    if (!ok) return NULL;
    qkv_tensor *qh = heads_of(ctx, q, H, hd);
    qkv_tensor *kh = k == q ? qh : repeat_heads(ctx, heads_of(ctx, k, kv_heads, hd), H);
    qkv_tensor *vh = v == q ? qh : v == k ? kh : repeat_heads(ctx, heads_of(ctx, v, kv_heads, hd), H);
    // logits L = P_l (scale Q K^T) over heads (B,H,T,T), masked softmax, weights W = P_w softmax(L)
    qkv_tensor *l = mix_heads(ctx, qkv_scale(ctx, qkv_matmul(ctx, qh, kh, false, true), scale), w_logits);
    qkv_tensor *w = mix_heads(ctx, qkv_masked_softmax(ctx, l, blocked, 1.0, -INFINITY), w_weights);
    if (probs) *probs = w;
    return merge_heads(ctx, qkv_matmul(ctx, w, vh, false, false)); /* (B,H,T,hd) -> (B,T,d) */
}
