/* The report's human-readable tables (results, attention diagnostics, variants) as text
 * cells. Each table is a list of columns: a header, an alignment and a function that writes
 * one variant's cell; adding a column is adding a line to a list (see report_data.h). */
#include "tensor/tensor.h"
#include "report/report_data.h"
#include "io/strbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DASH "\xe2\x80\x94" /* em dash: a missing value */

/* writes variant i's cell (i indexes p->r->v, p->curves, p->variant_fields ...) */
typedef void (*cell_fn)(char *dst, size_t n, const qkv_report *p, int i);

typedef struct column {
    const char *head;
    bool right;         /* a number: right-aligned */
    bool failed;        /* says "failed" for a variant without a finished run */
    cell_fn cell;
} column;

/* ---- number formats ---------------------------------------------------------------------- */

/* a loss-like value: 4 decimals, or 2 significant digits in exponent form when tiny */
static void fmt_small(char *dst, size_t n, double v) {
    if (!isfinite(v)) snprintf(dst, n, DASH);
    else if (v == 0 || fabs(v) >= 0.001) snprintf(dst, n, "%.4f", v);
    else snprintf(dst, n, "%.1e", v);
}

/* fixed decimals, a dash for a missing value */
static void fmt_fixed(char *dst, size_t n, double v, int decimals) {
    if (!isfinite(v)) snprintf(dst, n, DASH);
    else snprintf(dst, n, "%.*f", decimals, v);
}

/* ---- cells ------------------------------------------------------------------------------- */

/* the variant's name */
static void cell_name(char *dst, size_t n, const qkv_report *p, int i) {
    const qkv_variant_result *v = &p->r->v[i];
    snprintf(dst, n, "%s", v->name);
}

/* the attention layers' parameter count */
static void cell_attn_params(char *dst, size_t n, const qkv_report *p, int i) {
    const qkv_variant_result *v = &p->r->v[i];
    qkv__fmt_count(dst, n, v->attn_params);
}

/* the model's parameter count, and for a matched control the width and the baseline's count */
static void cell_params(char *dst, size_t n, const qkv_report *p, int i) {
    const qkv_variant_result *v = &p->r->v[i];
    char a[32], b[32];
    qkv__fmt_count(a, sizeof a, v->params);
    if (!v->matched_d_ff) {
        snprintf(dst, n, "%s", a);
        return;
    }
    qkv__fmt_count(b, sizeof b, v->baseline_params);
    snprintf(dst, n, "%s (d_ff %d, matched to %s's %s)", a, v->matched_d_ff, p->r->v[p->cfg->baseline].name, b);
}

/* the learning rate chosen on validation */
static void cell_lr(char *dst, size_t n, const qkv_report *p, int i) {
    const qkv_variant_result *v = &p->r->v[i];
    if (isfinite(v->lr)) snprintf(dst, n, "%g", v->lr);
    else snprintf(dst, n, DASH);
}

/* the verdicts over seeds, in words */
static void cell_verdicts(char *dst, size_t n, const qkv_report *p, int i) {
    snprintf(dst, n, "%s", p->r->v[i].verdicts);
}

/* final accuracy in percent: mean [95% interval] (worst seed) */
static void cell_acc_ci(char *dst, size_t n, const qkv_report *p, int i) {
    const qkv_variant_result *v = &p->r->v[i];
    char a[32], lo[32], hi[32], m[32];
    fmt_fixed(a, sizeof a, v->acc_mean * 100, 1);
    fmt_fixed(lo, sizeof lo, v->acc_ci_lo * 100, 1);
    fmt_fixed(hi, sizeof hi, v->acc_ci_hi * 100, 1);
    fmt_fixed(m, sizeof m, v->acc_min * 100, 1);
    snprintf(dst, n, "%s [%s, %s] (%s)", a, lo, hi, m);
}

/* the mean paired difference from the baseline in points, with its interval */
static void cell_delta(char *dst, size_t n, const qkv_report *p, int i) {
    const qkv_variant_result *v = &p->r->v[i];
    if (i == p->cfg->baseline) {
        snprintf(dst, n, "baseline");
        return;
    }
    /* accuracy in points (1 decimal); losses in nats or bits (3 decimals) */
    bool acc = p->cfg->metric == QKV_METRIC_ACCURACY;
    double k = acc ? 100 : 1;
    int dec = acc ? 1 : 3;
    char d[32], lo[32], hi[32];
    fmt_fixed(d, sizeof d, v->delta * k, dec);
    fmt_fixed(lo, sizeof lo, v->delta_ci_lo * k, dec);
    fmt_fixed(hi, sizeof hi, v->delta_ci_hi * k, dec);
    snprintf(dst, n, "%s%s [%s, %s]", v->delta > 0 ? "+" : "", d, lo, hi);
}

/* the sign-flip p-value, Holm's adjustment, a mark when significant */
static void cell_p(char *dst, size_t n, const qkv_report *p, int i) {
    const qkv_variant_result *v = &p->r->v[i];
    if (i == p->cfg->baseline || !isfinite(v->p_value)) {
        snprintf(dst, n, DASH);
        return;
    }
    snprintf(dst, n, "%.3g (%.3g)%s", v->p_value, v->p_holm, v->significant ? " *" : "");
}

/* final loss: mean [95% interval] */
static void cell_loss_ci(char *dst, size_t n, const qkv_report *p, int i) {
    const qkv_variant_result *v = &p->r->v[i];
    double k = p->cfg->metric == QKV_METRIC_BPB ? 1 / QKV_LN2 : 1; /* nats -> bits */
    char a[32], lo[32], hi[32];
    fmt_small(a, sizeof a, v->loss_mean * k);
    fmt_small(lo, sizeof lo, v->loss_ci_lo * k);
    fmt_small(hi, sizeof hi, v->loss_ci_hi * k);
    snprintf(dst, n, "%s [%s, %s]", a, lo, hi);
}

/* mean wall seconds of a run */
static void cell_seconds(char *dst, size_t n, const qkv_report *p, int i) {
    const qkv_variant_result *v = &p->r->v[i];
    fmt_fixed(dst, n, v->seconds, 1);
}

/* the mean weight a query puts on its own position */
static void cell_diag_share(char *dst, size_t n, const qkv_report *p, int i) {
    const qkv_variant_result *v = &p->r->v[i];
    fmt_fixed(dst, n, v->diag.diag_share, 3);
}

/* the mean weight on the first position */
static void cell_first_share(char *dst, size_t n, const qkv_report *p, int i) {
    const qkv_variant_result *v = &p->r->v[i];
    fmt_fixed(dst, n, v->diag.first_share, 3);
}

/* the mean entropy of a query's weights */
static void cell_entropy(char *dst, size_t n, const qkv_report *p, int i) {
    const qkv_variant_result *v = &p->r->v[i];
    fmt_fixed(dst, n, v->diag.entropy, 3);
}

/* the same for uniform causal attention, for scale */
static void cell_entropy_uniform(char *dst, size_t n, const qkv_report *p, int i) {
    const qkv_variant_result *v = &p->r->v[i];
    fmt_fixed(dst, n, v->diag.entropy_uniform, 3);
}

/* the heads' mean symmetry score and negative eigenvalue share (nn/score.h) */
static void cell_symmetry(char *dst, size_t n, const qkv_report *p, int i) {
    fmt_fixed(dst, n, p->r->v[i].diag.symmetry, 2);
}
static void cell_negative(char *dst, size_t n, const qkv_report *p, int i) {
    fmt_fixed(dst, n, p->r->v[i].diag.negative_mass, 2);
}

/* the variant's overrides */
static void cell_sets(char *dst, size_t n, const qkv_report *p, int i) {
    const qkv_variant_result *v = &p->r->v[i];
    snprintf(dst, n, "%s", v->sets[0] ? v->sets : "(none)");
}

/* ---- tables ------------------------------------------------------------------------------ */

/* one row per variant, one column per entry of cols */
static int table_build(qkv_report_table *t, const qkv_report *p, const column *cols, int n_cols) {
    memset(t, 0, sizeof *t);
    t->rows = p->nv;
    t->cols = n_cols;
    t->head = calloc((size_t)n_cols, sizeof *t->head);
    t->right = calloc((size_t)n_cols, sizeof *t->right);
    t->cell = calloc((size_t)p->nv * (size_t)n_cols + 1, sizeof *t->cell);
    if (!t->head || !t->right || !t->cell) return -1;
    for (int c = 0; c < n_cols; c++) {
        t->head[c] = cols[c].head;
        t->right[c] = cols[c].right;
    }
    for (int i = 0; i < p->nv; i++) {
        for (int c = 0; c < n_cols; c++) {
            char *cell = t->cell[(size_t)i * (size_t)n_cols + (size_t)c];
            if (cols[c].failed && p->r->v[i].runs_ok <= 0) snprintf(cell, QKV_REPORT_CELL, "failed");
            else cols[c].cell(cell, QKV_REPORT_CELL, p, i);
        }
    }
    return 0;
}

/* the column lists are here, in report order; a header may point into *p */
int qkv__report_tables_build(qkv_report *p) {
    if (p->cfg->metric == QKV_METRIC_ACCURACY)
        snprintf(p->steps_head, sizeof p->steps_head, "verdicts (validation acc \xe2\x89\xa5 %s)", p->thr);
    else
        snprintf(p->steps_head, sizeof p->steps_head, "steps (validation loss still improving?)");
    static const char *const DELTA[QKV_METRIC_COUNT] = {"acc", "eval loss", "bits per byte"};
    static const char *const UNIT[QKV_METRIC_COUNT] = {"points", "nats", "bits"};
    snprintf(p->delta_head, sizeof p->delta_head, "\xce\x94 %s vs %s (%s) [95%% CI]", DELTA[p->cfg->metric],
             p->r->v[p->cfg->baseline].name, UNIT[p->cfg->metric]);
    const column all[] = {
        {"variant", false, false, cell_name},
        {"attention params", true, false, cell_attn_params},
        {"params", true, false, cell_params},
        {"lr", true, true, cell_lr},
        {p->steps_head, false, true, cell_verdicts},
        {"final eval acc %: mean [95% CI] (min)", true, true, cell_acc_ci},
        {p->delta_head, true, true, cell_delta},
        {"p (Holm)", true, true, cell_p},
        {p->cfg->metric == QKV_METRIC_BPB ? "eval bits per byte: mean [95% CI]" : "eval loss: mean [95% CI]", true,
         true, cell_loss_ci},
        {"s/run", true, false, cell_seconds},
    };
    /* the lr column only with a grid */
    column results[sizeof all / sizeof all[0]];
    int nr = 0;
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        if (all[k].cell != cell_lr || p->cfg->n_lrs) results[nr++] = all[k];
    const column diag[] = {
        {"variant", false, false, cell_name},
        {"diagonal share", true, true, cell_diag_share},
        {"first-position share", true, true, cell_first_share},
        {"entropy (nats)", true, true, cell_entropy},
        {"uniform causal entropy (nats)", true, true, cell_entropy_uniform},
        {"score symmetry", true, true, cell_symmetry},
        {"negative eigenvalue share", true, true, cell_negative},
    };
    const column variants[] = {
        {"variant", false, false, cell_name},
        {"overrides (after the common ones)", false, false, cell_sets},
    };
#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
    if (table_build(&p->results, p, results, nr) || table_build(&p->diag, p, diag, N(diag)) ||
        table_build(&p->variants, p, variants, N(variants)))
        return -1;
#undef N
    return 0;
}

/* the header pointers are borrowed, the arrays owned */
void qkv__report_table_free(qkv_report_table *t) {
    free(t->head);
    free(t->right);
    free(t->cell);
    memset(t, 0, sizeof *t);
}
