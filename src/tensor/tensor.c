/* Tensor headers, creation and shape helpers. */
#include "tensor/tensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OWN_HEADER = 1, OWN_DATA = 2, OWN_GRAD = 4 };

static const char *const DTYPE_NAMES[] = {"F32", "F64", "I32"};
_Static_assert(sizeof DTYPE_NAMES / sizeof DTYPE_NAMES[0] == QKV_DTYPE_COUNT,
               "dtype name table out of step with qkv_dtype");

size_t qkv_dtype_size(qkv_dtype dt) { return dt == QKV_F64 ? 8 : 4; }

const char *qkv_dtype_name(qkv_dtype dt) {
    return (unsigned)dt < QKV_DTYPE_COUNT ? DTYPE_NAMES[dt] : "?";
}

int64_t qkv_shape_numel(int ndim, const int64_t *shape) {
    if (ndim < 0 || ndim > QKV_MAX_DIMS) return -1;
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 1) return -1;
        if (n > INT64_MAX / 8 / shape[i]) return -1; /* keep bytes representable */
        n *= shape[i];
    }
    return n;
}

int qkv_shape_init(qkv_tensor *t, qkv_dtype dt, int ndim, const int64_t *shape) {
    int64_t n = qkv_shape_numel(ndim, shape);
    if (n < 0 || (unsigned)dt >= QKV_DTYPE_COUNT) return -1;
    memset(t, 0, sizeof *t);
    t->dtype = dt;
    t->ndim = ndim;
    for (int i = 0; i < QKV_MAX_DIMS; i++) t->shape[i] = i < ndim ? shape[i] : 1;
    t->numel = n;
    return 0;
}

char *qkv_shape_str(int ndim, const int64_t *shape, char *buf, size_t len) {
    size_t at = 0;
    at += (size_t)snprintf(buf, len, "(");
    for (int i = 0; i < ndim && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, i ? ",%lld" : "%lld", (long long)shape[i]);
    if (at < len) snprintf(buf + at, len - at, ")");
    return buf;
}

bool qkv_same_shape(const qkv_tensor *a, const qkv_tensor *b) {
    if (a->ndim != b->ndim) return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i]) return false;
    return true;
}

int64_t qkv_tensor_dim(const qkv_tensor *t, int d) {
    if (d < 0) d += t->ndim;
    return (d >= 0 && d < t->ndim) ? t->shape[d] : 1;
}

static qkv_tensor *alloc_tensor(qkv_dtype dt, int ndim, const int64_t *shape, bool zero) {
    qkv_tensor h;
    if (qkv_shape_init(&h, dt, ndim, shape)) return NULL;
    size_t bytes = (size_t)h.numel * qkv_dtype_size(dt);
    qkv_tensor *t = malloc(sizeof *t);
    void *data = zero ? calloc(1, bytes) : malloc(bytes);
    if (!t || !data) { free(t); free(data); return NULL; }
    *t = h;
    t->data = data;
    t->owns = OWN_HEADER | OWN_DATA;
    return t;
}

qkv_tensor *qkv_tensor_zeros(qkv_dtype dt, int ndim, const int64_t *shape) {
    return alloc_tensor(dt, ndim, shape, true);
}

qkv_tensor *qkv_tensor_full(qkv_dtype dt, int ndim, const int64_t *shape, double value) {
    qkv_tensor *t = alloc_tensor(dt, ndim, shape, false);
    if (t)
        for (int64_t i = 0; i < t->numel; i++) qkv_tensor_set(t, i, value);
    return t;
}

qkv_tensor *qkv_tensor_from_buffer(qkv_dtype dt, int ndim, const int64_t *shape, const void *buf) {
    qkv_tensor *t = alloc_tensor(dt, ndim, shape, false);
    if (t) memcpy(t->data, buf, (size_t)t->numel * qkv_dtype_size(dt));
    return t;
}

qkv_tensor *qkv_tensor_wrap(qkv_dtype dt, int ndim, const int64_t *shape, void *data) {
    qkv_tensor h;
    if (qkv_shape_init(&h, dt, ndim, shape)) return NULL;
    qkv_tensor *t = malloc(sizeof *t);
    if (!t) return NULL;
    *t = h;
    t->data = data;
    t->owns = OWN_HEADER;
    return t;
}

qkv_tensor *qkv_tensor_convert(const qkv_tensor *src, qkv_dtype dt) {
    qkv_tensor *t = alloc_tensor(dt, src->ndim, src->shape, false);
    if (!t) return NULL;
    t->name = src->name;
    for (int64_t i = 0; i < t->numel; i++) qkv_tensor_set(t, i, qkv_tensor_get(src, i));
    return t;
}

void qkv_tensor_free(qkv_tensor *t) {
    if (!t) return;
    if (t->owns & OWN_DATA) free(t->data);
    if (t->owns & OWN_GRAD) free(t->grad);
    if (t->owns & OWN_HEADER) free(t);
}

int qkv_tensor_require_grad(qkv_tensor *t) {
    if (!qkv_dtype_is_float(t->dtype)) return -1;
    if (!t->grad) {
        t->grad = calloc((size_t)t->numel, qkv_dtype_size(t->dtype));
        if (!t->grad) return -1;
        t->owns |= OWN_GRAD;
    }
    t->requires_grad = true;
    return 0;
}

void qkv_tensor_zero_grad(qkv_tensor *t) {
    if (t->grad) memset(t->grad, 0, (size_t)t->numel * qkv_dtype_size(t->dtype));
}

static double get_raw(const void *p, qkv_dtype dt, int64_t i) {
    switch (dt) {
    case QKV_F32: return ((const float *)p)[i];
    case QKV_F64: return ((const double *)p)[i];
    default: return ((const int32_t *)p)[i];
    }
}

double qkv_tensor_get(const qkv_tensor *t, int64_t i) { return get_raw(t->data, t->dtype, i); }

double qkv_tensor_grad_get(const qkv_tensor *t, int64_t i) {
    return t->grad ? get_raw(t->grad, t->dtype, i) : 0.0;
}

void qkv_tensor_set(qkv_tensor *t, int64_t i, double v) {
    switch (t->dtype) {
    case QKV_F32: ((float *)t->data)[i] = (float)v; break;
    case QKV_F64: ((double *)t->data)[i] = v; break;
    default: ((int32_t *)t->data)[i] = (int32_t)v; break;
    }
}
