/* qkv tensors: contiguous, row-major, up to 4 dimensions.
 *
 * A tensor is a header (dtype, shape) plus a data pointer it may or may not own.
 * Float tensors are F32 (training) or F64 (gradient checks); I32 tensors carry
 * token indices, targets and masks. Kernels in kernels.h compute on raw arrays;
 * differentiable ops that record on a tape live in ../autograd. */
#ifndef QKV_TENSOR_H
#define QKV_TENSOR_H

#include "qkv_api.h"

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

/* ln 2, the one spelling of it: nats / QKV_LN2 = bits (a byte-level loss over it is bits per byte) */
#define QKV_LN2 0.69314718055994530942

#define QKV_MAX_DIMS 4

typedef enum { QKV_F32 = 0, QKV_F64 = 1, QKV_I32 = 2, QKV_DTYPE_COUNT } qkv_dtype;

typedef struct qkv_tensor {
    qkv_dtype dtype;
    int ndim;                      /* 0 (scalar) .. QKV_MAX_DIMS */
    int64_t shape[QKV_MAX_DIMS];   /* unused trailing entries are 1 */
    int64_t numel;
    void *data;                    /* numel elements of dtype */
    void *grad;                    /* same dtype and shape, or NULL (no gradient yet) */
    bool requires_grad;            /* a leaf the user wants a gradient for, or an op output */
    uint8_t owns;                  /* internal: which of header/data/grad qkv_tensor_free frees */
    uint32_t gen;                  /* internal: arena generation that created it (0 = not arena) */
    const char *name;              /* optional, for messages (parameters carry their key) */
} qkv_tensor;

/* bytes per element of dtype */
QKV_API size_t qkv_dtype_size(qkv_dtype dt);
/* "F32", "F64", "I32" */
QKV_API const char *qkv_dtype_name(qkv_dtype dt);
static inline bool qkv_dtype_is_float(qkv_dtype dt) { return dt == QKV_F32 || dt == QKV_F64; }

/* Standalone tensors (heap): the caller frees them with qkv_tensor_free. NULL on bad shape or no memory. */
QKV_API qkv_tensor *qkv_tensor_zeros(qkv_dtype dt, int ndim, const int64_t *shape);
/* every element = value */
QKV_API qkv_tensor *qkv_tensor_full(qkv_dtype dt, int ndim, const int64_t *shape, double value);
/* copy numel elements of dtype dt from buf */
QKV_API qkv_tensor *qkv_tensor_from_buffer(qkv_dtype dt, int ndim, const int64_t *shape, const void *buf);
/* a header over caller-owned memory (not freed by qkv_tensor_free) */
QKV_API qkv_tensor *qkv_tensor_wrap(qkv_dtype dt, int ndim, const int64_t *shape, void *data);
/* deep copy converted to dtype dt (float <-> float, data only; no grad) */
QKV_API qkv_tensor *qkv_tensor_convert(const qkv_tensor *t, qkv_dtype dt);
QKV_API void qkv_tensor_free(qkv_tensor *t);

/* Allocate (zeroed) and attach a gradient buffer; marks the tensor as requiring grad. 0 or -1 (no memory). */
QKV_API int qkv_tensor_require_grad(qkv_tensor *t);
/* grad = 0 (no-op when there is no grad buffer) */
QKV_API void qkv_tensor_zero_grad(qkv_tensor *t);

/* Fill header fields: validates 0 <= ndim <= 4 and every dim >= 1, and that numel fits. 0 or -1. */
QKV_API int qkv_shape_init(qkv_tensor *t, qkv_dtype dt, int ndim, const int64_t *shape);
/* numel of a shape, or -1 if invalid / overflowing */
QKV_API int64_t qkv_shape_numel(int ndim, const int64_t *shape);
/* writes "(2,3,4)" into buf; returns buf */
QKV_API char *qkv_shape_str(int ndim, const int64_t *shape, char *buf, size_t len);
/* true when a and b have the same ndim and dims */
QKV_API bool qkv_same_shape(const qkv_tensor *a, const qkv_tensor *b);
/* size of dimension d, negative d counts from the end; 1 when out of range */
QKV_API int64_t qkv_tensor_dim(const qkv_tensor *t, int d);

/* element access as double (any dtype), for tests and small tools */
QKV_API double qkv_tensor_get(const qkv_tensor *t, int64_t i);
QKV_API void qkv_tensor_set(qkv_tensor *t, int64_t i, double v);
QKV_API double qkv_tensor_grad_get(const qkv_tensor *t, int64_t i);

#endif
