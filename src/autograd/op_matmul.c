/* matmul: batched matrix products with optional transposes, through BLAS. */
#include "autograd/ops.h"
#include "autograd/tape.h"

qkv_tensor *qkv_matmul(qkv_ctx *ctx, qkv_tensor *a, qkv_tensor *b, bool ta, bool tb) {
    if (!a || !b || !qkv__check_pair(ctx, "matmul", a, b)) return NULL;
    if (a->ndim < 2 || b->ndim < 2)
        return qkv_ctx_fail(ctx, "matmul: operands need at least 2 dims, got %s and %s",
                            qkv__shp(a), qkv__shp(b));
    int na = a->ndim, nb = b->ndim;
    int64_t M = ta ? a->shape[na - 1] : a->shape[na - 2];
    int64_t Ka = ta ? a->shape[na - 2] : a->shape[na - 1];
    int64_t Kb = tb ? b->shape[nb - 1] : b->shape[nb - 2];
    int64_t N = tb ? b->shape[nb - 2] : b->shape[nb - 1];
    if (Ka != Kb)
        return qkv_ctx_fail(ctx, "matmul: inner dimensions differ: a %s%s has %lld, b %s%s has %lld",
                            qkv__shp(a), ta ? "^T" : "", (long long)Ka, qkv__shp(b),
                            tb ? "^T" : "", (long long)Kb);
    int64_t batch_a = a->numel / (a->shape[na - 1] * a->shape[na - 2]);
    int64_t batch_b = b->numel / (b->shape[nb - 1] * b->shape[nb - 2]);
    bool same_lead = na == nb;
    for (int i = 0; same_lead && i < na - 2; i++) same_lead = a->shape[i] == b->shape[i];
    if (!same_lead && na > 2 && nb > 2)
        return qkv_ctx_fail(ctx, "matmul: batch dimensions differ: %s and %s (they must be equal, "
                            "or one operand 2-D)", qkv__shp(a), qkv__shp(b));
    /* each dim fits in 32 bits before any product is formed, so the products cannot overflow */
    if (M > INT32_MAX || N > INT32_MAX || Ka > INT32_MAX || M * N > INT32_MAX || M * Ka > INT32_MAX ||
        Ka * N > INT32_MAX)
        return qkv_ctx_fail(ctx, "matmul: matrices %s and %s are too large for 32-bit BLAS",
                            qkv__shp(a), qkv__shp(b));

    const qkv_tensor *lead = na >= nb ? a : b;
    int64_t oshape[QKV_MAX_DIMS];
    int ond = lead->ndim;
    for (int i = 0; i < ond - 2; i++) oshape[i] = lead->shape[i];
    oshape[ond - 2] = M;
    oshape[ond - 1] = N;
    qkv_tensor *c = qkv__out(ctx, a->dtype, ond, oshape);
    if (!c) return NULL;

    int64_t batch = batch_a > batch_b ? batch_a : batch_b;
    int64_t sa = batch_a > 1 || same_lead ? M * Ka : 0, sb = batch_b > 1 || same_lead ? Ka * N : 0;
    if (batch_b == 1 && !ta && nb == 2 && batch > 1 && M * batch <= INT32_MAX) { /* rows of every batch in one product */
        M *= batch;
        batch = 1;
    }
    if (qkv__gemm_batched(ctx, a->dtype, batch, ta, tb, M, N, Ka, a->data, sa, b->data, sb, 0, c->data, M * N))
        return NULL;

    qkv_tensor *in[2] = {a, b};
    qkv_record *r = qkv__record(ctx, QKV_OP_MATMUL, c, 2, in);
    if (r) {
        r->p.matmul.ta = ta; r->p.matmul.tb = tb;
        r->p.matmul.batch = batch; r->p.matmul.M = M; r->p.matmul.N = N; r->p.matmul.K = Ka;
        r->p.matmul.sa = sa; r->p.matmul.sb = sb;
    }
    return c;
}

int qkv__matmul_backward(qkv_ctx *ctx, const qkv_record *r) {
    qkv_tensor *a = r->in[0], *b = r->in[1];
    int ta = r->p.matmul.ta, tb = r->p.matmul.tb;
    int64_t batch = r->p.matmul.batch, M = r->p.matmul.M, N = r->p.matmul.N, K = r->p.matmul.K;
    int64_t sa = r->p.matmul.sa, sb = r->p.matmul.sb;
    const void *dc = r->out->grad;
    /* a new gradient is written (beta 0), not added to; when a is b, da is written first */
    bool fa, fb;
    void *da = qkv__grad_fresh(ctx, a, &fa), *db = qkv__grad_fresh(ctx, b, &fb);
    if (!qkv_ctx_ok(ctx)) return -1;
    qkv_dtype dt = a->dtype;
    if (da && (!ta ? /* dA (M,K) += dC (M,N) op(B)^T */
                   qkv__gemm_batched(ctx, dt, batch, 0, !tb, M, K, N, dc, M * N, b->data, sb, !fa, da, sa)
                   : /* dA stored (K,M) += op(B) (K,N) dC^T */
                   qkv__gemm_batched(ctx, dt, batch, tb, 1, K, M, N, b->data, sb, dc, M * N, !fa, da, sa)))
        return -1;
    if (db && (!tb ? /* dB (K,N) += op(A)^T (K,M) dC (M,N) */
                   qkv__gemm_batched(ctx, dt, batch, !ta, 0, K, N, M, a->data, sa, dc, M * N, !fb, db, sb)
                   : /* dB stored (N,K) += dC^T (N,M) op(A) (M,K) */
                   qkv__gemm_batched(ctx, dt, batch, 1, ta, N, K, M, dc, M * N, a->data, sa, !fb, db, sb)))
        return -1;
    return 0;
}
