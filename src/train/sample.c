/* Sampling from a trained model (see sample.h). No key/value cache: each token is one forward
 * pass over the context, at most seq_len tokens; the models are small and so are samples. */
#include "train/sample.h"
#include "tensor/fastmath.h"
#include "tensor/parallel.h"
#include "tensor/rng.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { STREAM_SAMPLE = 505 }; /* the draws' stream (tasks/task.c uses 101-404) */

static const double *sort_logits; /* qsort has no context argument */
/* by logit, largest first; the lower id first on a tie (a fixed order) */
static int by_logit(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    if (sort_logits[x] != sort_logits[y]) return sort_logits[x] > sort_logits[y] ? -1 : 1;
    return (x > y) - (x < y);
}

/* the next token from logits l (V of them): greedy, or a draw from the top_k (0 = all) with
 * temperature; ids and w are V-long scratch */
static int32_t pick(const double *l, int V, const qkv_sample_opts *o, qkv_rng *r, int32_t *ids, double *w) {
    for (int v = 0; v < V; v++) ids[v] = v;
    sort_logits = l;
    qsort(ids, (size_t)V, sizeof *ids, by_logit);
    if (o->temperature == 0 || o->top_k == 1) return ids[0];
    int k = o->top_k > 0 && o->top_k < V ? o->top_k : V;
    double sum = 0;
    for (int i = 0; i < k; i++) { /* exp((l - max) / T) <= 1: qkv's exp, the same bits everywhere */
        w[i] = qkv_expf_fast((float)((l[ids[i]] - l[ids[0]]) / o->temperature));
        sum += w[i];
    }
    double u = qkv_rng_uniform(r) * sum, c = 0;
    for (int i = 0; i < k; i++) {
        c += w[i];
        if (u < c) return ids[i];
    }
    return ids[0]; /* only if rounding left u at the sum */
}

static int sample(qkv_ctx *ctx, qkv_model *m, const int32_t *prompt, int n_prompt, const qkv_sample_opts *o,
                  int32_t *out, qkv_err *e) {
    int V = m->cfg.vocab, S = m->cfg.seq_len, total = n_prompt + o->tokens;
    int32_t *ctx_tok = malloc((size_t)total * sizeof *ctx_tok), *ids = malloc((size_t)V * sizeof *ids);
    double *l = malloc((size_t)V * sizeof *l), *w = malloc((size_t)V * sizeof *w);
    int rc = 0;
    if (!ctx_tok || !ids || !l || !w) {
        qkv_err_set(e, QKV_ERR_FAIL, "out of memory for a sample of %d tokens", o->tokens);
        rc = -1;
    }
    qkv_rng r;
    qkv_rng_seed_stream(&r, o->seed, STREAM_SAMPLE);
    if (!rc) memcpy(ctx_tok, prompt, (size_t)n_prompt * sizeof *ctx_tok);
    for (int n = n_prompt; !rc && n < total; n++) {
        int T = n < S ? n : S; /* the last seq_len tokens */
        int64_t shape[2] = {1, T};
        qkv_tensor tokens;
        qkv_shape_init(&tokens, QKV_I32, 2, shape);
        tokens.data = ctx_tok + (n - T);
        qkv_ctx_reset(ctx);
        // tokens: (1,T) -> logits: (1,T,V); the next token's are the last row's
        qkv_tensor *logits = qkv_model_forward(ctx, m, &tokens, NULL);
        if (!logits) {
            qkv_err_set(e, QKV_ERR_FAIL, "sampling: %s", qkv_ctx_error(ctx));
            rc = -1;
            break;
        }
        for (int v = 0; v < V; v++) l[v] = qkv_tensor_get(logits, (int64_t)(T - 1) * V + v);
        ctx_tok[n] = pick(l, V, o, &r, ids, w);
        out[n - n_prompt] = ctx_tok[n];
    }
    qkv_ctx_reset(ctx);
    free(ctx_tok);
    free(ids);
    free(l);
    free(w);
    return rc;
}

int qkv_sample(qkv_model *m, const int32_t *prompt, int n_prompt, const qkv_sample_opts *o, int32_t *out, qkv_err *e) {
    if (n_prompt < 1 || o->tokens < 1 || !(o->temperature >= 0) || o->top_k < 0) {
        return qkv_err_set(e, QKV_ERR_FAIL, "sampling needs a prompt of at least one token, tokens >= 1, temperature >= 0 "
                           "and top_k >= 0 (got %d, %d, %g, %d)", n_prompt, o->tokens, o->temperature, o->top_k);
    }
    if (o->tokens > (1 << 30) - n_prompt) {
        return qkv_err_set(e, QKV_ERR_FAIL, "sampling: %d tokens after a prompt of %d is too many", o->tokens, n_prompt);
    }
    for (int i = 0; i < n_prompt; i++)
        if (prompt[i] < 0 || prompt[i] >= m->cfg.vocab) {
            return qkv_err_set(e, QKV_ERR_FAIL, "prompt token %d (at %d) is outside the model's vocabulary [0, %d)",
                               prompt[i], i, m->cfg.vocab);
        }
    qkv_ctx *ctx = qkv_ctx_new();
    if (!ctx) {
        return qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
    }
    if (qkv_ctx_set_bf16(ctx, o->bf16)) {
        qkv_err_set(e, QKV_ERR_FAIL, "%s", qkv_ctx_error(ctx));
        qkv_ctx_free(ctx);
        return -1;
    }
    qkv_ctx_set_grad_enabled(ctx, false);
    int prev = qkv__serial(1); /* one thread's kernels: the same bits for any thread count */
    int rc = sample(ctx, m, prompt, n_prompt, o, out, e);
    qkv__serial(prev);
    qkv_ctx_free(ctx);
    return rc;
}
