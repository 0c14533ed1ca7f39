/* Heap allocation counting for `qkv bench` and QKV_COUNT_ALLOCS=1 (main.c): the executable's malloc family wraps glibc's and
 * counts calls while counting is on. Defined in the executable, it also sees the calls of
 * shared libraries (OpenBLAS, libc). Off under AddressSanitizer, which has its own malloc. */
#include "cli/alloc_count.h"

#include <errno.h>
#include <stddef.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>

static _Atomic uint64_t count;
static _Atomic int on;

uint64_t qkv__alloc_count(void) { return count; }
void qkv__alloc_count_enable(int enable) { on += enable ? 1 : -1; } /* nested: counts while any caller counts */

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
int qkv__alloc_count_available(void) { return 0; }
#else
int qkv__alloc_count_available(void) { return 1; }

/* glibc's own entry points */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

#define COUNT() do { if (on) count++; } while (0)

void *malloc(size_t n) { COUNT(); return __libc_malloc(n); }
void *calloc(size_t m, size_t n) { COUNT(); return __libc_calloc(m, n); }
void *realloc(void *p, size_t n) { COUNT(); return __libc_realloc(p, n); }
void free(void *p) { __libc_free(p); }
void *aligned_alloc(size_t a, size_t n) { COUNT(); return __libc_memalign(a, n); }
void *memalign(size_t a, size_t n) { COUNT(); return __libc_memalign(a, n); }
int posix_memalign(void **out, size_t a, size_t n) {
    COUNT();
    if (a < sizeof(void *) || (a & (a - 1))) return EINVAL;
    void *p = __libc_memalign(a, n);
    if (!p && n) return ENOMEM;
    *out = p;
    return 0;
}
#endif
