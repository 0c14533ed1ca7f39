#include "nn/attention.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int lin(qkv_linear_layer *l, qkv_params *p, const char *prefix, const char *leaf, int in,
               int out, bool bias) {
    char name[96];
    snprintf(name, sizeof name, "%s.%s", prefix, leaf);
    return qkv_linear_init(l, p, name, in, out, bias);
}

int qkv_attention_init(qkv_attention *a, qkv_params *p, const char *prefix, int d, int heads,
                       const qkv_attn_config *cfg, char *err, int errlen) {
    memset(a, 0, sizeof *a);
    if (heads < 1 || d % heads) {
        snprintf(err, (size_t)errlen, "%s: heads %d does not divide d_model %d", prefix, heads, d);
        return -1;
    }
    a->cfg = *cfg;
    a->d = d;
    a->heads = heads;
    a->hd = d / heads;
    int rc = 0;
    switch (cfg->qkv) { /* Q/K/V projections have no bias, as in the question's module */
    case QKV_ATTN_FULL:
        rc |= lin(&a->wq, p, prefix, "wq", d, d, false);
        rc |= lin(&a->wk, p, prefix, "wk", d, d, false);
        rc |= lin(&a->wv, p, prefix, "wv", d, d, false);
        break;
    case QKV_ATTN_SHARED: rc |= lin(&a->wq, p, prefix, "w", d, d, false); break;
    case QKV_ATTN_IDENTITY: break;
    case QKV_ATTN_QK_TIED:
        rc |= lin(&a->wq, p, prefix, "wqk", d, d, false);
        rc |= lin(&a->wv, p, prefix, "wv", d, d, false);
        break;
    case QKV_ATTN_KV_TIED:
        rc |= lin(&a->wq, p, prefix, "wq", d, d, false);
        rc |= lin(&a->wk, p, prefix, "wkv", d, d, false);
        break;
    case QKV_ATTN_HEAD_SHARED: /* one (hd,hd) map per role, applied to every head's slice */
        rc |= lin(&a->wv, p, prefix, "values", a->hd, a->hd, false);
        rc |= lin(&a->wk, p, prefix, "keys", a->hd, a->hd, false);
        rc |= lin(&a->wq, p, prefix, "queries", a->hd, a->hd, false);
        break;
    default:
        snprintf(err, (size_t)errlen, "%s: unknown qkv variant %d", prefix, (int)cfg->qkv);
        return -1;
    }
    if (cfg->gate != QKV_GATE_NONE) rc |= lin(&a->wg, p, prefix, "wg", d, d, true);
    if (cfg->rel_pos_bias) {
        char name[96];
        int64_t s[2] = {2 * (int64_t)cfg->rel_pos_max + 1, heads};
        snprintf(name, sizeof name, "%s.rel_pos.weight", prefix);
        a->rel = qkv_params_add(p, name, 2, s, QKV_INIT_ZEROS, 0);
        rc |= !a->rel;
    }
    rc |= lin(&a->wo, p, prefix, cfg->qkv == QKV_ATTN_HEAD_SHARED ? "fc_out" : "wo", d, d, true);
    if (rc) snprintf(err, (size_t)errlen, "%s: out of memory declaring parameters", prefix);
    return rc ? -1 : 0;
}

/* (B,T,d) -> (B,H,T,hd) */
static qkv_tensor *split_heads(qkv_ctx *ctx, const qkv_attention *a, qkv_tensor *x) {
    if (!x) return NULL;
    int64_t s[4] = {x->shape[0], x->shape[1], a->heads, a->hd};
    return qkv_transpose(ctx, qkv_reshape(ctx, x, 4, s), 1, 2);
}

/* (B,T,d) -> (B,T,d) through a projection, or unchanged when the variant has none */
static qkv_tensor *project(qkv_ctx *ctx, const qkv_linear_layer *l, qkv_tensor *x) {
    return l->w ? qkv_linear_forward(ctx, l, x) : x;
}

/* y: (B,T,d) merged heads -> gated (if asked) -> Wo */
static qkv_tensor *output(qkv_ctx *ctx, qkv_attention *a, qkv_tensor *y, qkv_tensor *gate) {
    if (gate && a->cfg.gate == QKV_GATE_OUTPUT) y = qkv_mul(ctx, y, gate);
    return qkv_linear_forward(ctx, &a->wo, y);
}

qkv_tensor *qkv_attention_forward(qkv_ctx *ctx, qkv_attention *a, qkv_tensor *x,
                                  const qkv_attn_masks *m) {
    if (!x) return NULL;
    if (x->ndim != 3 || x->shape[2] != a->d)
        return qkv_ctx_fail(ctx, "attention: expected input (B,T,%d), got %s", a->d,
                            qkv_shape_str(x->ndim, x->shape, (char[96]){0}, 96));
    int64_t B = x->shape[0], T = x->shape[1];
    double scale = 1.0 / sqrt(a->cfg.scale == QKV_SCALE_EMBED ? (double)a->d : (double)a->hd);
    qkv_tensor *gate = a->wg.w ? qkv_sigmoid(ctx, qkv_linear_forward(ctx, &a->wg, x)) : NULL;
    int64_t s3[3] = {B, T, a->d};
    qkv_tensor *pq, *pk, *pv; /* (B,T,d), head h in columns h hd .. (h+1) hd - 1 */
    if (a->cfg.qkv == QKV_ATTN_HEAD_SHARED) {
        /* the question's module: split X into heads first, then the shared (hd,hd) maps */
        int64_t s[4] = {B, T, a->heads, a->hd};
        qkv_tensor *xv = x;
        if (gate && a->cfg.gate == QKV_GATE_VALUE) xv = qkv_mul(ctx, x, gate);
        qkv_tensor *xh = qkv_reshape(ctx, x, 4, s), *xvh = qkv_reshape(ctx, xv, 4, s);
        pq = qkv_reshape(ctx, qkv_linear_forward(ctx, &a->wq, xh), 3, s3);
        pk = qkv_reshape(ctx, qkv_linear_forward(ctx, &a->wk, xh), 3, s3);
        pv = qkv_reshape(ctx, qkv_linear_forward(ctx, &a->wv, xvh), 3, s3);
    } else {
        /* a projection shared by two roles is computed once and used twice (tied) */
        pq = project(ctx, &a->wq, x);
        pk = a->cfg.qkv == QKV_ATTN_FULL || a->cfg.qkv == QKV_ATTN_KV_TIED ? project(ctx, &a->wk, x) : pq;
        switch (a->cfg.qkv) {
        case QKV_ATTN_FULL: case QKV_ATTN_QK_TIED: pv = project(ctx, &a->wv, x); break;
        case QKV_ATTN_KV_TIED: pv = pk; break;
        default: pv = pq; break; /* shared, identity */
        }
        if (gate && a->cfg.gate == QKV_GATE_VALUE) pv = qkv_mul(ctx, pv, gate);
    }
    if (!(a->rel && m->rel_index)) {
        /* the common case: one fused op, no head split/merge copies. For head_shared it gives
         * exactly what the -1e20 fill gives (exp underflows to 0 either way) in every row with
         * a visible key; a row with none gets zeros, as the composed path's row_alive does */
        const qkv_tensor *mask = m->only_causal ? NULL : m->blocked;
        qkv_tensor *y = qkv_sdp_attention(ctx, pq, pk, pv, a->heads, mask, a->cfg.causal, scale, &a->last_att);
        return output(ctx, a, y, gate);
    }
    /* relative position bias: the composed ops (the bias enters between the products) */
    qkv_tensor *q = split_heads(ctx, a, pq);
    qkv_tensor *k = pk == pq ? q : split_heads(ctx, a, pk);
    qkv_tensor *v = pv == pq ? q : pv == pk ? k : split_heads(ctx, a, pv);
    bool quirk = a->cfg.qkv == QKV_ATTN_HEAD_SHARED;
    double fill = quirk ? -1e20 : -INFINITY;
    qkv_tensor *s = qkv_matmul(ctx, q, k, false, true); /* (B,H,T,T) */
    /* bias[h][i][j] = rel[clip(j-i)+R][h], added after scaling; then mask and softmax */
    qkv_tensor *bias = qkv_transpose(ctx, qkv_embedding(ctx, a->rel, m->rel_index), 0, 2);
    qkv_tensor *att = qkv_masked_softmax(ctx, qkv_add(ctx, qkv_scale(ctx, s, scale), bias), m->blocked, 1.0, fill);
    /* with a finite fill a fully blocked row would average every key: zero it, as with -inf */
    if (quirk && m->row_alive) att = qkv_mul(ctx, att, m->row_alive);
    a->last_att = att;
    qkv_tensor *y = qkv_matmul(ctx, att, v, false, false); /* (B,H,T,hd) */
    y = qkv_reshape(ctx, qkv_transpose(ctx, y, 1, 2), 3, s3);
    return output(ctx, a, y, gate);
}
