/* The differentiable ops: one list from which the enum, the name table and the backward
 * table (op.c) are all expanded, so none of them can get out of order or out of step. */
#ifndef QKV_OP_H
#define QKV_OP_H

#include "qkv_api.h"

/* X(NAME, "name", rule): the op QKV_OP_NAME, the name qkv_op_name gives it, and its backward
 * rule qkv__<rule>_backward (internal: src/autograd/tape.h). Only the rule's stem is named
 * here, so this public header refers to no internal symbol. */
#define QKV_OP_LIST(X)                                                                               \
    X(MATMUL, "matmul", matmul)                                                                      \
    X(LINEAR, "linear", linear)         /* matmul with the weight transposed and a bias, fused */    \
    X(LINEAR_ACT, "linear_act", linear_act) /* linear + bias + activation as its epilogue */         \
    X(ADD, "add", binary)               /* ADD..DIV in qkv_binop's order (op_binary.c) */            \
    X(SUB, "sub", binary)                                                                            \
    X(MUL, "mul", binary)                                                                            \
    X(DIV, "div", binary)                                                                            \
    X(AFFINE, "affine", affine)         /* scale and add-scalar */                                   \
    X(SUM, "sum", reduce)                                                                            \
    X(MEAN, "mean", reduce)                                                                          \
    X(EXP, "exp", unary)                                                                             \
    X(LOG, "log", unary)                                                                             \
    X(TANH, "tanh", unary)                                                                           \
    X(SQRT, "sqrt", unary)                                                                           \
    X(RELU, "relu", unary)                                                                           \
    X(GELU, "gelu", unary)                                                                           \
    X(GELU_TANH, "gelu_tanh", unary)                                                                 \
    X(SIGMOID, "sigmoid", unary)                                                                     \
    X(SOFTMAX, "softmax", softmax)                                                                   \
    X(LOG_SOFTMAX, "log_softmax", log_softmax)                                                       \
    /* softmax(mask ? fill : scale x), fused for attention: */                                       \
    X(MASKED_SOFTMAX, "masked_softmax", masked_softmax)                                              \
    /* per-head softmax(scale Q K^T, masked) V, fused: */                                            \
    X(SDP_ATTENTION, "sdp_attention", sdp_attention)                                                 \
    X(LAYERNORM, "layernorm", layernorm)                                                             \
    /* h = x + a and layernorm(h) in one pass; h is the record's second output: */                  \
    X(ADD_LAYERNORM, "add_layernorm", add_layernorm)                                                 \
    X(EMBEDDING, "embedding", embedding)                                                             \
    X(CROSS_ENTROPY, "cross_entropy", cross_entropy)                                                 \
    X(MASKED_FILL, "masked_fill", masked_fill)                                                       \
    X(ROPE, "rope", rope)               /* rotary positions: pairs of each head rotated by position */ \
    X(EXCLUSIVE, "exclusive", exclusive) /* a head's output minus its part along its own value */  \
    X(RESHAPE, "reshape", reshape)                                                                   \
    X(TRANSPOSE, "transpose", transpose)                                                             \
    X(SLICE, "slice", slice)                                                                         \
    X(CONCAT, "concat", concat)                                                                      \
    X(CUSTOM, "custom", custom)

#define QKV_OP_ENUM_(e, name, rule) QKV_OP_##e,
typedef enum qkv_op { QKV_OP_LIST(QKV_OP_ENUM_) QKV_OP_COUNT } qkv_op;
#undef QKV_OP_ENUM_

/* "matmul", "add", ... ("?" for a value outside the enum) */
QKV_API const char *qkv_op_name(qkv_op op);

#endif
