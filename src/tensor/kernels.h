/* qkv kernels: plain loops over raw arrays, one forward/backward pair per op.
 *
 * Every kernel exists twice, for float (qkv__k_NAME_f32) and double (qkv__k_NAME_f64):
 * the same source (src/tensor/k_*.c) is compiled once per scalar type. Training runs
 * in float; gradient checks run the very same code in double (see README, design notes).
 * Backward kernels ACCUMULATE into their gradient outputs (+=). */
#ifndef QKV_KERNELS_H
#define QKV_KERNELS_H

#include "qkv_api.h"

#include <stdint.h>
#include "tensor/tensor.h"

/* Elementwise binary ops with broadcasting */
typedef enum { QKV_BIN_ADD, QKV_BIN_SUB, QKV_BIN_MUL, QKV_BIN_DIV } qkv_binop;
/* Elementwise unary ops */
typedef enum {
    QKV_UN_EXP, QKV_UN_LOG, QKV_UN_TANH, QKV_UN_SQRT, QKV_UN_RELU,
    QKV_UN_GELU, QKV_UN_GELU_TANH, QKV_UN_SIGMOID, QKV_UN_COUNT
} qkv_unop;

/* Broadcast plan: output dims n (padded to 4 with leading 1s) and the element
 * strides of a and b along each output dim (0 where that operand is broadcast). */
typedef struct qkv_bcast { int64_t n[4], sa[4], sb[4]; } qkv_bcast;

/* the offset in b of output row r's elements (rows: the output's first three dims, each row
 * n[3] long; b's elements along the row then stand sb[3] apart) */
static inline int64_t qkv_bcast_row_b(const qkv_bcast *bc, int64_t r) {
    int64_t i2 = r % bc->n[2], i1 = (r / bc->n[2]) % bc->n[1], i0 = r / (bc->n[2] * bc->n[1]);
    return i0 * bc->sb[0] + i1 * bc->sb[1] + i2 * bc->sb[2];
}

/* Trailing-aligned (NumPy/PyTorch) broadcast of shapes a and b into out; -1 if incompatible. */
QKV_INTERNAL int qkv__bcast_init(qkv_bcast *bc, int nda, const int64_t *a, int ndb, const int64_t *b,
                   int *out_ndim, int64_t *out_shape);

/* Scaled dot-product attention over H heads of a (B,T,d) layout, d = H hd (k_attention.c):
 * a query row i may not see key j where (causal && j > i) or mask[b,h,i,j] != 0. Keys and
 * values may have fewer heads (grouped-query attention): kvH heads of (B,T,kvH hd), query head
 * h using key/value head h / (H / kvH). With slopes, ALiBi: score(i,j) -= slopes[h] |i - j|. */
typedef struct qkv_sdpa_shape {
    int64_t B, T, H, hd;
    int causal;
    const int32_t *mask;   /* I32 broadcast over (B,H,T,T) by bc (b = the mask), or NULL */
    const qkv_bcast *bc;
    double scale;          /* scores are scale Q K^T */
    int64_t kvH;           /* key/value heads (0: H); H is a multiple of it */
    const double *slopes;  /* H ALiBi slopes, or NULL */
    int64_t vH, vd;        /* value heads (0: kvH) and their width (0: hd); H is a multiple of vH */
    void *bf16;            /* float products in bf16 (tensor/bf16.h): a scratch of bf16_part bytes per part
                              (per thread), or NULL for float32 products */
    size_t bf16_part;
} qkv_sdpa_shape;

/* query heads per unit of the backward's work: whole groups of the key heads and of the value
 * heads (one of the two group sizes divides the other) */
static inline int64_t qkv_sdpa_group_size(const qkv_sdpa_shape *s) {
    int64_t kv = s->kvH > 0 ? s->kvH : s->H, g = s->H / kv, vg = s->H / (s->vH > 0 ? s->vH : kv);
    return g > vg ? g : vg;
}

/* the forward's parts with bf16 products (each its scratch of bf16_part bytes): one per thread,
 * at most one per (batch, head) pair */
QKV_INTERNAL int64_t qkv__sdpa_parts(const qkv_sdpa_shape *s);
/* bytes of bf16 scratch per part: the largest head product (tensor/bf16.h) */
QKV_INTERNAL size_t qkv__sdpa_bf16_part(const qkv_sdpa_shape *s);

/* Backward kernels that take `zero` flags: the gradient array a flag names holds garbage (it
 * was just allocated, see qkv__grad_fresh), so the kernel assigns its values instead of adding
 * them (or zeroes each thread's share just before adding): no separate zeroing pass. */

/* Layer norm's backward sums the weight and bias gradients per fixed block of this many rows
 * (fixed, so the result never depends on threads); the partial sums need this much scratch. */
#define QKV_LN_BLOCK 32
static inline int64_t qkv_layernorm_backward_scratch(int64_t rows, int64_t n) {
    return (rows + QKV_LN_BLOCK - 1) / QKV_LN_BLOCK * 2 * n;
}
/* add_layernorm_backward's scratch: the row sums' partials (when dw or db is asked for), and the
 * rows of s when a is broadcast (a_rows < rows) and da is asked for */
static inline int64_t qkv_add_layernorm_backward_scratch(int64_t rows, int64_t n, int64_t a_rows, int partials,
                                                         int da) {
    return (partials ? qkv_layernorm_backward_scratch(rows, n) : 0) + (da && a_rows < rows ? rows * n : 0);
}

/* floating-point operations done by the gemm kernels (2 M N K each), for benchmarks;
 * atomic: micro-batches may be computed on several threads at once */
QKV_INTERNAL extern _Atomic uint64_t qkv__gemm_flops;
/* while qkv__gemm_timing is non-zero, every product's wall time is added to qkv__gemm_ns (in
 * nanoseconds, summed over threads): what `qkv bench` and `qkv train --time-products` report as
 * the time in the products; off by default, as the two clock reads per product cost a little */
QKV_INTERNAL extern _Atomic int qkv__gemm_timing;
QKV_INTERNAL extern _Atomic uint64_t qkv__gemm_ns;

/* the kernels' declarations, written by the build from their definitions in src/tensor/k_*.c
 * (scripts/kernel-index.sh --decls; each kernel's contract is the comment above its definition),
 * once for float and once for double */
#define QKV_KREAL float
#define QKV_K(name) qkv__k_##name##_f32
#include "tensor/kernels_decl.h"
#undef QKV_KREAL
#undef QKV_K
#define QKV_KREAL double
#define QKV_K(name) qkv__k_##name##_f64
#include "tensor/kernels_decl.h"
#undef QKV_KREAL
#undef QKV_K

#endif
