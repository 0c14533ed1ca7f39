/* Model hyper-parameters: names, defaults, checks. */
#include "nn/model_config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *const QKV_ATTN_QKV_NAMES[QKV_ATTN_QKV_COUNT] = {
    "full", "shared", "identity", "qk_tied", "kv_tied", "head_shared"};
const char *const QKV_ATTN_SCALE_NAMES[QKV_SCALE_COUNT] = {"head_dim", "embed"};
const char *const QKV_ATTN_GATE_NAMES[QKV_GATE_COUNT] = {"none", "output", "value", "headwise"};
const char *const QKV_SELF_MASK_RULE_NAMES[QKV_SELF_RULE_COUNT] = {"strict", "reformer"};
const char *const QKV_INIT_SCHEME_NAMES[QKV_INIT_SCHEME_COUNT] = {"default", "identity", "mimetic"};

int qkv_attn_kv_heads(const qkv_attn_config *a, int heads) { return a->kv_heads > 0 ? a->kv_heads : heads; }
const char *const QKV_ACTIVATION_NAMES[QKV_ACT_COUNT] = {"gelu", "gelu_tanh", "relu"};
const char *const QKV_POSITION_NAMES[QKV_POS_COUNT] = {"learned", "rope", "none"};
const char *const QKV_QK_DIAG_NAMES[QKV_QK_DIAG_COUNT] = {"none", "alternating", "positive", "random"};

/* e = QKV_ERR_USAGE (a config is the user's) and the printf-formatted message; -1, for
 * `return check_fail(e, ...)` */
static int check_fail(qkv_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int check_fail(qkv_err *e, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    qkv_err_vset(e, QKV_ERR_USAGE, fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- each option's rule for what it combines with (named by its row in nn/attn_options.h):
 * every combination that makes no sense is an error, never a default ---------------------------- */

static int rule_none(const qkv_model_config *c, qkv_err *e) { return (void)c, (void)e, 0; }
static const char *variant(const qkv_attn_config *a) { return QKV_ATTN_QKV_NAMES[a->qkv]; }
/* the variants with a key projection (and a query projection) of their own */
static bool separate_k(const qkv_attn_config *a) { return a->qkv == QKV_ATTN_FULL || a->qkv == QKV_ATTN_KV_TIED; }
static bool grouped(const qkv_model_config *c) { return c->attn.kv_heads && c->attn.kv_heads != c->heads; }

static int rule_rel_pos_bias(const qkv_model_config *c, qkv_err *e) {
    if (c->attn.rel_pos_bias && c->attn.rel_pos_max < 1)
        return check_fail(e, "attn.rel_pos_max: expected at least 1, got %d", c->attn.rel_pos_max);
    return 0;
}

static int rule_gate(const qkv_model_config *c, qkv_err *e) {
    const qkv_attn_config *a = &c->attn;
    if (a->gate == QKV_GATE_VALUE && !a->value_proj)
        return check_fail(e, "attn.gate: value gates the value projection, which value_proj false removes");
    if (a->qkv == QKV_ATTN_HEAD_SHARED && a->gate == QKV_GATE_HEADWISE) /* (kv_latent, role_scale: refused by theirs) */
        return check_fail(e, "attn.gate: headwise is not for head_shared, whose heads share one map per role");
    return 0;
}

static int rule_self_mask_rule(const qkv_model_config *c, qkv_err *e) {
    const qkv_attn_config *a = &c->attn;
    if (a->self_mask_rule != QKV_SELF_STRICT && !a->self_mask)
        return check_fail(e, "attn.self_mask_rule: %s applies to self_mask, which is off", QKV_SELF_MASK_RULE_NAMES[a->self_mask_rule]);
    return 0;
}

static int rule_kv_heads(const qkv_model_config *c, qkv_err *e) {
    const qkv_attn_config *a = &c->attn;
    if (a->kv_heads < 0 || (a->kv_heads && c->heads % a->kv_heads))
        return check_fail(e, "attn.kv_heads: %d does not divide heads %d (each key/value head serves heads/kv_heads query heads)",
            a->kv_heads, c->heads);
    if (grouped(c) && !separate_k(a))
        return check_fail(e, "attn.kv_heads: grouped keys and values need their own key projection: qkv full or kv_tied, not %s",
            variant(a));
    if (grouped(c) && !a->value_proj)
        return check_fail(e, "attn.kv_heads: with value_proj false the values are X itself, all %d heads of it", c->heads);
    return 0;
}

static int rule_role_scale(const qkv_model_config *c, qkv_err *e) {
    if (c->attn.role_scale && c->attn.qkv != QKV_ATTN_SHARED)
        return check_fail(e, "attn.role_scale: tells Q, K and V apart inside one shared matrix: needs qkv shared, not %s",
            variant(&c->attn));
    return 0;
}

static int rule_value_proj(const qkv_model_config *c, qkv_err *e) {
    const qkv_attn_config *a = &c->attn;
    bool has_v = a->qkv == QKV_ATTN_FULL || a->qkv == QKV_ATTN_QK_TIED;
    if (!a->value_proj && !has_v)
        return check_fail(e, "attn.value_proj: false removes a value projection of its own: qkv full or qk_tied have one, %s has none",
            variant(a));
    return 0;
}

static int rule_kv_latent(const qkv_model_config *c, qkv_err *e) {
    const qkv_attn_config *a = &c->attn;
    if (a->kv_latent < 0) return check_fail(e, "attn.kv_latent: expected 0 (off) or a width, got %d", a->kv_latent);
    if (a->kv_latent && a->qkv != QKV_ATTN_FULL)
        return check_fail(e, "attn.kv_latent: a latent for keys and values needs their own projections: qkv full, not %s", variant(a));
    if (a->kv_latent && !a->value_proj) return check_fail(e, "attn.kv_latent: value_proj false leaves no value projection to factor");
    int kv_width = c->d_model / c->heads * qkv_attn_kv_heads(a, c->heads), wide = 2 * kv_width;
    if (wide > c->d_model) wide = c->d_model; /* [K V] = X [Wk Wv] has rank at most this already */
    if (a->kv_latent && a->kv_latent >= wide)
        return check_fail(e, "attn.kv_latent: %d is not below %d (d_model, or 2 x kv_heads x head_dim if smaller): a latent that "
            "wide constrains nothing", a->kv_latent, wide);
    return 0;
}

static int rule_alibi(const qkv_model_config *c, qkv_err *e) {
    if (c->attn.alibi && c->attn.rel_pos_bias)
        return check_fail(e, "attn.alibi: rel_pos_bias is on too: both are positional biases on the scores, pick one");
    return 0;
}

static int rule_init(const qkv_model_config *c, qkv_err *e) {
    const qkv_attn_config *a = &c->attn;
    if (a->init != QKV_INIT_DEFAULT && a->qkv == QKV_ATTN_IDENTITY)
        return check_fail(e, "attn.init: %s starts the Q/K/V projections, and qkv identity has none", QKV_INIT_SCHEME_NAMES[a->init]);
    return 0;
}

/* removing one projection: only where the variant has it as a projection of its own */
static int rule_query_proj(const qkv_model_config *c, qkv_err *e) {
    if (!c->attn.query_proj && !separate_k(&c->attn))
        return check_fail(e, "attn.query_proj: false removes a query projection of its own: qkv full or kv_tied have one, %s has none",
            variant(&c->attn));
    return 0;
}

static int rule_key_proj(const qkv_model_config *c, qkv_err *e) {
    const qkv_attn_config *a = &c->attn;
    if (a->key_proj) return 0;
    if (a->qkv != QKV_ATTN_FULL)
        return check_fail(e, "attn.key_proj: false removes a key projection of its own: qkv full has one, %s has none%s", variant(a),
            a->qkv == QKV_ATTN_KV_TIED ? " (kv_tied's Wkv is the values' too)" : "");
    if (grouped(c))
        return check_fail(e, "attn.key_proj: with key_proj false the keys are X itself, all %d heads of it (kv_heads %d)", c->heads,
            a->kv_heads);
    if (a->kv_latent) return check_fail(e, "attn.key_proj: kv_latent factors the key projection, which key_proj false removes");
    if (!a->query_proj && !a->value_proj)
        return check_fail(e, "attn.query_proj: query_proj, key_proj and value_proj all false is qkv identity: use that");
    return 0;
}

/* differential attention: the published form (docs/config.md) */
static int rule_diff(const qkv_model_config *c, qkv_err *e) {
    const qkv_attn_config *a = &c->attn;
    if (!a->diff) return 0;
    int hd = c->d_model / c->heads;
    if (a->qkv == QKV_ATTN_HEAD_SHARED || a->talking_heads || a->rel_pos_bias || a->alibi || a->key_norm)
        return check_fail(e, "attn.diff: not with %s (differential attention rewrites the scores itself)",
            a->qkv == QKV_ATTN_HEAD_SHARED ? "qkv head_shared" : a->talking_heads ? "talking_heads" :
            a->rel_pos_bias ? "rel_pos_bias" : a->alibi ? "alibi" : "key_norm (it would normalise whole heads, not "
            "each half)");
    if (hd % 2)
        return check_fail(e, "attn.diff: head_dim %d (d_model / heads) is odd: each head splits into two query/key halves", hd);
    if (grouped(c))
        return check_fail(e, "attn.diff: not with kv_heads %d (the published code repeats 2 kv_heads half-width keys, which pairs a "
            "head's two queries with the same key half)", a->kv_heads);
    if (a->scale != QKV_SCALE_HEAD_DIM)
        return check_fail(e, "attn.diff: scales by 1/sqrt(head_dim / 2), the width of each half, as published: scale embed does not apply");
    return 0;
}

static int rule_talking_heads(const qkv_model_config *c, qkv_err *e) {
    const qkv_attn_config *a = &c->attn;
    if (a->talking_heads && (a->qkv == QKV_ATTN_HEAD_SHARED || a->rel_pos_bias || a->alibi))
        return check_fail(e, "attn.talking_heads: not with %s", a->qkv == QKV_ATTN_HEAD_SHARED ? "qkv head_shared, whose heads share one map "
            "per role" : a->rel_pos_bias ? "rel_pos_bias (a bias between the scores and their mixing: pick one)" :
            "alibi (its slopes are in the fused kernel, which talking heads do not use)");
    return 0;
}

static int rule_qk_diag(const qkv_model_config *c, qkv_err *e) {
    const qkv_attn_config *a = &c->attn;
    if (a->qk_diag && a->qkv != QKV_ATTN_QK_TIED && a->qkv != QKV_ATTN_SHARED)
        return check_fail(e, "attn.qk_diag: a diagonal between tied queries and keys (Q = X W D, K = X W) needs qkv qk_tied or "
            "shared, not %s", variant(a));
    if (a->qk_diag && a->role_scale)
        return check_fail(e, "attn.qk_diag: role_scale's s_q and s_k already put a learned diagonal between the roles: pick one");
    return 0;
}

static int rule_exclusive(const qkv_model_config *c, qkv_err *e) {
    if (c->attn.exclusive && c->d_model / c->heads == 1)
        return check_fail(e, "attn.exclusive: with head_dim 1 a head's output lies along its value, so nothing would remain");
    return 0;
}

qkv_model_config qkv_model_config_default(void) {
    qkv_model_config c;
    memset(&c, 0, sizeof c); /* padding too: configs compare as bytes */
    c.vocab = 0, c.seq_len = 0, c.d_model = 64, c.heads = 4, c.layers = 2, c.d_ff = 256;
    c.activation = QKV_ACT_GELU;
#define AS_DEFAULT(kind, ctype, name, def, ...) c.attn.name = def;
    QKV_ATTN_OPTIONS(AS_DEFAULT)
#undef AS_DEFAULT
    c.position = QKV_POS_LEARNED, c.rope_base = 10000;
    return c;
}

int qkv_model_config_check(const qkv_model_config *c, qkv_err *e) {
    if (c->vocab < 2) return check_fail(e, "vocab: expected at least 2 tokens, got %d", c->vocab);
    if (c->seq_len < 1) return check_fail(e, "seq_len: expected at least 1, got %d", c->seq_len);
    if (c->d_model < 1) return check_fail(e, "d_model: expected at least 1, got %d", c->d_model);
    if (c->heads < 1) return check_fail(e, "heads: expected at least 1, got %d", c->heads);
    if (c->layers < 1) return check_fail(e, "layers: expected at least 1, got %d", c->layers);
    if (c->d_ff < 1) return check_fail(e, "d_ff: expected at least 1, got %d", c->d_ff);
    if (c->d_model % c->heads)
        return check_fail(e, "heads: %d does not divide d_model %d (each head gets d_model/heads dims)", c->heads, c->d_model);
    if ((unsigned)c->activation >= QKV_ACT_COUNT) return check_fail(e, "activation: unknown activation %d", (int)c->activation);
    if ((unsigned)c->position >= QKV_POS_COUNT) return check_fail(e, "position: unknown scheme %d", (int)c->position);
    if (c->position == QKV_POS_ROPE) { /* rotations turn pairs of a head's dimensions */
        int hd = c->d_model / c->heads, rotated = c->attn.diff ? hd / 2 : hd;
        if (rotated % 2)
            return check_fail(e, "position: rope turns pairs of dimensions, so it needs an even %s, got %d",
                              c->attn.diff ? "half head_dim (diff's query and key halves)" : "head_dim", rotated);
        if (!(c->rope_base > 1)) return check_fail(e, "rope_base: expected a number above 1, got %g", c->rope_base);
        if (c->attn.alibi || c->attn.rel_pos_bias)
            return check_fail(e, "position: rope with attention.%s: two relative position schemes on one score; "
                              "choose one (alibi and rel_pos_bias go with position learned or none)",
                              c->attn.alibi ? "alibi" : "rel_pos_bias");
    }
    /* each option's values, then its rule for what it combines with (nn/attn_options.h's rows) */
#define CHECK_VALUE_ENUM(name, count)                                                               \
    if ((unsigned)c->attn.name >= (unsigned)(count))                                                   \
        return check_fail(e, "attn." #name ": unknown value %d", (int)c->attn.name);
#define CHECK_VALUE_INT(name, count)
#define CHECK_VALUE_BOOL(name, count)
#define CHECK_ROW(kind, ctype, name, def, lo, hi, ...) CHECK_VALUE_##kind(name, hi)
    QKV_ATTN_OPTIONS(CHECK_ROW)
#undef CHECK_ROW
#undef CHECK_VALUE_ENUM
#undef CHECK_VALUE_INT
#undef CHECK_VALUE_BOOL
#define RULE_ROW(kind, ctype, name, def, lo, hi, names, doc, rank, label, rule) \
    if (rule(c, e)) return -1;
    QKV_ATTN_OPTIONS(RULE_ROW)
#undef RULE_ROW
    return 0;
}
