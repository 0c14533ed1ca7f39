/* Internal: tape records and helpers shared by the op implementations (op_*.c).
 * Builders check shapes, compute through the kernels and record; the backward
 * rule of each op reads its record and accumulates into the inputs' gradients. */
#ifndef QKV_TAPE_H
#define QKV_TAPE_H

#include "qkv_api.h"

#include "autograd/ctx.h"
#include "autograd/ops.h"
#include "autograd/arena.h"
#include "tensor/kernels.h"
#include "tensor/check.h"

#define QKV_REC_MAX_IN 3
/* room for an op's own parameters in its record (16 numbers or pointers) */
#define QKV_REC_OWN_BYTES 128

/* One op on the tape. The common fields say what the op read and wrote; p holds what its
 * backward rule needs besides, written by the op's builder and read in the rule: a member of
 * its own for the older ops (reshape needs none), or, for an op added since, a struct the op's
 * file defines, kept in p.own (QKV_REC_PARAMS), so a new op adds nothing here. A union, because
 * a record is allocated per op per step in the arena: sized by sdpa (tape.c keeps its arena
 * footprint). Buffers p points to (saved activations) live in the arena too. */
typedef struct qkv_record {
    qkv_op op;
    int n_in;
    qkv_tensor **in;          /* n_in inputs (arena array) */
    qkv_tensor *out;
    qkv_tensor *out2;         /* a second output (add_layernorm's sum), or NULL */
    struct qkv_record *prev;
    union {
        /* C = op(A) op(B) as `batch` products (M,K) (K,N); sa, sb: element strides between the
         * batches' A and B (0: one matrix shared by every batch). M may hold several batches
         * of A's rows folded into one product. */
        struct { int ta, tb; int64_t batch, M, N, K, sa, sb; } matmul;
        /* y (rows,d_out) = x (rows,d_in) W^T + b, W (d_out,d_in); b is in[2], or NULL; linear_act:
         * y = f(x W^T + b), f = act, and deriv (rows,d_out) = f'(x W^T + b), kept by the forward */
        struct { int64_t rows, d_in, d_out; qkv_tensor *b; qkv_unop act; void *deriv; } linear;
        /* add, sub, mul, div: y = a op b, b broadcast over a by bc */
        struct { qkv_binop op; qkv_bcast bc; } binary;
        /* y = alpha x + beta (beta needs no gradient) */
        struct { double alpha; } affine;
        /* sum, mean: x (outer,n,inner) -> y (outer,inner), times scale (1, or 1/n for mean) */
        struct { int64_t outer, n, inner; double scale; } reduce;
        /* exp ... sigmoid; deriv: dy/dx kept by the forward (GELU's, one erf per element), or NULL */
        struct { qkv_unop op; void *deriv; } unary;
        /* softmax, log_softmax over the last axis of (rows,n) */
        struct { int64_t rows, n; } softmax;
        /* y (rows,n) = softmax(mask ? fill : scale x); the backward needs no mask: masked y are 0 */
        struct { int64_t rows, n; double scale; } masked_softmax;
        /* q (B,T,H hd), k, v (B,T,kvH hd); probs: the weights P (B,H,T,T); mask (or NULL) broadcast
         * by bc; slopes: H ALiBi slopes (arena copy) or NULL */
        struct { const qkv_tensor *mask; qkv_bcast bc; void *probs; int64_t B, T, H, hd, kvH; int causal;
                 double scale; const double *slopes; int64_t vH, vd; } sdpa;
        /* x (rows,n); w, b (n): in[1], in[2] (or in[1] alone), NULL when absent; mean, rstd (rows) */
        struct { int64_t rows, n; qkv_tensor *w, *b; void *mean, *rstd; } layernorm;
        /* h = x + a (out2), y = layernorm(h) (out); x (rows,n), a (a_rows,n) broadcast over x's rows;
         * in: x, a, then w, b as present (NULL when absent); mean, rstd (rows) */
        struct { int64_t rows, n, a_rows; qkv_tensor *w, *b; void *mean, *rstd; } add_layernorm;
        /* y (idx..., D) = table[idx], table (V,D) */
        struct { const qkv_tensor *idx; } embedding;
        /* logits (rows,V), targets (rows); lse (rows) the forward's logsumexp; count: the
         * targets not ignored (the mean's divisor) */
        struct { const qkv_tensor *targets; void *lse; int64_t rows, V, count; int ignore_index; } cross_entropy;
        /* x, y (B,T,nh hd); cs (T, hd/2, 2): the cos and sin of each position's angles */
        struct { int64_t hd; const double *cs; } rope;
        /* y = mask ? value : x, mask broadcast over x by bc */
        struct { const qkv_tensor *mask; qkv_bcast bc; } masked_fill;
        /* the swapped axes, counted in x's shape right-aligned into 4 dims */
        struct { int a1, a2; } transpose;
        /* x (outer,n,inner) -> y (outer,len,inner), rows start .. start+len-1 of the n axis */
        struct { int64_t outer, n, inner, start, len; } slice;
        /* in[i] (outer,len_i,inner) -> y (outer,total,inner) along `axis` of the inputs' shape */
        struct { int64_t outer, inner, total; int axis; } concat;
        /* the caller's backward, its data, and the op's name for messages */
        struct { qkv_custom_backward_fn backward; void *user; const char *name; } custom;
        /* the parameters of an op that defines its own struct for them (QKV_REC_PARAMS) */
        union { unsigned char bytes[QKV_REC_OWN_BYTES]; int64_t i; double d; void *ptr; } own;
    } p;
} qkv_record;

/* r's parameters as the op's own struct T, defined in its op_<name>.c (use const T in the backward
 * rule, which gets a const record): checked at compile time to fit p.own and its alignment */
#define QKV_REC_PARAMS(T, r)                                                                          \
    ((T *)(void *)(r)->p.own.bytes +                                                                  \
     0 * sizeof(struct { _Static_assert(sizeof(T) <= QKV_REC_OWN_BYTES && _Alignof(T) <= _Alignof(qkv_record), \
                                        #T " does not fit the record's p.own"); int fits; }))

/* a backward rule: from r->out->grad, ACCUMULATE into the gradients of r's inputs (those that
 * require grad); 0, or -1 with the error set */
typedef int (*qkv_backward_fn)(qkv_ctx *ctx, const qkv_record *rec);
/* the built-in backward rule of op (NULL outside the enum) */
QKV_INTERNAL qkv_backward_fn qkv__op_backward(qkv_op op);
/* Testing hook: replace one op's backward rule in this context (NULL restores the real one).
 * The harness tests use it to prove a wrong rule is caught. */
QKV_INTERNAL void qkv__ctx_override_backward(qkv_ctx *ctx, qkv_op op, qkv_backward_fn fn);

struct qkv_ctx {
    qkv_arena arena;
    qkv_record *tape;         /* last record; walk ->prev */
    int tape_len;
    uint32_t gen;             /* bumped by every reset; arena tensors carry it */
    bool grad_enabled;
    bool backward_done;       /* backward ran on this tape: a second run would double-count */
    bool bf16;                /* float products in bf16 (qkv_ctx_set_bf16) */
    bool counting;            /* shapes and bytes only: no values (qkv_ctx_new_counting) */
    qkv_err err;              /* the sticky error: the first op that failed since the reset (ctx.h) */
    qkv_backward_fn override[QKV_OP_COUNT];
};

/* an output tensor in the arena, NOT zero-filled: the op must write every element
 * (NULL + error when out of memory); in a counting context its data is counted, not allocated */
QKV_INTERNAL qkv_tensor *qkv__out(qkv_ctx *ctx, qkv_dtype dt, int ndim, const int64_t *shape);
/* arena memory the op itself writes in every context, counting or not (a tensor's header, a
 * record): qkv_ctx_alloc is counted only in a counting context */
QKV_INTERNAL void *qkv__ctx_alloc_host(qkv_ctx *ctx, size_t bytes);
/* fails unless t is a float tensor; `what` names the op */
QKV_INTERNAL bool qkv__check_float(qkv_ctx *ctx, const char *what, const qkv_tensor *t);
/* fails unless a and b are float tensors of the same dtype */
QKV_INTERNAL bool qkv__check_pair(qkv_ctx *ctx, const char *what, const qkv_tensor *a, const qkv_tensor *b);
/* bc = the plan broadcasting an I32 mask over a tensor of shape (ndim, shape) without growing
 * it; false (error set, naming `what`) if the mask is not I32 or does not broadcast so */
QKV_INTERNAL bool qkv__mask_plan(qkv_ctx *ctx, const char *what, const qkv_tensor *mask, int ndim, const int64_t *shape,
                    qkv_bcast *bc);
/* true when an op on these inputs will be recorded (grad mode on, an input requires grad) */
QKV_INTERNAL bool qkv__will_record(const qkv_ctx *ctx, int n_in, qkv_tensor *const *in);
/* Append a record for `out` when grad mode is on and an input requires grad (marks out
 * as requiring grad); otherwise NULL, which is not an error: check qkv_ctx_ok. */
QKV_INTERNAL qkv_record *qkv__record(qkv_ctx *ctx, qkv_op op, qkv_tensor *out, int n_in, qkv_tensor *const *in);
/* the gradient buffer of t (zeroed in the arena on first use), or NULL when t needs none */
QKV_INTERNAL void *qkv__grad(qkv_ctx *ctx, qkv_tensor *t);
/* the same, for a rule that writes every element: when the buffer is new, it is NOT zeroed and
 * *fresh is set (the rule assigns, or tells its kernel to zero first: kernels.h) */
QKV_INTERNAL void *qkv__grad_fresh(qkv_ctx *ctx, qkv_tensor *t, bool *fresh);
/* "(2,3,4)" for messages; uses a small rotating static buffer (4 slots) */
QKV_INTERNAL const char *qkv__shp(const qkv_tensor *t);

/* dispatch a typed kernel on a float dtype; its value (a kernel that returns one) */
#define QKV_KVALUE(dtype, name, ...)                                                            \
    (QKV_ASSERT((dtype) == QKV_F32 || (dtype) == QKV_F64, "a kernel runs on float tensors only"), \
     (dtype) == QKV_F64 ? qkv__k_##name##_f64(__VA_ARGS__) : qkv__k_##name##_f32(__VA_ARGS__))
/* run a typed kernel, unless ctx is counting (then there are no values to compute) */
#define QKV_KCALL(ctx, dtype, name, ...) ((ctx)->counting ? (void)0 : (void)QKV_KVALUE(dtype, name, __VA_ARGS__))

/* The float or double product C = op(A) op(B) + beta C (beta 0 or 1), rows split across qkv's
 * threads; a float one in bf16 when ctx->bf16 (tensor/bf16.h), its conversion buffers from the
 * arena. -1 (error set) when the arena cannot grow. */
QKV_INTERNAL int qkv__gemm(qkv_ctx *ctx, qkv_dtype dt, int ta, int tb, int64_t M, int64_t N, int64_t K, const void *A,
                           const void *B, int beta, void *C);
/* batch products, operands sa, sb, sc elements apart, as qkv__k_gemm_batched_f32 */
QKV_INTERNAL int qkv__gemm_batched(qkv_ctx *ctx, qkv_dtype dt, int64_t batch, int ta, int tb, int64_t M, int64_t N,
                                   int64_t K, const void *A, int64_t sa, const void *B, int64_t sb, int beta, void *C,
                                   int64_t sc);

/* backward rules, one per op file: qkv__<rule>_backward for each row of QKV_OP_LIST (op.h), declared
 * from the list (a rule shared by several ops is declared once per op: the same declaration) */
#define QKV_DECLARE_BACKWARD(e, name, rule) QKV_INTERNAL int qkv__##rule##_backward(qkv_ctx *ctx, const qkv_record *r);
QKV_OP_LIST(QKV_DECLARE_BACKWARD)
#undef QKV_DECLARE_BACKWARD

/* sdp_attention with values of their own: v (B,T,v_heads vd), query head h reads value head
 * h / (heads / v_heads), y (B,T,heads vd); the key and value groups nest (one size divides the other).
 * qkv_sdp_attention_ex is this with v_heads = kv_heads (and vd = hd) */
QKV_INTERNAL qkv_tensor *qkv__sdp_attention_v(qkv_ctx *ctx, qkv_tensor *q, qkv_tensor *k, qkv_tensor *v, int heads,
                                              int kv_heads, int v_heads, const qkv_tensor *mask, bool causal,
                                              double scale, const double *slopes, qkv_tensor **probs);
/* qkv_diff_attention composed from matmul, masked_softmax, slice, sub, ... on the (B,2H,T,T)
 * maps: the fused form's reference in the tests */
QKV_INTERNAL qkv_tensor *qkv__diff_attention_composed(qkv_ctx *ctx, qkv_tensor *q, qkv_tensor *k, qkv_tensor *v,
                                                      int heads, const qkv_tensor *mask, bool causal, double scale,
                                                      qkv_tensor *lambda, double lambda_init, qkv_tensor *norm_w,
                                                      double eps, qkv_tensor **probs);

#endif
