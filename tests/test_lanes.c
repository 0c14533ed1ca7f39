/* The 16-lane reduction trees (src/tensor/lanes.h), written on whole vectors so that they stay in
 * registers, against the loops they replaced (acc[k] = acc[k] op acc[k + w] for w = 8, 4, 2, 1):
 * the same bits, for sums and for maxima with NaN, infinities and signed zeros among the lanes,
 * in each vector clone the kernels are compiled for. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "suites.h"
#include "tensor/vector_clones.h"

typedef float real;
#define QKV_KERNEL_F64 0
#include "tensor/lanes.h"

/* the trees as they were written before (the reference) */
static real loop_total(real *acc) {
    for (int w = QKV_LANES / 2; w >= 1; w /= 2)
        for (int k = 0; k < w; k++) acc[k] = acc[k] + acc[k + w];
    return acc[0];
}
static real loop_max(real *mx) {
    for (int w = QKV_LANES / 2; w >= 1; w /= 2)
        for (int k = 0; k < w; k++) mx[k] = mx[k + w] > mx[k] ? mx[k + w] : mx[k];
    return mx[0];
}

/* both trees of `rows` rows of 16 lanes, in the clone the loader picks (as the kernels' are) */
QKV_VECTOR_CLONES
static void trees(int rows, const real *lanes, real *total, real *max) {
    for (int r = 0; r < rows; r++) {
        total[r] = qkv_lanes_total(lanes + 16 * r);
        max[r] = qkv_lanes_max(lanes + 16 * r);
    }
}

/* the next number of a fixed linear congruential sequence */
static uint32_t next_u32(uint32_t *s) { return *s = *s * 1664525u + 1013904223u; }

/* a lane value: mostly random magnitudes of mixed sign; sometimes NaN, +-inf, +-0 or a tie */
static real lane_value(uint32_t *s) {
    uint32_t u = next_u32(s);
    switch (u % 16) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: return 0.0f;
    case 4: return -0.0f;
    case 5: return 1.0f;
    default: return ldexpf((float)(int32_t)(u >> 4) / 134217728.0f, (int)(u % 61) - 30);
    }
}

START_TEST(test_lane_trees_same_bits_as_the_loops) {
    enum { ROWS = 20000 };
    static real lanes[ROWS * 16], total[ROWS], max[ROWS];
    uint32_t s = 2024;
    for (int i = 0; i < ROWS * 16; i++) lanes[i] = lane_value(&s);
    /* rows of finite values only too (the sums' usual case), and rows with one lane set */
    for (int i = 0; i < ROWS / 4 * 16; i++)
        if (!isfinite(lanes[i])) lanes[i] = 0.5f;
    for (int r = ROWS / 4; r < ROWS / 2; r++)
        for (int k = 0; k < 16; k++) lanes[16 * r + k] = k == r % 16 ? lanes[16 * r + k] : -INFINITY;
    /* rows of +0, -0 and -inf: max keeps the first of two equal zeros, so the pairing decides the
     * sign of the result (the one way a permuted tree would show in a maximum) */
    for (int r = ROWS / 2; r < 3 * ROWS / 4; r++)
        for (int k = 0; k < 16; k++) {
            uint32_t kind = (next_u32(&s) >> 28) % 3;
            lanes[16 * r + k] = kind == 0 ? 0.0f : kind == 1 ? -0.0f : -INFINITY;
        }
    trees(ROWS, lanes, total, max);
    for (int r = 0; r < ROWS; r++) {
        real a[16], b[16];
        memcpy(a, lanes + 16 * r, sizeof a);
        memcpy(b, lanes + 16 * r, sizeof b);
        real t = loop_total(a), m = loop_max(b);
        ck_assert_msg(isnan(t) ? isnan(total[r]) : memcmp(&t, &total[r], sizeof t) == 0,
                      "row %d: total %a, the loop's %a", r, (double)total[r], (double)t);
        ck_assert_msg(isnan(m) ? isnan(max[r]) : memcmp(&m, &max[r], sizeof m) == 0,
                      "row %d: max %a, the loop's %a", r, (double)max[r], (double)m);
    }
}
END_TEST

/* the order is the loop's, not another: lanes whose sum and maximum depend on the pairing */
START_TEST(test_lane_trees_pair_k_with_k_plus_8_first) {
    real acc[16] = {0};
    acc[0] = 1.0f, acc[8] = -1.0f, acc[1] = 0x1p-30f; /* (1 + -1) + 2^-30; 1 + 2^-30 would round to 1 */
    ck_assert(qkv_lanes_total(acc) == 0x1p-30f);
    /* a NaN never enters a lane (QKV_LANE_MAX skips it), but if one were there, the pairing decides:
     * lane 3 keeps its NaN against lane 11's 2 (2 > NaN is false), then loses to lane 1's -inf */
    real mx[16];
    for (int k = 0; k < 16; k++) mx[k] = -INFINITY;
    mx[3] = NAN, mx[11] = 2.0f;
    ck_assert(qkv_lanes_max(mx) == -INFINITY);
}
END_TEST

Suite *lanes_suite(void) {
    Suite *s = suite_create("lanes");
    TCase *tc = tcase_create("trees");
    tcase_add_test(tc, test_lane_trees_same_bits_as_the_loops);
    tcase_add_test(tc, test_lane_trees_pair_k_with_k_plus_8_first);
    suite_add_tcase(s, tc);
    return s;
}
