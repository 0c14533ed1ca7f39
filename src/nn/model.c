#include "nn/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every parameter of the model declared in m->params (its name, shape and start; nothing
 * allocated for its values): the one description of the model's tensors, which qkv_model_new
 * then allocates and qkv_model_param_count only counts. A model whose config passes
 * qkv_model_config_check; 0, or -1 with e. */
static int declare(qkv_model *m, const qkv_model_config *cfg, qkv_dtype dt, qkv_err *e) {
    m->cfg = *cfg;
    qkv_params_init(&m->params, dt);
    if (!(m->blocks = calloc((size_t)cfg->layers, sizeof *m->blocks)))
        return qkv_err_set(e, QKV_ERR_FAIL, "out of memory building the model");
    int rc = qkv_embed_init(&m->tok, &m->params, "tok_emb", cfg->vocab, cfg->d_model);
    if (cfg->position == QKV_POS_LEARNED) rc |= qkv_embed_init(&m->pos, &m->params, "pos_emb", cfg->seq_len, cfg->d_model);
    if (rc) qkv_err_set(e, QKV_ERR_FAIL, "out of memory building the model");
    for (int i = 0; !rc && i < cfg->layers; i++) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "blocks.%d", i);
        rc = qkv_block_init(&m->blocks[i], &m->params, prefix, cfg, e);
        if (!rc) qkv_attention_set_layer(&m->blocks[i].attn, i);
        if (!rc && cfg->position == QKV_POS_ROPE) qkv_attention_set_rope(&m->blocks[i].attn, cfg->rope_base);
    }
    if (!rc && (qkv_lnorm_init(&m->ln_f, &m->params, "ln_f", cfg->d_model) ||
                qkv_linear_init(&m->head, &m->params, "lm_head", cfg->d_model, cfg->vocab, true)))
        rc = qkv_err_set(e, QKV_ERR_FAIL, "out of memory building the model");
    return rc;
}

qkv_model *qkv_model_new(const qkv_model_config *cfg, qkv_dtype dt, uint64_t seed, qkv_err *e) {
    if (qkv_model_config_check(cfg, e)) return NULL;
    qkv_model *m = calloc(1, sizeof *m);
    if (!m) {
        qkv_err_set(e, QKV_ERR_FAIL, "out of memory building the model");
        return NULL;
    }
    int rc = declare(m, cfg, dt, e);
    if (!rc && qkv_params_finalize(&m->params))
        rc = qkv_err_set(e, QKV_ERR_FAIL, "out of memory: %lld parameters", (long long)m->params.numel);
    if (rc) {
        qkv_model_free(m);
        return NULL;
    }
    qkv_params_init_values(&m->params, seed);
    return m;
}

qkv_model *qkv_model_replica(const qkv_model *m, qkv_err *e) {
    qkv_model *r = qkv_model_new(&m->cfg, m->params.dtype, 0, e);
    if (r && qkv_params_share(&r->params, &m->params)) {
        qkv_err_set(e, QKV_ERR_FAIL, "model replica: the parameter layouts differ");
        qkv_model_free(r);
        return NULL;
    }
    return r;
}

void qkv_model_free(qkv_model *m) {
    if (!m) return;
    for (int i = 0; m->blocks && i < m->cfg.layers; i++) qkv_attention_free(&m->blocks[i].attn);
    qkv_params_free(&m->params);
    free(m->blocks);
    free(m);
}

/* The masks every layer shares, built once per forward in the arena. */
static int build_masks(qkv_ctx *ctx, const qkv_model *m, int64_t B, int64_t T,
                       const qkv_tensor *pad, qkv_attn_masks *out) {
    const qkv_attn_config *a = &m->cfg.attn;
    memset(out, 0, sizeof *out);
    if (a->rel_pos_bias) { /* idx: I32 (T,T) */
        int64_t s[2] = {T, T};
        qkv_tensor *idx = qkv_ctx_tensor(ctx, QKV_I32, 2, s);
        if (!idx) return -1;
        int32_t *d = idx->data, R = a->rel_pos_max;
        for (int64_t j = 0; j < T; j++)
            for (int64_t i = 0; i < T; i++) {
                int64_t off = j - i;
                off = off < -R ? -R : off > R ? R : off;
                d[j * T + i] = (int32_t)(off + R);
            }
        out->rel_index = idx;
    }
    if (!a->causal && !a->self_mask && !pad) return 0;
    out->only_causal = a->causal && !a->self_mask && !pad;
    /* the fused attention op applies a purely causal mask itself: only the composed path
     * (rel_pos_bias) would read the array */
    if (out->only_causal && !a->rel_pos_bias) return 0;
    int64_t nb = pad ? B : 1;
    int64_t ms[4] = {nb, 1, T, T}, rs[4] = {nb, 1, T, 1};
    qkv_tensor *blk = qkv_ctx_tensor(ctx, QKV_I32, pad ? 4 : 2, pad ? ms : ms + 2);
    qkv_tensor *alive = qkv_ctx_tensor(ctx, m->params.dtype, pad ? 4 : 2, pad ? rs : rs + 2);
    if (!blk || !alive) return -1;
    int32_t *bd = blk->data;
    const int32_t *pd = pad ? pad->data : NULL;
    bool any_dead = false;
    for (int64_t b = 0; b < nb; b++)
        for (int64_t i = 0; i < T; i++) {
            bool alive_row = false, other = false; /* other: a visible key besides i itself */
            for (int64_t j = 0; j < T; j++)
                other |= j != i && !((a->causal && j > i) || (pd && pd[b * T + j] == 0));
            /* the Reformer's rule: a token attends to itself only when it has no other key */
            bool no_self = a->self_mask && (a->self_mask_rule == QKV_SELF_STRICT || other);
            for (int64_t j = 0; j < T; j++) {
                bool blocked = (a->causal && j > i) || (no_self && j == i) || (pd && pd[b * T + j] == 0);
                bd[(b * T + i) * T + j] = blocked;
                alive_row |= !blocked;
            }
            qkv_tensor_set(alive, b * T + i, alive_row ? 1.0 : 0.0);
            any_dead |= !alive_row;
        }
    out->blocked = blk;
    out->row_alive = any_dead ? alive : NULL;
    return 0;
}

qkv_tensor *qkv_model_forward(qkv_ctx *ctx, qkv_model *m, const qkv_tensor *tokens, const qkv_tensor *pad) {
    if (!tokens) return NULL;
    if (tokens->dtype != QKV_I32 || tokens->ndim != 2)
        return qkv_ctx_fail(ctx, "model: tokens must be I32 (B,T)");
    int64_t B = tokens->shape[0], T = tokens->shape[1];
    if (T > m->cfg.seq_len)
        return qkv_ctx_fail(ctx, "model: sequence length %lld exceeds model.seq_len %d",
                            (long long)T, m->cfg.seq_len);
    if (pad && (pad->dtype != QKV_I32 || !qkv_same_shape(pad, tokens)))
        return qkv_ctx_fail(ctx, "model: the padding mask must be I32 with the tokens' shape (B,T)");
    qkv_attn_masks masks;
    if (build_masks(ctx, m, B, T, pad, &masks)) return NULL;
    // x: (B,T,d) = tok_emb[tokens] (+ pos_emb[0:T] (T,d) with learned positions)
    // xn: the norm of the stream x the next block (or the head) reads, fused with the add that made x
    qkv_tensor *x = qkv_embed_forward(ctx, &m->tok, tokens), *xn;
    const qkv_lnorm *first = m->cfg.layers > 0 ? &m->blocks[0].ln1 : &m->ln_f;
    if (m->cfg.position == QKV_POS_LEARNED)
        xn = qkv_add_layernorm(ctx, x, qkv_slice(ctx, m->pos.w, 0, 0, T), first->w, first->b, QKV_LNORM_EPS, &x);
    else
        xn = qkv_lnorm_forward(ctx, first, x);
    for (int i = 0; i < m->cfg.layers; i++)
        x = qkv_block_forward_normed(ctx, &m->blocks[i], x, xn, &masks,
                                     i + 1 < m->cfg.layers ? &m->blocks[i + 1].ln1 : &m->ln_f, &xn);
    return qkv_linear_forward(ctx, &m->head, xn);
}

qkv_tensor *qkv_model_loss(qkv_ctx *ctx, qkv_model *m, const qkv_tensor *tokens,
                           const qkv_tensor *targets, const qkv_tensor *pad) {
    return qkv_cross_entropy(ctx, qkv_model_forward(ctx, m, tokens, pad), targets, -100);
}

const qkv_tensor *qkv_model_attention(const qkv_model *m, int layer) {
    return layer >= 0 && layer < m->cfg.layers ? m->blocks[layer].attn.last_att : NULL;
}

int64_t qkv_model_attention_params(const qkv_model *m) {
    int64_t n = 0;
    for (int i = 0; i < m->params.n; i++)
        if (strstr(m->params.items[i]->name, ".attn.")) n += m->params.items[i]->t.numel;
    return n;
}

/* ---- size estimates ---------------------------------------------------------------------- */

static int64_t saturate(double x) { return x >= 9.2e18 ? INT64_MAX : x <= 0 ? 0 : (int64_t)x; }

int64_t qkv_model_param_count(const qkv_model_config *c) {
    qkv_model m;
    memset(&m, 0, sizeof m);
    /* a config the model refuses has no parameters to count: qkv_model_new says why */
    int64_t n = qkv_model_config_check(c, NULL) || declare(&m, c, QKV_F32, NULL) ? 0 : m.params.numel;
    for (int i = 0; m.blocks && i < c->layers; i++) qkv_attention_free(&m.blocks[i].attn);
    qkv_params_free(&m.params);
    free(m.blocks);
    return n;
}

/* Calibrated against qkv_ctx_arena_peak of real steps (floats per unit). With the fused
 * attention op (every configuration without rel_pos_bias): a block keeps about 26 floats
 * per token and model dimension (32 with a gate), 5 per token and feed-forward unit, and per
 * attention weight the weights themselves plus at most as much backward scratch. The composed
 * path (rel_pos_bias) keeps about 32 (38) per token and dimension and 4 per
 * attention weight (the relative-position bias adds 5 per weight and 3 per head and position
 * pair). Outside the blocks, about 8 per token and dimension and 2 per token and vocabulary
 * entry. The coefficients below are rounded up, with 8-12 KiB per layer for small tensors and
 * alignment. Differential attention (one fused op over its 2H half-heads, the maps P1 - lambda
 * P2 formed for qkv_model_attention) keeps about 6 floats per attention weight and 40 per token
 * and dimension (estimated as 8 and 44); the composed talking_heads path about 14 and 40
 * (estimated as 16 and 42). */
int64_t qkv_model_activation_bytes(const qkv_model_config *c, int batch, int seq) {
    double B = batch, T = seq, BT = B * T, d = c->d_model, F = c->d_ff, H = c->heads;
    bool gated = c->attn.gate != QKV_GATE_NONE, rel = c->attn.rel_pos_bias;
    double layer;
    if (c->attn.diff) /* fused over the half-heads; P1 V - lambda P2 V and the head norm composed */
        layer = BT * (d * (gated ? 50 : 44) + 6 * F) + B * H * T * T * 8 + T * T + 45 * 200;
    else if (c->attn.talking_heads) /* composed: scores, their mix, softmax, the weights' mix */
        layer = BT * (d * (gated ? 48 : 42) + 6 * F) + B * H * T * T * 16 + T * T + 25 * 200;
    else if (!rel)
        layer = BT * (d * (gated ? 34 : 28) + 6 * F) + B * H * T * T * 2 + 2048;
    else
        layer = BT * (d * (gated ? 42 : 36) + 6 * F) + B * H * T * T * 11 + 4 * H * T * T + 3072;
    /* the attention options' own ops (or the ops they remove), each about 200 floats of
     * records, tensor headers and alignment besides its data and gradient */
    const qkv_attn_config *a = &c->attn;
    double ops = 0, per_td = 0, kvh = a->kv_heads > 0 ? a->kv_heads : H;
    if (a->key_norm) ops += rel ? 12 : 7, per_td += 8; /* the keys' lengths (composed: a tied value split apart) */
    if (a->role_scale) ops += 3, per_td += 6;          /* Q, K, V = P diag(s) */
    if (kvh < H) per_td -= 4 * (1 - kvh / H);          /* narrower keys and values, and their gradients */
    if (rel && kvh < H) ops += 6, per_td += 4;         /* keys and values repeated to the query heads */
    if (a->gate == QKV_GATE_HEADWISE) ops += 3;
    if (!a->value_proj) ops -= 1, per_td -= 2;
    if (!a->query_proj) ops -= 1, per_td -= 2;  /* Q = X: no product, no gradient of its own */
    if (!a->key_proj) ops -= 1, per_td -= 2;
    if (!a->out_proj) ops -= 1, per_td -= 2;
    layer += ops * 200 + BT * (d * per_td + 2.0 * a->kv_latent); /* the latent and its gradient */
    /* each residual add and the norm after it are one op (add_layernorm): about 128 floats of
     * records fewer per layer, and 640 outside the blocks */
    double floats = (double)c->layers * (layer - 128) + BT * (12 * d + 3 * (double)c->vocab) + 2 * B * T * T + 2416;
    return saturate(4 * floats);
}
