/* The tests' heap-allocation counter: a shared object that the tests (and make bench) preload
 * into the qkv command with LD_PRELOAD; the command itself never counts. Its malloc family
 * counts each call and hands it to glibc's own. With QKV_ALLOC_COUNT_OUT=FILE, the process's
 * count is written to FILE when it exits (tests/testutil.c, qkv_test_allocs: two runs that
 * differ only in their number of steps allocate equally exactly when a step allocates
 * nothing); qkv_alloc_count() is the count so far, which `qkv bench` finds when this object is
 * loaded (its allocs_per_step). Built only without a sanitizer, which has its own malloc. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static _Atomic uint64_t count;

EXPORT uint64_t qkv_alloc_count(void) { return count; }

/* glibc's own entry points */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);
extern void __libc_free(void *);

EXPORT void *malloc(size_t n) { count++; return __libc_malloc(n); }
EXPORT void *calloc(size_t m, size_t n) { count++; return __libc_calloc(m, n); }
EXPORT void *realloc(void *p, size_t n) { count++; return __libc_realloc(p, n); }
EXPORT void free(void *p) { __libc_free(p); }
EXPORT void *aligned_alloc(size_t a, size_t n) { count++; return __libc_memalign(a, n); }
EXPORT void *memalign(size_t a, size_t n) { count++; return __libc_memalign(a, n); }
EXPORT void *valloc(size_t n) { count++; return __libc_valloc(n); }
EXPORT void *pvalloc(size_t n) { count++; return __libc_pvalloc(n); }
EXPORT int posix_memalign(void **out, size_t a, size_t n) {
    count++;
    if (a < sizeof(void *) || (a & (a - 1))) return EINVAL;
    void *p = __libc_memalign(a, n);
    if (!p && n) return ENOMEM;
    *out = p;
    return 0;
}

/* at exit: the count into $QKV_ALLOC_COUNT_OUT, when set */
__attribute__((destructor)) static void write_count(void) {
    const char *path = getenv("QKV_ALLOC_COUNT_OUT");
    if (!path || !*path) return;
    char text[32];
    int n = snprintf(text, sizeof text, "%llu\n", (unsigned long long)count);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return;
    if (write(fd, text, (size_t)n) != n) { /* the test reads a short file as a failure */ }
    close(fd);
}
