/* The shape of an attention head's score. A head scores query position i against key position j
 * with a bilinear form of the two inputs, x_i^T M x_j, with M = W_q^h (W_k^h)^T in the input's
 * coordinates (before scaling, biases and masks): a tied Q = K makes M symmetric and positive
 * semi-definite, a general pair of projections lets it be directional. These numbers say which
 * a trained head's M is (Saponati et al.'s symmetry score; docs/ablate.md). */
#ifndef QKV_NN_SCORE_H
#define QKV_NN_SCORE_H

#include "qkv_api.h"

#include "nn/attention.h"

/* What one score matrix is like. */
typedef struct qkv_score_stats {
    double symmetry;       /* (|M_s|^2 - |M_a|^2) / |M|^2 (Frobenius norms of the symmetric and
                              antisymmetric parts): 1 symmetric, -1 antisymmetric, 0 neither; NaN for M = 0 */
    double negative_mass;  /* sum |lambda| over the negative eigenvalues of M_s / sum |lambda| over all:
                              0 for a positive semi-definite M_s (a tied Q = K); NaN for M_s = 0 */
} qkv_score_stats;

/* M: (d,d) row-major doubles (not changed) -> its symmetry score and the negative share of its
 * symmetric part's eigenvalue mass (LAPACK's dsyev, from OpenBLAS; NaN if it does not converge).
 * 0, or -1 when d < 1 or out of memory */
QKV_API int qkv_score_stats_of(const double *M, int d, qkv_score_stats *out);

/* The side of head h's score matrix: the module's input width d_model, or head_dim for
 * head_shared, whose maps act on each head's slice of the input */
QKV_API int qkv_attention_score_dim(const qkv_attention *a);
/* Head h's score matrix M (qkv_attention_score_dim(a) squared doubles, row-major):
 *   M = A_q^T A_k, where q_h = A_q x and k_h = A_k x are the head's query and key maps of the input
 * (x's slice for Q = X or K = X or identity, W rows of the head otherwise; through the latent with
 * kv_latent, times the role scales with role_scale, the query's times D with qk_diag; the key head of h with kv_heads). diff: the
 * first (pair 0) or the second (pair 1) map's half-width pair. talking_heads: the scores are mixed
 * across heads before the softmax, so M_h = sum_g L[h][g] M_g with L the logits' mixing map.
 * Not changed by scaling, biases or masks. 0, or -1 (a head or pair out of range, out of memory) */
QKV_API int qkv_attention_score_matrix(const qkv_attention *a, int head, int pair, double *M);

#endif
