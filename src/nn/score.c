/* The shape of a score matrix (score.h): its symmetry score and the negative share of its
 * symmetric part's eigenvalues, the latter from LAPACK (OpenBLAS ships it). */
#include "nn/score.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* LAPACK's symmetric eigensolver (Fortran interface, as OpenBLAS exports it): the eigenvalues of
 * the n x n symmetric a (column-major; overwritten) into w, ascending */
extern void dsyev_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w,
                   double *work, const int *lwork, int *info);

int qkv_score_stats_of(const double *M, int d, qkv_score_stats *out) {
    out->symmetry = out->negative_mass = NAN;
    if (!M || d < 1) return -1;
    size_t n = (size_t)d * (size_t)d;
    double *s = malloc(n * sizeof *s), *w = malloc((size_t)d * sizeof *w);
    int lwork = 3 * d > 1 ? 3 * d : 1;
    double *work = malloc((size_t)lwork * sizeof *work);
    if (!s || !w || !work) {
        free(s); free(w); free(work);
        return -1;
    }
    double sym2 = 0, anti2 = 0;
    for (int i = 0; i < d; i++)
        for (int j = 0; j < d; j++) {
            double a = M[(size_t)i * d + j], b = M[(size_t)j * d + i];
            double ms = 0.5 * (a + b), ma = 0.5 * (a - b);
            s[(size_t)i * d + j] = ms; /* symmetric: row- and column-major alike */
            sym2 += ms * ms;
            anti2 += ma * ma;
        }
    if (sym2 + anti2 > 0) out->symmetry = (sym2 - anti2) / (sym2 + anti2); /* |M|^2 = |M_s|^2 + |M_a|^2 */
    int info = 0;
    dsyev_("N", "U", &d, s, &d, w, work, &lwork, &info);
    if (info == 0) {
        /* eigenvalues within dsyev's accuracy of 0 (d eps max|lambda|) are 0: the zeros of a
         * rank-deficient M_s (W W^T with W of head_dim < d_model rows) must not count as negative */
        double top = 0, neg = 0, all = 0;
        for (int i = 0; i < d; i++) top = fabs(w[i]) > top ? fabs(w[i]) : top;
        double tol = (double)d * DBL_EPSILON * top;
        for (int i = 0; i < d; i++) {
            if (fabs(w[i]) <= tol) continue;
            all += fabs(w[i]);
            if (w[i] < 0) neg -= w[i];
        }
        if (all > 0) out->negative_mass = neg / all;
    }
    free(s); free(w); free(work);
    return 0; /* a dsyev that did not converge (info > 0) leaves negative_mass NaN: nothing to say */
}

int qkv_attention_score_dim(const qkv_attention *a) { return a->cfg.qkv == QKV_ATTN_HEAD_SHARED ? a->hd : a->d; }

/* rows [r0, r0 + n) of the (out, in) weight l->w (float or double) into A (n, in), as doubles */
static void rows_of(const qkv_linear_layer *l, int r0, int n, double *A) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < l->in; j++) A[(size_t)i * l->in + j] = qkv_tensor_get(l->w, (int64_t)(r0 + i) * l->in + j);
}

/* A (n, din) = the map of x to components [c0, c0 + n) of the role's head vector for head h
 * (role 0 query, 1 key): the head's rows of its projection, or of x itself */
static int head_map(const qkv_attention *a, int role, int h, int c0, int n, double *A) {
    int din = qkv_attention_score_dim(a), hd = a->hd, kh = h / (a->heads / a->kvh);
    const qkv_attn_config *c = &a->cfg;
    memset(A, 0, (size_t)n * din * sizeof *A);
    if (c->qkv == QKV_ATTN_HEAD_SHARED) { /* (hd,hd) maps of the head's slice */
        rows_of(role ? &a->wk : &a->wq, c0, n, A);
        return 0;
    }
    if (c->qkv == QKV_ATTN_IDENTITY || (role == 0 && !a->wq.w) || (role == 1 && !a->wk.w && c->qkv == QKV_ATTN_FULL)) {
        for (int i = 0; i < n; i++) A[(size_t)i * din + (size_t)h * hd + c0 + i] = 1; /* the head's slice of x */
        return 0;
    }
    bool shared_w = c->qkv == QKV_ATTN_SHARED || c->qkv == QKV_ATTN_QK_TIED; /* one matrix for Q and K */
    const qkv_linear_layer *l = role == 0 || shared_w ? &a->wq : &a->wk;
    int head = role == 0 || shared_w ? h : kh;
    if (role == 1 && a->wdown.w) { /* k = W_uk (W_down x): (n, r) (r, d) */
        int r = a->wdown.out;
        double *U = malloc((size_t)n * r * sizeof *U);
        if (!U) return -1;
        rows_of(l, head * hd + c0, n, U);
        for (int i = 0; i < n; i++)
            for (int t = 0; t < r; t++)
                for (int j = 0; j < din; j++)
                    A[(size_t)i * din + j] += U[(size_t)i * r + t] * qkv_tensor_get(a->wdown.w, (int64_t)t * din + j);
        free(U);
        return 0;
    }
    rows_of(l, head * hd + c0, n, A);
    /* role_scale: q = (W x) s_q, k = (W x) s_k; qk_diag: q = (W x) D, the key unscaled */
    const qkv_tensor *sc = a->sq ? (role ? a->sk : a->sq) : a->qk_diag && role == 0 ? a->qk_diag : NULL;
    if (sc)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < din; j++) A[(size_t)i * din + j] *= qkv_tensor_get(sc, head * hd + c0 + i);
    return 0;
}

/* M = A_q^T A_k of head h's pair (before any mixing across heads) */
static int head_matrix(const qkv_attention *a, int h, int pair, double *M) {
    int din = qkv_attention_score_dim(a), n = a->cfg.diff ? a->hd / 2 : a->hd, c0 = pair * n;
    double *Aq = malloc((size_t)n * din * sizeof *Aq), *Ak = malloc((size_t)n * din * sizeof *Ak);
    int rc = !Aq || !Ak || head_map(a, 0, h, c0, n, Aq) || head_map(a, 1, h, c0, n, Ak) ? -1 : 0;
    if (!rc)
        for (int i = 0; i < din; i++)
            for (int j = 0; j < din; j++) {
                double t = 0;
                for (int c = 0; c < n; c++) t += Aq[(size_t)c * din + i] * Ak[(size_t)c * din + j];
                M[(size_t)i * din + j] = t;
            }
    free(Aq);
    free(Ak);
    return rc;
}

int qkv_attention_score_matrix(const qkv_attention *a, int head, int pair, double *M) {
    if (!a || !M || head < 0 || head >= a->heads || pair < 0 || pair > (a->cfg.diff ? 1 : 0)) return -1;
    if (!a->th_logits) return head_matrix(a, head, pair, M);
    /* talking heads: the head's scores are sum_g L[head][g] (scores of g) */
    int din = qkv_attention_score_dim(a);
    size_t nn = (size_t)din * din;
    double *Mg = malloc(nn * sizeof *Mg);
    if (!Mg) return -1;
    memset(M, 0, nn * sizeof *M);
    int rc = 0;
    for (int g = 0; g < a->heads && !rc; g++) {
        double w = qkv_tensor_get(a->th_logits, (int64_t)head * a->heads + g);
        if (w == 0) continue;
        rc = head_matrix(a, g, pair, Mg);
        for (size_t i = 0; !rc && i < nn; i++) M[i] += w * Mg[i];
    }
    free(Mg);
    return rc;
}
