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
    bool counting = qkv_ctx_counting(ctx); /* no values to fill in */
    if (a->rel_pos_bias) { /* idx: I32 (T,T) */
        int64_t s[2] = {T, T};
        qkv_tensor *idx = qkv_ctx_tensor(ctx, QKV_I32, 2, s);
        if (!idx) return -1;
        int32_t *d = idx->data, R = a->rel_pos_max;
        for (int64_t j = 0; j < T && !counting; j++)
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
    /* counting: a query row may be left without a key where padding could leave it so, or where
     * self_mask strict does (the first row with causal, or the one row) */
    bool any_dead = counting && (pad || (a->self_mask && a->self_mask_rule == QKV_SELF_STRICT && (a->causal || T == 1)));
    for (int64_t b = 0; b < nb && !counting; b++)
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

/* what a counting model's parameters and a counted step's inputs point to: no values */
static const int32_t UNBACKED[16] = {1};

/* m declared for c with no values: every parameter's data and gradient point at UNBACKED (a model
 * for a counting context). 0, or -1 for a config the model refuses (qkv_model_new says why) */
static int declare_shapes(qkv_model *m, const qkv_model_config *c) {
    memset(m, 0, sizeof *m);
    if (qkv_model_config_check(c, NULL) || declare(m, c, QKV_F32, NULL)) return -1;
    for (int i = 0; i < m->params.n; i++) m->params.items[i]->t.data = m->params.items[i]->t.grad = (void *)UNBACKED;
    return 0;
}

static void free_shapes(qkv_model *m) {
    for (int i = 0; m->blocks && i < m->cfg.layers; i++) qkv_attention_free(&m->blocks[i].attn);
    qkv_params_free(&m->params);
    free(m->blocks);
}

int64_t qkv_model_param_count(const qkv_model_config *c) {
    qkv_model m;
    int64_t n = declare_shapes(&m, c) ? 0 : m.params.numel; /* a refused config has none */
    free_shapes(&m);
    return n;
}

/* One training step over tokens (B,T) counted in ctx: the loss, weighted as train.c weighs a
 * micro-batch's, and its backward; with a padding mask (pad) or without. 0, or -1 (the sizes do
 * not fit) */
static int count_step(qkv_ctx *ctx, qkv_model *m, int64_t B, int64_t T, bool pad) {
    int64_t s[2] = {B, T};
    qkv_tensor tok;
    if (qkv_shape_init(&tok, QKV_I32, 2, s)) return -1;
    tok.data = (void *)UNBACKED;
    qkv_ctx_reset(ctx);
    qkv_tensor *loss = qkv_model_loss(ctx, m, &tok, &tok, pad ? &tok : NULL);
    return loss && !qkv_backward(ctx, qkv_scale(ctx, loss, 1.0)) ? 0 : -1;
}

/* The largest arena a training step of the model takes, counted by running its forward and
 * backward in a counting context (no values, no activation memory), with and without a padding
 * mask. */
int64_t qkv_model_activation_bytes(const qkv_model_config *c, int batch, int seq) {
    qkv_model m;
    qkv_ctx *ctx = NULL;
    int64_t bytes = 0; /* a refused config has no step */
    if (!declare_shapes(&m, c)) {
        bytes = INT64_MAX; /* out of memory, or sizes beyond int64 */
        if ((ctx = qkv_ctx_new_counting()) && !count_step(ctx, &m, batch, seq, false) &&
            !count_step(ctx, &m, batch, seq, true))
            bytes = qkv_ctx_arena_peak(ctx) > (size_t)INT64_MAX ? INT64_MAX : (int64_t)qkv_ctx_arena_peak(ctx);
    }
    qkv_ctx_free(ctx);
    free_shapes(&m);
    return bytes;
}
