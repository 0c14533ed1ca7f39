/* How many threads qkv computes on. qkv runs its own pool (src/tensor/parallel.c): elementwise
 * maps, softmax, layer norm, attention and Adam split into contiguous ranges, matrix products
 * split by rows or batches into single-threaded BLAS calls. Same thread count, same bits;
 * outside the matrix products, the same bits for any count. */
#ifndef QKV_THREADS_H
#define QKV_THREADS_H

#include "qkv_api.h"

/* the most threads qkv_set_threads runs (more are capped to this) */
#define QKV_MAX_THREADS 64

/* threads for qkv's kernels (1: none; at most QKV_MAX_THREADS), and OpenBLAS at one thread of
 * its own; starts the pool on first use. Call from the main thread while no kernel runs. 0,
 * or -1 if not all could be started (then as many as did start, plus the caller). */
QKV_API int qkv_set_threads(int n);
/* the threads qkv computes on now (1 until qkv_set_threads) */
QKV_API int qkv_get_threads(void);

#endif
