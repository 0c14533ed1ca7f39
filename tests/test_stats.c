/* Tests for src/ablate/stats.c: hand-computed cases (the arithmetic in the comments), bad input,
 * determinism, and scipy/numpy's answers from tests/fixtures/stats.json (written by
 * scripts/stats_fixtures.py with scipy 1.10.1): exact sign-flip p-values, numpy percentiles,
 * mean, sd and Holm to 1e-12; bootstrap intervals and the Monte Carlo p within their
 * Monte Carlo error (see the tests for the tolerances). */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ablate/stats.h"
#include "io/fileio.h"
#include "suites.h"
#include "testutil.h"

#define EPS 1e-12

static int cmp_double(const void *pa, const void *pb) {
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* ---------------------------------------------------------------- hand-computed */

START_TEST(test_mean_sd_hand) {
    /* {2,4,4,4,5,5,7,9}: sum 40, mean 5; squared deviations 9+1+1+1+0+0+4+16 = 32, sd = sqrt(32/7) */
    double x[] = {2, 4, 4, 4, 5, 5, 7, 9};
    ck_assert(qkv_test_close(qkv_stats_mean(x, 8), 5.0, EPS, EPS));
    ck_assert(qkv_test_close(qkv_stats_sd(x, 8), sqrt(32.0 / 7.0), EPS, EPS));
    /* {1,2,3}: mean 2, squared deviations 1+0+1 = 2, sd = sqrt(2/2) = 1 */
    double y[] = {1, 2, 3};
    ck_assert(qkv_test_close(qkv_stats_mean(y, 3), 2.0, EPS, EPS));
    ck_assert(qkv_test_close(qkv_stats_sd(y, 3), 1.0, EPS, EPS));
    /* constant data: the mean is the value itself, sd 0 (0.1 + 0.1 + 0.1 would not be 0.3) */
    double c[] = {0.1, 0.1, 0.1};
    ck_assert(qkv_stats_mean(c, 3) == 0.1);
    ck_assert(qkv_stats_sd(c, 3) == 0.0);
    /* n = 1: mean x, sample sd undefined; n = 0 and NaN: NaN */
    ck_assert(qkv_stats_mean(x, 1) == 2.0);
    ck_assert(isnan(qkv_stats_sd(x, 1)));
    ck_assert(isnan(qkv_stats_mean(x, 0)));
    ck_assert(isnan(qkv_stats_mean(NULL, 3)));
    double nan_in[] = {1, NAN, 3};
    ck_assert(isnan(qkv_stats_mean(nan_in, 3)));
    ck_assert(isnan(qkv_stats_sd(nan_in, 3)));
}
END_TEST

START_TEST(test_percentile_hand) {
    /* {1,2,3,4}: h = 3q; q = 0.5: h = 1.5, 2 + 0.5 (3-2) = 2.5; q = 0.1: h = 0.3, 1 + 0.3 = 1.3;
     * q = 0.9: h = 2.7, 3 + 0.7 = 3.7; q = 0 and 1: the ends */
    double s[] = {1, 2, 3, 4};
    ck_assert(qkv_test_close(qkv_stats_percentile_sorted(s, 4, 0.5), 2.5, EPS, EPS));
    ck_assert(qkv_test_close(qkv_stats_percentile_sorted(s, 4, 0.1), 1.3, EPS, EPS));
    ck_assert(qkv_test_close(qkv_stats_percentile_sorted(s, 4, 0.9), 3.7, EPS, EPS));
    ck_assert(qkv_stats_percentile_sorted(s, 4, 0.0) == 1.0);
    ck_assert(qkv_stats_percentile_sorted(s, 4, 1.0) == 4.0);
    ck_assert(qkv_stats_percentile_sorted(s, 1, 0.3) == 1.0);
    ck_assert(isnan(qkv_stats_percentile_sorted(s, 0, 0.5)));
    ck_assert(isnan(qkv_stats_percentile_sorted(s, 4, 1.5)));
    ck_assert(isnan(qkv_stats_percentile_sorted(s, 4, NAN)));
}
END_TEST

START_TEST(test_signflip_hand) {
    /* d = {1,2,3}, t = 6/3. The 8 sign patterns' sums: 6, 4 (-1), 2 (-2), 0 (-1-2), 0 (-3),
     * -2 (-1-3), -4 (-2-3), -6: sums <= 6: 8, sums >= 6: 1; p = 2 min(8, 1)/8 = 0.25 */
    double d1[] = {1, 2, 3};
    ck_assert(qkv_test_close(qkv_stats_signflip_p(d1, 3, 0, 1), 0.25, EPS, EPS));
    /* d = {1,-2,3}, t = 2/3: the same 8 sums; >= 2: {6,4,2} = 3, <= 2: {2,0,0,-2,-4,-6} = 6;
     * p = 2 min(6, 3)/8 = 0.75 (one-sided "greater" would give 3/8) */
    double d2[] = {1, -2, 3};
    ck_assert(qkv_test_close(qkv_stats_signflip_p(d2, 3, 0, 1), 0.75, EPS, EPS));
    /* d = {1,1,1,1,1}: only the all-plus pattern of 32 reaches t = 1, p = 2/32 = 0.0625. This is
     * the smallest two-sided p that 5 paired seeds can give: 5 seeds can never reach p < 0.05,
     * 6 seeds can (2/64 = 0.031), and with Holm over m comparisons the best one needs
     * 2/2^n <= 0.05/m (m = 3: n >= 7 seeds). */
    double d3[] = {1, 1, 1, 1, 1};
    ck_assert(qkv_test_close(qkv_stats_signflip_p(d3, 5, 0, 1), 0.0625, EPS, EPS));
    /* all d = 0: every pattern's mean is 0 = t, both counts are 2^n, p = min(1, 2) = 1 */
    double z[] = {0, 0, 0, 0};
    ck_assert(qkv_stats_signflip_p(z, 4, 0, 1) == 1.0);
    /* d = {0, 1}, t = 0.5: flipping 0 changes nothing: sums 1, 1, -1, -1; >= 1: 2, <= 1: 4;
     * p = 2 min(4, 2)/4 = 1 */
    double z1[] = {0, 1};
    ck_assert(qkv_stats_signflip_p(z1, 2, 0, 1) == 1.0);
    /* n = 1: the two patterns d and -d: p = 2 min(2, 1)/2 = 1 */
    ck_assert(qkv_stats_signflip_p(d1, 1, 0, 1) == 1.0);
    /* n = 20 is still exact: all positive, p = 2/2^20 */
    double ones[25];
    for (int i = 0; i < 25; i++) ones[i] = 1;
    ck_assert(qkv_test_close(qkv_stats_signflip_p(ones, 20, 0, 1), 2.0 / 1048576.0, EPS, EPS));
    /* n = 25 is Monte Carlo: R = 999 random patterns, none all-plus (chance 999/2^25), so
     * #{T >= t} = 0 and p = 2 (0 + 1)/(999 + 1) = 0.002 */
    ck_assert(qkv_test_close(qkv_stats_signflip_p(ones, 25, 999, 7), 0.002, EPS, EPS));
    /* bad input: n = 0, a NaN, Monte Carlo without resamples */
    ck_assert(isnan(qkv_stats_signflip_p(d1, 0, 0, 1)));
    ck_assert(isnan(qkv_stats_signflip_p(NULL, 3, 0, 1)));
    double dn[] = {1, NAN, 2};
    ck_assert(isnan(qkv_stats_signflip_p(dn, 3, 0, 1)));
    ck_assert(isnan(qkv_stats_signflip_p(ones, 25, 0, 1)));
}
END_TEST

START_TEST(test_fisher_hand) {
    /* [[9,0],[6,3]]: margins 9, 9 and 15 solved; P(x) = C(9,x) C(9,15-x) / C(18,15) for x = 6..9:
     * 84/816, 324/816, 324/816, 84/816; the observed x = 9 and x = 6 are the least likely:
     * p = 168/816 = 0.20588 (scipy.stats.fisher_exact gives 0.20588235294117646) */
    ck_assert(qkv_test_close(qkv_stats_fisher_p(9, 0, 6, 3), 168.0 / 816.0, 1e-12, 1e-12));
    /* [[1,8],[9,0]]: 0.00041135335 (scipy: 0.00041135335252982314) */
    ck_assert(qkv_test_close(qkv_stats_fisher_p(1, 8, 9, 0), 0.00041135335252982314, 1e-12, 1e-9));
    /* [[8,0],[6,2]]: 0.46667 = 7/15 (scipy: 0.4666666666666667) */
    ck_assert(qkv_test_close(qkv_stats_fisher_p(8, 0, 6, 2), 7.0 / 15.0, 1e-12, 1e-12));
    /* the same counts in either row order or side give the same p */
    ck_assert(qkv_test_close(qkv_stats_fisher_p(6, 3, 9, 0), 168.0 / 816.0, 1e-12, 1e-12));
    /* equal rows: the observed table is the most likely, so every table counts: p = 1 */
    ck_assert(qkv_test_close(qkv_stats_fisher_p(5, 5, 5, 5), 1.0, 1e-12, 1e-12));
    ck_assert(isnan(qkv_stats_fisher_p(-1, 2, 3, 4)));
    ck_assert(isnan(qkv_stats_fisher_p(0, 0, 0, 0)));
}
END_TEST

START_TEST(test_signflip_monte_carlo_determinism) {
    double d[30];
    for (int i = 0; i < 30; i++) d[i] = (i % 3 == 0 ? -1.0 : 1.0) * (0.1 + 0.01 * i);
    double p1 = qkv_stats_signflip_p(d, 30, 20000, 42), p2 = qkv_stats_signflip_p(d, 30, 20000, 42);
    double p3 = qkv_stats_signflip_p(d, 30, 20000, 43);
    ck_assert(p1 == p2);
    ck_assert(p1 != p3);
    ck_assert(p1 > 0 && p1 <= 1);
}
END_TEST

START_TEST(test_holm_hand) {
    /* p = {0.01, 0.04, 0.03, 0.005}, m = 4. Ascending: 0.005 (#3), 0.01 (#0), 0.03 (#2), 0.04 (#1);
     * times 4, 3, 2, 1: 0.02, 0.03, 0.06, 0.04; running max: 0.02, 0.03, 0.06, 0.06.
     * Step-down at alpha 0.05: 0.005 <= 0.05/4, 0.01 <= 0.05/3, 0.03 > 0.05/2: stop; 2 rejected */
    double p[] = {0.01, 0.04, 0.03, 0.005}, adj[4];
    bool rej[4];
    ck_assert_int_eq(qkv_stats_holm(p, 4, 0.05, adj, rej), 2);
    double want[] = {0.03, 0.06, 0.06, 0.02};
    bool want_rej[] = {true, false, false, true};
    for (int i = 0; i < 4; i++) {
        ck_assert_msg(qkv_test_close(adj[i], want[i], EPS, EPS), "adjusted[%d] = %g, want %g", i, adj[i], want[i]);
        ck_assert(rej[i] == want_rej[i]);
    }
    /* a NaN (a variant without runs) is skipped: m = 2. {NaN, 0.2, 0.01}: 0.01 x 2 = 0.02,
     * max(0.02, 0.2 x 1) = 0.2 */
    double q[] = {NAN, 0.2, 0.01}, adjq[3];
    bool rejq[3];
    ck_assert_int_eq(qkv_stats_holm(q, 3, 0.05, adjq, rejq), 1);
    ck_assert(isnan(adjq[0]) && !rejq[0]);
    ck_assert(qkv_test_close(adjq[1], 0.2, EPS, EPS) && !rejq[1]);
    ck_assert(qkv_test_close(adjq[2], 0.02, EPS, EPS) && rejq[2]);
    /* capped at 1: {0.6, 0.9}: min(1, 1.2) = 1, max(1, 0.9) = 1 */
    double r[] = {0.6, 0.9}, adjr[2];
    bool rejr[2];
    ck_assert_int_eq(qkv_stats_holm(r, 2, 0.05, adjr, rejr), 0);
    ck_assert(adjr[0] == 1.0 && adjr[1] == 1.0);
    /* nothing to test, or bad input */
    ck_assert_int_eq(qkv_stats_holm(r, 0, 0.05, adjr, rejr), 0);
    double bad[] = {0.1, 1.5};
    ck_assert_int_eq(qkv_stats_holm(bad, 2, 0.05, adjr, rejr), -1);
    ck_assert_int_eq(qkv_stats_holm(r, 2, NAN, adjr, rejr), -1);
}
END_TEST

START_TEST(test_median_censored) {
    const double C = 5000;   /* a censored run's budget: only "more than C" is known */
    /* odd: {30, C+, 10, 20, C+} ascending 10, 20, 30, inf, inf: the middle (3rd) is 30 */
    double v1[] = {30, C, 10, 20, C};
    bool c1[] = {false, true, false, false, true};
    ck_assert(qkv_stats_median_censored(v1, c1, 5) == 30);
    /* even: {40, 10, C+, 20} -> 10, 20, 40, inf: (20 + 40)/2 = 30 */
    double v2[] = {40, 10, C, 20};
    bool c2[] = {false, false, true, false};
    ck_assert(qkv_stats_median_censored(v2, c2, 4) == 30);
    /* even, half censored: {10, C+, C+, 20} -> 10, 20, inf, inf: the upper middle is censored */
    double v3[] = {10, C, C, 20};
    bool c3[] = {false, true, true, false};
    ck_assert(isinf(qkv_stats_median_censored(v3, c3, 4)));
    /* mostly censored, odd: {C+, C+, 5} -> 5, inf, inf: not reached */
    double v4[] = {C, C, 5};
    bool c4[] = {true, true, false};
    ck_assert(isinf(qkv_stats_median_censored(v4, c4, 3)));
    /* nothing censored, even: {4, 1, 3, 2}: (2 + 3)/2 = 2.5 */
    double v5[] = {4, 1, 3, 2};
    bool c5[] = {false, false, false, false};
    ck_assert(qkv_stats_median_censored(v5, c5, 4) == 2.5);
    /* a censored value's number is not used (even NaN); an uncensored NaN is an error */
    double v6[] = {NAN, 1, 2};
    bool c6[] = {true, false, false};
    ck_assert(qkv_stats_median_censored(v6, c6, 3) == 2);
    ck_assert(isnan(qkv_stats_median_censored(v6, c5, 3)));
    ck_assert(isnan(qkv_stats_median_censored(v1, c1, 0)));
}
END_TEST

START_TEST(test_bootstrap_hand) {
    double lo, hi;
    /* n = 1: every resample is {x}: [x, x] */
    double one[] = {0.7};
    ck_assert_int_eq(qkv_stats_bootstrap_ci(one, 1, 1000, 0.95, 1, &lo, &hi), 0);
    ck_assert(lo == 0.7 && hi == 0.7);
    /* constant values: every resampled mean is the value: [c, c] exactly */
    double c[] = {0.3, 0.3, 0.3, 0.3, 0.3};
    ck_assert_int_eq(qkv_stats_bootstrap_ci(c, 5, 1000, 0.95, 1, &lo, &hi), 0);
    ck_assert(lo == 0.3 && hi == 0.3);
    /* bad input: n = 0, a NaN, level outside (0, 1), no resamples: -1 and NaN */
    ck_assert_int_eq(qkv_stats_bootstrap_ci(c, 0, 1000, 0.95, 1, &lo, &hi), -1);
    ck_assert(isnan(lo) && isnan(hi));
    double n1[] = {1, NAN};
    ck_assert_int_eq(qkv_stats_bootstrap_ci(n1, 2, 1000, 0.95, 1, &lo, &hi), -1);
    ck_assert(isnan(lo) && isnan(hi));
    ck_assert_int_eq(qkv_stats_bootstrap_ci(c, 5, 1000, 1.0, 1, &lo, &hi), -1);
    ck_assert_int_eq(qkv_stats_bootstrap_ci(c, 5, 0, 0.95, 1, &lo, &hi), -1);
}
END_TEST

START_TEST(test_bootstrap_determinism) {
    double x[] = {0.61, 0.74, 0.55, 0.80, 0.67, 0.71, 0.59, 0.77}, lo1, hi1, lo2, hi2, lo3, hi3;
    ck_assert_int_eq(qkv_stats_bootstrap_ci(x, 8, 2000, 0.9, 11, &lo1, &hi1), 0);
    ck_assert_int_eq(qkv_stats_bootstrap_ci(x, 8, 2000, 0.9, 11, &lo2, &hi2), 0);
    ck_assert_int_eq(qkv_stats_bootstrap_ci(x, 8, 2000, 0.9, 12, &lo3, &hi3), 0);
    ck_assert(lo1 == lo2 && hi1 == hi2);                /* same seed: the same bits */
    ck_assert(lo1 != lo3 || hi1 != hi3);                /* another seed: other resamples */
    double m = qkv_stats_mean(x, 8);
    ck_assert(lo1 < m && m < hi1);
    /* the interval is the numpy percentiles of the resampled means */
    double means[2000];
    ck_assert_int_eq(qkv_stats_bootstrap_means(x, 8, 2000, 11, means), 0);
    qsort(means, 2000, sizeof means[0], cmp_double);
    ck_assert(lo1 == qkv_stats_percentile_sorted(means, 2000, 0.05));
    ck_assert(hi1 == qkv_stats_percentile_sorted(means, 2000, 0.95));
    /* the paired helper is the interval of d = a - b */
    double b[8], d[8];
    for (int i = 0; i < 8; i++) { b[i] = 0.5 + 0.01 * i; d[i] = x[i] - b[i]; }
    ck_assert_int_eq(qkv_stats_bootstrap_ci_paired(x, b, 8, 2000, 0.9, 11, &lo2, &hi2), 0);
    ck_assert_int_eq(qkv_stats_bootstrap_ci(d, 8, 2000, 0.9, 11, &lo3, &hi3), 0);
    ck_assert(lo2 == lo3 && hi2 == hi3);
}
END_TEST

/* ---------------------------------------------------------------- against scipy */

static cJSON *load_fixture(void) {
    qkv_err err;
    char *text = qkv__read_file("fixtures/stats.json", NULL, &err);
    ck_assert_msg(text != NULL, "fixtures/stats.json: %s", err.msg);
    cJSON *root = cJSON_Parse(text);
    free(text);
    ck_assert_msg(root != NULL, "fixtures/stats.json does not parse");
    return root;
}

/* a JSON array of numbers (null = NaN) as a new double array */
static double *num_array(const cJSON *obj, const char *key, int *n) {
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(obj, key);
    ck_assert_msg(cJSON_IsArray(arr), "fixture: no array %s", key);
    *n = cJSON_GetArraySize(arr);
    double *v = malloc((size_t)(*n > 0 ? *n : 1) * sizeof *v);
    ck_assert_ptr_nonnull(v);
    for (int i = 0; i < *n; i++) {
        const cJSON *e = cJSON_GetArrayItem(arr, i);
        ck_assert_msg(cJSON_IsNumber(e) || cJSON_IsNull(e), "fixture: %s[%d] is not a number", key, i);
        v[i] = cJSON_IsNumber(e) ? e->valuedouble : NAN;
    }
    return v;
}

static double num(const cJSON *obj, const char *key) {
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(obj, key);
    ck_assert_msg(cJSON_IsNumber(e), "fixture: no number %s", key);
    return e->valuedouble;
}

static const char *set_name(const cJSON *set) {
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(set, "name");
    ck_assert(cJSON_IsString(e));
    return e->valuestring;
}

/* d = a - b as numpy computed it; numpy's mean and std(ddof=1) */
START_TEST(test_fixture_mean_sd) {
    cJSON *root = load_fixture(), *set;
    cJSON_ArrayForEach(set, cJSON_GetObjectItemCaseSensitive(root, "sets")) {
        int n, nb, nd;
        double *a = num_array(set, "a", &n), *b = num_array(set, "b", &nb), *d = num_array(set, "d", &nd);
        ck_assert(n == nb && n == nd);
        for (int i = 0; i < n; i++) ck_assert(a[i] - b[i] == d[i]);
        double m = qkv_stats_mean(d, n), sd = qkv_stats_sd(d, n);
        ck_assert_msg(qkv_test_close(m, num(set, "mean"), EPS, EPS), "%s: mean %.17g, numpy %.17g", set_name(set), m,
                      num(set, "mean"));
        ck_assert_msg(qkv_test_close(sd, num(set, "sd"), EPS, EPS), "%s: sd %.17g, numpy %.17g", set_name(set), sd,
                      num(set, "sd"));
        free(a), free(b), free(d);
    }
    cJSON_Delete(root);
}
END_TEST

/* scipy.stats.permutation_test's exact two-sided p (all 2^n sign flips): equal to 1e-12 for
 * n <= 20. For n = 21 ours is Monte Carlo with R = 100000 patterns and scipy's is exact:
 * each one-sided count is Binomial(R, p1), so 2 (count + 1)/(R + 1) is within
 * 2 (5 sqrt(p1 (1 - p1)/R) + 1/(R + 1)) of the exact p except with probability ~6e-7. */
START_TEST(test_fixture_signflip_p) {
    enum { R = 100000 };
    cJSON *root = load_fixture(), *set;
    int exact_sets = 0, mc_sets = 0;
    cJSON_ArrayForEach(set, cJSON_GetObjectItemCaseSensitive(root, "sets")) {
        int n;
        double *d = num_array(set, "d", &n), want = num(set, "p");
        double p = qkv_stats_signflip_p(d, n, R, 2024);
        if (n <= QKV_STATS_EXACT_MAX) {
            ck_assert_msg(fabs(p - want) <= EPS, "%s: p %.17g, scipy %.17g", set_name(set), p, want);
            exact_sets++;
        } else {
            double p1 = want / 2, tol = 2 * (5 * sqrt(p1 * (1 - p1) / R) + 1.0 / (R + 1));
            ck_assert_msg(fabs(p - want) <= tol, "%s: Monte Carlo p %.6f, scipy exact %.6f, tolerance %.6f",
                          set_name(set), p, want, tol);
            mc_sets++;
        }
        free(d);
    }
    ck_assert(exact_sets >= 7 && mc_sets >= 1);
    cJSON_Delete(root);
}
END_TEST

/* scipy.stats.bootstrap(method='percentile', confidence_level=0.95, n_resamples=B = 100000).
 * Ours and scipy's draw different resamples, so the ends agree only up to Monte Carlo error.
 * The end at level p is an order statistic of B draws: its level F(end) has sd
 * s = sqrt(p (1 - p)/B) (= 4.9e-4 at p = 0.025), so each estimate lies between the bootstrap
 * distribution's quantiles at p - 5s and p + 5s except with probability 6e-7, and the two
 * estimates differ by at most that band's width. The tolerance is the band's width read from
 * our own B resampled means (+1e-12 for rounding). For a smooth, normal-shaped bootstrap
 * distribution it is 10 s / phi(1.96) = 0.085 standard errors of the mean; on a discrete one
 * (n = 3, ties) it is 0 when the level falls inside an atom and an atom's gap when it falls
 * near its edge. The test also requires the band to be below 5% of the interval's width,
 * so the comparison cannot pass by being loose. */
START_TEST(test_fixture_bootstrap) {
    enum { B = 100000 };
    cJSON *root = load_fixture(), *set;
    ck_assert(num(root, "bootstrap_resamples") == B);
    double level = num(root, "level"), *means = malloc(B * sizeof *means);
    ck_assert_ptr_nonnull(means);
    double q[2] = {(1 - level) / 2, (1 + level) / 2}, s = 5 * sqrt(q[0] * (1 - q[0]) / B);
    cJSON_ArrayForEach(set, cJSON_GetObjectItemCaseSensitive(root, "sets")) {
        int n;
        double *d = num_array(set, "d", &n), want[2] = {num(set, "ci_lo"), num(set, "ci_hi")}, got[2];
        ck_assert_int_eq(qkv_stats_bootstrap_ci(d, n, B, level, 99, &got[0], &got[1]), 0);
        ck_assert_int_eq(qkv_stats_bootstrap_means(d, n, B, 99, means), 0);
        qsort(means, B, sizeof *means, cmp_double);
        for (int e = 0; e < 2; e++) {
            ck_assert(got[e] == qkv_stats_percentile_sorted(means, B, q[e]));
            double tol = qkv_stats_percentile_sorted(means, B, q[e] + s) -
                         qkv_stats_percentile_sorted(means, B, q[e] - s) + 1e-12;
            ck_assert_msg(tol <= 0.05 * (want[1] - want[0]) + 1e-12, "%s: tolerance %g too loose for [%g, %g]",
                          set_name(set), tol, want[0], want[1]);
            ck_assert_msg(fabs(got[e] - want[e]) <= tol, "%s: %s end %.9f, scipy %.9f, tolerance %.3g",
                          set_name(set), e ? "upper" : "lower", got[e], want[e], tol);
        }
        free(d);
    }
    free(means);
    cJSON_Delete(root);
}
END_TEST

/* numpy.percentile's default ('linear') on unsorted lists, to 1e-12 */
START_TEST(test_fixture_percentiles) {
    cJSON *root = load_fixture(), *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(root, "percentiles")) {
        int n, nq, nv;
        double *x = num_array(c, "x", &n), *q = num_array(c, "q", &nq), *v = num_array(c, "value", &nv);
        ck_assert(nq == nv);
        qsort(x, (size_t)n, sizeof *x, cmp_double);
        for (int i = 0; i < nq; i++) {
            double got = qkv_stats_percentile_sorted(x, n, q[i]);
            ck_assert_msg(qkv_test_close(got, v[i], EPS, EPS), "n = %d, q = %g: %.17g, numpy %.17g", n, q[i], got, v[i]);
        }
        free(x), free(q), free(v);
    }
    cJSON_Delete(root);
}
END_TEST

/* Holm from the definition in the script (null = NaN p, skipped), to 1e-12, and the rejections */
START_TEST(test_fixture_holm) {
    cJSON *root = load_fixture(), *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(root, "holm")) {
        int m, ma;
        double *p = num_array(c, "p", &m), *want = num_array(c, "adjusted", &ma), *adj = malloc((size_t)m * sizeof *adj);
        bool *rej = malloc((size_t)m * sizeof *rej);
        const cJSON *wr = cJSON_GetObjectItemCaseSensitive(c, "rejected");
        ck_assert(ma == m && adj && rej && cJSON_GetArraySize(wr) == m);
        ck_assert(qkv_stats_holm(p, m, num(c, "alpha"), adj, rej) >= 0);
        for (int i = 0; i < m; i++) {
            if (isnan(want[i])) ck_assert(isnan(adj[i]));
            else ck_assert_msg(qkv_test_close(adj[i], want[i], EPS, EPS), "adjusted[%d] %.17g, want %.17g", i, adj[i], want[i]);
            ck_assert(rej[i] == cJSON_IsTrue(cJSON_GetArrayItem(wr, i)));
        }
        free(p), free(want), free(adj), free(rej);
    }
    cJSON_Delete(root);
}
END_TEST

Suite *stats_suite(void) {
    Suite *s = suite_create("stats");
    TCase *tc = tcase_create("hand");
    tcase_add_test(tc, test_mean_sd_hand);
    tcase_add_test(tc, test_percentile_hand);
    tcase_add_test(tc, test_signflip_hand);
    tcase_add_test(tc, test_fisher_hand);
    tcase_add_test(tc, test_signflip_monte_carlo_determinism);
    tcase_add_test(tc, test_holm_hand);
    tcase_add_test(tc, test_median_censored);
    tcase_add_test(tc, test_bootstrap_hand);
    tcase_add_test(tc, test_bootstrap_determinism);
    suite_add_tcase(s, tc);
    TCase *fx = tcase_create("scipy");
    tcase_add_test(fx, test_fixture_mean_sd);
    tcase_add_test(fx, test_fixture_signflip_p);
    tcase_add_test(fx, test_fixture_bootstrap);
    tcase_add_test(fx, test_fixture_percentiles);
    tcase_add_test(fx, test_fixture_holm);
    suite_add_tcase(s, fx);
    return s;
}
