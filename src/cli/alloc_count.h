/* Heap allocation counting (see alloc_count.c). */
#ifndef QKV_ALLOC_COUNT_H
#define QKV_ALLOC_COUNT_H

#include "qkv_api.h"

#include <stdint.h>

/* allocations counted so far */
QKV_INTERNAL uint64_t qkv__alloc_count(void);
/* start (1) or end (0) counting; nested: counting goes on while any start is not yet ended */
QKV_INTERNAL void qkv__alloc_count_enable(int enable);
/* 0 when this build cannot count (sanitizers) */
QKV_INTERNAL int qkv__alloc_count_available(void);

#endif
