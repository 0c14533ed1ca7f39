/* The transformer language model:
 *   x = tok_emb[tokens] + pos_emb[0:T]; x = block_i(x) for each layer;
 *   logits = lm_head(ln_f(x)) : (B,T,vocab)
 * Parameters (checkpoint keys): tok_emb.weight, pos_emb.weight, blocks.N.{ln1,attn,ln2,ff}.*,
 * ln_f.{weight,bias}, lm_head.{weight,bias}. */
#ifndef QKV_MODEL_H
#define QKV_MODEL_H

#include "qkv_api.h"

#include "nn/block.h"

typedef struct qkv_model {
    qkv_model_config cfg;
    qkv_params params;
    qkv_embed tok, pos;
    qkv_block *blocks;
    qkv_lnorm ln_f;
    qkv_linear_layer head;
} qkv_model;

/* build and initialise (seeded) a model in dtype dt; NULL with e on a bad config (QKV_ERR_USAGE,
 * qkv_model_config_check's message) or out of memory (QKV_ERR_FAIL) */
QKV_API qkv_model *qkv_model_new(const qkv_model_config *cfg, qkv_dtype dt, uint64_t seed, qkv_err *e);
QKV_API void qkv_model_free(qkv_model *m);
/* a model of m's config that uses m's weights (not a copy) and has gradients of its own, for a
 * micro-batch computed on another thread; m must outlive it. NULL with e */
QKV_API qkv_model *qkv_model_replica(const qkv_model *m, qkv_err *e);

/* tokens: I32 (B,T), T <= seq_len; pad: I32 (B,T), 1 = real token, 0 = padding (keys that
 * are padding are not attended to), or NULL  ->  logits (B,T,vocab) */
QKV_API qkv_tensor *qkv_model_forward(qkv_ctx *ctx, qkv_model *m, const qkv_tensor *tokens, const qkv_tensor *pad);
/* mean cross-entropy of the logits against targets I32 (B,T) (-100 = no loss at that position) */
QKV_API qkv_tensor *qkv_model_loss(qkv_ctx *ctx, qkv_model *m, const qkv_tensor *tokens,
                           const qkv_tensor *targets, const qkv_tensor *pad);
/* attention weights (B,H,T,T) of `layer` from the last forward; valid until qkv_ctx_reset */
QKV_API const qkv_tensor *qkv_model_attention(const qkv_model *m, int layer);

/* parameters of the attention modules only (all layers) */
QKV_API int64_t qkv_model_attention_params(const qkv_model *m);

/* ---- sizes, from the one description of the model (no parameter values or activations are
 * allocated; cfg need not be checked: 0 for a config qkv_model_new refuses; INT64_MAX for sizes
 * beyond it) */

/* the exact parameter count of the model qkv_model_new would build */
QKV_API int64_t qkv_model_param_count(const qkv_model_config *cfg);
/* the peak per-step arena bytes (activations, their gradients, the tape) of a training step, the
 * loss over batch x seq tokens and its backward in float32 products, counted by running that step
 * in a counting context (qkv_ctx_new_counting), with a padding mask and without: the larger */
QKV_API int64_t qkv_model_activation_bytes(const qkv_model_config *cfg, int batch, int seq);

#endif
