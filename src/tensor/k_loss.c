/* Cross-entropy over logits with an ignore index, mean over the counted rows. */
#include "tensor/kernel_prelude.h"
#include "tensor/fastmath.h"

#if QKV_KERNEL_F64
#define EXP(v) exp(v)
#else
#define EXP(v) qkv_expf_fast(v) /* vectorisable */
#endif

double K(cross_entropy)(int64_t rows, int64_t V, const real *logits, const int32_t *targets,
                        int32_t ignore, real *lse, int64_t *count) {
    double total = 0; /* accumulate in double: rows can be many */
    int64_t c = 0;
    for (int64_t r = 0; r < rows; r++) {
        const real *x = logits + r * V;
        real m = x[0];
        for (int64_t j = 1; j < V; j++) m = x[j] > m ? x[j] : m;
        real s = 0;
        for (int64_t j = 0; j < V; j++) s += EXP(x[j] - m);
        real ls = log(s);
        lse[r] = m + ls; /* for backward's exp(x - lse); the loss avoids this rounding */
        if (targets[r] == ignore) continue;
        total += (double)(ls - (x[targets[r]] - m));
        c++;
    }
    *count = c;
    return c ? total / (double)c : 0.0;
}

QKV_VECTOR_CLONES
void K(cross_entropy_backward)(int64_t rows, int64_t V, const real *logits,
                               const int32_t *targets, int32_t ignore, const real *lse,
                               double g_over_count, real *dlogits) {
    real g = (real)g_over_count;
    for (int64_t r = 0; r < rows; r++) {
        if (targets[r] == ignore) continue;
        const real *x = logits + r * V;
        real *d = dlogits + r * V;
        for (int64_t j = 0; j < V; j++) d[j] += g * EXP(x[j] - lse[r]);
        d[targets[r]] -= g;
    }
}
