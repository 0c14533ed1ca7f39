/* The statistics of qkv ablate's verdicts (see stats.h for the math of each function). */
#include "ablate/stats.h"

#include <math.h>
#include <stdlib.h>

#include "tensor/rng.h"

static bool any_nan(const double *x, int n) {
    for (int i = 0; i < n; i++)
        if (isnan(x[i])) return true;
    return false;
}

static int cmp_double(const void *pa, const void *pb) {
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* (1/n) sum x_i computed as x_0 + (1/n) sum (x_i - x_0), so constant data give their value exactly */
static double shifted_mean(const double *x, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += x[i] - x[0];
    return x[0] + s / n;
}

double qkv_stats_mean(const double *x, int n) {
    if (!x || n < 1) return NAN;
    return shifted_mean(x, n);
}

double qkv_stats_sd(const double *x, int n) {
    if (!x || n < 2) return NAN;
    double m = shifted_mean(x, n), ss = 0;
    for (int i = 0; i < n; i++) ss += (x[i] - m) * (x[i] - m);
    return sqrt(ss / (n - 1));
}

double qkv_stats_percentile_sorted(const double *sorted, int n, double q) {
    if (!sorted || n < 1 || !(q >= 0 && q <= 1)) return NAN;
    double h = (n - 1) * q;
    if (h >= n - 1) return sorted[n - 1];
    int i = (int)floor(h);
    double t = h - i, a = sorted[i], b = sorted[i + 1], diff = b - a;
    /* numpy's _lerp: from the nearer end, so t = 1 gives b exactly */
    return t >= 0.5 ? b - diff * (1 - t) : a + diff * t;
}

int qkv_stats_bootstrap_means(const double *x, int n, int resamples, uint64_t seed, double *means) {
    if (!x || !means || n < 1 || resamples < 1 || any_nan(x, n)) return -1;
    qkv_rng rng;
    qkv_rng_seed(&rng, seed);
    for (int b = 0; b < resamples; b++) {
        double s = 0;
        for (int j = 0; j < n; j++) s += x[qkv_rng_below(&rng, (uint64_t)n)] - x[0];
        means[b] = x[0] + s / n;
    }
    return 0;
}

int qkv_stats_bootstrap_ci(const double *x, int n, int resamples, double level, uint64_t seed,
                           double *lo, double *hi) {
    if (!lo || !hi) return -1;
    *lo = *hi = NAN;
    if (!(level > 0 && level < 1) || resamples < 1) return -1;
    double *means = malloc((size_t)resamples * sizeof *means);
    if (!means || qkv_stats_bootstrap_means(x, n, resamples, seed, means) != 0) {
        free(means);
        return -1;
    }
    qsort(means, (size_t)resamples, sizeof *means, cmp_double);
    *lo = qkv_stats_percentile_sorted(means, resamples, (1 - level) / 2);
    *hi = qkv_stats_percentile_sorted(means, resamples, (1 + level) / 2);
    free(means);
    return 0;
}

int qkv_stats_bootstrap_ci_paired(const double *a, const double *b, int n, int resamples, double level,
                                  uint64_t seed, double *lo, double *hi) {
    if (!lo || !hi) return -1;
    *lo = *hi = NAN;
    if (!a || !b || n < 1) return -1;
    double *d = malloc((size_t)n * sizeof *d);
    if (!d) return -1;
    for (int i = 0; i < n; i++) d[i] = a[i] - b[i];
    int rc = qkv_stats_bootstrap_ci(d, n, resamples, level, seed, lo, hi);
    free(d);
    return rc;
}

double qkv_stats_signflip_p(const double *d, int n, int resamples, uint64_t seed) {
    if (!d || n < 1 || any_nan(d, n)) return NAN;
    bool exact = n <= QKV_STATS_EXACT_MAX;
    if (!exact && resamples < 1) return NAN;
    double s = 0;
    for (int i = 0; i < n; i++) s += d[i];
    double t = s / n, g = fmax(1e-14, fabs(1e-14 * t));
    int64_t patterns = exact ? (int64_t)1 << n : resamples, le = 0, ge = 0;
    qkv_rng rng;
    qkv_rng_seed(&rng, seed);
    for (int64_t k = 0; k < patterns; k++) {
        double sk = 0;   /* pattern k: bit i set flips d_i (k = 0 is the observed sum, exactly) */
        for (int i = 0; i < n; i++) {
            bool flip = exact ? (k >> i) & 1 : qkv_rng_below(&rng, 2) != 0;
            sk += flip ? -d[i] : d[i];
        }
        double tk = sk / n;
        le += tk <= t + g;
        ge += tk >= t - g;
    }
    double adj = exact ? 0 : 1, pl = (le + adj) / (patterns + adj), pg = (ge + adj) / (patterns + adj);
    return fmin(1.0, 2 * fmin(pl, pg));
}

typedef struct { double p; int i; } p_index;

static int cmp_p_index(const void *pa, const void *pb) {
    const p_index *a = pa, *b = pb;
    if (a->p != b->p) return (a->p > b->p) - (a->p < b->p);
    return (a->i > b->i) - (a->i < b->i);
}

int qkv_stats_holm(const double *p, int m, double alpha, double *adjusted, bool *rejected) {
    if (!p || !adjusted || !rejected || m < 0) return -1;
    for (int i = 0; i < m; i++) { adjusted[i] = NAN; rejected[i] = false; }
    if (isnan(alpha)) return -1;
    p_index *s = malloc((size_t)(m > 0 ? m : 1) * sizeof *s);
    if (!s) return -1;
    int k = 0;
    for (int i = 0; i < m; i++) {
        if (isnan(p[i])) continue;
        if (p[i] < 0 || p[i] > 1) { free(s); return -1; }
        s[k++] = (p_index){p[i], i};
    }
    qsort(s, (size_t)k, sizeof *s, cmp_p_index);
    double run = 0;
    int n_rejected = 0;
    for (int j = 0; j < k; j++) {
        run = fmax(run, fmin(1.0, (k - j) * s[j].p));   /* (m - j + 1) p_(j) with j from 1 */
        adjusted[s[j].i] = run;
        rejected[s[j].i] = run <= alpha;
        n_rejected += run <= alpha;
    }
    free(s);
    return n_rejected;
}

double qkv_stats_median_censored(const double *v, const bool *censored, int n) {
    if (!v || !censored || n < 1) return NAN;
    double *u = malloc((size_t)n * sizeof *u);
    if (!u) return NAN;
    int nu = 0;
    for (int i = 0; i < n; i++) {
        if (censored[i]) continue;
        if (isnan(v[i])) { free(u); return NAN; }
        u[nu++] = v[i];
    }
    qsort(u, (size_t)nu, sizeof *u, cmp_double);
    /* ascending: the nu finished values, then the censored ones (+infinity) */
    int hi = n / 2;
    double r = hi >= nu ? INFINITY : n % 2 ? u[hi] : (u[hi - 1] + u[hi]) / 2;
    free(u);
    return r;
}

/* log P(X = x) of the hypergeometric law of the table's top-left cell: rows n1, n2, first column k */
static double log_hypergeom(int x, int n1, int n2, int k) {
    return lgamma(n1 + 1.0) - lgamma(x + 1.0) - lgamma(n1 - x + 1.0) + lgamma(n2 + 1.0) - lgamma(k - x + 1.0) -
           lgamma(n2 - k + x + 1.0) - (lgamma(n1 + n2 + 1.0) - lgamma(k + 1.0) - lgamma(n1 + n2 - k + 1.0));
}

double qkv_stats_fisher_p(int a, int b, int c, int d) {
    if (a < 0 || b < 0 || c < 0 || d < 0 || a + b + c + d == 0) return NAN;
    int n1 = a + b, n2 = c + d, k = a + c, lo = k - n2 > 0 ? k - n2 : 0, hi = k < n1 ? k : n1;
    double observed = log_hypergeom(a, n1, n2, k), p = 0;
    for (int x = lo; x <= hi; x++) {
        double l = log_hypergeom(x, n1, n2, k);
        if (l <= observed + log1p(1e-7)) p += exp(l);
    }
    return p > 1 ? 1 : p;
}
