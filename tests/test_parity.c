/* Parity with PyTorch: every attention variant and option, and the seed question's own
 * SelfAttention class, against fixtures written by scripts/torch_fixtures.py (committed in
 * tests/fixtures/). float32; every element within max(1e-6, 1e-4 |reference|). */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/safetensors.h"
#include "nn/model.h"
#include "suites.h"
#include "testutil.h"

#define FIXDIR "fixtures/"
#define REL 1e-4
#define ABS 1e-6

static const char *const MODEL_FIXTURES[] = {
    "full", "shared", "identity", "qk_tied", "kv_tied", "head_shared", "head_shared_head_dim",
    "rel_pos_bias", "gate_output", "gate_value", "qk_tied_self_mask", "head_shared_self_mask",
    "bidirectional_pad", "relu", "gelu_tanh", "scale_embed",
    /* the options real models use (fixtures written with their keys in the metadata) */
    "gqa", "mqa", "kv_tied_mqa", "gqa_rel_pos_bias", "gqa_gate_value", "qk_tied_key_norm_reformer",
    "head_shared_reformer_pad", "kv_tied_key_norm", "shared_role_scale", "value_proj_off", "qk_tied_value_proj_off",
    "out_proj_off", "kv_latent", "kv_latent_gqa", "alibi", "alibi_6_heads", "alibi_bidirectional_pad",
    "gate_headwise",
    /* issue 22 */
    "query_proj_off", "key_proj_off", "query_key_proj_off", "kv_tied_query_proj_off", "diff", "diff_bidirectional_pad",
    "diff_qk_tied_gate_headwise", "talking_heads", "talking_heads_gqa", "talking_heads_bidirectional_pad",
    "rope", "rope_qk_tied", "rope_kv_tied_gqa", "rope_identity", "rope_query_proj_off_base",
    "rope_diff_bidirectional_pad", "rope_head_shared", "rope_talking_heads", "position_none",
    "position_none_qk_tied", "qk_diag_alternating", "qk_diag_random_shared_pad", "qk_diag_positive_rope_diff",
    "exclusive", "exclusive_gqa_value_gate", "exclusive_kv_tied_query_proj_off", "exclusive_diff",
    "exclusive_head_shared", "exclusive_identity_self_mask", "exclusive_qk_diag_rope_talking_heads"};
#define NFIX ((int)(sizeof MODEL_FIXTURES / sizeof MODEL_FIXTURES[0]))

static cJSON *meta(const qkv_safetensors *st, const char *key) {
    const char *v = qkv_st_meta(st, key);
    ck_assert_msg(v != NULL, "fixture metadata lacks %s", key);
    return cJSON_Parse(v);
}
static int meta_int(const qkv_safetensors *st, const char *key) {
    cJSON *j = meta(st, key);
    int v = (int)j->valuedouble;
    cJSON_Delete(j);
    return v;
}
static bool meta_bool(const qkv_safetensors *st, const char *key) {
    cJSON *j = meta(st, key);
    bool v = cJSON_IsTrue(j);
    cJSON_Delete(j);
    return v;
}
static int meta_enum(const qkv_safetensors *st, const char *key, const char *const *names, int n) {
    cJSON *j = meta(st, key);
    int v = -1;
    for (int i = 0; i < n; i++)
        if (cJSON_IsString(j) && !strcmp(j->valuestring, names[i])) v = i;
    cJSON_Delete(j);
    ck_assert_msg(v >= 0, "fixture metadata %s has an unknown value", key);
    return v;
}

/* keys the older fixtures were written without: their default when absent */
static int meta_int_or(const qkv_safetensors *st, const char *key, int dflt) {
    return qkv_st_meta(st, key) ? meta_int(st, key) : dflt;
}
static bool meta_bool_or(const qkv_safetensors *st, const char *key, bool dflt) {
    return qkv_st_meta(st, key) ? meta_bool(st, key) : dflt;
}

/* a tensor from the fixture, as a new heap tensor */
static qkv_tensor *load(const qkv_safetensors *st, const char *name) {
    const qkv_st_entry *e = qkv_st_find(st, name);
    ck_assert_msg(e != NULL, "fixture lacks %s", name);
    return qkv_tensor_from_buffer(e->dtype, e->ndim, e->shape, qkv_st_data(st, e));
}

/* every element of got (data or grad) within tolerance of the reference entry */
static void expect_close(const char *fix, const char *what, const qkv_tensor *got, bool grad,
                         const qkv_safetensors *st, const char *ref_name, double *worst) {
    qkv_tensor *ref = load(st, ref_name);
    ck_assert_msg(ref->numel == got->numel, "%s: %s: %lld elements, reference %lld", fix, what,
                  (long long)got->numel, (long long)ref->numel);
    for (int64_t i = 0; i < ref->numel; i++) {
        double a = grad ? qkv_tensor_grad_get(got, i) : qkv_tensor_get(got, i);
        double b = qkv_tensor_get(ref, i), d = fabs(a - b);
        ck_assert_msg(qkv_test_close(a, b, ABS, REL), "%s: %s[%lld] = %.9g, PyTorch %.9g", fix, what,
                      (long long)i, a, b);
        double rel = d / fmax(fabs(b), ABS / REL);
        if (rel > *worst) *worst = rel;
    }
    qkv_tensor_free(ref);
}

START_TEST(test_model_parity) {
    const char *fix = MODEL_FIXTURES[_i];
    char path[256];
    qkv_err err;
    snprintf(path, sizeof path, FIXDIR "%s.safetensors", fix);
    qkv_safetensors *st;
    ck_assert_msg(qkv_st_read(path, &st, &err) == 0, "%s", err.msg);

    qkv_model_config c = qkv_model_config_default();
    c.vocab = meta_int(st, "vocab");
    c.seq_len = meta_int(st, "seq_len");
    c.d_model = meta_int(st, "d_model");
    c.heads = meta_int(st, "heads");
    c.layers = meta_int(st, "layers");
    c.d_ff = meta_int(st, "d_ff");
    c.activation = (qkv_activation)meta_enum(st, "activation", QKV_ACTIVATION_NAMES, QKV_ACT_COUNT);
    c.attn.qkv = (qkv_attn_qkv)meta_enum(st, "qkv", QKV_ATTN_QKV_NAMES, QKV_ATTN_QKV_COUNT);
    c.attn.scale = (qkv_attn_scale)meta_enum(st, "scale", QKV_ATTN_SCALE_NAMES, QKV_SCALE_COUNT);
    c.attn.gate = (qkv_attn_gate)meta_enum(st, "gate", QKV_ATTN_GATE_NAMES, QKV_GATE_COUNT);
    c.attn.causal = meta_bool(st, "causal");
    c.attn.rel_pos_bias = meta_bool(st, "rel_pos_bias");
    c.attn.rel_pos_max = meta_int(st, "rel_pos_max");
    c.attn.self_mask = meta_bool(st, "self_mask");
    const qkv_attn_config dflt = qkv_model_config_default().attn;
    c.attn.kv_heads = meta_int_or(st, "kv_heads", dflt.kv_heads);
    if (qkv_st_meta(st, "self_mask_rule"))
        c.attn.self_mask_rule = (qkv_self_mask_rule)meta_enum(st, "self_mask_rule", QKV_SELF_MASK_RULE_NAMES,
                                                              QKV_SELF_RULE_COUNT);
    c.attn.key_norm = meta_bool_or(st, "key_norm", dflt.key_norm);
    c.attn.role_scale = meta_bool_or(st, "role_scale", dflt.role_scale);
    c.attn.value_proj = meta_bool_or(st, "value_proj", dflt.value_proj);
    c.attn.out_proj = meta_bool_or(st, "out_proj", dflt.out_proj);
    c.attn.kv_latent = meta_int_or(st, "kv_latent", dflt.kv_latent);
    c.attn.alibi = meta_bool_or(st, "alibi", dflt.alibi);
    c.attn.query_proj = meta_bool_or(st, "query_proj", dflt.query_proj);
    c.attn.key_proj = meta_bool_or(st, "key_proj", dflt.key_proj);
    c.attn.diff = meta_bool_or(st, "diff", dflt.diff);
    c.attn.talking_heads = meta_bool_or(st, "talking_heads", dflt.talking_heads);
    if (qkv_st_meta(st, "qk_diag")) c.attn.qk_diag = (qkv_qk_diag)meta_enum(st, "qk_diag", QKV_QK_DIAG_NAMES, QKV_QK_DIAG_COUNT);
    c.attn.exclusive = meta_bool_or(st, "exclusive", dflt.exclusive);
    if (qkv_st_meta(st, "position")) {
        c.position = (qkv_position)meta_enum(st, "position", QKV_POSITION_NAMES, QKV_POS_COUNT);
        cJSON *base = meta(st, "rope_base");
        c.rope_base = base->valuedouble;
        cJSON_Delete(base);
    }

    qkv_model *m = qkv_model_new(&c, QKV_F32, 0, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    /* same parameter set: every qkv parameter is in the fixture and the counts agree */
    int n_ref = 0;
    for (int i = 0; i < qkv_st_count(st); i++) {
        const char *nm = qkv_st_entry_at(st, i)->name;
        n_ref += strncmp(nm, "grad.", 5) && strncmp(nm, "input.", 6) && strncmp(nm, "output.", 7);
    }
    ck_assert_int_eq(m->params.n, n_ref);
    for (int i = 0; i < m->params.n; i++)
        ck_assert_msg(qkv_st_load_into(st, m->params.items[i]->name, &m->params.items[i]->t, &err) == 0, "%s: %s", fix, err.msg);

    qkv_tensor *tok = load(st, "input.tokens"), *tgt = load(st, "input.targets");
    qkv_tensor *pad = qkv_st_find(st, "input.pad") ? load(st, "input.pad") : NULL;
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_tensor *logits = qkv_model_forward(ctx, m, tok, pad);
    qkv_tensor *loss = qkv_cross_entropy(ctx, logits, tgt, -100);
    ck_assert_msg(loss && qkv_backward(ctx, loss) == 0, "%s: %s", fix, qkv_ctx_error(ctx));
    double worst = 0;
    expect_close(fix, "logits", logits, false, st, "output.logits", &worst);
    expect_close(fix, "loss", loss, false, st, "output.loss", &worst);
    for (int i = 0; i < m->params.n; i++) {
        char gname[128];
        snprintf(gname, sizeof gname, "grad.%s", m->params.items[i]->name);
        expect_close(fix, gname, &m->params.items[i]->t, true, st, gname, &worst);
    }
    if (getenv("QKV_TEST_VERBOSE"))
        fprintf(stderr, "parity %-24s worst relative difference %.3g\n", fix, worst);
    qkv_ctx_free(ctx);
    qkv_tensor_free(tok); qkv_tensor_free(tgt); qkv_tensor_free(pad);
    qkv_model_free(m);
    qkv_st_free(st);
}
END_TEST

/* The question's SelfAttention, exactly as written, against qkv's head_shared + embed scale. */
START_TEST(test_question_module_parity) {
    qkv_err err;
    qkv_safetensors *st;
    ck_assert_msg(qkv_st_read(FIXDIR "question_selfattention.safetensors", &st, &err) == 0, "%s", err.msg);
    int E = atoi(qkv_st_meta(st, "embed_size")), H = atoi(qkv_st_meta(st, "heads"));
    qkv_attn_config ac = qkv_model_config_default().attn;
    ac.qkv = QKV_ATTN_HEAD_SHARED;
    ac.scale = QKV_SCALE_EMBED;
    qkv_params p;
    qkv_params_init(&p, QKV_F32);
    qkv_attention at;
    ck_assert_int_eq(qkv_attention_init(&at, &p, "attn", E, H, &ac, &err), 0);
    ck_assert_int_eq(qkv_params_finalize(&p), 0);
    ck_assert_int_eq(p.n, 5); /* values, keys, queries (hd x hd), fc_out weight and bias */
    for (int i = 0; i < p.n; i++) /* "attn.values.weight" <- "values.weight" */
        ck_assert_msg(qkv_st_load_into(st, p.items[i]->name + 5, &p.items[i]->t, &err) == 0, "%s", err.msg);

    qkv_tensor *x = load(st, "input.x"), *mask = load(st, "input.mask"), *w = load(st, "input.weights");
    qkv_tensor_require_grad(x);
    for (int64_t i = 0; i < mask->numel; i++) /* the question passes 1 = may attend */
        ((int32_t *)mask->data)[i] = ((int32_t *)mask->data)[i] == 0;
    qkv_attn_masks masks = {.blocked = mask};
    qkv_ctx *ctx = qkv_ctx_new();
    qkv_tensor *out = qkv_attention_forward(ctx, &at, x, &masks);
    qkv_tensor *loss = qkv_sum_all(ctx, qkv_mul(ctx, out, w));
    ck_assert_msg(loss && qkv_backward(ctx, loss) == 0, "%s", qkv_ctx_error(ctx));
    double worst = 0;
    expect_close("question", "out", out, false, st, "output.out", &worst);
    expect_close("question", "grad.x", x, true, st, "grad.x", &worst);
    for (int i = 0; i < p.n; i++) {
        char gname[128];
        snprintf(gname, sizeof gname, "grad.%s", p.items[i]->name + 5);
        expect_close("question", gname, &p.items[i]->t, true, st, gname, &worst);
    }
    if (getenv("QKV_TEST_VERBOSE"))
        fprintf(stderr, "parity %-24s worst relative difference %.3g\n", "question_selfattention", worst);
    qkv_ctx_free(ctx);
    qkv_tensor_free(x); qkv_tensor_free(mask); qkv_tensor_free(w);
    qkv_params_free(&p);
    qkv_st_free(st);
}
END_TEST

Suite *parity_suite(void) {
    Suite *s = suite_create("parity");
    TCase *tc = tcase_create("pytorch");
    tcase_add_loop_test(tc, test_model_parity, 0, NFIX);
    tcase_add_test(tc, test_question_module_parity);
    suite_add_tcase(s, tc);
    return s;
}
