/* Recording and the backward walk. */
#include "autograd/tape.h"
#include "tensor/parallel.h"

#include <string.h>

bool qkv__will_record(const qkv_ctx *ctx, int n_in, qkv_tensor *const *in) {
    if (!ctx->grad_enabled) return false;
    for (int i = 0; i < n_in; i++)
        if (in[i]->requires_grad) return true;
    return false;
}

/* A record is 192 bytes, but takes the 256 bytes of arena it took before its per-op fields
 * became a union: qkv_ctx_arena_peak, the memory estimate (which counts the same arena) and the
 * bench's activation figure stay as they were. */
#define RECORD_ARENA_BYTES 256
_Static_assert(sizeof(qkv_record) <= RECORD_ARENA_BYTES, "qkv_record outgrew its arena footprint");

qkv_record *qkv__record(qkv_ctx *ctx, qkv_op op, qkv_tensor *out, int n_in, qkv_tensor *const *in) {
    QKV_ASSERT((unsigned)op < QKV_OP_COUNT && out && n_in >= 0 && (n_in == 0 || in), "record: an op, its output, its inputs");
    QKV_ASSERT(qkv_dtype_is_float(out->dtype), "record: a differentiable op's output is a float tensor");
    if (!ctx->grad_enabled) return NULL;
    bool any = false;
    for (int i = 0; i < n_in; i++) any |= in[i]->requires_grad;
    if (!any) return NULL;
    qkv_record *r = qkv__ctx_alloc_host(ctx, RECORD_ARENA_BYTES);
    qkv_tensor **ins = r ? qkv__ctx_alloc_host(ctx, (size_t)n_in * sizeof *ins) : NULL;
    if (!ins) return NULL;
    memset(r, 0, sizeof *r);
    memcpy(ins, in, (size_t)n_in * sizeof *ins);
    r->op = op;
    r->n_in = n_in;
    r->in = ins;
    r->out = out;
    r->prev = ctx->tape;
    ctx->tape = r;
    ctx->tape_len++;
    out->requires_grad = true;
    return r;
}

void *qkv__grad_fresh(qkv_ctx *ctx, qkv_tensor *t, bool *fresh) {
    *fresh = false;
    if (!t->requires_grad) return NULL;
    if (!t->grad) {
        t->grad = qkv_ctx_alloc(ctx, (size_t)t->numel * qkv_dtype_size(t->dtype));
        *fresh = t->grad != NULL;
    }
    return t->grad;
}

void *qkv__grad(qkv_ctx *ctx, qkv_tensor *t) {
    bool fresh;
    void *g = qkv__grad_fresh(ctx, t, &fresh);
    if (fresh && !ctx->counting) qkv__zero(g, (size_t)t->numel * qkv_dtype_size(t->dtype));
    return g;
}

/* Is `t` a tensor made in this step? Only pointers into the arena are dereferenced
 * before the check, so a tensor from a released step is reported, not read blindly. */
static bool from_this_step(const qkv_ctx *ctx, const qkv_tensor *t) {
    return qkv__arena_owns_live(&ctx->arena, t) && t->gen == ctx->gen;
}

int qkv_backward(qkv_ctx *ctx, qkv_tensor *loss) {
    if (!loss) {
        qkv_ctx_fail(ctx, "backward: no loss tensor (an earlier op failed)");
        return -1;
    }
    if (qkv__arena_owns(&ctx->arena, loss) && !from_this_step(ctx, loss)) {
        qkv_ctx_fail(ctx, "backward: the tape holding this tensor was released by qkv_ctx_reset");
        return -1;
    }
    if (!qkv_ctx_ok(ctx)) return -1;
    if (loss->numel != 1) {
        qkv_ctx_fail(ctx, "backward: the loss must be a scalar, got shape %s", qkv__shp(loss));
        return -1;
    }
    if (!loss->requires_grad || loss->gen == 0) {
        qkv_ctx_fail(ctx, "backward: the loss %s was not computed from any tensor that requires grad",
                     qkv__shp(loss));
        return -1;
    }
    if (!qkv_dtype_is_float(loss->dtype)) {
        qkv_ctx_fail(ctx, "backward: the loss must be a float tensor");
        return -1;
    }
    if (ctx->backward_done) {
        qkv_ctx_fail(ctx, "backward: already ran on this tape; call qkv_ctx_reset before the next step");
        return -1;
    }
    ctx->backward_done = true;
    void *g = qkv__grad(ctx, loss);
    if (!g) return -1;
    if (ctx->counting) { /* no values to seed */
    } else if (loss->dtype == QKV_F64) *(double *)g += 1.0;
    else *(float *)g += 1.0f;

    for (qkv_record *r = ctx->tape; r; r = r->prev) {
        if (!r->out->grad && !(r->out2 && r->out2->grad)) continue; /* nothing flowed into this op */
        qkv_backward_fn fn = ctx->override[r->op] ? ctx->override[r->op] : qkv__op_backward(r->op);
        QKV_ASSERT(fn, "backward: every op of the list has its rule");
        if (fn(ctx, r) || !qkv_ctx_ok(ctx)) return -1;
    }
    return 0;
}
