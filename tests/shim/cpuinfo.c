/* Another CPU's /proc/cpuinfo: a shared object the tests preload into the qkv command
 * (LD_PRELOAD) so that opening /proc/cpuinfo opens $QKV_CPUINFO instead. qkv reads the CPU's
 * flags there (tensor/bf16.c: avx512_bf16), so a row can run `train.precision: bf16` as on a CPU
 * without AVX512_BF16 on any machine, this one included. fopen and fopen64 are covered (what
 * qkv reads cpuinfo with). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

static const char *redirect(const char *path) {
    const char *fake = getenv("QKV_CPUINFO");
    return fake && path && !strcmp(path, "/proc/cpuinfo") ? fake : path;
}

EXPORT FILE *fopen(const char *path, const char *mode) {
    static FILE *(*real)(const char *, const char *);
    if (!real) real = (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, "fopen");
    return real(redirect(path), mode);
}

EXPORT FILE *fopen64(const char *path, const char *mode) {
    static FILE *(*real)(const char *, const char *);
    if (!real) real = (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, "fopen64");
    return real(redirect(path), mode);
}
