/* Each variant's gap to the baseline along training (findings.h): at each evaluated step, the
 * paired difference of the evaluation loss (or bits per byte) over the seeds where both runs
 * evaluated it, compared as aggregate.c compares the final results (the same pairing, bootstrap and
 * seeds: at a last step that is the runs' final evaluation, the report's own interval), and how the
 * gap moved from the middle step to the last. */
#include "tensor/tensor.h"
#include "ablate/curves.h"
#include "ablate/findings.h"
#include "ablate/stats.h"
#include "io/strbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* run's evaluation loss at step (its last record of it; in bits when bits), NaN where it has none */
static double at_step(const qkv_run_result *run, long long step, bool bits) {
    if (!run || !run->ok || !run->eval_loss) return NAN;
    for (int i = run->n - 1; i >= 0; i--)
        if (run->step[i] == step) return bits ? run->eval_loss[i] / QKV_LN2 : run->eval_loss[i];
    return NAN;
}

/* step i of curve c, as a choice in a message */
static void step_item(qkv_strbuf *b, const void *c, int i) {
    qkv__strbuf_printf(b, "%lld", (long long)((const qkv_ablate_curve *)c)->x[i]);
}

/* the steps asked for (n 0: every step of the baseline's curve), each one the baseline evaluated;
 * 0, or -1 with e */
static int pick_steps(qkv_ablate_gaps *g, const qkv_ablate_results *r, const long long *steps, int n, qkv_err *e) {
    const char *base = r->v[r->cfg->baseline].name;
    qkv_ablate_curve *c = qkv__ablate_curves(r);
    if (!c) return qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
    const qkv_ablate_curve *b = &c[r->cfg->baseline];
    int rc = 0, want = n ? n : b->n;
    if (!b->n)
        rc = qkv_err_set(e, QKV_ERR_FAIL, "no evaluation curves: no finished run of the baseline '%s' has one "
                         "(runs[].curve)", base);
    else if (!(g->steps = malloc((size_t)want * sizeof *g->steps))) rc = qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
    for (int i = 0; !rc && i < want; i++) {
        long long s = n ? steps[i] : (long long)b->x[i];
        int j = 0;
        while (j < b->n && (long long)b->x[j] != s) j++;
        if (j == b->n) {
            qkv_strbuf list;
            qkv__strbuf_init(&list);
            qkv__strbuf_list(&list, b->n, step_item, b);
            rc = qkv_err_set(e, QKV_ERR_FAIL, "step %lld: the baseline '%s' has no evaluation there (expected one of "
                             "%s)", s, base, qkv__strbuf_str(&list));
            qkv__strbuf_free(&list);
        }
        g->steps[g->n_steps++] = s;
    }
    qkv__ablate_curves_free(c, r->cfg->n_variants);
    return rc;
}

/* row v's change from the middle step to the last, and its trend (findings.h: qkv_gap_trend) */
static void trend(qkv_ablate_gaps *g, int v) {
    const qkv_gap *last = &g->at[(size_t)v * g->n_steps + g->n_steps - 1], *mid = &g->at[(size_t)v * g->n_steps + g->mid];
    double d = g->n_steps > 1 ? last->mean - mid->mean : NAN;
    g->change[v] = d;
    g->trend[v] = !isfinite(d)                               ? QKV_GAP_UNKNOWN
                  : fabs(d) < (last->hi - last->lo) / 2      ? QKV_GAP_FLAT
                  : fabs(last->mean) < fabs(mid->mean)       ? QKV_GAP_CLOSING
                                                             : QKV_GAP_WIDENING;
}

int qkv__ablate_gaps(qkv_ablate_gaps *g, const qkv_ablate_results *r, const long long *steps, int n, qkv_err *e) {
    const qkv_ablate_config *c = r->cfg;
    int nv = c->n_variants, ns = c->n_seeds, b = c->baseline;
    memset(g, 0, sizeof *g);
    if (c->metric == QKV_METRIC_ACCURACY)
        return qkv_err_set(e, QKV_ERR_FAIL, "metric: \"accuracy\", expected \"bpb\" or \"loss\" (a gap follows the "
                           "evaluation loss)");
    g->bits = c->metric == QKV_METRIC_BPB || !strcmp(r->task, "text");
    if (pick_steps(g, r, steps, n, e)) {
        qkv__ablate_gaps_free(g);
        return -1;
    }
    int k = g->n_steps;
    g->mid = (k - 1) / 2;
    g->at = calloc((size_t)nv * k, sizeof *g->at);
    g->change = calloc((size_t)nv, sizeof *g->change);
    g->trend = calloc((size_t)nv, sizeof *g->trend);
    double *x = calloc((size_t)nv * ns + 1, sizeof *x), *m = calloc((size_t)ns + 1, sizeof *m); /* x[v * ns + s] */
    bool *counted = calloc((size_t)nv * ns + 1, sizeof *counted);
    qkv_variant_result *cmp = calloc((size_t)nv, sizeof *cmp);
    int rc = g->at && g->change && g->trend && x && m && counted && cmp ? 0 : -1;
    for (int j = 0; !rc && j < k; j++) {
        for (int i = 0; i < nv * ns; i++) {
            x[i] = at_step(qkv__ablate_chosen(r, i / ns, i % ns), g->steps[j], g->bits);
            counted[i] = isfinite(x[i]);
        }
        if (qkv__ablate_compare(cmp, x, counted, nv, ns, b) < 0) rc = -1;
        for (int v = 0; !rc && v < nv; v++) {
            qkv_gap *a = &g->at[(size_t)v * k + j];
            *a = (qkv_gap){cmp[v].pairs, cmp[v].delta, cmp[v].delta_ci_lo, cmp[v].delta_ci_hi};
            if (v != b) continue;
            a->pairs = 0; /* the baseline's own mean, with metric_stats.c's interval of it */
            for (int s = 0; s < ns; s++)
                if (counted[b * ns + s]) m[a->pairs++] = x[b * ns + s];
            a->mean = qkv_stats_mean(m, a->pairs);
            qkv_stats_bootstrap_ci(m, a->pairs, QKV_ABLATE_RESAMPLES, QKV_ABLATE_LEVEL, QKV_ABLATE_SEED_MEANS(b) + 1,
                                   &a->lo, &a->hi);
        }
    }
    for (int v = 0; !rc && v < nv; v++) trend(g, v);
    free(x);
    free(m);
    free(counted);
    free(cmp);
    if (rc) {
        qkv__ablate_gaps_free(g);
        return qkv_err_set(e, QKV_ERR_FAIL, "out of memory");
    }
    return 0;
}

void qkv__ablate_gaps_free(qkv_ablate_gaps *g) {
    free(g->steps);
    free(g->at);
    free(g->change);
    free(g->trend);
    memset(g, 0, sizeof *g);
}
