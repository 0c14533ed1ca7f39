/* Row reductions in 16 interleaved partial sums (included by typed kernels after
 * kernel_prelude.h, for `real`).
 *
 * Why: a serial sum is one dependency chain (an add's latency per element) and cannot be
 * vectorised without reassociating, which would make results depend on the vector width.
 * Sixteen fixed lanes (element j goes to lane j mod 16), combined in one fixed pairwise
 * order, vectorise on every width (4, 8 or 16 floats per register) with the same bits, and
 * shorten the chain sixteenfold. */
#ifndef QKV_LANES_H
#define QKV_LANES_H

#define QKV_LANES 16

/* the lanes' total, pairwise in a fixed order */
static inline real qkv_lanes_total(real *acc) {
    for (int w = QKV_LANES / 2; w >= 1; w /= 2)
        for (int k = 0; k < w; k++) acc[k] = acc[k] + acc[k + w];
    return acc[0];
}

/* the lanes' maximum, pairwise in a fixed order (NaN-skipping, as the lanes) */
static inline real qkv_lanes_max(real *mx) {
    for (int w = QKV_LANES / 2; w >= 1; w /= 2)
        for (int k = 0; k < w; k++) mx[k] = mx[k + w] > mx[k] ? mx[k + w] : mx[k];
    return mx[0];
}

/* result = sum over i in [0, n) of EXPR (an expression of the index variable i) */
#define QKV_LANE_SUM(result, n, i, EXPR)                                          \
    do {                                                                          \
        real acc_[QKV_LANES] = {0};                                               \
        int64_t b_ = 0, n_ = (n);                                                 \
        for (; b_ + QKV_LANES <= n_; b_ += QKV_LANES)                             \
            for (int64_t i = b_; i < b_ + QKV_LANES; i++) acc_[i - b_] += (EXPR); \
        for (int64_t i = b_; i < n_; i++) acc_[i - b_] += (EXPR);                 \
        (result) = qkv_lanes_total(acc_);                                         \
    } while (0)

/* result = the largest EXPR over i in [0, n) (-inf if n is 0; NaNs are skipped, as by a serial
 * `v > m ? v : m`); max is exact, so this is the serial result, just vectorised */
#define QKV_LANE_MAX(result, n, i, EXPR)                                                  \
    do {                                                                                  \
        real mx_[QKV_LANES];                                                              \
        for (int l_ = 0; l_ < QKV_LANES; l_++) mx_[l_] = -INFINITY;                       \
        int64_t b_ = 0, n_ = (n);                                                         \
        for (; b_ + QKV_LANES <= n_; b_ += QKV_LANES)                                     \
            for (int64_t i = b_; i < b_ + QKV_LANES; i++) {                               \
                real v_ = (EXPR);                                                         \
                mx_[i - b_] = v_ > mx_[i - b_] ? v_ : mx_[i - b_];                        \
            }                                                                             \
        for (int64_t i = b_; i < n_; i++) {                                               \
            real v_ = (EXPR);                                                             \
            mx_[i - b_] = v_ > mx_[i - b_] ? v_ : mx_[i - b_];                            \
        }                                                                                 \
        (result) = qkv_lanes_max(mx_);                                                    \
    } while (0)

#endif
