/* The shape of a score matrix (score.h): its symmetry score and the negative share of its
 * symmetric part's eigenvalues, the latter from LAPACK (OpenBLAS ships it). */
#include "nn/score.h"

#include <math.h>
#include <stdlib.h>

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
        double neg = 0, all = 0;
        for (int i = 0; i < d; i++) {
            all += fabs(w[i]);
            if (w[i] < 0) neg -= w[i];
        }
        if (all > 0) out->negative_mass = neg / all;
    }
    free(s); free(w); free(work);
    return info == 0 ? 0 : -1;
}
