/* The attention's options, one row each (as autograd/op.h lists the ops). Everything else is
 * expanded from this list: the fields of qkv_attn_config (row order is field order), their
 * defaults (qkv_model_config_default), the config keys model.attention.<name> with their ranges
 * and doc lines (config/config.c, in row order: the order of qkv_config_keys, of the effective
 * config's JSON and of docs/config.md's table), the options line of `qkv params` (cli/params.c)
 * and the combination check (qkv_model_config_check runs each row's rule, in row order).
 *
 * X(kind, ctype, name, default, lo, hi, names, doc, label_rank, label, rule)
 *   kind       BOOL, INT or ENUM: how the config key is read
 *   ctype      the field's C type (an ENUM's enum type, declared in nn/model_config.h)
 *   lo, hi     an INT's range; an ENUM's 0 and its count (names[0..count) are its values)
 *   doc        the one line of docs/config.md and of the key's error messages
 *   label      (shown, printf format, arguments...): what `qkv params` prints when shown, in the
 *              options line's order label_rank (0: never printed there); `a` is the
 *              qkv_attn_config, `heads` the model's heads
 *   rule       a function of nn/model_config.c, int rule(const qkv_model_config *c, qkv_err *e):
 *              0, or -1 with e saying which combination makes no sense
 *              (rule_none: none)
 * A new option is a row here, its rule (if it has one) in nn/model_config.c and its work in
 * nn/attention.c (docs/contributing.md). */
#ifndef QKV_ATTN_OPTIONS_H
#define QKV_ATTN_OPTIONS_H

#define QKV_NO_LABEL (0, "")

#define QKV_ATTN_OPTIONS(X)                                                                                 \
    /* how Q, K and V are made from X (qkv_attn_qkv) */                                                     \
    X(ENUM, qkv_attn_qkv, qkv, QKV_ATTN_FULL, 0, QKV_ATTN_QKV_COUNT, QKV_ATTN_QKV_NAMES,                    \
      "how queries, keys and values are projected from the input", 0, QKV_NO_LABEL, rule_none)             \
    /* 1/sqrt(head_dim) (standard) or 1/sqrt(d_model) (embed) */                                           \
    X(ENUM, qkv_attn_scale, scale, QKV_SCALE_HEAD_DIM, 0, QKV_SCALE_COUNT, QKV_ATTN_SCALE_NAMES,            \
      "scores scaled by 1/sqrt(head_dim) or by 1/sqrt(d_model)", 0, QKV_NO_LABEL, rule_none)                \
    X(BOOL, bool, causal, true, 0, 1, NULL, "a token attends only to itself and earlier tokens", 15,        \
      (!a->causal, "bidirectional"), rule_none)                                                             \
    /* a learned scalar per head per clipped relative offset */                                             \
    X(BOOL, bool, rel_pos_bias, false, 0, 1, NULL, "learned bias per head per clipped relative offset", 0,  \
      QKV_NO_LABEL, rule_rel_pos_bias)                                                                      \
    /* offsets are clipped to [-rel_pos_max, rel_pos_max] */                                                \
    X(INT, int, rel_pos_max, 32, 1, 4096, NULL, "relative offsets are clipped to [-rel_pos_max, rel_pos_max]", \
      0, QKV_NO_LABEL, rule_none)                                                                           \
    X(ENUM, qkv_attn_gate, gate, QKV_GATE_NONE, 0, QKV_GATE_COUNT, QKV_ATTN_GATE_NAMES,                     \
      "sigmoid gate: output (element-wise), value, or headwise (one per head)", 0, QKV_NO_LABEL, rule_gate) \
    /* a token may not attend to itself (see self_mask_rule) */                                             \
    X(BOOL, bool, self_mask, false, 0, 1, NULL, "a token may not attend to itself", 14,                     \
      (a->self_mask, "self_mask %s", QKV_SELF_MASK_RULE_NAMES[a->self_mask_rule]), rule_none)               \
    X(ENUM, qkv_self_mask_rule, self_mask_rule, QKV_SELF_STRICT, 0, QKV_SELF_RULE_COUNT,                    \
      QKV_SELF_MASK_RULE_NAMES,                                                                             \
      "self_mask: strict (never itself) or reformer (itself only when nothing else is visible)", 0,         \
      QKV_NO_LABEL, rule_self_mask_rule)                                                                    \
    /* heads of keys and values (grouped-query attention; 1: multi-query; 0: as many as heads); must        \
       divide heads */                                                                                      \
    X(INT, int, kv_heads, 0, 0, 256, NULL, "key/value heads, grouped-query attention (1 = multi-query; 0 = heads)", \
      1, (a->kv_heads && a->kv_heads != heads, "kv_heads %d (%d query heads each)", a->kv_heads,            \
          heads / (a->kv_heads ? a->kv_heads : 1)), rule_kv_heads)                                          \
    /* keys divided by their length, per head (the Reformer's shared Q = K) */                              \
    X(BOOL, bool, key_norm, false, 0, 1, NULL, "keys scaled to unit length per head (Reformer)", 12,        \
      (a->key_norm, "key_norm"), rule_none)                                                                 \
    /* shared: Q, K, V = X W diag(s_q), diag(s_k), diag(s_v) (3 d parameters) */                            \
    X(BOOL, bool, role_scale, false, 0, 1, NULL, "shared: Q, K, V = X W diag(s_q), diag(s_k), diag(s_v)", 3, \
      (a->role_scale, "role_scale"), rule_role_scale)                                                       \
    X(BOOL, bool, value_proj, true, 0, 1, NULL, "a value projection (false: V = X)", 6,                     \
      (!a->value_proj, "value_proj off (V = X)"), rule_value_proj)                                          \
    X(BOOL, bool, out_proj, true, 0, 1, NULL, "an output projection (false: none)", 11,                     \
      (!a->out_proj, "out_proj off"), rule_none)                                                            \
    /* > 0: K, V from a latent of this width: K = (X W_down) W_uk, V = (X W_down) W_uv */                   \
    X(INT, int, kv_latent, 0, 0, 65536, NULL, "keys and values from a latent of this width (0 = off)", 2,   \
      (a->kv_latent, "kv_latent %d", a->kv_latent), rule_kv_latent)                                         \
    /* fixed per-head distance penalties on the scores (no parameters) */                                   \
    X(BOOL, bool, alibi, false, 0, 1, NULL, "ALiBi: fixed per-head distance penalties on the scores", 13,   \
      (a->alibi, "alibi"), rule_alibi)                                                                      \
    X(ENUM, qkv_init_scheme, init, QKV_INIT_DEFAULT, 0, QKV_INIT_SCHEME_COUNT, QKV_INIT_SCHEME_NAMES,       \
      "Q/K/V projections start at: default, identity (I + noise) or mimetic", 16,                           \
      (a->init != QKV_INIT_DEFAULT, "init %s", QKV_INIT_SCHEME_NAMES[a->init]), rule_init)                  \
    /* false: Q = X (no query projection; full or kv_tied) */                                               \
    X(BOOL, bool, query_proj, true, 0, 1, NULL, "a query projection (false: Q = X)", 4,                     \
      (!a->query_proj, "query_proj off (Q = X)"), rule_query_proj)                                          \
    /* false: K = X (no key projection; full) */                                                            \
    X(BOOL, bool, key_proj, true, 0, 1, NULL, "a key projection (false: K = X)", 5,                         \
      (!a->key_proj, "key_proj off (K = X)"), rule_key_proj)                                                \
    /* differential attention (Ye et al. 2025): per head two half-width query/key pairs,                    \
       softmax(Q1 K1^T s) - lambda softmax(Q2 K2^T s), a learned lambda, RMS-normalised head outputs        \
       times (1 - lambda_init) */                                                                           \
    X(BOOL, bool, diff, false, 0, 1, NULL,                                                                  \
      "differential attention: two half-width softmaxes per head, the second times a learned lambda subtracted", \
      9, (a->diff, "diff"), rule_diff)                                                                      \
    /* talking-heads attention (Shazeer et al. 2020): learned H x H mixing of the heads' scores             \
       before the softmax and of their weights after it */                                                  \
    X(BOOL, bool, talking_heads, false, 0, 1, NULL,                                                         \
      "talking heads: learned heads x heads mixing of the scores and of the weights", 10,                   \
      (a->talking_heads, "talking_heads"), rule_talking_heads)                                              \
    /* qk_tied, shared: Q = X W D with a learned diagonal D (its start) */                                  \
    X(ENUM, qkv_qk_diag, qk_diag, QKV_QK_DIAG_NONE, 0, QKV_QK_DIAG_COUNT, QKV_QK_DIAG_NAMES,                \
      "qk_tied, shared: Q = X W D, a learned diagonal D starting none, alternating, positive or random", 7, \
      (a->qk_diag, "qk_diag %s (Q = X W D)", QKV_QK_DIAG_NAMES[a->qk_diag]), rule_qk_diag)                  \
    /* exclusive self attention (Zhai 2026): each head's output minus its part along the token's own        \
       value, before the output projection */                                                               \
    X(BOOL, bool, exclusive, false, 0, 1, NULL,                                                             \
      "exclusive self attention: each head's output minus its part along the token's own value", 8,         \
      (a->exclusive, "exclusive"), rule_exclusive)

/* the number of rows */
#define QKV_ATTN_ONE_ROW(...) +1
enum { QKV_ATTN_OPTION_COUNT = 0 QKV_ATTN_OPTIONS(QKV_ATTN_ONE_ROW) };

/* the highest label_rank of a row */
#define QKV_ATTN_LABEL_RANKS 16

#endif
