/* Differentiable ops. Each returns a new tensor in the context's arena and, when grad
 * mode is on and an input requires grad, records itself on the tape. On bad input an
 * op returns NULL and sets the context error; an op given NULL returns NULL.
 * Float inputs of one op share a dtype (F32 or F64). Shapes are row-major. */
#ifndef QKV_OPS_H
#define QKV_OPS_H

#include "qkv_api.h"

#include "autograd/ctx.h"

/* C = op(A) op(B); A: (...,M,K) [(...,K,M) if ta], B: (...,K,N) [(...,N,K) if tb];
 * leading dims equal, or one side 2-D and shared by every batch -> C: (...,M,N) */
QKV_API qkv_tensor *qkv_matmul(qkv_ctx *ctx, qkv_tensor *a, qkv_tensor *b, bool ta, bool tb);

/* y = x W^T + b; x: (...,in), w: (out,in), b: (out) or NULL -> y: (...,out)
 * (one fused op: the bias is the product's starting value) */
QKV_API qkv_tensor *qkv_linear(qkv_ctx *ctx, qkv_tensor *x, qkv_tensor *w, qkv_tensor *b);
/* y = f(x W^T + b), f = act: QKV_OP_GELU, QKV_OP_GELU_TANH or QKV_OP_RELU; qkv_linear's shapes.
 * One op: the bias and f are applied in one pass after the product (f(0) = 0 at ReLU's kink) */
QKV_API qkv_tensor *qkv_linear_act(qkv_ctx *ctx, qkv_tensor *x, qkv_tensor *w, qkv_tensor *b, qkv_op act);

/* y = a + b (broadcast, trailing-aligned) */
QKV_API qkv_tensor *qkv_add(qkv_ctx *ctx, qkv_tensor *a, qkv_tensor *b);
/* y = a - b (broadcast) */
QKV_API qkv_tensor *qkv_sub(qkv_ctx *ctx, qkv_tensor *a, qkv_tensor *b);
/* y = a * b (broadcast) */
QKV_API qkv_tensor *qkv_mul(qkv_ctx *ctx, qkv_tensor *a, qkv_tensor *b);
/* y = a / b (broadcast) */
QKV_API qkv_tensor *qkv_div(qkv_ctx *ctx, qkv_tensor *a, qkv_tensor *b);
/* y = s x */
QKV_API qkv_tensor *qkv_scale(qkv_ctx *ctx, qkv_tensor *x, double s);
/* y = x + c */
QKV_API qkv_tensor *qkv_add_scalar(qkv_ctx *ctx, qkv_tensor *x, double c);

/* y = sum_i x[..., i, ...] over `axis` (negative counts from the end); keepdim keeps it as 1 */
QKV_API qkv_tensor *qkv_sum(qkv_ctx *ctx, qkv_tensor *x, int axis, bool keepdim);
/* y = mean_i x[..., i, ...] over `axis` */
QKV_API qkv_tensor *qkv_mean(qkv_ctx *ctx, qkv_tensor *x, int axis, bool keepdim);
/* y = sum of every element -> scalar */
QKV_API qkv_tensor *qkv_sum_all(qkv_ctx *ctx, qkv_tensor *x);
/* y = mean of every element -> scalar */
QKV_API qkv_tensor *qkv_mean_all(qkv_ctx *ctx, qkv_tensor *x);

/* y = exp(x) */
QKV_API qkv_tensor *qkv_exp(qkv_ctx *ctx, qkv_tensor *x);
/* y = ln(x) */
QKV_API qkv_tensor *qkv_log(qkv_ctx *ctx, qkv_tensor *x);
/* y = tanh(x) */
QKV_API qkv_tensor *qkv_tanh(qkv_ctx *ctx, qkv_tensor *x);
/* y = sqrt(x) */
QKV_API qkv_tensor *qkv_sqrt(qkv_ctx *ctx, qkv_tensor *x);
/* y = max(x, 0) */
QKV_API qkv_tensor *qkv_relu(qkv_ctx *ctx, qkv_tensor *x);
/* y = x Phi(x) = x (1 + erf(x / sqrt 2)) / 2  (PyTorch's default GELU) */
QKV_API qkv_tensor *qkv_gelu(qkv_ctx *ctx, qkv_tensor *x);
/* y = x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2 */
QKV_API qkv_tensor *qkv_gelu_tanh(qkv_ctx *ctx, qkv_tensor *x);
/* y = 1 / (1 + exp(-x)) */
QKV_API qkv_tensor *qkv_sigmoid(qkv_ctx *ctx, qkv_tensor *x);

/* y = exp(x - max) / sum exp(x - max) over the last axis; an all -inf row gives zeros */
QKV_API qkv_tensor *qkv_softmax(qkv_ctx *ctx, qkv_tensor *x);
/* y = softmax(mask != 0 ? fill : scale x) over the last axis; mask: I32 broadcast over x, or
 * NULL. Attention's scale, mask and softmax in one op, keeping only y for the backward. */
QKV_API qkv_tensor *qkv_masked_softmax(qkv_ctx *ctx, qkv_tensor *x, const qkv_tensor *mask, double scale, double fill);
/* q, k, v: (B,T,d), d = heads hd -> y: (B,T,d); per head h (columns h hd .. (h+1) hd - 1):
 * y_h = softmax(blocked ? -inf : scale q_h k_h^T) v_h, blocked = (causal && j > i) || mask[.,.,i,j];
 * mask: I32 broadcast over (B,heads,T,T), or NULL. A fully blocked row gives zeros. q, k, v may
 * be the same tensor (tied projections). If probs is not NULL it gets the attention weights
 * (B,heads,T,T) (not differentiable). Fused: no head split/merge copies, no (B,H,T,T)
 * gradients, causal blocks skipped (src/tensor/k_attention.c). */
QKV_API qkv_tensor *qkv_sdp_attention(qkv_ctx *ctx, qkv_tensor *q, qkv_tensor *k, qkv_tensor *v, int heads,
                              const qkv_tensor *mask, bool causal, double scale, qkv_tensor **probs);
/* the same with kv_heads heads of keys and values (grouped-query attention, kv_heads dividing
 * heads: k, v are (B,T,kv_heads hd), query head h uses key/value head h / (heads / kv_heads);
 * kv_heads = heads is qkv_sdp_attention) and, when slopes is not NULL, ALiBi: the score of
 * query i and key j in head h is lowered by slopes[h] |i - j| (constants: no gradient) */
QKV_API qkv_tensor *qkv_sdp_attention_ex(qkv_ctx *ctx, qkv_tensor *q, qkv_tensor *k, qkv_tensor *v, int heads,
                                         int kv_heads, const qkv_tensor *mask, bool causal, double scale,
                                         const double *slopes, qkv_tensor **probs);
/* Differential attention (Ye et al. 2025), composed from the ops above: q, k, v: (B,T,d), d = heads hd,
 * hd even -> y: (B,T,d). Per head h, q1, q2 (k1, k2) its two column halves:
 * A_h = softmax(scale q1 k1^T) - lambda softmax(scale q2 k2^T) (blocked as sdp_attention),
 * y_h = (1 - lambda_init) A_h v_h / sqrt(mean((A_h v_h)^2) + eps) * norm_w (per position);
 * lambda: one element (differentiable), norm_w: (hd) or NULL. probs, if not NULL, gets A (B,heads,T,T). */
QKV_API qkv_tensor *qkv_diff_attention(qkv_ctx *ctx, qkv_tensor *q, qkv_tensor *k, qkv_tensor *v, int heads,
                                       const qkv_tensor *mask, bool causal, double scale, qkv_tensor *lambda,
                                       double lambda_init, qkv_tensor *norm_w, double eps, qkv_tensor **probs);
/* Talking-heads attention (Shazeer et al. 2020), composed: q (B,T,d), k, v (B,T,kv_heads hd) -> y (B,T,d);
 * S_h = scale q_h k_h^T, L_g = sum_h w_logits[g,h] S_h, P = softmax(L) (blocked as sdp_attention),
 * W_g = sum_h w_weights[g,h] P_h, y_g = W_g v_g; w_logits, w_weights: (heads, heads). probs gets W. */
QKV_API qkv_tensor *qkv_talking_heads_attention(qkv_ctx *ctx, qkv_tensor *q, qkv_tensor *k, qkv_tensor *v, int heads,
                                                int kv_heads, const qkv_tensor *mask, bool causal, double scale,
                                                qkv_tensor *w_logits, qkv_tensor *w_weights, qkv_tensor **probs);
/* y = x - logsumexp(x) over the last axis */
QKV_API qkv_tensor *qkv_log_softmax(qkv_ctx *ctx, qkv_tensor *x);
/* y = (x - mean) / sqrt(var + eps) * w + b over the last axis (n); w, b: (n) or NULL */
QKV_API qkv_tensor *qkv_layernorm(qkv_ctx *ctx, qkv_tensor *x, qkv_tensor *w, qkv_tensor *b, double eps);
/* h = x + a, then y = layernorm(h, w, b, eps) as above: a pre-LN block's residual add and the
 * norm after it as one op (one pass, one record, one backward rule). a: x's shape, or the shape of
 * x's trailing axes (added at every leading index, as qkv_add broadcasts it). Returns y; *h gets h
 * (differentiable: both outputs may be used). */
QKV_API qkv_tensor *qkv_add_layernorm(qkv_ctx *ctx, qkv_tensor *x, qkv_tensor *a, qkv_tensor *w, qkv_tensor *b,
                                      double eps, qkv_tensor **h);

/* table: (V, D), idx: I32 (...) -> y: (..., D), y[i] = table[idx[i]] */
QKV_API qkv_tensor *qkv_embedding(qkv_ctx *ctx, qkv_tensor *table, const qkv_tensor *idx);
/* logits: (..., V), targets: I32 (...) -> scalar: mean over targets != ignore_index of
 * -log softmax(logits)[target] (0 when every target is ignored) */
QKV_API qkv_tensor *qkv_cross_entropy(qkv_ctx *ctx, qkv_tensor *logits, const qkv_tensor *targets,
                              int ignore_index);
/* y = mask != 0 ? value : x; mask: I32, broadcast over x (e.g. (T,T) over (B,H,T,T)) */
QKV_API qkv_tensor *qkv_masked_fill(qkv_ctx *ctx, qkv_tensor *x, const qkv_tensor *mask, double value);

/* x: (B,T,H hd) -> y: (B,T,H hd), rotary positions (Su et al. 2021): in each head, the pair of
 * dimensions (2k, 2k+1) at position t rotated by the angle t theta_k, theta_k = base^(-2k/hd):
 * y_2k = x_2k cos - x_2k+1 sin, y_2k+1 = x_2k sin + x_2k+1 cos; hd even, base > 1 (10000 in the paper) */
QKV_API qkv_tensor *qkv_rope(qkv_ctx *ctx, qkv_tensor *x, int head_dim, double base);

/* y: (B,T,H hd), v: (B,T,kvH hd) -> z: (B,T,H hd), exclusive self attention (Zhai 2026): each head's
 * output without its part along its own token's value, z = y - (y . u) u, u = v / max(|v|, 1e-12)
 * (F.normalize); query head h uses value head h / (H / kvH) */
QKV_API qkv_tensor *qkv_exclusive(qkv_ctx *ctx, qkv_tensor *y, qkv_tensor *v, int head_dim);

/* same data, new shape (one dim may be -1: inferred) */
QKV_API qkv_tensor *qkv_reshape(qkv_ctx *ctx, qkv_tensor *x, int ndim, const int64_t *shape);
/* swap axes a1 and a2, e.g. (B,T,H,D) <-> (B,H,T,D) */
QKV_API qkv_tensor *qkv_transpose(qkv_ctx *ctx, qkv_tensor *x, int a1, int a2);
/* y = x[..., start:start+len, ...] along axis */
QKV_API qkv_tensor *qkv_slice(qkv_ctx *ctx, qkv_tensor *x, int axis, int64_t start, int64_t len);
/* y = [x0, x1, ...] joined along axis; all other dims equal */
QKV_API qkv_tensor *qkv_concat(qkv_ctx *ctx, qkv_tensor *const *xs, int n, int axis);

/* A differentiable op defined outside the library (see examples/custom_op.c).
 * forward: fill out->data from the inputs. backward: given dout, ACCUMULATE into din[i]
 * (din[i] is NULL when input i needs no gradient). Both return 0, or non-zero on error. */
typedef int (*qkv_custom_forward_fn)(const qkv_tensor *const *in, int n, qkv_tensor *out, void *user);
typedef int (*qkv_custom_backward_fn)(const qkv_tensor *const *in, int n, const qkv_tensor *out,
                                      const void *dout, void *const *din, void *user);
/* y = forward(in...), dtype of in[0], shape out_shape; at most 3 inputs */
QKV_API qkv_tensor *qkv_custom(qkv_ctx *ctx, const char *name, qkv_tensor *const *in, int n, int out_ndim,
                       const int64_t *out_shape, qkv_custom_forward_fn forward,
                       qkv_custom_backward_fn backward, void *user);

#endif
