/* sdp_attention: scaled dot-product attention over heads, one op (kernels: k_attention.c). */
#include "autograd/ops.h"
#include "autograd/tape.h"
#include "tensor/parallel.h"

#include <string.h>

/* the kernels' view of a recorded sdp_attention (points into the record) */
static qkv_sdpa_shape shape_of(const qkv_record *r) {
    const qkv_tensor *m = r->p.sdpa.mask;
    return (qkv_sdpa_shape){r->p.sdpa.B, r->p.sdpa.T, r->p.sdpa.H, r->p.sdpa.hd, r->p.sdpa.causal,
                            m ? m->data : NULL, &r->p.sdpa.bc, r->p.sdpa.scale, r->p.sdpa.kvH, r->p.sdpa.slopes,
                            r->p.sdpa.vH, r->p.sdpa.vd, NULL, 0};
}

/* s's bf16 scratch for `parts` parts, from the arena; NULL when out of memory */
static void *bf16_scratch(qkv_ctx *ctx, qkv_sdpa_shape *s, int64_t parts) {
    s->bf16_part = qkv__sdpa_bf16_part(s);
    return s->bf16 = qkv_ctx_alloc(ctx, (size_t)parts * s->bf16_part);
}

qkv_tensor *qkv_sdp_attention(qkv_ctx *ctx, qkv_tensor *q, qkv_tensor *k, qkv_tensor *v, int heads,
                              const qkv_tensor *mask, bool causal, double scale, qkv_tensor **probs) {
    return qkv_sdp_attention_ex(ctx, q, k, v, heads, heads, mask, causal, scale, NULL, probs);
}

qkv_tensor *qkv_sdp_attention_ex(qkv_ctx *ctx, qkv_tensor *q, qkv_tensor *k, qkv_tensor *v, int heads, int kv_heads,
                                 const qkv_tensor *mask, bool causal, double scale, const double *slopes,
                                 qkv_tensor **probs) {
    return qkv__sdp_attention_v(ctx, q, k, v, heads, kv_heads, kv_heads, mask, causal, scale, slopes, probs);
}

qkv_tensor *qkv__sdp_attention_v(qkv_ctx *ctx, qkv_tensor *q, qkv_tensor *k, qkv_tensor *v, int heads, int kv_heads,
                                 int v_heads, const qkv_tensor *mask, bool causal, double scale, const double *slopes,
                                 qkv_tensor **probs) {
    if (probs) *probs = NULL;
    if (!q || !k || !v || !qkv__check_float(ctx, "sdp_attention", q)) return NULL;
    if (!qkv__check_pair(ctx, "sdp_attention", q, k) || !qkv__check_pair(ctx, "sdp_attention", q, v))
        return NULL;
    if (q->ndim != 3 || k->ndim != 3 || v->ndim != 3)
        return qkv_ctx_fail(ctx, "sdp_attention: q, k, v must be (B,T,d), got %s", qkv__shp(q));
    int64_t B = q->shape[0], T = q->shape[1], d = q->shape[2];
    if (heads < 1 || d % heads)
        return qkv_ctx_fail(ctx, "sdp_attention: %d heads do not divide d = %lld", heads, (long long)d);
    if (kv_heads < 1 || heads % kv_heads)
        return qkv_ctx_fail(ctx, "sdp_attention: %d key/value heads do not divide %d heads", kv_heads, heads);
    int64_t dkv = d / heads * kv_heads;
    if (v_heads == kv_heads) {
        for (int i = 0; i < 3; i++)
            if (k->shape[i] != (i < 2 ? q->shape[i] : dkv) || v->shape[i] != k->shape[i])
                return qkv_ctx_fail(ctx, "sdp_attention: q %s with %d of %d heads for keys and values needs k and v "
                                    "(%lld,%lld,%lld), got %s and %s", qkv__shp(q), kv_heads, heads, (long long)B,
                                    (long long)T, (long long)dkv, qkv__shp(k), qkv__shp(v));
    } else { /* values of their own head count and width (differential attention's pairs of half-heads) */
        int64_t g = heads / kv_heads, vg = v_heads > 0 && heads % v_heads == 0 ? heads / v_heads : 0;
        if (!vg || (g > vg ? g % vg : vg % g) || k->shape[0] != B || k->shape[1] != T || k->shape[2] != dkv ||
            v->shape[0] != B || v->shape[1] != T || v->shape[2] % v_heads)
            return qkv_ctx_fail(ctx, "sdp_attention: q %s, k %s, v %s with %d heads, %d key heads, %d value heads: "
                                "expected k (%lld,%lld,%lld), v (%lld,%lld,a multiple of %d) and nested groups",
                                qkv__shp(q), qkv__shp(k), qkv__shp(v), heads, kv_heads, v_heads, (long long)B,
                                (long long)T, (long long)dkv, (long long)B, (long long)T, v_heads);
    }
    int64_t vd = v->shape[2] / v_heads, ys[3] = {B, T, heads * vd};
    int64_t ps[4] = {B, heads, T, T};
    qkv_bcast bc = {0};
    if (mask && !qkv__mask_plan(ctx, "sdp_attention", mask, 4, ps, &bc)) return NULL; /* over (B,H,T,T) */
    qkv_tensor *p = qkv__out(ctx, q->dtype, 4, ps);
    qkv_tensor *y = p ? qkv__out(ctx, q->dtype, 3, ys) : NULL;
    if (!y) return NULL;
    double *sl = NULL; /* the slopes stay readable for the backward: an arena copy */
    if (slopes) {
        if (!(sl = qkv_ctx_alloc(ctx, (size_t)heads * sizeof *sl))) return NULL;
        for (int h = 0; h < heads && !ctx->counting; h++) sl[h] = slopes[h];
    }
    qkv_sdpa_shape s = {B, T, heads, d / heads, causal, mask ? mask->data : NULL, &bc, scale, kv_heads, sl, v_heads, vd,
                        NULL, 0};
    qkv_arena_mark m = qkv__arena_mark(&ctx->arena); /* the bf16 scratch is the kernel's alone */
    if (ctx->bf16 && q->dtype == QKV_F32 && !bf16_scratch(ctx, &s, qkv__sdpa_parts(&s))) return NULL;
    QKV_KCALL(ctx, q->dtype, sdpa, &s, q->data, k->data, v->data, p->data, y->data);
    if (s.bf16) qkv__arena_release(&ctx->arena, m);
    qkv_tensor *in[3] = {q, k, v};
    qkv_record *r = qkv__record(ctx, QKV_OP_SDP_ATTENTION, y, 3, in);
    if (r) {
        r->p.sdpa.mask = mask;
        r->p.sdpa.bc = bc;
        r->p.sdpa.probs = p->data;
        r->p.sdpa.B = B; r->p.sdpa.T = T; r->p.sdpa.H = heads; r->p.sdpa.hd = d / heads;
        r->p.sdpa.kvH = kv_heads;
        r->p.sdpa.vH = v_heads;
        r->p.sdpa.vd = vd;
        r->p.sdpa.slopes = sl;
        r->p.sdpa.causal = causal;
        r->p.sdpa.scale = scale;
    }
    if (probs) *probs = p;
    return y;
}

int qkv__sdp_attention_backward(qkv_ctx *ctx, const qkv_record *r) {
    qkv_tensor *q = r->in[0], *k = r->in[1], *v = r->in[2];
    bool fq, fk, fv; /* new gradients are zeroed by the kernel, a head at a time */
    void *dq = qkv__grad_fresh(ctx, q, &fq), *dk = qkv__grad_fresh(ctx, k, &fk), *dv = qkv__grad_fresh(ctx, v, &fv);
    if (!qkv_ctx_ok(ctx)) return -1;
    if (!dq && !dk && !dv) return 0;
    qkv_sdpa_shape s = shape_of(r);
    /* a tied value of its own head layout: its heads overlap the query (key) heads the kernel
     * zeroes one at a time */
    if (s.vH != s.kvH && (q == v || k == v) && !ctx->counting) {
        size_t bytes = (size_t)v->numel * qkv_dtype_size(v->dtype);
        if (fq && q == v) memset(dq, 0, bytes), fq = false;
        if (fk && k == v) memset(dk, 0, bytes), fk = false;
        if (fv) memset(dv, 0, bytes), fv = false;
    }
    int64_t groups = s.B * s.H / qkv_sdpa_group_size(&s), parts = qkv_get_threads() < groups ? qkv_get_threads() : groups;
    void *scratch = qkv_ctx_alloc(ctx, (size_t)(parts * s.T * s.T) * qkv_dtype_size(q->dtype));
    qkv_arena_mark m = qkv__arena_mark(&ctx->arena); /* the bf16 scratch is the kernel's alone */
    if (!scratch || (ctx->bf16 && q->dtype == QKV_F32 && !bf16_scratch(ctx, &s, parts))) return -1;
    QKV_KCALL(ctx, q->dtype, sdpa_backward, &s, q->data, k->data, v->data, r->p.sdpa.probs, r->out->grad, dq, dk, dv,
              scratch, parts, (fq ? 1 : 0) | (fk ? 2 : 0) | (fv ? 4 : 0));
    if (s.bf16) qkv__arena_release(&ctx->arena, m);
    return 0;
}
