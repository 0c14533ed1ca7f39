/* The report's human-readable tables (results, attention diagnostics, variants) as text
 * cells. Each table is a list of columns: a header, an alignment and either a function that
 * writes one variant's cell or a number of the variant's with its decimals; adding a column is
 * adding a line to a list (see report_data.h). */
#include "tensor/tensor.h"
#include "report/report_data.h"
#include "io/strbuf.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* writes variant i's cell */
typedef void (*cell_fn)(char *dst, size_t n, const qkv_ablate_results *r, int i);

typedef struct column {
    const char *head;
    bool right;         /* a number: right-aligned */
    bool failed;        /* says "failed" (or "not started") for a variant without a finished run */
    cell_fn cell;       /* NULL: the double at `at` in the variant's result, with `decimals` */
    size_t at;
    int decimals;
} column;

/* a number of the variant's result, with d decimals */
#define NUMBER(head, failed, member, d) {head, true, failed, NULL, offsetof(qkv_variant_result, member), d}

/* ---- number formats ---------------------------------------------------------------------- */

/* a loss-like value: 4 decimals, or 2 significant digits in exponent form when tiny */
static void fmt_small(char *dst, size_t n, double v) {
    if (!isfinite(v)) snprintf(dst, n, QKV_REPORT_DASH);
    else if (v == 0 || fabs(v) >= 0.001) snprintf(dst, n, "%.4f", v);
    else snprintf(dst, n, "%.1e", v);
}

void qkv__report_fixed(char *dst, size_t n, double v, int d) {
    if (!isfinite(v)) snprintf(dst, n, QKV_REPORT_DASH);
    else snprintf(dst, n, "%.*f", d, v);
}

void qkv__report_interval(char *dst, size_t n, qkv_ablate_metric m, double mean, double lo, double hi, bool sign) {
    bool acc = m == QKV_METRIC_ACCURACY;
    double k = acc ? 100 : 1;
    char a[32], b[32], c[32];
    qkv__report_fixed(a, sizeof a, mean * k, acc ? 1 : 3);
    qkv__report_fixed(b, sizeof b, lo * k, acc ? 1 : 3);
    qkv__report_fixed(c, sizeof c, hi * k, acc ? 1 : 3);
    snprintf(dst, n, "%s%s [%s, %s]", sign && mean > 0 ? "+" : "", a, b, c);
}

/* ---- cells ------------------------------------------------------------------------------- */

/* the variant's name */
static void cell_name(char *dst, size_t n, const qkv_ablate_results *r, int i) { snprintf(dst, n, "%s", r->v[i].name); }

/* the attention layers' parameter count */
static void cell_attn_params(char *dst, size_t n, const qkv_ablate_results *r, int i) {
    qkv__fmt_count(dst, n, r->v[i].attn_params);
}

/* the model's parameter count, and for a matched control the width and the baseline's count */
static void cell_params(char *dst, size_t n, const qkv_ablate_results *r, int i) {
    const qkv_variant_result *v = &r->v[i];
    char a[32], b[32];
    qkv__fmt_count(a, sizeof a, v->params);
    if (!v->matched_d_ff) {
        snprintf(dst, n, "%s", a);
        return;
    }
    qkv__fmt_count(b, sizeof b, v->baseline_params);
    snprintf(dst, n, "%s (d_ff %d, matched to %s's %s)", a, v->matched_d_ff, r->v[r->cfg->baseline].name, b);
}

/* the learning rate chosen on validation */
static void cell_lr(char *dst, size_t n, const qkv_ablate_results *r, int i) {
    if (isfinite(r->v[i].lr)) snprintf(dst, n, "%g", r->v[i].lr);
    else snprintf(dst, n, QKV_REPORT_DASH);
}

/* the verdicts over seeds, in words */
static void cell_verdicts(char *dst, size_t n, const qkv_ablate_results *r, int i) {
    snprintf(dst, n, "%s", r->v[i].verdicts);
}

/* final accuracy in percent: mean [95% interval] (worst seed) */
static void cell_acc_ci(char *dst, size_t n, const qkv_ablate_results *r, int i) {
    const qkv_variant_result *v = &r->v[i];
    char a[100], m[32];
    qkv__report_interval(a, sizeof a, QKV_METRIC_ACCURACY, v->acc_mean, v->acc_ci_lo, v->acc_ci_hi, false);
    qkv__report_fixed(m, sizeof m, v->acc_min * 100, 1);
    snprintf(dst, n, "%s (%s)", a, m);
}

/* the mean paired difference from the baseline, with its interval */
static void cell_delta(char *dst, size_t n, const qkv_ablate_results *r, int i) {
    const qkv_variant_result *v = &r->v[i];
    if (i == r->cfg->baseline) snprintf(dst, n, "baseline");
    else qkv__report_interval(dst, n, r->cfg->metric, v->delta, v->delta_ci_lo, v->delta_ci_hi, true);
}

/* the sign-flip p-value, Holm's adjustment, a mark when significant */
static void cell_p(char *dst, size_t n, const qkv_ablate_results *r, int i) {
    const qkv_variant_result *v = &r->v[i];
    if (i == r->cfg->baseline || !isfinite(v->p_value)) snprintf(dst, n, QKV_REPORT_DASH);
    else snprintf(dst, n, "%.3g (%.3g)%s", v->p_value, v->p_holm, v->significant ? " *" : "");
}

/* final loss (in bits when the sweep compares bits per byte): mean [95% interval] */
static void cell_loss_ci(char *dst, size_t n, const qkv_ablate_results *r, int i) {
    const qkv_variant_result *v = &r->v[i];
    double k = r->cfg->metric == QKV_METRIC_BPB ? 1 / QKV_LN2 : 1; /* nats -> bits */
    char a[32], lo[32], hi[32];
    fmt_small(a, sizeof a, v->loss_mean * k);
    fmt_small(lo, sizeof lo, v->loss_ci_lo * k);
    fmt_small(hi, sizeof hi, v->loss_ci_hi * k);
    snprintf(dst, n, "%s [%s, %s]", a, lo, hi);
}

/* a diagnostic at the end of training with d decimals, or where the variant recorded its start
 * "start → end (change)" */
static void fmt_from_start(char *dst, size_t n, double start, double end, int d) {
    char a[32], b[32];
    qkv__report_fixed(b, sizeof b, end, d);
    if (!isfinite(start) || !isfinite(end)) {
        snprintf(dst, n, "%s", b);
        return;
    }
    qkv__report_fixed(a, sizeof a, start, d);
    double scale = pow(10, d), change = round((end - start) * scale) / scale;
    snprintf(dst, n, "%s \xe2\x86\x92 %s (%+.*f)", a, b, d, change == 0 ? 0.0 : change); /* no -0.00 */
}

static void cell_diag_share(char *dst, size_t n, const qkv_ablate_results *r, int i) {
    fmt_from_start(dst, n, r->v[i].diag_start.diag_share, r->v[i].diag.diag_share, 3);
}
static void cell_prev_share(char *dst, size_t n, const qkv_ablate_results *r, int i) {
    fmt_from_start(dst, n, r->v[i].diag_start.prev_share, r->v[i].diag.prev_share, 3);
}
static void cell_symmetry(char *dst, size_t n, const qkv_ablate_results *r, int i) {
    fmt_from_start(dst, n, r->v[i].diag_start.symmetry, r->v[i].diag.symmetry, 2);
}
static void cell_negative(char *dst, size_t n, const qkv_ablate_results *r, int i) {
    fmt_from_start(dst, n, r->v[i].diag_start.negative_mass, r->v[i].diag.negative_mass, 2);
}

/* the variant's overrides */
static void cell_sets(char *dst, size_t n, const qkv_ablate_results *r, int i) {
    snprintf(dst, n, "%s", r->v[i].sets[0] ? r->v[i].sets : "(none)");
}

/* ---- tables ------------------------------------------------------------------------------ */

/* one row per variant, one column per entry of cols */
static int table(qkv_report_table *t, const qkv_ablate_results *r, const column *cols, int n_cols) {
    int nv = r->cfg->n_variants;
    if (qkv__report_table_alloc(t, nv, n_cols)) return -1;
    for (int c = 0; c < n_cols; c++) {
        snprintf(t->head[c], QKV_REPORT_CELL, "%s", cols[c].head);
        t->right[c] = cols[c].right;
    }
    for (int i = 0; i < nv; i++)
        for (int c = 0; c < n_cols; c++) {
            char *cell = t->cell[(size_t)i * (size_t)n_cols + (size_t)c];
            if (cols[c].failed && r->v[i].runs_ok <= 0) snprintf(cell, QKV_REPORT_CELL, "%s", qkv__ablate_unfinished(r, i));
            else if (cols[c].cell) cols[c].cell(cell, QKV_REPORT_CELL, r, i);
            else qkv__report_fixed(cell, QKV_REPORT_CELL, *(const double *)(const void *)((const char *)&r->v[i] + cols[c].at),
                           cols[c].decimals);
        }
    return 0;
}

/* the column lists, in report order */
int qkv__report_tables(qkv_report_tables *t, const qkv_ablate_results *r, const qkv_report_facts *f) {
    memset(t, 0, sizeof *t);
    const qkv_ablate_config *cfg = r->cfg;
    char steps_head[64], delta_head[QKV_ABLATE_NAME + 48];
    if (cfg->metric == QKV_METRIC_ACCURACY)
        snprintf(steps_head, sizeof steps_head, "verdicts (validation acc \xe2\x89\xa5 %s)", f->thr);
    else
        snprintf(steps_head, sizeof steps_head, "steps (validation loss still improving?)");
    static const char *const DELTA[QKV_METRIC_COUNT] = {"acc", "eval loss", "bits per byte"};
    static const char *const UNIT[QKV_METRIC_COUNT] = {"points", "nats", "bits"};
    snprintf(delta_head, sizeof delta_head, "\xce\x94 %s vs %s (%s) [95%% CI]", DELTA[cfg->metric],
             r->v[cfg->baseline].name, UNIT[cfg->metric]);
    const column all[] = {
        {"variant", false, false, cell_name, 0, 0},
        {"attention params", true, false, cell_attn_params, 0, 0},
        {"params", true, false, cell_params, 0, 0},
        {"lr", true, true, cell_lr, 0, 0},
        {steps_head, false, true, cell_verdicts, 0, 0},
        {"final eval acc %: mean [95% CI] (min)", true, true, cell_acc_ci, 0, 0},
        {delta_head, true, true, cell_delta, 0, 0},
        {"p (Holm)", true, true, cell_p, 0, 0},
        {cfg->metric == QKV_METRIC_BPB ? "eval bits per byte: mean [95% CI]" : "eval loss: mean [95% CI]", true,
         true, cell_loss_ci, 0, 0},
        NUMBER("s/run", false, seconds, 1),
    };
    /* the lr column only with a grid */
    column results[sizeof all / sizeof all[0]];
    int nr = 0;
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        if (all[k].cell != cell_lr || cfg->n_lrs) results[nr++] = all[k];
    const column diag_all[] = {
        {"variant", false, false, cell_name, 0, 0},
        {"diagonal share", true, true, cell_diag_share, 0, 0},
        {"previous-position share", true, true, cell_prev_share, 0, 0},
        NUMBER("first-position share", true, diag.first_share, 3),
        NUMBER("entropy (nats)", true, diag.entropy, 3),
        NUMBER("uniform causal entropy (nats)", true, diag.entropy_uniform, 3),
        {"score symmetry", true, true, cell_symmetry, 0, 0},
        {"negative eigenvalue share", true, true, cell_negative, 0, 0},
    };
    /* the previous-position share only where a run recorded it (runs of an older qkv did not) */
    column diag[sizeof diag_all / sizeof diag_all[0]];
    int nd = 0;
    for (size_t k = 0; k < sizeof diag_all / sizeof diag_all[0]; k++)
        if (diag_all[k].cell != cell_prev_share || f->has_prev_share) diag[nd++] = diag_all[k];
    const column variants[] = {
        {"variant", false, false, cell_name, 0, 0},
        {"overrides (after the common ones)", false, false, cell_sets, 0, 0},
    };
#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
    return table(&t->results, r, results, nr) || table(&t->diag, r, diag, nd) ||
                   table(&t->variants, r, variants, N(variants))
               ? -1 : 0;
#undef N
}

void qkv__report_tables_free(qkv_report_tables *t) {
    qkv__report_table_free(&t->results);
    qkv__report_table_free(&t->diag);
    qkv__report_table_free(&t->variants);
}
