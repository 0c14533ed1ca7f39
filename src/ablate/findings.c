/* The report's findings (findings.h): every variant against the baseline seed by seed on the
 * sweep's metric, and what its seeds can show with the sign-flip test and Holm's correction. */
#include "ablate/findings.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double qkv__signflip_pmin(int n) { return n >= 1 && n < 60 ? 2.0 / (double)(1ULL << n) : 0; }

/* variant v against the baseline b at each seed both finished: final results (accuracy lower is
 * worse, a loss higher) and when each reached the threshold */
static void pair_up(qkv_variant_finding *f, const qkv_ablate_results *r, int v, int b) {
    bool acc = r->cfg->metric == QKV_METRIC_ACCURACY;
    for (int s = 0; s < r->cfg->n_seeds; s++) {
        const qkv_run_result *x = qkv__ablate_chosen(r, v, s), *y = qkv__ablate_chosen(r, b, s);
        if (!x->ok || !y->ok) continue;
        f->solve_pairs++;
        long long sx = x->solved ? x->steps_to_threshold : -1, sy = y->solved ? y->steps_to_threshold : -1;
        if (sx >= 0 && (sy < 0 || sx < sy)) f->earlier++;
        else if (sy >= 0 && (sx < 0 || sx > sy)) f->later++;
        double a = acc ? x->final_acc : x->final_loss, c = acc ? y->final_acc : y->final_loss;
        if (!isfinite(a) || !isfinite(c)) continue;
        f->pairs++;
        if (acc ? a < c : a > c) f->worse++;
        else if (acc ? a > c : a < c) f->better++;
    }
    /* the difference as the tests compared it: points of accuracy; bits (bpb) or nats */
    double d = acc ? 100 * r->v[v].delta : r->v[v].delta;
    f->differs = f->pairs > 0 && fabs(d) >= (acc ? 0.5 : 0.0005);
    f->same_side = (d < 0) == acc ? f->worse : f->better;
    f->consistent = f->differs && f->same_side == f->pairs;
}

int qkv__ablate_findings(qkv_ablate_findings *f, const qkv_ablate_results *r) {
    const qkv_ablate_config *c = r->cfg;
    memset(f, 0, sizeof *f);
    f->comparisons = c->n_variants - 1;
    if (f->comparisons < 1) return 0;
    f->need = QKV_ABLATE_ALPHA / f->comparisons;
    f->seeds_pmin = qkv__signflip_pmin(c->n_seeds);
    f->seeds_too_few = f->seeds_pmin > f->need;
    if (!r->runs) return 0;
    if (!(f->v = calloc((size_t)c->n_variants, sizeof *f->v))) return -1;
    for (int v = 0; v < c->n_variants; v++) {
        qkv_variant_finding *fv = &f->v[v];
        if (v == c->baseline || r->v[v].runs_ok <= 0 || r->v[c->baseline].runs_ok <= 0) continue;
        pair_up(fv, r, v, c->baseline);
        if (!fv->consistent) continue;
        f->consistent++;
        if (!f->fewest || fv->pairs < f->fewest) f->fewest = fv->pairs;
    }
    /* an effect seen in every one of n paired seeds is p = 2 / 2^n at best (exact for these n) */
    f->fewest_pmin = qkv__signflip_pmin(f->fewest);
    f->seeds_needed = f->fewest;
    while (f->seeds_needed < 60 && qkv__signflip_pmin(f->seeds_needed) > f->need) f->seeds_needed++;
    f->seeds_needed_pmin = qkv__signflip_pmin(f->seeds_needed);
    f->consistent_too_few = f->consistent > 0 && f->fewest_pmin > f->need;
    return 0;
}

void qkv__ablate_findings_free(qkv_ablate_findings *f) {
    free(f->v);
    memset(f, 0, sizeof *f);
}
