/* qkv's own threads, for the kernels BLAS does not run: elementwise maps, softmax, layer
 * norm, Adam. Work is split into contiguous ranges; every output element (and every
 * per-column sum) is computed by one thread in the serial order, so results are the same
 * bits for any thread count. The pool is driven from one thread at a time (the caller of
 * the ops) and never calls BLAS itself. */
#ifndef QKV_PARALLEL_H
#define QKV_PARALLEL_H

#include <stdint.h>

/* threads for qkv's kernels (1: none; at most 64); starts the pool on first use. Call from
 * the main thread while no kernel runs. 0, or -1 if threads could not be started (then 1). */
int qkv_set_threads(int n);
int qkv_get_threads(void);

/* fn(arg, begin, end) over [0, n), in up to qkv_get_threads() contiguous ranges of at least
 * `grain` items each; returns when every range is done */
void qkv_parallel_for(int64_t n, int64_t grain, void (*fn)(void *arg, int64_t begin, int64_t end), void *arg);

#endif
