#include "nn/model_check.h"
#include "tensor/rng.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct { qkv_model *m; qkv_tensor *tokens, *targets, *pad; } batch_ref;

static qkv_tensor *model_loss(qkv_ctx *ctx, qkv_tensor *const *in, int n, void *user) {
    (void)in; (void)n; /* the inputs are the model's own parameters */
    batch_ref *b = user;
    return qkv_model_loss(ctx, b->m, b->tokens, b->targets, b->pad);
}

int qkv_model_gradcheck(const qkv_model_config *cfg, const qkv_model_check *opt,
                        qkv_model **model_out, qkv_gradcheck_stat **stats_out, qkv_err *e) {
    *model_out = NULL;
    *stats_out = NULL;
    qkv_model *m = qkv_model_new(cfg, QKV_F64, opt->seed, e);
    if (!m) return -1;
    int64_t B = opt->batch > 0 ? opt->batch : 2, T = opt->seq_len > 0 ? opt->seq_len : cfg->seq_len;
    if (T > cfg->seq_len) T = cfg->seq_len;
    int64_t s[2] = {B, T};
    qkv_tensor *tok = qkv_tensor_zeros(QKV_I32, 2, s), *tgt = qkv_tensor_zeros(QKV_I32, 2, s);
    qkv_tensor *pad = opt->pad ? qkv_tensor_zeros(QKV_I32, 2, s) : NULL;
    qkv_gradcheck_stat *stats = calloc((size_t)m->params.n, sizeof *stats);
    qkv_tensor **in = calloc((size_t)m->params.n, sizeof *in);
    qkv_ctx *ctx = qkv_ctx_new();
    int rc = -1;
    if (!tok || !tgt || (opt->pad && !pad) || !stats || !in || !ctx) {
        qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
        goto done;
    }
    qkv_rng r;
    qkv_rng_seed_stream(&r, opt->seed, 3);
    int32_t *td = tok->data, *gd = tgt->data;
    for (int64_t i = 0; i < B * T; i++) {
        td[i] = (int32_t)qkv_rng_below(&r, (uint64_t)cfg->vocab);
        gd[i] = qkv_rng_below(&r, 4) == 0 ? -100 : (int32_t)qkv_rng_below(&r, (uint64_t)cfg->vocab);
        if (pad) ((int32_t *)pad->data)[i] = (i % T) < T - 1 - (i / T) % 2; /* 1-2 padded keys */
    }
    for (int i = 0; i < m->params.n; i++) in[i] = &m->params.items[i]->t;
    batch_ref b = {m, tok, tgt, pad};
    qkv_gradcheck_opts go = {.max_checks = opt->sample, .check_all_below = opt->small,
                             .seed = opt->seed, .stats = stats};
    qkv_gradcheck_result res;
    rc = qkv_gradcheck(ctx, model_loss, in, m->params.n, &b, &go, &res, e);
done:
    qkv_ctx_free(ctx);
    free(in);
    qkv_tensor_free(tok);
    qkv_tensor_free(tgt);
    qkv_tensor_free(pad);
    if (rc < 0) {
        free(stats);
        qkv_model_free(m);
        return -1;
    }
    *model_out = m;
    *stats_out = stats;
    return rc;
}
