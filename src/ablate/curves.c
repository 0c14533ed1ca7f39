/* The curves (curves.h): for each variant, the mean and the min-max band over its finished chosen
 * runs of each evaluated metric at each evaluated step. */
#include "ablate/curves.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* a run's values of metric k (NULL: not recorded); a new metric is a new case here */
static const double *metric(const qkv_run_result *run, int k) {
    switch (k) {
    case QKV_CURVE_ACC: return run->eval_acc;
    case QKV_CURVE_LOSS: return run->eval_loss;
    default: return NULL;
    }
}

/* the runs that contribute: finished, with evaluations */
static bool usable(const qkv_run_result *run) { return run && run->ok && run->step; }

/* ascending order of steps, for qsort */
static int cmp_ll(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* the union of the usable runs' steps, sorted and unique, in *steps (NULL when there are
 * none); the count, or -1 when out of memory */
static long long union_steps(const qkv_ablate_results *r, int v, long long **steps) {
    *steps = NULL;
    int ns = r->cfg->n_seeds;
    size_t total = 0;
    for (int s = 0; s < ns; s++) {
        const qkv_run_result *run = qkv__ablate_chosen(r, v, s);
        if (usable(run) && run->n > 0) total += (size_t)run->n;
    }
    if (total == 0) return 0;
    long long *st = malloc(total * sizeof *st);
    if (!st) return -1;
    size_t k = 0;
    for (int s = 0; s < ns; s++) {
        const qkv_run_result *run = qkv__ablate_chosen(r, v, s);
        if (usable(run) && run->n > 0)
            for (int i = 0; i < run->n; i++) st[k++] = run->step[i];
    }
    qsort(st, total, sizeof *st, cmp_ll);
    size_t u = 0;
    for (size_t i = 0; i < total; i++)
        if (u == 0 || st[i] != st[u - 1]) st[u++] = st[i];
    *steps = st;
    return (long long)u;
}

/* variant v over its finished runs; a step missing from some runs uses the others; 0 or -1 */
static int curve(qkv_ablate_curve *c, const qkv_ablate_results *r, int v) {
    memset(c, 0, sizeof *c);
    long long *steps;
    long long nu = union_steps(r, v, &steps);
    if (nu < 0) return -1;
    if (nu == 0) return 0;
    size_t u = (size_t)nu;
    /* one block: x, then mean, lo, hi per metric */
    c->x = malloc(u * (1 + 3 * QKV_CURVE_METRICS) * sizeof(double));
    if (!c->x) {
        free(steps);
        return -1;
    }
    c->n = (int)u;
    for (int k = 0; k < QKV_CURVE_METRICS; k++) {
        c->y[k].mean = c->x + (1 + 3 * k) * u;
        c->y[k].lo = c->x + (2 + 3 * k) * u;
        c->y[k].hi = c->x + (3 + 3 * k) * u;
    }
    for (size_t j = 0; j < u; j++) {
        c->x[j] = (double)steps[j];
        double sum[QKV_CURVE_METRICS] = {0}, lo[QKV_CURVE_METRICS], hi[QKV_CURVE_METRICS];
        int cnt[QKV_CURVE_METRICS] = {0};
        for (int k = 0; k < QKV_CURVE_METRICS; k++) {
            lo[k] = INFINITY;
            hi[k] = -INFINITY;
        }
        for (int s = 0; s < r->cfg->n_seeds; s++) {
            const qkv_run_result *run = qkv__ablate_chosen(r, v, s);
            if (!usable(run)) continue;
            int at = -1;
            for (int i = run->n - 1; i >= 0; i--)   /* the last record of a step wins */
                if (run->step[i] == steps[j]) {
                    at = i;
                    break;
                }
            if (at < 0) continue;
            for (int k = 0; k < QKV_CURVE_METRICS; k++) {
                const double *m = metric(run, k);
                double y = m ? m[at] : NAN;
                if (!isfinite(y)) continue;
                sum[k] += y;
                cnt[k]++;
                lo[k] = fmin(lo[k], y);
                hi[k] = fmax(hi[k], y);
            }
        }
        for (int k = 0; k < QKV_CURVE_METRICS; k++) {
            c->y[k].mean[j] = cnt[k] ? sum[k] / cnt[k] : NAN;
            c->y[k].lo[j] = cnt[k] ? lo[k] : NAN;
            c->y[k].hi[j] = cnt[k] ? hi[k] : NAN;
        }
    }
    free(steps);
    return 0;
}

qkv_ablate_curve *qkv__ablate_curves(const qkv_ablate_results *r) {
    int nv = r->cfg->n_variants;
    qkv_ablate_curve *c = calloc((size_t)nv + 1, sizeof *c);
    for (int i = 0; c && i < nv; i++)
        if (curve(&c[i], r, i)) {
            qkv__ablate_curves_free(c, nv);
            return NULL;
        }
    return c;
}

/* each curve's arrays share its x's allocation */
void qkv__ablate_curves_free(qkv_ablate_curve *c, int n) {
    for (int i = 0; c && i < n; i++) free(c[i].x);
    free(c);
}
