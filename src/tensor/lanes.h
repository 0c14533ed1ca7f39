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

#include <stdint.h>
#include <string.h>

#define QKV_LANES 16

/* The trees below are written on whole vectors (GCC's vector extensions, which clang shares) so
 * that they stay in registers: written as loops over acc[k] and acc[k + w], the compiler ran
 * them through the stack, a scalar load, operation and store per step (in a profile of short
 * softmax rows, a large part of their time). Each level still combines element k with element
 * k + w, so the results are the bits of that loop's. */
typedef real qkv_lanes16 __attribute__((vector_size(16 * sizeof(real))));
typedef real qkv_lanes8 __attribute__((vector_size(8 * sizeof(real))));
typedef real qkv_lanes4 __attribute__((vector_size(4 * sizeof(real))));
typedef real qkv_lanes2 __attribute__((vector_size(2 * sizeof(real))));
_Static_assert(QKV_LANES == 16, "the lane trees are written for 16 lanes");

#if QKV_KERNEL_F64
typedef int64_t qkv_lanes_int;
#else
typedef int32_t qkv_lanes_int;
#endif
/* what a comparison of two real vectors gives: all ones where true, per element */
typedef qkv_lanes_int qkv_lanes_i8 __attribute__((vector_size(8 * sizeof(real))));
typedef qkv_lanes_int qkv_lanes_i4 __attribute__((vector_size(4 * sizeof(real))));
typedef qkv_lanes_int qkv_lanes_i2 __attribute__((vector_size(2 * sizeof(real))));

/* element by element, b where b > a, else a (NaN-skipping, as the lanes: max(m, v) = v > m ? v : m);
 * C has no ?: on vectors, so as a select by the comparison's all-ones mask */
#define QKV_LANES_VMAX(vec, ivec, a, b) \
    ((vec)((((ivec)(b)) & ((b) > (a))) | (((ivec)(a)) & ~((b) > (a)))))

/* the lanes' total, pairwise in a fixed order: acc[k] + acc[k + w] for w = 8, 4, 2, 1 */
static inline real qkv_lanes_total(const real *acc) {
    qkv_lanes16 v;
    memcpy(&v, acc, sizeof v);
    qkv_lanes8 a = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) +
                   __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
    qkv_lanes4 b = __builtin_shufflevector(a, a, 0, 1, 2, 3) + __builtin_shufflevector(a, a, 4, 5, 6, 7);
    qkv_lanes2 c = __builtin_shufflevector(b, b, 0, 1) + __builtin_shufflevector(b, b, 2, 3);
    return c[0] + c[1];
}

/* the lanes' maximum, pairwise in the same order (NaN-skipping, as the lanes) */
static inline real qkv_lanes_max(const real *mx) {
    qkv_lanes16 v;
    memcpy(&v, mx, sizeof v);
    qkv_lanes8 lo8 = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7),
               hi8 = __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
    qkv_lanes8 a = QKV_LANES_VMAX(qkv_lanes8, qkv_lanes_i8, lo8, hi8);
    qkv_lanes4 lo4 = __builtin_shufflevector(a, a, 0, 1, 2, 3), hi4 = __builtin_shufflevector(a, a, 4, 5, 6, 7);
    qkv_lanes4 b = QKV_LANES_VMAX(qkv_lanes4, qkv_lanes_i4, lo4, hi4);
    qkv_lanes2 lo2 = __builtin_shufflevector(b, b, 0, 1), hi2 = __builtin_shufflevector(b, b, 2, 3);
    qkv_lanes2 c = QKV_LANES_VMAX(qkv_lanes2, qkv_lanes_i2, lo2, hi2);
    return c[1] > c[0] ? c[1] : c[0];
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
