/* A pre-LN transformer block: x + attn(ln1(x)), then x + ff(ln2(x)). */
#ifndef QKV_BLOCK_H
#define QKV_BLOCK_H

#include "qkv_api.h"

#include "nn/attention.h"

typedef struct qkv_block {
    qkv_lnorm ln1, ln2;
    qkv_attention attn;
    qkv_ffn ff;
} qkv_block;

/* declare PREFIX.ln1, PREFIX.attn, PREFIX.ln2, PREFIX.ff; -1 with e on failure */
QKV_API int qkv_block_init(qkv_block *b, qkv_params *p, const char *prefix, const qkv_model_config *c,
                           qkv_err *e);
/* x: (B,T,d) -> (B,T,d);  h = x + attn(ln1(x)); y = h + ff(ln2(h)) */
QKV_API qkv_tensor *qkv_block_forward(qkv_ctx *ctx, qkv_block *b, qkv_tensor *x, const qkv_attn_masks *m);
/* the same with the norms fused into the residual adds: xn = ln1(x), made by the caller (with
 * the add that made x); returns y and sets *next_n = next(y), next being the following block's
 * ln1 or the final norm (each of the block's adds and the norm of its sum one add_layernorm) */
QKV_API qkv_tensor *qkv_block_forward_normed(qkv_ctx *ctx, qkv_block *b, qkv_tensor *x, qkv_tensor *xn,
                                             const qkv_attn_masks *m, const qkv_lnorm *next, qkv_tensor **next_n);

#endif
