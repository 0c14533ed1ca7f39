/* Every differentiable op against central finite differences in double precision
 * (PyTorch gradcheck's bar), its float32 results against the double ones, and proof
 * that the harness fails on a deliberately wrong backward rule. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "autograd/tape.h"
#include "tensor/parallel.h"
#include "tensor/rng.h"
#include "suites.h"
#include "testutil.h"

/* ---- the functions under test ------------------------------------------------------ */

typedef struct { int ta, tb; } mm_flags;
typedef struct { int axis; bool keepdim; } axis_arg;
typedef struct { int a1, a2; } axes_arg;
typedef struct { int axis; int64_t start, len; } slice_arg;

static qkv_tensor *f_matmul(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) {
    (void)n;
    mm_flags *f = u;
    return qkv_matmul(c, x[0], x[1], f->ta, f->tb);
}
static qkv_tensor *f_linear(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) {
    (void)u;
    return qkv_linear(c, x[0], x[1], n > 2 ? x[2] : NULL);
}
/* u: the activation (a qkv_op) */
static qkv_tensor *f_linear_act(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) {
    return qkv_linear_act(c, x[0], x[1], n > 2 ? x[2] : NULL, *(const qkv_op *)u);
}
static qkv_tensor *f_add(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) { (void)n; (void)u; return qkv_add(c, x[0], x[1]); }
/* one tensor on both sides: the first gradient write assigns, the second adds */
static qkv_tensor *f_add_self(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) { (void)n; (void)u; return qkv_add(c, x[0], x[0]); }
static qkv_tensor *f_sub_self_sq(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) {
    (void)n; (void)u;
    return qkv_sub(c, qkv_mul(c, x[0], x[0]), x[0]);
}
static qkv_tensor *f_sub(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) { (void)n; (void)u; return qkv_sub(c, x[0], x[1]); }
static qkv_tensor *f_mul(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) { (void)n; (void)u; return qkv_mul(c, x[0], x[1]); }
static qkv_tensor *f_div(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) { (void)n; (void)u; return qkv_div(c, x[0], x[1]); }
static qkv_tensor *f_scale(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) { (void)n; (void)u; return qkv_scale(c, x[0], -1.7); }
static qkv_tensor *f_add_scalar(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) { (void)n; (void)u; return qkv_add_scalar(c, x[0], 0.3); }
static qkv_tensor *f_sum(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) {
    (void)n;
    axis_arg *a = u;
    return qkv_sum(c, x[0], a->axis, a->keepdim);
}
static qkv_tensor *f_mean(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) {
    (void)n;
    axis_arg *a = u;
    return qkv_mean(c, x[0], a->axis, a->keepdim);
}
static qkv_tensor *f_exp(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) { (void)n; (void)u; return qkv_exp(c, x[0]); }
static qkv_tensor *f_log(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) { (void)n; (void)u; return qkv_log(c, x[0]); }
static qkv_tensor *f_tanh(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) { (void)n; (void)u; return qkv_tanh(c, x[0]); }
static qkv_tensor *f_sqrt(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) { (void)n; (void)u; return qkv_sqrt(c, x[0]); }
static qkv_tensor *f_relu(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) { (void)n; (void)u; return qkv_relu(c, x[0]); }
static qkv_tensor *f_gelu(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) { (void)n; (void)u; return qkv_gelu(c, x[0]); }
static qkv_tensor *f_gelu_tanh(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) { (void)n; (void)u; return qkv_gelu_tanh(c, x[0]); }
static qkv_tensor *f_sigmoid(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) { (void)n; (void)u; return qkv_sigmoid(c, x[0]); }
static qkv_tensor *f_softmax(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) { (void)n; (void)u; return qkv_softmax(c, x[0]); }
static qkv_tensor *f_log_softmax(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) { (void)n; (void)u; return qkv_log_softmax(c, x[0]); }
static qkv_tensor *f_masked_softmax(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) {
    (void)n;
    return qkv_masked_softmax(c, x[0], u, 0.7, -INFINITY);
}
static qkv_tensor *f_masked_softmax_1e20(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) {
    (void)n;
    return qkv_masked_softmax(c, x[0], u, 0.25, -1e20);
}
static qkv_tensor *f_scaled_softmax(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) {
    (void)n; (void)u;
    return qkv_masked_softmax(c, x[0], NULL, -1.3, 0);
}
static qkv_tensor *f_layernorm(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) {
    (void)u;
    return qkv_layernorm(c, x[0], n > 1 ? x[1] : NULL, n > 2 ? x[2] : NULL, 1e-5);
}
/* add_layernorm: x[0] + x[1] (x[0] alone when n is 1: x + x), then the norm with x[2] as the weight,
 * the bias or both; the result y, h, or y + 0.7 h (both outputs reached) */
typedef struct { bool w, b; int outs; /* 0: y, 1: h, 2: y + 0.7 h */ } addln_arg;
static qkv_tensor *addln_pick(qkv_ctx *c, qkv_tensor *y, qkv_tensor *h, const addln_arg *a) {
    return a->outs == 0 ? y : a->outs == 1 ? h : qkv_add(c, y, qkv_scale(c, h, 0.7));
}
static qkv_tensor *f_add_layernorm(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) {
    const addln_arg *a = u;
    qkv_tensor *h, *p = n > 2 ? x[2] : NULL;
    qkv_tensor *y = qkv_add_layernorm(c, x[0], n > 1 ? x[1] : x[0], a->w ? p : NULL, a->b ? p : NULL, 1e-5, &h);
    return y ? addln_pick(c, y, h, a) : NULL;
}
/* the same composed: qkv_add, then qkv_layernorm */
static qkv_tensor *f_add_layernorm_composed(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) {
    const addln_arg *a = u;
    qkv_tensor *p = n > 2 ? x[2] : NULL, *h = qkv_add(c, x[0], n > 1 ? x[1] : x[0]);
    qkv_tensor *y = qkv_layernorm(c, h, a->w ? p : NULL, a->b ? p : NULL, 1e-5);
    return y ? addln_pick(c, y, h, a) : NULL;
}
static qkv_tensor *f_embedding(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) { (void)n; return qkv_embedding(c, x[0], u); }
static qkv_tensor *f_cross_entropy(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) {
    (void)n;
    return qkv_cross_entropy(c, x[0], u, -100);
}
static qkv_tensor *f_masked_fill(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) {
    (void)n;
    return qkv_masked_fill(c, x[0], u, -3.0);
}
/* rotary positions over heads of *u dimensions, base 10000 */
static qkv_tensor *f_rope(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) {
    (void)n;
    return qkv_rope(c, x[0], *(const int *)u, 10000.0);
}
static const int HD4 = 4, HD2 = 2;
/* exclusive self attention over heads of *u dimensions (x[0] the outputs, x[1] the values) */
static qkv_tensor *f_exclusive(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) {
    (void)n;
    return qkv_exclusive(c, x[0], x[1], *(const int *)u);
}
static const int HD3 = 3;
static qkv_tensor *f_reshape(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) {
    (void)n; (void)u;
    int64_t s[3] = {2, -1, 3};
    return qkv_reshape(c, x[0], 3, s);
}
static qkv_tensor *f_transpose(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) {
    (void)n;
    axes_arg *a = u;
    return qkv_transpose(c, x[0], a->a1, a->a2);
}
static qkv_tensor *f_slice(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) {
    (void)n;
    slice_arg *a = u;
    return qkv_slice(c, x[0], a->axis, a->start, a->len);
}
static qkv_tensor *f_concat(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) { return qkv_concat(c, x, n, *(int *)u); }

/* fused attention; one input: q = k = v; two: q = k, v (kv_tied: q, k = v); three: q, k, v.
 * kv_heads (0: heads) heads of keys and values, ALiBi slopes (or NULL) */
typedef struct { int heads; bool causal; const qkv_tensor *mask; double scale; int kv_heads; const double *slopes;
                 bool kv_tied; } sdpa_arg;
static qkv_tensor *f_sdpa(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) {
    const sdpa_arg *a = u;
    qkv_tensor *k = n > 2 || a->kv_tied ? x[1] : x[0], *v = x[n - 1];
    if (!a->kv_heads && !a->slopes) return qkv_sdp_attention(c, x[0], k, v, a->heads, a->mask, a->causal, a->scale, NULL);
    return qkv_sdp_attention_ex(c, x[0], k, v, a->heads, a->kv_heads ? a->kv_heads : a->heads, a->mask, a->causal,
                                a->scale, a->slopes, NULL);
}

/* differential attention (composed). Three inputs q, k, v: lambda = 0.5 + 0.1 mean(v), no norm
 * scale; or one tensor as q = k = v with lambda (1) and the norm scale (hd) as inputs */
typedef struct { int heads; bool causal; const qkv_tensor *mask; double scale, lambda_init; } diff_arg;
static qkv_tensor *f_diff(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) {
    const diff_arg *a = u;
    if (n == 3 && x[1]->ndim == 1)
        return qkv_diff_attention(c, x[0], x[0], x[0], a->heads, a->mask, a->causal, a->scale, x[1], a->lambda_init,
                                  x[2], 1e-5, NULL);
    qkv_tensor *lambda = qkv_add_scalar(c, qkv_scale(c, qkv_mean_all(c, x[2]), 0.1), 0.5);
    return qkv_diff_attention(c, x[0], x[1], x[2], a->heads, a->mask, a->causal, a->scale, lambda, a->lambda_init,
                              NULL, 1e-5, NULL);
}
/* the same through the composed reference (qkv__diff_attention_composed) */
static qkv_tensor *f_diff_composed(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) {
    const diff_arg *a = u;
    if (n == 3 && x[1]->ndim == 1)
        return qkv__diff_attention_composed(c, x[0], x[0], x[0], a->heads, a->mask, a->causal, a->scale, x[1],
                                            a->lambda_init, x[2], 1e-5, NULL);
    qkv_tensor *lambda = qkv_add_scalar(c, qkv_scale(c, qkv_mean_all(c, x[2]), 0.1), 0.5);
    return qkv__diff_attention_composed(c, x[0], x[1], x[2], a->heads, a->mask, a->causal, a->scale, lambda,
                                        a->lambda_init, NULL, 1e-5, NULL);
}
/* talking heads (composed): q = k = v, the logits' map, the weights' map; or q, k = v (kv_heads
 * heads), one map for both */
typedef struct { int heads, kv_heads; bool causal; const qkv_tensor *mask; double scale; } th_arg;
static qkv_tensor *f_talking(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) {
    (void)n;
    const th_arg *a = u;
    if (x[1]->ndim == 2) return qkv_talking_heads_attention(c, x[0], x[0], x[0], a->heads, a->heads, a->mask, a->causal,
                                                            a->scale, x[1], x[2], NULL);
    return qkv_talking_heads_attention(c, x[0], x[1], x[1], a->heads, a->kv_heads, a->mask, a->causal, a->scale, x[2],
                                       x[2], NULL);
}

/* the diamond: one tensor used as Q, K and V: softmax(X X^T / sqrt d) X */
static qkv_tensor *f_qkv_diamond(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) {
    (void)n; (void)u;
    qkv_tensor *s = qkv_scale(c, qkv_matmul(c, x[0], x[0], false, true), 1 / sqrt(4.0));
    return qkv_matmul(c, qkv_softmax(c, s), x[0], false, false);
}
/* a chain of several ops, as a module builds them */
static qkv_tensor *f_chain(qkv_ctx *c, qkv_tensor *const *x, int n, void *u) {
    (void)n; (void)u;
    qkv_tensor *h = qkv_layernorm(c, x[0], x[2], NULL, 1e-5);
    h = qkv_gelu(c, qkv_matmul(c, h, x[1], false, true));
    return qkv_mean(c, qkv_mul(c, h, h), -1, false);
}

/* ---- the case table ---------------------------------------------------------------- */

enum { DOM_NORMAL, DOM_POSITIVE, DOM_AWAY0 };

typedef struct {
    const char *name;
    qkv_gradcheck_fn fn;
    void *user;
    int n;
    int dom;                     /* input domain */
    int nd[3];
    int64_t shape[3][4];
    int no_grad[3];              /* 1: that input does not require grad */
} gcase;

static qkv_op ACT_GELU = QKV_OP_GELU, ACT_GELU_TANH = QKV_OP_GELU_TANH, ACT_RELU = QKV_OP_RELU;
static mm_flags MM00 = {0, 0}, MM01 = {0, 1}, MM10 = {1, 0}, MM11 = {1, 1};
static axis_arg AX0 = {0, false}, AX1K = {1, true}, AXM1 = {-1, false}, AX2 = {2, false};
static axes_arg HEADS = {1, 2}, LAST2 = {-1, -2}, AX03 = {0, 3};
static slice_arg SL0 = {0, 1, 2}, SL1 = {1, 0, 3}, SLM1 = {-1, 2, 2};
static int CAT0 = 0, CAT1 = 1, CATM1 = -1;
static int32_t IDX_DATA[6] = {0, 4, 2, 4, 1, 0};
static int32_t TGT_DATA[6] = {1, 0, -100, 4, 2, 3};
static int32_t MASK_DATA[9] = {0, 1, 1, 0, 0, 1, 0, 0, 0}; /* causal (T,T), 1 = blocked */
/* (2,1,3,3): batch 0 blocks a future key and a whole row, batch 1 only the diagonal */
static int32_t MASK2_DATA[18] = {0, 0, 1, 1, 1, 1, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
static int32_t MASK70_DATA[70 * 70]; /* (70,70), an irregular pattern, filled by init_aux */
static qkv_tensor IDX, TGT, MASK, MASK2, MASK70;
static sdpa_arg SD_CAUSAL = {2, true, NULL, 0.6, 0, NULL, false}, SD_MASK = {2, false, &MASK2, 0.8, 0, NULL, false},
                SD_BOTH = {2, true, &MASK2, 0.5, 0, NULL, false}, SD_TIED = {3, true, NULL, 0.4, 0, NULL, false},
                SD_BLOCKS = {2, true, &MASK70, 0.7, 0, NULL, false}, SD_DENSE = {1, false, NULL, 1.1, 0, NULL, false};
/* grouped-query attention (kv_heads < heads; 1: multi-query) and ALiBi slopes, alone and together */
static const double SLOPES2[2] = {0.9, 0.3}, SLOPES3[3] = {0.7, 0.2, 1.3}, SLOPES4[4] = {0.5, 0.25, 0.125, 0.0625};
static sdpa_arg SD_GQA = {4, true, NULL, 0.6, 2, NULL, false}, SD_MQA_MASK = {3, false, &MASK2, 0.8, 1, NULL, false},
                SD_ALIBI = {2, true, NULL, 0.7, 0, SLOPES2, false},
                SD_ALIBI_MASK = {3, false, &MASK2, 0.5, 0, SLOPES3, false},
                SD_GQA_ALIBI_BLOCKS = {4, true, &MASK70, 0.7, 2, SLOPES4, false},
                SD_MQA_KV_TIED = {4, true, NULL, 0.5, 1, SLOPES4, true},
                SD_MQA_DENSE = {4, false, NULL, 0.9, 1, NULL, false};

static addln_arg ALN_W_BOTH = {true, false, 2}, ALN_B_BOTH = {false, true, 2}, ALN_PLAIN_Y = {false, false, 0},
                 ALN_H = {false, false, 1}, ALN_WB_BOTH = {true, true, 2}, ALN_WB_Y = {true, true, 0};
static diff_arg DF_CAUSAL = {2, true, NULL, 0.7, 0.2}, DF_BOTH = {2, true, &MASK2, 0.9, 0.6},
                DF_DENSE = {1, false, NULL, 0.5, 0.45};
static th_arg TH_CAUSAL = {3, 3, true, NULL, 0.6}, TH_MASK = {2, 2, false, &MASK2, 0.8},
              TH_GQA = {4, 2, true, &MASK2, 0.5};

static const gcase CASES[] = {
    {"matmul", f_matmul, &MM00, 2, DOM_NORMAL, {2, 2}, {{3, 4}, {4, 5}}, {0}},
    {"matmul_tb", f_matmul, &MM01, 2, DOM_NORMAL, {2, 2}, {{3, 4}, {5, 4}}, {0}},
    {"matmul_ta", f_matmul, &MM10, 2, DOM_NORMAL, {2, 2}, {{4, 3}, {4, 5}}, {0}},
    {"matmul_ta_tb", f_matmul, &MM11, 2, DOM_NORMAL, {2, 2}, {{4, 3}, {5, 4}}, {0}},
    {"matmul_batched_bhtd", f_matmul, &MM01, 2, DOM_NORMAL, {4, 4}, {{2, 2, 3, 4}, {2, 2, 5, 4}}, {0}},
    {"matmul_batched_ta", f_matmul, &MM10, 2, DOM_NORMAL, {3, 3}, {{2, 4, 3}, {2, 4, 2}}, {0}},
    {"matmul_shared_weight", f_matmul, &MM01, 2, DOM_NORMAL, {3, 2}, {{2, 3, 4}, {5, 4}}, {0}},
    {"matmul_shared_weight_ta", f_matmul, &MM10, 2, DOM_NORMAL, {3, 2}, {{2, 4, 3}, {4, 2}}, {0}},
    {"matmul_shared_left", f_matmul, &MM00, 2, DOM_NORMAL, {2, 3}, {{3, 4}, {2, 4, 2}}, {0}},
    {"matmul_const_b", f_matmul, &MM00, 2, DOM_NORMAL, {2, 2}, {{3, 4}, {4, 2}}, {0, 1}},
    {"linear", f_linear, NULL, 3, DOM_NORMAL, {3, 2, 1}, {{2, 3, 4}, {5, 4}, {5}}, {0}},
    {"linear_no_bias", f_linear, NULL, 2, DOM_NORMAL, {2, 2}, {{3, 4}, {2, 4}}, {0}},
    {"linear_const_weight", f_linear, NULL, 3, DOM_NORMAL, {2, 2, 1}, {{3, 4}, {2, 4}, {2}}, {0, 1, 0}},
    /* linear with its bias and activation as the epilogue */
    {"linear_act_gelu", f_linear_act, &ACT_GELU, 3, DOM_NORMAL, {3, 2, 1}, {{2, 3, 4}, {5, 4}, {5}}, {0}},
    {"linear_act_gelu_no_bias", f_linear_act, &ACT_GELU, 2, DOM_NORMAL, {2, 2}, {{3, 4}, {2, 4}}, {0}},
    {"linear_act_gelu_tanh", f_linear_act, &ACT_GELU_TANH, 3, DOM_NORMAL, {2, 2, 1}, {{3, 4}, {6, 4}, {6}}, {0}},
    {"linear_act_relu", f_linear_act, &ACT_RELU, 3, DOM_NORMAL, {2, 2, 1}, {{3, 4}, {6, 4}, {6}}, {0}},
    {"add", f_add, NULL, 2, DOM_NORMAL, {2, 2}, {{3, 4}, {3, 4}}, {0}},
    {"add_bias", f_add, NULL, 2, DOM_NORMAL, {3, 1}, {{2, 3, 4}, {4}}, {0}},
    {"add_mask_over_bhtt", f_add, NULL, 2, DOM_NORMAL, {4, 2}, {{2, 2, 3, 3}, {3, 3}}, {0}},
    {"add_col", f_add, NULL, 2, DOM_NORMAL, {2, 2}, {{3, 1}, {1, 4}}, {0}},
    {"add_self", f_add_self, NULL, 1, DOM_NORMAL, {2}, {{3, 4}}, {0}},
    {"mul_self_minus_self", f_sub_self_sq, NULL, 1, DOM_NORMAL, {2}, {{3, 4}}, {0}},
    {"sub_bias", f_sub, NULL, 2, DOM_NORMAL, {2, 1}, {{3, 4}, {4}}, {0}},
    {"sub_left_bcast", f_sub, NULL, 2, DOM_NORMAL, {2, 3}, {{3, 1}, {2, 3, 4}}, {0}},
    {"mul", f_mul, NULL, 2, DOM_NORMAL, {2, 2}, {{3, 4}, {3, 4}}, {0}},
    {"mul_bcast", f_mul, NULL, 2, DOM_NORMAL, {4, 3}, {{2, 2, 3, 4}, {2, 1, 4}}, {0}},
    {"div", f_div, NULL, 2, DOM_AWAY0, {2, 2}, {{3, 4}, {3, 4}}, {0}},
    {"div_bcast", f_div, NULL, 2, DOM_AWAY0, {3, 2}, {{2, 3, 4}, {3, 1}}, {0}},
    {"scale", f_scale, NULL, 1, DOM_NORMAL, {3}, {{2, 3, 4}}, {0}},
    {"add_scalar", f_add_scalar, NULL, 1, DOM_NORMAL, {2}, {{3, 4}}, {0}},
    {"sum_axis0", f_sum, &AX0, 1, DOM_NORMAL, {3}, {{2, 3, 4}}, {0}},
    {"sum_axis1_keepdim", f_sum, &AX1K, 1, DOM_NORMAL, {3}, {{2, 3, 4}}, {0}},
    {"sum_last", f_sum, &AXM1, 1, DOM_NORMAL, {2}, {{3, 5}}, {0}},
    {"mean_axis2", f_mean, &AX2, 1, DOM_NORMAL, {4}, {{2, 2, 3, 2}}, {0}},
    {"mean_axis0", f_mean, &AX0, 1, DOM_NORMAL, {2}, {{4, 3}}, {0}},
    {"exp", f_exp, NULL, 1, DOM_NORMAL, {2}, {{3, 4}}, {0}},
    {"log", f_log, NULL, 1, DOM_POSITIVE, {2}, {{3, 4}}, {0}},
    {"tanh", f_tanh, NULL, 1, DOM_NORMAL, {2}, {{3, 4}}, {0}},
    {"sqrt", f_sqrt, NULL, 1, DOM_POSITIVE, {2}, {{3, 4}}, {0}},
    {"relu", f_relu, NULL, 1, DOM_AWAY0, {2}, {{3, 4}}, {0}},
    {"gelu", f_gelu, NULL, 1, DOM_NORMAL, {3}, {{2, 3, 4}}, {0}},
    {"gelu_tanh", f_gelu_tanh, NULL, 1, DOM_NORMAL, {3}, {{2, 3, 4}}, {0}},
    {"sigmoid", f_sigmoid, NULL, 1, DOM_NORMAL, {2}, {{3, 4}}, {0}},
    {"softmax", f_softmax, NULL, 1, DOM_NORMAL, {2}, {{3, 5}}, {0}},
    {"softmax_4d", f_softmax, NULL, 1, DOM_NORMAL, {4}, {{2, 2, 3, 3}}, {0}},
    {"masked_softmax", f_masked_softmax, &MASK, 1, DOM_NORMAL, {4}, {{2, 2, 3, 3}}, {0}},
    {"masked_softmax_finite_fill", f_masked_softmax_1e20, &MASK, 1, DOM_NORMAL, {3}, {{2, 3, 3}}, {0}},
    {"scaled_softmax_no_mask", f_scaled_softmax, NULL, 1, DOM_NORMAL, {2}, {{3, 4}}, {0}},
    {"log_softmax", f_log_softmax, NULL, 1, DOM_NORMAL, {3}, {{2, 3, 4}}, {0}},
    {"layernorm_affine", f_layernorm, NULL, 3, DOM_NORMAL, {3, 1, 1}, {{2, 3, 5}, {5}, {5}}, {0}},
    {"layernorm_weight_only", f_layernorm, NULL, 2, DOM_NORMAL, {2, 1}, {{4, 6}, {6}}, {0}},
    {"layernorm_plain", f_layernorm, NULL, 1, DOM_NORMAL, {2}, {{3, 4}}, {0}},
    /* the residual add and the norm of its sum as one op (two outputs) */
    {"add_layernorm_weight", f_add_layernorm, &ALN_W_BOTH, 3, DOM_NORMAL, {3, 3, 1}, {{2, 3, 5}, {2, 3, 5}, {5}}, {0}},
    {"add_layernorm_bias_bcast", f_add_layernorm, &ALN_B_BOTH, 3, DOM_NORMAL, {3, 2, 1}, {{2, 3, 5}, {3, 5}, {5}}, {0}},
    {"add_layernorm_plain_y", f_add_layernorm, &ALN_PLAIN_Y, 2, DOM_NORMAL, {2, 2}, {{3, 4}, {3, 4}}, {0}},
    {"add_layernorm_h_only_bcast", f_add_layernorm, &ALN_H, 2, DOM_NORMAL, {3, 1}, {{2, 3, 4}, {4}}, {0}},
    {"add_layernorm_self", f_add_layernorm, &ALN_W_BOTH, 1, DOM_NORMAL, {2}, {{3, 6}}, {0}},
    {"add_layernorm_tied_affine", f_add_layernorm, &ALN_WB_BOTH, 3, DOM_NORMAL, {2, 2, 1}, {{4, 6}, {4, 6}, {6}}, {0}},
    {"add_layernorm_const_a_rows", f_add_layernorm, &ALN_WB_Y, 3, DOM_NORMAL, {2, 2, 1}, {{70, 3}, {70, 3}, {3}},
     {0, 1, 0}},
    {"embedding", f_embedding, &IDX, 1, DOM_NORMAL, {2}, {{5, 3}}, {0}},
    {"cross_entropy", f_cross_entropy, &TGT, 1, DOM_NORMAL, {3}, {{2, 3, 5}}, {0}},
    {"masked_fill", f_masked_fill, &MASK, 1, DOM_NORMAL, {4}, {{2, 2, 3, 3}}, {0}},
    {"rope_two_heads", f_rope, (void *)&HD4, 1, DOM_NORMAL, {3}, {{2, 3, 8}}, {0}},
    {"rope_one_pair_long", f_rope, (void *)&HD2, 1, DOM_NORMAL, {3}, {{1, 7, 2}}, {0}},
    {"exclusive_heads", f_exclusive, (void *)&HD3, 2, DOM_NORMAL, {3, 3}, {{2, 3, 6}, {2, 3, 6}}, {0}},
    {"exclusive_grouped", f_exclusive, (void *)&HD4, 2, DOM_NORMAL, {3, 3}, {{2, 3, 8}, {2, 3, 4}}, {0}},
    {"reshape", f_reshape, NULL, 1, DOM_NORMAL, {2}, {{4, 3}}, {0}},
    {"transpose_heads", f_transpose, &HEADS, 1, DOM_NORMAL, {4}, {{2, 3, 2, 4}}, {0}},
    {"transpose_last2", f_transpose, &LAST2, 1, DOM_NORMAL, {3}, {{2, 3, 4}}, {0}},
    {"transpose_0_3", f_transpose, &AX03, 1, DOM_NORMAL, {4}, {{2, 1, 3, 4}}, {0}},
    {"slice_axis0", f_slice, &SL0, 1, DOM_NORMAL, {2}, {{4, 3}}, {0}},
    {"slice_axis1", f_slice, &SL1, 1, DOM_NORMAL, {3}, {{2, 4, 3}}, {0}},
    {"slice_last", f_slice, &SLM1, 1, DOM_NORMAL, {3}, {{2, 3, 5}}, {0}},
    {"concat_axis0", f_concat, &CAT0, 2, DOM_NORMAL, {2, 2}, {{2, 3}, {1, 3}}, {0}},
    {"concat_axis1", f_concat, &CAT1, 3, DOM_NORMAL, {3, 3, 3}, {{2, 1, 3}, {2, 2, 3}, {2, 3, 3}}, {0}},
    {"concat_last", f_concat, &CATM1, 2, DOM_NORMAL, {2, 2}, {{3, 2}, {3, 4}}, {0, 1}},
    {"sdp_attention_causal", f_sdpa, &SD_CAUSAL, 3, DOM_NORMAL, {3, 3, 3}, {{2, 4, 6}, {2, 4, 6}, {2, 4, 6}}, {0}},
    {"sdp_attention_mask", f_sdpa, &SD_MASK, 3, DOM_NORMAL, {3, 3, 3}, {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}}, {0}},
    {"sdp_attention_causal_mask", f_sdpa, &SD_BOTH, 3, DOM_NORMAL, {3, 3, 3}, {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}}, {0}},
    {"sdp_attention_dense", f_sdpa, &SD_DENSE, 3, DOM_NORMAL, {3, 3, 3}, {{1, 5, 3}, {1, 5, 3}, {1, 5, 3}}, {0}},
    {"sdp_attention_q_eq_k_eq_v", f_sdpa, &SD_TIED, 1, DOM_NORMAL, {3}, {{2, 4, 6}}, {0}},
    {"sdp_attention_q_eq_k", f_sdpa, &SD_TIED, 2, DOM_NORMAL, {3, 3}, {{2, 4, 6}, {2, 4, 6}}, {0}},
    {"sdp_attention_const_v", f_sdpa, &SD_CAUSAL, 3, DOM_NORMAL, {3, 3, 3}, {{1, 3, 4}, {1, 3, 4}, {1, 3, 4}}, {0, 0, 1}},
    {"sdp_attention_row_blocks", f_sdpa, &SD_BLOCKS, 3, DOM_NORMAL, {3, 3, 3}, {{1, 70, 4}, {1, 70, 4}, {1, 70, 4}}, {0}},
    {"sdp_attention_gqa", f_sdpa, &SD_GQA, 3, DOM_NORMAL, {3, 3, 3}, {{2, 4, 8}, {2, 4, 4}, {2, 4, 4}}, {0}},
    {"sdp_attention_mqa_mask", f_sdpa, &SD_MQA_MASK, 3, DOM_NORMAL, {3, 3, 3}, {{2, 3, 6}, {2, 3, 2}, {2, 3, 2}}, {0}},
    {"sdp_attention_mqa_dense", f_sdpa, &SD_MQA_DENSE, 3, DOM_NORMAL, {3, 3, 3}, {{1, 5, 8}, {1, 5, 2}, {1, 5, 2}}, {0}},
    {"sdp_attention_mqa_k_eq_v", f_sdpa, &SD_MQA_KV_TIED, 2, DOM_NORMAL, {3, 3}, {{2, 4, 8}, {2, 4, 2}}, {0}},
    {"sdp_attention_gqa_const_v", f_sdpa, &SD_GQA, 3, DOM_NORMAL, {3, 3, 3}, {{1, 3, 8}, {1, 3, 4}, {1, 3, 4}}, {0, 0, 1}},
    {"sdp_attention_alibi", f_sdpa, &SD_ALIBI, 3, DOM_NORMAL, {3, 3, 3}, {{2, 5, 4}, {2, 5, 4}, {2, 5, 4}}, {0}},
    {"sdp_attention_alibi_mask", f_sdpa, &SD_ALIBI_MASK, 3, DOM_NORMAL, {3, 3, 3}, {{2, 3, 6}, {2, 3, 6}, {2, 3, 6}}, {0}},
    {"sdp_attention_gqa_alibi_row_blocks", f_sdpa, &SD_GQA_ALIBI_BLOCKS, 3, DOM_NORMAL, {3, 3, 3},
     {{1, 70, 8}, {1, 70, 4}, {1, 70, 4}}, {0}},
    {"diff_attention_causal", f_diff, &DF_CAUSAL, 3, DOM_NORMAL, {3, 3, 3}, {{2, 4, 8}, {2, 4, 8}, {2, 4, 8}}, {0}},
    {"diff_attention_causal_mask", f_diff, &DF_BOTH, 3, DOM_NORMAL, {3, 3, 3}, {{2, 3, 8}, {2, 3, 8}, {2, 3, 8}}, {0}},
    {"diff_attention_lambda_norm", f_diff, &DF_CAUSAL, 3, DOM_NORMAL, {3, 1, 1}, {{2, 4, 8}, {1}, {4}}, {0}},
    {"diff_attention_dense", f_diff, &DF_DENSE, 3, DOM_NORMAL, {3, 1, 1}, {{1, 5, 6}, {1}, {6}}, {0}},
    {"talking_heads_causal", f_talking, &TH_CAUSAL, 3, DOM_NORMAL, {3, 2, 2}, {{2, 4, 6}, {3, 3}, {3, 3}}, {0}},
    {"talking_heads_mask", f_talking, &TH_MASK, 3, DOM_NORMAL, {3, 2, 2}, {{2, 3, 4}, {2, 2}, {2, 2}}, {0}},
    {"talking_heads_gqa_mask", f_talking, &TH_GQA, 3, DOM_NORMAL, {3, 3, 2}, {{2, 3, 8}, {2, 3, 4}, {4, 4}}, {0}},
    {"diamond_q_eq_k_eq_v", f_qkv_diamond, NULL, 1, DOM_NORMAL, {2}, {{5, 4}}, {0}},
    {"chain_ln_linear_gelu", f_chain, NULL, 3, DOM_NORMAL, {3, 2, 1}, {{2, 3, 4}, {5, 4}, {4}}, {0}},
};
#define NCASES ((int)(sizeof CASES / sizeof CASES[0]))

static void init_aux(void) {
    int64_t s6 = 6, s33[2] = {3, 3}, s23[2] = {2, 3};
    qkv_shape_init(&IDX, QKV_I32, 1, &s6);
    IDX.data = IDX_DATA;
    qkv_shape_init(&TGT, QKV_I32, 2, s23);
    TGT.data = TGT_DATA;
    qkv_shape_init(&MASK, QKV_I32, 2, s33);
    MASK.data = MASK_DATA;
    int64_t s2133[4] = {2, 1, 3, 3}, s70[2] = {70, 70};
    qkv_shape_init(&MASK2, QKV_I32, 4, s2133);
    MASK2.data = MASK2_DATA;
    for (int i = 0; i < 70 * 70; i++) MASK70_DATA[i] = (i / 70 * 5 + i % 70 * 3) % 7 == 0;
    qkv_shape_init(&MASK70, QKV_I32, 2, s70);
    MASK70.data = MASK70_DATA;
}

/* random F64 inputs for a case, seeded by its index */
static int make_inputs(const gcase *gc, int seed, qkv_tensor **in) {
    qkv_rng r;
    qkv_rng_seed(&r, 1000 + (uint64_t)seed);
    for (int i = 0; i < gc->n; i++) {
        in[i] = qkv_tensor_zeros(QKV_F64, gc->nd[i], gc->shape[i]);
        if (!in[i]) return -1;
        double *d = in[i]->data;
        for (int64_t j = 0; j < in[i]->numel; j++) {
            double v = qkv_rng_normal(&r);
            if (gc->dom == DOM_POSITIVE) v = 0.5 + fabs(v);
            if (gc->dom == DOM_AWAY0) v = (v < 0 ? -0.3 : 0.3) + v; /* |v| >= 0.3: no kink or pole */
            d[j] = v;
        }
        if (!gc->no_grad[i] && qkv_tensor_require_grad(in[i])) return -1;
    }
    return 0;
}


START_TEST(test_op_gradcheck) {
    init_aux();
    const gcase *gc = &CASES[_i];
    qkv_tensor *in[3] = {0};
    ck_assert_int_eq(make_inputs(gc, _i, in), 0);
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_gradcheck_result res;
    qkv_err err;
    int rc = qkv_gradcheck(ctx, gc->fn, in, gc->n, gc->user, NULL, &res, &err);
    ck_assert_msg(rc != -1, "%s: %s", gc->name, err.msg);
    ck_assert_msg(rc == 0 && res.failed == 0,
                  "%s: %lld of %lld elements fail; worst input %d [%lld]: analytic %.10g numeric %.10g",
                  gc->name, (long long)res.failed, (long long)res.checked, res.worst_input,
                  (long long)res.worst_index, res.worst_analytic, res.worst_numeric);
    int64_t expect = 0;
    for (int i = 0; i < gc->n; i++) expect += gc->no_grad[i] ? 0 : in[i]->numel;
    ck_assert_int_eq(res.checked, expect); /* every element was checked */
    if (getenv("QKV_TEST_VERBOSE")) /* `QKV_TEST_VERBOSE=1 make test` lists the errors */
        fprintf(stderr, "gradcheck %-26s %4lld elements, max |analytic-numeric| %.3g, max excess %.3g\n",
                gc->name, (long long)res.checked, res.max_abs_err, res.max_excess);

    /* float32 agrees with float64 to float precision */
    double out_rel, grad_rel;
    ck_assert_int_eq(qkv_gradcheck_f32_vs_f64(ctx, gc->fn, in, gc->n, gc->user, 0, &out_rel, &grad_rel, &err), 0);
    ck_assert_msg(out_rel < 1e-5 && grad_rel < 1e-4, "%s: f32 vs f64: output %.3g, grads %.3g",
                  gc->name, out_rel, grad_rel);
    for (int i = 0; i < gc->n; i++) qkv_tensor_free(in[i]);
    qkv_ctx_free(ctx);
}
END_TEST

/* every op in the enum has at least one case above (custom is covered in test_tape.c) */
START_TEST(test_every_op_covered) {
    init_aux();
    bool seen[QKV_OP_COUNT] = {0};
    qkv_ctx *ctx = qkv_ctx_new();
    for (int i = 0; i < NCASES; i++) {
        qkv_tensor *in[3] = {0};
        ck_assert_int_eq(make_inputs(&CASES[i], i, in), 0);
        qkv_ctx_reset(ctx);
        ck_assert_ptr_nonnull(CASES[i].fn(ctx, in, CASES[i].n, CASES[i].user));
        for (const qkv_record *r = ((struct qkv_ctx *)ctx)->tape; r; r = r->prev) seen[r->op] = true;
        for (int j = 0; j < CASES[i].n; j++) qkv_tensor_free(in[j]);
    }
    qkv_ctx_free(ctx);
    for (int op = 0; op < QKV_OP_COUNT; op++)
        if (op != QKV_OP_CUSTOM) ck_assert_msg(seen[op], "op %s has no gradient check", qkv_op_name(op));
}
END_TEST

/* fused differential attention (one sdp_attention over the half-heads) against its composed
 * reference, in double: the same output and input gradients to rounding, in every diff case */
START_TEST(test_diff_fused_matches_composed) {
    init_aux();
    int checked = 0;
    for (int i = 0; i < NCASES; i++) {
        if (CASES[i].fn != f_diff) continue;
        qkv_tensor *in[3] = {0}, *in2[3] = {0};
        ck_assert_int_eq(make_inputs(&CASES[i], i, in), 0);
        ck_assert_int_eq(make_inputs(&CASES[i], i, in2), 0);
        qkv_ctx *c1 = qkv_ctx_new(), *c2 = qkv_ctx_new();
        qkv_tensor *y1 = f_diff(c1, in, CASES[i].n, CASES[i].user), *y2 = f_diff_composed(c2, in2, CASES[i].n, CASES[i].user);
        ck_assert_msg(y1 && y2, "%s: %s %s", CASES[i].name, qkv_ctx_error(c1), qkv_ctx_error(c2));
        for (int64_t e = 0; e < y1->numel; e++) {
            double a = ((double *)y1->data)[e], b = ((double *)y2->data)[e];
            ck_assert_msg(qkv_test_near(a, b, 1e-12), "%s: y[%lld] %.17g vs %.17g", CASES[i].name, (long long)e, a, b);
        }
        ck_assert_int_eq(qkv_backward(c1, qkv_sum_all(c1, qkv_mul(c1, y1, y1))), 0);
        ck_assert_int_eq(qkv_backward(c2, qkv_sum_all(c2, qkv_mul(c2, y2, y2))), 0);
        for (int k = 0; k < CASES[i].n; k++)
            for (int64_t e = 0; in[k]->grad && e < in[k]->numel; e++) {
                double a = ((double *)in[k]->grad)[e], b = ((double *)in2[k]->grad)[e];
                ck_assert_msg(qkv_test_near(a, b, 1e-10), "%s: input %d grad[%lld] %.17g vs %.17g",
                              CASES[i].name, k, (long long)e, a, b);
            }
        qkv_ctx_free(c1), qkv_ctx_free(c2);
        for (int k = 0; k < CASES[i].n; k++) qkv_tensor_free(in[k]), qkv_tensor_free(in2[k]);
        checked++;
    }
    ck_assert_int_ge(checked, 4);
}
END_TEST

/* add_layernorm against qkv_add then qkv_layernorm, in double: outputs and every input gradient
 * within 1e-12, in every add_layernorm case */
START_TEST(test_add_layernorm_matches_composed) {
    init_aux();
    int checked = 0;
    for (int i = 0; i < NCASES; i++) {
        if (CASES[i].fn != f_add_layernorm) continue;
        qkv_tensor *in[3] = {0}, *in2[3] = {0};
        ck_assert_int_eq(make_inputs(&CASES[i], i, in), 0);
        ck_assert_int_eq(make_inputs(&CASES[i], i, in2), 0);
        qkv_ctx *c1 = qkv_ctx_new(), *c2 = qkv_ctx_new();
        qkv_tensor *y1 = f_add_layernorm(c1, in, CASES[i].n, CASES[i].user);
        qkv_tensor *y2 = f_add_layernorm_composed(c2, in2, CASES[i].n, CASES[i].user);
        ck_assert_msg(y1 && y2, "%s: %s %s", CASES[i].name, qkv_ctx_error(c1), qkv_ctx_error(c2));
        for (int64_t e = 0; e < y1->numel; e++) {
            double a = ((double *)y1->data)[e], b = ((double *)y2->data)[e];
            ck_assert_msg(qkv_test_near(a, b, 1e-12), "%s: y[%lld] %.17g vs %.17g", CASES[i].name, (long long)e, a, b);
        }
        ck_assert_int_eq(qkv_backward(c1, qkv_sum_all(c1, qkv_mul(c1, y1, y1))), 0);
        ck_assert_int_eq(qkv_backward(c2, qkv_sum_all(c2, qkv_mul(c2, y2, y2))), 0);
        for (int k = 0; k < CASES[i].n; k++) {
            ck_assert_int_eq(in[k]->grad != NULL, in2[k]->grad != NULL);
            for (int64_t e = 0; in[k]->grad && e < in[k]->numel; e++) {
                double a = ((double *)in[k]->grad)[e], b = ((double *)in2[k]->grad)[e];
                ck_assert_msg(qkv_test_near(a, b, 1e-12), "%s: input %d grad[%lld] %.17g vs %.17g",
                              CASES[i].name, k, (long long)e, a, b);
            }
        }
        qkv_ctx_free(c1), qkv_ctx_free(c2);
        for (int k = 0; k < CASES[i].n; k++) qkv_tensor_free(in[k]), qkv_tensor_free(in2[k]);
        checked++;
    }
    ck_assert_int_ge(checked, 6);
}
END_TEST

/* in float, at a block's size (96 rows of 64: several blocks of the weight gradients' rows) and
 * with 1 and 2 threads, add_layernorm gives the composed ops' bits: the output, the sum, and every
 * gradient (the model's results do not change with the fusion). a: the same shape, or one
 * position table broadcast over the batch (the position embedding's add) */
START_TEST(test_add_layernorm_float_bits) {
    enum { B = 4, T = 24, D = 64 };
    int64_t s3[3] = {B, T, D}, s2[2] = {T, D}, s1[1] = {D};
    for (int bcast = 0; bcast < 2; bcast++)
        for (int threads = 1; threads <= 2; threads++) {
            ck_assert_int_eq(qkv_set_threads(threads), 0);
            qkv_rng rng;
            qkv_rng_seed(&rng, 11 + (uint64_t)bcast);
            /* x, a, w, b, and the weights of the loss on y and on h */
            qkv_tensor *t[6] = {qkv_test_randn(&rng, 3, s3, true), qkv_test_randn(&rng, bcast ? 2 : 3, bcast ? s2 : s3, true),
                                qkv_test_randn(&rng, 1, s1, true), qkv_test_randn(&rng, 1, s1, true),
                                qkv_test_randn(&rng, 3, s3, false), qkv_test_randn(&rng, 3, s3, false)};
            float *keep[2][6];
            void *own[4]; /* each input's own gradient buffer, set aside while the contexts give theirs */
            for (int k = 0; k < 4; k++) own[k] = t[k]->grad;
            for (int way = 0; way < 2; way++) {
                qkv_ctx *ctx = qkv_ctx_new();
                for (int k = 0; k < 4; k++) t[k]->grad = NULL;
                qkv_tensor *h, *y;
                if (way) {
                    h = qkv_add(ctx, t[0], t[1]);
                    y = qkv_layernorm(ctx, h, t[2], t[3], 1e-5);
                } else {
                    y = qkv_add_layernorm(ctx, t[0], t[1], t[2], t[3], 1e-5, &h);
                }
                ck_assert_msg(y && h, "%s", qkv_ctx_error(ctx));
                qkv_tensor *loss = qkv_add(ctx, qkv_sum_all(ctx, qkv_mul(ctx, y, t[4])), qkv_sum_all(ctx, qkv_mul(ctx, h, t[5])));
                ck_assert_int_eq(qkv_backward(ctx, loss), 0);
                const qkv_tensor *src[6] = {y, h, t[0], t[1], t[2], t[3]};
                for (int k = 0; k < 6; k++) {
                    size_t bytes = (size_t)src[k]->numel * sizeof(float);
                    keep[way][k] = malloc(bytes);
                    memcpy(keep[way][k], k < 2 ? src[k]->data : src[k]->grad, bytes);
                }
                for (int k = 0; k < 4; k++) t[k]->grad = NULL; /* arena memory: gone with the context */
                qkv_ctx_free(ctx);
            }
            const char *what[6] = {"y", "h", "dx", "da", "dw", "db"};
            for (int k = 0; k < 6; k++) {
                size_t numel = (size_t)(k < 3 ? B * T * D : k == 3 ? t[1]->numel : D);
                ck_assert_msg(!memcmp(keep[0][k], keep[1][k], numel * sizeof(float)),
                              "bcast %d threads %d: %s differs from the composed ops'", bcast, threads, what[k]);
                free(keep[0][k]);
                free(keep[1][k]);
            }
            for (int k = 0; k < 4; k++) t[k]->grad = own[k];
            for (int k = 0; k < 6; k++) qkv_tensor_free(t[k]);
        }
    qkv_set_threads(1);
}
END_TEST

/* ---- the harness must fail on wrong rules -------------------------------------------- */

/* softmax without the "- sum(dy*y)" term: a classic mistake */
static int wrong_softmax(qkv_ctx *ctx, const qkv_record *r) {
    double *dx = qkv__grad(ctx, r->in[0]);
    const double *y = r->out->data, *dy = r->out->grad;
    for (int64_t i = 0; i < r->out->numel; i++) dx[i] += y[i] * dy[i];
    return 0;
}
/* the tanh-approximation derivative for the exact (erf) GELU: off by at most ~1e-3 */
static int wrong_gelu(qkv_ctx *ctx, const qkv_record *r) {
    double *dx = qkv__grad(ctx, r->in[0]);
    qkv__k_unary_backward_f64(QKV_UN_GELU_TANH, r->in[0]->numel, r->in[0]->data, r->out->data, NULL,
                             r->out->grad, dx, 0);
    return 0;
}
/* the right rule, then one element's gradient off by 0.5% */
static int slightly_wrong_matmul(qkv_ctx *ctx, const qkv_record *r) {
    int rc = qkv__matmul_backward(ctx, r);
    double *da = r->in[0]->grad;
    da[1] *= 1.005;
    return rc;
}
/* layernorm without the mean(dxhat) term */
static int wrong_layernorm(qkv_ctx *ctx, const qkv_record *r) {
    qkv_tensor *x = r->in[0];
    double *dx = qkv__grad(ctx, x);
    const double *xd = x->data, *mean = r->p.layernorm.mean, *rstd = r->p.layernorm.rstd, *dy = r->out->grad;
    int64_t rows = r->p.layernorm.rows, n = r->p.layernorm.n;
    for (int64_t i = 0; i < rows; i++) {
        double s = 0;
        for (int64_t j = 0; j < n; j++) s += dy[i * n + j] * (xd[i * n + j] - mean[i]) * rstd[i];
        for (int64_t j = 0; j < n; j++) {
            double h = (xd[i * n + j] - mean[i]) * rstd[i];
            dx[i * n + j] += rstd[i] * (dy[i * n + j] - h * s / (double)n);
        }
    }
    return 0;
}

/* linear whose bias gradient is taken from the first row only (forgets to sum over rows) */
static int wrong_linear(qkv_ctx *ctx, const qkv_record *r) {
    qkv_tensor *b = r->in[2];
    double *keep = malloc((size_t)b->numel * sizeof *keep);
    double *db = qkv__grad(ctx, b);
    for (int64_t j = 0; j < b->numel; j++) keep[j] = db[j];
    int rc = qkv__linear_backward(ctx, r);
    const double *dy = r->out->grad;
    for (int64_t j = 0; j < b->numel; j++) db[j] = keep[j] + dy[j];
    free(keep);
    return rc;
}

/* masked softmax that forgets its scale in the backward */
static int wrong_masked_softmax(qkv_ctx *ctx, const qkv_record *r) {
    double *dx = qkv__grad(ctx, r->in[0]);
    qkv__k_softmax_backward_f64(r->p.masked_softmax.rows, r->p.masked_softmax.n, r->out->data, r->out->grad, 1.0, dx);
    return 0;
}

/* fused attention whose dS forgets the scale (as if the scores were unscaled) */
static int wrong_sdp_attention(qkv_ctx *ctx, const qkv_record *r) {
    const qkv_tensor *m = r->p.sdpa.mask;
    qkv_sdpa_shape s = {r->p.sdpa.B, r->p.sdpa.T, r->p.sdpa.H, r->p.sdpa.hd, r->p.sdpa.causal, m ? m->data : NULL,
                        &r->p.sdpa.bc, 1.0, r->p.sdpa.kvH, r->p.sdpa.slopes, r->p.sdpa.vH, r->p.sdpa.vd, NULL, 0};
    double *scratch = malloc((size_t)(s.T * s.T) * sizeof *scratch);
    qkv__k_sdpa_backward_f64(&s, r->in[0]->data, r->in[1]->data, r->in[2]->data, r->p.sdpa.probs, r->out->grad,
                            qkv__grad(ctx, r->in[0]), qkv__grad(ctx, r->in[1]), qkv__grad(ctx, r->in[2]), scratch, 1, 0);
    free(scratch);
    return 0;
}

/* grouped-query attention whose key/value gradients average the shares of their query heads
 * instead of adding them */
static int wrong_sdp_attention_gqa(qkv_ctx *ctx, const qkv_record *r) {
    int rc = qkv__sdp_attention_backward(ctx, r);
    double G = (double)(r->p.sdpa.H / r->p.sdpa.kvH);
    for (int i = 1; i < 3; i++) {
        double *g = r->in[i]->grad;
        for (int64_t j = 0; g && j < r->in[i]->numel; j++) g[j] /= G;
    }
    return rc;
}

/* ALiBi whose backward recomputes the weights P without the slopes (as a recomputing kernel
 * that forgot them would) */
static int wrong_sdp_attention_alibi(qkv_ctx *ctx, const qkv_record *r) {
    const qkv_tensor *m = r->p.sdpa.mask;
    qkv_sdpa_shape s = {r->p.sdpa.B, r->p.sdpa.T, r->p.sdpa.H, r->p.sdpa.hd, r->p.sdpa.causal, m ? m->data : NULL,
                        &r->p.sdpa.bc, r->p.sdpa.scale, r->p.sdpa.kvH, NULL, r->p.sdpa.vH, r->p.sdpa.vd, NULL, 0};
    double *p = malloc((size_t)(s.B * s.H * s.T * s.T) * sizeof *p), *y = malloc((size_t)r->out->numel * sizeof *y);
    double *scratch = malloc((size_t)(s.T * s.T) * sizeof *scratch);
    qkv__k_sdpa_f64(&s, r->in[0]->data, r->in[1]->data, r->in[2]->data, p, y);
    qkv__k_sdpa_backward_f64(&s, r->in[0]->data, r->in[1]->data, r->in[2]->data, p, r->out->grad,
                            qkv__grad(ctx, r->in[0]), qkv__grad(ctx, r->in[1]), qkv__grad(ctx, r->in[2]), scratch, 1, 0);
    free(p);
    free(y);
    free(scratch);
    return 0;
}

/* a - b differentiated as a + b: the sign of the subtracted term forgotten (A = P1 + lambda P2) */
static int wrong_sub_rhs(qkv_ctx *ctx, const qkv_record *r) {
    qkv_record one = *r;
    one.p.binary.op = QKV_BIN_ADD;
    return qkv__binary_backward(ctx, &one);
}

/* a shared 2-D left operand's gradient as (dC B^T)^T: the head maps' rows and columns swapped */
static int wrong_matmul_left_transposed(qkv_ctx *ctx, const qkv_record *r) {
    qkv_tensor *a = r->in[0];
    int rc = qkv__matmul_backward(ctx, r);
    if (a->ndim != 2 || a->shape[0] != a->shape[1] || !a->grad) return rc;
    double *g = a->grad;
    for (int64_t i = 0, n = a->shape[0]; i < n; i++)
        for (int64_t j = i + 1; j < n; j++) {
            double t = g[i * n + j];
            g[i * n + j] = g[j * n + i], g[j * n + i] = t;
        }
    return rc;
}

/* the rotation itself instead of its transpose (the angle's sign kept) */
static int wrong_rope(qkv_ctx *ctx, const qkv_record *r) {
    qkv_tensor *x = r->in[0];
    double *dx = qkv__grad(ctx, x);
    qkv__k_rope_f64(x->shape[0], x->shape[1], x->shape[2] / r->p.rope.hd, r->p.rope.hd, r->p.rope.cs, 1,
                    r->out->grad, dx, 0);
    return 0;
}

/* the normalisation's own derivative forgotten: dv = du / |v|, as if u's length did not depend
 * on v (equal head counts: the case exclusive_heads, heads of HD3) */
static int wrong_exclusive(qkv_ctx *ctx, const qkv_record *r) {
    qkv_tensor *y = r->in[0], *v = r->in[1];
    double *dy = qkv__grad(ctx, y), *dv = qkv__grad(ctx, v);
    const double *Y = y->data, *Vv = v->data, *dz = r->out->grad;
    int64_t hd = HD3, n = y->numel / hd;
    ck_assert_int_eq(y->numel, v->numel);
    for (int64_t i = 0; i < n; i++) {
        const double *yy = Y + i * hd, *vv = Vv + i * hd, *g = dz + i * hd;
        double len = 0, a = 0, s = 0;
        for (int64_t k = 0; k < hd; k++) len += vv[k] * vv[k];
        len = sqrt(len);
        for (int64_t k = 0; k < hd; k++) a += g[k] * vv[k] / len, s += yy[k] * vv[k] / len;
        for (int64_t k = 0; k < hd; k++) {
            dy[i * hd + k] += g[k] - a * vv[k] / len;
            dv[i * hd + k] += -(a * yy[k] + s * g[k]) / len;
        }
    }
    return 0;
}

/* add_layernorm that forgets the residual path: h's own gradient dropped, the norm's alone passed on */
static int wrong_add_layernorm_residual(qkv_ctx *ctx, const qkv_record *r) {
    qkv_record one = *r;
    qkv_tensor h = *r->out2;
    if (!r->out->grad) return 0;
    h.grad = NULL;
    one.out2 = &h;
    return qkv__add_layernorm_backward(ctx, &one);
}
/* a broadcast addend's gradient averaged over the rows it was added to instead of summed */
static int wrong_add_layernorm_bcast(qkv_ctx *ctx, const qkv_record *r) {
    int rc = qkv__add_layernorm_backward(ctx, r);
    qkv_tensor *a = r->in[1];
    double reps = (double)(r->p.add_layernorm.rows / r->p.add_layernorm.a_rows);
    for (int64_t j = 0; a->grad && j < a->numel; j++) ((double *)a->grad)[j] /= reps;
    return rc;
}

typedef struct { qkv_op op; qkv_backward_fn wrong; int case_index; } broken;

static int find_case(const char *name) {
    for (int i = 0; i < NCASES; i++)
        if (!strcmp(CASES[i].name, name)) return i;
    return -1;
}

START_TEST(test_harness_catches_wrong_rules) {
    init_aux();
    broken b[] = {
        {QKV_OP_SOFTMAX, wrong_softmax, find_case("softmax")},
        {QKV_OP_ROPE, wrong_rope, find_case("rope_two_heads")},
        {QKV_OP_ROPE, wrong_rope, find_case("rope_one_pair_long")},
        {QKV_OP_EXCLUSIVE, wrong_exclusive, find_case("exclusive_heads")},
        {QKV_OP_GELU, wrong_gelu, find_case("gelu")},
        {QKV_OP_MATMUL, slightly_wrong_matmul, find_case("matmul")},
        {QKV_OP_LAYERNORM, wrong_layernorm, find_case("layernorm_plain")},
        {QKV_OP_ADD_LAYERNORM, wrong_add_layernorm_residual, find_case("add_layernorm_weight")},
        {QKV_OP_ADD_LAYERNORM, wrong_add_layernorm_residual, find_case("add_layernorm_tied_affine")},
        {QKV_OP_ADD_LAYERNORM, wrong_add_layernorm_bcast, find_case("add_layernorm_bias_bcast")},
        {QKV_OP_ADD_LAYERNORM, wrong_add_layernorm_bcast, find_case("add_layernorm_h_only_bcast")},
        {QKV_OP_SOFTMAX, wrong_softmax, find_case("diamond_q_eq_k_eq_v")},
        {QKV_OP_LINEAR, wrong_linear, find_case("linear")},
        /* the activation's derivative forgotten: the plain linear's rule */
        {QKV_OP_LINEAR_ACT, qkv__linear_backward, find_case("linear_act_gelu")},
        {QKV_OP_MASKED_SOFTMAX, wrong_masked_softmax, find_case("masked_softmax")},
        {QKV_OP_SDP_ATTENTION, wrong_sdp_attention, find_case("sdp_attention_causal_mask")},
        {QKV_OP_SDP_ATTENTION, wrong_sdp_attention, find_case("sdp_attention_gqa_alibi_row_blocks")},
        {QKV_OP_SDP_ATTENTION, wrong_sdp_attention_gqa, find_case("sdp_attention_gqa")},
        {QKV_OP_SDP_ATTENTION, wrong_sdp_attention_gqa, find_case("sdp_attention_mqa_mask")},
        {QKV_OP_SDP_ATTENTION, wrong_sdp_attention_alibi, find_case("sdp_attention_alibi")},
        {QKV_OP_SDP_ATTENTION, wrong_sdp_attention_alibi, find_case("sdp_attention_alibi_mask")},
        /* the composed variants: a wrong rule of one of their ops shows in their checks */
        {QKV_OP_SDP_ATTENTION, wrong_sdp_attention, find_case("diff_attention_causal")},
        {QKV_OP_SDP_ATTENTION, wrong_sdp_attention, find_case("diff_attention_lambda_norm")},
        {QKV_OP_SUB, wrong_sub_rhs, find_case("diff_attention_lambda_norm")},
        {QKV_OP_MATMUL, slightly_wrong_matmul, find_case("talking_heads_causal")},
        {QKV_OP_MATMUL, wrong_matmul_left_transposed, find_case("talking_heads_mask")},
        {QKV_OP_MATMUL, wrong_matmul_left_transposed, find_case("talking_heads_gqa_mask")},
    };
    for (size_t k = 0; k < sizeof b / sizeof b[0]; k++) {
        const gcase *gc = &CASES[b[k].case_index];
        qkv_tensor *in[3] = {0};
        ck_assert_int_eq(make_inputs(gc, b[k].case_index, in), 0);
        qkv_ctx *ctx = qkv_ctx_new();
        qkv_gradcheck_result res;
        ck_assert_int_eq(qkv_gradcheck(ctx, gc->fn, in, gc->n, gc->user, NULL, &res, NULL), 0);
        qkv__ctx_override_backward(ctx, b[k].op, b[k].wrong);
        int rc = qkv_gradcheck(ctx, gc->fn, in, gc->n, gc->user, NULL, &res, NULL);
        ck_assert_msg(rc == 1 && res.failed > 0, "wrong %s rule on case %s was not caught",
                      qkv_op_name(b[k].op), gc->name);
        qkv__ctx_override_backward(ctx, b[k].op, NULL); /* restoring makes it pass again */
        ck_assert_int_eq(qkv_gradcheck(ctx, gc->fn, in, gc->n, gc->user, NULL, &res, NULL), 0);
        for (int i = 0; i < gc->n; i++) qkv_tensor_free(in[i]);
        qkv_ctx_free(ctx);
    }
}
END_TEST

/* the fused op against the composed ops it replaces (split heads, Q K^T, masked softmax,
 * P V, merge heads), outputs and gradients, at a length with several causal row blocks and a
 * padding mask that blocks whole rows. Keys and values of kvH heads are repeated to the H
 * query heads the plain way (head h takes key/value head h / (H / kvH): slices concatenated),
 * and ALiBi is a constant (H,T,T) bias -slope_h |i - j| added to the scaled scores. */
static qkv_tensor *kv_repeat(qkv_ctx *c, qkv_tensor *x, int H) { /* (B,kvH,T,hd) -> (B,H,T,hd) */
    int kvH = (int)x->shape[1];
    if (kvH == H) return x;
    qkv_tensor *parts[16];
    for (int h = 0; h < H; h++) parts[h] = qkv_slice(c, x, 1, h / (H / kvH), 1);
    return qkv_concat(c, parts, H, 1);
}

static qkv_tensor *composed_attention(qkv_ctx *c, qkv_tensor *q, qkv_tensor *k, qkv_tensor *v, int H,
                                      const qkv_tensor *blocked, double scale, qkv_tensor *alibi) {
    int64_t B = q->shape[0], T = q->shape[1], d = q->shape[2], hd = d / H, kvH = k->shape[2] / hd;
    int64_t s4[4] = {B, T, H, hd}, s4kv[4] = {B, T, kvH, hd}, s3[3] = {B, T, d};
    qkv_tensor *qh = qkv_transpose(c, qkv_reshape(c, q, 4, s4), 1, 2);
    qkv_tensor *kh = kv_repeat(c, qkv_transpose(c, qkv_reshape(c, k, 4, s4kv), 1, 2), H);
    qkv_tensor *vh = kv_repeat(c, qkv_transpose(c, qkv_reshape(c, v, 4, s4kv), 1, 2), H);
    qkv_tensor *sc = qkv_matmul(c, qh, kh, false, true), *p;
    if (alibi) p = qkv_masked_softmax(c, qkv_add(c, qkv_scale(c, sc, scale), alibi), blocked, 1.0, -INFINITY);
    else p = qkv_masked_softmax(c, sc, blocked, scale, -INFINITY);
    return qkv_reshape(c, qkv_transpose(c, qkv_matmul(c, p, vh, false, false), 1, 2), 3, s3);
}

/* (H,T,T): -slopes[h] |i - j| */
static qkv_tensor *alibi_bias(int H, int64_t T, const double *slopes) {
    int64_t s[3] = {H, T, T};
    qkv_tensor *b = qkv_tensor_zeros(QKV_F64, 3, s);
    for (int h = 0; h < H; h++)
        for (int64_t i = 0; i < T; i++)
            for (int64_t j = 0; j < T; j++)
                ((double *)b->data)[(h * T + i) * T + j] = -slopes[h] * (double)(i > j ? i - j : j - i);
    return b;
}

/* heads, key/value heads, ALiBi */
typedef struct { int H, kvH; bool alibi; } sdpa_form;
static const sdpa_form FORMS[] = {{2, 2, false}, {4, 2, false}, {4, 1, false}, {4, 4, true}, {4, 2, true}, {4, 1, true}};
#define NFORMS ((int)(sizeof FORMS / sizeof FORMS[0]))

START_TEST(test_sdpa_matches_composed) {
    enum { B = 2, T = 150, D = 8 };
    const sdpa_form *f = &FORMS[_i];
    int H = f->H, dkv = D / H * f->kvH;
    const double slopes[4] = {0.5, 0.25, 0.125, 0.0625}; /* 2^(-8h/H) for H = 4: ALiBi's own */
    int64_t s3[3] = {B, T, D}, s3kv[3] = {B, T, dkv}, sm[4] = {B, 1, T, T};
    qkv_tensor *x[4], *mask = qkv_tensor_zeros(QKV_I32, 4, sm), *causal_mask = qkv_tensor_zeros(QKV_I32, 4, sm);
    qkv_tensor *alibi = f->alibi ? alibi_bias(H, T, slopes) : NULL;
    qkv_rng r;
    qkv_rng_seed(&r, 77);
    for (int i = 0; i < 4; i++) { /* q, k, v and the loss weights */
        x[i] = qkv_tensor_zeros(QKV_F64, 3, i == 1 || i == 2 ? s3kv : s3);
        for (int64_t j = 0; j < x[i]->numel; j++) ((double *)x[i]->data)[j] = qkv_rng_normal(&r);
        x[i]->requires_grad = i < 3; /* gradients in each context's arena (set to NULL before a run) */
    }
    int32_t *md = mask->data, *cd = causal_mask->data;
    for (int b = 0; b < B; b++) /* batch 1: the last 20 positions are padding */
        for (int i = 0; i < T; i++)
            for (int j = 0; j < T; j++) {
                md[(b * T + i) * T + j] = b == 1 && j >= T - 20;
                cd[(b * T + i) * T + j] = md[(b * T + i) * T + j] || j > i;
            }
    for (int causal = 0; causal < 2; causal++) {
        double *grads[2][3];
        qkv_tensor *outs[2];
        qkv_ctx *ctx[2] = {qkv_ctx_new(), qkv_ctx_new()};
        for (int way = 0; way < 2; way++) {
            for (int i = 0; i < 3; i++) x[i]->grad = NULL;
            qkv_tensor *y;
            if (way)
                y = composed_attention(ctx[way], x[0], x[1], x[2], H, causal ? causal_mask : mask, 0.3, alibi);
            else if (f->kvH == H && !f->alibi) /* the plain entry point */
                y = qkv_sdp_attention(ctx[way], x[0], x[1], x[2], H, mask, causal, 0.3, NULL);
            else
                y = qkv_sdp_attention_ex(ctx[way], x[0], x[1], x[2], H, f->kvH, mask, causal, 0.3,
                                         f->alibi ? slopes : NULL, NULL);
            ck_assert_msg(y != NULL, "%s", qkv_ctx_error(ctx[way]));
            qkv_tensor *loss = qkv_sum(ctx[way], qkv_mul(ctx[way], y, x[3]), -1, false);
            loss = qkv_sum(ctx[way], qkv_sum(ctx[way], loss, -1, false), -1, false);
            ck_assert_int_eq(qkv_backward(ctx[way], loss), 0);
            outs[way] = y;
            for (int i = 0; i < 3; i++) grads[way][i] = x[i]->grad;
        }
        const double *y0 = outs[0]->data, *y1 = outs[1]->data;
        for (int64_t j = 0; j < outs[0]->numel; j++)
            ck_assert_msg(qkv_test_near(y0[j], y1[j], 1e-12),
                          "H %d kvH %d alibi %d causal %d: y[%lld] %.17g vs %.17g", H, f->kvH, f->alibi, causal,
                          (long long)j, y0[j], y1[j]);
        for (int i = 0; i < 3; i++)
            for (int64_t j = 0; j < x[i]->numel; j++)
                ck_assert_msg(qkv_test_near(grads[0][i][j], grads[1][i][j], 1e-12),
                              "H %d kvH %d alibi %d causal %d: grad %d [%lld] %.17g vs %.17g", H, f->kvH, f->alibi,
                              causal, i, (long long)j, grads[0][i][j], grads[1][i][j]);
        for (int i = 0; i < 3; i++) x[i]->grad = NULL; /* arena memory: gone with the contexts */
        qkv_ctx_free(ctx[0]);
        qkv_ctx_free(ctx[1]);
    }
    for (int i = 0; i < 4; i++) qkv_tensor_free(x[i]);
    qkv_tensor_free(mask);
    qkv_tensor_free(causal_mask);
    qkv_tensor_free(alibi);
}
END_TEST

/* grouped-query attention with ALiBi: the same bits with 1 and 3 threads (the backward gives a
 * key/value head and all its query heads to one thread, in a fixed order) */
START_TEST(test_sdpa_gqa_alibi_threads_bits) {
    enum { B = 3, T = 70, D = 16, H = 4, KVH = 2 };
    const double slopes[H] = {0.5, 0.25, 0.125, 0.0625};
    int64_t s3[3] = {B, T, D}, s3kv[3] = {B, T, D / H * KVH};
    qkv_tensor *x[4];
    qkv_rng r;
    qkv_rng_seed(&r, 5);
    for (int i = 0; i < 4; i++) {
        x[i] = qkv_tensor_zeros(QKV_F32, 3, i == 1 || i == 2 ? s3kv : s3);
        qkv_tensor_fill_normal(x[i], &r, 0, 1);
        x[i]->requires_grad = i < 3;
    }
    float *keep[2][4];
    for (int t = 0; t < 2; t++) {
        ck_assert_int_eq(qkv_set_threads(t ? 3 : 1), 0);
        qkv_ctx *ctx = qkv_ctx_new();
        for (int i = 0; i < 3; i++) x[i]->grad = NULL;
        qkv_tensor *y = qkv_sdp_attention_ex(ctx, x[0], x[1], x[2], H, KVH, NULL, true, 0.4, slopes, NULL);
        ck_assert_int_eq(qkv_backward(ctx, qkv_sum_all(ctx, qkv_mul(ctx, y, x[3]))), 0);
        for (int i = 0; i < 4; i++) {
            const qkv_tensor *src = i < 3 ? x[i] : y;
            keep[t][i] = malloc((size_t)src->numel * sizeof(float));
            memcpy(keep[t][i], i < 3 ? src->grad : src->data, (size_t)src->numel * sizeof(float));
        }
        for (int i = 0; i < 3; i++) x[i]->grad = NULL;
        qkv_ctx_free(ctx);
    }
    qkv_set_threads(1);
    for (int i = 0; i < 4; i++) {
        ck_assert_msg(!memcmp(keep[0][i], keep[1][i], (size_t)x[i < 3 ? i : 0]->numel * sizeof(float)),
                      "%s differs between 1 and 3 threads", i < 3 ? "a gradient" : "the output");
        free(keep[0][i]);
        free(keep[1][i]);
    }
    for (int i = 0; i < 4; i++) qkv_tensor_free(x[i]);
}
END_TEST

/* ---- linear_act in float32 ------------------------------------------------------------------ */

/* sum(y * c): every element of y gets its own weight, so every gradient is exercised */
static qkv_tensor *weighted(qkv_ctx *ctx, qkv_tensor *y, qkv_tensor *c) { return qkv_sum_all(ctx, qkv_mul(ctx, y, c)); }

/* the fused epilogue in float: the same bits with a backward to come (f' kept) or not, and the
 * composed linear + activation within a few roundings (the bias is added after the product
 * there, before it here); its gradient equals the composed ops' within float rounding */
START_TEST(test_linear_act_float) {
    enum { ROWS = 37, IN = 19, OUT = 29 };
    qkv_rng rng;
    qkv_rng_seed(&rng, 7);
    int64_t sx[2] = {ROWS, IN}, sw[2] = {OUT, IN}, sb[1] = {OUT}, sy[2] = {ROWS, OUT};
    qkv_op acts[3] = {QKV_OP_GELU, QKV_OP_GELU_TANH, QKV_OP_RELU};
    for (int a = 0; a < 3; a++) {
        qkv_tensor *x = qkv_test_randn(&rng, 2, sx, true), *w = qkv_test_randn(&rng, 2, sw, true);
        qkv_tensor *b = qkv_test_randn(&rng, 1, sb, true), *xc = qkv_test_randn(&rng, 2, sx, false);
        qkv_tensor *c = qkv_test_randn(&rng, 2, sy, false);
        memcpy(xc->data, x->data, (size_t)x->numel * sizeof(float));
        qkv_ctx *ctx = qkv_ctx_new(), *ctx2 = qkv_ctx_new(), *ctx3 = qkv_ctx_new();
        qkv_tensor *y = qkv_linear_act(ctx, x, w, b, acts[a]);
        qkv_tensor *wc = qkv_test_randn(&rng, 2, sw, false), *bc = qkv_test_randn(&rng, 1, sb, false);
        memcpy(wc->data, w->data, (size_t)w->numel * sizeof(float));
        memcpy(bc->data, b->data, (size_t)b->numel * sizeof(float));
        qkv_tensor *y_eval = qkv_linear_act(ctx2, xc, wc, bc, acts[a]); /* nothing requires grad */
        qkv_tensor *pre = qkv_linear(ctx3, x, w, b);
        qkv_tensor *y_comp = acts[a] == QKV_OP_GELU ? qkv_gelu(ctx3, pre) : acts[a] == QKV_OP_GELU_TANH
                           ? qkv_gelu_tanh(ctx3, pre) : qkv_relu(ctx3, pre);
        ck_assert(y && y_eval && y_comp);
        ck_assert(memcmp(y->data, y_eval->data, (size_t)y->numel * sizeof(float)) == 0);
        for (int64_t i = 0; i < y->numel; i++) {
            float u = ((float *)y->data)[i], v = ((float *)y_comp->data)[i];
            ck_assert_msg(qkv_test_nearf(u, v, 1e-5f), "%s: %d: %g vs %g", qkv_op_name(acts[a]), (int)i, u, v);
        }
        ck_assert_int_eq(qkv_backward(ctx, weighted(ctx, y, c)), 0);
        float *g1 = malloc((size_t)x->numel * sizeof(float));
        memcpy(g1, x->grad, (size_t)x->numel * sizeof(float));
        qkv_tensor_zero_grad(x);
        ck_assert_int_eq(qkv_backward(ctx3, weighted(ctx3, y_comp, c)), 0);
        for (int64_t i = 0; i < x->numel; i++) {
            float u = g1[i], v = ((float *)x->grad)[i];
            ck_assert_msg(qkv_test_nearf(u, v, 1e-4f), "%s: dx %d: %g vs %g", qkv_op_name(acts[a]), (int)i, u, v);
        }
        free(g1);
        qkv_ctx_free(ctx), qkv_ctx_free(ctx2), qkv_ctx_free(ctx3);
        qkv_tensor *all[] = {x, w, b, xc, c, wc, bc};
        for (size_t k = 0; k < sizeof all / sizeof *all; k++) qkv_tensor_free(all[k]);
    }
}
END_TEST

START_TEST(test_sampled_check_counts) {
    init_aux();
    const gcase *gc = &CASES[find_case("matmul_batched_bhtd")];
    qkv_tensor *in[3] = {0};
    ck_assert_int_eq(make_inputs(gc, 0, in), 0);
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_gradcheck_opts o = {.max_checks = 5, .seed = 3};
    qkv_gradcheck_result res;
    ck_assert_int_eq(qkv_gradcheck(ctx, gc->fn, in, gc->n, gc->user, &o, &res, NULL), 0);
    ck_assert_int_eq(res.checked, 10);
    for (int i = 0; i < gc->n; i++) qkv_tensor_free(in[i]);
    qkv_ctx_free(ctx);
}
END_TEST

Suite *grad_ops_suite(void) {
    Suite *s = suite_create("grad_ops");
    TCase *tc = tcase_create("gradcheck");
    tcase_set_timeout(tc, 20);
    tcase_add_loop_test(tc, test_op_gradcheck, 0, NCASES);
    tcase_add_test(tc, test_every_op_covered);
    tcase_add_test(tc, test_harness_catches_wrong_rules);
    tcase_add_test(tc, test_sampled_check_counts);
    tcase_add_loop_test(tc, test_sdpa_matches_composed, 0, NFORMS);
    tcase_add_test(tc, test_sdpa_gqa_alibi_threads_bits);
    tcase_add_test(tc, test_linear_act_float);
    tcase_add_test(tc, test_diff_fused_matches_composed);
    tcase_add_test(tc, test_add_layernorm_matches_composed);
    tcase_add_test(tc, test_add_layernorm_float_bits);
    suite_add_tcase(s, tc);
    return s;
}
