/* The memory estimate behind the up-front refusal of a model too large for the machine (the
 * refusals themselves are rows of the command-line contract, tests/test_cli_config.c): the
 * parameter count is exact; a counting context takes exactly the arena a real step takes, in
 * float32 and in bf16 products; the per-step estimate (a counted step) is at least the real arena
 * peak and at most twice it, for every shape and attention option; huge sizes saturate instead of
 * overflowing. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/ctx.h"
#include "nn/model.h"
#include "probe.h"
#include "tensor/buildinfo.h"
#include "suites.h"
#include "train/memory.h"
#include "train/train.h"

typedef struct est_case { int B, T, d, H, L, F, V, qkv, gate, rel, causal, pad; } est_case;

static const est_case EST[] = {
    {4, 64, 64, 4, 2, 256, 64, 0, 0, 0, 1, 0},  {4, 64, 64, 4, 2, 256, 64, 2, 0, 0, 1, 0},
    {4, 64, 64, 4, 2, 256, 64, 5, 0, 0, 1, 0},  {4, 64, 64, 4, 2, 256, 64, 0, 2, 1, 0, 1},
    {2, 128, 32, 8, 1, 64, 16, 0, 0, 1, 1, 0},  {16, 16, 128, 2, 1, 512, 16, 3, 1, 0, 1, 0},
    {1, 1, 1, 1, 1, 1, 2, 0, 0, 0, 1, 0},       {2, 3, 4, 2, 1, 3, 5, 4, 1, 1, 0, 1},
    {32, 16, 16, 2, 1, 32, 40, 2, 0, 0, 1, 0},  {4, 32, 64, 16, 2, 256, 1024, 1, 0, 0, 1, 0},
    {1, 256, 8, 8, 2, 8, 2, 0, 0, 1, 1, 0},     {64, 8, 8, 1, 3, 8, 300, 0, 2, 0, 1, 1},
    /* for the attention options: up to 256 heads of one dimension (keys and values repeated to
     * every head), and tiny models, where the options' per-op overheads dominate */
    {8, 32, 16, 4, 1, 16, 8, 4, 2, 1, 0, 1},    {2, 8, 8, 8, 1, 8, 4, 4, 2, 1, 0, 1},
    {1, 16, 32, 16, 1, 16, 4, 4, 2, 1, 1, 0},   {4, 4, 64, 64, 1, 4, 4, 4, 2, 1, 0, 1},
    {2, 2, 256, 256, 1, 1, 2, 4, 1, 1, 0, 0},   {2, 40, 128, 128, 1, 4, 4, 4, 2, 1, 0, 1},
    {16, 24, 8, 8, 1, 2, 2, 4, 2, 1, 0, 1},     {1, 2, 2, 2, 1, 1, 2, 4, 1, 1, 0, 1},
    {2, 3, 4, 2, 2, 3, 5, 4, 1, 1, 0, 1},       {1, 3, 4, 2, 1, 3, 5, 4, 1, 1, 0, 1},
    {1, 1, 2, 2, 1, 1, 2, 4, 1, 1, 0, 0},       {1, 4, 4, 4, 1, 1, 2, 4, 1, 1, 0, 1},
    {3, 3, 4, 2, 1, 3, 5, 4, 1, 1, 0, 1},       {2, 3, 4, 2, 1, 3, 5, 4, 0, 1, 0, 1},
    {2, 3, 4, 2, 1, 3, 5, 1, 0, 1, 0, 1},       {2, 3, 4, 2, 1, 3, 5, 4, 2, 1, 0, 1},
};

/* the attention options on top of a case (0: none), made valid for it */
static void est_option(int k, qkv_model_config *mc) {
    qkv_attn_config *a = &mc->attn;
    bool own_kv = a->qkv == QKV_ATTN_FULL || a->qkv == QKV_ATTN_KV_TIED;
    switch (k) {
    case 1: a->kv_heads = 1; if (!own_kv) a->qkv = QKV_ATTN_FULL; break;
    case 2: a->qkv = QKV_ATTN_KV_TIED; a->kv_heads = 1; a->key_norm = true; break;
    case 3: a->qkv = QKV_ATTN_SHARED; a->role_scale = true; a->key_norm = true; break;
    case 4: a->qkv = QKV_ATTN_FULL; a->kv_latent = mc->d_model / 4; break;
    case 5: a->gate = QKV_GATE_HEADWISE; if (a->qkv == QKV_ATTN_HEAD_SHARED) a->qkv = QKV_ATTN_FULL; break;
    case 6: a->alibi = true; a->rel_pos_bias = false; a->kv_heads = 1; if (!own_kv) a->qkv = QKV_ATTN_FULL; break;
    case 7: a->qkv = QKV_ATTN_FULL; a->value_proj = false; a->out_proj = false;
        if (a->gate == QKV_GATE_VALUE) a->gate = QKV_GATE_NONE;
        break;
    case 8: a->self_mask = true; a->self_mask_rule = QKV_SELF_REFORMER; break;
    case 9: /* differential attention: its own scale, no positional bias, heads of even width */
        a->diff = true; a->rel_pos_bias = false; a->scale = QKV_SCALE_HEAD_DIM; a->qkv = QKV_ATTN_FULL;
        if (mc->d_model % 2) a->diff = false;
        else if (mc->d_model / mc->heads % 2) mc->heads = 1;
        break;
    case 10: a->talking_heads = true; a->rel_pos_bias = false; if (a->qkv == QKV_ATTN_HEAD_SHARED) a->qkv = QKV_ATTN_FULL; break;
    case 11: a->query_proj = false; a->key_proj = false; a->qkv = QKV_ATTN_FULL; break;
    case 12: { /* rotary positions (even head widths) and exclusive (heads wider than one) */
        int hd = mc->d_model / mc->heads;
        if (hd % 2 == 0) mc->position = QKV_POS_ROPE, a->rel_pos_bias = false;
        a->exclusive = hd > 1;
        break;
    }
    case 13: a->qkv = QKV_ATTN_QK_TIED; a->qk_diag = QKV_QK_DIAG_ALTERNATING; break;
    default: break;
    }
}
#define NEST_OPTIONS 14

/* the default model of these sizes */
static qkv_model_config sized(int vocab, int seq_len, int d_model, int heads, int layers, int d_ff) {
    qkv_model_config mc = qkv_model_config_default();
    mc.vocab = vocab, mc.seq_len = seq_len, mc.d_model = d_model, mc.heads = heads, mc.layers = layers, mc.d_ff = d_ff;
    return mc;
}

/* case i's model config (the case with its attention option) */
static qkv_model_config case_config(int i) {
    const est_case *e = &EST[i / NEST_OPTIONS];
    qkv_model_config mc = sized(e->V, e->T, e->d, e->H, e->L, e->F);
    mc.attn.qkv = (qkv_attn_qkv)e->qkv;
    mc.attn.gate = (qkv_attn_gate)e->gate;
    mc.attn.rel_pos_bias = e->rel;
    mc.attn.causal = e->causal;
    est_option(i % NEST_OPTIONS, &mc);
    return mc;
}

/* A step's inputs: tokens, targets, a padding mask of real tokens only, and one whose first
 * sequence is all padding (so some query row has no key: the most a mask can take) */
typedef struct { qkv_tensor *tok, *tgt, *pad, *dead; } step_inputs;

static step_inputs inputs_of(const est_case *e) {
    int64_t s[2] = {e->B, e->T};
    step_inputs in = {qkv_tensor_zeros(QKV_I32, 2, s), qkv_tensor_zeros(QKV_I32, 2, s), qkv_tensor_zeros(QKV_I32, 2, s),
                      qkv_tensor_zeros(QKV_I32, 2, s)};
    for (int64_t i = 0; i < in.tok->numel; i++) {
        ((int32_t *)in.tok->data)[i] = (int32_t)(i % e->V);
        ((int32_t *)in.tgt->data)[i] = (int32_t)(i * 7 % e->V);
        ((int32_t *)in.pad->data)[i] = 1;
        ((int32_t *)in.dead->data)[i] = i >= e->T;
    }
    return in;
}

/* the arena peak of one training step (the loss and its backward) of m in a new context, counting
 * or real, in bf16 products or not; pad: the padding mask or NULL */
static size_t step_peak(qkv_model *m, const step_inputs *in, const qkv_tensor *pad, bool counting, bool bf16) {
    qkv_ctx *ctx = counting ? qkv_ctx_new_counting() : qkv_ctx_new();
    ck_assert_ptr_nonnull(ctx);
    ck_assert_msg(!qkv_ctx_set_bf16(ctx, bf16), "%s", qkv_ctx_error(ctx));
    qkv_tensor *loss = qkv_model_loss(ctx, m, in->tok, in->tgt, pad);
    ck_assert_msg(loss && !qkv_backward(ctx, loss), "%s", qkv_ctx_error(ctx));
    size_t peak = qkv_ctx_arena_peak(ctx);
    qkv_ctx_free(ctx);
    return peak;
}

/* the estimate is at least the real arena peak of a training step and at most twice it; the
 * parameter count is exact; the same step counted takes exactly the real step's arena (float32
 * products, and bf16 where they run). Every case plain and with each attention option. */
START_TEST(test_memory_estimate) {
    const est_case *e = &EST[_i / NEST_OPTIONS];
    qkv_model_config mc = case_config(_i);
    qkv_optim_config oc = qkv_optim_config_default(); /* Adam: two moments per parameter */
    qkv_err err;
    qkv_model *m = qkv_model_new(&mc, QKV_F32, 0, &err);
    ck_assert_msg(m != NULL, "case %d option %d: %s", _i / NEST_OPTIONS, _i % NEST_OPTIONS, err.msg);
    ck_assert_int_eq(qkv_model_param_count(&mc), m->params.numel);
    step_inputs in = inputs_of(e);
    /* counted and real alike: a step without a mask, or with one that leaves a query row no key
     * (a counting step assumes such a row wherever a mask could make one) */
    const qkv_tensor *pad = e->pad ? in.dead : NULL;
    size_t real = step_peak(m, &in, pad, false, false), counted = step_peak(m, &in, pad, true, false);
    ck_assert_msg(counted == real, "case %d option %d: counted %zu bytes, the step took %zu", _i / NEST_OPTIONS,
                  _i % NEST_OPTIONS, counted, real);
    qkv_err why;
    if (qkv_bf16_available(&why)) {
        size_t real16 = step_peak(m, &in, pad, false, true), counted16 = step_peak(m, &in, pad, true, true);
        ck_assert_msg(counted16 == real16, "case %d option %d, bf16: counted %zu bytes, the step took %zu",
                      _i / NEST_OPTIONS, _i % NEST_OPTIONS, counted16, real16);
    } else if (_i == 0) {
        qkv_test_skip("memory: a counted bf16 step against a real one", why.msg);
    }
    double est = (double)qkv_model_activation_bytes(&mc, e->B, e->T);
    ck_assert_msg(est >= (double)real, "case %d option %d: estimate %.0f, real peak %zu", _i / NEST_OPTIONS,
                  _i % NEST_OPTIONS, est, real);
    /* and against the step with a mask of real tokens only */
    double peak = e->pad ? (double)step_peak(m, &in, in.pad, false, false) : (double)real;
    if (getenv("QKV_TEST_VERBOSE"))
        fprintf(stderr, "estimate case %d option %d: %.3f x the real peak\n", _i / NEST_OPTIONS, _i % NEST_OPTIONS,
                est / peak);
    ck_assert_msg(est >= peak && est <= 2 * peak, "case %d option %d: estimate %.0f, real peak %.0f (ratio %.2f)",
                  _i / NEST_OPTIONS, _i % NEST_OPTIONS, est, peak, est / peak);
    ck_assert_int_eq(qkv_train_estimate_bytes(&mc, &oc, e->B), 16 * m->params.numel + (int64_t)est);
    qkv_tensor_free(in.tok);
    qkv_tensor_free(in.tgt);
    qkv_tensor_free(in.pad);
    qkv_tensor_free(in.dead);
    qkv_model_free(m);
}
END_TEST

/* the refusal: huge sizes saturate instead of overflowing, small ones pass */
START_TEST(test_memory_check) {
    qkv_model_config mc = sized(1048576, 65536, 8192, 256, 64, 65536);
    qkv_optim_config oc = qkv_optim_config_default(); /* Adam: two moments per parameter */
    ck_assert(qkv_train_estimate_bytes(&mc, &oc, 65536) == INT64_MAX);
    qkv_err e;
    ck_assert_int_eq(qkv_check_memory(&mc, 65536, qkv_train_estimate_bytes(&mc, &oc, 65536), "everything", &e), -1);
    ck_assert_int_eq(e.code, QKV_ERR_MEMORY);
    ck_assert_msg(strstr(e.msg, "needs over 8 EiB (everything), more than this machine's"), "%s", e.msg);
    ck_assert_ptr_null(strchr(e.msg, '\n'));
    /* counted, not allocated: a step far beyond this machine has its size, at least the
     * attention weights every layer keeps (B,H,T,T) */
    mc = sized(50000, 4096, 4096, 32, 4, 16384);
    int64_t act = qkv_model_activation_bytes(&mc, 64, 4096);
    ck_assert(act < INT64_MAX && (double)act > 4.0 * 64 * 32 * 4096 * 4096 * 4);
    ck_assert_int_gt(act, qkv_machine_memory_bytes());
    mc = qkv_model_config_default();
    mc.vocab = 16;
    mc.seq_len = 16;
    ck_assert_int_gt(qkv_machine_memory_bytes(), 0);
    ck_assert_int_eq(qkv_check_memory(&mc, 32, qkv_train_estimate_bytes(&mc, &oc, 32), "x", &e), 0);
}
END_TEST

Suite *memory_suite(void) {
    Suite *s = suite_create("memory");
    TCase *te = tcase_create("estimate");
    tcase_set_timeout(te, 60);
    tcase_add_loop_test(te, test_memory_estimate, 0, (int)(sizeof EST / sizeof EST[0]) * NEST_OPTIONS);
    tcase_add_test(te, test_memory_check);
    suite_add_tcase(s, te);
    return s;
}
