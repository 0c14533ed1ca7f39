/* The small modules: Linear, Embedding, LayerNorm, FeedForward.
 * Each owns named parameters in a qkv_params store and builds its forward from ops. */
#ifndef QKV_LAYERS_H
#define QKV_LAYERS_H

#include "qkv_api.h"

#include "autograd/ops.h"
#include "nn/model_config.h"
#include "nn/params.h"

typedef struct qkv_linear_layer { qkv_tensor *w, *b; int in, out; } qkv_linear_layer;
typedef struct qkv_embed { qkv_tensor *w; int rows, dim; } qkv_embed;
typedef struct qkv_lnorm { qkv_tensor *w, *b; int dim; } qkv_lnorm;
/* the layer norms' eps (PyTorch's default) */
#define QKV_LNORM_EPS 1e-5
typedef struct qkv_ffn { qkv_linear_layer fc1, fc2; qkv_activation act; } qkv_ffn;

/* PREFIX.weight (out,in) ~ U(-1/sqrt(in), 1/sqrt(in)), PREFIX.bias (out) likewise (PyTorch) */
QKV_API int qkv_linear_init(qkv_linear_layer *l, qkv_params *p, const char *prefix, int in, int out, bool bias);
/* x: (...,in) -> y: (...,out);  y = x W^T + b */
QKV_API qkv_tensor *qkv_linear_forward(qkv_ctx *ctx, const qkv_linear_layer *l, qkv_tensor *x);

/* PREFIX.weight (rows,dim) ~ N(0,1) (PyTorch) */
QKV_API int qkv_embed_init(qkv_embed *e, qkv_params *p, const char *prefix, int rows, int dim);
/* idx: I32 (...) -> y: (...,dim);  y = W[idx] */
QKV_API qkv_tensor *qkv_embed_forward(qkv_ctx *ctx, const qkv_embed *e, const qkv_tensor *idx);

/* PREFIX.weight = 1, PREFIX.bias = 0 (dim) */
QKV_API int qkv_lnorm_init(qkv_lnorm *n, qkv_params *p, const char *prefix, int dim);
/* x: (...,dim) -> y: (...,dim);  y = (x - mean) / sqrt(var + 1e-5) * w + b */
QKV_API qkv_tensor *qkv_lnorm_forward(qkv_ctx *ctx, const qkv_lnorm *n, qkv_tensor *x);

/* PREFIX.fc1 (d -> d_ff), PREFIX.fc2 (d_ff -> d) */
QKV_API int qkv_ffn_init(qkv_ffn *f, qkv_params *p, const char *prefix, int d, int d_ff, qkv_activation act);
/* x: (B,T,d) -> (B,T,d);  y = fc2(act(fc1(x))) */
QKV_API qkv_tensor *qkv_ffn_forward(qkv_ctx *ctx, const qkv_ffn *f, qkv_tensor *x);

/* y = act(x) for a config activation */
QKV_API qkv_tensor *qkv_activation_forward(qkv_ctx *ctx, qkv_activation act, qkv_tensor *x);

#endif
