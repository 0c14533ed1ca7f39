#include "autograd/arena.h"

#include <stdlib.h>
#include <string.h>

#define ALIGN 64
#define FIRST_CHUNK (1u << 20)

struct qkv_arena_chunk {
    qkv_arena_chunk *next;
    size_t size, used;
    unsigned char *base; /* ALIGN-aligned */
};

void qkv__arena_init(qkv_arena *a) {
    memset(a, 0, sizeof *a);
    a->poison = getenv("QKV_ARENA_POISON") != NULL;
}

static qkv_arena_chunk *new_chunk(qkv_arena *a, size_t min_size) {
    size_t size = a->capacity ? a->capacity : FIRST_CHUNK; /* geometric growth */
    if (size < min_size) size = min_size;
    size = (size + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    qkv_arena_chunk *c = malloc(sizeof *c);
    void *base = aligned_alloc(ALIGN, size);
    if (!c || !base) { free(c); free(base); return NULL; }
    c->next = NULL;
    c->size = size;
    c->used = 0;
    c->base = base;
    a->capacity += size;
    a->mallocs++;
    return c;
}

void *qkv__arena_alloc(qkv_arena *a, size_t bytes) {
    if (bytes > SIZE_MAX / 2) return NULL;
    size_t need = (bytes + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    if (need == 0) need = ALIGN;
    qkv_arena_chunk *c = a->cur;
    /* walk forward through kept chunks before asking malloc for a new one */
    while (c && c->size - c->used < need) {
        if (!c->next) break;
        c = c->next;
        c->used = 0;
    }
    if (!c || c->size - c->used < need) {
        qkv_arena_chunk *n = new_chunk(a, need);
        if (!n) return NULL;
        if (c) c->next = n; else a->first = n;
        c = n;
    }
    a->cur = c;
    void *p = c->base + c->used;
    c->used += need;
    a->used += need;
    if (a->used > a->peak) a->peak = a->used;
    if (a->poison) memset(p, 0xFF, need);
    return p;
}

/* what a counted block points to: read-only, so a value written to one by mistake faults */
static _Alignas(ALIGN) const unsigned char UNBACKED[ALIGN] = {1};

void *qkv__arena_count(qkv_arena *a, size_t bytes) {
    size_t need = bytes > SIZE_MAX - ALIGN ? SIZE_MAX : (bytes + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    if (need == 0) need = ALIGN;
    a->used = a->used > SIZE_MAX - need ? SIZE_MAX : a->used + need;
    if (a->used > a->peak) a->peak = a->used;
    return (void *)UNBACKED;
}

void *qkv__arena_calloc(qkv_arena *a, size_t bytes) {
    void *p = qkv__arena_alloc(a, bytes);
    if (p) memset(p, 0, bytes);
    return p;
}

void qkv__arena_reset(qkv_arena *a) {
    for (qkv_arena_chunk *c = a->first; c; c = c->next) c->used = 0; /* a handful of chunks */
    a->cur = a->first;
    a->used = 0;
}

qkv_arena_mark qkv__arena_mark(const qkv_arena *a) {
    return (qkv_arena_mark){a->cur, a->cur ? a->cur->used : 0, a->used};
}

void qkv__arena_release(qkv_arena *a, qkv_arena_mark m) {
    if (!m.cur) { /* marked empty: the chunks allocated since stay, rewound (only counted blocks before it) */
        qkv__arena_reset(a);
        a->used = m.used;
        return;
    }
    /* chunks after m.cur are rewound when an allocation walks into them */
    a->cur = m.cur;
    m.cur->used = m.chunk_used;
    a->used = m.used;
}

static bool in_range(const void *p, const unsigned char *base, size_t n) {
    uintptr_t x = (uintptr_t)p, b = (uintptr_t)base;
    return x >= b && x < b + n;
}

bool qkv__arena_owns_live(const qkv_arena *a, const void *p) {
    for (qkv_arena_chunk *c = a->first; c; c = c->next) {
        if (in_range(p, c->base, c->used)) return true;
        if (c == a->cur) break; /* later chunks hold nothing live */
    }
    return false;
}

bool qkv__arena_owns(const qkv_arena *a, const void *p) {
    for (qkv_arena_chunk *c = a->first; c; c = c->next)
        if (in_range(p, c->base, c->size)) return true;
    return false;
}

void qkv__arena_free(qkv_arena *a) {
    qkv_arena_chunk *c = a->first;
    while (c) {
        qkv_arena_chunk *n = c->next;
        free(c->base);
        free(c);
        c = n;
    }
    qkv__arena_init(a);
}
