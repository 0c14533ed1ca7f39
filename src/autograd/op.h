/* The differentiable ops: one enum value per op, a name table in step with it. */
#ifndef QKV_OP_H
#define QKV_OP_H

typedef enum qkv_op {
    QKV_OP_MATMUL,
    QKV_OP_LINEAR,      /* matmul with the weight transposed and a bias, fused */
    QKV_OP_ADD,
    QKV_OP_SUB,
    QKV_OP_MUL,
    QKV_OP_DIV,
    QKV_OP_AFFINE,      /* scale and add-scalar */
    QKV_OP_SUM,
    QKV_OP_MEAN,
    QKV_OP_EXP,
    QKV_OP_LOG,
    QKV_OP_TANH,
    QKV_OP_SQRT,
    QKV_OP_RELU,
    QKV_OP_GELU,
    QKV_OP_GELU_TANH,
    QKV_OP_SIGMOID,
    QKV_OP_SOFTMAX,
    QKV_OP_LOG_SOFTMAX,
    QKV_OP_MASKED_SOFTMAX, /* softmax(mask ? fill : scale x), fused for attention */
    QKV_OP_SDP_ATTENTION,  /* per-head softmax(scale Q K^T, masked) V, fused */
    QKV_OP_LAYERNORM,
    QKV_OP_EMBEDDING,
    QKV_OP_CROSS_ENTROPY,
    QKV_OP_MASKED_FILL,
    QKV_OP_RESHAPE,
    QKV_OP_TRANSPOSE,
    QKV_OP_SLICE,
    QKV_OP_CONCAT,
    QKV_OP_CUSTOM,
    QKV_OP_COUNT
} qkv_op;

/* "matmul", "add", ... */
const char *qkv_op_name(qkv_op op);

#endif
