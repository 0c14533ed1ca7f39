/* The standard benchmark: one training step (forward, backward, Adam) of a full-attention
 * model on random tokens, timed after warm-up. */
#ifndef QKV_BENCH_H
#define QKV_BENCH_H

#include "qkv_api.h"

#include "tensor/error.h"

#include "nn/model_config.h"

#include <stdint.h>

typedef struct qkv_bench_size {
    const char *name;
    int vocab, seq, d_model, heads, layers, d_ff, batch;
} qkv_bench_size;

/* tiny, small, medium (docs/performance.md) */
QKV_APP_API extern const qkv_bench_size QKV_BENCH_SIZES[3];

typedef struct qkv_bench_result {
    double ms_per_step;      /* median over the timed steps */
    double ms_min, ms_max;
    double tokens_per_s;
    double gflops;           /* matrix-product FLOPs of one step / median time */
    double flops_per_step;
    int64_t params;
    double steady_allocs;    /* heap allocations per timed step (-1: not counted) */
    double model_mb;         /* parameters + gradients + Adam state */
    double activation_mb;    /* peak arena bytes of a step (activations, their grads, tape) */
    double products_share;   /* the threads' time in matrix products over all their time, in
                              * as many steps again with every product timed */
    double ms_products;      /* products_share x ms_per_step: the median step were everything
                              * outside the products free (and the products evenly split) */
} qkv_bench_result;

/* the model a size trains, with the attention and positions of over (NULL: the defaults: full,
 * learned positions); its sizes are the size's */
QKV_APP_API qkv_model_config qkv_bench_model_config(const qkv_bench_size *s, const qkv_model_config *over);
/* run `steps` timed steps after `warmup`, then `steps` more with every product timed;
 * alloc_count (may be NULL) returns a running count of heap allocations. 0, or -1 with e. */
QKV_APP_API int qkv_bench_run(const qkv_bench_size *s, int warmup, int steps, uint64_t (*alloc_count)(void),
                  qkv_bench_result *r, qkv_err *e);
/* the same with the attention and positions of over (NULL: the defaults), and the step in micro_batches
 * (1: the whole batch in one pass, its ops split across qkv's threads; S > 1, dividing the batch:
 * as `qkv train` takes it with train.shards = S, whole micro-batches on each thread), its matrix
 * products in bf16 when bf16 (train.precision; the caller checks qkv_bf16_available) */
QKV_APP_API int qkv_bench_run_with(const qkv_bench_size *s, const qkv_model_config *over, int micro_batches, bool bf16,
                                   int warmup, int steps, uint64_t (*alloc_count)(void), qkv_bench_result *r,
                                   qkv_err *e);
/* this machine's sgemm GFLOP/s on an n x n x n product at the current BLAS thread count (best of reps) */
QKV_APP_API double qkv_bench_sgemm_ceiling(int n, int reps);
/* the same for qkv's bf16 product (train.precision=bf16's, at qkv's thread count: its operands'
 * conversion included); 0 where bf16 products do not run */
QKV_APP_API double qkv_bench_bf16_ceiling(int n, int reps);

#endif
