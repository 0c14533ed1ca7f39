/* Context lifecycle, errors and arena tensors. */
#include "autograd/tape.h"
#include "tensor/bf16.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

qkv_ctx *qkv_ctx_new(void) {
    qkv_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return NULL;
    qkv__arena_init(&ctx->arena);
    ctx->gen = 1; /* 0 marks tensors that do not live in an arena */
    ctx->grad_enabled = true;
    return ctx;
}

qkv_ctx *qkv_ctx_new_counting(void) {
    qkv_ctx *ctx = qkv_ctx_new();
    if (ctx) ctx->counting = true;
    return ctx;
}

bool qkv_ctx_counting(const qkv_ctx *ctx) { return ctx->counting; }

void qkv_ctx_free(qkv_ctx *ctx) {
    if (!ctx) return;
    qkv__arena_free(&ctx->arena);
    free(ctx);
}

void qkv_ctx_reset(qkv_ctx *ctx) {
    qkv__arena_reset(&ctx->arena);
    ctx->tape = NULL;
    ctx->tape_len = 0;
    ctx->backward_done = false;
    ctx->gen = ctx->gen == UINT32_MAX ? 1 : ctx->gen + 1;
    qkv_err_clear(&ctx->err);
}

bool qkv_ctx_set_grad_enabled(qkv_ctx *ctx, bool enabled) {
    bool old = ctx->grad_enabled;
    ctx->grad_enabled = enabled;
    return old;
}

bool qkv_ctx_grad_enabled(const qkv_ctx *ctx) { return ctx->grad_enabled; }

int qkv_ctx_set_bf16(qkv_ctx *ctx, bool on) {
    qkv_err why;
    if (on && !ctx->counting && !qkv_bf16_available(&why)) {
        qkv_ctx_fail(ctx, "bf16 products: %s", why.msg);
        return -1;
    }
    ctx->bf16 = on;
    return 0;
}

bool qkv_ctx_bf16(const qkv_ctx *ctx) { return ctx->bf16; }
bool qkv_ctx_ok(const qkv_ctx *ctx) { return ctx->err.code == QKV_ERR_OK; }
const char *qkv_ctx_error(const qkv_ctx *ctx) { return ctx->err.msg; }
void qkv_ctx_clear_error(qkv_ctx *ctx) { qkv_err_clear(&ctx->err); }

void *qkv_ctx_fail(qkv_ctx *ctx, const char *fmt, ...) {
    if (!qkv_ctx_ok(ctx)) return NULL; /* keep the first, root-cause message */
    va_list ap;
    va_start(ap, fmt);
    qkv_err_vset(&ctx->err, QKV_ERR_FAIL, fmt, ap);
    va_end(ap);
    return NULL;
}

void *qkv__ctx_alloc_host(qkv_ctx *ctx, size_t bytes) {
    void *p = qkv__arena_alloc(&ctx->arena, bytes);
    if (!p) qkv_ctx_fail(ctx, "out of memory: the step needs %zu more bytes of activations", bytes);
    return p;
}

void *qkv_ctx_alloc(qkv_ctx *ctx, size_t bytes) {
    return ctx->counting ? qkv__arena_count(&ctx->arena, bytes) : qkv__ctx_alloc_host(ctx, bytes);
}

qkv_tensor *qkv__out(qkv_ctx *ctx, qkv_dtype dt, int ndim, const int64_t *shape) {
    qkv_tensor h;
    if (qkv_shape_init(&h, dt, ndim, shape)) {
        char b[96];
        return qkv_ctx_fail(ctx, "invalid tensor shape %s", qkv_shape_str(ndim, shape, b, sizeof b));
    }
    qkv_tensor *t = qkv__ctx_alloc_host(ctx, sizeof *t);
    void *data = t ? qkv_ctx_alloc(ctx, (size_t)h.numel * qkv_dtype_size(dt)) : NULL;
    if (!data) return NULL; /* not zeroed: every op writes its whole output */
    *t = h;
    t->data = data;
    t->gen = ctx->gen;
    return t;
}

qkv_tensor *qkv_ctx_tensor(qkv_ctx *ctx, qkv_dtype dt, int ndim, const int64_t *shape) {
    qkv_tensor *t = qkv__out(ctx, dt, ndim, shape);
    if (t && !ctx->counting) memset(t->data, 0, (size_t)t->numel * qkv_dtype_size(dt));
    return t;
}

qkv_tensor *qkv_ctx_tensor_from(qkv_ctx *ctx, qkv_dtype dt, int ndim, const int64_t *shape,
                                const void *buf) {
    qkv_tensor *t = qkv__out(ctx, dt, ndim, shape);
    if (t && !ctx->counting) memcpy(t->data, buf, (size_t)t->numel * qkv_dtype_size(dt));
    return t;
}

int qkv_ctx_tape_len(const qkv_ctx *ctx) { return ctx->tape_len; }
size_t qkv_ctx_arena_used(const qkv_ctx *ctx) { return ctx->arena.used; }
size_t qkv_ctx_arena_peak(const qkv_ctx *ctx) { return ctx->arena.peak; }
unsigned long long qkv_ctx_arena_mallocs(const qkv_ctx *ctx) { return ctx->arena.mallocs; }

void qkv__ctx_override_backward(qkv_ctx *ctx, qkv_op op, qkv_backward_fn fn) {
    if ((unsigned)op < QKV_OP_COUNT) ctx->override[op] = fn;
}

bool qkv__check_float(qkv_ctx *ctx, const char *what, const qkv_tensor *t) {
    if (qkv_dtype_is_float(t->dtype)) return true;
    qkv_ctx_fail(ctx, "%s: expected a float tensor, got %s %s", what, qkv_dtype_name(t->dtype),
                 qkv__shp(t));
    return false;
}

bool qkv__mask_plan(qkv_ctx *ctx, const char *what, const qkv_tensor *mask, int ndim, const int64_t *shape,
                    qkv_bcast *bc) {
    if (mask->dtype != QKV_I32) {
        qkv_ctx_fail(ctx, "%s: the mask must be I32, got %s", what, qkv_dtype_name(mask->dtype));
        return false;
    }
    int nd;
    int64_t out[QKV_MAX_DIMS];
    if (qkv__bcast_init(bc, ndim, shape, mask->ndim, mask->shape, &nd, out) || nd != ndim ||
        qkv_shape_numel(nd, out) != qkv_shape_numel(ndim, shape)) {
        char s[96];
        qkv_ctx_fail(ctx, "%s: mask %s does not broadcast over %s", what, qkv__shp(mask),
                     qkv_shape_str(ndim, shape, s, sizeof s));
        return false;
    }
    return true;
}

bool qkv__check_pair(qkv_ctx *ctx, const char *what, const qkv_tensor *a, const qkv_tensor *b) {
    if (!qkv__check_float(ctx, what, a) || !qkv__check_float(ctx, what, b)) return false;
    if (a->dtype == b->dtype) return true;
    qkv_ctx_fail(ctx, "%s: dtypes differ: %s %s and %s %s", what, qkv_dtype_name(a->dtype),
                 qkv__shp(a), qkv_dtype_name(b->dtype), qkv__shp(b));
    return false;
}

const char *qkv__shp(const qkv_tensor *t) {
    static _Thread_local char bufs[4][96];
    static _Thread_local int slot;
    char *b = bufs[slot++ & 3];
    return qkv_shape_str(t->ndim, t->shape, b, 96);
}
