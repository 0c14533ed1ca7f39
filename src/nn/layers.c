#include "nn/layers.h"

#include <math.h>
#include <stdio.h>

static char *join(char *buf, size_t n, const char *prefix, const char *leaf) {
    snprintf(buf, n, "%s.%s", prefix, leaf);
    return buf;
}

int qkv_linear_init(qkv_linear_layer *l, qkv_params *p, const char *prefix, int in, int out, bool bias) {
    char name[96];
    int64_t ws[2] = {out, in}, bs[1] = {out};
    double bound = 1.0 / sqrt((double)in);
    l->in = in;
    l->out = out;
    l->w = qkv_params_add(p, join(name, sizeof name, prefix, "weight"), 2, ws, QKV_INIT_UNIFORM, bound);
    l->b = bias ? qkv_params_add(p, join(name, sizeof name, prefix, "bias"), 1, bs, QKV_INIT_UNIFORM, bound)
                : NULL;
    return l->w && (!bias || l->b) ? 0 : -1;
}

qkv_tensor *qkv_linear_forward(qkv_ctx *ctx, const qkv_linear_layer *l, qkv_tensor *x) {
    return qkv_linear(ctx, x, l->w, l->b);
}

int qkv_embed_init(qkv_embed *e, qkv_params *p, const char *prefix, int rows, int dim) {
    char name[96];
    int64_t s[2] = {rows, dim};
    e->rows = rows;
    e->dim = dim;
    e->w = qkv_params_add(p, join(name, sizeof name, prefix, "weight"), 2, s, QKV_INIT_NORMAL, 1.0);
    return e->w ? 0 : -1;
}

qkv_tensor *qkv_embed_forward(qkv_ctx *ctx, const qkv_embed *e, const qkv_tensor *idx) {
    return qkv_embedding(ctx, e->w, idx);
}

int qkv_lnorm_init(qkv_lnorm *n, qkv_params *p, const char *prefix, int dim) {
    char name[96];
    int64_t s[1] = {dim};
    n->dim = dim;
    n->w = qkv_params_add(p, join(name, sizeof name, prefix, "weight"), 1, s, QKV_INIT_ONES, 0);
    n->b = qkv_params_add(p, join(name, sizeof name, prefix, "bias"), 1, s, QKV_INIT_ZEROS, 0);
    return n->w && n->b ? 0 : -1;
}

qkv_tensor *qkv_lnorm_forward(qkv_ctx *ctx, const qkv_lnorm *n, qkv_tensor *x) {
    return qkv_layernorm(ctx, x, n->w, n->b, QKV_LNORM_EPS);
}

int qkv_ffn_init(qkv_ffn *f, qkv_params *p, const char *prefix, int d, int d_ff, qkv_activation act) {
    char name[96];
    f->act = act;
    if (qkv_linear_init(&f->fc1, p, join(name, sizeof name, prefix, "fc1"), d, d_ff, true)) return -1;
    return qkv_linear_init(&f->fc2, p, join(name, sizeof name, prefix, "fc2"), d_ff, d, true);
}

qkv_tensor *qkv_activation_forward(qkv_ctx *ctx, qkv_activation act, qkv_tensor *x) {
    switch (act) {
    case QKV_ACT_RELU: return qkv_relu(ctx, x);
    case QKV_ACT_GELU_TANH: return qkv_gelu_tanh(ctx, x);
    default: return qkv_gelu(ctx, x);
    }
}

qkv_tensor *qkv_ffn_forward(qkv_ctx *ctx, const qkv_ffn *f, qkv_tensor *x) {
    /* fc1's bias and the activation as the epilogue of its product (one op, one pass) */
    qkv_op act = f->act == QKV_ACT_RELU ? QKV_OP_RELU : f->act == QKV_ACT_GELU_TANH ? QKV_OP_GELU_TANH : QKV_OP_GELU;
    qkv_tensor *h = qkv_linear_act(ctx, x, f->fc1.w, f->fc1.b, act);
    return qkv_linear_forward(ctx, &f->fc2, h);
}
