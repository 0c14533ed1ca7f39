/* The autograd context: a tape, the per-step arena it lives in, grad mode, errors.
 *
 * Ops never abort: on bad input they return NULL and leave one error in the context (a
 * qkv_err, tensor/error.h: QKV_ERR_FAIL and a message naming the op and the shapes). An op
 * given a NULL input returns NULL and keeps the first error, so a whole forward can be written
 * without checks and tested once at the end: the error is sticky and deferred where every
 * other function of qkv returns its qkv_err at once, because an op's caller is a formula. */
#ifndef QKV_CTX_H
#define QKV_CTX_H

#include "qkv_api.h"

#include <stdbool.h>
#include <stddef.h>
#include "tensor/error.h"
#include "tensor/tensor.h"
#include "autograd/op.h"

typedef struct qkv_ctx qkv_ctx;

/* a context with an empty tape; NULL when out of memory */
QKV_API qkv_ctx *qkv_ctx_new(void);
/* A counting context: its ops check shapes, record and allocate as in any context, but compute
 * no values, and the memory of their values (activations, gradients, scratch) is counted, not
 * allocated: qkv_ctx_arena_peak after a forward and backward is what the same step takes in an
 * ordinary context. Tensor headers and tape records are real. Its tensors' data and grad point
 * at one read-only block: never read or write them (custom ops' callbacks are not called).
 * Inputs may be headers over such a block too. NULL when out of memory */
QKV_API qkv_ctx *qkv_ctx_new_counting(void);
/* true for a context made by qkv_ctx_new_counting */
QKV_API bool qkv_ctx_counting(const qkv_ctx *ctx);
QKV_API void qkv_ctx_free(qkv_ctx *ctx);
/* release every activation, activation gradient and tape record at once (O(1));
 * clears the error. Tensors from before the reset must not be used again. */
QKV_API void qkv_ctx_reset(qkv_ctx *ctx);
/* record ops on the tape (true, the default) or not; returns the previous setting */
QKV_API bool qkv_ctx_set_grad_enabled(qkv_ctx *ctx, bool enabled);
QKV_API bool qkv_ctx_grad_enabled(const qkv_ctx *ctx);
/* float matrix products (forward and backward) in bf16 (on) or float32 (off, the default):
 * C = round_bf16(A) round_bf16(B), summed in float32 (docs/performance.md, "bf16 products");
 * everything else stays float32, double products stay double. -1 (error set, setting unchanged)
 * when this build or CPU has no bf16 products (qkv_bf16_available); a counting context counts
 * their conversion buffers on any CPU */
QKV_API int qkv_ctx_set_bf16(qkv_ctx *ctx, bool on);
QKV_API bool qkv_ctx_bf16(const qkv_ctx *ctx);

/* true when no error is pending */
QKV_API bool qkv_ctx_ok(const qkv_ctx *ctx);
/* the pending error message, "" when none */
QKV_API const char *qkv_ctx_error(const qkv_ctx *ctx);
QKV_API void qkv_ctx_clear_error(qkv_ctx *ctx);
/* set the error (QKV_ERR_FAIL, printf-style) unless one is pending; returns NULL for
 * `return qkv_ctx_fail(...)` */
QKV_API void *qkv_ctx_fail(qkv_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* a tensor in the arena, zero-filled (released by qkv_ctx_reset) */
QKV_API qkv_tensor *qkv_ctx_tensor(qkv_ctx *ctx, qkv_dtype dt, int ndim, const int64_t *shape);
/* an arena tensor holding a copy of buf */
QKV_API qkv_tensor *qkv_ctx_tensor_from(qkv_ctx *ctx, qkv_dtype dt, int ndim, const int64_t *shape,
                                const void *buf);
/* raw arena memory, 64-byte aligned (NULL + error when out of memory); in a counting context the
 * bytes are counted and the block returned must not be touched */
QKV_API void *qkv_ctx_alloc(qkv_ctx *ctx, size_t bytes);

/* d loss / d t for every tensor t on the tape that requires grad, ACCUMULATED (+=) into
 * t->grad. loss must be a scalar from this step's tape. 0, or -1 with the error set. */
QKV_API int qkv_backward(qkv_ctx *ctx, qkv_tensor *loss);

/* tape statistics */
QKV_API int qkv_ctx_tape_len(const qkv_ctx *ctx);
QKV_API size_t qkv_ctx_arena_used(const qkv_ctx *ctx);
QKV_API size_t qkv_ctx_arena_peak(const qkv_ctx *ctx);
/* arena chunks allocated so far; constant in a steady-state training loop */
QKV_API unsigned long long qkv_ctx_arena_mallocs(const qkv_ctx *ctx);

#endif
