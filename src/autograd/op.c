/* Op names and the table of backward rules, both kept in step with the enum. */
#include "autograd/tape.h"

static const char *const OP_NAMES[] = {
    "matmul", "linear", "add", "sub", "mul", "div", "affine", "sum", "mean", "exp", "log", "tanh",
    "sqrt", "relu", "gelu", "gelu_tanh", "sigmoid", "softmax", "log_softmax", "masked_softmax",
    "sdp_attention", "layernorm",
    "embedding", "cross_entropy", "masked_fill", "reshape", "transpose", "slice", "concat",
    "custom",
};
_Static_assert(sizeof OP_NAMES / sizeof OP_NAMES[0] == QKV_OP_COUNT,
               "OP_NAMES out of step with qkv_op");

static const qkv_backward_fn BACKWARD[] = {
    qkv__matmul_backward,      /* matmul */
    qkv__linear_backward,      /* linear */
    qkv__binary_backward,      /* add */
    qkv__binary_backward,      /* sub */
    qkv__binary_backward,      /* mul */
    qkv__binary_backward,      /* div */
    qkv__affine_backward,      /* affine */
    qkv__reduce_backward,      /* sum */
    qkv__reduce_backward,      /* mean */
    qkv__unary_backward,       /* exp */
    qkv__unary_backward,       /* log */
    qkv__unary_backward,       /* tanh */
    qkv__unary_backward,       /* sqrt */
    qkv__unary_backward,       /* relu */
    qkv__unary_backward,       /* gelu */
    qkv__unary_backward,       /* gelu_tanh */
    qkv__unary_backward,       /* sigmoid */
    qkv__softmax_backward,     /* softmax */
    qkv__log_softmax_backward, /* log_softmax */
    qkv__masked_softmax_backward, /* masked_softmax */
    qkv__sdp_attention_backward, /* sdp_attention */
    qkv__layernorm_backward,   /* layernorm */
    qkv__embedding_backward,   /* embedding */
    qkv__cross_entropy_backward, /* cross_entropy */
    qkv__masked_fill_backward, /* masked_fill */
    qkv__reshape_backward,     /* reshape */
    qkv__transpose_backward,   /* transpose */
    qkv__slice_backward,       /* slice */
    qkv__concat_backward,      /* concat */
    qkv__custom_backward,      /* custom */
};
_Static_assert(sizeof BACKWARD / sizeof BACKWARD[0] == QKV_OP_COUNT,
               "BACKWARD out of step with qkv_op");

const char *qkv_op_name(qkv_op op) { return (unsigned)op < QKV_OP_COUNT ? OP_NAMES[op] : "?"; }

qkv_backward_fn qkv_op_backward(qkv_op op) {
    return (unsigned)op < QKV_OP_COUNT ? BACKWARD[op] : NULL;
}
