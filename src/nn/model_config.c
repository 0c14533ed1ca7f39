/* Model hyper-parameters: names, defaults, checks. */
#include "nn/model_config.h"

#include <stdio.h>

const char *const QKV_ATTN_QKV_NAMES[QKV_ATTN_QKV_COUNT] = {
    "full", "shared", "identity", "qk_tied", "kv_tied", "head_shared"};
const char *const QKV_ATTN_SCALE_NAMES[QKV_SCALE_COUNT] = {"head_dim", "embed"};
const char *const QKV_ATTN_GATE_NAMES[QKV_GATE_COUNT] = {"none", "output", "value"};
const char *const QKV_ACTIVATION_NAMES[QKV_ACT_COUNT] = {"gelu", "gelu_tanh", "relu"};

qkv_model_config qkv_model_config_default(void) {
    qkv_model_config c = {
        .vocab = 0, .seq_len = 0, .d_model = 64, .heads = 4, .layers = 2, .d_ff = 256,
        .activation = QKV_ACT_GELU,
        .attn = {.qkv = QKV_ATTN_FULL, .scale = QKV_SCALE_HEAD_DIM, .causal = true,
                 .rel_pos_bias = false, .rel_pos_max = 32, .gate = QKV_GATE_NONE,
                 .self_mask = false},
    };
    return c;
}

int qkv_model_config_check(const qkv_model_config *c, char *err, int errlen) {
#define BAD(...) return snprintf(err, (size_t)errlen, __VA_ARGS__), -1
    if (c->vocab < 2) BAD("model.vocab: expected at least 2 tokens, got %d", c->vocab);
    if (c->seq_len < 1) BAD("model.seq_len: expected at least 1, got %d", c->seq_len);
    if (c->d_model < 1) BAD("model.d_model: expected at least 1, got %d", c->d_model);
    if (c->heads < 1) BAD("model.heads: expected at least 1, got %d", c->heads);
    if (c->layers < 1) BAD("model.layers: expected at least 1, got %d", c->layers);
    if (c->d_ff < 1) BAD("model.d_ff: expected at least 1, got %d", c->d_ff);
    if (c->d_model % c->heads)
        BAD("model.heads: %d does not divide model.d_model %d (each head gets d_model/heads dims)",
            c->heads, c->d_model);
    if (c->attn.rel_pos_bias && c->attn.rel_pos_max < 1)
        BAD("model.attention.rel_pos_max: expected at least 1, got %d", c->attn.rel_pos_max);
    if ((unsigned)c->attn.qkv >= QKV_ATTN_QKV_COUNT || (unsigned)c->attn.scale >= QKV_SCALE_COUNT ||
        (unsigned)c->attn.gate >= QKV_GATE_COUNT || (unsigned)c->activation >= QKV_ACT_COUNT)
        BAD("model: an enum value is out of range");
    return 0;
#undef BAD
}
