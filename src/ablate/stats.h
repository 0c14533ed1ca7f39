/* The statistics behind qkv ablate's verdicts: mean and sd, the percentile bootstrap interval
 * of a mean, the paired sign-flip permutation test, Holm's correction and medians of
 * right-censored values. The conventions follow numpy.percentile ('linear') and
 * scipy.stats.permutation_test (tests/fixtures/stats.json, written by
 * scripts/stats_fixtures.py, holds scipy's answers). Random draws come from qkv's seeded
 * generator, so the same seed gives the same numbers on every machine.
 *
 * Bad input (n < 1, a NaN, a failed allocation) never aborts: the result is NaN or -1. */
#ifndef QKV_ABLATE_STATS_H
#define QKV_ABLATE_STATS_H

#include "qkv_api.h"

#include <stdbool.h>
#include <stdint.h>

/* largest n for which the sign-flip test enumerates all 2^n patterns */
#define QKV_STATS_EXACT_MAX 20

/* m = (1/n) sum_i x_i; NaN if n < 1 */
QKV_APP_API double qkv_stats_mean(const double *x, int n);
/* s = sqrt(sum_i (x_i - m)^2 / (n - 1)), the sample sd (numpy ddof=1); NaN if n < 2 */
QKV_APP_API double qkv_stats_sd(const double *x, int n);
/* numpy.percentile(x, 100 q) of ascending x: h = (n-1) q, i = floor h, x_i + (h-i)(x_{i+1} - x_i);
 * NaN if n < 1 or q is not in [0, 1] */
QKV_APP_API double qkv_stats_percentile_sorted(const double *sorted, int n, double q);
/* means[b] = (1/n) sum_j x_{I_bj}, I_bj uniform on 0..n-1 from the generator seeded with seed,
 * b < resamples; returns 0, or -1 (n < 1, resamples < 1, a NaN in x) */
QKV_APP_API int qkv_stats_bootstrap_means(const double *x, int n, int resamples, uint64_t seed, double *means);
/* lo, hi = the (1-level)/2 and (1+level)/2 percentiles of `resamples` bootstrap means;
 * n = 1 gives [x, x]; returns 0, or -1 with lo = hi = NaN (n < 1, a NaN, level not in (0, 1)) */
QKV_APP_API int qkv_stats_bootstrap_ci(const double *x, int n, int resamples, double level, uint64_t seed,
                           double *lo, double *hi);
/* qkv_stats_bootstrap_ci of the paired differences d_i = a_i - b_i */
QKV_APP_API int qkv_stats_bootstrap_ci_paired(const double *a, const double *b, int n, int resamples, double level,
                                  uint64_t seed, double *lo, double *hi);
/* two-sided sign-flip p of mean(d) = 0, as scipy.stats.permutation_test: t = mean(d), T = mean(s_i d_i),
 * g = max(1e-14, 1e-14 |t|), p = min(1, 2 min(#{T <= t+g} + a, #{T >= t-g} + a) / (N + a)) over
 * all N = 2^n sign patterns (a = 0) when n <= QKV_STATS_EXACT_MAX, else N = resamples random
 * ones (a = 1); NaN if n < 1, a NaN in d, or resamples < 1 when they are needed */
QKV_APP_API double qkv_stats_signflip_p(const double *d, int n, int resamples, uint64_t seed);
/* Holm: with the m non-NaN p ascending, adj_(i) = max_{j <= i} min(1, (m - j + 1) p_(j));
 * rejected = adj <= alpha (NaN p: adj NaN, not rejected); returns the number rejected, or -1 */
QKV_APP_API int qkv_stats_holm(const double *p, int m, double alpha, double *adjusted, bool *rejected);
/* Fisher's exact test of the 2x2 table [[a, b], [c, d]] (e.g. solved and unsolved seeds of two
 * variants), two-sided as scipy.stats.fisher_exact: with the margins fixed, the sum of the
 * hypergeometric probabilities of every table no more likely than the observed one (within a
 * relative 1e-7); NaN if a count is negative or the table is empty */
QKV_APP_API double qkv_stats_fisher_p(int a, int b, int c, int d);
/* median of v with censored values taken as +infinity: the middle value, or the mean of the two
 * middle values for even n; +INFINITY if a censored value is needed (the median is not reached),
 * NaN if n < 1 or an uncensored value is NaN */
QKV_APP_API double qkv_stats_median_censored(const double *v, const bool *censored, int n);

#endif
