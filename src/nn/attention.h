/* Multi-head self-attention with every Q/K/V variant of model_config.h.
 *
 *   Q, K, V from X per the variant; S = Q K^T * scale (+ relative position bias);
 *   S[blocked] = -inf (-1e20 in head_shared, as that module writes it);
 *   A = softmax(S) (a fully blocked row gives A = 0); Y = A V (gated if asked); out = Y Wo^T + bo
 *   (diff: A = softmax(S1) - lambda softmax(S2) over half-width Q/K pairs, Y normalised per head;
 *   talking_heads: S and A mixed over heads by learned (H,H) maps) */
#ifndef QKV_ATTENTION_H
#define QKV_ATTENTION_H

#include "qkv_api.h"

#include "nn/layers.h"

/* room for the parameters of the options that keep theirs in qkv_attention.own */
#define QKV_ATTN_OWN_SLOTS 8

/* Per-forward constants shared by every layer (built once per batch by the model). */
typedef struct qkv_attn_masks {
    const qkv_tensor *blocked;   /* I32 (T,T) or (B,1,T,T); 1 = may not attend; NULL = none, or
                                  * only_causal without rel_pos_bias (nothing would read it) */
    qkv_tensor *row_alive;       /* float (T,1) or (B,1,T,1): 0 for a fully blocked query row; NULL if none is */
    const qkv_tensor *rel_index; /* I32 (T,T): [j][i] = clip(j - i) + rel_pos_max; NULL without rel_pos_bias */
    bool only_causal;            /* blocked is exactly the causal mask (the fused op needs no mask then) */
} qkv_attn_masks;

typedef struct qkv_attention {
    qkv_attn_config cfg;
    int d, heads, hd, kvh;         /* kvh: key/value heads (kv_heads, or heads) */
    qkv_linear_layer wq, wk, wv, wo, wg; /* which exist depends on the variant (w == NULL otherwise) */
    qkv_linear_layer wdown;        /* kv_latent: X -> the latent (wk, wv then map the latent up) */
    qkv_tensor *rel;               /* (2 rel_pos_max + 1, heads) or NULL */
    qkv_tensor *sq, *sk, *sv;      /* role_scale: (d) each, or NULL */
    double *slopes;                /* alibi: (heads), or NULL */
    qkv_tensor *lq1, *lk1, *lq2, *lk2; /* diff: lambda's vectors (hd/2) each, or NULL */
    qkv_tensor *subln;             /* diff: the head norm's scale (hd), or NULL */
    double lambda_init;            /* diff: 0.8 - 0.6 exp(-0.3 (l - 1)) of layer l = 1, 2, ... */
    qkv_tensor *th_logits, *th_weights; /* talking_heads: (heads, heads) each, or NULL */
    qkv_tensor *qk_diag;           /* qk_diag: the diagonal D between tied queries and keys (heads, hd), or NULL */
    double rope_base;              /* > 0: queries and keys rotated by position (qkv_attention_set_rope) */
    /* the parameters of an option added since these fields, each in a slot attention.c numbers for
     * it (so such an option needs no field here), NULL when it is off */
    qkv_tensor *own[QKV_ATTN_OWN_SLOTS];
    qkv_tensor *last_att;          /* (B,H,T,T) of the last forward; valid until qkv_ctx_reset */
} qkv_attention;

/* declare the variant's parameters under PREFIX (e.g. "blocks.0.attn"); -1 with e on a bad config
 * (QKV_ERR_USAGE) or out of memory (free with qkv_attention_free) */
QKV_API int qkv_attention_init(qkv_attention *a, qkv_params *p, const char *prefix, int d, int heads,
                               const qkv_attn_config *cfg, qkv_err *e);
/* the layer (0, 1, ...) a module is in: differential attention's lambda_init depends on it
 * (qkv_attention_init assumes 0, the first layer) */
QKV_API void qkv_attention_set_layer(qkv_attention *a, int layer);
/* rotary positions (the model's position rope): each head's queries and keys rotated by position
 * before the scores, pair k by position x base^(-2k/head_dim) (diff: each half-width query and key
 * on its own); values are not rotated. base 0: none (the default) */
QKV_API void qkv_attention_set_rope(qkv_attention *a, double base);
/* what qkv_attention_init allocated besides parameters */
QKV_API void qkv_attention_free(qkv_attention *a);
/* x: (B,T,d) -> (B,T,d) */
QKV_API qkv_tensor *qkv_attention_forward(qkv_ctx *ctx, qkv_attention *a, qkv_tensor *x,
                                  const qkv_attn_masks *m);

#endif
