/* Hyper-parameters of the transformer and of its attention, as plain C values.
 * (The JSON layer in src/config fills these from a config file.) */
#ifndef QKV_MODEL_CONFIG_H
#define QKV_MODEL_CONFIG_H

#include "qkv_api.h"

#include <stdbool.h>
#include "tensor/error.h"

/* How queries, keys and values are made from the attention input X (B,T,d). */
typedef enum {
    QKV_ATTN_FULL,        /* Q = X Wq^T, K = X Wk^T, V = X Wv^T: separate d x d projections */
    QKV_ATTN_SHARED,      /* Q = K = V = X W^T: one d x d projection */
    QKV_ATTN_IDENTITY,    /* Q = K = V = X: no projection (heads are slices of X) */
    QKV_ATTN_QK_TIED,     /* Q = K = X Wqk^T, V = X Wv^T */
    QKV_ATTN_KV_TIED,     /* Q = X Wq^T, K = V = X Wkv^T (a control) */
    QKV_ATTN_HEAD_SHARED, /* X split into heads, then one head_dim x head_dim projection per role
                             shared by all heads (a module kept as its source wrote it: docs) */
    QKV_ATTN_QKV_COUNT
} qkv_attn_qkv;

typedef enum { QKV_SCALE_HEAD_DIM, QKV_SCALE_EMBED, QKV_SCALE_COUNT } qkv_attn_scale;
/* none; output: Y * sigmoid(X Wg) element-wise; value: V * sigmoid(X Wg); headwise: each head's
 * output times one sigmoid(X wg_h) per head and position */
typedef enum { QKV_GATE_NONE, QKV_GATE_OUTPUT, QKV_GATE_VALUE, QKV_GATE_HEADWISE, QKV_GATE_COUNT } qkv_attn_gate;
/* self_mask's rule: strict, a token never attends to itself (a row with no other visible key
 * attends nowhere); reformer, only when it has another visible key (the Reformer's rule: the
 * first token attends to itself) */
typedef enum { QKV_SELF_STRICT, QKV_SELF_REFORMER, QKV_SELF_RULE_COUNT } qkv_self_mask_rule;
/* the Q/K/V (and output) projections' initial weights: default, U(-1/sqrt(in), 1/sqrt(in)) as
 * PyTorch's Linear; identity, I + N(0, 0.02^2) for every square Q/K/V projection; mimetic
 * (after Trockman & Kolter 2023), W_Q = sqrt(0.7) I + noise and W_K likewise, so W_Q^T W_K
 * starts near 0.7 I, W_V = sqrt(0.4) I + noise and W_O = -sqrt(0.4) I + noise, so W_O W_V starts
 * near -0.4 I (noise N(0, 0.02^2)) */
typedef enum { QKV_INIT_DEFAULT, QKV_INIT_IDENTITY, QKV_INIT_MIMETIC, QKV_INIT_SCHEME_COUNT } qkv_init_scheme;
/* qk_tied and shared: a learned diagonal between the roles, Q = X W D, K = X W (per head
 * M = W_h D_h W_h^T: symmetric, and indefinite once D has a negative entry); D starts at
 * none (no D), alternating (+1, -1, +1, ... within each head), positive (all +1: positive
 * semi-definite at the start, free to leave it) or random (signs drawn from the seed) */
typedef enum { QKV_QK_DIAG_NONE, QKV_QK_DIAG_ALTERNATING, QKV_QK_DIAG_POSITIVE, QKV_QK_DIAG_RANDOM,
               QKV_QK_DIAG_COUNT } qkv_qk_diag;
typedef enum { QKV_ACT_GELU, QKV_ACT_GELU_TANH, QKV_ACT_RELU, QKV_ACT_COUNT } qkv_activation;

#include "nn/attn_options.h"

/* the attention's options: one field per row of nn/attn_options.h, in its order */
#define QKV_ATTN_FIELD(kind, ctype, name, ...) ctype name;
typedef struct qkv_attn_config {
    QKV_ATTN_OPTIONS(QKV_ATTN_FIELD)
} qkv_attn_config;
#undef QKV_ATTN_FIELD

/* where a token's position comes from: learned, a table of seq_len x d_model added to the token
 * embeddings (pos_emb); rope, each head's queries and keys rotated by their position (Su et al.
 * 2021; no table); none, nothing but the causal mask (no table) */
typedef enum { QKV_POS_LEARNED, QKV_POS_ROPE, QKV_POS_NONE, QKV_POS_COUNT } qkv_position;

typedef struct qkv_model_config {
    int vocab;             /* token ids are in [0, vocab) */
    int seq_len;           /* longest sequence (size of the position table) */
    int d_model, heads, layers, d_ff;
    qkv_activation activation;
    qkv_attn_config attn;
    qkv_position position;
    double rope_base;      /* rope: pair k of a head turns by position x rope_base^(-2k/head_dim) (10000) */
} qkv_model_config;

/* names used in configs: "full", "shared", ... (index = enum value) */
QKV_API extern const char *const QKV_ATTN_QKV_NAMES[QKV_ATTN_QKV_COUNT];
QKV_API extern const char *const QKV_ATTN_SCALE_NAMES[QKV_SCALE_COUNT];
QKV_API extern const char *const QKV_ATTN_GATE_NAMES[QKV_GATE_COUNT];
QKV_API extern const char *const QKV_ACTIVATION_NAMES[QKV_ACT_COUNT];
QKV_API extern const char *const QKV_SELF_MASK_RULE_NAMES[QKV_SELF_RULE_COUNT];
QKV_API extern const char *const QKV_INIT_SCHEME_NAMES[QKV_INIT_SCHEME_COUNT];
QKV_API extern const char *const QKV_POSITION_NAMES[QKV_POS_COUNT];
QKV_API extern const char *const QKV_QK_DIAG_NAMES[QKV_QK_DIAG_COUNT];
/* heads of keys and values: kv_heads, or heads when 0 */
QKV_API int qkv_attn_kv_heads(const qkv_attn_config *a, int heads);

/* the defaults of docs/config.md (vocab and seq_len 0: taken from the task) */
QKV_API qkv_model_config qkv_model_config_default(void);
/* checks sizes and their relations (heads divides d_model, ...); 0, or -1 with e (QKV_ERR_USAGE),
 * one line that starts with the field it is about, as named in this struct ("heads: 3 does not
 * divide d_model 64 ...", "attn.rel_pos_max: ..."); the config layer turns that into its key */
QKV_API int qkv_model_config_check(const qkv_model_config *c, qkv_err *e);

#endif
