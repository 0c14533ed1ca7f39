/* The machine and build a result was computed with (tensor/buildinfo.h). */
#include "tensor/buildinfo.h"

#include <cblas.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#if QKV_GEMM_LIBXSMM
#include <libxsmm.h>
#endif

/* The clone of the vector kernels this CPU runs. It must match QKV_VECTOR_CLONES in
 * src/tensor/vector_clones.h: the same condition, and its clones best first (GCC's resolver
 * runs the best one the CPU supports), each tested as that resolver does ("arch=x86-64-v4" is
 * __builtin_cpu_supports("x86-64-v4")); tests/test_buildinfo.c fails until the two agree. */
static const char *vector_isa(void) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("x86-64-v4")) return "x86-64-v4";
    if (__builtin_cpu_supports("x86-64-v3")) return "x86-64-v3";
#endif
    return "default";
}

static char cpu[128], blas_core[64], xsmm_arch[64];
static qkv_buildinfo info;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* src (NULL: none) into dst as printable ASCII (any other byte '?'), spaces at the ends dropped;
 * `none` when nothing is left */
static void copy_name(char *dst, size_t n, const char *src, const char *none) {
    size_t k = 0;
    while (src && (*src == ' ' || *src == '\t')) src++;
    for (; src && *src && *src != '\n' && k + 1 < n; src++)
        dst[k++] = (unsigned char)*src >= 0x20 && (unsigned char)*src < 0x7f ? *src : '?';
    while (k && dst[k - 1] == ' ') k--;
    dst[k] = 0;
    if (!k) snprintf(dst, n, "%s", none);
}

/* /proc/cpuinfo's first "model name" line (x86; other machines may have none) */
static void read_cpu(void) {
    char line[512];
    const char *name = NULL;
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && !name && fgets(line, sizeof line, f)) {
        const char *colon = strchr(line, ':');
        if (!strncmp(line, "model name", 10) && colon && strspn(line + 10, " \t") == (size_t)(colon - line - 10))
            name = colon + 1;
    }
    copy_name(cpu, sizeof cpu, name, "unknown");
    if (f) fclose(f);
}

static void find(void) {
    read_cpu();
    copy_name(blas_core, sizeof blas_core, openblas_get_corename(), "unknown");
#if QKV_GEMM_LIBXSMM
    copy_name(xsmm_arch, sizeof xsmm_arch, libxsmm_get_target_arch(), "unknown");
    info.gemm = "libxsmm+openblas";
#else
    copy_name(xsmm_arch, sizeof xsmm_arch, NULL, "none");
    info.gemm = "openblas";
#endif
    info.cpu = cpu;
    info.isa = vector_isa();
    info.blas_core = blas_core;
    info.xsmm_arch = xsmm_arch;
}

const qkv_buildinfo *qkv_buildinfo_get(void) {
    pthread_once(&once, find);
    return &info;
}

/* s as a JSON string: its characters are printable ASCII (copy_name), so only " and \ need escapes */
static size_t put_string(char *buf, size_t n, size_t at, const char *key, const char *s) {
    at += (size_t)snprintf(at < n ? buf + at : NULL, at < n ? n - at : 0, "%s\"%s\":\"", at > 1 ? "," : "", key);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') {
            if (at < n) buf[at] = '\\';
            at++;
        }
        if (at < n) buf[at] = *s;
        at++;
    }
    if (at < n) buf[at] = '"';
    return at + 1;
}

int qkv_buildinfo_json(char *buf, size_t n) {
    const qkv_buildinfo *b = qkv_buildinfo_get();
    size_t at = 1;
    if (n) buf[0] = '{';
    at = put_string(buf, n, at, "cpu", b->cpu);
    at = put_string(buf, n, at, "gemm", b->gemm);
    at = put_string(buf, n, at, "isa", b->isa);
    at = put_string(buf, n, at, "blas_core", b->blas_core);
    at = put_string(buf, n, at, "xsmm_arch", b->xsmm_arch);
    if (at + 1 >= n) { /* "}" and the NUL */
        if (n) buf[0] = 0;
        return -1;
    }
    buf[at] = '}';
    buf[at + 1] = 0;
    return (int)(at + 1);
}
