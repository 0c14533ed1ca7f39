/* The shape of a head's score (src/nn/score.c): the symmetry score and the negative share of the
 * symmetric part's eigenvalues, on hand-built matrices with known answers. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "nn/score.h"
#include "suites.h"
#include "tensor/rng.h"

#define D 6

/* a (d,d) matrix of normal draws */
static void random_matrix(double *m, int d, uint64_t seed) {
    qkv_rng r;
    qkv_rng_seed(&r, seed);
    for (int i = 0; i < d * d; i++) m[i] = qkv_rng_normal(&r);
}

START_TEST(score_symmetric_antisymmetric_identity) {
    double a[D * D], m[D * D];
    qkv_score_stats s;
    random_matrix(a, D, 1);
    /* symmetric: 1 */
    for (int i = 0; i < D; i++)
        for (int j = 0; j < D; j++) m[i * D + j] = a[i * D + j] + a[j * D + i];
    ck_assert_int_eq(qkv_score_stats_of(m, D, &s), 0);
    ck_assert_double_eq_tol(s.symmetry, 1, 1e-12);
    ck_assert(s.negative_mass > 0 && s.negative_mass < 1); /* a random symmetric matrix is indefinite */
    /* antisymmetric: -1, and its symmetric part is 0 (no eigenvalue mass) */
    for (int i = 0; i < D; i++)
        for (int j = 0; j < D; j++) m[i * D + j] = a[i * D + j] - a[j * D + i];
    ck_assert_int_eq(qkv_score_stats_of(m, D, &s), 0);
    ck_assert_double_eq_tol(s.symmetry, -1, 1e-12);
    ck_assert(isnan(s.negative_mass));
    /* the identity (identity attention, and the start of qk_tied with init identity): 1, no
     * negative mass */
    for (int i = 0; i < D * D; i++) m[i] = i % (D + 1) == 0;
    ck_assert_int_eq(qkv_score_stats_of(m, D, &s), 0);
    ck_assert_double_eq_tol(s.symmetry, 1, 1e-15);
    ck_assert_double_eq_tol(s.negative_mass, 0, 1e-15);
    /* diag(1, -1, 2, -2, 3, -3): symmetric, half its mass negative */
    for (int i = 0; i < D * D; i++) m[i] = 0;
    for (int i = 0; i < D; i++) m[i * D + i] = (i % 2 ? -1 : 1) * (double)(i / 2 + 1);
    ck_assert_int_eq(qkv_score_stats_of(m, D, &s), 0);
    ck_assert_double_eq_tol(s.symmetry, 1, 1e-15);
    ck_assert_double_eq_tol(s.negative_mass, 0.5, 1e-12);
    /* zero: neither */
    for (int i = 0; i < D * D; i++) m[i] = 0;
    ck_assert_int_eq(qkv_score_stats_of(m, D, &s), 0);
    ck_assert(isnan(s.symmetry) && isnan(s.negative_mass));
    ck_assert_int_eq(qkv_score_stats_of(m, 0, &s), -1);
}
END_TEST

/* a tied W W^T is positive semi-definite; a general product W_q W_k^T is neither symmetric nor
 * antisymmetric, and S + t A moves the score from 1 towards -1 as (1 - t^2) / (1 + t^2) */
START_TEST(score_tied_general_and_mixed) {
    double wq[D * D], wk[D * D], m[D * D], s_[D * D], a_[D * D];
    qkv_score_stats s;
    random_matrix(wq, D, 2);
    random_matrix(wk, D, 3);
    for (int i = 0; i < D; i++) /* M = W W^T */
        for (int j = 0; j < D; j++) {
            double t = 0;
            for (int c = 0; c < D; c++) t += wq[i * D + c] * wq[j * D + c];
            m[i * D + j] = t;
        }
    ck_assert_int_eq(qkv_score_stats_of(m, D, &s), 0);
    ck_assert_double_eq_tol(s.symmetry, 1, 1e-12);
    ck_assert_double_eq_tol(s.negative_mass, 0, 1e-12);
    for (int i = 0; i < D; i++) /* M = W_q W_k^T */
        for (int j = 0; j < D; j++) {
            double t = 0;
            for (int c = 0; c < D; c++) t += wq[i * D + c] * wk[j * D + c];
            m[i * D + j] = t;
        }
    ck_assert_int_eq(qkv_score_stats_of(m, D, &s), 0);
    ck_assert(s.symmetry > -1 + 1e-3 && s.symmetry < 1 - 1e-3);
    /* S + t A with |S| = |A|: (1 - t^2) / (1 + t^2) */
    double ns = 0, na = 0;
    for (int i = 0; i < D; i++)
        for (int j = 0; j < D; j++) {
            s_[i * D + j] = wq[i * D + j] + wq[j * D + i];
            a_[i * D + j] = wk[i * D + j] - wk[j * D + i];
            ns += s_[i * D + j] * s_[i * D + j];
            na += a_[i * D + j] * a_[i * D + j];
        }
    double t = 0.5, k = sqrt(ns / na);
    for (int i = 0; i < D * D; i++) m[i] = s_[i] + t * k * a_[i];
    ck_assert_int_eq(qkv_score_stats_of(m, D, &s), 0);
    ck_assert_double_eq_tol(s.symmetry, (1 - t * t) / (1 + t * t), 1e-12);
}
END_TEST

Suite *score_suite(void) {
    Suite *s = suite_create("score");
    TCase *tc = tcase_create("stats");
    tcase_add_test(tc, score_symmetric_antisymmetric_identity);
    tcase_add_test(tc, score_tied_general_and_mixed);
    suite_add_tcase(s, tc);
    return s;
}
