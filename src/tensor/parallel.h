/* Internal: qkv's thread pool. Elementwise maps, softmax, layer norm, Adam, and matrix products split
 * by rows or batches into single-threaded BLAS calls (with more than one thread, OpenBLAS is
 * set to one thread of its own). Work is split into contiguous ranges; outside the matrix
 * products every output element (and every per-column sum) is computed by one thread in the
 * serial order, so those results are the same bits for any thread count. The pool is driven
 * from one thread at a time (the caller of the ops). */
#ifndef QKV_PARALLEL_H
#define QKV_PARALLEL_H

#include "qkv_api.h"

#include <stddef.h>
#include <stdint.h>
#include "tensor/threads.h" /* qkv_set_threads, qkv_get_threads (public) */

/* fn(arg, begin, end) over [0, n), in up to qkv_get_threads() contiguous ranges of at least
 * `grain` items each; returns when every range is done */
QKV_INTERNAL void qkv__parallel_for(int64_t n, int64_t grain, void (*fn)(void *arg, int64_t begin, int64_t end), void *arg);

/* on = 1: the calling thread computes alone from now on, as if qkv had one thread (its kernels
 * run inline, qkv_get_threads() says 1), so that several threads can each compute a whole
 * micro-batch at once, each with the bits of a one-thread run; on = 0 ends it. Returns the
 * previous setting. Must not be on for the thread that drives the pool. */
QKV_INTERNAL int qkv__serial(int on);

/* memset(p, 0, bytes) on qkv's threads */
QKV_INTERNAL void qkv__zero(void *p, size_t bytes);

#endif
