/* Run verdicts (src/train/verdict.c): solved_at, the trend rule and flat_since, by hand. */
#include <check.h>
#include <math.h>

#include "train/verdict.h"
#include "suites.h"

static const long long STEPS[8] = {50, 100, 150, 200, 250, 300, 350, 400};

/* solved at the first evaluation at or above the threshold, not at a later better one */
START_TEST(test_solved_at) {
    double acc[4] = {0.1, 0.5, 0.99, 1.0}, loss[4] = {3, 2, 1, 0.5};
    qkv_verdict v;
    qkv_verdict_compute(STEPS, acc, loss, 4, 0.99, 400, true, &v);
    ck_assert(v.solved);
    ck_assert_int_eq(v.solved_at, 150);
    ck_assert_int_eq(v.budget, 400);
    ck_assert(v.on_validation);
    qkv_verdict_compute(STEPS, acc, loss, 4, 0.999, 400, false, &v);
    ck_assert_int_eq(v.solved_at, 200);
    qkv_verdict_compute(STEPS, acc, loss, 3, 0.999, 150, false, &v);
    ck_assert(!v.solved);
    ck_assert_int_eq(v.solved_at, -1);
}
END_TEST

/* 8 evaluations, quarters of 2: the best of the last two (1.978) is not 2% below the best of the
 * two before (1.98 x 0.98 = 1.9404): flat. The best loss last fell 2% below its anchor at step 100
 * (3.0 -> 2.0; 1.99 .. 1.978 never go below 2.0 x 0.98 = 1.96). */
START_TEST(test_flat_since) {
    double acc[8] = {0}, loss[8] = {3.0, 2.0, 1.99, 1.985, 1.98, 1.98, 1.979, 1.978};
    qkv_verdict v;
    qkv_verdict_compute(STEPS, acc, loss, 8, 0.99, 400, true, &v);
    ck_assert(!v.solved);
    ck_assert(!v.improving);
    ck_assert_int_eq(v.flat_since, 100);
    char buf[128];
    qkv_verdict_describe(&v, buf, sizeof buf);
    ck_assert_str_eq(buf, "unsolved at 400, flat since 100");
    /* a jump at the end (a phase change) makes it improving again */
    loss[7] = 1.0;
    qkv_verdict_compute(STEPS, acc, loss, 8, 0.99, 400, true, &v);
    ck_assert(v.improving);
    ck_assert_int_eq(v.flat_since, -1);
    qkv_verdict_describe(&v, buf, sizeof buf);
    ck_assert_str_eq(buf, "unsolved at 400, improving");
}
END_TEST

/* exactly 2% is enough; a little less is flat; too few evaluations count as improving */
START_TEST(test_trend_edges) {
    double acc[4] = {0}, loss[2] = {1.0, 0.98};
    qkv_verdict v;
    qkv_verdict_compute(STEPS, acc, loss, 2, 0.99, 100, true, &v);
    ck_assert(v.improving);
    loss[1] = 0.981;
    qkv_verdict_compute(STEPS, acc, loss, 2, 0.99, 100, true, &v);
    ck_assert(!v.improving);
    ck_assert_int_eq(v.flat_since, 50);
    qkv_verdict_compute(STEPS, acc, loss, 1, 0.99, 50, true, &v);
    ck_assert(v.improving);
    qkv_verdict_compute(STEPS, acc, loss, 0, 0.99, 0, true, &v);
    ck_assert(v.improving && !v.solved);
    /* a non-finite loss is skipped, never a best */
    double nl[4] = {2.0, NAN, 1.99, 1.99};
    qkv_verdict_compute(STEPS, acc, nl, 4, 0.99, 200, true, &v);
    ck_assert(!v.improving);
    ck_assert_int_eq(v.flat_since, 50);
}
END_TEST

Suite *verdict_suite(void) {
    Suite *s = suite_create("verdict");
    TCase *tc = tcase_create("rules");
    tcase_add_test(tc, test_solved_at);
    tcase_add_test(tc, test_flat_since);
    tcase_add_test(tc, test_trend_edges);
    suite_add_tcase(s, tc);
    return s;
}
