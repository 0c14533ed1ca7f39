#include "nn/block.h"

#include <stdio.h>

int qkv_block_init(qkv_block *b, qkv_params *p, const char *prefix, const qkv_model_config *c,
                   qkv_err *e) {
    char name[96];
    snprintf(name, sizeof name, "%s.ln1", prefix);
    if (qkv_lnorm_init(&b->ln1, p, name, c->d_model)) goto oom;
    snprintf(name, sizeof name, "%s.attn", prefix);
    if (qkv_attention_init(&b->attn, p, name, c->d_model, c->heads, &c->attn, e)) return -1;
    snprintf(name, sizeof name, "%s.ln2", prefix);
    if (qkv_lnorm_init(&b->ln2, p, name, c->d_model)) goto oom;
    snprintf(name, sizeof name, "%s.ff", prefix);
    if (qkv_ffn_init(&b->ff, p, name, c->d_model, c->d_ff, c->activation)) goto oom;
    return 0;
oom:
    return qkv_err_set(e, QKV_ERR_FAIL, "%s: out of memory declaring parameters", prefix);
}

qkv_tensor *qkv_block_forward_normed(qkv_ctx *ctx, qkv_block *b, qkv_tensor *x, qkv_tensor *xn,
                                     const qkv_attn_masks *m, const qkv_lnorm *next, qkv_tensor **next_n) {
    /* each residual add fused with the layer norm that reads its sum (add_layernorm) */
    qkv_tensor *h, *out;
    qkv_tensor *hn = qkv_add_layernorm(ctx, x, qkv_attention_forward(ctx, &b->attn, xn, m), b->ln2.w, b->ln2.b,
                                       QKV_LNORM_EPS, &h);
    *next_n = qkv_add_layernorm(ctx, h, qkv_ffn_forward(ctx, &b->ff, hn), next->w, next->b, QKV_LNORM_EPS, &out);
    return out;
}

qkv_tensor *qkv_block_forward(qkv_ctx *ctx, qkv_block *b, qkv_tensor *x, const qkv_attn_masks *m) {
    qkv_tensor *h;
    qkv_tensor *hn = qkv_add_layernorm(ctx, x, qkv_attention_forward(ctx, &b->attn, qkv_lnorm_forward(ctx, &b->ln1, x), m),
                                       b->ln2.w, b->ln2.b, QKV_LNORM_EPS, &h);
    return qkv_add(ctx, h, qkv_ffn_forward(ctx, &b->ff, hn));
}
