/* What a result was computed with: the CPU, this build's matrix-product libraries and the
 * vector code the kernels run, so results can say where they come from (a run's summary.json
 * has them as "machine", `qkv --version` prints them). Products differ in their last bits
 * between GEMM builds, and between CPUs (OpenBLAS and libxsmm pick their kernels by CPU). */
#ifndef QKV_BUILDINFO_H
#define QKV_BUILDINFO_H

#include "qkv_api.h"

#include <stddef.h>
#include "tensor/error.h"

typedef struct qkv_buildinfo {
    const char *cpu;       /* /proc/cpuinfo's "model name", or "unknown" */
    const char *gemm;      /* the products: "libxsmm+openblas" (small float ones through libxsmm) or "openblas" */
    const char *isa;       /* the vector kernels' clone on this CPU: "x86-64-v4", "x86-64-v3" or "default" */
    const char *blas_core; /* OpenBLAS's kernels (openblas_get_corename), or "unknown" */
    const char *xsmm_arch; /* libxsmm's code target (libxsmm_get_target_arch); "none" in an OpenBLAS-only build */
} qkv_buildinfo;

/* this process's machine and build, found on the first call (thread-safe); never NULL, every
 * string non-empty and alive as long as the process */
QKV_API const qkv_buildinfo *qkv_buildinfo_get(void);
/* the same as one JSON object, {"cpu":...,"gemm":...,"isa":...,"blas_core":...,"xsmm_arch":...},
 * NUL-terminated in buf (n bytes): its length, or -1 when it does not fit */
QKV_API int qkv_buildinfo_json(char *buf, size_t n);
/* whether this build and CPU run bf16 matrix products (qkv_ctx_set_bf16): 1, or 0 with the
 * reason in why (NULL: not asked), a phrase such as "this CPU has no avx512_bf16 (...)" for a
 * caller's message, QKV_ERR_USAGE (bf16 products are asked for by the user's config) */
QKV_API int qkv_bf16_available(qkv_err *why);
/* the kernel that runs bf16 products here: "amx" (qkv's kernel on the CPU's AMX tiles,
 * tensor/bf16_amx.h), "libxsmm TARGET" (libxsmm's bf16 kernels for its code target), or "none"
 * where qkv_bf16_available says 0; their products differ in the last bits */
QKV_API const char *qkv_bf16_kernel(void);

#endif
