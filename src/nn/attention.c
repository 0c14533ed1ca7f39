#include "nn/attention.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int lin(qkv_linear_layer *l, qkv_params *p, const char *prefix, const char *leaf, int in,
               int out, bool bias) {
    char name[96];
    snprintf(name, sizeof name, "%s.%s", prefix, leaf);
    return qkv_linear_init(l, p, name, in, out, bias);
}

/* a (d) parameter PREFIX.LEAF starting at ones (role_scale) */
static qkv_tensor *ones(qkv_params *p, const char *prefix, const char *leaf, int d) {
    char name[96];
    int64_t s[1] = {d};
    snprintf(name, sizeof name, "%s.%s", prefix, leaf);
    return qkv_params_add(p, name, 1, s, QKV_INIT_ONES, 0);
}

/* ALiBi's slopes for n heads (Press et al. 2022): for n a power of two, 2^(-8/n) to the powers
 * 1..n; otherwise those of the power of two below, then every other slope of twice that */
static void alibi_slopes(int n, double *out) {
    int p2 = 1;
    while (p2 * 2 <= n) p2 *= 2;
    double start = pow(2.0, -8.0 / p2);
    for (int h = 0; h < p2; h++) out[h] = pow(start, h + 1);
    if (p2 == n) return;
    double start2 = pow(2.0, -8.0 / (2 * p2)); /* the slopes of 2 p2 heads, odd positions: 1, 3, 5, ... */
    for (int h = p2, i = 0; h < n; h++, i += 2) out[h] = pow(start2, i + 1);
}

/* the identity and mimetic starts of the square projections (model_config.h says what each is) */
#define INIT_NOISE 0.02
static void eye(qkv_linear_layer *l, double diag) {
    if (l->w) qkv_params_set_eye(l->w, diag, INIT_NOISE); /* a non-square map (grouped keys) keeps the default */
}

static void init_scheme(qkv_attention *a) {
    qkv_init_scheme s = a->cfg.init;
    if (s == QKV_INIT_DEFAULT) return;
    double qk = s == QKV_INIT_IDENTITY ? 1 : sqrt(0.7), v = s == QKV_INIT_IDENTITY ? 1 : sqrt(0.4);
    bool kv_tied = a->cfg.qkv == QKV_ATTN_KV_TIED;
    eye(&a->wq, qk);               /* wq, wqk, or shared's w */
    if (!a->cfg.kv_latent) eye(&a->wk, kv_tied ? v : qk); /* wk, or kv_tied's wkv (a value too) */
    if (!a->cfg.kv_latent) eye(&a->wv, v);
    if (s == QKV_INIT_MIMETIC && a->wo.w) eye(&a->wo, -sqrt(0.4));
}

int qkv_attention_init(qkv_attention *a, qkv_params *p, const char *prefix, int d, int heads,
                       const qkv_attn_config *cfg, qkv_err *e) {
    memset(a, 0, sizeof *a);
    if (heads < 1 || d % heads)
        return qkv_err_set(e, QKV_ERR_USAGE, "%s: heads %d does not divide d_model %d", prefix, heads, d);
    a->cfg = *cfg;
    a->d = d;
    a->heads = heads;
    a->hd = d / heads;
    a->kvh = qkv_attn_kv_heads(cfg, heads);
    int dkv = a->kvh * a->hd, r = cfg->kv_latent, rc = 0;
    switch (cfg->qkv) { /* Q/K/V projections have no bias (head_shared's module has none either) */
    case QKV_ATTN_FULL:
        if (cfg->query_proj) rc |= lin(&a->wq, p, prefix, "wq", d, d, false);
        if (r) { /* keys and values from a latent of width r */
            rc |= lin(&a->wdown, p, prefix, "wdown", d, r, false);
            rc |= lin(&a->wk, p, prefix, "wuk", r, dkv, false);
            rc |= lin(&a->wv, p, prefix, "wuv", r, dkv, false);
        } else {
            if (cfg->key_proj) rc |= lin(&a->wk, p, prefix, "wk", d, dkv, false);
            if (cfg->value_proj) rc |= lin(&a->wv, p, prefix, "wv", d, dkv, false);
        }
        break;
    case QKV_ATTN_SHARED:
        rc |= lin(&a->wq, p, prefix, "w", d, d, false);
        if (cfg->role_scale) /* PREFIX.role_scale.q, .k, .v: one module of three (d) scales */
            rc |= !(a->sq = ones(p, prefix, "role_scale.q", d)) | !(a->sk = ones(p, prefix, "role_scale.k", d)) |
                  !(a->sv = ones(p, prefix, "role_scale.v", d));
        break;
    case QKV_ATTN_IDENTITY: break;
    case QKV_ATTN_QK_TIED:
        rc |= lin(&a->wq, p, prefix, "wqk", d, d, false);
        if (cfg->value_proj) rc |= lin(&a->wv, p, prefix, "wv", d, d, false);
        break;
    case QKV_ATTN_KV_TIED:
        if (cfg->query_proj) rc |= lin(&a->wq, p, prefix, "wq", d, d, false);
        rc |= lin(&a->wk, p, prefix, "wkv", d, dkv, false);
        break;
    case QKV_ATTN_HEAD_SHARED: /* one (hd,hd) map per role, applied to every head's slice */
        rc |= lin(&a->wv, p, prefix, "values", a->hd, a->hd, false);
        rc |= lin(&a->wk, p, prefix, "keys", a->hd, a->hd, false);
        rc |= lin(&a->wq, p, prefix, "queries", a->hd, a->hd, false);
        break;
    default: return qkv_err_set(e, QKV_ERR_USAGE, "%s: unknown qkv variant %d", prefix, (int)cfg->qkv);
    }
    if (cfg->qk_diag != QKV_QK_DIAG_NONE) { /* PREFIX.qk_diag (heads, hd): Q = X W D */
        static const qkv_init_kind start[QKV_QK_DIAG_COUNT] = {QKV_INIT_ZEROS, QKV_INIT_ALTERNATING, QKV_INIT_ONES,
                                                                QKV_INIT_SIGNS};
        char name[96];
        int64_t s[2] = {heads, a->hd};
        snprintf(name, sizeof name, "%s.qk_diag", prefix);
        rc |= !(a->qk_diag = qkv_params_add(p, name, 2, s, start[cfg->qk_diag], 0));
    }
    if (cfg->gate != QKV_GATE_NONE) /* element-wise over the output (d) or the values, or one per head */
        rc |= lin(&a->wg, p, prefix, "wg", d,
                  cfg->gate == QKV_GATE_HEADWISE ? heads : cfg->gate == QKV_GATE_VALUE ? dkv : d, true);
    if (cfg->rel_pos_bias) {
        char name[96];
        int64_t s[2] = {2 * (int64_t)cfg->rel_pos_max + 1, heads};
        snprintf(name, sizeof name, "%s.rel_pos.weight", prefix);
        a->rel = qkv_params_add(p, name, 2, s, QKV_INIT_ZEROS, 0);
        rc |= !a->rel;
    }
    if (cfg->diff) { /* the published module's names: lambda_q1, ..., subln.weight */
        int64_t half[1] = {a->hd / 2}, full[1] = {a->hd};
        const char *leaf[4] = {"lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2"};
        qkv_tensor **dst[4] = {&a->lq1, &a->lk1, &a->lq2, &a->lk2};
        for (int i = 0; i < 4; i++) {
            char name[96];
            snprintf(name, sizeof name, "%s.%s", prefix, leaf[i]);
            rc |= !(*dst[i] = qkv_params_add(p, name, 1, half, QKV_INIT_NORMAL, 0.1)); /* N(0, 0.1^2) */
        }
        char name[96];
        snprintf(name, sizeof name, "%s.subln.weight", prefix);
        rc |= !(a->subln = qkv_params_add(p, name, 1, full, QKV_INIT_ONES, 0));
        qkv_attention_set_layer(a, 0);
    }
    if (cfg->talking_heads) { /* PREFIX.talking_heads.logits.weight, .weights.weight: (H,H) maps, y = W x */
        int64_t s[2] = {heads, heads};
        char name[96];
        snprintf(name, sizeof name, "%s.talking_heads.logits.weight", prefix);
        rc |= !(a->th_logits = qkv_params_add(p, name, 2, s, QKV_INIT_ZEROS, 0));
        snprintf(name, sizeof name, "%s.talking_heads.weights.weight", prefix);
        rc |= !(a->th_weights = qkv_params_add(p, name, 2, s, QKV_INIT_ZEROS, 0));
        if (!rc) qkv_params_set_eye(a->th_logits, 1, 0), qkv_params_set_eye(a->th_weights, 1, 0); /* exactly I */
    }
    if (cfg->out_proj) rc |= lin(&a->wo, p, prefix, cfg->qkv == QKV_ATTN_HEAD_SHARED ? "fc_out" : "wo", d, d, true);
    if (!rc && cfg->alibi) {
        a->slopes = malloc((size_t)heads * sizeof *a->slopes);
        if (a->slopes) alibi_slopes(heads, a->slopes);
        rc |= !a->slopes;
    }
    if (!rc) init_scheme(a);
    return rc ? qkv_err_set(e, QKV_ERR_FAIL, "%s: out of memory declaring parameters", prefix) : 0;
}

void qkv_attention_set_rope(qkv_attention *a, double base) { a->rope_base = base > 0 ? base : 0; }

void qkv_attention_set_layer(qkv_attention *a, int layer) {
    a->lambda_init = 0.8 - 0.6 * exp(-0.3 * (double)layer); /* the paper's l - 1 = layer */
}

/* diff's lambda = exp(lq1 . lk1) - exp(lq2 . lk2) + lambda_init: a scalar tensor */
static qkv_tensor *lambda_of(qkv_ctx *ctx, const qkv_attention *a) {
    qkv_tensor *l1 = qkv_exp(ctx, qkv_sum_all(ctx, qkv_mul(ctx, a->lq1, a->lk1)));
    qkv_tensor *l2 = qkv_exp(ctx, qkv_sum_all(ctx, qkv_mul(ctx, a->lq2, a->lk2)));
    return qkv_add_scalar(ctx, qkv_sub(ctx, l1, l2), a->lambda_init);
}

void qkv_attention_free(qkv_attention *a) {
    free(a->slopes);
    a->slopes = NULL;
}

/* (B,T,n hd) -> (B,n,T,hd) */
static qkv_tensor *split_heads(qkv_ctx *ctx, const qkv_attention *a, qkv_tensor *x, int n) {
    if (!x) return NULL;
    int64_t s[4] = {x->shape[0], x->shape[1], n, a->hd};
    return qkv_transpose(ctx, qkv_reshape(ctx, x, 4, s), 1, 2);
}

/* (B,kvh,T,hd) -> (B,H,T,hd): query head h gets key/value head h / (H / kvh). As x + 0
 * broadcast over each group of H / kvh heads: two ops whatever the head count (a slice per
 * head made 2 H tensors and their gradients, more memory than the estimate allows) */
static qkv_tensor *expand_heads(qkv_ctx *ctx, const qkv_attention *a, qkv_tensor *x) {
    if (!x || a->kvh == a->heads) return x;
    int64_t B = x->shape[0], T = x->shape[2], g = a->heads / a->kvh;
    int64_t sx[4] = {B, a->kvh, 1, T * a->hd}, sz[4] = {1, 1, g, 1}, sy[4] = {B, a->heads, T, a->hd};
    qkv_tensor *zero = qkv_ctx_tensor(ctx, x->dtype, 4, sz); /* zeros, no gradient */
    if (!zero) return NULL;
    return qkv_reshape(ctx, qkv_add(ctx, qkv_reshape(ctx, x, 4, sx), zero), 4, sy);
}

/* x (B,T,n hd) with each head's vector scaled to unit length (key_norm) */
static qkv_tensor *unit_heads(qkv_ctx *ctx, const qkv_attention *a, qkv_tensor *x, int n) {
    if (!x) return NULL;
    int64_t s4[4] = {x->shape[0], x->shape[1], n, a->hd}, s3[3] = {x->shape[0], x->shape[1], (int64_t)n * a->hd};
    qkv_tensor *h = qkv_reshape(ctx, x, 4, s4);
    qkv_tensor *len = qkv_sqrt(ctx, qkv_add_scalar(ctx, qkv_sum(ctx, qkv_mul(ctx, h, h), 3, true), 1e-6));
    return qkv_reshape(ctx, qkv_div(ctx, h, len), 3, s3);
}

/* (B,T,d) -> (B,T,d) through a projection, or unchanged when the variant has none */
static qkv_tensor *project(qkv_ctx *ctx, const qkv_linear_layer *l, qkv_tensor *x) {
    return l->w ? qkv_linear_forward(ctx, l, x) : x;
}

/* y: (B,T,d) merged heads, v: (B,T,kvh hd) the values they averaged -> with exclusive, each head's
 * output without its part along its own token's value (Zhai 2026), else y */
static qkv_tensor *exclusive(qkv_ctx *ctx, const qkv_attention *a, qkv_tensor *y, qkv_tensor *v) {
    return a->cfg.exclusive ? qkv_exclusive(ctx, y, v, a->hd) : y;
}

/* y: (B,T,d) merged heads -> gated (if asked) -> Wo (if any) */
static qkv_tensor *output(qkv_ctx *ctx, qkv_attention *a, qkv_tensor *y, qkv_tensor *gate) {
    if (gate && a->cfg.gate == QKV_GATE_OUTPUT) y = qkv_mul(ctx, y, gate);
    if (gate && a->cfg.gate == QKV_GATE_HEADWISE && y) { /* each head's output times its gate */
        int64_t B = y->shape[0], T = y->shape[1], sh[4] = {B, T, a->heads, a->hd}, sg[4] = {B, T, a->heads, 1},
                s3[3] = {B, T, a->d};
        y = qkv_reshape(ctx, qkv_mul(ctx, qkv_reshape(ctx, y, 4, sh), qkv_reshape(ctx, gate, 4, sg)), 3, s3);
    }
    return a->wo.w ? qkv_linear_forward(ctx, &a->wo, y) : y;
}

/* The one path through attention, in three stages an option hooks into: the projections
 * (project_qkv: Q, K, V and what changes them before the scores), the mixing (mix: scores, mask,
 * softmax, weighted values, by the kernel the options need), then what follows the mixing once
 * for every kernel (exclusive, the gate, the output projection). */

/* x: (B,T,d) -> pq: (B,T,d), pk, pv: (B,T,kvh hd), head h in columns h hd ..; a tied role is
 * the same tensor; gate: the value gate's sigmoid (or NULL) */
static void project_qkv(qkv_ctx *ctx, const qkv_attention *a, qkv_tensor *x, qkv_tensor *gate, qkv_tensor **q,
                        qkv_tensor **k, qkv_tensor **v) {
    int64_t B = x->shape[0], T = x->shape[1], s3[3] = {B, T, a->d};
    qkv_tensor *pq, *pk, *pv;
    if (a->cfg.qkv == QKV_ATTN_HEAD_SHARED) {
        /* head_shared: split X into heads first, then the shared (hd,hd) maps */
        int64_t s[4] = {B, T, a->heads, a->hd};
        qkv_tensor *xv = x;
        if (gate && a->cfg.gate == QKV_GATE_VALUE) xv = qkv_mul(ctx, x, gate);
        qkv_tensor *xh = qkv_reshape(ctx, x, 4, s), *xvh = qkv_reshape(ctx, xv, 4, s);
        pq = qkv_reshape(ctx, qkv_linear_forward(ctx, &a->wq, xh), 3, s3);
        pk = qkv_reshape(ctx, qkv_linear_forward(ctx, &a->wk, xh), 3, s3);
        pv = qkv_reshape(ctx, qkv_linear_forward(ctx, &a->wv, xvh), 3, s3);
    } else if (a->sq) {
        /* one matrix, three roles told apart by per-role diagonal scales */
        qkv_tensor *p = project(ctx, &a->wq, x);
        pq = qkv_mul(ctx, p, a->sq);
        pk = qkv_mul(ctx, p, a->sk);
        pv = qkv_mul(ctx, p, a->sv);
        if (gate && a->cfg.gate == QKV_GATE_VALUE) pv = qkv_mul(ctx, pv, gate);
    } else {
        /* a projection shared by two roles is computed once and used twice (tied) */
        pq = project(ctx, &a->wq, x);
        qkv_tensor *lat = a->wdown.w ? qkv_linear_forward(ctx, &a->wdown, x) : x;
        pk = a->cfg.qkv == QKV_ATTN_FULL || a->cfg.qkv == QKV_ATTN_KV_TIED ? project(ctx, &a->wk, lat) : pq;
        switch (a->cfg.qkv) {
        case QKV_ATTN_FULL: case QKV_ATTN_QK_TIED: pv = a->wv.w ? qkv_linear_forward(ctx, &a->wv, lat) : x; break;
        case QKV_ATTN_KV_TIED: pv = pk; break;
        default: pv = pq; break; /* shared, identity */
        }
        if (gate && a->cfg.gate == QKV_GATE_VALUE) pv = qkv_mul(ctx, pv, gate);
        if (a->qk_diag) { /* Q = X W D: the key (and a tied value) keep X W */
            int64_t sd[1] = {a->d};
            pq = qkv_mul(ctx, pq, qkv_reshape(ctx, a->qk_diag, 1, sd));
        }
    }
    if (a->cfg.key_norm) pk = unit_heads(ctx, a, pk, a->kvh); /* a new tensor: a tied value keeps its length */
    if (a->rope_base > 0) { /* new tensors: a value that is the same tensor as Q or K stays unrotated */
        int rot = a->cfg.diff ? a->hd / 2 : a->hd; /* diff: its two half-width queries and keys each */
        qkv_tensor *rq = qkv_rope(ctx, pq, rot, a->rope_base);
        pk = pk == pq ? rq : qkv_rope(ctx, pk, rot, a->rope_base); /* tied Q = K: one rotation serves both */
        pq = rq;
    }
    *q = pq, *k = pk, *v = pv;
}

/* pq: (B,T,d), pk, pv: (B,T,kvh hd) -> y: (B,T,d) merged heads, the weights kept in a->last_att */
static qkv_tensor *mix(qkv_ctx *ctx, qkv_attention *a, qkv_tensor *pq, qkv_tensor *pk, qkv_tensor *pv,
                       const qkv_attn_masks *m, double scale) {
    const qkv_tensor *mask = m->only_causal ? NULL : m->blocked;
    if (a->cfg.diff) /* composed (op_attn_variants.c), blocked as the fused op: causal or masked */
        return qkv_diff_attention(ctx, pq, pk, pv, a->heads, mask, a->cfg.causal, 1.0 / sqrt(a->hd / 2.0), lambda_of(ctx, a),
                                  a->lambda_init, a->subln, 1e-5, &a->last_att);
    if (a->cfg.talking_heads)
        return qkv_talking_heads_attention(ctx, pq, pk, pv, a->heads, a->kvh, mask, a->cfg.causal, scale, a->th_logits,
                                           a->th_weights, &a->last_att);
    if (!(a->rel && m->rel_index))
        /* the common case: one fused op, no head split/merge copies. For head_shared it gives
         * exactly what the -1e20 fill gives (exp underflows to 0 either way) in every row with
         * a visible key; a row with none gets zeros, as the composed path's row_alive does */
        return qkv_sdp_attention_ex(ctx, pq, pk, pv, a->heads, a->kvh, mask, a->cfg.causal, scale, a->slopes, &a->last_att);
    /* relative position bias: the composed ops (the bias enters between the products) */
    int64_t s3[3] = {pq->shape[0], pq->shape[1], a->d};
    qkv_tensor *q = split_heads(ctx, a, pq, a->heads);
    qkv_tensor *k = pk == pq ? q : expand_heads(ctx, a, split_heads(ctx, a, pk, a->kvh));
    qkv_tensor *v = pv == pq ? q : pv == pk ? k : expand_heads(ctx, a, split_heads(ctx, a, pv, a->kvh));
    bool head_shared = a->cfg.qkv == QKV_ATTN_HEAD_SHARED; /* fills masked scores with -1e20 */
    double fill = head_shared ? -1e20 : -INFINITY;
    qkv_tensor *s = qkv_matmul(ctx, q, k, false, true); /* (B,H,T,T) */
    /* bias[h][i][j] = rel[clip(j-i)+R][h] (H,T,T), added after scaling; then mask and softmax */
    qkv_tensor *bias = qkv_transpose(ctx, qkv_embedding(ctx, a->rel, m->rel_index), 0, 2);
    qkv_tensor *att = qkv_masked_softmax(ctx, qkv_add(ctx, qkv_scale(ctx, s, scale), bias), m->blocked, 1.0, fill);
    /* with a finite fill a fully blocked row would average every key: zero it, as with -inf */
    if (head_shared && m->row_alive) att = qkv_mul(ctx, att, m->row_alive);
    a->last_att = att;
    qkv_tensor *y = qkv_matmul(ctx, att, v, false, false); /* (B,H,T,hd) */
    y = qkv_reshape(ctx, qkv_transpose(ctx, y, 1, 2), 3, s3);
    return y;
}

qkv_tensor *qkv_attention_forward(qkv_ctx *ctx, qkv_attention *a, qkv_tensor *x,
                                  const qkv_attn_masks *m) {
    if (!x) return NULL;
    if (x->ndim != 3 || x->shape[2] != a->d)
        return qkv_ctx_fail(ctx, "attention: expected input (B,T,%d), got %s", a->d,
                            qkv_shape_str(x->ndim, x->shape, (char[96]){0}, 96));
    double scale = 1.0 / sqrt(a->cfg.scale == QKV_SCALE_EMBED ? (double)a->d : (double)a->hd);
    qkv_tensor *gate = a->wg.w ? qkv_sigmoid(ctx, qkv_linear_forward(ctx, &a->wg, x)) : NULL;
    qkv_tensor *pq, *pk, *pv;
    project_qkv(ctx, a, x, gate, &pq, &pk, &pv);
    qkv_tensor *y = pq && pk && pv ? mix(ctx, a, pq, pk, pv, m, scale) : NULL;
    return output(ctx, a, exclusive(ctx, a, y, pv), gate);
}
