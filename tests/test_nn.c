/* Modules: gradient checks of each module and of the whole model in every attention
 * variant and option, plus the properties the variants promise. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/gradcheck.h"
#include "nn/model.h"
#include "nn/model_check.h"
#include "tensor/kernels.h"
#include "tensor/parallel.h"
#include "tensor/rng.h"
#include "suites.h"

static qkv_model_config tiny(void) {
    qkv_model_config c = qkv_model_config_default();
    c.vocab = 7;
    c.seq_len = 5;
    c.d_model = 8;
    c.heads = 2;
    c.layers = 2;
    c.d_ff = 12;
    c.attn.rel_pos_max = 3;
    return c;
}

/* ---- single modules ------------------------------------------------------------------ */

typedef struct { int kind; qkv_linear_layer lin; qkv_lnorm ln; qkv_ffn ff; qkv_attention at;
                 qkv_attn_masks masks; } module_ref;

static qkv_tensor *module_fn(qkv_ctx *ctx, qkv_tensor *const *in, int n, void *u) {
    (void)n;
    module_ref *m = u;
    switch (m->kind) {
    case 0: return qkv_linear_forward(ctx, &m->lin, in[0]);
    case 1: return qkv_lnorm_forward(ctx, &m->ln, in[0]);
    case 2: return qkv_ffn_forward(ctx, &m->ff, in[0]);
    default: return qkv_attention_forward(ctx, &m->at, in[0], &m->masks);
    }
}

/* check d out / d (x and every parameter) for module kind k */
static void check_module(int k, qkv_attn_qkv variant) {
    qkv_params p;
    qkv_params_init(&p, QKV_F64);
    module_ref m = {.kind = k};
    qkv_err err;
    qkv_attn_config ac = qkv_model_config_default().attn;
    ac.qkv = variant;
    ac.causal = false;
    switch (k) {
    case 0: ck_assert_int_eq(qkv_linear_init(&m.lin, &p, "lin", 6, 4, true), 0); break;
    case 1: ck_assert_int_eq(qkv_lnorm_init(&m.ln, &p, "ln", 6), 0); break;
    case 2: ck_assert_int_eq(qkv_ffn_init(&m.ff, &p, "ff", 6, 10, QKV_ACT_GELU), 0); break;
    default: ck_assert_int_eq(qkv_attention_init(&m.at, &p, "attn", 6, 2, &ac, &err), 0);
    }
    ck_assert_int_eq(qkv_params_finalize(&p), 0);
    qkv_params_init_values(&p, 5);
    /* layernorm starts at w=1, b=0: move them off the trivial point */
    for (int i = 0; i < p.n; i++)
        for (int64_t j = 0; j < p.items[i]->t.numel; j++)
            qkv_tensor_set(&p.items[i]->t, j, qkv_tensor_get(&p.items[i]->t, j) + 0.1 * (double)(j % 3));
    int64_t xs[3] = {2, 3, 6};
    qkv_tensor *x = qkv_tensor_zeros(QKV_F64, 3, xs);
    qkv_rng r;
    qkv_rng_seed(&r, 9);
    qkv_tensor_fill_normal(x, &r, 0, 1);
    qkv_tensor_require_grad(x);
    qkv_tensor *in[16] = {x};
    for (int i = 0; i < p.n; i++) in[1 + i] = &p.items[i]->t;
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_gradcheck_result res;
    qkv_err gerr = {0};
    int rc = qkv_gradcheck(ctx, module_fn, in, 1 + p.n, &m, NULL, &res, &gerr);
    ck_assert_msg(rc == 0, "module %d variant %s: rc %d, %lld failed, worst input %d: %g vs %g (%s)",
                  k, QKV_ATTN_QKV_NAMES[variant], rc, (long long)res.failed, res.worst_input,
                  res.worst_analytic, res.worst_numeric, gerr.msg);
    qkv_ctx_free(ctx);
    qkv_tensor_free(x);
    qkv_params_free(&p);
}

START_TEST(test_linear_grad) { check_module(0, QKV_ATTN_FULL); }
END_TEST
START_TEST(test_layernorm_grad) { check_module(1, QKV_ATTN_FULL); }
END_TEST
START_TEST(test_feedforward_grad) { check_module(2, QKV_ATTN_FULL); }
END_TEST
START_TEST(test_attention_module_grad) { check_module(3, (qkv_attn_qkv)_i); }
END_TEST

/* the attention module alone with each of the options real models use, and combinations:
 * d out / d (x and every parameter); parameters moved off their start (role scales off ones) */
typedef struct { const char *name; int d, heads; qkv_attn_config a; double rope; } attn_case; /* rope: its base, 0 off */

static int attn_cases(attn_case *v) {
    int n = 0;
    const qkv_attn_config base = qkv_model_config_default().attn;
    qkv_attn_config a;
#define ADD(nm, dd, hh, ...) (a = base, __VA_ARGS__, v[n++] = (attn_case){nm, dd, hh, a, 0})
    ADD("kv_heads=1", 6, 2, a.kv_heads = 1);
    ADD("kv_heads=2 of 4", 8, 4, a.kv_heads = 2);
    ADD("kv_heads=1 of 4, bidirectional", 8, 4, a.kv_heads = 1, a.causal = false);
    ADD("kv_tied+kv_heads=1", 8, 4, a.qkv = QKV_ATTN_KV_TIED, a.kv_heads = 1);
    ADD("key_norm", 6, 2, a.key_norm = true);
    ADD("qk_tied+key_norm", 6, 2, a.qkv = QKV_ATTN_QK_TIED, a.key_norm = true);
    ADD("kv_tied+key_norm+kv_heads=2", 8, 4, a.qkv = QKV_ATTN_KV_TIED, a.key_norm = true, a.kv_heads = 2);
    ADD("shared+role_scale", 6, 2, a.qkv = QKV_ATTN_SHARED, a.role_scale = true);
    ADD("shared+role_scale+gate=value", 6, 2, a.qkv = QKV_ATTN_SHARED, a.role_scale = true, a.gate = QKV_GATE_VALUE);
    ADD("value_proj=false", 6, 2, a.value_proj = false);
    ADD("qk_tied+value_proj=false", 6, 2, a.qkv = QKV_ATTN_QK_TIED, a.value_proj = false);
    ADD("out_proj=false", 6, 2, a.out_proj = false);
    ADD("identity+out_proj=false", 6, 2, a.qkv = QKV_ATTN_IDENTITY, a.out_proj = false);
    ADD("kv_latent=3", 6, 2, a.kv_latent = 3);
    ADD("kv_latent=3+kv_heads=2 of 4", 8, 4, a.kv_latent = 3, a.kv_heads = 2);
    ADD("alibi", 6, 2, a.alibi = true);
    ADD("alibi, bidirectional", 6, 3, a.alibi = true, a.causal = false);
    ADD("alibi+kv_heads=1 of 4", 8, 4, a.alibi = true, a.kv_heads = 1);
    ADD("head_shared+alibi", 6, 2, a.qkv = QKV_ATTN_HEAD_SHARED, a.alibi = true);
    ADD("init=identity", 6, 2, a.init = QKV_INIT_IDENTITY);
    ADD("init=mimetic", 6, 2, a.init = QKV_INIT_MIMETIC);
    ADD("gate=headwise", 6, 2, a.gate = QKV_GATE_HEADWISE);
    ADD("gate=headwise+out_proj=false", 8, 4, a.gate = QKV_GATE_HEADWISE, a.out_proj = false);
    ADD("gate=value+kv_heads=2 of 4", 8, 4, a.gate = QKV_GATE_VALUE, a.kv_heads = 2);
    ADD("query_proj=false", 6, 2, a.query_proj = false);
    ADD("key_proj=false", 6, 2, a.key_proj = false);
    ADD("query_proj=false+key_proj=false", 6, 2, a.query_proj = false, a.key_proj = false);
    ADD("query_proj=false+kv_heads=1 of 4", 8, 4, a.query_proj = false, a.kv_heads = 1);
    ADD("kv_tied+query_proj=false", 6, 2, a.qkv = QKV_ATTN_KV_TIED, a.query_proj = false);
    ADD("diff", 8, 2, a.diff = true);
    ADD("diff, bidirectional", 8, 2, a.diff = true, a.causal = false);
    ADD("diff+qk_tied+gate=output", 8, 2, a.diff = true, a.qkv = QKV_ATTN_QK_TIED, a.gate = QKV_GATE_OUTPUT);
    ADD("diff+identity", 8, 2, a.diff = true, a.qkv = QKV_ATTN_IDENTITY);
    ADD("talking_heads", 6, 3, a.talking_heads = true);
    ADD("talking_heads, bidirectional", 6, 3, a.talking_heads = true, a.causal = false);
    ADD("talking_heads+kv_heads=2 of 4", 8, 4, a.talking_heads = true, a.kv_heads = 2);
    ADD("talking_heads+shared+key_norm", 6, 2, a.talking_heads = true, a.qkv = QKV_ATTN_SHARED, a.key_norm = true);
    /* a signed diagonal between tied roles, exclusive self attention, rotary positions */
    ADD("qk_tied+qk_diag=alternating", 6, 2, a.qkv = QKV_ATTN_QK_TIED, a.qk_diag = QKV_QK_DIAG_ALTERNATING);
    ADD("shared+qk_diag=random+gate=value", 6, 2, a.qkv = QKV_ATTN_SHARED, a.qk_diag = QKV_QK_DIAG_RANDOM,
        a.gate = QKV_GATE_VALUE);
    ADD("qk_tied+qk_diag=positive+diff", 8, 2, a.qkv = QKV_ATTN_QK_TIED, a.qk_diag = QKV_QK_DIAG_POSITIVE, a.diff = true);
    ADD("exclusive", 6, 2, a.exclusive = true);
    ADD("exclusive+kv_heads=2 of 4", 8, 4, a.exclusive = true, a.kv_heads = 2);
    ADD("exclusive+kv_tied+query_proj=false", 6, 2, a.exclusive = true, a.qkv = QKV_ATTN_KV_TIED, a.query_proj = false);
    ADD("exclusive+diff", 8, 2, a.exclusive = true, a.diff = true);
    ADD("exclusive+identity+self_mask", 6, 2, a.exclusive = true, a.qkv = QKV_ATTN_IDENTITY, a.self_mask = true);
    ADD("exclusive+talking_heads", 6, 3, a.exclusive = true, a.talking_heads = true);
    ADD("rope", 8, 2, (void)0);
    v[n - 1].rope = 10000;
    ADD("rope+kv_heads=2 of 4", 16, 4, a.kv_heads = 2);
    v[n - 1].rope = 100;
    ADD("rope+qk_tied+qk_diag=alternating+exclusive", 8, 2, a.qkv = QKV_ATTN_QK_TIED, a.qk_diag = QKV_QK_DIAG_ALTERNATING,
        a.exclusive = true);
    v[n - 1].rope = 10000;
    ADD("rope+diff", 8, 2, a.diff = true);
    v[n - 1].rope = 10000;
#undef ADD
    return n;
}
#define NATTN_CASES 50

START_TEST(test_attention_option_grad) {
    attn_case v[64];
    ck_assert_int_eq(attn_cases(v), NATTN_CASES);
    const attn_case *ac = &v[_i];
    qkv_params p;
    qkv_params_init(&p, QKV_F64);
    module_ref m = {.kind = 3};
    qkv_err err;
    ck_assert_msg(qkv_attention_init(&m.at, &p, "attn", ac->d, ac->heads, &ac->a, &err) == 0, "%s: %s",
                  ac->name, err.msg);
    ck_assert_int_eq(qkv_params_finalize(&p), 0);
    qkv_params_init_values(&p, 5 + (uint64_t)_i);
    for (int i = 0; i < p.n; i++)
        for (int64_t j = 0; j < p.items[i]->t.numel; j++)
            qkv_tensor_set(&p.items[i]->t, j, qkv_tensor_get(&p.items[i]->t, j) + 0.1 * (double)(j % 3));
    int64_t xs[3] = {2, 4, ac->d};
    qkv_tensor *x = qkv_tensor_zeros(QKV_F64, 3, xs);
    qkv_rng r;
    qkv_rng_seed(&r, 9);
    qkv_tensor_fill_normal(x, &r, 0, 1);
    qkv_tensor_require_grad(x);
    qkv_tensor *in[16] = {x};
    ck_assert_int_lt(p.n, 16);
    qkv_attention_set_layer(&m.at, _i % 3); /* diff: lambda_init of layers 1..3 */
    qkv_attention_set_rope(&m.at, ac->rope);
    for (int i = 0; i < p.n; i++) in[1 + i] = &p.items[i]->t;
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_gradcheck_result res;
    qkv_err gerr = {0};
    int rc = qkv_gradcheck(ctx, module_fn, in, 1 + p.n, &m, NULL, &res, &gerr);
    ck_assert_msg(rc == 0, "attention %s: rc %d, %lld of %lld failed, worst input %d: %g vs %g (%s)", ac->name, rc,
                  (long long)res.failed, (long long)res.checked, res.worst_input, res.worst_analytic,
                  res.worst_numeric, gerr.msg);
    int64_t expect = x->numel; /* every element of x and of every parameter */
    for (int i = 0; i < p.n; i++) expect += p.items[i]->t.numel;
    ck_assert_int_eq(res.checked, expect);
    qkv_ctx_free(ctx);
    qkv_tensor_free(x);
    qkv_attention_free(&m.at);
    qkv_params_free(&p);
}
END_TEST

/* ---- the whole model in every variant and option ------------------------------------- */

typedef struct { const char *name; qkv_model_config cfg; bool pad; } variant_case;

static int variant_cases(variant_case *v) {
    int n = 0;
    for (int q = 0; q < QKV_ATTN_QKV_COUNT; q++) {
        v[n] = (variant_case){QKV_ATTN_QKV_NAMES[q], tiny(), false};
        v[n].cfg.attn.qkv = (qkv_attn_qkv)q;
        if (q == QKV_ATTN_HEAD_SHARED) v[n].cfg.attn.scale = QKV_SCALE_EMBED; /* as the question */
        n++;
    }
    qkv_model_config c;
    c = tiny(); c.attn.qkv = QKV_ATTN_HEAD_SHARED; v[n++] = (variant_case){"head_shared+head_dim", c, false};
    c = tiny(); c.attn.scale = QKV_SCALE_EMBED; v[n++] = (variant_case){"full+scale_embed", c, false};
    c = tiny(); c.attn.rel_pos_bias = true; v[n++] = (variant_case){"full+rel_pos_bias", c, false};
    c = tiny(); c.attn.rel_pos_bias = true; c.attn.rel_pos_max = 1; v[n++] = (variant_case){"rel_pos_bias_clipped", c, false};
    c = tiny(); c.attn.gate = QKV_GATE_OUTPUT; v[n++] = (variant_case){"full+gate_output", c, false};
    c = tiny(); c.attn.gate = QKV_GATE_VALUE; v[n++] = (variant_case){"full+gate_value", c, false};
    c = tiny(); c.attn.qkv = QKV_ATTN_HEAD_SHARED; c.attn.gate = QKV_GATE_VALUE; v[n++] = (variant_case){"head_shared+gate_value", c, false};
    c = tiny(); c.attn.qkv = QKV_ATTN_IDENTITY; c.attn.gate = QKV_GATE_OUTPUT; v[n++] = (variant_case){"identity+gate_output", c, false};
    c = tiny(); c.attn.qkv = QKV_ATTN_QK_TIED; c.attn.self_mask = true; v[n++] = (variant_case){"qk_tied+self_mask", c, false};
    c = tiny(); c.attn.qkv = QKV_ATTN_HEAD_SHARED; c.attn.self_mask = true; v[n++] = (variant_case){"head_shared+self_mask", c, false};
    c = tiny(); c.attn.causal = false; v[n++] = (variant_case){"full_bidirectional", c, false};
    c = tiny(); c.attn.causal = false; c.attn.self_mask = true; v[n++] = (variant_case){"bidirectional+self_mask", c, false};
    c = tiny(); v[n++] = (variant_case){"full+padding", c, true};
    c = tiny(); c.attn.causal = false; c.attn.qkv = QKV_ATTN_HEAD_SHARED; v[n++] = (variant_case){"head_shared+padding", c, true};
    c = tiny(); c.activation = QKV_ACT_RELU; v[n++] = (variant_case){"relu", c, false};
    c = tiny(); c.activation = QKV_ACT_GELU_TANH; v[n++] = (variant_case){"gelu_tanh", c, false};
    c = tiny(); c.heads = 1; v[n++] = (variant_case){"one_head", c, false};
    c = tiny(); c.heads = 8; v[n++] = (variant_case){"head_dim_1", c, false};
    /* the options real models use, alone and combined */
    c = tiny(); c.attn.kv_heads = 1; v[n++] = (variant_case){"kv_heads=1", c, false};
    c = tiny(); c.heads = 4; c.attn.kv_heads = 2; v[n++] = (variant_case){"kv_heads=2_of_4", c, false};
    c = tiny(); c.attn.qkv = QKV_ATTN_KV_TIED; c.attn.kv_heads = 1; v[n++] = (variant_case){"kv_tied+kv_heads=1", c, false};
    c = tiny(); c.heads = 4; c.attn.kv_heads = 1; c.attn.rel_pos_bias = true; /* the composed path repeats heads */
    v[n++] = (variant_case){"kv_heads=1+rel_pos_bias", c, false};
    c = tiny(); c.attn.qkv = QKV_ATTN_QK_TIED; c.attn.key_norm = true; c.attn.self_mask = true;
    c.attn.self_mask_rule = QKV_SELF_REFORMER; v[n++] = (variant_case){"qk_tied+key_norm+reformer", c, false};
    c = tiny(); c.attn.causal = false; c.attn.self_mask = true; c.attn.self_mask_rule = QKV_SELF_REFORMER;
    v[n++] = (variant_case){"reformer+padding", c, true};
    c = tiny(); c.attn.qkv = QKV_ATTN_HEAD_SHARED; c.attn.self_mask = true; c.attn.self_mask_rule = QKV_SELF_REFORMER;
    v[n++] = (variant_case){"head_shared+reformer", c, false};
    c = tiny(); c.attn.qkv = QKV_ATTN_KV_TIED; c.attn.key_norm = true; c.attn.kv_heads = 1; c.attn.gate = QKV_GATE_VALUE;
    c.attn.rel_pos_bias = true; v[n++] = (variant_case){"kv_tied+key_norm+kv_heads=1+gate_value+rel_pos", c, false};
    c = tiny(); c.attn.qkv = QKV_ATTN_SHARED; c.attn.role_scale = true; v[n++] = (variant_case){"shared+role_scale", c, false};
    c = tiny(); c.attn.value_proj = false; v[n++] = (variant_case){"value_proj=false", c, false};
    c = tiny(); c.attn.out_proj = false; v[n++] = (variant_case){"out_proj=false", c, false};
    c = tiny(); c.attn.kv_latent = 4; v[n++] = (variant_case){"kv_latent=4", c, false};
    c = tiny(); c.attn.alibi = true; v[n++] = (variant_case){"alibi", c, false};
    c = tiny(); c.heads = 4; c.attn.alibi = true; c.attn.kv_heads = 1; c.attn.causal = false;
    v[n++] = (variant_case){"alibi+kv_heads=1+padding", c, true};
    c = tiny(); c.attn.init = QKV_INIT_IDENTITY; v[n++] = (variant_case){"init=identity", c, false};
    c = tiny(); c.attn.init = QKV_INIT_MIMETIC; v[n++] = (variant_case){"init=mimetic", c, false};
    c = tiny(); c.attn.gate = QKV_GATE_HEADWISE; v[n++] = (variant_case){"gate=headwise", c, false};
    /* issue 22: a projection removed, differential and talking-heads attention */
    c = tiny(); c.attn.query_proj = false; v[n++] = (variant_case){"query_proj=false", c, false};
    c = tiny(); c.attn.key_proj = false; v[n++] = (variant_case){"key_proj=false", c, false};
    c = tiny(); c.attn.query_proj = false; c.attn.key_proj = false; v[n++] = (variant_case){"query+key_proj=false", c, false};
    c = tiny(); c.attn.qkv = QKV_ATTN_KV_TIED; c.attn.query_proj = false; v[n++] = (variant_case){"kv_tied+query_proj=false", c, false};
    c = tiny(); c.attn.diff = true; c.layers = 3; v[n++] = (variant_case){"diff", c, false};
    c = tiny(); c.attn.diff = true; c.attn.causal = false; v[n++] = (variant_case){"diff+padding", c, true};
    c = tiny(); c.attn.diff = true; c.attn.self_mask = true; v[n++] = (variant_case){"diff+self_mask", c, false};
    c = tiny(); c.attn.talking_heads = true; c.heads = 4; v[n++] = (variant_case){"talking_heads", c, false};
    c = tiny(); c.attn.talking_heads = true; c.heads = 4; c.attn.kv_heads = 2; c.attn.causal = false;
    v[n++] = (variant_case){"talking_heads+kv_heads=2+padding", c, true};
    c = tiny(); c.attn.qkv = QKV_ATTN_QK_TIED; c.attn.qk_diag = QKV_QK_DIAG_ALTERNATING;
    v[n++] = (variant_case){"qk_tied+qk_diag=alternating", c, false};
    c = tiny(); c.attn.qkv = QKV_ATTN_QK_TIED; c.attn.qk_diag = QKV_QK_DIAG_POSITIVE; c.attn.self_mask = true;
    v[n++] = (variant_case){"qk_tied+qk_diag=positive+self_mask", c, false};
    c = tiny(); c.attn.qkv = QKV_ATTN_SHARED; c.attn.qk_diag = QKV_QK_DIAG_RANDOM; c.attn.causal = false;
    v[n++] = (variant_case){"shared+qk_diag=random+padding", c, true};
    c = tiny(); c.attn.exclusive = true; v[n++] = (variant_case){"exclusive", c, false};
    c = tiny(); c.heads = 4; c.attn.exclusive = true; c.attn.kv_heads = 2; c.attn.causal = false;
    v[n++] = (variant_case){"exclusive+kv_heads=2+padding", c, true};
    c = tiny(); c.attn.exclusive = true; c.attn.qkv = QKV_ATTN_KV_TIED; c.attn.query_proj = false;
    v[n++] = (variant_case){"exclusive+kv_tied+query_proj=false", c, false};
    c = tiny(); c.attn.exclusive = true; c.attn.qkv = QKV_ATTN_QK_TIED; c.attn.diff = true;
    v[n++] = (variant_case){"exclusive+qk_tied+diff", c, false};
    c = tiny(); c.position = QKV_POS_ROPE; v[n++] = (variant_case){"position=rope", c, false};
    c = tiny(); c.position = QKV_POS_ROPE; c.attn.qkv = QKV_ATTN_QK_TIED; c.attn.qk_diag = QKV_QK_DIAG_ALTERNATING;
    c.attn.exclusive = true; v[n++] = (variant_case){"rope+qk_tied+qk_diag=alternating+exclusive", c, false};
    c = tiny(); c.position = QKV_POS_ROPE; c.attn.kv_heads = 1; c.heads = 2; c.attn.causal = false;
    v[n++] = (variant_case){"rope+kv_heads=1+padding", c, true};
    c = tiny(); c.position = QKV_POS_ROPE; c.attn.query_proj = false; c.attn.diff = true;
    v[n++] = (variant_case){"rope+query_proj=false+diff", c, false};
    c = tiny(); c.position = QKV_POS_NONE; c.attn.qkv = QKV_ATTN_QK_TIED;
    v[n++] = (variant_case){"position=none+qk_tied", c, false};
    return n;
}
#define NVARIANTS 62

START_TEST(test_model_grad_variant) {
    variant_case v[80];
    ck_assert_int_eq(variant_cases(v), NVARIANTS);
    qkv_model_check opt = {.batch = 2, .seed = 11 + (uint64_t)_i, .pad = v[_i].pad};
    qkv_model *m;
    qkv_gradcheck_stat *st;
    qkv_err err;
    int rc = qkv_model_gradcheck(&v[_i].cfg, &opt, &m, &st, &err);
    ck_assert_msg(rc >= 0, "%s: %s", v[_i].name, err.msg);
    for (int i = 0; i < m->params.n; i++) {
        ck_assert_msg(st[i].failed == 0, "%s: %s: %lld of %lld fail, max excess %g", v[_i].name,
                      m->params.items[i]->name, (long long)st[i].failed, (long long)st[i].checked,
                      st[i].max_excess);
        ck_assert_int_eq(st[i].checked, m->params.items[i]->t.numel);
    }
    ck_assert_int_eq(rc, 0);
    if (getenv("QKV_TEST_VERBOSE")) {
        double worst = 0;
        for (int i = 0; i < m->params.n; i++) worst = fmax(worst, st[i].max_abs_err);
        fprintf(stderr, "model gradcheck %-24s %lld params, max |analytic-numeric| %.3g\n",
                v[_i].name, (long long)m->params.numel, worst);
    }
    free(st);
    qkv_model_free(m);
}
END_TEST

/* ---- properties ---------------------------------------------------------------------- */

static qkv_tensor *tokens_of(int64_t B, int64_t T, int vocab, uint64_t seed) {
    int64_t s[2] = {B, T};
    qkv_tensor *t = qkv_tensor_zeros(QKV_I32, 2, s);
    qkv_rng r;
    qkv_rng_seed(&r, seed);
    for (int64_t i = 0; i < t->numel; i++) ((int32_t *)t->data)[i] = (int32_t)qkv_rng_below(&r, (uint64_t)vocab);
    return t;
}

START_TEST(test_param_names_and_counts) {
    qkv_model_config c = qkv_model_config_default();
    c.vocab = 64; c.seq_len = 32; c.layers = 1;
    int64_t d = 64, hd = 16;
    /* attention parameters per variant, output projection (d*d + d) included */
    int64_t expect[QKV_ATTN_QKV_COUNT] = {
        3 * d * d + d * d + d, d * d + d * d + d, d * d + d, 2 * d * d + d * d + d,
        2 * d * d + d * d + d, 3 * hd * hd + d * d + d};
    const char *key[QKV_ATTN_QKV_COUNT] = {"blocks.0.attn.wq.weight", "blocks.0.attn.w.weight",
        "blocks.0.attn.wo.weight", "blocks.0.attn.wqk.weight", "blocks.0.attn.wkv.weight",
        "blocks.0.attn.queries.weight"};
    qkv_err err;
    for (int q = 0; q < QKV_ATTN_QKV_COUNT; q++) {
        c.attn.qkv = (qkv_attn_qkv)q;
        qkv_model *m = qkv_model_new(&c, QKV_F32, 0, &err);
        ck_assert_ptr_nonnull(m);
        ck_assert_int_eq(qkv_model_attention_params(m), expect[q]);
        ck_assert_ptr_nonnull(qkv_params_find(&m->params, key[q]));
        ck_assert_ptr_nonnull(qkv_params_find(&m->params, "tok_emb.weight"));
        ck_assert_ptr_nonnull(qkv_params_find(&m->params, "lm_head.bias"));
        ck_assert_ptr_nonnull(qkv_params_find(&m->params, "blocks.0.ff.fc2.weight"));
        qkv_model_free(m);
    }
}
END_TEST

START_TEST(test_heads_must_divide) {
    qkv_model_config c = tiny();
    c.heads = 3;
    qkv_err err;
    ck_assert_ptr_null(qkv_model_new(&c, QKV_F32, 0, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "does not divide"));
}
END_TEST

START_TEST(test_init_deterministic) {
    qkv_model_config c = tiny();
    qkv_err err;
    qkv_model *a = qkv_model_new(&c, QKV_F32, 42, &err);
    qkv_model *b = qkv_model_new(&c, QKV_F32, 42, &err);
    qkv_model *d = qkv_model_new(&c, QKV_F64, 42, &err);
    qkv_model *e = qkv_model_new(&c, QKV_F32, 43, &err);
    ck_assert_int_eq(memcmp(a->params.data, b->params.data, (size_t)a->params.numel * 4), 0);
    ck_assert_int_ne(memcmp(a->params.data, e->params.data, (size_t)a->params.numel * 4), 0);
    for (int64_t i = 0; i < a->params.numel; i++) /* the F64 model holds the same values */
        ck_assert_float_eq(((float *)a->params.data)[i], (float)((double *)d->params.data)[i]);
    /* PyTorch's init ranges: Linear U(-1/sqrt(in), 1/sqrt(in)), LayerNorm ones */
    qkv_param *w = qkv_params_find(&a->params, "blocks.0.ff.fc2.weight");
    for (int64_t i = 0; i < w->t.numel; i++) ck_assert(fabs(qkv_tensor_get(&w->t, i)) <= 1 / sqrt(12.0));
    ck_assert_double_eq(qkv_tensor_get(&qkv_params_find(&a->params, "ln_f.weight")->t, 0), 1.0);
    qkv_model_free(a); qkv_model_free(b); qkv_model_free(d); qkv_model_free(e);
}
END_TEST

/* causal: changing a later token never changes an earlier position's logits */
START_TEST(test_causal_no_future_leak) {
    qkv_model_config c = tiny();
    c.attn.qkv = (qkv_attn_qkv)_i;
    qkv_err err;
    qkv_model *m = qkv_model_new(&c, QKV_F64, 1, &err);
    qkv_tensor *t = tokens_of(1, 5, 7, 3);
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_tensor *l1 = qkv_model_forward(ctx, m, t, NULL);
    ((int32_t *)t->data)[4] = (((int32_t *)t->data)[4] + 1) % 7;
    qkv_tensor *l2 = qkv_model_forward(ctx, m, t, NULL);
    ck_assert(qkv_ctx_ok(ctx));
    for (int64_t i = 0; i < 4 * 7; i++) ck_assert_double_eq(qkv_tensor_get(l1, i), qkv_tensor_get(l2, i));
    int differs = 0;
    for (int64_t i = 4 * 7; i < 5 * 7; i++) differs |= qkv_tensor_get(l1, i) != qkv_tensor_get(l2, i);
    ck_assert(differs);
    qkv_ctx_free(ctx); qkv_tensor_free(t); qkv_model_free(m);
}
END_TEST

/* attention rows are distributions; a fully blocked row (causal + self_mask, first query) is 0 */
START_TEST(test_attention_rows_and_blocked_row) {
    qkv_model_config c = tiny();
    c.attn.qkv = (qkv_attn_qkv)_i;
    c.attn.self_mask = true;
    qkv_err err;
    qkv_model *m = qkv_model_new(&c, QKV_F32, 1, &err);
    qkv_tensor *t = tokens_of(2, 5, 7, 4);
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_tensor *logits = qkv_model_forward(ctx, m, t, NULL);
    ck_assert(logits != NULL);
    for (int64_t i = 0; i < logits->numel; i++) ck_assert(isfinite(qkv_tensor_get(logits, i)));
    for (int layer = 0; layer < 2; layer++) {
        const qkv_tensor *a = qkv_model_attention(m, layer);
        ck_assert_int_eq(a->ndim, 4);
        for (int64_t row = 0; row < a->numel / 5; row++) {
            double s = 0;
            for (int j = 0; j < 5; j++) {
                double w = qkv_tensor_get(a, row * 5 + j);
                int i = (int)(row % 5);
                if (j >= i) ck_assert_double_eq(w, 0); /* causal + self-mask */
                s += w;
            }
            if (row % 5 == 0) ck_assert_double_eq(s, 0);       /* fully blocked */
            else ck_assert_double_eq_tol(s, 1, 1e-5);
        }
    }
    qkv_ctx_free(ctx); qkv_tensor_free(t); qkv_model_free(m);
}
END_TEST

/* self_mask_rule reformer: a token attends to itself only when no other key is visible. Causal:
 * the first token attends to itself alone (weight 1), no other token ever does; strict leaves
 * the first row empty. Bidirectional with every key but the first padded: the first query has
 * only itself (reformer: weight 1 on itself; strict: an empty row), the others see the first. */
START_TEST(test_self_mask_reformer_rule) {
    qkv_err err;
    for (int rule = 0; rule < QKV_SELF_RULE_COUNT; rule++)
        for (int causal = 0; causal < 2; causal++) {
            qkv_model_config c = tiny();
            c.attn.self_mask = true;
            c.attn.self_mask_rule = (qkv_self_mask_rule)rule;
            c.attn.causal = causal;
            qkv_model *m = qkv_model_new(&c, QKV_F64, 1, &err);
            ck_assert_msg(m != NULL, "%s", err.msg);
            qkv_tensor *t = tokens_of(2, 5, 7, 4);
            int64_t ps[2] = {2, 5};
            int32_t pv[10] = {1, 1, 1, 1, 1, 1, 0, 0, 0, 0}; /* batch 1: only the first token is real */
            qkv_tensor *pad = causal ? NULL : qkv_tensor_from_buffer(QKV_I32, 2, ps, pv);
            qkv_ctx *ctx = qkv_ctx_new();
            ck_assert_ptr_nonnull(qkv_model_forward(ctx, m, t, pad));
            bool reformer = rule == QKV_SELF_REFORMER;
            for (int layer = 0; layer < 2; layer++) {
                const qkv_tensor *a = qkv_model_attention(m, layer); /* (B,H,T,T) */
                for (int64_t b = 0; b < 2; b++)
                    for (int64_t h = 0; h < 2; h++)
                        for (int64_t i = 0; i < 5; i++) {
                            const int64_t row = ((b * 2 + h) * 5 + i) * 5;
                            /* alone: no other visible key (causal: the first token; padded: batch 1) */
                            bool alone = causal ? i == 0 : b == 1 && i == 0;
                            double self = qkv_tensor_get(a, row + i), sum = 0;
                            for (int j = 0; j < 5; j++) sum += qkv_tensor_get(a, row + j);
                            if (alone) {
                                ck_assert_msg(self == (reformer ? 1.0 : 0.0), "rule %d causal %d b %lld i %lld: "
                                              "self weight %g", rule, causal, (long long)b, (long long)i, self);
                                ck_assert_double_eq_tol(sum, reformer ? 1 : 0, 1e-12);
                            } else {
                                ck_assert_msg(self == 0, "rule %d causal %d b %lld i %lld attends to itself (%g)",
                                              rule, causal, (long long)b, (long long)i, self);
                                ck_assert_double_eq_tol(sum, 1, 1e-12);
                            }
                            if (!causal && b == 1 && i > 0) /* padded batch: only the first key is visible */
                                ck_assert_double_eq_tol(qkv_tensor_get(a, row), 1, 1e-12);
                        }
            }
            qkv_ctx_free(ctx); qkv_tensor_free(t); qkv_tensor_free(pad); qkv_model_free(m);
        }
}
END_TEST

/* weights of a (out,in) parameter */
static double wat(const qkv_model *m, const char *name, int64_t r, int64_t col) {
    qkv_param *p = qkv_params_find(&m->params, name);
    ck_assert_msg(p != NULL, "no parameter %s", name);
    return qkv_tensor_get(&p->t, r * p->t.shape[1] + col);
}

/* max |W - diag I| and the standard deviation of W - diag I over a square parameter */
static void eye_stats(const qkv_model *m, const char *name, double diag, double *maxdev, double *sd) {
    qkv_param *p = qkv_params_find(&m->params, name);
    ck_assert_msg(p != NULL, "no parameter %s", name);
    ck_assert_int_eq(p->t.shape[0], p->t.shape[1]);
    int64_t n = p->t.shape[0];
    double mx = 0, s2 = 0;
    for (int64_t r = 0; r < n; r++)
        for (int64_t col = 0; col < n; col++) {
            double e = wat(m, name, r, col) - (r == col ? diag : 0);
            mx = fmax(mx, fabs(e));
            s2 += e * e;
        }
    *maxdev = mx;
    *sd = sqrt(s2 / (double)(n * n));
}

/* max |A^T B - target I| for (n,n) parameters A, B (stored (out,in)): with Q = X A^T and
 * K = X B^T the scores are X A^T B X^T, and the output map of V = X Wv^T, Y = V Wo^T is Wo Wv
 * (then A = Wo^T: pass transpose_a) */
static double product_dev(const qkv_model *m, const char *a, const char *b, bool a_rows, double target) {
    qkv_param *pa = qkv_params_find(&m->params, a);
    int64_t n = pa->t.shape[0];
    double mx = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t r = 0; r < n; r++) s += (a_rows ? wat(m, a, i, r) : wat(m, a, r, i)) * wat(m, b, r, j);
            mx = fmax(mx, fabs(s - (i == j ? target : 0)));
        }
    return mx;
}

/* model.attention.init: identity starts each square Q/K/V projection at I + N(0, 0.02^2);
 * mimetic at W_Q = W_K = sqrt(0.7) I + noise, W_V = sqrt(0.4) I + noise, W_O = -sqrt(0.4) I +
 * noise, so W_Q^T W_K is near 0.7 I and W_O W_V near -0.4 I; seeded like every other start.
 * Bounds: 6 standard deviations of the noise (0.12 for one weight; for a product of two
 * (16,16) starts, sqrt(0.7) (0.02 sqrt 2) per entry plus the noise's own product: 0.15). */
START_TEST(test_init_identity_mimetic) {
    qkv_model_config c = tiny();
    c.d_model = 16; c.heads = 2; c.layers = 1;
    qkv_err err;
    double mx, sd;
    c.attn.init = QKV_INIT_IDENTITY;
    qkv_model *m = qkv_model_new(&c, QKV_F64, 3, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    const char *qkv[3] = {"blocks.0.attn.wq.weight", "blocks.0.attn.wk.weight", "blocks.0.attn.wv.weight"};
    for (int i = 0; i < 3; i++) {
        eye_stats(m, qkv[i], 1.0, &mx, &sd);
        ck_assert_msg(mx < 0.12 && sd > 0.017 && sd < 0.023, "%s: max |W - I| %g, noise sd %g", qkv[i], mx, sd);
    }
    eye_stats(m, "blocks.0.attn.wo.weight", 1.0, &mx, &sd); /* identity leaves W_O at its default */
    ck_assert_msg(mx > 0.7, "identity init moved W_O to I (max |W_O - I| %g)", mx);
    for (int64_t i = 0; i < 16 * 16; i++)
        ck_assert(fabs(qkv_tensor_get(&qkv_params_find(&m->params, "blocks.0.attn.wo.weight")->t, i)) <= 0.25);
    /* seeded: the same seed gives the same bits (F32 too), another seed another noise */
    qkv_model *same = qkv_model_new(&c, QKV_F64, 3, &err), *other = qkv_model_new(&c, QKV_F64, 4, &err);
    ck_assert_int_eq(memcmp(m->params.data, same->params.data, (size_t)m->params.numel * sizeof(double)), 0);
    ck_assert(wat(m, qkv[0], 0, 1) != wat(other, qkv[0], 0, 1));
    qkv_model *f32 = qkv_model_new(&c, QKV_F32, 3, &err);
    for (int64_t i = 0; i < m->params.numel; i++)
        ck_assert_float_eq(((float *)f32->params.data)[i], (float)((double *)m->params.data)[i]);
    qkv_model_free(m); qkv_model_free(same); qkv_model_free(other); qkv_model_free(f32);

    c.attn.init = QKV_INIT_MIMETIC;
    m = qkv_model_new(&c, QKV_F64, 3, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    eye_stats(m, qkv[0], sqrt(0.7), &mx, &sd);
    ck_assert_msg(mx < 0.12 && sd > 0.017 && sd < 0.023, "mimetic W_Q: max dev %g, sd %g", mx, sd);
    eye_stats(m, qkv[2], sqrt(0.4), &mx, &sd);
    ck_assert_msg(mx < 0.12, "mimetic W_V: max dev %g", mx);
    eye_stats(m, "blocks.0.attn.wo.weight", -sqrt(0.4), &mx, &sd);
    ck_assert_msg(mx < 0.12, "mimetic W_O: max dev %g", mx);
    double qk = product_dev(m, qkv[0], qkv[1], false, 0.7);
    double ov = product_dev(m, "blocks.0.attn.wo.weight", qkv[2], true, -0.4);
    ck_assert_msg(qk < 0.15 && ov < 0.15, "mimetic: max |W_Q^T W_K - 0.7 I| %g, max |W_O W_V + 0.4 I| %g", qk, ov);
    qkv_model_free(m);

    /* the default start is nowhere near either: the bounds above can fail */
    c.attn.init = QKV_INIT_DEFAULT;
    m = qkv_model_new(&c, QKV_F64, 3, &err);
    ck_assert(product_dev(m, qkv[0], qkv[1], false, 0.7) > 0.5);
    eye_stats(m, qkv[0], 1.0, &mx, &sd);
    ck_assert(mx > 0.7);
    qkv_model_free(m);

    /* tied and grouped maps: kv_tied's wkv is a value too (sqrt(0.4)), qk_tied's wqk a query and a
     * key (sqrt(0.7)); a non-square map (grouped keys and values) keeps the default start */
    c.attn.init = QKV_INIT_MIMETIC;
    c.attn.qkv = QKV_ATTN_KV_TIED;
    m = qkv_model_new(&c, QKV_F64, 3, &err);
    eye_stats(m, "blocks.0.attn.wkv.weight", sqrt(0.4), &mx, &sd);
    ck_assert_msg(mx < 0.12, "kv_tied mimetic wkv: max dev %g", mx);
    qkv_model_free(m);
    c.attn.qkv = QKV_ATTN_QK_TIED;
    m = qkv_model_new(&c, QKV_F64, 3, &err);
    eye_stats(m, "blocks.0.attn.wqk.weight", sqrt(0.7), &mx, &sd);
    ck_assert_msg(mx < 0.12, "qk_tied mimetic wqk: max dev %g", mx);
    qkv_model_free(m);
    c.attn.qkv = QKV_ATTN_FULL;
    c.attn.init = QKV_INIT_IDENTITY;
    c.attn.kv_heads = 1;
    m = qkv_model_new(&c, QKV_F64, 3, &err);
    eye_stats(m, qkv[0], 1.0, &mx, &sd);
    ck_assert(mx < 0.12);
    qkv_param *wk = qkv_params_find(&m->params, qkv[1]);
    ck_assert_int_eq(wk->t.shape[0], 8); /* (kv_heads head_dim, d_model) */
    for (int64_t i = 0; i < wk->t.numel; i++) ck_assert(fabs(qkv_tensor_get(&wk->t, i)) <= 0.25);
    qkv_model_free(m);
}
END_TEST

/* Parameter counts: for every option, the estimate qkv_model_param_count, the model's
 * parameter tensors and a count written from the maths agree. d = 64, H = 4 (head_dim 16),
 * 2 layers, d_ff 96, vocab 20, seq_len 12; attn is one layer's attention, output projection
 * (d^2 + d) included. */
START_TEST(test_variant_param_counts) {
    const int64_t d = 64, H = 4, hd = 16, L = 2, F = 96, V = 20, T = 12, R = 3, r = 8;
    const int64_t wo = d * d + d;
    typedef struct { const char *name; qkv_model_config c; int64_t attn; } count_case;
    count_case v[48];
    int n = 0;
    qkv_model_config base = qkv_model_config_default(), c;
    base.vocab = (int)V; base.seq_len = (int)T; base.d_model = (int)d; base.heads = (int)H; base.layers = (int)L;
    base.d_ff = (int)F; base.attn.rel_pos_max = (int)R;
#define ROW(nm, expect, ...) (c = base, __VA_ARGS__, v[n++] = (count_case){nm, c, expect})
    ROW("full", 3 * d * d + wo, (void)0);
    ROW("kv_heads=1", d * d + 2 * d * hd + wo, c.attn.kv_heads = 1);             /* Wk, Wv: (d, d g / H) */
    ROW("kv_heads=2", d * d + 2 * d * (2 * hd) + wo, c.attn.kv_heads = 2);
    ROW("kv_heads=4 (= heads)", 3 * d * d + wo, c.attn.kv_heads = 4);
    ROW("kv_tied+kv_heads=2", d * d + d * (2 * hd) + wo, c.attn.qkv = QKV_ATTN_KV_TIED, c.attn.kv_heads = 2);
    ROW("shared+role_scale", d * d + 3 * d + wo, c.attn.qkv = QKV_ATTN_SHARED, c.attn.role_scale = true);
    ROW("value_proj=false", 2 * d * d + wo, c.attn.value_proj = false);
    ROW("qk_tied+value_proj=false", d * d + wo, c.attn.qkv = QKV_ATTN_QK_TIED, c.attn.value_proj = false);
    ROW("out_proj=false", 3 * d * d, c.attn.out_proj = false);
    ROW("identity+out_proj=false", 0, c.attn.qkv = QKV_ATTN_IDENTITY, c.attn.out_proj = false);
    ROW("kv_latent=8", d * d + d * r + 2 * r * d + wo, c.attn.kv_latent = (int)r);
    ROW("kv_latent=8+kv_heads=1", d * d + d * r + 2 * r * hd + wo, c.attn.kv_latent = (int)r, c.attn.kv_heads = 1);
    ROW("alibi", 3 * d * d + wo, c.attn.alibi = true);                            /* fixed slopes */
    ROW("key_norm+self_mask+reformer", 3 * d * d + wo, c.attn.key_norm = true, c.attn.self_mask = true,
        c.attn.self_mask_rule = QKV_SELF_REFORMER);
    ROW("init=mimetic", 3 * d * d + wo, c.attn.init = QKV_INIT_MIMETIC);
    ROW("gate=headwise", 3 * d * d + wo + d * H + H, c.attn.gate = QKV_GATE_HEADWISE);
    ROW("gate=output", 3 * d * d + wo + d * d + d, c.attn.gate = QKV_GATE_OUTPUT);
    ROW("gate=value+kv_heads=1", d * d + 2 * d * hd + wo + d * hd + hd, c.attn.gate = QKV_GATE_VALUE,
        c.attn.kv_heads = 1);
    ROW("gate=headwise+out_proj=false", 3 * d * d + d * H + H, c.attn.gate = QKV_GATE_HEADWISE,
        c.attn.out_proj = false);
    ROW("rel_pos_bias+kv_heads=2", d * d + 2 * d * (2 * hd) + wo + (2 * R + 1) * H, c.attn.rel_pos_bias = true,
        c.attn.kv_heads = 2);
    ROW("head_shared+out_proj=false", 3 * hd * hd, c.attn.qkv = QKV_ATTN_HEAD_SHARED, c.attn.out_proj = false);
    ROW("shared+role_scale+gate=headwise", d * d + 3 * d + wo + d * H + H, c.attn.qkv = QKV_ATTN_SHARED,
        c.attn.role_scale = true, c.attn.gate = QKV_GATE_HEADWISE);
    ROW("query_proj=false", 2 * d * d + wo, c.attn.query_proj = false);
    ROW("key_proj=false", 2 * d * d + wo, c.attn.key_proj = false);
    ROW("query_proj=false+key_proj=false", d * d + wo, c.attn.query_proj = false, c.attn.key_proj = false);
    ROW("query_proj=false+kv_heads=1", 2 * d * hd + wo, c.attn.query_proj = false, c.attn.kv_heads = 1);
    ROW("kv_tied+query_proj=false", d * d + wo, c.attn.qkv = QKV_ATTN_KV_TIED, c.attn.query_proj = false);
    ROW("query_proj=false+kv_latent=8", d * r + 2 * r * d + wo, c.attn.query_proj = false, c.attn.kv_latent = (int)r);
    ROW("diff", 3 * d * d + wo + 4 * (hd / 2) + hd, c.attn.diff = true); /* lambda_q1..k2, subln */
    ROW("talking_heads", 3 * d * d + wo + 2 * H * H, c.attn.talking_heads = true);
    ROW("talking_heads+kv_heads=2", d * d + 2 * d * (2 * hd) + wo + 2 * H * H, c.attn.talking_heads = true,
        c.attn.kv_heads = 2);
    /* positions: rope and none have no table (no parameters of their own) */
    ROW("position=rope", 3 * d * d + wo, c.position = QKV_POS_ROPE);
    ROW("position=none+qk_tied", 2 * d * d + wo, c.position = QKV_POS_NONE, c.attn.qkv = QKV_ATTN_QK_TIED);
    /* qk_diag: its diagonal D, d per layer; exclusive: no parameters */
    ROW("qk_tied+qk_diag=alternating", 2 * d * d + d + wo, c.attn.qkv = QKV_ATTN_QK_TIED, c.attn.qk_diag = QKV_QK_DIAG_ALTERNATING);
    ROW("shared+qk_diag=random", d * d + d + wo, c.attn.qkv = QKV_ATTN_SHARED, c.attn.qk_diag = QKV_QK_DIAG_RANDOM);
    ROW("exclusive", 3 * d * d + wo, c.attn.exclusive = true);
#undef ROW
    qkv_err err;
    for (int i = 0; i < n; i++) {
        /* embeddings, per layer (2 LayerNorms, attention, feed-forward), final LayerNorm, head */
        int64_t table = v[i].c.position == QKV_POS_LEARNED ? T * d : 0; /* pos_emb */
        int64_t expect = V * d + table + L * (4 * d + v[i].attn + 2 * d * F + F + d) + 2 * d + d * V + V;
        qkv_model *m = qkv_model_new(&v[i].c, QKV_F32, 0, &err);
        ck_assert_msg(m != NULL, "%s: %s", v[i].name, err.msg);
        int64_t sum = 0;
        for (int k = 0; k < m->params.n; k++) sum += m->params.items[k]->t.numel;
        ck_assert_msg(sum == m->params.numel && sum == expect && qkv_model_param_count(&v[i].c) == expect,
                      "%s: tensors %lld, flat %lld, estimate %lld, expected %lld", v[i].name, (long long)sum,
                      (long long)m->params.numel, (long long)qkv_model_param_count(&v[i].c), (long long)expect);
        ck_assert_msg(qkv_model_attention_params(m) == L * v[i].attn, "%s: attention %lld, expected %lld", v[i].name,
                      (long long)qkv_model_attention_params(m), (long long)(L * v[i].attn));
        qkv_model_free(m);
    }
}
END_TEST

/* identity: Q = K = V = X, so at T=1 without mask... the head slices are X itself: the
 * output equals wo applied to X (the only key is the token itself) */
START_TEST(test_identity_single_token) {
    qkv_params p;
    qkv_params_init(&p, QKV_F64);
    qkv_attention at;
    qkv_attn_config ac = qkv_model_config_default().attn;
    ac.qkv = QKV_ATTN_IDENTITY;
    qkv_err err;
    ck_assert_int_eq(qkv_attention_init(&at, &p, "a", 4, 2, &ac, &err), 0);
    ck_assert_int_eq(p.n, 2); /* only the output projection */
    qkv_params_finalize(&p);
    qkv_params_init_values(&p, 1);
    int64_t s[3] = {1, 1, 4};
    double xv[4] = {0.5, -1, 2, 0.25};
    qkv_tensor *x = qkv_tensor_from_buffer(QKV_F64, 3, s, xv);
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_attn_masks none = {0};
    qkv_tensor *y = qkv_attention_forward(ctx, &at, x, &none);
    qkv_tensor *ref = qkv_linear_forward(ctx, &at.wo, x);
    for (int i = 0; i < 4; i++) ck_assert_double_eq_tol(qkv_tensor_get(y, i), qkv_tensor_get(ref, i), 1e-12);
    qkv_ctx_free(ctx); qkv_tensor_free(x); qkv_params_free(&p);
}
END_TEST

START_TEST(test_padding_keys_ignored) {
    qkv_model_config c = tiny();
    c.attn.causal = false;
    qkv_err err;
    qkv_model *m = qkv_model_new(&c, QKV_F64, 2, &err);
    qkv_tensor *t = tokens_of(1, 5, 7, 5);
    int64_t s[2] = {1, 5};
    int32_t pv[5] = {1, 1, 1, 0, 0};
    qkv_tensor *pad = qkv_tensor_from_buffer(QKV_I32, 2, s, pv);
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_tensor *l1 = qkv_model_forward(ctx, m, t, pad);
    ((int32_t *)t->data)[4] = (((int32_t *)t->data)[4] + 3) % 7; /* change a padded token */
    qkv_tensor *l2 = qkv_model_forward(ctx, m, t, pad);
    for (int64_t i = 0; i < 3 * 7; i++) ck_assert_double_eq(qkv_tensor_get(l1, i), qkv_tensor_get(l2, i));
    qkv_ctx_free(ctx); qkv_tensor_free(t); qkv_tensor_free(pad); qkv_model_free(m);
}
END_TEST

START_TEST(test_sequence_too_long) {
    qkv_model_config c = tiny();
    qkv_err err;
    qkv_model *m = qkv_model_new(&c, QKV_F32, 2, &err);
    qkv_tensor *t = tokens_of(1, 6, 7, 5);
    qkv_ctx *ctx = qkv_ctx_new();
    ck_assert_ptr_null(qkv_model_forward(ctx, m, t, NULL));
    ck_assert_ptr_nonnull(strstr(qkv_ctx_error(ctx), "seq_len"));
    qkv_ctx_free(ctx); qkv_tensor_free(t); qkv_model_free(m);
}
END_TEST

/* qkv's own threads. Kernels other than matrix products split work so that every element
 * (and every per-column sum) is computed as in serial code: the same bits for any thread
 * count. Matrix products are split by rows, each piece a BLAS call of its own, and BLAS may
 * round a piece differently from the whole (it picks kernels by size): so a model's numbers
 * are the same bits for the same thread count, and agree to float precision across counts. */
static void model_loss_grads(qkv_model *m, qkv_ctx *ctx, qkv_tensor *tok, qkv_tensor *tgt, int threads,
                             double *loss_out, float *grads) {
    ck_assert_int_eq(qkv_set_threads(threads), 0);
    qkv_params_zero_grad(&m->params);
    qkv_ctx_reset(ctx);
    qkv_tensor *loss = qkv_model_loss(ctx, m, tok, tgt, NULL);
    ck_assert_int_eq(qkv_backward(ctx, loss), 0);
    *loss_out = qkv_tensor_get(loss, 0);
    memcpy(grads, m->params.grad, (size_t)m->params.numel * sizeof *grads);
    qkv_set_threads(1);
}

START_TEST(test_threads_model) {
    qkv_model_config c = qkv_model_config_default();
    c.vocab = 64; c.seq_len = 32; c.d_model = 64; c.heads = 4; c.layers = 2; c.d_ff = 256;
    c.attn.qkv = (qkv_attn_qkv)(_i % QKV_ATTN_QKV_COUNT);
    c.attn.rel_pos_bias = _i % 2;
    qkv_err err;
    qkv_model *m = qkv_model_new(&c, QKV_F32, 3, &err);
    qkv_tensor *tok = tokens_of(16, 32, 64, 1), *tgt = tokens_of(16, 32, 64, 2); /* big enough to split */
    ((int32_t *)tgt->data)[5] = -100;
    qkv_ctx *ctx = qkv_ctx_new();
    size_t bytes = (size_t)m->params.numel * sizeof(float);
    float *g1 = malloc(bytes), *ga = malloc(bytes), *gb = malloc(bytes);
    double l1, la, lb;
    model_loss_grads(m, ctx, tok, tgt, 1, &l1, g1);
    double gmax = 0;
    for (int64_t i = 0; i < m->params.numel; i++) gmax = fmax(gmax, fabs(g1[i]));
    for (int threads = 2; threads <= 3; threads++) {
        model_loss_grads(m, ctx, tok, tgt, threads, &la, ga);
        model_loss_grads(m, ctx, tok, tgt, threads, &lb, gb);
        ck_assert(la == lb); /* same thread count: the same bits */
        ck_assert_msg(!memcmp(ga, gb, bytes), "gradients differ between two runs with %d threads", threads);
        ck_assert_msg(fabs(la - l1) <= 1e-6 * fabs(l1), "loss %.9g with %d threads, %.9g with 1", la, threads, l1);
        for (int64_t i = 0; i < m->params.numel; i++) /* float precision, relative to the largest */
            ck_assert_msg(fabs(ga[i] - g1[i]) <= 1e-5 * gmax, "grad %lld: %g with %d threads, %g with 1",
                          (long long)i, ga[i], threads, g1[i]);
    }
    free(g1); free(ga); free(gb);
    qkv_ctx_free(ctx); qkv_tensor_free(tok); qkv_tensor_free(tgt); qkv_model_free(m);
}
END_TEST

/* every kernel other than the matrix products: the same bits with 1 and 3 threads */
START_TEST(test_threads_kernels_bit_identical) {
    enum { R = 512, N = 96, E = R * N };
    float *x = malloc(E * sizeof(float)), *w = malloc(N * sizeof(float)), *b = malloc(N * sizeof(float));
    float *out[2], *aux[2], *acc[2], *mean[2], *rstd[2], *col[2];
    int32_t *idx = malloc(R * sizeof(int32_t)), *mask = malloc(N * N * sizeof(int32_t));
    qkv_rng r;
    qkv_rng_seed(&r, 4);
    for (int i = 0; i < E; i++) x[i] = (float)qkv_rng_normal(&r);
    for (int i = 0; i < N; i++) { w[i] = (float)qkv_rng_normal(&r); b[i] = (float)qkv_rng_normal(&r); }
    for (int i = 0; i < R; i++) idx[i] = (int32_t)qkv_rng_below(&r, 7); /* repeated rows: a scatter-add */
    for (int i = 0; i < N * N; i++) mask[i] = (i % N) > (i / N);
    qkv_bcast bc;
    int nd;
    int64_t xs[4] = {R / N, N, N}, ms[2] = {N, N}, os[4];
    qkv__bcast_init(&bc, 3, xs, 2, ms, &nd, os);
    for (int t = 0; t < 2; t++) {
        out[t] = calloc(E, sizeof(float)); aux[t] = calloc(E, sizeof(float)); acc[t] = calloc(E, sizeof(float));
        mean[t] = calloc(R, sizeof(float)); rstd[t] = calloc(R, sizeof(float)); col[t] = calloc(N, sizeof(float));
        qkv_set_threads(t ? 3 : 1);
        int64_t s4[4] = {4, R / 4, 2, N / 2};
        qkv__k_unary_f32(QKV_UN_GELU, E, x, out[t], aux[t]);
        qkv__k_unary_backward_f32(QKV_UN_GELU, E, x, out[t], aux[t], x, acc[t], 0);
        qkv__k_softmax_f32(R, N, x, aux[t]);
        qkv__k_softmax_backward_f32(R, N, aux[t], x, 0.5, acc[t]);
        qkv__k_masked_softmax_f32(R, N, x, &bc, mask, 0.3, -INFINITY, out[t]);
        qkv__k_layernorm_f32(R, N, x, w, b, 1e-5, aux[t], mean[t], rstd[t]);
        float *scratch = malloc((size_t)qkv_layernorm_backward_scratch(R, N) * sizeof(float));
        qkv__k_layernorm_backward_f32(R, N, x, w, mean[t], rstd[t], out[t], acc[t], col[t], col[t], 0, scratch);
        free(scratch);
        qkv__k_sum_rows_f32(R, N, out[t], col[t]);
        qkv__k_embedding_backward_f32(R, N / 2, idx, x, acc[t]);
        qkv__k_transpose_f32(s4, 1, 2, x, out[t], 1);
        qkv__k_binary_flat_backward_f32(QKV_BIN_MUL, E, x, aux[t], out[t], acc[t], NULL, 0);
        qkv__k_axpy_f32(E, 0.7, out[t], acc[t]);
    }
    qkv_set_threads(1);
    ck_assert(!memcmp(out[0], out[1], E * sizeof(float)));
    ck_assert(!memcmp(aux[0], aux[1], E * sizeof(float)));
    ck_assert(!memcmp(acc[0], acc[1], E * sizeof(float)));
    ck_assert(!memcmp(col[0], col[1], N * sizeof(float)));
    ck_assert(!memcmp(mean[0], mean[1], R * sizeof(float)) && !memcmp(rstd[0], rstd[1], R * sizeof(float)));
    for (int t = 0; t < 2; t++) { free(out[t]); free(aux[t]); free(acc[t]); free(mean[t]); free(rstd[t]); free(col[t]); }
    free(x); free(w); free(b); free(idx); free(mask);
}
END_TEST

Suite *nn_suite(void) {
    Suite *s = suite_create("nn");
    TCase *g = tcase_create("gradcheck");
    tcase_set_timeout(g, 60);
    tcase_add_test(g, test_linear_grad);
    tcase_add_test(g, test_layernorm_grad);
    tcase_add_test(g, test_feedforward_grad);
    tcase_add_loop_test(g, test_attention_module_grad, 0, QKV_ATTN_QKV_COUNT);
    tcase_add_loop_test(g, test_attention_option_grad, 0, NATTN_CASES);
    tcase_add_loop_test(g, test_model_grad_variant, 0, NVARIANTS);
    suite_add_tcase(s, g);
    TCase *p = tcase_create("properties");
    tcase_add_test(p, test_param_names_and_counts);
    tcase_add_test(p, test_heads_must_divide);
    tcase_add_test(p, test_init_deterministic);
    tcase_add_loop_test(p, test_causal_no_future_leak, 0, QKV_ATTN_QKV_COUNT);
    tcase_add_loop_test(p, test_attention_rows_and_blocked_row, 0, QKV_ATTN_QKV_COUNT);
    tcase_add_test(p, test_self_mask_reformer_rule);
    tcase_add_test(p, test_init_identity_mimetic);
    tcase_add_test(p, test_variant_param_counts);
    tcase_add_test(p, test_identity_single_token);
    tcase_add_test(p, test_padding_keys_ignored);
    tcase_add_test(p, test_sequence_too_long);
    tcase_add_loop_test(p, test_threads_model, 0, 2 * QKV_ATTN_QKV_COUNT);
    tcase_add_test(p, test_threads_kernels_bit_identical);
    suite_add_tcase(s, p);
    return s;
}
