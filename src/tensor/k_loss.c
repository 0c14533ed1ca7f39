/* Cross-entropy over logits with an ignore index, mean over the counted rows. */
#include "tensor/kernel_prelude.h"
#include "tensor/check.h"
#include "tensor/fastmath.h"
#include "tensor/lanes.h"

#if QKV_KERNEL_F64
#define EXP(v) exp(v)
#else
#define EXP(v) qkv_expf_fast(v) /* vectorisable */
#endif

typedef struct {
    int64_t V;
    const real *logits, *lse_in;
    const int32_t *targets;
    int32_t ignore;
    real *lse, *dlogits, *row_loss;
    real g;
} ce_job;

/* per row with a target: lse and the row's loss (the mean is summed afterwards, in row order);
 * an ignored row (most of a recall example's) costs nothing */
QKV_VECTOR_CLONES
static void cross_entropy_range(void *p, int64_t r0, int64_t r1) {
    ce_job *j = p;
    int64_t V = j->V;
    for (int64_t r = r0; r < r1; r++) {
        if (j->targets[r] == j->ignore) { /* no loss, and the backward skips the row: no lse needed */
            j->lse[r] = 0, j->row_loss[r] = 0;
            continue;
        }
        const real *x = j->logits + r * V;
        real m;
        QKV_LANE_MAX(m, V, k, x[k]);
        real s;
        QKV_LANE_SUM(s, V, k, EXP(x[k] - m));
        real ls = log(s);
        j->lse[r] = m + ls; /* for backward's exp(x - lse); the loss avoids this rounding */
        j->row_loss[r] = ls - (x[j->targets[r]] - m);
    }
}

/* logits: (rows, V), targets: (rows) -> mean over rows with target != ignore of
 * lse(row) - logits[target]; lse: (rows) saved; *count = rows that counted (loss 0 if none) */
double K(cross_entropy)(int64_t rows, int64_t V, const real *logits, const int32_t *targets,
                        int32_t ignore, real *lse, int64_t *count) {
    QKV_ASSERT(rows >= 0 && V >= 1 && logits && targets && lse && count, "cross_entropy: rows >= 0, V >= 1");
    /* row losses go to a stack buffer (no allocation), 4096 rows at a time; the total is
     * accumulated in double, in row order, whatever the thread count */
    real row_loss[4096];
    ce_job j = {.V = V, .targets = targets, .ignore = ignore, .row_loss = row_loss};
    double total = 0;
    int64_t c = 0;
    for (int64_t r0 = 0; r0 < rows; r0 += 4096) {
        int64_t n = rows - r0 < 4096 ? rows - r0 : 4096;
        j.logits = logits + r0 * V;
        j.targets = targets + r0;
        j.lse = lse + r0;
        qkv__parallel_for(n, qkv_row_grain(V), cross_entropy_range, &j);
        for (int64_t r = 0; r < n; r++) {
            if (targets[r0 + r] == ignore) continue;
            total += (double)row_loss[r];
            c++;
        }
    }
    *count = c;
    return c ? total / (double)c : 0.0;
}

QKV_VECTOR_CLONES
static void cross_entropy_backward_range(void *p, int64_t r0, int64_t r1) {
    ce_job *j = p;
    int64_t V = j->V;
    for (int64_t r = r0; r < r1; r++) {
        if (j->targets[r] == j->ignore) continue;
        const real *x = j->logits + r * V;
        real *d = j->dlogits + r * V, l = j->lse_in[r];
        for (int64_t k = 0; k < V; k++) d[k] += j->g * EXP(x[k] - l);
        d[j->targets[r]] -= j->g;
    }
}

/* dlogits[r] += g/count (softmax(logits[r]) - onehot(target[r])) for counted rows */
void K(cross_entropy_backward)(int64_t rows, int64_t V, const real *logits, const int32_t *targets, int32_t ignore,
                               const real *lse, double g_over_count, real *dlogits) {
    QKV_ASSERT(rows >= 0 && V >= 1 && logits && targets && lse && dlogits, "cross_entropy_backward: rows >= 0, V >= 1");
    ce_job j = {.V = V, .logits = logits, .targets = targets, .ignore = ignore, .lse_in = lse,
                .dlogits = dlogits, .g = (real)g_over_count};
    qkv__parallel_for(rows, qkv_row_grain(V), cross_entropy_backward_range, &j);
}
