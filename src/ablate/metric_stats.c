/* Each variant's numbers on the metric of a qkv summarize column (findings.h): the ablation's own
 * statistics, scaled to the column's unit, or bits per byte computed from the chosen runs with
 * the bootstrap, sign-flip test, Holm correction and seeds that aggregate.c uses, so that the same
 * runs give the same numbers either way. */
#include "tensor/tensor.h"
#include "ablate/findings.h"
#include "ablate/stats.h"

#include <math.h>
#include <stdlib.h>

/* a finished run's bits per byte: its eval_bpb, else its eval loss / ln 2 (*from_loss set) */
static double run_bpb(const qkv_run_result *r, bool *from_loss) {
    if (!r->ok) return NAN;
    if (isfinite(r->eval_bpb)) return r->eval_bpb;
    if (isfinite(r->final_loss)) *from_loss = true;
    return r->final_loss / QKV_LN2;
}

/* bits per byte from the chosen runs: each variant's mean with its interval, and its comparison
 * with the baseline over the seeds both have bits for (aggregate.c's qkv__ablate_compare) */
static int bpb_stats(const qkv_ablate_results *r, qkv_metric_stats *out, bool *from_loss) {
    int nv = r->cfg->n_variants, ns = r->cfg->n_seeds;
    double *x = calloc((size_t)nv * ns + 1, sizeof *x), *m = calloc((size_t)ns + 1, sizeof *m);
    bool *counted = calloc((size_t)nv * ns + 1, sizeof *counted);
    qkv_variant_result *cmp = calloc((size_t)nv + 1, sizeof *cmp);
    int rc = x && m && counted && cmp ? 0 : -1;
    for (int k = 0; !rc && k < nv * ns; k++) {
        x[k] = run_bpb(qkv__ablate_chosen(r, k / ns, k % ns), from_loss);
        counted[k] = isfinite(x[k]);
    }
    if (!rc && qkv__ablate_compare(cmp, x, counted, nv, ns, r->cfg->baseline) < 0) rc = -1;
    for (int i = 0; !rc && i < nv; i++) {
        qkv_metric_stats *c = &out[i];
        int n = 0;
        for (int s = 0; s < ns; s++)
            if (counted[i * ns + s]) m[n++] = x[i * ns + s];
        c->mean = qkv_stats_mean(m, n);
        qkv_stats_bootstrap_ci(m, n, QKV_ABLATE_RESAMPLES, QKV_ABLATE_LEVEL, QKV_ABLATE_SEED_MEANS(i) + 1, &c->lo,
                               &c->hi);
        const qkv_variant_result *v = &cmp[i];
        c->delta = v->delta;
        c->delta_lo = v->delta_ci_lo;
        c->delta_hi = v->delta_ci_hi;
        c->p = v->p_value;
        c->p_holm = v->p_holm;
        c->significant = v->significant;
    }
    free(x);
    free(m);
    free(counted);
    free(cmp);
    return rc;
}

int qkv__ablate_metric_stats(const qkv_ablate_results *r, qkv_ablate_metric m, qkv_metric_stats *out,
                             bool *computed, bool *from_loss) {
    const qkv_ablate_config *c = r->cfg;
    *computed = *from_loss = false;
    bool eval_bpb = false, all = true; /* whether every finished chosen run records eval_bpb */
    for (int i = 0; i < c->n_variants; i++)
        for (int s = 0; s < c->n_seeds; s++)
            if (qkv__ablate_chosen(r, i, s)->ok) {
                eval_bpb = true;
                all &= isfinite(qkv__ablate_chosen(r, i, s)->eval_bpb);
            }
    if (m == QKV_METRIC_BPB && ((eval_bpb && all) || c->metric == QKV_METRIC_ACCURACY)) {
        *computed = true;
        return bpb_stats(r, out, from_loss);
    }
    /* the ablation's own: accuracy, its loss in nats, or in bits (its differences are in bits already
     * when it compared on bpb; a loss's are in nats, and scaling changes neither p nor the verdict) */
    bool acc = m == QKV_METRIC_ACCURACY;
    double k = m == QKV_METRIC_BPB ? 1 / QKV_LN2 : 1, kd = c->metric == QKV_METRIC_LOSS ? k : 1;
    *from_loss = m == QKV_METRIC_BPB;
    for (int i = 0; i < c->n_variants; i++) {
        const qkv_variant_result *v = &r->v[i];
        out[i] = (qkv_metric_stats){acc ? v->acc_mean : v->loss_mean * k, acc ? v->acc_ci_lo : v->loss_ci_lo * k,
                                    acc ? v->acc_ci_hi : v->loss_ci_hi * k, v->delta * kd, v->delta_ci_lo * kd,
                                    v->delta_ci_hi * kd, v->p_value, v->p_holm, v->significant};
    }
    return 0;
}
