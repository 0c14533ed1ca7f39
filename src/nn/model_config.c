/* Model hyper-parameters: names, defaults, checks. */
#include "nn/model_config.h"

#include <stdio.h>
#include <string.h>

const char *const QKV_ATTN_QKV_NAMES[QKV_ATTN_QKV_COUNT] = {
    "full", "shared", "identity", "qk_tied", "kv_tied", "head_shared"};
const char *const QKV_ATTN_SCALE_NAMES[QKV_SCALE_COUNT] = {"head_dim", "embed"};
const char *const QKV_ATTN_GATE_NAMES[QKV_GATE_COUNT] = {"none", "output", "value"};
const char *const QKV_ACTIVATION_NAMES[QKV_ACT_COUNT] = {"gelu", "gelu_tanh", "relu"};

qkv_model_config qkv_model_config_default(void) {
    qkv_model_config c;
    memset(&c, 0, sizeof c); /* padding too: configs compare as bytes */
    c.vocab = 0, c.seq_len = 0, c.d_model = 64, c.heads = 4, c.layers = 2, c.d_ff = 256;
    c.activation = QKV_ACT_GELU;
    c.attn.qkv = QKV_ATTN_FULL, c.attn.scale = QKV_SCALE_HEAD_DIM, c.attn.causal = true;
    c.attn.rel_pos_bias = false, c.attn.rel_pos_max = 32, c.attn.gate = QKV_GATE_NONE;
    c.attn.self_mask = false;
    return c;
}

int qkv_model_config_check(const qkv_model_config *c, char *err, int errlen) {
#define BAD(...) return snprintf(err, (size_t)errlen, __VA_ARGS__), -1
    if (c->vocab < 2) BAD("vocab: expected at least 2 tokens, got %d", c->vocab);
    if (c->seq_len < 1) BAD("seq_len: expected at least 1, got %d", c->seq_len);
    if (c->d_model < 1) BAD("d_model: expected at least 1, got %d", c->d_model);
    if (c->heads < 1) BAD("heads: expected at least 1, got %d", c->heads);
    if (c->layers < 1) BAD("layers: expected at least 1, got %d", c->layers);
    if (c->d_ff < 1) BAD("d_ff: expected at least 1, got %d", c->d_ff);
    if (c->d_model % c->heads)
        BAD("heads: %d does not divide d_model %d (each head gets d_model/heads dims)", c->heads, c->d_model);
    if (c->attn.rel_pos_bias && c->attn.rel_pos_max < 1)
        BAD("attn.rel_pos_max: expected at least 1, got %d", c->attn.rel_pos_max);
    if ((unsigned)c->attn.qkv >= QKV_ATTN_QKV_COUNT) BAD("attn.qkv: unknown variant %d", (int)c->attn.qkv);
    if ((unsigned)c->attn.scale >= QKV_SCALE_COUNT) BAD("attn.scale: unknown scale %d", (int)c->attn.scale);
    if ((unsigned)c->attn.gate >= QKV_GATE_COUNT) BAD("attn.gate: unknown gate %d", (int)c->attn.gate);
    if ((unsigned)c->activation >= QKV_ACT_COUNT) BAD("activation: unknown activation %d", (int)c->activation);
    return 0;
#undef BAD
}
