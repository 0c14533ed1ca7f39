/* Per-step bump allocator for activations, their gradients and tape records.
 *
 * Memory comes in chunks that are kept for the arena's life: a reset only rewinds
 * (O(1) per chunk), so after the first step a training loop allocates nothing, and a
 * pointer into a released step stays readable: backward reports such a tensor as released
 * as long as the next step has not reused its memory (once it has, the pointer names a new
 * tensor and cannot be told apart; tensors must not outlive their step). */
#ifndef QKV_ARENA_H
#define QKV_ARENA_H

#include "qkv_api.h"

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct qkv_arena_chunk qkv_arena_chunk;

typedef struct qkv_arena {
    qkv_arena_chunk *first, *cur;
    size_t used;       /* bytes handed out since the last reset */
    size_t peak;       /* largest `used` seen */
    size_t capacity;   /* bytes held in all chunks */
    uint64_t mallocs;  /* chunks ever allocated (stays flat in a steady state) */
    bool poison;       /* QKV_ARENA_POISON set: fill every block with NaN bytes (tests: an op
                        * that leaves part of its output or a new gradient unwritten shows) */
} qkv_arena;

/* an empty arena (no memory until the first allocation) */
QKV_INTERNAL void qkv__arena_init(qkv_arena *a);
/* 64-byte aligned block of `bytes`, or NULL when out of memory */
QKV_INTERNAL void *qkv__arena_alloc(qkv_arena *a, size_t bytes);
/* the same, zero-filled */
QKV_INTERNAL void *qkv__arena_calloc(qkv_arena *a, size_t bytes);
/* a block of `bytes` counted as qkv__arena_alloc counts it (used, peak; sizes saturate instead of
 * failing) but not backed by memory: for a counting context, which computes no values. Returns
 * the same non-NULL address every time, read-only: it must not be read or written */
QKV_INTERNAL void *qkv__arena_count(qkv_arena *a, size_t bytes);
/* forget every allocation; memory is kept for reuse */
QKV_INTERNAL void qkv__arena_reset(qkv_arena *a);
/* a point to come back to: what is allocated after it is scratch, given back by release */
typedef struct { qkv_arena_chunk *cur; size_t chunk_used, used; } qkv_arena_mark;
QKV_INTERNAL qkv_arena_mark qkv__arena_mark(const qkv_arena *a);
/* forget the allocations made since m (the memory is kept for reuse) */
QKV_INTERNAL void qkv__arena_release(qkv_arena *a, qkv_arena_mark m);
/* true when p points into memory the arena handed out since the last reset */
QKV_INTERNAL bool qkv__arena_owns_live(const qkv_arena *a, const void *p);
/* true when p points anywhere inside the arena's chunks */
QKV_INTERNAL bool qkv__arena_owns(const qkv_arena *a, const void *p);
/* give all memory back */
QKV_INTERNAL void qkv__arena_free(qkv_arena *a);

#endif
